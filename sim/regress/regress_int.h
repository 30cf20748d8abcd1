/* What regress.c (the command) and regress_out.c (its output) share: a case's
** result, and the table line, JSON and JUnit forms of the results. */
#ifndef VMXSIM_REGRESS_INT_H
#define VMXSIM_REGRESS_INT_H

#include "regress_case.h"
#include "sim/base/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum status { ST_PASS, ST_FAIL, ST_ERROR, ST_UNCHANGED, ST_UPDATED, ST_RECORDED };

struct result {
  char *file;
  enum status status;
  char *error;                  /* ST_ERROR */
  struct regress_diff *diffs;
  size_t ndiffs;
  double tolerance;
  char *policy, *cpu, *source;  /* as resolved, for the JSON output */
  double seconds;
  char *dropped;                /* update: expectation names dropped */
};

/* What a case's table line says beside its status. */
struct result_extra {
  bool cycles_checked;
  uint64_t cycles_expected, cycles_actual;
};

/* Small helpers of both: a formatted string (freed by the caller); does s end with suf? */
char *regress_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool regress_has_suffix(const char *s, const char *suf);

/* A case's line (and, when it failed or changed, its differences) appended to b;
** nothing for a passing case when quiet. */
void regress_table_line(struct strbuf *b, const struct result *r, const struct result_extra *x, bool quiet);
/* The results as one JSON document / JUnit XML; count[] is by enum status.  The caller frees. */
char *regress_results_json(const struct result *rs, size_t n, const unsigned *count, double secs);
char *regress_junit_xml(const struct result *rs, size_t n, const unsigned *count, double secs);

#endif
