/* Unit tests for the importer table (sim/import/import.c): every row is whole,
** `vmxsim import` lists what the table holds, and detection picks each sample
** recording's format from its content. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/commands.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/import/import.h"

/* ---- helpers ---- */

/* What fn(argc, argv) wrote to the stream fd (1 or 2), NUL-terminated (caller frees); *rc its result. */
static char *captured(int fd, int (*fn)(int, char **), int argc, char **argv, int *rc) {
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  fflush(stdout);
  fflush(stderr);
  int saved = dup(fd);
  assert_true(saved >= 0 && dup2(fileno(tmp), fd) >= 0);
  *rc = fn(argc, argv);
  fflush(stdout);
  fflush(stderr);
  assert_true(dup2(saved, fd) >= 0);
  close(saved);
  long n = ftell(tmp);
  assert_true(n >= 0);
  char *s = calloc(1, (size_t)n + 1);
  rewind(tmp);
  assert_int_equal(fread(s, 1, (size_t)n, tmp), (size_t)n);
  fclose(tmp);
  return s;
}

/* A scratch file holding n bytes of data; its path (caller unlinks and frees). */
static char *scratch_file(const void *data, size_t n) {
  const char *dir = getenv("TMPDIR");
  char *path = malloc(4096);
  snprintf(path, 4096, "%s/vmxsim-detect-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, n), (ssize_t)n);
  close(fd);
  return path;
}

static size_t nformats(void) {
  size_t n = 0;
  for (const struct import_format *const *f = import_formats(); *f; f++) n++;
  return n;
}

/* ---- the rows ---- */

static void every_row_is_whole_and_found_by_its_name(void **state) {
  (void)state;
  assert_true(nformats() >= 4);
  for (const struct import_format *const *f = import_formats(); *f; f++) {
    const struct import_format *r = *f;
    assert_non_null(r->name);
    assert_ptr_equal(import_format_find(r->name), r);
    assert_true(r->summary && r->summary[0] && r->usage && r->usage[0] && r->recording && r->probe);
    assert_true(!!r->run != !!r->run_path);            /* reads a buffer, or the file itself */
    assert_true(r->nneeds == 0 || r->needs);
    for (size_t i = 0; i < r->nneeds; i++) assert_true(r->needs[i].event && r->needs[i].gives);
    char head[128];
    snprintf(head, sizeof head, "usage: vmxsim import %s ", r->name);
    assert_memory_equal(r->usage, head, strlen(head));
  }
  assert_null(import_format_find("pcap"));
}

static void import_help_lists_every_row_and_each_row_has_its_help(void **state) {
  (void)state;
  int rc;
  char *argv[] = { "import", "--help", NULL, NULL };
  char *out = captured(STDOUT_FILENO, cmd_import, 2, argv, &rc);
  assert_int_equal(rc, EXIT_OK);
  for (const struct import_format *const *f = import_formats(); *f; f++) {
    char line[64];
    snprintf(line, sizeof line, "\n  %-13s ", (*f)->name);      /* the row's entry under "formats:" */
    if (!strstr(out, line)) fail_msg("'vmxsim import --help' does not list %s:\n%s", (*f)->name, out);
    char *fargv[] = { "import", (char *)(*f)->name, "--help", NULL };
    char *usage = captured(STDOUT_FILENO, cmd_import, 3, fargv, &rc);
    assert_int_equal(rc, EXIT_OK);
    assert_string_equal(usage, (*f)->usage);
    free(usage);
  }
  free(out);
}

static void an_unknown_format_is_refused_naming_every_row(void **state) {
  (void)state;
  int rc;
  char *argv[] = { "import", "pcap", "in.txt", "-o", "out.bin", NULL };
  char *err = captured(STDERR_FILENO, cmd_import, 5, argv, &rc);
  assert_int_equal(rc, EXIT_USAGE);
  assert_non_null(strstr(err, "unknown format 'pcap' ("));
  for (const struct import_format *const *f = import_formats(); *f; f++)
    if (!strstr(err, (*f)->name)) fail_msg("the message does not name %s: %s", (*f)->name, err);
  free(err);
}

/* ---- detection ---- */

static void detection_picks_each_sample_recordings_format(void **state) {
  (void)state;
  static const struct { const char *path, *format; } samples[] = {
    { "traces/recorded/kvm-ftrace-excerpt.txt", "kvm-ftrace" },
    { "traces/recorded/kvm-ftrace-shadow.txt", "kvm-ftrace" },
    { "traces/recorded/kvm-tracedat.dat.gz", "trace-cmd" },
    { "traces/recorded/perf-hackbench.txt.gz", "perf-script" },
    { "traces/recorded/perf-messaging.txt.gz", "perf-script" },
    { "traces/recorded/perf-pipe.txt.gz", "perf-script" },
    { "tests/data/xentrace-sample/sample.xentrace", "xentrace" },
    { "tests/data/tracedat-loop.dat", "trace-cmd" },
  };
  bool covered[64] = { false };
  assert_true(nformats() <= 64);
  for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
    char err[1024];
    const struct import_format *f = import_detect(samples[i].path, err, sizeof err);
    if (!f) fail_msg("%s: not detected: %s", samples[i].path, err);
    if (strcmp(f->name, samples[i].format)) fail_msg("%s: taken for %s", samples[i].path, f->name);
    for (size_t k = 0; import_formats()[k]; k++)
      if (import_formats()[k] == f) covered[k] = true;
  }
  for (size_t k = 0; import_formats()[k]; k++)   /* a new format comes with a sample of its own */
    if (!covered[k]) fail_msg("no sample recording of %s is detected", import_formats()[k]->name);
}

static void kvm_exit_outweighs_the_sched_events_perf_script_also_has(void **state) {
  (void)state;
  static const char text[] =
    "  <idle>-0  [001] 10.000001: sched:sched_switch: prev_comm=a prev_pid=1 ==> next_comm=b next_pid=2\n"
    "  CPU 1/KVM-5  [001] 10.000002: kvm_exit: reason HLT rip 0x1 info 0 0\n";
  char *path = scratch_file(text, sizeof text - 1), err[1024];
  const struct import_format *f = import_detect(path, err, sizeof err);
  unlink(path);
  free(path);
  assert_non_null(f);
  assert_string_equal(f->name, "kvm-ftrace");
}

static void a_vmxsim_trace_is_no_recording_and_no_error(void **state) {
  (void)state;
  unsigned char head[64] = { 0 };
  memcpy(head, TRACE_MAGIC, 8);
  char *path = scratch_file(head, sizeof head), err[1024] = "x";
  assert_null(import_detect(path, err, sizeof err));
  assert_string_equal(err, "");
  unlink(path);
  free(path);
}

/* What no probe knows is refused naming what each row reads: binary input
** names the recordings, text the events the text probes look for. */
static void unknown_content_names_what_the_rows_read(void **state) {
  (void)state;
  static const unsigned char binary[] = { 1, 2, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
  static const char text[] = "hello\nworld\n";
  char err[1024];
  char *path = scratch_file(binary, sizeof binary);
  assert_null(import_detect(path, err, sizeof err));
  assert_non_null(strstr(err, "neither a vmxsim trace nor a recording vmxsim reads ("));
  for (const struct import_format *const *f = import_formats(); *f; f++)
    if (!strstr(err, (*f)->recording)) fail_msg("the message does not name %s: %s", (*f)->recording, err);
  unlink(path);
  free(path);
  path = scratch_file(text, sizeof text - 1);
  assert_null(import_detect(path, err, sizeof err));
  assert_non_null(strstr(err, "not a vmxsim trace (bad magic), and its first 64 KiB hold no "));
  for (const struct import_format *const *f = import_formats(); *f; f++)
    if ((*f)->looks_for && !strstr(err, (*f)->looks_for)) fail_msg("the message lacks %s: %s", (*f)->looks_for, err);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_row_is_whole_and_found_by_its_name),
    cmocka_unit_test(import_help_lists_every_row_and_each_row_has_its_help),
    cmocka_unit_test(an_unknown_format_is_refused_naming_every_row),
    cmocka_unit_test(detection_picks_each_sample_recordings_format),
    cmocka_unit_test(kvm_exit_outweighs_the_sched_events_perf_script_also_has),
    cmocka_unit_test(a_vmxsim_trace_is_no_recording_and_no_error),
    cmocka_unit_test(unknown_content_names_what_the_rows_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
