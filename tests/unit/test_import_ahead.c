/* Unit tests for the read-ahead thread (sim/import/import_ahead.h): the chunks
** come in order, whole, with their room before them writable, for files that
** end inside a chunk, on a chunk's end, or within the first; a file that got
** shorter than said is a read error; stopping early is clean. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/import/import_ahead.h"

static int file_of(size_t n, unsigned char **bytes) {
  char path[] = "/tmp/vmxsim-test-ahead-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  *bytes = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) (*bytes)[i] = (unsigned char)(i * 131 + i / 977);
  assert_int_equal(write(fd, *bytes, n), (ssize_t)n);
  return fd;
}

/* Reads a file of n bytes in chunks of `chunk`, writing into each chunk's room
** as the lean pass does; true when every byte came, in order. */
static bool read_back(size_t n, size_t chunk, size_t room) {
  unsigned char *want;
  int fd = file_of(n, &want);
  struct ahead *a = ahead_start(fd, n, chunk, room);
  assert_non_null(a);
  unsigned char *got = malloc(n ? n : 1), *p;
  size_t at = 0, chunks = 0;
  bool ok = true;
  for (ssize_t len; (len = ahead_take(a, &p)) > 0; chunks++) {
    memset(p - room, 0xaa, room);                /* the room is the reader's to write */
    ok = ok && at + (size_t)len <= n;
    if (ok) memcpy(got + at, p, (size_t)len);
    at += (size_t)len;
    if (chunks) ahead_release(a);                /* the chunk before, as the lean pass does */
  }
  ahead_stop(a);
  ok = ok && at == n && memcmp(got, want, n) == 0;
  printf("  %zu bytes in chunks of %zu (room %zu): %zu chunks, %zu bytes back, %s\n", n, chunk, room, chunks, at,
         ok ? "in order" : "WRONG");
  free(got);
  free(want);
  close(fd);
  return ok;
}

static void chunks_come_whole_and_in_order(void **state) {
  (void)state;
  assert_true(read_back(10000, 1000, 16));      /* ends on a chunk's end */
  assert_true(read_back(10007, 1000, 16));      /* inside one */
  assert_true(read_back(999, 1000, 120));       /* within the first */
  assert_true(read_back(1 << 20, 4096, 120));   /* many more chunks than slots */
}

static void a_shorter_file_is_a_read_error(void **state) {
  (void)state;
  unsigned char *bytes;
  int fd = file_of(5000, &bytes);
  struct ahead *a = ahead_start(fd, 9000, 1000, 8);   /* says 9000 bytes: the fifth chunk is short */
  unsigned char *p;
  ssize_t len;
  int taken = 0;
  while ((len = ahead_take(a, &p)) > 0) {
    if (taken++) ahead_release(a);
  }
  printf("  9000 bytes said, 5000 there: %d chunks, then %zd (expected 5 chunks, then -1)\n", taken, len);
  assert_int_equal(taken, 5);
  assert_int_equal(len, -1);
  ahead_stop(a);
  free(bytes);
  close(fd);
}

static void stopping_early_is_clean(void **state) {
  (void)state;
  unsigned char *bytes, *p;
  int fd = file_of(1 << 20, &bytes);
  struct ahead *a = ahead_start(fd, 1 << 20, 4096, 16);
  assert_int_equal(ahead_take(a, &p), 4096);    /* one chunk taken, the thread waiting for room */
  ahead_stop(a);
  free(bytes);
  close(fd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(chunks_come_whole_and_in_order),
    cmocka_unit_test(a_shorter_file_is_a_read_error),
    cmocka_unit_test(stopping_early_is_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
