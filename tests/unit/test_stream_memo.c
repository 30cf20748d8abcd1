/* Remembered first conversions of recordings (sim/cli/stream_memo.c): an
** entry is read back only whole and for its own identity; a stream begun from
** a remembered conversion is the imported trace byte for byte; one begun from
** a wrong entry fails as a changed recording does, and the entry is removed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim/cli/options.h"
#include "sim/cli/stream_memo.h"
#include "sim/trace/hash.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"

#define SAMPLE "tests/data/xentrace-sample/sample.xentrace"

static char dir[64];
static const struct recording_opts auto_format = { .input_format = "auto" };

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/vmxsim-test-memo-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  return setenv("XDG_CACHE_HOME", dir, 1);
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const unsigned char prefix[64] = "header, metadata and initial registers";

static void an_entry_reads_back_only_whole_and_for_its_identity(void **state) {
  (void)state;
  struct import_stream_known k = { .prefix = prefix, .records = 123456, .records_hash = 0x1122334455667788ull }, got;
  size_t n;
  unsigned char *b = stream_memo_build("identity A\n", &k, sizeof prefix, &n);
  assert_true(stream_memo_parse(b, n, "identity A\n", sizeof prefix, &got));
  printf("  read back: %llu records, hash %llx (expected %llu, %llx)\n", (unsigned long long)got.records,
         (unsigned long long)got.records_hash, (unsigned long long)k.records, (unsigned long long)k.records_hash);
  assert_int_equal(got.records, k.records);
  assert_int_equal(got.records_hash, k.records_hash);
  assert_memory_equal(got.prefix, prefix, sizeof prefix);
  assert_false(stream_memo_parse(b, n, "identity B\n", sizeof prefix, &got));      /* another file or build */
  assert_false(stream_memo_parse(b, n, "identity A\n", sizeof prefix - 1, &got));  /* another prefix size */
  assert_false(stream_memo_parse(b, n - 1, "identity A\n", sizeof prefix, &got));  /* cut short */
  unsigned refused = 0;
  for (size_t i = 0; i < n; i++) {                                                 /* any one byte changed */
    b[i] ^= 0x20;
    refused += !stream_memo_parse(b, n, "identity A\n", sizeof prefix, &got);
    b[i] ^= 0x20;
  }
  printf("  entries with one byte changed refused: %u of %zu\n", refused, n);
  assert_int_equal(refused, n);
  free(b);
}

/* The records' count of a whole stream, and its trace hash; true when it
** was read from a kept copy of the conversion (its name says so). */
static bool read_stream(struct import_stream *s, char hex[HASH_HEX_LEN + 1], uint64_t *records) {
  struct trace_reader r;
  assert_int_equal(import_stream_open(&r, s), EXIT_OK);
  for (*records = 0; trace_next(&r); ++*records) {}
  assert_false(trace_failed(&r));
  assert_true(trace_hash_hex(&r, hex));
  bool kept = strstr(r.path, "kept in") != NULL;
  trace_close(&r);
  return kept;
}

static void write_entry_as(const char *entry, const char *identity, const struct import_stream_known *k) {
  size_t wn;
  unsigned char *w = stream_memo_build(identity, k, import_stream_prefix_size(), &wn);
  FILE *f = fopen(entry, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(w, 1, wn, f), wn);
  assert_int_equal(fclose(f), 0);
  free(w);
}

static struct stat entry_of(const char *input, char *path, size_t n) {
  char cmd[512];
  struct import_job job = { .format = import_format_find("xentrace"), .input = input, .command = cmd,
                            .opt = { .cpu_ghz = IMPORT_GHZ_DEFAULT, .paging = PAGING_64 } };
  snprintf(cmd, sizeof cmd, "vmxsim (%s %s, imported on the fly)", job.format->name, input);   /* as options.c */
  struct stream_memo m;
  stream_memo_look_up(&m, &job);
  assert_non_null(m.path);
  snprintf(path, n, "%s", m.path);
  stream_memo_free(&m);
  struct stat st = { 0 };
  if (stat(path, &st) != 0) st.st_size = -1;
  return st;
}

/* Copies the sample to dir with a ctime old enough to be remembered: not possible
** (nobody can set a ctime back), so the test remembers the checked-out sample
** when it is settled, and skips otherwise. */
static void look_up_sample(struct stream_memo *m) {
  char cmd[512];
  struct import_job job = { .format = import_format_find("xentrace"), .input = SAMPLE, .command = cmd,
                            .opt = { .cpu_ghz = IMPORT_GHZ_DEFAULT, .paging = PAGING_64 } };
  snprintf(cmd, sizeof cmd, "vmxsim (xentrace %s, imported on the fly)", SAMPLE);
  stream_memo_look_up(m, &job);
}

/* One replay of the sample through recording_stream: its result, with the
** records' count, the trace hash and whether a kept copy was read. */
static int replay_sample(char hex[HASH_HEX_LEN + 1], uint64_t *records, bool *kept, char *err, size_t errlen) {
  struct import_stream *s;
  char *spooled, *scratch;
  assert_int_equal(recording_stream(SAMPLE, &auto_format, &s, &spooled, &scratch), EXIT_OK);
  assert_non_null(s);
  *kept = read_stream(s, hex, records);
  return recording_stream_finish(s, EXIT_OK, hex, err, errlen);
}

/* Copies the sample to dir with a ctime old enough to be remembered: not possible
** (nobody can set a ctime back), so the test remembers the checked-out sample
** when it is settled, and skips otherwise.  The first replay keeps the entry
** and a copy of the conversion; the second reads the copy; a copy whose
** content is not what its entry says fails the replay and is dropped with its
** entry.  Then without copies (VMXSIM_CACHE_MB=0), a replay from the entry
** alone is checked the same way. */
static void a_recording_replayed_again_is_read_once_and_gives_the_same_trace(void **state) {
  (void)state;
  struct stat st;
  assert_int_equal(stat(SAMPLE, &st), 0);
  if (time(NULL) - st.st_ctime < 5) skip();                   /* just checked out: not settled yet */
  char entry[1024];
  assert_int_equal(entry_of(SAMPLE, entry, sizeof entry).st_size, -1);
  char first[HASH_HEX_LEN + 1], again[HASH_HEX_LEN + 1], err[1024];
  uint64_t n1, n2;
  bool kept;
  assert_int_equal(replay_sample(first, &n1, &kept, err, sizeof err), EXIT_OK);
  assert_false(kept);
  off_t size = entry_of(SAMPLE, entry, sizeof entry).st_size;
  printf("  after the first replay: the entry %s, %lld bytes\n", entry, (long long)size);
  assert_true(size > 0);
  struct stream_memo m;
  look_up_sample(&m);
  printf("  its kept copy: %s (expected: found), %llu bytes\n", m.kept_found ? "found" : "not found",
         (unsigned long long)m.known.kept_bytes);
  assert_true(m.kept_found);
  char kept_path[1024];
  snprintf(kept_path, sizeof kept_path, "%s", m.kept_path);
  stream_memo_free(&m);
  assert_int_equal(replay_sample(again, &n2, &kept, err, sizeof err), EXIT_OK);
  printf("  first: %llu records, hash %s; from the kept copy (%s): %llu records, hash %s\n",
         (unsigned long long)n1, first, kept ? "read" : "NOT read", (unsigned long long)n2, again);
  assert_true(kept);
  assert_int_equal(n1, n2);
  assert_string_equal(first, again);

  /* A kept copy that is not what its entry says (here: the entry's hash). */
  look_up_sample(&m);
  struct import_stream_known wrong = m.known;
  wrong.kept_hash ^= 1;
  write_entry_as(entry, m.identity, &wrong);
  stream_memo_free(&m);
  int rc = replay_sample(again, &n2, &kept, err, sizeof err);
  printf("  a wrong kept copy: rc %d (expected %d): %s; entry left: %s, copy left: %s\n", rc, EXIT_BADINPUT, err,
         access(entry, F_OK) == 0 ? "yes" : "no", access(kept_path, F_OK) == 0 ? "yes" : "no");
  assert_int_equal(rc, EXIT_BADINPUT);
  assert_non_null(strstr(err, "is not what was kept"));
  assert_int_not_equal(access(entry, F_OK), 0);
  assert_int_not_equal(access(kept_path, F_OK), 0);

  /* No copies: the entry alone; one whose records' hash is wrong fails the
  ** replay as for a changed recording, and is gone, so the next converts twice. */
  setenv(STREAM_MEMO_BUDGET_ENV, "0", 1);
  assert_int_equal(replay_sample(first, &n1, &kept, err, sizeof err), EXIT_OK);
  assert_int_equal(replay_sample(again, &n2, &kept, err, sizeof err), EXIT_OK);
  printf("  without copies: the replay from the entry read a copy: %s (expected: no)\n", kept ? "yes" : "no");
  assert_false(kept);
  assert_int_not_equal(access(kept_path, F_OK), 0);
  assert_string_equal(first, again);
  look_up_sample(&m);
  assert_true(m.found);
  wrong = m.known;
  wrong.records_hash ^= 1;
  write_entry_as(entry, m.identity, &wrong);
  stream_memo_free(&m);
  rc = replay_sample(again, &n2, &kept, err, sizeof err);
  printf("  a wrong entry: rc %d (expected %d): %s; entry left: %s\n", rc, EXIT_BADINPUT, err,
         access(entry, F_OK) == 0 ? "yes" : "no");
  unsetenv(STREAM_MEMO_BUDGET_ENV);
  assert_int_equal(rc, EXIT_BADINPUT);
  assert_non_null(strstr(err, "changed while it was replayed (its records differ from those first read)"));
  assert_int_not_equal(access(entry, F_OK), 0);
}

static void the_cache_can_be_turned_off(void **state) {
  (void)state;
  setenv(STREAM_MEMO_OFF_ENV, "1", 1);
  struct import_job job = { .format = import_format_find("xentrace"), .input = SAMPLE, .command = "c" };
  struct stream_memo m;
  stream_memo_look_up(&m, &job);
  printf("  %s=1: entry path %s\n", STREAM_MEMO_OFF_ENV, m.path ? m.path : "(none)");
  assert_null(m.path);
  assert_false(m.found);
  stream_memo_free(&m);
  unsetenv(STREAM_MEMO_OFF_ENV);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(an_entry_reads_back_only_whole_and_for_its_identity),
    cmocka_unit_test(a_recording_replayed_again_is_read_once_and_gives_the_same_trace),
    cmocka_unit_test(the_cache_can_be_turned_off),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
