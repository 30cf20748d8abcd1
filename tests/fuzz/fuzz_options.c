/* libFuzzer harness: the option values several commands share
** (sim/cli/options.c: --vcpu, --interval, --sort, --cpu-ghz, --format,
** --input-format and the bounded counts) and the number parsers beneath them
** (sim/core/util.c parse_u64, parse_double).  Each input line is given to
** every parser as an exact copy; an accepted value must lie in the range the
** option's --help gives, a refused one is a usage error.  A number parse_u64
** takes reads back as its own text (decimal, or 0x hex: never octal). */
#include "fuzz.h"
#include "sim/cli/options.h"
#include "sim/core/trace.h"
#include "sim/core/util.h"
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

static void one_line(const char *s) {
  int vcpu = -1, format, rc;
  struct interval_opt iv;
  enum view_sort sort;
  unsigned u;
  double ghz, d;
  uint64_t v;
  rc = option_vcpu(s, &vcpu);
  check(rc == EXIT_USAGE || (rc == 0 && vcpu >= 0 && vcpu < TRACE_VCPU_MAX), "--vcpu out of range", s);
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_each_line(data, size, one_line);
  return 0;
}
