/* The shadow page pool: one shadow page per (guest page-table page, role),
** found through a hash, allocated from a bounded pool and evicted oldest
** first (FIFO by allocation, as January 2007 KVM) or least recently used
** (knob).  Pinned pages (roots in use) are never evicted.
**
** Contract: spt_find never changes the order; under LRU spt_touch makes a
** page most recently used (a no-op under FIFO).  spt_reserve evicts as the
** policy says before a fault handler allocates (as KVM frees pages before it
** walks), reporting each eviction through the callback so that the caller can
** charge the zap and clear CR3-cache entries that named an evicted root;
** spt_alloc itself never evicts.
*/
#ifndef VMXSIM_SPT_H
#define VMXSIM_SPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "gpt.h"

#define SPT_ENTRIES 512
#define SPT_NONE UINT32_MAX

/* A link from a non-leaf entry to a child shadow page.  The serial detects a
** child that was zapped and whose slot was reused: such a link is absent. */
struct spt_link {
  uint32_t slot;
  uint64_t serial;
};

struct spt_page {
  struct gpt_key gkey;
  uint8_t level, quadrant;
  bool live;
  uint32_t pins;                  /* roots in use by vCPUs or kept as previous roots */
  uint64_t serial;                /* unique per allocation, never 0 */
  uint32_t hnext;                 /* hash chain */
  uint32_t older, newer;          /* replacement order (oldest first) */
  uint32_t writes;                /* consecutive trapped guest writes (flood detection) */
  struct spt_link *links;         /* level > 1: SPT_ENTRIES links */
  uint64_t present[SPT_ENTRIES / 64];   /* level 1: installed leaf entries */
};

struct spt_pool;
/* Called for each page evicted to make room, before it is freed. */
typedef void (*spt_evict_fn)(void *arg, struct spt_pool *p, uint32_t slot);

struct spt_pool {
  struct spt_page *page;          /* [cap] */
  uint32_t cap, used;
  uint32_t *bucket;               /* [nbuckets] hash heads */
  uint32_t nbuckets;
  uint32_t free_head;             /* free slots, chained through hnext */
  uint32_t oldest, newest;        /* replacement list */
  uint64_t next_serial;
  uint64_t gen;                   /* bumped by every change of a page, link or leaf entry (never 0) */
  bool lru, refill;
  uint32_t refill_low, refill_high;
  spt_evict_fn on_evict;
  void *evict_arg;
};

void spt_init(struct spt_pool *p, uint32_t cap, bool lru, bool refill, uint32_t low, uint32_t high,
              spt_evict_fn on_evict, void *arg);
void spt_destroy(struct spt_pool *p);
/* The live page for (gkey, level, quadrant), or SPT_NONE. */
uint32_t spt_find(const struct spt_pool *p, const struct gpt_key *k, unsigned level, unsigned quadrant);
/* Ensures n free pages (refill rule when enabled), evicting oldest unpinned. */
void spt_reserve(struct spt_pool *p, uint32_t n);
/* A new page, or SPT_NONE when no page is free. */
uint32_t spt_alloc(struct spt_pool *p, const struct gpt_key *k, unsigned level, unsigned quadrant);
/* Frees a page (its parents' links to it become absent through the serial). */
void spt_free(struct spt_pool *p, uint32_t slot);
void spt_touch(struct spt_pool *p, uint32_t slot);   /* most recently used (LRU only) */

/* Links and leaf entries. */
bool spt_linked(const struct spt_pool *p, uint32_t parent, unsigned entry, uint32_t child);
void spt_link(struct spt_pool *p, uint32_t parent, unsigned entry, uint32_t child);
bool spt_leaf_present(const struct spt_pool *p, uint32_t slot, unsigned entry);
void spt_leaf_set(struct spt_pool *p, uint32_t slot, unsigned entry, bool present);

void spt_print(const struct spt_pool *p, FILE *f, unsigned oldest_n);

#endif
