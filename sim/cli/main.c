/* vmxsim: command-line entry point and subcommand dispatch. */
#include "commands.h"
#include "sim/config/policy.h"
#include "sim/base/util.h"
#include "sim/regress/regress.h"
#include "sim/repl/repl.h"
#include "sim/reproduce/reproduce.h"
#include "sim/base/version.h"

#include <string.h>
#include <sys/stat.h>

static const char usage[] =
  "vmxsim " VMXSIM_VERSION " - cycle-approximate Intel VT-x exit simulator\n"
  "\n"
  "usage: vmxsim [--policy P] [--cpu C] [--set K=V]... [--format table|json|csv] TRACE\n"
  "       vmxsim COMMAND [ARGS]   ('vmxsim COMMAND --help' for each)\n"
  "       vmxsim --commands       the command names, one a line (shell completion reads them)\n"
  "\n"
  "commands:\n"
  "  run         replay a trace under a policy (the default command; policy " POLICY_DEFAULT "\n"
  "              unless --policy says otherwise)\n"
  "  gen         generate a workload trace: lat_ctx, hackbench, syscalls, cr4toggle, debug,\n"
  "              cpuid, interrupts\n"
  "  trace       asm (text to binary), dump (binary to text), info (header and counts)\n"
  "  policies    list policy presets and knobs\n"
  "  cpus        list CPU cost profiles\n"
  "  regress     check regression cases: exit counts and cycles per trace and policy (CI)\n"
  "  import      convert a recording (perf-script, kvm-ftrace, xentrace, trace-cmd) into a trace\n"
  "  summary     a recording's exits as the host measured them (xenalyze --summary's view)\n"
  "  calibrate   fit a CPU profile to your host from a recording's measured exit costs\n"
  "  runs, report, compare   stored results (vmxsim.db): list runs, reprint one, compare several\n"
  "  repl        step through a trace: breakpoints, VMCS, registers, shadow MMU, why it exited\n"
  "  reproduce   run the classic exit-cost experiments (2007-2018) and print their tables\n"
  "  sweep       run a plan of many runs (traces x policies x CPUs): -j workers, shards, Slurm\n"
  "  merge       merge results databases (the shards of a sweep) into one\n"
  "  migrate     upgrade a results database to this vmxsim's schema (runs, report\n"
  "              and compare only read, and never upgrade it)\n"
  "\n"
  "exit codes:\n"
  "  0  success\n"
  "  2  usage error (bad option, unknown command, policy, knob or CPU profile)\n"
  "  3  bad input (unreadable, truncated or corrupt trace; malformed JSON or text)\n"
  "  4  the configuration fails VM entry (e.g. CR3_TARGET_COUNT above what the CPU supports)\n"
  "  5  results database error (the result was still printed)\n"
  "  6  regression check failed\n"
  " 70  internal error\n"
  " 74  output error: a file cannot be written (full disk, I/O error, read-only file system,\n"
  "     no permission); the file is named and nothing half-written is left\n"
  "130  interrupted (SIGINT, Ctrl-C); temporary files removed\n"
  "143  terminated (SIGTERM); temporary files removed\n"
  "\n"
  "example:\n"
  "  vmxsim gen lat_ctx --procs 2 --size 0 --iters 1000 -o lat_ctx.bin\n"
  "  vmxsim --policy shadowcache lat_ctx.bin\n";

struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
  { "run", cmd_run },           { "gen", cmd_gen },   { "trace", cmd_trace },
  { "policies", cmd_policies }, { "cpus", cmd_cpus },
  { "regress", cmd_regress },
  { "repl", cmd_repl },
  { "runs", cmd_runs },
  { "report", cmd_report },
  { "compare", cmd_compare },
  { "import", cmd_import },
  { "summary", cmd_summary },
  { "calibrate", cmd_calibrate },
  { "reproduce", cmd_reproduce },
  { "sweep", cmd_sweep },
  { "merge", cmd_merge },
  { "migrate", cmd_migrate },
};

/* The commands of other tools a hypervisor developer may type, with ours. */
static const struct { const char *theirs, *ours; } alike[] = {
  { "stat", "summary" },        /* perf kvm stat, kvm_stat */
  { "record", "import" },       /* perf kvm record, trace-cmd record: vmxsim imports their files */
  { "list", "runs" },
  { "show", "report" },
  { "diff", "compare" },
};

/* "did you mean 'X'? ..." for a command within two edits of name, or the
** one another tool calls name; otherwise where the commands are listed. */
static const char *did_you_mean(const char *name) {
  static char hint[96];
  const char *best = NULL;
  unsigned best_d = 3;
  for (size_t i = 0; i < sizeof alike / sizeof *alike; i++)
    if (!strcmp(name, alike[i].theirs)) best = alike[i].ours, best_d = 0;
  for (size_t i = 0; i < sizeof commands / sizeof *commands && best_d; i++) {
    unsigned d = edit_distance(name, commands[i].name, 2);
    if (d < best_d) best = commands[i].name, best_d = d;
  }
  if (!best) return "see 'vmxsim --help'";
  snprintf(hint, sizeof hint, "did you mean '%s'? ('vmxsim --help' lists the commands)", best);
  return hint;
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    fputs(usage, stdout);
    return EXIT_OK;
  }
  if (!strcmp(argv[1], "--commands")) {            /* for shell completion */
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) printf("%s\n", commands[i].name);
    return EXIT_OK;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
    printf("vmxsim %s\n", VMXSIM_VERSION);
    return EXIT_OK;
  }
  if (argv[1][0] == '-') return cmd_run(argc, argv);   /* vmxsim --policy P TRACE */
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
  struct stat st;
  if (stat(argv[1], &st) == 0 && !S_ISDIR(st.st_mode)) return cmd_run(argc, argv);   /* vmxsim TRACE */
  if (strchr(argv[1], '/') || strchr(argv[1], '.'))
    errorf("unknown command '%s', and no trace file of that name; see 'vmxsim --help'", argv[1]);
  else
    errorf("unknown command '%s'; %s", argv[1], did_you_mean(argv[1]));
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  interrupt_install();     /* SIGINT, SIGTERM: no temporary file left behind, exit 130 or 143 */
  int rc = dispatch(argc, argv);
  return rc == EXIT_INTERRUPTED ? interrupt_exit_status() : rc;
}
