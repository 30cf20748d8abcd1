/* libFuzzer harness: a recording given where a trace is expected (`vmxsim
** run|summary|calibrate FILE`, sim/cli/options.c): the format found from the
** content (sim/import/import.c import_detect, through the decompressing reader
** for gzip, xz and zstd input), then both ways of reading it:
**   - recording_import (calibrate): the import into a scratch directory.  The
**     file is either taken for a vmxsim trace (no import), or imported into a
**     trace the reader reads to its end, or refused with an import's exit
**     code; the scratch directory is always removed;
**   - recording_stream (run, summary): the import piped into the reader
**     (sim/import/import_stream.c), or for a trace.dat imported first.  It
**     refuses what the first refuses, with the same exit code, and otherwise
**     delivers the same trace: the same records and the same hash as the
**     scratch file, and it ends cleanly. */
#include "fuzz_import_file.h"
#include "sim/cli/options.h"
#include "sim/trace/hash.h"

/* The stream read to its end; its hash into hex. */
static void read_stream(struct import_stream *s, char hex[HASH_HEX_LEN + 1]) {
  struct trace_reader r;
  if (import_stream_open(&r, s) != 0) { fprintf(stderr, "streamed trace refused: %s\n", r.err); abort(); }
  r.read_ahead = false;                  /* one reading thread besides the importing one */
  while (trace_next(&r)) {}
  if (trace_failed(&r) || !trace_done(&r)) { fprintf(stderr, "streamed trace: %s\n", r.err); abort(); }
  if (!trace_hash_hex(&r, hex)) { fprintf(stderr, "streamed trace: no hash\n"); abort(); }
  trace_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = fuzz_file(data, size, "recording");
  char *trace, *dir;
  /* --skip-bad or not, as the input's first byte says: both paths take it alike */
  const struct recording_opts ro = { .input_format = "auto", .skip_bad = size && (data[0] & 1) };
  int rc = recording_import(in, &ro, &trace, &dir);
  if (rc != 0 && rc != EXIT_BADINPUT) { fprintf(stderr, "recording_import returned %d\n", rc); abort(); }
  char file_hash[HASH_HEX_LEN + 1] = "", err[1024];
  if (rc == 0 && trace) {
    fuzz_read_imported(trace);
    if (hash_file(trace, file_hash, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); abort(); }
  }
  if ((trace || dir) && rc == 0 && !(trace && dir)) { fprintf(stderr, "a trace without its directory\n"); abort(); }
  char kept[4096] = "";
  if (dir) snprintf(kept, sizeof kept, "%s", dir);
  recording_remove(trace, dir);
  if (kept[0] && access(kept, F_OK) == 0) { fprintf(stderr, "scratch directory %s left behind\n", kept); abort(); }

  struct import_stream *s;
  char *spooled, *scratch;                 /* a trace.dat is imported first (its reader forks) */
  int src = recording_stream(in, &ro, &s, &spooled, &scratch);
  if (src != rc) { fprintf(stderr, "recording_stream returned %d, recording_import %d\n", src, rc); abort(); }
  if (src) recording_remove(spooled, scratch);       /* both refused it */
  else if (spooled) {
    char spooled_hash[HASH_HEX_LEN + 1];
    fuzz_read_imported(spooled);
    if (hash_file(spooled, spooled_hash, err, sizeof err) != 0 || strcmp(spooled_hash, file_hash)) {
      fprintf(stderr, "the trace imported first differs from the scratch trace\n");
      abort();
    }
    recording_remove(spooled, scratch);
    return 0;
  }
  if (src) return 0;
  if (!!s != !!file_hash[0]) { fprintf(stderr, "a stream %s, a scratch trace %s\n", s ? "made" : "not made",
                                       file_hash[0] ? "made" : "not made"); abort(); }
  if (s) {
    char stream_hash[HASH_HEX_LEN + 1];
    read_stream(s, stream_hash);
    if (recording_stream_finish(s, EXIT_OK, stream_hash, err, sizeof err) != 0) {
      fprintf(stderr, "stream: %s\n", err);
      abort();
    }
    if (strcmp(stream_hash, file_hash)) {
      fprintf(stderr, "stream hash %s, scratch trace hash %s\n", stream_hash, file_hash);
      abort();
    }
  }
  return 0;
}
