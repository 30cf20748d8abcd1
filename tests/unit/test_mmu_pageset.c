/* The EPT mapped-page set (models/mmu/pageset.h): a long touch takes a range,
** not a page each, and the set answers as a plain set of pages does, alone
** and under the EPT policy (violations, frames, EPT paging-structure pages). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/mmu/gpt.h"
#include "models/mmu/hset.h"
#include "models/mmu/pageset.h"
#include "models/vmx/exit_reason.h"
#include "sim/replay/engine.h"
#include "mmu_vm.h"

/* ---- the reference: every page kept, exactly ---- */

struct ref {
  struct gpt_key *key;         /* level 0xff: empty */
  size_t cap, used;
};

static void ref_init(struct ref *r) {
  r->cap = 1 << 10;
  r->used = 0;
  r->key = malloc(r->cap * sizeof *r->key);
  memset(r->key, 0xff, r->cap * sizeof *r->key);
}

static size_t ref_slot(const struct ref *r, const struct gpt_key *k) {
  uint64_t h = (k->owner * 31 + k->index) * 0x9e3779b97f4a7c15ull + k->level;
  return (size_t)(h >> 20) & (r->cap - 1);
}

static bool ref_add(struct ref *r, const struct gpt_key *k);

static void ref_grow(struct ref *r) {
  struct ref old = *r;
  r->cap *= 2;
  r->used = 0;
  r->key = malloc(r->cap * sizeof *r->key);
  memset(r->key, 0xff, r->cap * sizeof *r->key);
  for (size_t i = 0; i < old.cap; i++)
    if (old.key[i].level != 0xff) ref_add(r, &old.key[i]);
  free(old.key);
}

/* true if k was not there */
static bool ref_add(struct ref *r, const struct gpt_key *k) {
  if (2 * (r->used + 1) > r->cap) ref_grow(r);
  size_t i = ref_slot(r, k);
  for (; r->key[i].level != 0xff; i = (i + 1) & (r->cap - 1))
    if (gpt_key_eq(&r->key[i], k)) return false;
  r->key[i] = *k;
  r->used++;
  return true;
}

static uint64_t rnd(uint64_t *seed) {
  *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
  return *seed >> 33;
}

/* ---- the set alone ---- */

static void a_hash_set_finds_every_key_left_after_removals(void **state) {
  (void)state;
  struct hset s;
  hset_init(&s);
  /* keys 1..4000 (and 0, stored as ~0): clusters form, then half go in a random order */
  for (uint64_t k = 0; k <= 4000; k++) assert_true(hset_add(&s, k * 0x10001));
  uint64_t seed = 7, removed = 0;
  bool *gone = calloc(4001, 1);
  for (unsigned i = 0; i < 6000; i++) {
    uint64_t k = rnd(&seed) % 4001;
    assert_int_equal(hset_remove(&s, k * 0x10001), !gone[k]);
    removed += !gone[k];
    gone[k] = true;
  }
  unsigned wrong = 0;
  for (uint64_t k = 0; k <= 4000; k++) wrong += hset_has(&s, k * 0x10001) == gone[k];
  print_message("%llu keys removed, %llu left (expected %llu); %u answers wrong (expected 0)\n",
                (unsigned long long)removed, (unsigned long long)s.used, (unsigned long long)(4001 - removed), wrong);
  assert_int_equal(wrong, 0);
  assert_int_equal(s.used, 4001 - removed);
  free(gone);
  hset_free(&s);
}

/* Adds the pages an EPT walk of every page of a touch reads, in its order
** (the guest tables from the root down, then the data page); counts the new ones. */
static uint64_t add_touch(struct pageset *s, unsigned paging, uint64_t cr3, uint64_t va, uint64_t pages) {
  uint64_t added = 0;
  for (uint64_t i = 0; i < pages; i++, va += 4096) {
    for (unsigned level = gpt_guest_levels(paging); level >= 1; level--) {
      struct gpt_key k = gpt_table_of(paging, cr3, va, level);
      added += pageset_add(s, &k);
    }
    struct gpt_key d = gpt_data_key(paging, cr3, va);
    added += pageset_add(s, &d);
  }
  return added;
}

static void a_touch_of_2_20_pages_takes_two_ranges_not_a_page_each(void **state) {
  (void)state;
  struct pageset s;
  pageset_init(&s);
  size_t empty = pageset_bytes(&s);
  /* 2^20 data pages from 1 TiB: 2048 guest page tables, 4 directories, 1 PDPT and the root */
  uint64_t added = add_touch(&s, PAGING_64, 0x1000, 1ull << 40, 1u << 20);
  print_message("one touch of 2^20 pages: %llu pages, %u ranges, %llu pages alone, %zu bytes (%zu empty)\n",
                (unsigned long long)pageset_pages(&s), pageset_ranges(&s), (unsigned long long)pageset_alone(&s),
                pageset_bytes(&s), empty);
  assert_int_equal(added, (1u << 20) + 2048 + 4 + 1 + 1);
  assert_int_equal(pageset_pages(&s), added);
  assert_int_equal(pageset_ranges(&s), 2);                /* the data pages, the page tables */
  assert_int_equal(pageset_alone(&s), 4 + 1 + 1);
  assert_int_equal(pageset_bytes(&s), empty + 16 * sizeof(struct pageset_range));
  /* seven more, as the review's trace has them: still a few ranges */
  for (uint64_t r = 2; r <= 8; r++) added += add_touch(&s, PAGING_64, 0x1000, r << 40, 1u << 20);
  print_message("eight touches: %llu pages, %u ranges, %zu bytes\n", (unsigned long long)pageset_pages(&s),
                pageset_ranges(&s), pageset_bytes(&s));
  assert_int_equal(added, 8 * ((1u << 20) + 2048 + 4 + 1) + 1);
  assert_int_equal(pageset_ranges(&s), 16);
  assert_true(pageset_bytes(&s) < 64 * 1024);
  /* all mapped now: nothing is added again, from the start or the middle */
  assert_int_equal(add_touch(&s, PAGING_64, 0x1000, 1ull << 40, 4096), 0);
  assert_int_equal(add_touch(&s, PAGING_64, 0x1000, (5ull << 40) + (12345ull << 12), 70000), 0);
  pageset_free(&s);
}

/* Runs of pages of one stream (owner, level), as touches make them: a few
** at once, taking turns (as a walk adds data pages and page tables), of 1 to
** 3000 pages, mostly upwards, often over pages added before; 72 streams, more
** than the set follows. */
struct cursor { struct gpt_key k; uint64_t left; bool down; };

static struct gpt_key random_page(uint64_t *seed, struct cursor *c) {
  c += rnd(seed) % 3;
  if (!c->left) {
    static const uint64_t lengths[] = { 1, 2, 5, 15, 16, 17, 40, 600, 3000 };
    c->k.owner = rnd(seed) % 24 * 0x1000;
    c->k.level = (uint8_t)(rnd(seed) % 3);
    c->k.index = 4000 + rnd(seed) % 30000;
    c->left = 1 + rnd(seed) % lengths[rnd(seed) % 9];
    c->down = rnd(seed) % 10 == 0;
  }
  struct gpt_key k = c->k;
  c->k.index += c->down ? -1ull : 1;
  c->left--;
  if (rnd(seed) % 50 == 0) c->k.index += 1 + rnd(seed) % 20;    /* a gap */
  return k;
}

static void random_pages_get_the_answers_of_a_set_of_pages(void **state) {
  (void)state;
  for (uint64_t round = 1; round <= 6; round++) {
    struct pageset s;
    struct ref r;
    pageset_init(&s);
    ref_init(&r);
    uint64_t seed = round, wrong = 0, added = 0;
    struct cursor c[3] = { { .left = 0 } };
    for (unsigned i = 0; i < 300000; i++) {
      struct gpt_key k = random_page(&seed, c);
      bool want = ref_add(&r, &k);
      added += want;
      wrong += pageset_add(&s, &k) != want;
    }
    print_message("round %llu: %llu pages (reference %llu), %u ranges, %llu alone, %zu bytes; %llu answers wrong (expected 0)\n",
                  (unsigned long long)round, (unsigned long long)pageset_pages(&s), (unsigned long long)added,
                  pageset_ranges(&s), (unsigned long long)pageset_alone(&s), pageset_bytes(&s),
                  (unsigned long long)wrong);
    assert_int_equal(wrong, 0);
    assert_int_equal(pageset_pages(&s), added);
    assert_true(pageset_ranges(&s) > 0);
    /* every page in a range or alone, counted once */
    uint64_t in_ranges = 0;
    for (uint32_t i = 0; i < pageset_ranges(&s); i++) in_ranges += s.range[i].hi - s.range[i].lo;
    assert_int_equal(in_ranges + pageset_alone(&s), added);
    free(r.key);
    pageset_free(&s);
  }
}

/* ---- under the EPT policy ---- */

/* Frames are handed out in order from EPT_FIRST_GFN; the old model kept a set
** of the EPT paging-structure pages (the root, then one per level and 2^(9 x
** level) frames): their count for `frames` frames. */
static uint64_t ept_tables_for(uint64_t frames) {
  uint64_t first = EPT_FIRST_GFN, last = EPT_FIRST_GFN + frames - 1, n = 1;
  for (unsigned level = 1; level <= 3; level++) n += (last >> (9 * level)) - (first >> (9 * level)) + 1;
  return n;
}

static void random_touches_under_ept_violate_as_with_a_set_of_pages(void **state) {
  (void)state;
  static const unsigned pagings[] = { PAGING_64, PAGING_PAE, PAGING_32 };
  static const uint64_t bases[] = { USER_CODE, 0x7ffff7a3e000ull, KERNEL_TEXT, 0xffff888010000000ull, 0xbffde000ull,
                                    0xc0000000ull, 0x10000000000ull };
  for (unsigned p = 0; p < 3; p++) {
    unsigned paging = pagings[p];
    struct vm vm;
    struct ref r;
    vm_start(&vm, "ept", NULL, 0, paging);
    ref_init(&r);
    ev(&vm, EV_INIT, 4, 0, 0);                 /* no CR4.PGE: a TLB hit is a page walked in this address space */
    uint64_t seed = 11 + p, cr3 = space(0), want = 0, touches = 0;
    init_cr3(&vm, cr3);
    for (unsigned i = 0; i < 600; i++) {
      if (rnd(&seed) % 8 == 0) {
        cr3 = space((unsigned)(rnd(&seed) % 3));
        cr3w(&vm, cr3);
        continue;
      }
      uint64_t va = bases[rnd(&seed) % 7] + (rnd(&seed) % 4000) * 4096ull;
      uint64_t shape = rnd(&seed) % 4;
      uint64_t pages = shape == 0 ? 1 + rnd(&seed) % 4 : shape == 1 ? 1 + rnd(&seed) % 40 : 1 + rnd(&seed) % 3000;
      if (paging != PAGING_64) va &= 0xffffffffull;
      touch(&vm, va, pages);
      touches += pages;
      for (uint64_t j = 0; j < pages; j++) {
        uint64_t a = va + j * 4096;
        for (unsigned level = gpt_guest_levels(paging); level >= 1; level--) {
          struct gpt_key k = gpt_table_of(paging, cr3, a, level);
          want += ref_add(&r, &k);
        }
        struct gpt_key d = gpt_data_key(paging, cr3, a);
        want += ref_add(&r, &d);
      }
    }
    engine_settle(&vm.e);
    char *text = shadow_text(&vm), expect[128];
    snprintf(expect, sizeof expect, "EPT: %llu guest frames mapped, %llu EPT paging-structure pages\n",
             (unsigned long long)want, (unsigned long long)ept_tables_for(want));
    print_message("%u-level guest, %llu pages touched: %llu violations (expected %llu)\n  actual   %s  expected %s",
                  gpt_guest_levels(paging), (unsigned long long)touches,
                  (unsigned long long)ctr(&vm, CTR_EPT_VIOLATIONS), (unsigned long long)want, text, expect);
    assert_int_equal(ctr(&vm, CTR_EPT_VIOLATIONS), want);
    assert_int_equal(exits(&vm, EXIT_REASON_EPT_VIOLATION), want);
    assert_string_equal(text, expect);
    free(text);
    free(r.key);
    vm_stop(&vm);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(a_hash_set_finds_every_key_left_after_removals),
    cmocka_unit_test(a_touch_of_2_20_pages_takes_two_ranges_not_a_page_each),
    cmocka_unit_test(random_pages_get_the_answers_of_a_set_of_pages),
    cmocka_unit_test(random_touches_under_ept_violate_as_with_a_set_of_pages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
