/* libFuzzer harness: trace-cmd's trace.dat (sim/import/import_tracecmd.c,
** through libtracecmd and libtraceevent; built only when the build has
** them).  The libraries read the file by path, so the input is a file of
** exactly its bytes; the whole import (import_file) either refuses it with
** EXIT_BADINPUT and a message naming it, or writes a trace that the trace
** reader reads to its end. */
#include "fuzz_import_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = fuzz_file(data, size, "recording.dat");
  char err[1024] = "";
  int rc = fuzz_import_file("trace-cmd", in, err, sizeof err);
  if (rc != 0) fuzz_check_message(rc, err, in, EXIT_BADINPUT, EXIT_BADINPUT);
  return 0;
}
