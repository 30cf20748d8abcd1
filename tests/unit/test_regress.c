/* Regression cases (sim/regress/regress_case.c, regress_json.c): canonical JSON, loading and its
** errors, comparison of expectations with results, and --update texts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/util.h"
#include "sim/regress/regress_case.h"

static char err[4096];
static char path[64];

static void assert_contains(const char *haystack, const char *needle) {
  if (!strstr(haystack, needle)) fail_msg("expected \"%s\" in: \"%s\"", needle, haystack);
}

/* Writes text to a fresh temporary case file (path). */
static void write_case(const char *text) {
  snprintf(path, sizeof path, "/tmp/vmxsim-test-regress-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

static bool load(struct regress_case *c, const char *text, bool lenient) {
  write_case(text);
  err[0] = 0;
  bool ok = regress_case_load(c, path, lenient, err, sizeof err) == EXIT_OK;
  unlink(path);
  return ok;
}

/* The message of a case that must not load, without the "FILE" prefix. */
static const char *load_error(const char *text) {
  struct regress_case c;
  if (load(&c, text, false)) fail_msg("case loaded, expected an error: %s", text);
  regress_case_free(&c);
  size_t n = strlen(path);
  if (strncmp(err, path, n) != 0) fail_msg("message does not start with the file name: %s", err);
  return err + n;
}

/* A case file holding bytes the C strings above cannot: NUL bytes. */
static const char *load_error_bytes(const char *bytes, size_t n) {
  struct regress_case c;
  snprintf(path, sizeof path, "/tmp/vmxsim-test-regress-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, bytes, n), (ssize_t)n);
  close(fd);
  err[0] = 0;
  bool ok = regress_case_load(&c, path, false, err, sizeof err) == EXIT_OK;
  unlink(path);
  regress_case_free(&c);
  if (ok) fail_msg("case with a NUL byte loaded, expected an error");
  size_t k = strlen(path);
  if (strncmp(err, path, k) != 0) fail_msg("message does not start with the file name: %s", err);
  return err + k;
}

static void load_refuses_nul_bytes(void **state) {
  (void)state;
  static const char tail[] = "{\"generate\": [\"lat_ctx\"], \"policy\": \"ept\"}\0{\"policy\": 1}";
  assert_string_equal(load_error_bytes(tail, sizeof tail - 1),
                      ": byte 42: NUL byte (a case file is JSON text in UTF-8; saved as UTF-16?)");
  static const char utf16[] = "{\0\"\0p\0";
  assert_string_equal(load_error_bytes(utf16, sizeof utf16 - 1),
                      ": byte 1: NUL byte (a case file is JSON text in UTF-8; saved as UTF-16?)");
}

/* A case file that must be refused: its message (in err), printed. */
static void refused(const char *text) {
  struct regress_case c;
  assert_false(load(&c, text, false));
  regress_case_free(&c);
  printf("message: %s\n", err);
}

/* A key with an escaped newline (a fuzz input) is quoted on its own line:
** every line of the message names the file. */
static void load_error_quotes_control_characters(void **state) {
  (void)state;
  refused("{\"generate\": [\"lat_ctx\"], \"policy\": \"ept\", \"x\\ny\\u0001\": 1}");
  assert_null(strchr(err, '\n'));
  assert_non_null(strstr(err, "unknown key 'x?y?'"));
}

/* A number that overflows a double (a fuzz input: 4793.e007199 in "generate")
** is refused where it is: --update could not write it back as JSON. */
static void load_refuses_numbers_too_large_for_a_double(void **state) {
  (void)state;
  refused("{\"generate\": [\"cr4toggle\", \"--count\", 4793.e007199],\n \"policy\": \"ept\"}");
  assert_non_null(strstr(err, ":1: 'generate': a number too large for a double"));
  refused("{\"policy\": \"ept\", \"generate\": [\"lat_ctx\"], \"cycles_tolerance\": -1e400}");
  assert_non_null(strstr(err, "'cycles_tolerance': a number too large for a double"));
}

static void canonical_sorts_and_indents(void **state) {
  (void)state;
  cJSON *j = cJSON_Parse("{\"b\": {\"y\": 2, \"x\": [1, \"two\", true, null]}, \"a\": 0.001, \"c\": [],"
                         " \"d\": {}, \"e\": [{\"k\": 1}], \"f\": \"q\\\"\\\\\\n\\u0001\", \"g\": 9007199254740991,"
                         " \"h\": -3, \"i\": 1e-05, \"j\": 2.5, \"k\": 9007199254740993}");
  assert_non_null(j);
  char *s = json_canonical(j);
  assert_string_equal(s,
    "{\n"
    "  \"a\": 0.001,\n"
    "  \"b\": {\n"
    "    \"x\": [1, \"two\", true, null],\n"
    "    \"y\": 2\n"
    "  },\n"
    "  \"c\": [],\n"
    "  \"d\": {},\n"
    "  \"e\": [\n"
    "    {\n"
    "      \"k\": 1\n"
    "    }\n"
    "  ],\n"
    "  \"f\": \"q\\\"\\\\\\n\\u0001\",\n"
    "  \"g\": 9007199254740991,\n"
    "  \"h\": -3,\n"
    "  \"i\": 1e-05,\n"
    "  \"j\": 2.5,\n"
    "  \"k\": 9007199254740992\n"
    "}\n");
  /* canonical text parses back to the same canonical text */
  cJSON *k = cJSON_Parse(s);
  char *t = json_canonical(k);
  assert_string_equal(s, t);
  free(s);
  free(t);
  cJSON_Delete(j);
  cJSON_Delete(k);
}

static void load_resolves_paths(void **state) {
  (void)state;
  struct regress_case c;
  assert_true(load(&c, "{\"trace\": \"t.bin\", \"policy\": \"shadowcache+my/p.json+lazydr\", \"cpu\": \"c.json\","
                       " \"set\": {\"vpid\": true, \"shadow_pages_max\": 64, \"dr_switch\": \"lazy\"},"
                       " \"cycles_tolerance\": 0.01}", false));
  assert_string_equal(c.trace, "/tmp/t.bin");
  assert_string_equal(c.policy, "shadowcache+/tmp/my/p.json+lazydr");
  assert_string_equal(c.cpu, "/tmp/c.json");
  assert_int_equal(c.nsets, 3);
  assert_string_equal(c.sets[0], "vpid=true");
  assert_string_equal(c.sets[1], "shadow_pages_max=64");
  assert_string_equal(c.sets[2], "dr_switch=lazy");
  assert_true(c.cycles_tolerance == 0.01);
  assert_false(c.has_expect);
  regress_case_free(&c);

  assert_true(load(&c, "{\"generate\": [\"lat_ctx\", \"--procs\", 2, \"--iters\", \"5\"], \"policy\": \"ept\"}", false));
  assert_null(c.trace);
  assert_null(c.cpu);
  assert_int_equal(c.ngen, 5);
  assert_string_equal(c.gen[0], "lat_ctx");
  assert_string_equal(c.gen[2], "2");
  assert_null(c.gen[5]);
  regress_case_free(&c);
}

static void load_expectations(void **state) {
  (void)state;
  struct regress_case c;
  assert_true(load(&c, "{\"trace\": \"t.bin\", \"policy\": \"ept\", \"expect\": {\"exits\": {\"CR_ACCESS\": 3,"
                       " \"cr3 write\": 2, \"dr7 read\": 1}, \"counters\": {\"root_hits\": 7}, \"cycles\": 1000}}", false));
  assert_true(c.has_expect);
  assert_true(c.expect.has_exits && c.expect.has_counters && c.expect.has_cycles);
  assert_false(c.expect.has_events || c.expect.has_total_exits);
  assert_int_equal(c.expect.exits[EXIT_REASON_CR_ACCESS], 3);
  assert_int_equal(c.expect.exits[stat_key_by_name("cr3 write")], 2);
  assert_int_equal(c.expect.exits[stat_key_by_name("dr7 read")], 1);
  assert_int_equal(c.expect.counters[CTR_ROOT_HITS], 7);
  assert_int_equal(c.expect.cycles, 1000);
  regress_case_free(&c);

  /* lenient (--update): unknown names are dropped and listed */
  assert_true(load(&c, "{\"trace\": \"t.bin\", \"policy\": \"ept\", \"expect\": {\"exits\": {\"OLD_REASON\": 3},"
                       " \"counters\": {\"gone\": 1, \"marks\": -1}, \"extra\": 1}}", true));
  assert_string_equal(c.dropped, "expect.exits.OLD_REASON, expect.counters.gone, expect.counters.marks, expect.extra");
  regress_case_free(&c);
}

static void load_errors(void **state) {
  (void)state;
  assert_string_equal(load_error("{\n  \"policy\": \"ept\"\n  \"trace\": \"t.bin\"\n}\n"),
                      ":3:3: invalid JSON near '\"trace\": \"t.bin\"'");
  assert_string_equal(load_error("{\"policy\": \n"),
                      ":1:11: invalid JSON: unexpected end of file (an object, array or string is not closed)");
  assert_string_equal(load_error("  \n"), ": empty file (expected a JSON object)");
  assert_string_equal(load_error("\"x\""), ": expected a JSON object at the top level");
  assert_string_equal(load_error("{\"trace\": \"t\",\n \"policy\": \"ept\",\n \"polic\": 1}"),
                      ":3: unknown key 'polic' (expected cpu, cycles_tolerance, description, expect, generate, "
                      "policy, set, trace)");
  assert_contains(load_error("{\"trace\": \"t\"}"), ": missing \"policy\" (a preset such as \"shadowcache\"");
  assert_contains(load_error("{\"policy\": \"ept\"}"), ": missing \"trace\"");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": 3}"), ":1: \"trace\" must be a file name");
  assert_contains(load_error("{\"policy\": \"\", \"trace\": \"t\"}"), ":1: \"policy\" must be a non-empty string");
  assert_contains(load_error("{\"policy\": \"ept\", \"generate\": []}"), ":1: \"generate\" must be a non-empty array");
  assert_contains(load_error("{\"policy\": \"ept\", \"generate\": [\"--procs\", \"2\"]}"),
                  "the first element must be the workload");
  assert_contains(load_error("{\"policy\": \"ept\", \"generate\": [\"lat_ctx\", \"--help\"]}"),
                  "--help is not a generator parameter");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"set\": {\"vpid\": [1]}}"),
                  ":1: set.vpid: value must be a boolean, a non-negative integer or a string");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"cycles_tolerance\": 2}"),
                  "\"cycles_tolerance\" must be a number from 0 to 1");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"expect\": []}"), "\"expect\" must be an object");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"expect\": {\"cycles\": 1.5}}"),
                  "expect.cycles: expected a non-negative integer");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"expect\": {\"exits\": {\"HLT\": \"1\"}}}"),
                  "expect.exits.HLT: expected a non-negative integer");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"expect\": {\"counters\": {\"nope\": 1}}}"),
                  "expect.counters: unknown counter 'nope' (known: marks, vmreads,");
  assert_contains(load_error("{\"policy\": \"ept\", \"trace\": \"t\", \"set\": {\"a\": 1, \"a\": 2}}"),
                  ":1: duplicate key 'a'");

  struct regress_case c;
  assert_int_equal(regress_case_load(&c, "/nonexistent/case.json", false, err, sizeof err), EXIT_BADINPUT);
  assert_string_equal(err, "/nonexistent/case.json: No such file or directory");
  regress_case_free(&c);
}

static void compare_checks_sections_completely(void **state) {
  (void)state;
  static struct regress_values exp, act;
  memset(&exp, 0, sizeof exp);
  memset(&act, 0, sizeof act);
  act.has_exits = act.has_counters = act.has_events = act.has_total_exits = act.has_cycles = true;
  act.exits[EXIT_REASON_CR_ACCESS] = 4;
  act.exits[stat_key_by_name("cr3 write")] = 4;
  act.exits[EXIT_REASON_HLT] = 1;
  act.counters[CTR_ROOT_HITS] = 3;
  act.events = 100;
  act.total_exits = 5;
  act.cycles = 10000;

  struct regress_diff *d;
  /* nothing expected: nothing checked */
  assert_int_equal(regress_compare(&exp, &act, 0, false, &d), 0);
  free(d);

  exp = act;
  exp.exits[EXIT_REASON_HLT] = 0;                 /* listed as absent: expected 0 */
  exp.exits[stat_key_by_name("cr3 write")] = 3;
  exp.counters[CTR_ROOT_HITS] = 5;
  exp.cycles = 10005;                             /* +0.05% */
  size_t n = regress_compare(&exp, &act, 0.001, false, &d);
  assert_int_equal(n, 3);
  /* report order: reasons by number with their breakdown rows, then counters */
  assert_int_equal(d[0].kind, DIFF_EXIT);
  assert_string_equal(regress_diff_name(&d[0]), "HLT");          /* reason 12 */
  assert_int_equal(d[0].expected, 0);
  assert_string_equal(regress_diff_name(&d[1]), "cr3 write");    /* under CR_ACCESS, 28 */
  assert_int_equal(d[1].expected, 3);
  assert_int_equal(d[1].actual, 4);
  assert_string_equal(regress_diff_section(&d[2]), "counters");
  assert_string_equal(regress_diff_name(&d[2]), "root_hits");
  free(d);

  exp.cycles = 10020;                             /* -0.2% off: beyond 0.1% */
  n = regress_compare(&exp, &act, 0.001, false, &d);
  assert_int_equal(n, 4);
  assert_int_equal(d[3].kind, DIFF_CYCLES);
  free(d);
  n = regress_compare(&exp, &act, 0.01, false, &d);
  assert_int_equal(n, 3);
  free(d);

  /* changes (--update): every changed value, and new values of absent sections */
  exp.has_counters = false;
  exp.cycles = 10005;
  n = regress_compare(&exp, &act, 0.5, true, &d);
  assert_int_equal(n, 4);
  assert_int_equal(d[2].kind, DIFF_COUNTER);
  assert_true(d[2].absent);
  assert_int_equal(d[3].kind, DIFF_CYCLES);
  free(d);
}

static void update_round_trips(void **state) {
  (void)state;
  struct regress_case c;
  const char *text = "{\"trace\": \"t.bin\", \"policy\": \"ept\", \"description\": \"x\", \"cycles_tolerance\": 0.001,"
                     " \"expect\": {\"exits\": {\"HLT\": 1}}}";
  assert_true(load(&c, text, true));
  static struct regress_values act;
  memset(&act, 0, sizeof act);
  act.exits[EXIT_REASON_CPUID] = 2;
  act.counters[CTR_MARKS] = 1;
  act.events = 10;
  act.total_exits = 2;
  act.cycles = 12345;
  char *s;
  assert_int_equal(regress_case_update(&c, &act, &s, err, sizeof err), EXIT_OK);
  assert_non_null(s);
  assert_contains(s, "{\n  \"cycles_tolerance\": 0.001,\n  \"description\": \"x\",\n  \"expect\": {\n"
                     "    \"counters\": {\n      \"cr3_cache_clears\": 0,");
  assert_contains(s, "    \"cycles\": 12345,\n    \"events\": 10,\n    \"exits\": {\n      \"CPUID\": 2\n    },\n"
                     "    \"total_exits\": 2\n  },\n  \"policy\": \"ept\",\n  \"trace\": \"t.bin\"\n}\n");
  regress_case_free(&c);

  /* the written text loads back to the same expectations and updates to itself */
  assert_true(load(&c, s, false));
  assert_int_equal(c.expect.exits[EXIT_REASON_CPUID], 2);
  assert_int_equal(c.expect.exits[EXIT_REASON_HLT], 0);
  assert_int_equal(c.expect.cycles, 12345);
  struct regress_diff *d;
  act.has_exits = act.has_counters = act.has_events = act.has_total_exits = act.has_cycles = true;
  assert_int_equal(regress_compare(&c.expect, &act, 0, true, &d), 0);
  free(d);
  char *s2;
  assert_int_equal(regress_case_update(&c, &act, &s2, err, sizeof err), EXIT_OK);
  assert_string_equal(s, s2);
  free(s2);
  regress_case_free(&c);

  /* values a JSON number cannot hold exactly are refused */
  assert_true(load(&c, s, false));
  act.cycles = (1ull << 53) + 1;
  char *s3;
  assert_int_equal(regress_case_update(&c, &act, &s3, err, sizeof err), EXIT_BADINPUT);
  assert_null(s3);
  assert_contains(err, "cycles = 9007199254740993 is too large for a JSON number to hold exactly");
  regress_case_free(&c);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(canonical_sorts_and_indents),
    cmocka_unit_test(load_resolves_paths),
    cmocka_unit_test(load_expectations),
    cmocka_unit_test(load_errors),
    cmocka_unit_test(load_refuses_nul_bytes),
    cmocka_unit_test(load_error_quotes_control_characters),
    cmocka_unit_test(load_refuses_numbers_too_large_for_a_double),
    cmocka_unit_test(compare_checks_sections_completely),
    cmocka_unit_test(update_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
