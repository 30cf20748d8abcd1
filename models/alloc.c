/* Allocation that never returns NULL (see alloc.h). */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *check(void *p) {
  if (!p) {
    fputs("vmxsim: out of memory\n", stderr);
    exit(70);                      /* EXIT_INTERNAL in sim/base/util.h */
  }
  return p;
}
void *xmalloc(size_t n) { return check(malloc(n ? n : 1)); }
void *xcalloc(size_t n, size_t size) { return check(calloc(n ? n : 1, size ? size : 1)); }
void *xrealloc(void *p, size_t n) { return check(realloc(p, n ? n : 1)); }
char *xstrdup(const char *s) { return check(strdup(s)); }
