/* Unit tests for the huge-page arenas (sim/base/hugemem.h): pieces are
** zeroed, aligned, apart and writable to their ends, from a first small
** chunk through huge ones and a piece larger than a chunk; the arena is
** freed whole and can be used again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/hugemem.h"

#define PIECES 64

static void pieces_are_zeroed_aligned_and_apart(void **state) {
  (void)state;
  struct huge_arena a = { 0 };
  /* sizes from a few bytes to past a chunk, so that small, huge and own chunks all serve */
  static const size_t sizes[] = { 1, 24, 100, 4096, 80 << 10, 200 << 10, 1 << 20, 3 << 20, 7 };
  unsigned char *p[PIECES];
  size_t n[PIECES];
  unsigned k = 0, zero = 0, aligned = 0;
  for (unsigned r = 0; r < 4; r++)
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes && k < PIECES; i++, k++) {
      n[k] = sizes[i];
      p[k] = huge_alloc(&a, n[k]);
      bool z = true;
      for (size_t j = 0; j < n[k]; j += 509) z = z && p[k][j] == 0;
      zero += z && p[k][n[k] - 1] == 0;
      aligned += ((uintptr_t)p[k] & 15) == 0;
      memset(p[k], (int)(k + 1), n[k]);       /* writable to its end */
    }
  unsigned intact = 0;
  for (unsigned i = 0; i < k; i++)             /* no piece overlaps another: each kept its bytes */
    intact += p[i][0] == (unsigned char)(i + 1) && p[i][n[i] - 1] == (unsigned char)(i + 1);
  printf("  %u pieces: zeroed %u, 16-byte aligned %u, intact after all were written %u (expected %u each)\n",
         k, zero, aligned, intact, k);
  assert_int_equal(zero, k);
  assert_int_equal(aligned, k);
  assert_int_equal(intact, k);
  huge_arena_free(&a);
  assert_null(a.chunks);
  unsigned char *again = huge_alloc(&a, 10);    /* a freed arena is an empty one */
  assert_int_equal(again[9], 0);
  huge_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(pieces_are_zeroed_aligned_and_apart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
