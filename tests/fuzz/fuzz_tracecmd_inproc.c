/* libFuzzer harness: trace-cmd's trace.dat read in this process
** (import_tracecmd_in_process, sim/import/import_tracecmd.c; built only when
** the build has libtracecmd).  The tracecmd harness runs the import as vmxsim
** does, whose reader is a child process forked for each input (85 ms of CPU
** time an input, over the same 400 from the seeds; this one, 27 ms).  This one
** calls the same reading code, then the same import of its report, without
** the fork.  The input is a memory file (memfd_create) of exactly its bytes,
** which the libraries open by its /proc/self/fd path, as they open a file.  An
** input is refused (EXIT_BADINPUT, a message naming it) or gives a trace the
** reader reads to its end.
**
** What the child gives vmxsim, the harness gives itself, so that an input the
** child refuses is refused here too and the campaign goes on:
** - its memory bound (64 MiB and 32 times the file's size): the sanitizer's
**   largest allocation (__asan_default_options, below), and libFuzzer's
**   -rss_limit_mb for the whole process;
** - its CPU bound (5 s, and 2 s a MiB): a timer of the process's CPU time;
**   past it, an instruction of the libraries' ends the read (one of vmxsim's
**   runs on, to libFuzzer's -timeout, a finding);
** - its shelter from the libraries' own faults: a fault whose instruction is
**   libtracecmd's or libtraceevent's, or that of code they called (libc, the
**   sanitizer's strcmp, ...), ends the read, as it ends the child; any other
**   fault (vmxsim's code and what it calls, a sanitizer's report) stays a
**   finding.
** An ended read's data is left behind (the libraries' cannot be freed after a
** fault in them), which -rss_limit_mb bounds.  The number of reads ended is
** printed at exit.  Each such input is one vmxsim refuses in its child
** (tests/cli/t_import.sh keeps some).
** The libraries are Debian's, not instrumented: their reads past a buffer that
** go through the sanitizer's interceptors are not reported, as their other
** reads are not, and their leaks are not (the suppressions below). */
#include "fuzz_import_file.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>

/* A failed allocation is the libraries' way of refusing a size field (they get
** NULL, and vmxsim refuses the file): malloc returns NULL as in the child, above
** 66 MiB, the child's bound for an uncompressed file of 64 KiB (larger or
** compressed inputs get less than their child would, which refuses them
** sooner, never wrongly). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=66"; }

/* The sanitizer's interceptors (strdup, strcmp, memcpy, ...) see the libraries'
** reads past a buffer that their other reads, not instrumented, do not: no
** report when one of the libraries is on the stack.  That covers their own
** calls and those of vmxsim's callbacks that they run (add_record's, on the
** text libtraceevent printed); vmxsim's own loads and stores are checked
** whatever these say.  (The tracecmd harness still sees them: its child's
** sanitizer reports them, and the child's refusal is what vmxsim does.) */
const char *__asan_default_suppressions(void);
const char *__asan_default_suppressions(void) {
  return "interceptor_via_lib:libtraceevent.so\ninterceptor_via_lib:libtracecmd.so\n";
}

/* The libraries' leaks (libtraceevent 1.7 leaks some of the formats it parses;
** an ended read leaves all of its data), as tests/lsan-suppressions.txt has
** them; and what they leak of libc's allocations for them (sscanf's "%ms"
** strings: the sanitizer's unwinder stops in libc, which keeps no frame
** pointers, before it reaches the library that called it).  vmxsim's own
** allocations are checked: the rare one it makes through libc (fopen's) is
** checked by the other harnesses and the tests. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libtraceevent.so\nleak:libtracecmd.so\nleak:libc.so.6\n"; }

/* ---- the libraries' faults ---- */

#define LIB_RANGES_MAX 8
static struct { uintptr_t lo, hi; } lib_text[LIB_RANGES_MAX];
static int lib_ranges;
static sigjmp_buf read_ended;
static volatile sig_atomic_t reading;            /* a fault of the libraries ends the read */
static volatile sig_atomic_t fault_errno;
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGPROF };
static struct sigaction chained[sizeof fault_signals / sizeof *fault_signals];
static unsigned long long reads_ended[NSIG];    /* by signal: SIGPROF for the CPU bound */
static FILE *report;                            /* stderr, kept from libFuzzer's -close_fd_mask */

/* The executable segments of libtracecmd and libtraceevent. */
static int note_library(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  if (!strstr(info->dlpi_name, "/libtracecmd.so") && !strstr(info->dlpi_name, "/libtraceevent.so")) return 0;
  for (int i = 0; i < info->dlpi_phnum && lib_ranges < LIB_RANGES_MAX; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    lib_text[lib_ranges].lo = info->dlpi_addr + ph->p_vaddr;
    lib_text[lib_ranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    lib_ranges++;
  }
  return 0;
}

static bool in_libraries(uintptr_t pc) {
  for (int i = 0; i < lib_ranges; i++)
    if (pc >= lib_text[i].lo && pc < lib_text[i].hi) return true;
  return false;
}

static uintptr_t fault_pc(const void *uc) {
#if defined(__x86_64__)
  return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#else
  (void)uc;
  return 0;                                     /* unknown: every fault is a finding */
#endif
}

/* Code that runs for its caller: another shared library (libc, libzstd, ...), or
** a function the harness exports (the sanitizer's interceptors: strcmp, ...);
** vmxsim's own functions are not exported. */
static bool runs_for_caller(uintptr_t pc) {
  static uintptr_t program;                      /* the harness's own base address */
  Dl_info d;
  if (!program && dladdr((void *)(uintptr_t)LLVMFuzzerTestOneInput, &d)) program = (uintptr_t)d.dli_fbase;
  if (!dladdr((void *)pc, &d)) return false;
  return (uintptr_t)d.dli_fbase != program || d.dli_sname != NULL;
}

/* A fault of the libraries': its instruction is theirs, or that of code they
** called (libtraceevent's strcmp on a NULL faults in the sanitizer's strcmp).
** The frames above the fault are walked up to the first one that is neither
** the libraries' nor code that runs for its caller: vmxsim's own faults, and
** those of what vmxsim calls, stay findings. */
static bool libraries_fault(const void *uc) {
  uintptr_t pc = fault_pc(uc);
  if (in_libraries(pc)) return true;
  if (!runs_for_caller(pc)) return false;
  void *frames[32];
  int n = backtrace(frames, 32), i = 0;
  while (i < n && (uintptr_t)frames[i] != pc) i++;  /* the frame that faulted, past the handler's */
  for (i++; i < n; i++) {
    uintptr_t ret = (uintptr_t)frames[i];
    if (in_libraries(ret)) return true;
    if (!runs_for_caller(ret)) return false;
  }
  return false;
}

static void set_cpu_timer(uint64_t seconds, long usec) {
  struct itimerval t = { .it_value = { .tv_sec = (time_t)seconds, .tv_usec = usec } };
  setitimer(ITIMER_PROF, &t, NULL);
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
  if (reading && (sig == SIGPROF ? in_libraries(fault_pc(uc)) : libraries_fault(uc))) {
    reading = 0;
    fault_errno = errno;
    siglongjmp(read_ended, sig);
  }
  if (sig == SIGPROF) {                          /* past the CPU bound, in vmxsim's code: looked at again */
    if (reading) set_cpu_timer(0, 10000);
    return;
  }
  for (size_t i = 0; i < sizeof fault_signals / sizeof *fault_signals; i++) {
    if (fault_signals[i] != sig) continue;
    sigaction(sig, &chained[i], NULL);           /* the sanitizer's or libFuzzer's handler, or the default */
    if (chained[i].sa_flags & SA_SIGINFO) chained[i].sa_sigaction(sig, si, uc);
    else if (chained[i].sa_handler != SIG_IGN && chained[i].sa_handler != SIG_DFL) chained[i].sa_handler(sig);
    return;                                      /* default: the fault again, now fatal */
  }
}

static void print_reads_ended(void) {
  unsigned long long n = 0;
  for (int i = 0; i < NSIG; i++) n += reads_ended[i];
  fprintf(report, "tracecmd_inproc: %llu reads ended by the libraries' faults (SIGSEGV %llu, SIGBUS %llu, SIGFPE "
          "%llu, SIGILL %llu) or CPU bound (%llu), each input refused as the reader child refuses it\n",
          n, reads_ended[SIGSEGV], reads_ended[SIGBUS], reads_ended[SIGFPE], reads_ended[SIGILL], reads_ended[SIGPROF]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  int fd = dup(STDERR_FILENO);                   /* before libFuzzer closes it (-close_fd_mask=2) */
  report = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!report) report = stderr;
  atexit(print_reads_ended);
  return 0;
}

/* Installed at the first input, over the sanitizer's and libFuzzer's handlers,
** which it calls for a fault that is not the libraries'. */
static void shelter_from_library_faults(void) {
  dl_iterate_phdr(note_library, NULL);
  if (!lib_ranges) { fprintf(stderr, "libtracecmd and libtraceevent are not loaded\n"); abort(); }
  void *warm[1];
  backtrace(warm, 1);                            /* loads the unwinder now, not in a handler */
  Dl_info d;
  dladdr((void *)(uintptr_t)LLVMFuzzerTestOneInput, &d);
  struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART };
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof fault_signals / sizeof *fault_signals; i++)
    sigaction(fault_signals[i], &sa, &chained[i]);
}

/* The trace-cmd import, with the file read in this process and the libraries'
** faults ending the read as they end the child: refused, as the child's are. */
static int read_here(struct import *im, const char *path) {
  uint64_t cpu_s, mem;
  import_tracecmd_bounds(path, &cpu_s, &mem);
  int sig = sigsetjmp(read_ended, 1);
  set_cpu_timer(0, 0);
  if (sig) {
    reads_ended[sig]++;
    if (sig == SIGPROF)
      snprintf(im->err, sizeof im->err, "%s: libtracecmd had not finished reading it after %llu s of CPU time",
               im->opt.input, (unsigned long long)cpu_s);
    else
      snprintf(im->err, sizeof im->err, "%s: libtracecmd crashed reading it (signal %d%s)", im->opt.input, sig,
               fault_errno == ENOMEM ? ", after an allocation failed" : "");
    return EXIT_BADINPUT;
  }
  reading = 1;
  set_cpu_timer(cpu_s, 0);
  int rc = import_tracecmd_in_process(im, path);
  reading = 0;
  set_cpu_timer(0, 0);
  return rc;
}

static const struct import_format *in_process(void) {
  static struct import_format f;
  if (!f.name) {
    f = *import_format_find("trace-cmd");
    f.run_path = read_here;
  }
  return &f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    shelter_from_library_faults();
    fd = memfd_create("recording.dat", MFD_CLOEXEC);
    if (fd < 0) { perror("memfd_create"); abort(); }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) { perror(path); abort(); }
  char err[1024] = "";
  int rc = fuzz_import_as(in_process(), path, err, sizeof err);
  if (rc != 0) fuzz_check_message(rc, err, path, EXIT_BADINPUT, EXIT_BADINPUT);
  return 0;
}
