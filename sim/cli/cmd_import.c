/* `vmxsim import`: options and messages; the importer library (sim/import/import.h) does the work. */
#include "commands.h"
#include "sim/import/import.h"
#include "sim/core/util.h"

#include <stdlib.h>
#include <string.h>

static const char import_usage[] =
  "usage: vmxsim import FORMAT IN -o OUT.bin [options]\n"
  "\n"
  "Turns a recording of a real system into a trace that vmxsim replays.  IN may be\n"
  "gzip, xz or zstd compressed (recognised by its first bytes, not its name) and - reads\n"
  "standard input; -o - writes the trace to standard output (a pipe or a file).\n"
  "formats:\n"
  "  perf-script   'perf script -F +pid' text of a native Linux recording: context\n"
  "                switches become CR3 writes, syscalls, page faults, TLB flushes\n"
  "  kvm-ftrace    ftrace / 'trace-cmd report' text of KVM's kvm_exit, kvm_entry,\n"
  "                kvm_cr, kvm_msr, kvm_cpuid, kvm_page_fault, kvm_hypercall, kvm_pio\n"
  "  xentrace      Xen binary trace: HVM VMEXIT, VMENTRY and handler records\n"
  "  trace-cmd     trace-cmd's trace.dat, read through libtracecmd: KVM host events as\n"
  "                kvm-ftrace, native sched/syscall/fault events as perf-script\n"
  "options:\n"
  "  -o, --output OUT.bin   the trace to write (required; - for standard output)\n"
  "      --cpu-ghz G        recorded seconds -> guest cycles (above 0, at most 10;\n"
  "                         default 2.4; text formats)\n"
  "      --paging 32|pae|64 guest paging mode (default 64)\n"
  "      --workload NAME    workload name in the header (default: IN's base name)\n"
  "      --skip-bad         count unparseable lines instead of failing (exit code 3)\n"
  "\n"
  "A recording that lacks events the results need (no raw_syscalls:sys_exit, no page\n"
  "faults, lost samples) still imports, with one warning per gap on stderr; the trace\n"
  "metadata's \"coverage\" keeps what was seen and what is missing ('vmxsim trace info').\n"
  "'vmxsim import FORMAT --help' for what each format maps; workloads/record/ records\n"
  "perf recordings; traces/recorded/ holds examples.\n"
  "\n"
  "example:\n"
  "  workloads/record/record.sh pipe -o pipe.txt\n"
  "  vmxsim import perf-script pipe.txt -o pipe.bin\n"
  "  vmxsim --policy shadowcache pipe.bin\n";

static const char perf_usage[] =
  "usage: vmxsim import perf-script IN.txt -o OUT.bin [--cpu-ghz G] [--paging 32|pae|64]\n"
  "                                 [--workload NAME] [--skip-bad]\n"
  "\n"
  "IN.txt is 'perf script -F +pid' output of a recording of the tracepoints\n"
  "sched:sched_switch, sched:sched_process_fork, raw_syscalls:sys_enter/sys_exit,\n"
  "exceptions:page_fault_user/page_fault_kernel and tlb:tlb_flush (workloads/record/).\n"
  "It describes what the guest kernel would do running that workload:\n"
  "  sched_switch to another process   mark switch; cr3w of that process's CR3\n"
  "                                    (0x10000000 + n*0x100000; idle and kernel\n"
  "                                    threads keep the previous address space)\n"
  "  sys_enter NR / sys_exit           syscall NR / sysret\n"
  "  page_fault_* address error_code   touch PAGE 1 (w when error_code bit 1)\n"
  "  tlb_flush pages:-1 or N           cr3w of the current CR3 (tlb_flush carries no\n"
  "                                    address); reason 0 belongs to the switch's cr3w\n"
  "  time between events on a CPU      run (seconds x cpu-ghz)\n"
  "Each CPU becomes a vCPU (dense, in order of appearance). A line of a task whose\n"
  "process is not the one loaded on its CPU means the switch to it was not recorded\n"
  "(perf records only the workload's tasks): the cr3w is inserted there.\n"
  "workloads/record/README.md has the full mapping.\n"
  "\n"
  "example:\n"
  "  perf record -e sched:sched_switch -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \\\n"
  "      -o pipe.data -- taskset -c 0 perf bench sched pipe -l 10000\n"
  "  perf script -F +pid -i pipe.data > pipe.txt\n"
  "  vmxsim import perf-script pipe.txt -o pipe.bin\n";

static const char kvm_usage[] =
  "usage: vmxsim import kvm-ftrace IN.txt -o OUT.bin [--cpu-ghz G] [--paging 32|pae|64]\n"
  "                                [--workload NAME] [--skip-bad]\n"
  "\n"
  "IN.txt is /sys/kernel/tracing/trace text or 'trace-cmd report' output of KVM's\n"
  "tracepoints on the host (old and new line formats). Each exit the host took\n"
  "becomes the guest action that caused it:\n"
  "  CR_ACCESS + kvm_cr cr_write N = V   crNw V (cr_read: crNr; CLTS, LMSW from info1)\n"
  "  MSR_READ/MSR_WRITE + kvm_msr        rdmsr IDX / wrmsr IDX V\n"
  "  CPUID + kvm_cpuid                   cpuid FUNC IDX\n"
  "  HLT, INVLPG (info1), RDTSC, PAUSE   hlt, invlpg ADDR, rdtsc, pause\n"
  "  IO_INSTRUCTION + kvm_pio            io in|out PORT SIZE\n"
  "  VMCALL + kvm_hypercall              vmcall NR\n"
  "  EXCEPTION_NMI/EPT_VIOLATION +\n"
  "    kvm_page_fault                    touch PAGE 1 (w when error_code bit 1)\n"
  "  DR_ACCESS                           drw/drr N (info1 bits 2:0, direction bit 4)\n"
  "  EXTERNAL_INTERRUPT                  intr VECTOR\n"
  "Guest time from kvm_entry to the next kvm_exit becomes 'run' cycles; 'vcpu N'\n"
  "becomes vCPU N. Only exits the host took are recorded: record with kvm_intel\n"
  "ept=0 to see every guest CR3 write.\n"
  "\n"
  "example:\n"
  "  trace-cmd record -e kvm:kvm_exit -e kvm:kvm_entry -e kvm:kvm_cr -e kvm:kvm_msr \\\n"
  "      -e kvm:kvm_cpuid -e kvm:kvm_page_fault -e kvm:kvm_pio -e kvm:kvm_hypercall\n"
  "  trace-cmd report > kvm.txt\n"
  "  vmxsim import kvm-ftrace kvm.txt -o kvm.bin\n";

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

static const char xen_usage[] =
  "usage: vmxsim import xentrace IN.bin -o OUT.bin [--paging 32|pae|64] [--workload NAME]\n"
  "                              [--skip-bad]\n"
  "\n"
  "IN.bin is a Xen binary trace (xentrace, host byte order). Used records:\n"
  "  CPU change 0x0001f003 {cpu, bytes}   following records run on that pCPU; each\n"
  "                                       pCPU becomes a vCPU (pin vCPUs to pCPUs)\n"
  "  HVM VMEXIT 0x00081102/0x00081002     the exit (reason); its TSC minus the last\n"
  "                                       VMENTRY's TSC becomes 'run' cycles\n"
  "  HVM handler records 0x00082xxx       the pending exit's action: CR_READ/WRITE\n"
  "                                       crNr/crNw, MSR_READ/WRITE rdmsr/wrmsr,\n"
  "                                       IOPORT_READ/WRITE io (size 1: not recorded),\n"
  "                                       CPUID cpuid LEAF, INTR intr, VMMCALL vmcall,\n"
  "                                       HLT, INVLPG, CLTS, LMSW, RDTSC, PF_XEN touch,\n"
  "                                       NPF touch, TRAP exc, XCR_WRITE64 xsetbv\n"
  "  HVM VMENTRY 0x00081001               end of the exit: its TSC minus the VMEXIT's\n"
  "                                       is the exit's measured cost (vmxsim summary)\n"
  "Exits without a detail record become hlt, rdtsc, pause, wbinvd, cpuid 0 or\n"
  "vmcall 0 where the reason says enough; the rest are counted in the metadata.\n"
  "Other records are counted and skipped.\n"
  "\n"
  "example:\n"
  "  xentrace -D -e 0x0008f000 xen.bin     # HVM class, on the Xen host\n"
  "  vmxsim import xentrace xen.bin -o xen.bin.trace\n";

struct import_args {
  const char *format, *in, *out, *workload;
  struct import_opts opt;
  bool help;
};

/* Value of "--name V" or "--name=V" at argv[*i]; NULL if argv[*i] is another option. */
static const char *opt_val(int argc, char **argv, int *i, const char *s, const char *l, bool *missing) {
  size_t n = strlen(l);
  if (strncmp(argv[*i], l, n) == 0 && argv[*i][n] == '=') return argv[*i] + n + 1;
  if (strcmp(argv[*i], l) != 0 && (!s || strcmp(argv[*i], s) != 0)) return NULL;
  if (*i + 1 >= argc) { *missing = true; return NULL; }
  return argv[++*i];
}

/* Applies one option; returns 1 if argv[*i] was one, 0 if not, -1 after an error. */
static int parse_option(int argc, char **argv, int *i, struct import_args *a) {
  bool missing = false;
  const char *v;
  if ((v = opt_val(argc, argv, i, "-o", "--output", &missing))) { a->out = v; return 1; }
  if ((v = opt_val(argc, argv, i, NULL, "--workload", &missing))) { a->workload = v; return 1; }
  if ((v = opt_val(argc, argv, i, NULL, "--cpu-ghz", &missing))) {
    if (!parse_double(v, &a->opt.cpu_ghz) || !clock_ghz_in_range(a->opt.cpu_ghz)) {
      errorf("import: --cpu-ghz '%s' is not a number of GHz above 0 and at most %g", v, CLOCK_GHZ_MAX);
      return -1;
    }
    return 1;
  }
  if ((v = opt_val(argc, argv, i, NULL, "--paging", &missing))) {
    int p = paging_from_name(v);
    if (p < 0) { errorf("import: --paging '%s': expected 32, pae or 64", v); return -1; }
    a->opt.paging = (unsigned)p;
    return 1;
  }
  if (missing) { errorf("import: option '%s' needs a value; see 'vmxsim import --help'", argv[*i]); return -1; }
  if (strcmp(argv[*i], "--skip-bad") == 0) { a->opt.skip_bad = true; return 1; }
  if (strcmp(argv[*i], "-h") == 0 || strcmp(argv[*i], "--help") == 0) { a->help = true; return 1; }
  return 0;
}

static int parse_import_args(int argc, char **argv, struct import_args *a) {
  memset(a, 0, sizeof *a);
  a->opt.cpu_ghz = IMPORT_GHZ_DEFAULT;
  a->opt.paging = PAGING_64;
  for (int i = 1; i < argc; i++) {
    int r = parse_option(argc, argv, &i, a);
    if (r < 0) return EXIT_USAGE;
    if (r > 0) continue;
    if (argv[i][0] == '-' && argv[i][1]) {
      errorf("import: unknown option '%s'; see 'vmxsim import --help'", argv[i]);
      return EXIT_USAGE;
    }
    if (!a->format) a->format = argv[i];
    else if (!a->in) a->in = argv[i];
    else { errorf("import: unexpected argument '%s' (one input file)", argv[i]); return EXIT_USAGE; }
  }
  return 0;
}

/* The command line as one string, for the metadata. */
static char *join_args(int argc, char **argv) {
  size_t n = 8;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 3;
  char *s = xmalloc(n), *p = s;
  p += sprintf(p, "vmxsim");
  for (int i = 0; i < argc; i++)
    p += sprintf(p, strpbrk(argv[i], " \t'\"") ? " '%s'" : " %s", argv[i]);
  return s;
}

static void report_skipped(const struct import *im) {
  if (!im->bad) return;
  errorf("import: skipped %llu unparseable %s of %s%s", (unsigned long long)im->bad,
         im->binary ? "records" : "lines", im->opt.input, im->nbad_kept ? ", first:" : "");
  for (unsigned i = 0; i < im->nbad_kept; i++) {
    char msg[640];
    import_format_bad(im, &im->first_bad[i], msg, sizeof msg);
    fprintf(stderr, "  %s\n", msg);
  }
}

/* Runs the import the arguments describe; prints the outcome. */
static int run_import(const struct import_args *a, const struct import_format *fmt, int argc, char **argv) {
  char *cmd = join_args(argc, argv);
  struct import_job job = { .format = fmt, .input = a->in, .output = a->out, .workload = a->workload,
                            .command = cmd, .opt = a->opt };
  struct import im;
  char err[1024];
  int rc = import_file(&job, &im, err, sizeof err);
  if (rc) errorf("%s", err);
  else report_skipped(&im);
  for (const char *l = rc ? "" : im.warnings; *l; ) {   /* an incomplete recording: warnings, not errors */
    size_t len = strcspn(l, "\n");
    errorf("warning: %.*s", (int)len, l);
    l += len + (l[len] == '\n');
  }
  import_free(&im);
  free(cmd);
  return rc;
}

int cmd_import(int argc, char **argv) {
  struct import_args a;
  int rc = parse_import_args(argc, argv, &a);
  if (rc) return rc;
  const struct { const char *name; const char *usage; } formats[] = {
    { "perf-script", perf_usage }, { "kvm-ftrace", kvm_usage }, { "xentrace", xen_usage },
    { "trace-cmd", tracecmd_usage },
  };
  if (!a.format) {
    fputs(import_usage, a.help ? stdout : stderr);
    return a.help ? EXIT_OK : EXIT_USAGE;
  }
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
    if (strcmp(a.format, formats[i].name) != 0) continue;
    if (a.help) { fputs(formats[i].usage, stdout); return EXIT_OK; }
    if (!a.in) { errorf("import %s: missing input file; see 'vmxsim import %s --help'", a.format, a.format); return EXIT_USAGE; }
    if (!a.out) { errorf("import %s: missing -o OUT.bin; see 'vmxsim import %s --help'", a.format, a.format); return EXIT_USAGE; }
    return run_import(&a, import_format_find(a.format), argc, argv);
  }
  errorf("import: unknown format '%s' (perf-script, kvm-ftrace, xentrace, trace-cmd); see 'vmxsim import --help'", a.format);
  return EXIT_USAGE;
}
