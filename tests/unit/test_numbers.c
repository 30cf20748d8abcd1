/* Unit tests for num_shortest (sim/base/util.h): the shortest decimal text that
** reads back as the same double, whole numbers without an exponent; and for
** parse_u64: decimal or 0x hex, never octal. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/util.h"

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

/* parse_u64 read "010" as octal 8 (strtoull with base 0) although it says
** "decimal or 0x hex", so --set shadow_pages_max=010 gave a pool of 8 pages. */
static void parse_u64_takes_decimal_or_0x_hex(void **state) {
  (void)state;
  static const struct { const char *text; uint64_t v; } taken[] = {
    { "0", 0 }, { "8", 8 }, { "10", 10 }, { "18446744073709551615", UINT64_MAX },
    { "0x10", 16 }, { "0X10", 16 }, { "0x00F0", 0xf0 }, { "0x0", 0 }, { "0xffffffffffffffff", UINT64_MAX },
  };
  for (size_t i = 0; i < sizeof taken / sizeof *taken; i++) {
    uint64_t v = 1234;
    bool ok = parse_u64(taken[i].text, &v);
    printf("parse_u64(\"%s\"): %s %llu (expected %llu)\n", taken[i].text, ok ? "accepted" : "refused",
           (unsigned long long)v, (unsigned long long)taken[i].v);
    assert_true(ok);
    assert_true(v == taken[i].v);
    assert_string_equal(parse_u64_hint(taken[i].text), "");
  }
}

static void parse_u64_refuses_a_leading_zero_and_says_why(void **state) {
  (void)state;
  static const char *const octal[] = { "010", "00", "0777", "08", "0018446744073709551615" };
  for (size_t i = 0; i < sizeof octal / sizeof *octal; i++) {
    uint64_t v = 1234;
    bool ok = parse_u64(octal[i], &v);
    printf("parse_u64(\"%s\"): %s %llu (expected refused)\n", octal[i], ok ? "accepted" : "refused",
           (unsigned long long)v);
    assert_false(ok);
    assert_true(v == 1234);
    assert_non_null(strstr(parse_u64_hint(octal[i]), "C would read it as octal"));
  }
}

/* strtoull skips blanks and takes a sign: "\t5" and "0x-5" were accepted. */
static void parse_u64_refuses_signs_blanks_junk_and_overflow(void **state) {
  (void)state;
  static const char *const refused[] = { "", "-1", "+1", " 1", "\t5", "\n5", "1 ", "0x", "0x-5", "0x 5", "0x+5",
                                         "0xg", "1e3", "5x", "18446744073709551616", "0x10000000000000000", "0b1" };
  uint64_t v = 1234;
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    bool ok = parse_u64(refused[i], &v);
    printf("parse_u64(\"%s\"): %s (expected refused)\n", refused[i], ok ? "accepted" : "refused");
    assert_false(ok);
    assert_string_equal(parse_u64_hint(refused[i]), "");   /* the text says why */
  }
  assert_false(parse_u64(NULL, &v));
  assert_true(v == 1234);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(shortest_reads_back_the_same_double),
    cmocka_unit_test(whole_numbers_have_no_exponent),
    cmocka_unit_test(nan_and_infinity),
    cmocka_unit_test(parse_double_takes_only_finite_numbers),
    cmocka_unit_test(parse_u64_takes_decimal_or_0x_hex),
    cmocka_unit_test(parse_u64_refuses_a_leading_zero_and_says_why),
    cmocka_unit_test(parse_u64_refuses_signs_blanks_junk_and_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
