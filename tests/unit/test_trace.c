/* Unit tests for the binary form of traces: the writer and the reader (sim/trace/trace*.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/trace/trace.h"
#include "sim/trace/hash.h"
#include "sim/base/util.h"
#include "trace_helpers.h"

/* A message holds a part; prints both when it does not. */
#define assert_contains(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!strstr(h_, n_)) fail_msg("expected to contain: %s\n  actual: %s", n_, h_); \
  } while (0)

/* ---- binary writer and reader ---- */

static char *temp_path(void) {
  char *path = strdup("/tmp/vmxsim-test-trace-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  return path;
}

/* Writes a good trace: metadata "{}" (2 bytes), records on vCPUs 0 and 1.
** Records start at byte 66 and are 24 bytes each. */
static void write_trace(const char *path, int nrecords) {
  struct trace_writer w;
  assert_int_equal(trace_create(&w, path, "unit", 1, PAGING_64, "{}"), EXIT_OK);
  for (int i = 0; i < nrecords; i++) {
    struct trace_event ev = rec(i % 2 ? EV_CR_WRITE : EV_RUN, i % 2 ? 3 : 0, 0x1000u * (unsigned)i, 0, 100);
    ev.vcpu = (uint16_t)(i % 2);
    assert_int_equal(trace_write(&w, &ev), EXIT_OK);
  }
  assert_int_equal(trace_finish(&w), EXIT_OK);
}

static void patch(const char *path, long off, const void *bytes, size_t n) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, off, SEEK_SET), 0);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  fclose(f);
}

static void writer_and_reader_round_trip(void **state) {
  (void)state;
  char *path = temp_path();
  struct trace_writer w;
  struct trace_event evs[3] = { rec(EV_RUN, 0, 0, 0, 2400), rec(EV_MARK, 0, LE8("abcdefgh"), 'i', 0),
                                rec(EV_WRMSR, 0, 0x6e0, 0x1234, 7) };
  evs[2].vcpu = 3;                                  /* grows the header's vCPU count to 4 */
  assert_int_equal(trace_create(&w, path, "hand", 1, PAGING_PAE, "{\"k\":1}"), EXIT_OK);
  for (int i = 0; i < 3; i++) assert_int_equal(trace_write(&w, &evs[i]), EXIT_OK);
  assert_int_equal(trace_finish(&w), EXIT_OK);

  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_int_equal(r.hdr.version, 1);              /* no measured exits: readable by version-1 readers */
  assert_int_equal(r.hdr.record_size, 24);
  assert_int_equal(r.hdr.vcpu_count, 4);
  assert_int_equal(r.hdr.paging, PAGING_PAE);
  assert_int_equal(r.hdr.event_count, 3);
  assert_string_equal("hand", r.hdr.workload);
  assert_string_equal("{\"k\":1}", r.hdr.metadata);
  assert_int_equal(r.data_off, 64 + 7);
  for (int i = 0; i < 3; i++) {
    const struct trace_event *ev = trace_next(&r);
    assert_non_null(ev);
    assert_memory_equal(&evs[i], ev, sizeof *ev);
  }
  assert_null(trace_next(&r));
  assert_false(trace_failed(&r));
  trace_close(&r);
  unlink(path);
  free(path);
}

static void reader_rejects_truncated_header(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  assert_int_equal(truncate(path, 40), 0);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_BADINPUT);
  assert_contains(r.err, ": byte 40: truncated header (64 bytes needed)");
  unlink(path);
  free(path);
}

static void reader_rejects_truncated_record(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  assert_int_equal(truncate(path, 66 + 24 + 10), 0);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_BADINPUT);
  assert_contains(r.err, ": byte 90: truncated record (file ends 10 bytes into record 1)");
  unlink(path);
  free(path);
}

static void reader_rejects_wrong_magic(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  patch(path, 0, "VMXTRACX", 8);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_BADINPUT);
  assert_contains(r.err, ": byte 0: not a vmxsim trace (bad magic");
  unlink(path);
  free(path);
}

static void reader_refuses_a_newer_format_version(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  patch(path, 8, "\x03\x00", 2);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_BADINPUT);
  assert_contains(r.err, ": byte 8: format version 3 is newer than this vmxsim understands (2); upgrade vmxsim");
  unlink(path);
  free(path);
}

static void reader_rejects_unknown_event_type_in_a_record(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  patch(path, 90, "\xc8", 1);                      /* record 1's type byte := 200 */
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_non_null(trace_next(&r));
  assert_null(trace_next(&r));
  assert_true(trace_failed(&r));
  assert_contains(r.err, ": byte 90: record 1: unknown event type 200");
  trace_close(&r);
  unlink(path);
  free(path);
}

static void measured_record_makes_version_2_and_is_refused_in_version_1(void **state) {
  (void)state;
  char *path = temp_path();
  struct trace_writer w;
  struct trace_event evs[2] = { rec(EV_HLT, 0, 0, 0, 0), rec(EV_MEASURED, 0, 900, 12, 0) };
  assert_int_equal(trace_create(&w, path, "m", 1, PAGING_64, NULL), EXIT_OK);
  for (int i = 0; i < 2; i++) assert_int_equal(trace_write(&w, &evs[i]), EXIT_OK);
  assert_int_equal(trace_finish(&w), EXIT_OK);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_int_equal(r.hdr.version, 2);
  assert_non_null(trace_next(&r));
  const struct trace_event *m = trace_next(&r);
  assert_non_null(m);
  assert_int_equal(MEASURED_REASON(m->b), 12);
  assert_int_equal(m->a, 900);
  trace_close(&r);
  patch(path, 8, "\x01\x00", 2);                    /* claim version 1 */
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_non_null(trace_next(&r));
  assert_null(trace_next(&r));
  assert_contains(r.err, ": record 1: unknown event type 28 in a version-1 file");
  trace_close(&r);
  unlink(path);
  free(path);
}

/* An importer's write-once output: records first, then header, metadata and @init records. */
static void reserved_writer_puts_head_records_before_the_others(void **state) {
  (void)state;
  char *path = temp_path();
  struct trace_writer w;
  assert_int_equal(trace_create_reserved(&w, path, NULL, 4096), EXIT_OK);
  struct trace_event hlt = rec(EV_HLT, 0, 0, 0, 5), init = rec(EV_INIT, 3, 0x1000, 0, 0);
  hlt.vcpu = 1;
  assert_int_equal(trace_write(&w, &hlt), EXIT_OK);
  assert_int_equal(trace_finish_reserved(&w, "late", 2, PAGING_64, "{\"k\":1}", &init, 1), EXIT_OK);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_int_equal(r.hdr.version, 2);                 /* the pad is version 2's */
  assert_int_equal(r.hdr.pad, 4096 - 64 - 7 - 24);
  assert_int_equal(r.hdr.event_count, 2);
  assert_int_equal(r.hdr.vcpu_count, 2);
  assert_string_equal(r.hdr.metadata, "{\"k\":1}");
  assert_string_equal(r.hdr.workload, "late");
  const struct trace_event *e = trace_next(&r);
  assert_non_null(e);
  assert_int_equal(e->type, EV_INIT);
  e = trace_next(&r);
  assert_non_null(e);
  assert_int_equal(e->type, EV_HLT);
  assert_int_equal(e->vcpu, 1);
  assert_null(trace_next(&r));
  assert_false(trace_failed(&r));
  trace_close(&r);
  patch(path, 28, "\xff\xff\x00\x00", 4);         /* a pad beyond the file */
  assert_int_equal(trace_open(&r, path), EXIT_BADINPUT);
  assert_contains(r.err, ": byte 28: pad of 65535 bytes after the metadata exceeds the file");
  unlink(path);
  free(path);
}

static void reader_rejects_impossible_operands_in_a_record(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  patch(path, 91, "\x05", 1);                      /* record 1 (crw) aux := CR5 */
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_non_null(trace_next(&r));
  assert_null(trace_next(&r));
  assert_contains(r.err, ": byte 90: record 1 (crw): control register not 0, 3, 4 or 8");
  trace_close(&r);
  patch(path, 90, "\x0f", 1);                      /* record 1 := touch of 0 pages (its b is 0) */
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_non_null(trace_next(&r));
  assert_null(trace_next(&r));
  assert_contains(r.err, ": byte 90: record 1 (touch): touch of 0 pages or more than 2^20");
  trace_close(&r);
  struct trace_event touch = { .type = EV_TOUCH, .a = 0x1000, .b = (uint64_t)1 << 40 };
  assert_string_equal(event_invalid(&touch), "touch of 0 pages or more than 2^20");
  touch.b = 4;
  assert_null(event_invalid(&touch));
  /* An interrupt's source is one of four, only an IPI names a sender, and
  ** only a device's interrupt says it is level-triggered. */
  struct trace_event virq = { .type = EV_VIRQ, .aux = VIRQ_SRC_MAX + 1, .a = 33 };
  assert_string_equal(event_invalid(&virq), "interrupt source above 3 (timer)");
  virq.aux = VIRQ_SRC_TIMER;
  virq.b = 1;
  assert_string_equal(event_invalid(&virq), "a sending vCPU on an interrupt that is not an IPI");
  virq.aux = VIRQ_SRC_DEVICE;
  assert_null(event_invalid(&virq));
  virq.b = 2;
  assert_string_equal(event_invalid(&virq), "device interrupt flags other than 1 (level)");
  virq.aux = VIRQ_SRC_IPI;
  assert_null(event_invalid(&virq));
  /* A spin: at most 2^20 PAUSEs, a 32-bit gap, and no gap on one PAUSE. */
  struct trace_event pause = { .type = EV_PAUSE, .a = PAUSE_SPIN_MAX + 1, .b = 40 };
  assert_string_equal(event_invalid(&pause), "spin of more than 2^20 PAUSEs");
  pause.a = 400;
  pause.b = 1ull << 32;
  assert_string_equal(event_invalid(&pause), "cycles between PAUSEs above 2^32-1");
  pause.a = 1;
  pause.b = 40;
  assert_string_equal(event_invalid(&pause), "cycles between PAUSEs on a single PAUSE");
  pause.a = 0;
  pause.b = 0;
  assert_null(event_invalid(&pause));
  unlink(path);
  free(path);
}

static void reader_rejects_absurd_metadata_length(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  patch(path, 24, "\xff\xff\xff\xff", 4);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_BADINPUT);
  assert_contains(r.err, ": byte 24: metadata length 4294967295 exceeds the file (114 bytes) "
                         "or the 16777216-byte limit");
  unlink(path);
  free(path);
}

/* Records far apart, across the reader's chunks, come out in order whether
** taken one by one or in blocks of any size, read ahead on a thread or not. */
static void read_long_trace(const char *path, int n, bool ahead) {
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  r.read_ahead = ahead;
  for (int i = 0; i < n; i++) {
    const struct trace_event *ev = trace_next(&r);
    assert_non_null(ev);
    if (ev->a != 0x1000u * (unsigned)i) fail_msg("record %d: a = 0x%llx, expected 0x%x", i, (unsigned long long)ev->a, 0x1000u * (unsigned)i);
  }
  assert_null(trace_next(&r));
  assert_int_equal(trace_position(&r), n);
  const size_t sizes[] = { 1, 7, 2048, 100000 };
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    trace_rewind(&r);
    uint64_t seen = 0;
    const struct trace_event *evs;
    size_t got;
    while ((got = trace_next_block(&r, &evs, sizes[k])) > 0) {
      assert_true(got <= sizes[k]);
      for (size_t j = 0; j < got; j++)
        if (evs[j].a != 0x1000u * (seen + j)) fail_msg("blocks of %zu: record %llu out of order", sizes[k], (unsigned long long)(seen + j));
      seen += got;
      assert_int_equal(trace_position(&r), seen);
    }
    assert_int_equal(seen, n);
    assert_false(trace_failed(&r));
  }
  trace_close(&r);
}

static void reader_hands_out_long_traces_in_order_one_by_one_or_in_blocks(void **state) {
  (void)state;
  char *path = temp_path();
  const int n = 100001;                            /* several chunks, the last one partial */
  write_trace(path, n);
  read_long_trace(path, n, true);
  read_long_trace(path, n, false);
  unlink(path);
  free(path);
}

/* A touch asks for at most 2^20 pages: one 24-byte record of 2^24 pages (a
** fuzz input that took seconds to replay) is refused where it is. */
static void reader_bounds_the_pages_of_one_touch(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 2);
  patch(path, 90, "\x0f", 1);                      /* record 1 := touch */
  patch(path, 106, "\x00\x00\x00\x01", 4);          /* of 2^24 pages (b, little-endian) */
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_non_null(trace_next(&r));
  assert_null(trace_next(&r));
  assert_contains(r.err, ": byte 90: record 1 (touch): touch of 0 pages or more than 2^20");
  trace_close(&r);
  patch(path, 106, "\x00\x00\x10\x00", 4);          /* 2^20 pages: the largest touch */
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_non_null(trace_next(&r));
  const struct trace_event *ev = trace_next(&r);
  assert_non_null(ev);
  assert_int_equal(ev->b, 1u << 20);
  assert_false(trace_failed(&r));
  trace_close(&r);
  unlink(path);
  free(path);
}

/* A bad record in the middle of a block: every record before it is handed
** out, then the failure names the record's own byte offset. */
static void reader_fails_exactly_at_a_bad_record_inside_a_block(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 6000);
  patch(path, 66 + 24 * 5000 + 2, "\x09\x00", 2);  /* record 5000's vCPU := 9 */
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  const struct trace_event *evs;
  size_t got, seen = 0;
  while ((got = trace_next_block(&r, &evs, 4096)) > 0) seen += got;
  assert_int_equal(seen, 5000);
  assert_true(trace_failed(&r));
  assert_contains(r.err, ": byte 120066: record 5000: vCPU 9 beyond the header's count 2");
  assert_null(trace_next(&r));                     /* and stays failed */
  trace_close(&r);
  unlink(path);
  free(path);
}

/* Records are checked a piece at a time by the read-ahead thread and by the
** replay: with two bad records in a long trace, the replay gets every record
** before the first, then that record's message, whoever checked it, and
** whether the replay reads slowly (the read-ahead thread checks all) or not. */
static void long_trace_fails_at_its_first_bad_record_whoever_checks(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 100000);
  patch(path, 66 + 24 * 70001 + 2, "\x09\x00", 2);   /* record 70001's vCPU := 9 (chunk 4, piece 4) */
  patch(path, 66 + 24 * 90000 + 2, "\x09\x00", 2);   /* and a later one */
  for (int slow = 0; slow < 2; slow++) {
    struct trace_reader r;
    assert_int_equal(trace_open(&r, path), EXIT_OK);
    const struct trace_event *evs;
    size_t got, seen = 0;
    while ((got = trace_next_block(&r, &evs, 4096)) > 0) {
      seen += got;
      if (slow) usleep(200);
    }
    assert_int_equal(seen, 70001);
    assert_true(trace_failed(&r));
    assert_contains(r.err, ": byte 1680090: record 70001: vCPU 9 beyond the header's count 2");
    trace_close(&r);
  }
  unlink(path);
  free(path);
}

/* The hash computed while reading is the file's hash, once all is read. */
static void hash_while_reading(const char *path, bool ahead, const char *want) {
  char got[HASH_HEX_LEN + 1] = "";
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  r.read_ahead = ahead;
  trace_hash_start(&r);
  assert_non_null(trace_next(&r));
  assert_false(trace_hash_hex(&r, got));               /* not before every record was read */
  while (trace_next(&r)) {}
  assert_true(trace_hash_hex(&r, got));
  assert_string_equal(got, want);
  trace_rewind(&r);                                /* a second pass: no hash any more */
  while (trace_next(&r)) {}
  assert_false(trace_hash_hex(&r, got));
  trace_close(&r);
}

static void reader_hashes_the_file_while_reading(void **state) {
  (void)state;
  char *path = temp_path();
  char want[HASH_HEX_LEN + 1], err[256];
  static const int sizes[] = { 0, 3, 24, 16384, 16385, 100000 };   /* empty, part of a chunk, one, several */
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int n = sizes[i];
    write_trace(path, n);
    assert_int_equal(hash_file(path, want, err, sizeof err), EXIT_OK);
    if (n) {
      hash_while_reading(path, true, want);
      hash_while_reading(path, false, want);
    }
  }
  unlink(path);
  free(path);
}

/* A stream (a descriptor) is hashed as it is read, unless the caller said it
** will not ask (trace_hash_skip): then there is no hash to give. */
static void a_stream_is_hashed_unless_the_hash_is_skipped(void **state) {
  (void)state;
  char *path = temp_path();
  char want[HASH_HEX_LEN + 1], got[HASH_HEX_LEN + 1] = "", err[256];
  write_trace(path, 20000);
  assert_int_equal(hash_file(path, want, err, sizeof err), EXIT_OK);
  for (int skip = 0; skip < 2; skip++) {
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct trace_reader r;
    assert_int_equal(trace_open_fd(&r, fd, path), EXIT_OK);
    if (skip) trace_hash_skip(&r);
    size_t n = 0;
    while (trace_next(&r)) n++;
    assert_int_equal(n, 20000);
    bool have = trace_hash_hex(&r, got);
    printf("  stream, hash %s: %s (the file's: %s)\n", skip ? "skipped" : "kept", have ? got : "none", want);
    if (skip) {
      assert_false(have);
    } else {
      assert_true(have);
      assert_string_equal(got, want);
    }
    trace_close(&r);
  }
  unlink(path);
  free(path);
}

/* An interrupted read: closing stops the threads with chunks still in flight. */
static void reader_closes_in_the_middle_of_a_long_trace(void **state) {
  (void)state;
  char *path = temp_path();
  write_trace(path, 200000);
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  trace_hash_start(&r);
  for (int i = 0; i < 20000; i++) assert_non_null(trace_next(&r));
  char got[HASH_HEX_LEN + 1];
  assert_false(trace_hash_hex(&r, got));
  trace_close(&r);
  unlink(path);
  free(path);
}

/* The reader checks operands only of the types EVENT_OPERANDS_CHECKED names:
** event_invalid must find nothing wrong with any record of another type. */
static void only_the_listed_types_have_operands_to_check(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (unsigned t = 0; t < EV_COUNT; t++) {
    if (EVENT_OPERANDS_CHECKED >> t & 1) continue;
    for (int i = 0; i < 2000; i++) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      struct trace_event ev = { .type = (uint8_t)t, .aux = (uint8_t)x, .vcpu = 0, .cycles = (uint32_t)(x >> 8),
                                .a = x * 3, .b = i < 4 ? (uint64_t)i : x >> 5 };
      const char *why = event_invalid(&ev);
      if (why) fail_msg("%s (type %u) is not in EVENT_OPERANDS_CHECKED, but event_invalid says: %s", event_mnemonic(t), t, why);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(writer_and_reader_round_trip),
    cmocka_unit_test(reader_rejects_truncated_header),
    cmocka_unit_test(reader_rejects_truncated_record),
    cmocka_unit_test(reader_rejects_wrong_magic),
    cmocka_unit_test(reader_refuses_a_newer_format_version),
    cmocka_unit_test(reader_rejects_unknown_event_type_in_a_record),
    cmocka_unit_test(measured_record_makes_version_2_and_is_refused_in_version_1),
    cmocka_unit_test(reserved_writer_puts_head_records_before_the_others),
    cmocka_unit_test(reader_rejects_impossible_operands_in_a_record),
    cmocka_unit_test(reader_rejects_absurd_metadata_length),
    cmocka_unit_test(reader_hands_out_long_traces_in_order_one_by_one_or_in_blocks),
    cmocka_unit_test(reader_bounds_the_pages_of_one_touch),
    cmocka_unit_test(reader_fails_exactly_at_a_bad_record_inside_a_block),
    cmocka_unit_test(reader_hashes_the_file_while_reading),
    cmocka_unit_test(a_stream_is_hashed_unless_the_hash_is_skipped),
    cmocka_unit_test(reader_closes_in_the_middle_of_a_long_trace),
    cmocka_unit_test(long_trace_fails_at_its_first_bad_record_whoever_checks),
    cmocka_unit_test(only_the_listed_types_have_operands_to_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
