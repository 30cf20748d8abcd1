/* prevroots: modern KVM's previous-roots cache (kvm_mmu_new_pgd and
** cached_root_find_and_keep_current, arch/x86/kvm/mmu/mmu.c): besides the
** current root, up to prev_roots earlier ones stay pinned, most recent first,
** so a switch back to one of them needs no root lookup or build.  A hit makes
** it current and the old current the most recent previous root; a miss keeps
** the old current as the most recent previous root, dropping the least recent
** when prev_roots are already kept. */
#include "mmu_int.h"

#include <string.h>

void roots_drop_prev(struct mmu *m, struct mmu_vcpu *mv) {
  for (unsigned i = 0; i < mv->nprev; i++) roots_pin(m, &mv->prev[i], -1);
  mv->nprev = 0;
}

static void push_prev(struct mmu_vcpu *mv, const struct root_set *r) {
  memmove(&mv->prev[1], &mv->prev[0], mv->nprev * sizeof *mv->prev);
  mv->prev[0] = *r;
  mv->nprev++;
}

static bool reuse(struct mmu *m, struct mmu_vcpu *mv, uint64_t cr3) {
  unsigned keep = m->pol->prev_roots < MAX_PREV ? m->pol->prev_roots : MAX_PREV;
  for (unsigned i = 0; i < mv->nprev; i++) {
    if (mv->prev[i].cr3 != cr3 || !roots_live(m, &mv->prev[i])) continue;
    struct root_set hit = mv->prev[i];
    memmove(&mv->prev[i], &mv->prev[i + 1], (mv->nprev - i - 1) * sizeof *mv->prev);
    mv->nprev--;
    if (mv->cur.used) push_prev(mv, &mv->cur);
    mv->cur = hit;
    return true;
  }
  if (!mv->cur.used || keep == 0) return false;
  if (mv->nprev == keep) roots_pin(m, &mv->prev[--mv->nprev], -1);
  push_prev(mv, &mv->cur);
  memset(&mv->cur, 0, sizeof mv->cur);
  return false;
}

const struct root_scheme roots_prev = { "prevroots", NULL, reuse };
