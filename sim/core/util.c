/* Shared helpers: error messages, strict number parsing, allocation. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("vmxsim: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

bool parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end) return false;
  *out = v;
  return true;
}

bool parse_double(const char *s, double *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end) return false;
  *out = v;
  return true;
}

char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) buf = xrealloc(buf, cap *= 2);
  }
  int err = ferror(f);
  fclose(f);
  if (err) { free(buf); errno = EIO; return NULL; }
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}
