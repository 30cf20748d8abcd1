/* Memory backed by transparent huge pages (hugemem.h). */
#define _GNU_SOURCE   /* MADV_HUGEPAGE */
#include "hugemem.h"
#include "util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct huge_chunk {
  struct huge_chunk *next;
  size_t len;                 /* the mapping's, this header included */
};

#define PIECE_ALIGN 64

#ifdef VMXSIM_SANITIZER
/* A sanitizer build gives each piece its own heap block, so that a write past
** a piece's end is caught as it is in malloc's memory. */
void *huge_alloc(struct huge_arena *a, size_t n) {
  struct huge_chunk *c = xcalloc(1, sizeof *c + n);
  c->len = n;
  c->next = a->chunks;
  a->chunks = c;
  return c + 1;
}

void huge_arena_free(struct huge_arena *a) {
  for (struct huge_chunk *c = a->chunks, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  memset(a, 0, sizeof *a);
}
#else
/* A mapping of len bytes (a multiple of HUGEMEM_CHUNK) aligned to HUGEMEM_CHUNK:
** more is mapped and the ends cut off, so that the kernel can back it with
** whole huge pages. */
static void *map_aligned(size_t len) {
  size_t over = len + HUGEMEM_CHUNK;
  unsigned char *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    errorf("out of memory (a mapping of %zu bytes)", over);
    exit(EXIT_INTERNAL);
  }
  uintptr_t start = ((uintptr_t)p + HUGEMEM_CHUNK - 1) & ~(uintptr_t)(HUGEMEM_CHUNK - 1);
  size_t head = start - (uintptr_t)p, tail = over - head - len;
  if (head) munmap(p, head);
  if (tail) munmap((unsigned char *)start + len, tail);
  (void)madvise((void *)start, len, MADV_HUGEPAGE);   /* advice: refused or ignored, the memory is as good */
  return (void *)start;
}

/* A small arena's first chunk (ordinary pages): a short run, a test's or the
** REPL's, touches a few of them rather than have a huge page zeroed. */
#define SMALL_CHUNK ((size_t)128 << 10)

static void *map_small(size_t len) {
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    errorf("out of memory (a mapping of %zu bytes)", len);
    exit(EXIT_INTERNAL);
  }
  return p;
}

void *huge_alloc(struct huge_arena *a, size_t n) {
  n = (n + PIECE_ALIGN - 1) & ~(size_t)(PIECE_ALIGN - 1);
  size_t head = (sizeof(struct huge_chunk) + PIECE_ALIGN - 1) & ~(size_t)(PIECE_ALIGN - 1);
  if (n > a->left) {
    bool small = !a->chunks && head + n <= SMALL_CHUNK;
    size_t len = small ? SMALL_CHUNK : (head + n + HUGEMEM_CHUNK - 1) & ~(HUGEMEM_CHUNK - 1);
    struct huge_chunk *c = small ? map_small(len) : map_aligned(len);
    c->len = len;
    c->next = a->chunks;
    a->chunks = c;
    a->cur = (unsigned char *)c + head;
    a->left = len - head;
  }
  void *p = a->cur;
  a->cur += n;
  a->left -= n;
  return p;
}

void huge_arena_free(struct huge_arena *a) {
  for (struct huge_chunk *c = a->chunks, *next; c; c = next) {
    next = c->next;
    munmap(c, c->len);
  }
  memset(a, 0, sizeof *a);
}
#endif
