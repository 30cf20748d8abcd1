/* libFuzzer harness: regression case files (sim/regress/regress_case.c, regress_json.c).
**
** A case file is loaded strictly (`vmxsim regress`) and leniently (`regress
** --update`).  A refusal is EXIT_BADINPUT with every line naming the file; a
** loaded case with complete expectations is rewritten as --update would
** rewrite it with those same results, and the rewritten text must load again
** with the same expectations (what --update writes, regress reads). */
#include "fuzz.h"
#include "sim/base/util.h"
#include "sim/regress/regress_case.h"

/* Every line of a refusal names the file (but the last of a message that
** filled the buffer, which is cut). */
static void check_refusal(int rc, const char *err, size_t errlen, const char *path) {
  if (rc != EXIT_BADINPUT) fuzz_check_message(rc, err, path, EXIT_BADINPUT, EXIT_BADINPUT);
  bool full = strlen(err) + 1 >= errlen;
  for (const char *line = err; *line;) {
    const char *nl = strchr(line, '\n');
    if (nl || !full) fuzz_check_message(rc, line, path, EXIT_BADINPUT, EXIT_BADINPUT);
    line = nl ? nl + 1 : line + strlen(line);
  }
}

static bool complete(const struct regress_values *v) {
  return v->has_exits && v->has_counters && v->has_events && v->has_total_exits && v->has_cycles;
}

/* What --update writes from the case's own expectations reads back as them. */
static void check_update(struct regress_case *c) {
  char *text, err[2048] = "";
  struct regress_values act = c->expect;
  if (regress_case_update(c, &act, &text, err, sizeof err) != 0) return;   /* a value JSON cannot hold */
  const char *path = fuzz_file((const uint8_t *)text, strlen(text), "updated.json");
  struct regress_case d;
  int rc = regress_case_load(&d, path, false, err, sizeof err);
  struct regress_diff *diffs = NULL;
  size_t n = rc == 0 ? regress_compare(&act, &d.expect, 0, true, &diffs) : 0;
  if (rc != 0 || n != 0) {
    fprintf(stderr, "the updated case does not read back (%d, %zu differences): %s\n%s\n", rc, n, err, text);
    abort();
  }
  free(diffs);
  regress_case_free(&d);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_names_special_files(data, size)) return 0;
  const char *path = fuzz_file(data, size, "case.json");
  for (int lenient = 0; lenient <= 1; lenient++) {
    struct regress_case c;
    char err[4096] = "";
    int rc = regress_case_load(&c, path, lenient, err, sizeof err);
    if (rc != 0) check_refusal(rc, err, sizeof err, path);
    else if (c.has_expect && complete(&c.expect)) check_update(&c);
    regress_case_free(&c);
  }
  return 0;
}
