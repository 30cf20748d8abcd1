/* libFuzzer harness: the option values several commands share
** (sim/cli/options.c: --vcpu, --interval, --sort, --cpu-ghz, --format,
** --input-format and the bounded counts), the number parsers beneath them
** (sim/base/util.c parse_u64, parse_double), and the comma-separated lists
** of --policy and --cpu (option_list_next; `run`'s, sim/cli/cmd_run.c, and
** `compare`'s and `runs`', sim/cli/db_query.c).  Each input line is given to
** every parser as an exact copy; an accepted value must lie in the range the
** option's --help gives, a refused one is a usage error.  A number parse_u64
** takes reads back as its own text (decimal, or 0x hex: never octal); a list
** accepted has no empty item, and compare's policies are each named once, by
** the name their runs are stored under. */
#include "fuzz.h"
#include "sim/cli/commands.h"
#include "sim/cli/db_query.h"
#include "sim/cli/options.h"
#include "sim/config/policy.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include <ctype.h>
#include <math.h>
#include <strings.h>

static void check(bool ok, const char *what, const char *line) {
  if (ok) return;
  fprintf(stderr, "'%s': %s\n", line, what);
  abort();
}

/* v printed back as s spells it: decimal without a leading 0, or 0x and hex
** digits of either case, leading zeros allowed. */
static bool reads_back(const char *s, uint64_t v) {
  char buf[24];
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    const char *d = s + 2;
    while (d[0] == '0' && d[1]) d++;
    snprintf(buf, sizeof buf, "%llx", (unsigned long long)v);
    return strlen(d) == strlen(buf) && !strncasecmp(d, buf, strlen(buf));
  }
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  return !strcmp(s, buf);
}

static void check_u64(const char *s) {
  uint64_t v = 0;
  bool ok = parse_u64(s, &v);
  check(!ok || reads_back(s, v), "parse_u64 took a number that does not read back as its text", s);
  bool octal_like = s[0] == '0' && isdigit((unsigned char)s[1]) && strspn(s, "0123456789") == strlen(s);
  check(!*parse_u64_hint(s) || (!ok && octal_like), "parse_u64_hint for a number that is no decimal with a leading 0", s);
  check(ok || !octal_like || *parse_u64_hint(s), "a leading 0 refused without saying why", s);
}

/* The items of s, put back together with commas, are s. */
static void check_list(const char *s) {
  char *copy = strdup(s), *joined = calloc(strlen(s) + 2, 1);
  if (!copy || !joined) abort();
  bool first = true, empty = false;
  for (char *t, *rest = copy; (t = option_list_next(&rest)); first = false) {
    if (!first) strcat(joined, ",");
    strcat(joined, t);
    empty |= !*t;
    check((option_list_empty("--cpu", s, t) == EXIT_USAGE) == !*t, "option_list_empty on a non-empty item", s);
  }
  check(!strcmp(joined, s), "the items of a list are not the list", s);
  check(empty == (!*s || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,")), "an empty item missed", s);
  free(copy);
  free(joined);
}

/* `run --policy s`, `run --cpu s` (of a trace that is not there: the lists
** are split first; only for a line that is a list, as cmd_run's set-up is
** most of the harness's time) and `compare --policy s`. */
static void check_commands(const char *s) {
  bool has_empty = !*s || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,");
  int rc;
  if (!*s || strchr(s, ',')) {
    char *run_policy[] = { "run", "-q", "--no-db", "--policy", (char *)s, "no/such/trace.bin", NULL };
    rc = cmd_run(6, run_policy);
    check(rc == EXIT_USAGE || (rc == EXIT_BADINPUT && !has_empty), "run --policy: an empty item not refused", s);
    char *run_cpu[] = { "run", "-q", "--no-db", "--cpu", (char *)s, "no/such/trace.bin", NULL };
    rc = cmd_run(6, run_cpu);
    check(rc == EXIT_USAGE || (rc == EXIT_BADINPUT && !has_empty), "run --cpu: an empty item not refused", s);
  }
  char *compare[] = { "compare", "--policy", (char *)s, NULL }, *none[1];
  struct db_opts o;
  unsigned n = 0;
  rc = cli_parse_db_opts(3, compare, "", "DftpcRM", &o, none, 0, &n);
  check(rc == 0 || rc == EXIT_USAGE, "compare --policy: an exit code other than 0 or 2", s);
  check(rc || !has_empty, "compare --policy: an empty item not refused", s);
  for (unsigned i = 0; i < o.npolicy && !rc; i++) {
    for (unsigned k = 0; k < i; k++) check(strcmp(o.policy[k], o.policy[i]) != 0, "compare: a policy named twice", s);
    /* a stored name is its own name: split again at the commas, it names itself */
    char *copy = strdup(o.policy[i]), *sets[COMPARE_MAX_RUNS], *rest = copy, name[sizeof ((struct policy *)0)->name], err[1536];
    if (!copy) abort();
    const char *spec = option_list_next(&rest);
    int nsets = 0;
    for (char *t; nsets < COMPARE_MAX_RUNS && (t = option_list_next(&rest));) sets[nsets++] = t;
    check(strlen(o.policy[i]) == sizeof name - 1 ||
          (!policy_name(spec, sets, nsets, name, sizeof name, err, sizeof err) && !strcmp(name, o.policy[i])),
          "compare: a policy's name is not its own name", s);
    free(copy);
  }
  cli_free_db_opts(&o);
}

static void one_line(const char *s) {
  int vcpu = -1, format, rc;
  struct interval_opt iv;
  enum view_sort sort;
  unsigned u;
  double ghz, d;
  uint64_t v;
  rc = option_vcpu(s, &vcpu);
  check(rc == EXIT_USAGE || (rc == 0 && vcpu >= 0 && vcpu < TRACE_VCPU_MAX), "--vcpu out of range", s);
  int domain = -1;
  rc = option_domain(s, &domain);
  check(rc == EXIT_USAGE || (rc == 0 && domain >= 0 && domain <= 65535), "--domain out of 0..65535", s);
  rc = option_interval(s, &iv);
  check(rc == EXIT_USAGE || (rc == 0 && iv.n > 0 && (iv.events || (iv.us >= 1 && iv.us <= INTERVAL_US_MAX))),
        "--interval not positive, or above 10^12 us", s);
  rc = option_sort(s, &sort);
  check(rc == EXIT_USAGE || rc == 0, "--sort", s);
  rc = option_unsigned("--n", s, &u);
  check(rc == EXIT_USAGE || (rc == 0 && u <= 1000000), "a count above 1000000", s);
  rc = option_ghz(s, &ghz);
  check(rc == EXIT_USAGE || (rc == 0 && isfinite(ghz) && ghz > 0 && ghz <= CLOCK_GHZ_MAX), "--cpu-ghz out of range", s);
  rc = option_format(s, &format);
  check(rc == EXIT_USAGE || (rc == 0 && format >= 0), "--format", s);
  rc = option_input_format(s);
  check(rc == EXIT_USAGE || rc == 0, "--input-format", s);
  if (parse_double(s, &d)) check(!isnan(d), "parse_double gave NaN", s);
  (void)parse_u64(s, &v);
  check_u64(s);
  check_list(s);
  check_commands(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_each_line(data, size, one_line);
  return 0;
}
