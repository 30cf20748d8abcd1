/* Shadow roots: finding or building the roots of the guest's address space on
** a CR3 switch, pinning them, and choosing the root-management scheme.
**
** The base scheme, shadowcache (KVM's "mmu" branch, January 2007), keeps
** shadow pages across switches: a switch looks the new address space's roots
** up in the pool (KVM mmu_alloc_roots -> kvm_mmu_get_page) and builds only the
** missing ones.  The other schemes add a hook each (struct root_scheme). */
#include "mmu_int.h"
#include "models/counters.h"

#include <string.h>

extern const struct root_scheme roots_nocache, roots_prev;
static const struct root_scheme roots_shadowcache = { "shadowcache", NULL, NULL };

static bool is_nocache(const struct policy *p)   { return !p->shadow_cache; }
static bool is_prevroots(const struct policy *p) { return p->prev_roots > 0; }

/* Which scheme the knobs select: the first row that matches, else shadowcache. */
static const struct {
  bool (*selects)(const struct policy *p);
  const struct root_scheme *scheme;
} scheme_table[] = {
  { is_nocache,   &roots_nocache },      /* shadow_cache=false: drop every shadow page on a switch */
  { is_prevroots, &roots_prev },         /* prev_roots=N: modern KVM's previous-roots cache */
};

const struct root_scheme *roots_scheme_for(const struct policy *p) {
  for (size_t i = 0; i < sizeof scheme_table / sizeof *scheme_table; i++)
    if (scheme_table[i].selects(p)) return scheme_table[i].scheme;
  return &roots_shadowcache;
}

void roots_pin(struct mmu *m, struct root_set *r, int delta) {
  if (!roots_live(m, r)) return;
  for (unsigned i = 0; i < m->sh.nroots; i++) m->sh.pool.page[r->slot[i]].pins += (uint32_t)delta;
}

/* Finds or builds the roots of address space cr3 (KVM mmu_alloc_roots).
** Returns true if every root was already in the pool. */
static bool build(struct mmu *m, uint64_t cr3, struct root_set *r, struct work *w) {
  bool all_found = true;
  spt_reserve(&m->sh.pool, m->sh.nroots);
  r->used = true;
  r->cr3 = cr3;
  for (unsigned i = 0; i < m->sh.nroots; i++) {
    struct gpt_step st;
    gpt_root(m->paging, cr3, i, &st);
    uint32_t s = spt_find(&m->sh.pool, &st.gkey, st.level, st.quadrant);
    if (s == SPT_NONE) {
      all_found = false;
      s = spt_alloc(&m->sh.pool, &st.gkey, st.level, st.quadrant);
      if (s != SPT_NONE) {
        m->ctr[CTR_SHADOW_ALLOCATED]++;
        if (w) work_add(w, PP_SHADOW_ALLOC, 1);
        shadow_note_new_page(m, &m->sh.pool.page[s], w);
      }
    }
    r->slot[i] = s;
    r->serial[i] = s == SPT_NONE ? 0 : m->sh.pool.page[s].serial;
    if (s != SPT_NONE) spt_touch(&m->sh.pool, s);
  }
  return all_found;
}

/* What GUEST_CR3 holds for a root set: its top-level shadow page, or under
** PAE-format shadows its page-directory-pointer table (mmu.h; a slot is below
** KNOB_POOL_MAX, and the mask keeps SPT_NONE, a root a full pool could not
** hold, in the range too). */
static uint64_t root_hpa(const struct mmu *m, const struct root_set *r) {
  if (m->sh.nroots > 1) return SHADOW_PDPT_HPA_BASE + (uint64_t)(r->slot[0] & (KNOB_POOL_MAX - 1)) * SHADOW_PDPT_BYTES;
  return SHADOW_ROOT_HPA_BASE + ((uint64_t)r->slot[0] << 12);
}

/* Makes cr3's roots current: reused by the scheme, or found or built. */
static void make_current(struct mmu *m, struct mmu_vcpu *mv, uint64_t cr3, bool exited, struct work *w) {
  if (exited && m->sh.roots->reuse && m->sh.roots->reuse(m, mv, cr3)) {
    m->ctr[CTR_ROOT_HITS]++;
    m->ctr[CTR_PREV_ROOT_HITS]++;
    for (unsigned i = 0; i < m->sh.nroots; i++) spt_touch(&m->sh.pool, mv->cur.slot[i]);   /* LRU: a root switch uses it */
    return;
  }
  if (mv->cur.used) roots_pin(m, &mv->cur, -1);
  struct work *charge = exited ? w : NULL;
  m->sh.evict_work = charge;
  bool found = build(m, cr3, &mv->cur, charge);
  m->sh.evict_work = NULL;
  roots_pin(m, &mv->cur, +1);
  if (exited) {
    work_add(w, PP_ROOT_SWITCH, 1);
    m->ctr[found ? CTR_ROOT_HITS : CTR_ROOT_MISSES]++;
  }
}

void roots_switch(struct mmu *m, const struct mmu_ctx *c, uint64_t cr3, bool exited, struct work *w) {
  struct mmu_vcpu *mv = &m->v[c->vcpu];
  mv->roots_ok_gen = 0;
  if (exited && m->sh.roots->on_cr3_exit) m->sh.roots->on_cr3_exit(m, w);
  if (mv->cur.cr3 == cr3 && roots_live(m, &mv->cur)) {
    if (exited) { m->ctr[CTR_ROOT_HITS]++; work_add(w, PP_ROOT_SWITCH, 1); }
    return;                              /* the roots GUEST_CR3 holds already */
  }
  make_current(m, mv, cr3, exited, w);
  m->sink->roots_loaded(m->sink, c->vcpu, cr3, root_hpa(m, &mv->cur), exited);
}

