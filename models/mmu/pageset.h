/* The guest pages mapped in EPT (mmu_ept.c), held as runs of pages rather
** than page by page.
**
** A page is named by its struct gpt_key: owner (an address space's CR3, or the
** kernel half all address spaces share), level (0 a data page, 1-4 a guest
** page-table page) and index (the page number, or the range a table maps).
** One 24-byte touch record may name 2^20 pages, each mapped on its first
** touch; a set of pages grew by 50 MB a record.  Here pages of one owner and
** level first touched one after the other at consecutive indices -- a long
** touch's data pages, and the guest page tables under them -- become one
** range once PAGESET_RUN_MIN of them came in a row, and the range grows while
** they go on; other pages are kept one by one in a hash set.
**
** Memory: a range takes 40 bytes whatever its length, a page kept alone 16 to
** 32 (the hash set is at most half full).  Pages are only ever added, so a
** touch record's new pages of one owner and level come in increasing order
** and form one run, or one run per gap it fills between pages mapped before;
** a run is a range or fewer than PAGESET_RUN_MIN pages.  Since every gap
** filled was opened by an earlier record, a trace holds at most about two
** runs per record and level (a data page and up to four table levels), so
** the set's memory grows with the records, not with the pages they name.
** (Runs are noticed by PAGESET_STREAKS streaks, one per owner and level most
** recently added to; a touch adds to at most five, nine when it crosses into
** the kernel half, so none is lost within a record.)
**
** The answers are those of a plain set of pages keyed by gpt_key_hash, as
** EPT's set was: a page kept alone is looked up by that hash, and a page in a
** range by its exact key.  (So two pages whose 64-bit hashes collide, about
** 2^-64 a pair, were taken as one before and still are when both are kept
** alone.) */
#ifndef VMXSIM_PAGESET_H
#define VMXSIM_PAGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpt.h"
#include "hset.h"

/* Pages in a row that make a range: shorter runs, as in the touches of a
** system-call or lat_ctx trace (1 to 9 pages), stay in the hash set, where a
** look-up is one probe; a page in a range costs a probe and the range memo
** (or a search of the ranges). */
#define PAGESET_RUN_MIN 16
#define PAGESET_STREAKS 16
#define PAGESET_SEEN_BITS 6
#define PAGESET_NONE UINT32_MAX

/* Pages lo..hi-1 of (owner, level): a node of a tree ordered by (owner,
** level, lo) and balanced by height (AVL), in an array. */
struct pageset_range {
  uint64_t owner, lo, hi;
  uint32_t left, right;
  uint8_t level, height;
};

/* New pages of one owner and level added at consecutive indices: start..next-1. */
struct pageset_streak {
  uint64_t owner, start, next;
  uint64_t used;               /* when last added to (the least recent is replaced); 0: free */
  uint8_t level;
};

/* A range found by a look-up, remembered by owner, level and 2 MiB of
** indices: a touch's pages go on in the same range.  A copy may be smaller
** than the range is now (ranges only grow), never wrong. */
struct pageset_seen {
  uint64_t owner, lo, hi;
  uint8_t level;
};

struct pageset {
  struct hset alone;           /* pages outside any range, by gpt_key_hash */
  struct pageset_range *range;
  uint32_t nrange, range_cap, root;
  struct pageset_streak streak[PAGESET_STREAKS];
  uint64_t clock;              /* for the streaks' LRU */
  struct pageset_seen seen[1u << PAGESET_SEEN_BITS];
  uint64_t pages;              /* pages in the set */
};

void pageset_init(struct pageset *s);
void pageset_free(struct pageset *s);
/* Adds the page; true if it was not there before. */
bool pageset_add(struct pageset *s, const struct gpt_key *k);
/* Pages in the set, ranges it holds, pages kept alone, bytes it holds. */
static inline uint64_t pageset_pages(const struct pageset *s) { return s->pages; }
static inline uint32_t pageset_ranges(const struct pageset *s) { return s->nrange; }
static inline uint64_t pageset_alone(const struct pageset *s) { return s->alone.used; }
size_t pageset_bytes(const struct pageset *s);

#endif
