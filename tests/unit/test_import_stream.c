/* A recording replayed as it is imported (sim/import/import_stream.c): the
** stream the replay reads is the trace `vmxsim import` writes, byte for byte
** (same header, metadata, records and hash), it is read once, and it ends
** cleanly however the replay ends: read to its end, stopped early, or never
** opened. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/trace/hash.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/import/import.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/vmxsim-test-stream-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static struct import_job job_of(const char *format, const char *input) {
  const struct import_format *f = import_format_find(format);
  assert_non_null(f);
  return (struct import_job){ .format = f, .input = input, .command = "vmxsim (test)",
                              .opt = { .cpu_ghz = IMPORT_GHZ_DEFAULT, .paging = PAGING_64 } };
}

/* Imports input to a file in dir; its path (static). */
static const char *import_to(const char *format, const char *input) {
  static char path[128];
  snprintf(path, sizeof path, "%s/imported.bin", dir);
  struct import_job job = job_of(format, input);
  job.output = path;
  struct import im;
  char err[1024];
  int rc = import_file(&job, &im, err, sizeof err);
  import_free(&im);
  if (rc) fail_msg("import of %s: %s", input, err);
  return path;
}

/* Every header field, the metadata, every record and the hash of the file and of the stream agree. */
static void assert_stream_is_the_file(const char *format, const char *input) {
  const char *file = import_to(format, input);
  struct trace_reader a, b;
  assert_int_equal(trace_open(&a, file), EXIT_OK);
  trace_hash_start(&a);
  struct import_stream *s;
  char err[1024];
  struct import_job job = job_of(format, input);
  if (import_stream_start(&job, NULL, -1, &s, err, sizeof err)) fail_msg("stream of %s: %s", input, err);
  if (import_stream_open(&b, s)) fail_msg("open of the stream of %s: %s", input, b.err);
  assert_int_equal(b.hdr.version, a.hdr.version);
  assert_int_equal(b.hdr.vcpu_count, a.hdr.vcpu_count);
  assert_int_equal(b.hdr.paging, a.hdr.paging);
  assert_int_equal(b.hdr.event_count, a.hdr.event_count);
  assert_int_equal(b.hdr.pad, a.hdr.pad);
  assert_string_equal(b.hdr.workload, a.hdr.workload);
  assert_string_equal(b.hdr.metadata, a.hdr.metadata);
  uint64_t n = 0;
  for (const struct trace_event *x, *y; (x = trace_next(&a)) != NULL; n++) {
    y = trace_next(&b);
    if (!y || memcmp(x, y, sizeof *x)) fail_msg("%s: record %llu differs (stream %s)", input, (unsigned long long)n,
                                                y ? "has another" : "ended");
  }
  assert_null(trace_next(&b));
  assert_false(trace_failed(&a));
  assert_false(trace_failed(&b));
  char ha[HASH_HEX_LEN + 1], hb[HASH_HEX_LEN + 1], hf[HASH_HEX_LEN + 1];
  assert_true(trace_hash_hex(&a, ha));
  assert_true(trace_hash_hex(&b, hb));
  assert_int_equal(hash_file(file, hf, err, sizeof err), EXIT_OK);
  printf("  %s: %llu records, hash of the stream %s, of the file %s\n", input, (unsigned long long)n, hb, hf);
  assert_string_equal(hb, hf);
  assert_string_equal(ha, hf);
  trace_close(&a);
  trace_close(&b);
  assert_int_equal(import_stream_finish(s, err, sizeof err), EXIT_OK);
}

static void a_streamed_xentrace_recording_is_the_imported_trace(void **state) {
  (void)state;
  assert_stream_is_the_file("xentrace", "tests/data/xentrace-sample/sample.xentrace");
}

static void a_streamed_kvm_ftrace_recording_is_the_imported_trace(void **state) {
  (void)state;
  assert_stream_is_the_file("kvm-ftrace", "traces/recorded/kvm-ftrace-shadow.txt");
}

static void a_streamed_compressed_perf_recording_is_the_imported_trace(void **state) {
  (void)state;
  assert_stream_is_the_file("perf-script", "traces/recorded/perf-pipe.txt.gz");
}

/* A KVM ftrace text of `exits` CR3-write exits on two vCPUs: more records than a pipe holds. */
static const char *write_long_recording(unsigned exits) {
  static char path[128];
  snprintf(path, sizeof path, "%s/long.txt", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  uint64_t ns = 1000000000000ull;
  for (unsigned i = 0; i < exits; i++, ns += 2000) {
    unsigned v = i & 1;
    fprintf(f, "qemu-system-x86-%u [00%u] %llu.%09llu: kvm_exit: vcpu %u reason CR_ACCESS rip 0xffffffff81001000 "
            "info1 0x0000000000000003 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000\n",
            4100 + v, v, (unsigned long long)(ns / 1000000000), (unsigned long long)(ns % 1000000000), v);
    fprintf(f, "qemu-system-x86-%u [00%u] %llu.%09llu: kvm_cr: cr_write 3 = 0x%x\n", 4100 + v, v,
            (unsigned long long)((ns + 300) / 1000000000), (unsigned long long)((ns + 300) % 1000000000),
            0x10000000u + (i % 8) * 0x100000u);
    fprintf(f, "qemu-system-x86-%u [00%u] %llu.%09llu: kvm_entry: vcpu %u, rip 0xffffffff81001000\n", 4100 + v, v,
            (unsigned long long)((ns + 900) / 1000000000), (unsigned long long)((ns + 900) % 1000000000), v);
  }
  assert_int_equal(fclose(f), 0);
  return path;
}

static void a_long_streamed_recording_is_the_imported_trace(void **state) {
  (void)state;
  assert_stream_is_the_file("kvm-ftrace", write_long_recording(40000));
}

static void a_stream_is_read_once(void **state) {
  (void)state;
  struct import_job job = job_of("xentrace", "tests/data/xentrace-sample/sample.xentrace");
  struct import_stream *s;
  char err[1024];
  assert_int_equal(import_stream_start(&job, NULL, -1, &s, err, sizeof err), EXIT_OK);
  struct trace_reader r, again;
  assert_int_equal(import_stream_open(&r, s), EXIT_OK);
  assert_int_equal(import_stream_open(&again, s), EXIT_BADINPUT);
  printf("  a second open: %s\n", again.err);
  assert_non_null(strstr(again.err, "sample.xentrace (as imported): a recording replayed as it is imported is read once"));
  assert_non_null(trace_next(&r));
  assert_int_equal(trace_rewind(&r), EXIT_BADINPUT);
  printf("  a rewind: %s\n", r.err);
  assert_non_null(strstr(r.err, "is read once"));
  trace_close(&r);
  assert_int_equal(import_stream_finish(s, err, sizeof err), EXIT_OK);
}

/* A long recording's stream, opened by r and read for one record. */
static struct import_stream *long_stream_begun(unsigned exits, struct trace_reader *r, const char **input) {
  *input = write_long_recording(exits);
  struct import_job job = job_of("kvm-ftrace", *input);
  char err[1024];
  struct import_stream *s;
  if (import_stream_start(&job, NULL, -1, &s, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(import_stream_open(r, s), EXIT_OK);
  assert_non_null(trace_next(r));
  return s;
}

/* The pipe fills, so the importing thread waits on it: finishing must end it, not wait for it. */
static void a_stream_stopped_early_or_never_opened_ends_without_a_failure(void **state) {
  (void)state;
  struct trace_reader r;
  const char *input;
  struct import_stream *s = long_stream_begun(40000, &r, &input);
  trace_close(&r);                       /* a replay interrupted after one record */
  char err[1024];
  assert_int_equal(import_stream_finish(s, err, sizeof err), EXIT_OK);
  struct import_job job = job_of("kvm-ftrace", input);
  assert_int_equal(import_stream_start(&job, NULL, -1, &s, err, sizeof err), EXIT_OK);
  assert_int_equal(import_stream_finish(s, err, sizeof err), EXIT_OK);   /* a replay that never began */
}

/* The second conversion reads the file again: a recording changed in between
** (here in place, its last CR3 write's value, while the importing thread
** waits on the full pipe) is refused at the end, not replayed as if whole. */
static void a_recording_changed_while_it_is_replayed_is_refused(void **state) {
  (void)state;
  struct trace_reader r;
  const char *input;
  struct import_stream *s = long_stream_begun(100000, &r, &input);   /* 7 MB of records: the pipe holds 1 */
  char err[1024];
  sleep(1);                                     /* the importing thread fills the pipe and waits */
  FILE *f = fopen(input, "r+");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long end = ftell(f);
  char tail[512];
  assert_int_equal(fseek(f, end - (long)sizeof tail, SEEK_SET), 0);
  assert_int_equal(fread(tail, 1, sizeof tail, f), sizeof tail);
  char *w = strstr(tail, "cr_write 3 = 0x1");
  assert_non_null(w);
  assert_int_equal(fseek(f, end - (long)sizeof tail + (w - tail) + (long)strlen("cr_write 3 = 0x"), SEEK_SET), 0);
  fputc('7', f);                                /* another address space, the same length */
  assert_int_equal(fclose(f), 0);
  while (trace_next(&r)) {}
  trace_close(&r);
  int rc = import_stream_finish(s, err, sizeof err);
  printf("  rc %d (expected %d): %s\n", rc, EXIT_BADINPUT, err);
  assert_int_equal(rc, EXIT_BADINPUT);
  assert_non_null(strstr(err, "changed while it was replayed (its records differ from those first read)"));
}

static void a_recording_the_importer_refuses_starts_no_stream(void **state) {
  (void)state;
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "%s/not-ftrace.txt", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("hello\nworld\n", f);
  fclose(f);
  struct import_job job = job_of("kvm-ftrace", path);
  struct import_stream *s = (struct import_stream *)&job;
  int rc = import_stream_start(&job, NULL, -1, &s, err, sizeof err);
  printf("  rc %d (expected %d): %s\n", rc, EXIT_BADINPUT, err);
  assert_int_equal(rc, EXIT_BADINPUT);
  assert_null(s);
  assert_non_null(strstr(err, path));
}

/* Standard input and pipes can be read once: the stream, which reads its
** input twice, refuses them (the front ends import those first). */
static void a_pipe_is_not_streamed(void **state) {
  (void)state;
  struct import_job job = job_of("kvm-ftrace", "-");
  char err[1024];
  struct import_stream *s = (struct import_stream *)&job;
  int rc = import_stream_start(&job, NULL, -1, &s, err, sizeof err);
  printf("  rc %d (expected %d): %s\n", rc, EXIT_USAGE, err);
  assert_int_equal(rc, EXIT_USAGE);
  assert_null(s);
  assert_non_null(strstr(err, "not a regular file"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(a_streamed_xentrace_recording_is_the_imported_trace),
    cmocka_unit_test(a_streamed_kvm_ftrace_recording_is_the_imported_trace),
    cmocka_unit_test(a_streamed_compressed_perf_recording_is_the_imported_trace),
    cmocka_unit_test(a_long_streamed_recording_is_the_imported_trace),
    cmocka_unit_test(a_stream_is_read_once),
    cmocka_unit_test(a_stream_stopped_early_or_never_opened_ends_without_a_failure),
    cmocka_unit_test(a_recording_changed_while_it_is_replayed_is_refused),
    cmocka_unit_test(a_recording_the_importer_refuses_starts_no_stream),
    cmocka_unit_test(a_pipe_is_not_streamed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
