/* Memory for large buffers written once each, backed by transparent huge
** pages where the kernel gives them.
**
** A page's first touch is a page fault, and where the operating system itself
** runs in a virtual machine a fault can cost 10-15 us (each goes through the
** hypervisor): the percentile samples of a summary's rows (80 KiB each, grown
** by realloc) and its buffers cost about a thousand of them, more time than
** either of its threads spends on a tenth of its exits (docs/performance.md).
** A chunk is HUGEMEM_CHUNK bytes, aligned to it, and madvise(MADV_HUGEPAGE)
** asks for one 2 MiB page there: one fault instead of 512.  Where the kernel
** has no transparent huge pages ("never"), the chunk is ordinary memory, as
** malloc's would be.
**
** An arena's first chunk is 128 KiB of ordinary pages, so that a short run
** (a test's, the REPL's) does not have a huge page zeroed for a few rows.
** An arena hands out pieces (cache-line aligned, zeroed) that live as long as
** it does; it is freed whole.  One thread at a time uses an arena.  A
** sanitizer build (VMXSIM_SANITIZER) gives each piece its own heap block
** instead, so that an overrun is caught as in malloc's memory. */
#ifndef VMXSIM_HUGEMEM_H
#define VMXSIM_HUGEMEM_H

#include <stddef.h>

#define HUGEMEM_CHUNK ((size_t)2 << 20)

struct huge_chunk;
struct huge_arena {
  struct huge_chunk *chunks;  /* the mappings, newest first */
  unsigned char *cur;         /* the newest chunk's free part */
  size_t left;
};

/* n bytes from a (a new chunk when the newest has no room; a piece larger
** than a chunk gets a mapping of its own); exits as xmalloc does when memory
** cannot be had. */
void *huge_alloc(struct huge_arena *a, size_t n);
void huge_arena_free(struct huge_arena *a);

#endif
