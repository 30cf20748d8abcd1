/* libFuzzer harness: the option parsers commands run for themselves, beyond
** the shared values of fuzz_options: the generators' command lines
** (workloads/genutil.c gen_parse_args, with one option of every kind, and
** the range checks each generator applies after it; a line that begins with
** "interrupts" or "ipi" goes to that generator whole, workloads/gen_interrupts.c
** or workloads/gen_ipi.c, whose output /dev/null it refuses after its checks), the sweep's
** --shard I/N (sim/sweep/plan_runs.c plan_shard_parse) and `vmxsim cpus`'s
** own arguments (--controls and the CPUs it names, sim/cli/cmd_list.c).  Each input line is
** one command line, split at blanks (a line "--shard X" gives X to the shard
** parser too).  A refusal is a usage error with a message; an accepted line
** sets only values of the option's kind, within the range its check gives. */
#include "fuzz.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/cli/commands.h"
#include "sim/sweep/plan.h"
#include "workloads/genutil.h"
#include "workloads/gen_interrupts.h"
#include "workloads/gen_ipi.h"
#include <math.h>

#define WORDS_MAX 32

static void check(bool ok, const char *what, const char *line) {
  if (ok) return;
  fprintf(stderr, "'%s': %s\n", line, what);
  abort();
}

static void generator_line(char **argv, int argc, const char *line) {
  static const char *const modes[] = { "hvm", "pv", "pti", NULL };
  uint64_t count = 7, iters = 3;
  double ghz = GEN_DEFAULT_GHZ;
  int mode = 0;
  unsigned paging = PAGING_64;
  bool flag = false;
  const char *out = NULL;
  const struct gen_opt opts[] = {
    { "--count", NULL, GO_UINT, &count, NULL, true },
    { "--iters", "-n", GO_UINT, &iters, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &ghz, NULL, false },
    { "--mode", NULL, GO_CHOICE, &mode, modes, false },
    { "--paging", NULL, GO_PAGING, &paging, NULL, false },
    { "--quiet", NULL, GO_FLAG, &flag, NULL, false },
    { 0 },
  };
  char err[256] = "";
  int rc = gen_parse_args(argc, argv, opts, &out, err, sizeof err);
  check(rc == EXIT_OK || rc == EXIT_USAGE, "an exit code other than 0 or 2", line);
  check(rc == EXIT_OK || err[0], "a refusal without a message", line);
  if (rc != EXIT_OK) return;
  check(out && out[0], "accepted without -o FILE", line);
  check(mode >= 0 && mode < 3, "--mode outside its choices", line);
  check(paging_name(paging) != NULL, "--paging not 32, pae or 64", line);
  check(!isnan(ghz) && !isinf(ghz), "--cpu-ghz not finite", line);
  /* the checks a generator runs next: in range, or a message naming the option */
  bool in = gen_check_range(err, sizeof err, "--count", count, 1, 1u << 30);
  check(in == (count >= 1 && count <= 1u << 30) && (in || strstr(err, "--count")), "gen_check_range", line);
  in = gen_check_ghz(err, sizeof err, ghz);
  check(in == (ghz > 0 && ghz <= CLOCK_GHZ_MAX) && (in || strstr(err, "--cpu-ghz")), "gen_check_ghz", line);
  check(gen_check_paging(err, sizeof err, paging), "gen_check_paging refused a parsed mode", line);
}

/* The interrupts and ipi generators' own checks (rates as doubles, modes that
** exclude each other): whatever the values, a usage error with a message,
** never a trace and never a crash.  The line's own output options are left
** out, so the output is always a device, which the generator refuses after
** its checks. */
static void generator_own_checks(char **argv, int argc, const char *line,
                                 int (*run)(int, char **, const char *, char *, size_t)) {
  char *args[WORDS_MAX + 1];
  int n = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) { i++; continue; }
    if (strncmp(argv[i], "--output=", 9) == 0) continue;
    args[n++] = argv[i];
  }
  args[n] = NULL;
  char err[512] = "";
  int rc = run(n, args, "/dev/null", err, sizeof err);
  check(rc == EXIT_USAGE && err[0], "generator: not a usage error with a message", line);
}

static void shard_value(const char *v, const char *line) {
  unsigned shard = ~0u, nshards = 0;
  char err[256] = "";
  int rc = plan_shard_parse(v, &shard, &nshards, err, sizeof err);
  check(rc == EXIT_OK || (rc == EXIT_USAGE && err[0]), "--shard: a refusal without a usage message", line);
  if (rc == EXIT_OK) check(nshards >= 1 && nshards <= PLAN_SHARDS_MAX && shard < nshards, "--shard out of range", line);
}

/* `vmxsim cpus WORDS`: a usage error, bad input (a CPU file that is not a
** profile) or success; a CPU named without --controls (and without --help)
** is refused.  What it lists goes to /dev/null. */
static void cpus_line(char **argv, int argc, const char *line) {
  static bool quiet;
  if (!quiet) quiet = freopen("/dev/null", "w", stdout) != NULL;
  bool controls = false, help = false, named = false;
  for (int i = 1; i < argc; i++) {
    controls |= !strcmp(argv[i], "--controls");
    help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    if (argv[i][0] == '-' && (!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f"))) i++;
    else named |= argv[i][0] != '-';
  }
  argv[0] = "cpus";
  int rc = cmd_cpus(argc, argv);
  check(rc == EXIT_OK || rc == EXIT_USAGE || rc == EXIT_BADINPUT, "cpus: an exit code other than 0, 2 or 3", line);
  check(help || controls || !named || rc == EXIT_USAGE, "cpus: a CPU named without --controls was taken", line);
}

static void one_line(const char *line) {
  char *copy = strdup(line), *argv[WORDS_MAX + 1], *save = NULL;
  if (!copy) abort();
  int argc = 0;
  argv[argc++] = "gen";
  for (char *w = strtok_r(copy, " \t", &save); w && argc < WORDS_MAX; w = strtok_r(NULL, " \t", &save))
    argv[argc++] = w;
  argv[argc] = NULL;
  generator_line(argv, argc, line);
  if (argc > 1 && strcmp(argv[1], "interrupts") == 0) generator_own_checks(argv, argc, line, gen_interrupts_args);
  if (argc > 1 && strcmp(argv[1], "ipi") == 0) generator_own_checks(argv, argc, line, gen_ipi_args);
  shard_value(line, line);
  if (argc == 3 && strcmp(argv[1], "--shard") == 0) shard_value(argv[2], line);
  cpus_line(argv, argc, line);
  free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_each_line(data, size, one_line);
  return 0;
}
