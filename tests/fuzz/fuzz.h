/* What every libFuzzer harness in tests/fuzz/ shares (docs/testing.md).
**
** libFuzzer hands a harness an exact-length buffer; the harnesses keep it so:
** a parser that takes (buf, len) gets libFuzzer's own bytes, one that takes a
** C string gets a copy of exactly len bytes plus its terminating NUL, and one
** that reads a file gets a file of exactly those bytes.  Nothing is padded,
** so a one-byte over-read is AddressSanitizer's to see.
**
** A harness aborts (a finding) when a parser breaks its own contract: an
** accepted input whose result is inconsistent, or a refusal with an exit code
** or message that the documentation does not allow. */
#ifndef VMXSIM_FUZZ_H
#define VMXSIM_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A malloc'd copy of data with a NUL after its size bytes. */
static inline char *fuzz_copy(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/* Calls fn on each line of the input (split at newlines, the newline
** dropped), as an exact copy with its NUL; a line holding a NUL is passed
** over (a C string cannot hold it). */
static inline void fuzz_each_line(const uint8_t *data, size_t size, void (*fn)(const char *line)) {
  for (size_t at = 0; at < size;) {
    const uint8_t *nl = memchr(data + at, '\n', size - at);
    size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
    if (!memchr(data + at, 0, len)) {
      char *line = fuzz_copy(data + at, len);
      fn(line);
      free(line);
    }
    at += len + (nl != NULL);
  }
}

/* The directory the harnesses write their input files into: $TMPDIR, else
** /dev/shm where it exists (memory, fast), else /tmp. */
static inline const char *fuzz_dir(void) {
  const char *t = getenv("TMPDIR");
  if (t && *t) return t;
  return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

/* The path of this process's file called name, in fuzz_dir() (static
** storage, one slot per name); every such file is removed at exit. */
#define FUZZ_FILES_MAX 8
static char fuzz_paths[FUZZ_FILES_MAX][512];
static inline void fuzz_remove_files(void) {
  for (int i = 0; i < FUZZ_FILES_MAX; i++)
    if (fuzz_paths[i][0]) unlink(fuzz_paths[i]);
}
static inline const char *fuzz_path(const char *name) {
  char want[512];
  snprintf(want, sizeof want, "%s/vmxsim-fuzz-%ld-%s", fuzz_dir(), (long)getpid(), name);
  for (int i = 0; i < FUZZ_FILES_MAX; i++) {
    if (!strcmp(fuzz_paths[i], want)) return fuzz_paths[i];
    if (!fuzz_paths[i][0]) {
      if (i == 0) atexit(fuzz_remove_files);
      memcpy(fuzz_paths[i], want, sizeof want);
      return fuzz_paths[i];
    }
  }
  abort();
}

/* Writes data, exactly, to this process's file called name; returns its path. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *name) {
  const char *path = fuzz_path(name);
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); abort(); }
  if ((size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) { perror(path); abort(); }
  return path;
}

/* A refusal must say where: the message starts with the input's name. */
static inline void fuzz_check_message(int rc, const char *err, const char *name, int allowed1, int allowed2) {
  if ((rc != allowed1 && rc != allowed2) || strncmp(err, name, strlen(name)) != 0) {
    fprintf(stderr, "refused with exit code %d and message '%s' (expected code %d or %d and a message "
                    "starting with '%s')\n", rc, err, allowed1, allowed2, name);
    abort();
  }
}

/* Inputs that name device and kernel files, which a parser would read whole
** as policy, profile or trace files: an endless /dev/zero is no finding.
** Checked in the bytes and, for JSON text, in every string once its escapes
** are decoded ("\u002fdev\u002fzero" is /dev/zero too). */
static inline int fuzz_special_text(const char *s, size_t n) {
  static const char *const prefixes[] = { "/dev", "/proc", "/sys" };
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    if (memmem(s, n, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}
static inline int fuzz_special_json(const cJSON *j) {
  for (; j; j = j->next) {
    if ((j->string && fuzz_special_text(j->string, strlen(j->string))) ||
        (cJSON_IsString(j) && j->valuestring && fuzz_special_text(j->valuestring, strlen(j->valuestring))) ||
        fuzz_special_json(j->child))
      return 1;
  }
  return 0;
}
static inline int fuzz_names_special_files(const uint8_t *data, size_t size) {
  if (fuzz_special_text((const char *)data, size)) return 1;
  cJSON *j = cJSON_ParseWithLength((const char *)data, size);
  int special = j && fuzz_special_json(j);
  cJSON_Delete(j);
  return special;
}

/* Quiets standard output for harnesses whose code under test prints (the
** REPL).  Standard error stays: libFuzzer and the sanitizers report there
** (FUZZ_VERBOSE=1 keeps standard output too). */
static inline void fuzz_quiet(void) {
  if (getenv("FUZZ_VERBOSE")) return;
  FILE *null = fopen("/dev/null", "w");
  if (!null) return;
  fflush(stdout);
  dup2(fileno(null), STDOUT_FILENO);
  fclose(null);
}

#endif
