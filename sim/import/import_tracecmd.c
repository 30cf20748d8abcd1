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
#include "sim/core/util.h"

#include <cJSON.h>
#include <string.h>

#ifdef VMXSIM_TRACECMD
#include <trace-cmd.h>
#include <event-parse.h>
#include <trace-seq.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The CPU time the child may spend on a file: a corrupt ring-buffer page can
** make libtraceevent's kbuffer_next_event loop for ever (fuzz inputs of 36 KB
** that had not ended after 40 minutes).  A good file takes milliseconds a MiB
** (libtracecmd's parse and one printed line a record), so the bound is far
** above any real file's time, and well below the tracecmd fuzz harness's
** timeout (scripts/fuzz.sh). */
#define READER_CPU_BASE_S    5
#define READER_CPU_PER_MIB_S 2

struct reader {
  struct tep_handle *tep;
  int kvm_exit_id;           /* the kvm_exit event's id, -1 when the file has no such format */
  bool kvm;                  /* KVM host events: ftrace lines; else perf script lines */
  struct strbuf out;
  struct trace_seq info;
  uint64_t records;
};

/* First pass: is there a kvm_exit record?  (Every format of the host kernel is
** saved, so the kvm_exit format alone says nothing.) */
static int find_kvm_exit(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *arg) {
  (void)h, (void)cpu;
  struct reader *R = arg;
  if (tep_data_type(R->tep, rec) == R->kvm_exit_id) R->kvm = true;
  return R->kvm;               /* nonzero stops the iteration */
}

/* One record as `trace-cmd report` (KVM) or `perf script` (native events) prints it. */
static int add_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *arg) {
  (void)h;
  struct reader *R = arg;
  struct tep_event *ev = tep_find_event_by_record(R->tep, rec);
  if (!ev) return 0;
  int pid = tep_data_pid(R->tep, rec);
  const char *comm = tep_data_comm_from_pid(R->tep, pid);
  trace_seq_reset(&R->info);
  tep_print_event(R->tep, &R->info, rec, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&R->info);
  char head[256];
  unsigned long long s = rec->ts / 1000000000ull, ns = rec->ts % 1000000000ull;
  int n = R->kvm ? snprintf(head, sizeof head, "%s-%d [%03d] %llu.%09llu: %s: ", comm ? comm : "<...>", pid, cpu, s, ns,
                            ev->name)
                 : snprintf(head, sizeof head, "%s %d [%03d] %llu.%09llu: %s:%s: ", comm ? comm : ":-", pid, cpu, s, ns,
                            ev->system, ev->name);
  strbuf_add(&R->out, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1);
  for (char *c = R->info.buffer; *c; c++)
    if (*c == '\n') *c = ' ';                  /* one record, one line */
  strbuf_puts(&R->out, R->info.buffer);
  strbuf_add(&R->out, "\n", 1);
  R->records++;
  return 0;
}

/* The report text of the file at path (what `trace-cmd report` prints, one
** record a line) into *out; *kvm: it holds KVM host events.  0, or 1 when
** libtracecmd cannot open the file, 2 when it cannot open it again.  Runs
** only in the child, which exits as soon as it has written the report: the
** handles are kept (reachable, in open_handles) for the exit to free, as
** tracecmd_close walks every CPU the file's header claims, which for a
** corrupt count took most of the fuzz harness's time. */
static int read_report(const char *path, struct strbuf *out, bool *kvm) {
  static struct tracecmd_input *volatile open_handles[2];  /* volatile: stores that are never read are kept */
  tracecmd_set_loglevel(TEP_LOG_NONE);
  struct tracecmd_input *h = open_handles[0] = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
  if (!h) return 1;
  struct reader R = { .tep = tracecmd_get_tep(h) };
  struct tep_event *kx = tep_find_event_by_name(R.tep, "kvm", "kvm_exit");
  R.kvm_exit_id = kx ? kx->id : -1;
  if (kx) {
    tracecmd_iterate_events(h, NULL, 0, find_kvm_exit, &R);
    h = open_handles[1] = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS); /* iterating again needs a fresh one */
    if (!h) return 2;
    R.tep = tracecmd_get_tep(h);
  }
  trace_seq_init(&R.info);
  tracecmd_iterate_events(h, NULL, 0, add_record, &R);
  trace_seq_destroy(&R.info);
  *out = R.out;
  *kvm = R.kvm;
  return 0;
}

static bool write_all(int fd, const void *p, size_t n) {
  for (const char *c = p; n;) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static rlim_t reader_cpu_limit(const char *path) {
  struct stat st;
  uint64_t mib = stat(path, &st) == 0 && st.st_size > 0 ? ((uint64_t)st.st_size + (1u << 20) - 1) >> 20 : 0;
  return (rlim_t)(READER_CPU_BASE_S + READER_CPU_PER_MIB_S * mib);
}

/* The child: the report, then a status byte and a kvm byte, through fd.  Past
** cpu_limit seconds of CPU it is ended by SIGXCPU. */
static void report_child(const char *path, int fd, rlim_t cpu_limit) {
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
  static const int deadly[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU };
  for (size_t i = 0; i < sizeof deadly / sizeof *deadly; i++) signal(deadly[i], SIG_DFL);
  struct rlimit cpu = { .rlim_cur = cpu_limit, .rlim_max = cpu_limit + 1 };   /* SIGXCPU, then SIGKILL */
  setrlimit(RLIMIT_CPU, &cpu);
  struct strbuf t = { 0 };
  bool kvm = false;
  unsigned char tail[2] = { (unsigned char)read_report(path, &t, &kvm), kvm };
  bool ok = (!t.len || write_all(fd, t.s, t.len)) && write_all(fd, tail, sizeof tail);
  _exit(ok ? 0 : 1);                           /* no atexit work: the parent owns the process's files */
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
  rlim_t cpu_limit = reader_cpu_limit(path);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    report_child(path, fd[1], cpu_limit);
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
  /* past the soft limit SIGXCPU, past the hard one SIGKILL; a kill -9 from elsewhere is a crash */
  rlim_t cpu_used = (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec);
  bool over = WIFSIGNALED(status) &&
              (WTERMSIG(status) == SIGXCPU || (WTERMSIG(status) == SIGKILL && cpu_used >= cpu_limit));
  if (over) {
    snprintf(im->err, sizeof im->err, "%s: libtracecmd had not finished reading it after %llu s of CPU time (%d s, "
             "and %d s a MiB of file): a corrupt trace.dat? (a corrupt ring-buffer page can make it loop for ever)",
             im->opt.input, (unsigned long long)cpu_limit, READER_CPU_BASE_S, READER_CPU_PER_MIB_S);
    return EXIT_BADINPUT;
  }
  if (WIFSIGNALED(status)) {
    snprintf(im->err, sizeof im->err, "%s: libtracecmd crashed reading it (signal %d, %s): a corrupt trace.dat file?",
             im->opt.input, WTERMSIG(status), strsignal(WTERMSIG(status)));
    return EXIT_BADINPUT;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out->len < 2) {
    snprintf(im->err, sizeof im->err, "%s: the trace.dat reader stopped before its end", im->opt.input);
    return EXIT_BADINPUT;
  }
  unsigned char st = (unsigned char)out->s[out->len - 2];
  *kvm = out->s[out->len - 1] != 0;
  out->len -= 2;
  out->s[out->len] = 0;
  if (st == 1)
    snprintf(im->err, sizeof im->err, "%s: not a trace-cmd trace.dat file, or unreadable (libtracecmd could not "
             "open it)", im->opt.input);
  else if (st)
    snprintf(im->err, sizeof im->err, "%s: cannot read it again", im->opt.input);
  return st ? EXIT_BADINPUT : 0;
}

int import_tracecmd(struct import *im, const char *path) {
  struct strbuf out = { 0 };
  bool kvm = false;
  int rc = report_in_child(im, path, &out, &kvm);
  if (rc) {
    free(out.s);
    return rc;
  }
  im->tids_only = true;                       /* trace.dat knows a task's pid, not its thread group */
  cJSON_AddStringToObject(im->meta, "trace_dat", kvm ? "KVM host events, read as kvm-ftrace"
                                                     : "native events, read as perf-script");
  rc = kvm ? import_kvm_ftrace(im, out.s ? out.s : "", out.len) : import_perf_script(im, out.s ? out.s : "", out.len);
  free(out.s);
  return rc;
}

bool import_tracecmd_available(void) { return true; }

#else

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
