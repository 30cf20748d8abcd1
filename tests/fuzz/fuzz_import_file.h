/* A whole import as `vmxsim import` runs it (import_file: the input file, the
** spooled records, then header, metadata and @init records) into this
** process's file import.bin, and the trace it writes read back to its end by
** the trace reader: what an importer writes, vmxsim replays.  Shared by the
** importer harnesses (fuzz_import.h) and the trace.dat one. */
#ifndef VMXSIM_FUZZ_IMPORT_FILE_H
#define VMXSIM_FUZZ_IMPORT_FILE_H

#include "fuzz.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/import/import.h"

/* An imported trace must be one the reader reads to its end (one thread, so
** that a finding replays the same way). */
static inline void fuzz_read_imported(const char *path) {
  struct trace_reader r;
  if (trace_open(&r, path) != 0) { fprintf(stderr, "imported trace refused: %s\n", r.err); abort(); }
  r.read_ahead = false;
  while (trace_next(&r)) {}
  if (trace_failed(&r) || !trace_done(&r)) { fprintf(stderr, "imported trace: %s\n", r.err); abort(); }
  trace_close(&r);
}

/* 0 with the trace read back, or import_file's exit code and message: the
** format's import, or another (a harness's own variant of one). */
static inline int fuzz_import_as(const struct import_format *format, const char *in, char *err, size_t errlen) {
  const char *out = fuzz_path("import.bin");
  struct import_job job = { .format = format, .input = in, .output = out,
                            .command = "fuzz", .opt = { .cpu_ghz = 2.4, .paging = PAGING_64 } };
  struct import im;
  int rc = import_file(&job, &im, err, errlen);
  import_free(&im);
  if (rc != 0) return rc;
  fuzz_read_imported(out);
  unlink(out);
  return 0;
}

static inline int fuzz_import_file(const char *format, const char *in, char *err, size_t errlen) {
  return fuzz_import_as(import_format_find(format), in, err, errlen);
}

#endif
