/* libFuzzer harness: CPU cost profiles (sim/core/profile.c), as files given
** to --cpu.  A profile either loads, or is refused with EXIT_BADINPUT and a
** message naming the file; a loaded one prices the small trace under shadow
** paging and under EPT (a value in its documented range must not overflow
** or divide by zero; EPT may fail VM entry when the profile's CPU has none). */
#include "fuzz_replay.h"
#include "sim/core/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_names_special_files(data, size)) return 0;
  const char *path = fuzz_file(data, size, "profile.json");
  struct profile pr;
  char err[2048] = "";
  int rc = profile_load(&pr, path, err, sizeof err);
  if (rc != 0) fuzz_check_message(rc, err, path, EXIT_BADINPUT, EXIT_BADINPUT);
  else (void)profile_vmx_caps(&pr);
  profile_free(&pr);
  if (rc == 0) {
    fuzz_replay("shadowcache+lazydr", path, NULL, 0);
    fuzz_replay("ept+cr4mask", path, NULL, 0);
  }
  return 0;
}
