/* Unit tests for num_shortest (sim/core/util.h): the shortest decimal text that
** reads back as the same double, whole numbers without an exponent. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/util.h"

static void shortest_reads_back_the_same_double(void **state) {
  (void)state;
  static const struct { double v; const char *text; } cases[] = {
    { 9.9223610937500002, "9.92236109375" },   /* %.17g writes 9.9223610937500002 */
    { 0.1, "0.1" },
    { 1.0 / 3, "0.3333333333333333" },
    { 10.0 / 3, "3.3333333333333335" },       /* 17 digits only where 16 do not read back */
    { 2.4, "2.4" },
    { 0, "0" },
    { -0.5, "-0.5" },
  };
  char buf[NUM_TEXT_MAX];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    assert_string_equal(num_shortest(buf, cases[i].v), cases[i].text);
    assert_true(strtod(buf, NULL) == cases[i].v);
  }
}

static void whole_numbers_have_no_exponent(void **state) {
  (void)state;
  char buf[NUM_TEXT_MAX];
  assert_string_equal(num_shortest(buf, 10), "10");
  assert_string_equal(num_shortest(buf, 1200), "1200");
  assert_string_equal(num_shortest(buf, -100), "-100");
  assert_string_equal(num_shortest(buf, 1e16), "10000000000000000");
  assert_string_equal(num_shortest(buf, 1e20), "1e+20");    /* beyond 1e17: the exponent is shorter and exact */
  assert_string_equal(num_shortest(buf, 1e-7), "1e-07");
}

static void nan_and_infinity(void **state) {
  (void)state;
  char buf[NUM_TEXT_MAX];
  assert_string_equal(num_shortest(buf, NAN), "nan");
  assert_string_equal(num_shortest(buf, INFINITY), "inf");
  assert_string_equal(num_shortest(buf, -INFINITY), "-inf");
}

/* A fuzz input: "nan" parsed as a number; every option that takes one then
** relied on its own range check to refuse it. */
static void parse_double_takes_only_finite_numbers(void **state) {
  (void)state;
  static const char *const refused[] = { "nan", "-nan", "NaN", "inf", "-inf", "infinity", "1e400", "", "2.4x" };
  double d = 0;
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    bool ok = parse_double(refused[i], &d);
    printf("parse_double(\"%s\"): %s (expected refused)\n", refused[i], ok ? "accepted" : "refused");
    assert_false(ok);
  }
  assert_true(parse_double("2.4", &d));
  assert_true(d == 2.4);
  assert_true(parse_double("0x1p3", &d));
  assert_true(d == 8.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(shortest_reads_back_the_same_double),
    cmocka_unit_test(whole_numbers_have_no_exponent),
    cmocka_unit_test(nan_and_infinity),
    cmocka_unit_test(parse_double_takes_only_finite_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
