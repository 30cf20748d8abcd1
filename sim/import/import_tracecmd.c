/* trace-cmd's trace.dat -> trace, read through libtracecmd and libtraceevent.
**
** trace.dat holds each event's format as the recording kernel described it and
** the raw per-CPU ring-buffer pages; libtracecmd iterates the records in time
** order across CPUs and libtraceevent prints each one with its own format, as
** `trace-cmd report` does.  The importer turns every record into that report
** line and hands the text to the importer of its kind, so one mapping serves
** both inputs: KVM host events (kvm:kvm_exit ...) to the KVM ftrace importer,
** anything else (sched:sched_switch, raw_syscalls:sys_enter/exit,
** exceptions:page_fault_*, tlb:tlb_flush) to the perf-script importer, in the
** line layout each expects.  Timestamps keep their nanoseconds.  The report
** text is built in memory; messages quote its lines.
**
** Built only when the libraries are found (Makefile: VMXSIM_TRACECMD);
** otherwise the format says how to go through `trace-cmd report` instead.
*/
#include "import.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <string.h>

#ifdef VMXSIM_TRACECMD
#include <trace-cmd.h>
#include <event-parse.h>
#include <trace-seq.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child that reads a file has bounds that grow with the file's size
** (reader_bounds), each past anything a good file needs, and refuses the file
** past either (exit 3) with a message that names the bound:
**
** CPU time: a corrupt ring-buffer page can make libtraceevent's
** kbuffer_next_event loop for ever (fuzz inputs of 36 KB that had not ended
** after 40 minutes; those that give records on end are refused sooner, by the
** report's memory), and a corrupt CPU count makes libtracecmd look at every
** CPU it claims for each record.  A good file takes milliseconds a MiB
** (libtracecmd's parse and one printed line a record), so the bound is far
** above any real file's time, and well below the tracecmd fuzz harness's
** timeout (scripts/fuzz.sh).
**
** Memory: an address-space bound (RLIMIT_AS), over what the child has mapped
** when it starts (its copy of vmxsim), of 64 MiB and 32 times the file's size,
** 256 times for a compressed file (file version 7 names its compression).
** A corrupt size or count field makes libtracecmd ask for what it says: fuzz
** inputs of 36 KB asked for 2 to 4 GB, one for 2^62 bytes (which malloc
** refuses), and a file that claims 10^8 CPUs filled 780 MB for them.  Past the
** bound an allocation fails: libtracecmd then gives up (the status byte says
** READ_NO_MEMORY when errno is ENOMEM) or faults on the NULL (reader_fault).
** What good files took beyond the start, measured: 9 and 11 MB for the two
** recordings of traces/recorded/ (the KVM one of 2 MB, uncompressed, the sched
** one of 150 KB, zstd-compressed: the libraries' own needs), 62 MB for an
** uncompressed file of 53 MB and the kernel's symbols.  libtracecmd
** holds a compressed file's data decompressed, and libtraceevent parses the
** symbols into a table: 27 MB for a 1.1 MB zstd-compressed file with the
** symbols (24 times the file), 65 MB for 4.4 MB compressed from 46 MB of ring
** buffer (15 times), 191 MB for 1.9 MB compressed from 174 MB of identical
** records (100 times; the recorded sched file's data is compressed 7 times).  The
** base is six times the libraries' own needs; each multiple is above what the
** files of its kind took, 2.5 times the most repetitive one's for compressed
** files.  The report text is not the child's: it goes to vmxsim through the
** pipe as it is printed, and as much of it as of the child's memory: a corrupt
** ring-buffer page made libtracecmd give records without end, 470 MB of text
** from a 40 KB file in the 7 s of its CPU bound (a fuzz input).
**
** A sanitizer build (the Makefile's SANITIZER, which defines VMXSIM_SANITIZER)
** runs the reader's code several times slower: tracedat-loop.dat's report
** reached the memory bound after 1.5 s of CPU time in a plain build and after
** 5.5 to 8 s under address,undefined (on a loaded machine), past the plain
** bound of 7 s.  There every CPU bound is three times as long, so that the
** bound that would refuse a file is the same in every build. */
#ifdef VMXSIM_SANITIZER
#define READER_CPU_SCALE 3
#else
#define READER_CPU_SCALE 1
#endif
#define READER_CPU_BASE_S    (5 * READER_CPU_SCALE)
#define READER_CPU_PER_MIB_S (2 * READER_CPU_SCALE)
#define READER_MEM_BASE_MIB  64
#define READER_MEM_PER_BYTE  32
#define READER_MEM_PER_COMPRESSED_BYTE 256

/* What read_report found: the child's status byte. */
enum read_status { READ_OK, READ_NOT_TRACEDAT, READ_NOT_AGAIN, READ_NO_MEMORY, READ_TOO_LONG };

/* The child's exit status when it faults after an allocation failed (errno
** ENOMEM: libtracecmd dereferences some of the NULLs malloc returns). */
#define READER_EXIT_NO_MEMORY 2

/* Where the report text goes: kept whole in text (in this process), or written
** through fd in pieces of up to cap bytes (the child's: its memory holds the
** libraries' data, not the report, and a write needs no allocation); at most
** max bytes, past which the reading stops. */
struct report_out {
  int fd;                    /* -1: kept in text */
  struct strbuf text;
  char *chunk;               /* the child's: cap bytes, n of them not written yet */
  size_t n, cap;
  uint64_t len, max;         /* bytes of report so far, and the most there may be */
  bool write_failed;
};

struct reader {
  struct tep_handle *tep;
  int kvm_exit_id;           /* the kvm_exit event's id, -1 when the file has no such format */
  bool kvm;                  /* KVM host events: ftrace lines; else perf script lines */
  bool no_memory;            /* an allocation of the libraries' failed (errno ENOMEM) */
  struct report_out *out;
  struct trace_seq info;
  uint64_t records;
};

static bool write_all(int fd, const void *p, size_t n) {
  for (const char *c = p; n;) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static void out_flush(struct report_out *o) {
  if (o->n && !write_all(o->fd, o->chunk, o->n)) o->write_failed = true;
  o->n = 0;
}

static void out_add(struct report_out *o, const char *s, size_t n) {
  o->len += n;
  if (o->fd < 0) {
    strbuf_add(&o->text, s, n);
    return;
  }
  if (o->n + n > o->cap) out_flush(o);
  if (n > o->cap) {
    if (!write_all(o->fd, s, n)) o->write_failed = true;
    return;
  }
  memcpy(o->chunk + o->n, s, n);
  o->n += n;
}

/* A failed allocation of the libraries leaves errno ENOMEM (malloc's); some go
** on with less (a record or page not read), so it is looked at after every
** record, before a later call can set errno again. */
static void note_memory(struct reader *R) {
  if (errno == ENOMEM || R->info.state == TRACE_SEQ__MEM_ALLOC_FAILED) R->no_memory = true;
}

/* First pass: is there a kvm_exit record?  (Every format of the host kernel is
** saved, so the kvm_exit format alone says nothing.) */
static int find_kvm_exit(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *arg) {
  (void)h, (void)cpu;
  struct reader *R = arg;
  note_memory(R);
  if (tep_data_type(R->tep, rec) == R->kvm_exit_id) R->kvm = true;
  return R->kvm ? -1 : 0;      /* negative stops the iteration (a positive value does not) */
}

/* One record as `trace-cmd report` (KVM) or `perf script` (native events) prints it. */
static int add_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *arg) {
  (void)h;
  struct reader *R = arg;
  note_memory(R);
  struct tep_event *ev = tep_find_event_by_record(R->tep, rec);
  if (!ev) return 0;
  int pid = tep_data_pid(R->tep, rec);
  const char *comm = tep_data_comm_from_pid(R->tep, pid);
  trace_seq_reset(&R->info);
  tep_print_event(R->tep, &R->info, rec, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&R->info);
  note_memory(R);
  char head[256];
  unsigned long long s = rec->ts / 1000000000ull, ns = rec->ts % 1000000000ull;
  int n = R->kvm ? snprintf(head, sizeof head, "%s-%d [%03d] %llu.%09llu: %s: ", comm ? comm : "<...>", pid, cpu, s, ns,
                            ev->name)
                 : snprintf(head, sizeof head, "%s %d [%03d] %llu.%09llu: %s:%s: ", comm ? comm : ":-", pid, cpu, s, ns,
                            ev->system, ev->name);
  out_add(R->out, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1);
  for (char *c = R->info.buffer; *c; c++)
    if (*c == '\n') *c = ' ';                  /* one record, one line */
  out_add(R->out, R->info.buffer, strlen(R->info.buffer));
  out_add(R->out, "\n", 1);
  R->records++;
  return R->out->len > R->out->max ? -1 : 0;   /* negative stops the iteration */
}

/* The report text of the file at path (what `trace-cmd report` prints, one
** record a line) into o; *kvm: it holds KVM host events.  The child leaves the
** handles (reachable, in open_handles) for its exit to free, as tracecmd_close
** walks every CPU the file's header claims, which for a corrupt count took most
** of the fork harness's time; read in this process (close_handles), it closes
** them. */
static enum read_status read_report(const char *path, struct report_out *o, bool *kvm, bool close_handles) {
  static struct tracecmd_input *volatile open_handles[2];  /* volatile: stores that are never read are kept */
  open_handles[0] = open_handles[1] = NULL;    /* not those of a read a fault ended (in-process harness) */
  tracecmd_set_loglevel(TEP_LOG_NONE);
  errno = 0;
  struct tracecmd_input *h = open_handles[0] = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
  if (!h) return errno == ENOMEM ? READ_NO_MEMORY : READ_NOT_TRACEDAT;
  struct reader R = { .tep = tracecmd_get_tep(h), .out = o };
  trace_seq_init(&R.info);
  struct tep_event *kx = tep_find_event_by_name(R.tep, "kvm", "kvm_exit");
  R.kvm_exit_id = kx ? kx->id : -1;
  enum read_status st = READ_OK;
  if (kx) {
    tracecmd_iterate_events(h, NULL, 0, find_kvm_exit, &R);
    note_memory(&R);
    h = open_handles[1] = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS); /* iterating again needs a fresh one */
    if (!h) st = errno == ENOMEM ? READ_NO_MEMORY : READ_NOT_AGAIN;
    else R.tep = tracecmd_get_tep(h);
  }
  if (h) {
    tracecmd_iterate_events(h, NULL, 0, add_record, &R);
    note_memory(&R);
  }
  if (R.no_memory) st = READ_NO_MEMORY;
  else if (o->len > o->max) st = READ_TOO_LONG;
  trace_seq_destroy(&R.info);
  if (close_handles)
    for (int i = 0; i < 2; i++) {
      if (open_handles[i]) tracecmd_close(open_handles[i]);
      open_handles[i] = NULL;
    }
  *kvm = R.kvm;
  return st;
}

struct reader_bounds {
  rlim_t cpu_s;              /* seconds of CPU time */
  uint64_t mem;              /* bytes of address space over what the child has mapped at its start */
  unsigned per_byte;         /* mem's multiple of the file's size */
};

/* Whether the trace.dat at path says its sections are compressed: file version
** 7 names its compression ("none", or an algorithm) after the page size.  Only
** a regular file is looked at (a FIFO's bytes would be gone). */
static bool tracedat_compressed(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  unsigned char h[64] = { 0 };
  ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, h, sizeof h - 1) : 0;
  close(fd);
  static const unsigned char magic[10] = { 0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g' };
  if (n < (ssize_t)sizeof magic || memcmp(h, magic, sizeof magic)) return false;
  const char *version = (const char *)h + sizeof magic;     /* NUL-terminated: h's last byte is 0 */
  size_t at = sizeof magic + strlen(version) + 1 + 6;       /* endianness, long size, page size */
  return atoi(version) >= 7 && at < (size_t)n && strcmp((const char *)h + at, "none") != 0;
}

static struct reader_bounds reader_bounds(uint64_t size, bool compressed) {
  uint64_t mib = size / (1u << 20) + (size % (1u << 20) != 0);
  uint64_t base = (uint64_t)READER_MEM_BASE_MIB << 20;
  unsigned k = compressed ? READER_MEM_PER_COMPRESSED_BYTE : READER_MEM_PER_BYTE;
  return (struct reader_bounds){
    .cpu_s = (rlim_t)(READER_CPU_BASE_S + READER_CPU_PER_MIB_S * mib),
    .mem = size > (UINT64_MAX - base) / k ? UINT64_MAX : base + k * size,
    .per_byte = k,
  };
}

static struct reader_bounds reader_bounds_of(const char *path) {
  struct stat st;
  return reader_bounds(stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0, tracedat_compressed(path));
}

void import_tracecmd_bounds(const char *path, uint64_t *cpu_s, uint64_t *mem) {
  struct reader_bounds b = reader_bounds_of(path);
  *cpu_s = b.cpu_s;
  *mem = b.mem;
}

/* The bytes of address space this process has mapped (/proc/self/statm's
** first field, in pages); false without /proc.  Async-signal-safe calls only:
** the child of a process that may have had threads runs it. */
static bool mapped_bytes(uint64_t *bytes) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  uint64_t pages = 0;
  for (const char *c = buf; *c >= '0' && *c <= '9'; c++) pages = pages * 10 + (uint64_t)(*c - '0');
  long page = sysconf(_SC_PAGESIZE);
  *bytes = pages * (uint64_t)(page > 0 ? page : 4096);
  return pages > 0;
}

/* The child's address space: what it has mapped now and mem more (never above
** a limit it already has).  The bound is over what is mapped, not absolute, so
** one code serves every build and nothing asks whether this is a sanitizer's
** (__SANITIZE_ADDRESS__): an AddressSanitizer process reserves terabytes when it
** starts (its shadow memory, its allocator's space), and a bound below that
** would fail every mapping, the sanitizer's own too.  Over it, tried: the
** libraries' large allocations, what a corrupt size or count field asks for,
** take new mappings and fail past the bound as in other builds; their small
** ones come from the allocator's reserved space and are not bounded there
** (RLIMIT_DATA behaves the same).  A failed allocation returns NULL there only
** with ASAN_OPTIONS=allocator_may_return_null=1; without it the sanitizer ends
** the child with its report ("the trace.dat reader stopped before its end"). */
static void limit_address_space(uint64_t mem) {
  uint64_t now;
  struct rlimit as;
  if (!mapped_bytes(&now) || getrlimit(RLIMIT_AS, &as) != 0) return;   /* no /proc: no bound */
  uint64_t want = now > UINT64_MAX - mem ? UINT64_MAX : now + mem;
  if (as.rlim_cur != RLIM_INFINITY && as.rlim_cur <= want) return;
  as.rlim_cur = (rlim_t)want;
  setrlimit(RLIMIT_AS, &as);
}

/* The child's handler of a fault: one after an allocation failed (errno ENOMEM)
** is the memory bound's, told to the parent by the exit status; any other ends
** the child by its signal, which the parent reports as a crash. */
static void reader_fault(int sig) {
  if (errno == ENOMEM) _exit(READER_EXIT_NO_MEMORY);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* The child: the report, then a status byte and a kvm byte, through fd.  Past
** its CPU bound it is ended by SIGXCPU; past its memory bound the libraries'
** allocations fail. */
static void report_child(const char *path, int fd, struct reader_bounds b) {
  /* the parent's interrupt handler and its importing thread's blocked signals
  ** (sim/import/import_stream.c) are not the child's: Ctrl-C and kill end it */
  static const int stop[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
  for (size_t i = 0; i < sizeof stop / sizeof *stop; i++) signal(stop[i], SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_IGN);
  /* a crash in the libraries ends the child by its signal, which the parent reports, in
  ** every build: a sanitizer's or fuzzer's handler inherited from the parent would
  ** otherwise take it for the parent's own */
  static const int deadly[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
  for (size_t i = 0; i < sizeof deadly / sizeof *deadly; i++) signal(deadly[i], reader_fault);
  signal(SIGXCPU, SIG_DFL);
  struct rlimit cpu = { .rlim_cur = b.cpu_s, .rlim_max = b.cpu_s + 1 };   /* SIGXCPU, then SIGKILL */
  setrlimit(RLIMIT_CPU, &cpu);
  limit_address_space(b.mem);
  static char chunk[1 << 16];
  struct report_out o = { .fd = fd, .chunk = chunk, .cap = sizeof chunk, .max = b.mem };
  bool kvm = false;
  unsigned char tail[2] = { (unsigned char)read_report(path, &o, &kvm, false), kvm };
  out_flush(&o);
  bool ok = !o.write_failed && write_all(fd, tail, sizeof tail);
  _exit(ok ? 0 : 1);                           /* no atexit work: the parent owns the process's files */
}

/* The memory bound, as messages give it: "65 MiB: 64 MiB and 32 times the file's size". */
static const char *bound_text(const struct reader_bounds *b, char *buf, size_t n) {
  snprintf(buf, n, "%llu MiB: %d MiB and %u times the file's size%s", (unsigned long long)(b->mem >> 20),
           READER_MEM_BASE_MIB, b->per_byte, b->per_byte == READER_MEM_PER_BYTE ? "" : ", compressed");
  return buf;
}

/* The message for a status of read_report's; b: the reader's bounds (NULL for
** an allocation that failed in this process, which has none of its own). */
static int read_refused(struct import *im, enum read_status st, const struct reader_bounds *b) {
  char bound[96];
  if (st == READ_NO_MEMORY && b)
    snprintf(im->err, sizeof im->err, "%s: libtracecmd needed more memory than its reader may use for this file "
             "(%s): a corrupt trace.dat? (a corrupt size or count field makes it ask for far more than the file "
             "holds)", im->opt.input, bound_text(b, bound, sizeof bound));
  else if (st == READ_NO_MEMORY)
    snprintf(im->err, sizeof im->err, "%s: libtracecmd could not allocate the memory it asked for: a corrupt "
             "trace.dat? (a corrupt size or count field makes it ask for far more than the file holds)",
             im->opt.input);
  else if (st == READ_TOO_LONG)
    snprintf(im->err, sizeof im->err, "%s: its report (one line a record) grew past the reader's memory bound "
             "(%s): a corrupt trace.dat? (a corrupt ring-buffer page can make libtracecmd give records without "
             "end)", im->opt.input, bound_text(b, bound, sizeof bound));
  else if (st == READ_NOT_TRACEDAT)
    snprintf(im->err, sizeof im->err, "%s: not a trace-cmd trace.dat file, or unreadable (libtracecmd could not "
             "open it)", im->opt.input);
  else
    snprintf(im->err, sizeof im->err, "%s: cannot read it again", im->opt.input);
  return EXIT_BADINPUT;
}

/* How the child ended, when not with its report: a message and EXIT_BADINPUT. */
static int reader_died(struct import *im, int status, const struct rusage *ru, struct reader_bounds b) {
  /* past the soft limit SIGXCPU, past the hard one SIGKILL; a kill -9 from elsewhere is a crash */
  rlim_t cpu_used = (rlim_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec);
  bool over = WIFSIGNALED(status) &&
              (WTERMSIG(status) == SIGXCPU || (WTERMSIG(status) == SIGKILL && cpu_used >= b.cpu_s));
  if (over)
    snprintf(im->err, sizeof im->err, "%s: libtracecmd had not finished reading it after %llu s of CPU time (%d s, "
             "and %d s a MiB of file%s): a corrupt trace.dat? (a corrupt ring-buffer page can make it loop for ever, a "
             "corrupt CPU count look at millions of CPUs for each record)",
             im->opt.input, (unsigned long long)b.cpu_s, READER_CPU_BASE_S, READER_CPU_PER_MIB_S,
             READER_CPU_SCALE > 1 ? ", as this sanitizer build reads slower" : "");
  else if (WIFEXITED(status) && WEXITSTATUS(status) == READER_EXIT_NO_MEMORY)
    return read_refused(im, READ_NO_MEMORY, &b);
  else if (WIFSIGNALED(status))
    snprintf(im->err, sizeof im->err, "%s: libtracecmd crashed reading it (signal %d, %s): a corrupt trace.dat file?",
             im->opt.input, WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(im->err, sizeof im->err, "%s: the trace.dat reader stopped before its end", im->opt.input);
  return EXIT_BADINPUT;
}

/* libtracecmd and libtraceevent trust what a file says (a corrupt event format
** made libtraceevent divide by zero, a fuzz input), so the file is read in a
** child process that hands the report text back through a pipe: a crash in
** the libraries is then a refused file, not a crashed vmxsim.  The fork must
** come before any other thread starts (a lock another thread holds would stay
** held in the child): `run` and `summary` import a trace.dat before replaying
** it, not as they replay it (sim/cli/options.c, recording_stream). */
static int report_in_child(struct import *im, const char *path, struct strbuf *out, bool *kvm) {
  int fd[2];
  if (pipe(fd) != 0) {
    snprintf(im->err, sizeof im->err, "%s: pipe: %s", im->opt.input, strerror(errno));
    return EXIT_INTERNAL;
  }
  struct reader_bounds b = reader_bounds_of(path);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    report_child(path, fd[1], b);
  }
  close(fd[1]);
  if (pid < 0) {
    close(fd[0]);
    snprintf(im->err, sizeof im->err, "%s: fork: %s", im->opt.input, strerror(errno));
    return EXIT_INTERNAL;
  }
  char buf[1 << 16];
  ssize_t k;
  while ((k = read(fd[0], buf, sizeof buf)) != 0) {
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    strbuf_add(out, buf, (size_t)k);
  }
  close(fd[0]);
  int status;
  struct rusage ru = { 0 };
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out->len < 2) return reader_died(im, status, &ru, b);
  enum read_status st = (unsigned char)out->s[out->len - 2];
  *kvm = out->s[out->len - 1] != 0;
  out->len -= 2;
  out->s[out->len] = 0;
  return st ? read_refused(im, st, &b) : 0;
}

/* The report text, as kvm-ftrace or perf-script text, into the import. */
static int import_report(struct import *im, struct strbuf *out, bool kvm) {
  im->tids_only = true;                       /* trace.dat knows a task's pid, not its thread group */
  cJSON_AddStringToObject(im->meta, "trace_dat", kvm ? "KVM host events, read as kvm-ftrace"
                                                     : "native events, read as perf-script");
  int rc = kvm ? import_kvm_ftrace(im, out->s ? out->s : "", out->len)
               : import_perf_script(im, out->s ? out->s : "", out->len);
  free(out->s);
  return rc;
}

int import_tracecmd_in_process(struct import *im, const char *path) {
  struct reader_bounds b = reader_bounds_of(path);
  /* a quarter of the bound: the text's buffer doubles as it grows, and its last line may be long */
  struct report_out o = { .fd = -1, .max = b.mem / 4 };
  bool kvm = false;
  enum read_status st = read_report(path, &o, &kvm, true);
  if (st) {
    free(o.text.s);
    return read_refused(im, st, st == READ_TOO_LONG ? &b : NULL);
  }
  return import_report(im, &o.text, kvm);
}

int import_tracecmd(struct import *im, const char *path) {
  struct strbuf out = { 0 };
  bool kvm = false;
  int rc = report_in_child(im, path, &out, &kvm);
  if (rc) {
    free(out.s);
    return rc;
  }
  return import_report(im, &out, kvm);
}

bool import_tracecmd_available(void) { return true; }

#else

int import_tracecmd_in_process(struct import *im, const char *path) { return import_tracecmd(im, path); }

int import_tracecmd(struct import *im, const char *path) {
  (void)path;
  snprintf(im->err, sizeof im->err, "%s: this vmxsim was built without trace.dat input (libtracecmd-dev, "
           "libtraceevent-dev and libtracefs-dev were not found); convert it with "
           "'trace-cmd report -t -i %s > report.txt' and import that as kvm-ftrace (KVM host events)",
           im->opt.input, im->opt.input);
  return EXIT_BADINPUT;
}

bool import_tracecmd_available(void) { return false; }

#endif

/* ---- the format's row (the table of sim/import/import.c) ---- */

static const char tracecmd_usage[] =
  "usage: vmxsim import trace-cmd TRACE.dat -o OUT.bin [--cpu-ghz G] [--paging 32|pae|64]\n"
  "                               [--workload NAME] [--skip-bad]\n"
  "\n"
  "TRACE.dat is what 'trace-cmd record' or 'trace-cmd extract' writes.  It is read\n"
  "through libtracecmd and libtraceevent (each event printed with the format the\n"
  "recording kernel gave it, as 'trace-cmd report' prints it), then mapped as\n"
  "  kvm-ftrace   when it holds kvm:kvm_exit (a KVM host): see 'vmxsim import kvm-ftrace --help'\n"
  "  perf-script  otherwise (sched_switch, raw_syscalls, page faults, tlb_flush of a\n"
  "               native recording; each thread counts as its own process)\n"
  "Timestamps keep their nanoseconds.  Messages quote lines of that report text.\n"
  "Built without libtracecmd-dev, libtraceevent-dev and libtracefs-dev, vmxsim says so; convert\n"
  "with 'trace-cmd report -t -i TRACE.dat > report.txt' and import the text.\n"
  "\n"
  "example (workloads/record/README.md has more):\n"
  "  trace-cmd record -e kvm -o kvm.dat          # on the KVM host\n"
  "  vmxsim import trace-cmd kvm.dat -o kvm.bin\n"
  "  vmxsim summary kvm.bin\n";

/* trace.dat's magic: 0x17 0x08 0x44 and "tracing". */
static int tracecmd_probe(const unsigned char *head, size_t n, const char *text) {
  (void)text;
  return n >= 10 && memcmp(head, "\x17\x08\x44tracing", 10) == 0 ? IMPORT_PROBE_MAGIC : IMPORT_PROBE_NO;
}

const struct import_format import_tracecmd_format = {
  .name = "trace-cmd",
  .summary = "trace-cmd's trace.dat, read through libtracecmd: KVM host events as\n"
             "kvm-ftrace, native sched/syscall/fault events as perf-script",
  .usage = tracecmd_usage,
  .recording = "trace-cmd trace.dat",
  .probe = tracecmd_probe,
  .run_path = import_tracecmd,
};
