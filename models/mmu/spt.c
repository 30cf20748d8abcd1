/* The shadow page pool: hash, bounded allocation, FIFO/LRU eviction, links. */
#include "spt.h"
#include "models/alloc.h"

#include <stdlib.h>
#include <string.h>

static uint32_t bucket_of(const struct spt_pool *p, const struct gpt_key *k, unsigned level, unsigned q) {
  uint64_t h = gpt_key_hash(k) ^ ((uint64_t)level << 8 | q) * 0x2545f4914f6cdd1dull;
  return (uint32_t)(h >> 32) & (p->nbuckets - 1);
}

void spt_init(struct spt_pool *p, uint32_t cap, bool lru, bool refill, uint32_t low, uint32_t high,
              spt_evict_fn on_evict, void *arg) {
  memset(p, 0, sizeof *p);
  p->cap = cap ? cap : 1;
  p->page = xcalloc(p->cap, sizeof *p->page);
  for (p->nbuckets = 16; p->nbuckets < 2 * p->cap; p->nbuckets *= 2) {}
  p->bucket = xmalloc(p->nbuckets * sizeof *p->bucket);
  for (uint32_t i = 0; i < p->nbuckets; i++) p->bucket[i] = SPT_NONE;
  for (uint32_t i = 0; i < p->cap; i++) p->page[i].hnext = i + 1 < p->cap ? i + 1 : SPT_NONE;
  p->free_head = 0;
  p->oldest = p->newest = SPT_NONE;
  p->next_serial = 1;
  p->gen = 1;
  p->lru = lru;
  p->refill = refill;
  p->refill_low = low;
  p->refill_high = high < p->cap ? high : p->cap;
  p->on_evict = on_evict;
  p->evict_arg = arg;
}

void spt_destroy(struct spt_pool *p) {
  for (uint32_t i = 0; i < p->cap; i++) free(p->page[i].links);
  free(p->page);
  free(p->bucket);
  memset(p, 0, sizeof *p);
}

uint32_t spt_find(const struct spt_pool *p, const struct gpt_key *k, unsigned level, unsigned q) {
  for (uint32_t s = p->bucket[bucket_of(p, k, level, q)]; s != SPT_NONE; s = p->page[s].hnext) {
    const struct spt_page *pg = &p->page[s];
    if (pg->level == level && pg->quadrant == q && gpt_key_eq(&pg->gkey, k)) return s;
  }
  return SPT_NONE;
}

static void order_unlink(struct spt_pool *p, uint32_t s) {
  struct spt_page *pg = &p->page[s];
  if (pg->older != SPT_NONE) p->page[pg->older].newer = pg->newer; else p->oldest = pg->newer;
  if (pg->newer != SPT_NONE) p->page[pg->newer].older = pg->older; else p->newest = pg->older;
}

static void order_append(struct spt_pool *p, uint32_t s) {
  struct spt_page *pg = &p->page[s];
  pg->older = p->newest;
  pg->newer = SPT_NONE;
  if (p->newest != SPT_NONE) p->page[p->newest].newer = s; else p->oldest = s;
  p->newest = s;
}

void spt_touch(struct spt_pool *p, uint32_t s) {
  if (!p->lru || p->newest == s) return;
  order_unlink(p, s);
  order_append(p, s);
}

void spt_free(struct spt_pool *p, uint32_t s) {
  struct spt_page *pg = &p->page[s];
  uint32_t *link = &p->bucket[bucket_of(p, &pg->gkey, pg->level, pg->quadrant)];
  while (*link != s) link = &p->page[*link].hnext;
  *link = pg->hnext;
  order_unlink(p, s);
  struct spt_link *links = pg->links;
  memset(pg, 0, sizeof *pg);
  pg->links = links;                   /* keep the allocation; cleared on reuse */
  pg->hnext = p->free_head;
  p->free_head = s;
  p->used--;
  p->gen++;
}

/* The oldest page that is not pinned, or SPT_NONE. */
static uint32_t oldest_unpinned(const struct spt_pool *p) {
  for (uint32_t s = p->oldest; s != SPT_NONE; s = p->page[s].newer)
    if (!p->page[s].pins) return s;
  return SPT_NONE;
}

static bool evict_one(struct spt_pool *p) {
  uint32_t victim = oldest_unpinned(p);
  if (victim == SPT_NONE) return false;
  if (p->on_evict) p->on_evict(p->evict_arg, p, victim);
  spt_free(p, victim);
  return true;
}

void spt_reserve(struct spt_pool *p, uint32_t n) {
  /* 2007 KVM (make_mmu_pages_available): whenever fewer than refill_low pages
  ** are free, zap the oldest until refill_high are free. */
  uint32_t low = p->refill && p->refill_low > n ? p->refill_low : n;
  uint32_t target = p->refill && p->refill_high > n ? p->refill_high : n;
  if (target > p->cap) target = p->cap;
  if (p->cap - p->used >= low) return;
  while (p->cap - p->used < target && evict_one(p)) {}
}

uint32_t spt_alloc(struct spt_pool *p, const struct gpt_key *k, unsigned level, unsigned q) {
  if (p->free_head == SPT_NONE) return SPT_NONE;
  uint32_t s = p->free_head;
  struct spt_page *pg = &p->page[s];
  p->free_head = pg->hnext;
  pg->gkey = *k;
  pg->level = (uint8_t)level;
  pg->quadrant = (uint8_t)q;
  pg->live = true;
  pg->pins = 0;
  pg->writes = 0;
  pg->serial = p->next_serial++;
  memset(pg->present, 0, sizeof pg->present);
  if (level > 1) {
    if (!pg->links) pg->links = xmalloc(SPT_ENTRIES * sizeof *pg->links);
    memset(pg->links, 0, SPT_ENTRIES * sizeof *pg->links);
  }
  uint32_t b = bucket_of(p, k, level, q);
  pg->hnext = p->bucket[b];
  p->bucket[b] = s;
  order_append(p, s);
  p->used++;
  p->gen++;
  return s;
}

bool spt_linked(const struct spt_pool *p, uint32_t parent, unsigned entry, uint32_t child) {
  const struct spt_link *l = &p->page[parent].links[entry];
  return l->slot == child && l->serial == p->page[child].serial && p->page[child].live;
}

void spt_link(struct spt_pool *p, uint32_t parent, unsigned entry, uint32_t child) {
  p->page[parent].links[entry] = (struct spt_link){ child, p->page[child].serial };
  p->gen++;
}

bool spt_leaf_present(const struct spt_pool *p, uint32_t s, unsigned e) {
  return p->page[s].present[e / 64] >> (e % 64) & 1;
}

void spt_leaf_set(struct spt_pool *p, uint32_t s, unsigned e, bool present) {
  uint64_t bit = 1ull << (e % 64);
  if (present) p->page[s].present[e / 64] |= bit; else p->page[s].present[e / 64] &= ~bit;
  p->gen++;
}

void spt_print(const struct spt_pool *p, FILE *f, unsigned oldest_n) {
  unsigned pinned = 0, pages = 0, by_level[5] = { 0 };
  for (uint32_t s = p->oldest; s != SPT_NONE; s = p->page[s].newer) {
    pages++;
    pinned += p->page[s].pins > 0;
    by_level[p->page[s].level < 5 ? p->page[s].level : 0]++;
  }
  fprintf(f, "shadow pool: %u of %u pages used (%s%s), %u pinned; by level: L1 %u, L2 %u, L3 %u, L4 %u\n",
          p->used, p->cap, p->lru ? "LRU" : "FIFO", p->refill ? ", refill" : "", pinned,
          by_level[1], by_level[2], by_level[3], by_level[4]);
  unsigned i = 0;
  uint32_t s;
  for (s = p->oldest; s != SPT_NONE && i < oldest_n; s = p->page[s].newer, i++) {
    const struct spt_page *pg = &p->page[s];
      if (pg->gkey.owner)
      fprintf(f, "  #%-6llu L%u q%u user table of cr3 0x%llx, index 0x%llx%s\n", (unsigned long long)pg->serial,
              pg->level, pg->quadrant, (unsigned long long)pg->gkey.owner, (unsigned long long)pg->gkey.index,
              pg->pins ? " (pinned root)" : "");
    else
      fprintf(f, "  #%-6llu L%u q%u kernel table shared by all, index 0x%llx\n", (unsigned long long)pg->serial,
              pg->level, pg->quadrant, (unsigned long long)pg->gkey.index);
  }
  if (s != SPT_NONE) fprintf(f, "  ... %u more (the %u oldest are listed)\n", pages - i, i);
}
