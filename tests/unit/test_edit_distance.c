/* Unit tests for edit_distance (sim/base/util.c): the "did you mean" hints' measure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "sim/base/util.h"

static void expect(const char *a, const char *b, unsigned limit, unsigned want) {
  unsigned got = edit_distance(a, b, limit);
  if (got != want) print_message("edit_distance(\"%s\", \"%s\", %u) = %u, expected %u\n", a, b, limit, got, want);
  assert_int_equal(got, want);
}

static void counts_insertions_deletions_substitutions_and_swaps(void **state) {
  (void)state;
  expect("summary", "summary", 2, 0);
  expect("summry", "summary", 2, 1);          /* a deletion */
  expect("summaryy", "summary", 2, 1);        /* an insertion */
  expect("summery", "summary", 2, 1);         /* a substitution */
  expect("comapre", "compare", 2, 1);         /* two neighbours swapped: one edit */
  expect("", "run", 3, 3);
  expect("run", "", 3, 3);
}

static void is_limit_plus_one_above_the_limit(void **state) {
  (void)state;
  expect("xyzzy", "summary", 2, 3);
  expect("a", "abcdef", 2, 3);                /* the lengths alone say so */
  char long_name[100];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = 0;
  expect(long_name, long_name, 2, 3);         /* past 64 characters: never a hint */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(counts_insertions_deletions_substitutions_and_swaps),
    cmocka_unit_test(is_limit_plus_one_above_the_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
