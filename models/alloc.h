/* Allocation for the models and everything above them: a failed allocation
** ends the process with status 70 (internal error: out of memory), so callers
** never handle NULL.  Zero-byte requests return a valid, unique pointer. */
#ifndef VMXSIM_ALLOC_H
#define VMXSIM_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
