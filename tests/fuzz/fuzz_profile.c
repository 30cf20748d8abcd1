/* libFuzzer harness: CPU cost profiles (sim/config/profile.c), as files given
** to --cpu.  A profile either loads, or is refused with EXIT_BADINPUT and a
** message naming the file; a loaded one prices the small trace under shadow
** paging and under EPT (a value in its documented range must not overflow
** or divide by zero; EPT may fail VM entry when the profile's CPU has none).
** Loaded as a regression case's file (INPUT_HIDE_CONTENT), it gives the same
** result, and a refusal names the file and shows none of its values. */
#include "fuzz_replay.h"
#include "sim/config/profile.h"

/* A number after "value " is one of the file's. */
static bool shows_text(const char *msg) {
  for (const char *v = msg; (v = strstr(v, "value ")) != NULL; v++)
    if (v[6] >= '0' && v[6] <= '9') return true;
  return false;
}

static void check_hidden(const char *path, int rc, const struct profile *loaded) {
  struct profile pr;
  char err[2048] = "";
  int hidden_rc = profile_load_flags(&pr, path, INPUT_HIDE_CONTENT | INPUT_REGULAR_ONLY, err, sizeof err);
  bool same = hidden_rc == rc && (rc != 0 || memcmp(pr.p, loaded->p, sizeof pr.p) == 0);
  if (!same || (rc != 0 && (strncmp(err, path, strlen(path)) != 0 || shows_text(err)))) {
    fprintf(stderr, "as a case's file: exit code %d (not %d), message '%s'\n", hidden_rc, rc, err);
    abort();
  }
  profile_free(&pr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_names_special_files(data, size)) return 0;
  const char *path = fuzz_file(data, size, "profile.json");
  struct profile pr;
  char err[2048] = "";
  int rc = profile_load(&pr, path, err, sizeof err);
  if (rc != 0) fuzz_check_message(rc, err, path, EXIT_BADINPUT, EXIT_BADINPUT);
  else (void)profile_vmx_caps(&pr);
  check_hidden(path, rc, &pr);
  profile_free(&pr);
  if (rc == 0) {
    fuzz_replay("shadowcache+lazydr", path, NULL, 0);
    fuzz_replay("ept+cr4mask", path, NULL, 0);
  }
  return 0;
}
