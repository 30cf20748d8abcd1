/* libFuzzer harness: a recording given where a trace is expected (`vmxsim
** run|summary|calibrate FILE`, sim/cli/options.c recording_import): the
** format found from the content (sim/import/import.c import_detect, through
** the decompressing reader for gzip, xz and zstd input), then the import into
** a scratch directory.  The file is either taken for a vmxsim trace (no
** import), or imported into a trace the reader reads to its end, or refused
** with an import's exit code; the scratch directory is always removed. */
#include "fuzz_import_file.h"
#include "sim/cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = fuzz_file(data, size, "recording");
  char *trace, *dir;
  int rc = recording_import(in, "auto", &trace, &dir);
  if (rc != 0 && rc != EXIT_BADINPUT) { fprintf(stderr, "recording_import returned %d\n", rc); abort(); }
  if (rc == 0 && trace) fuzz_read_imported(trace);
  if ((trace || dir) && rc == 0 && !(trace && dir)) { fprintf(stderr, "a trace without its directory\n"); abort(); }
  char kept[4096] = "";
  if (dir) snprintf(kept, sizeof kept, "%s", dir);
  recording_remove(trace, dir);
  if (kept[0] && access(kept, F_OK) == 0) { fprintf(stderr, "scratch directory %s left behind\n", kept); abort(); }
  return 0;
}
