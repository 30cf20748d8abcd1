/* nocache: KVM before its January 2007 "mmu" branch dropped every shadow page
** on each guest CR3 switch it handled, so each address space's tables were
** rebuilt, fault by fault, after every switch (costs recorded in the kvm-devel
** thread "mmu optimizations branch", January 2007). */
#include "mmu_int.h"

#include <string.h>

static void zap_everything(struct mmu *m, struct work *w) {
  for (unsigned i = 0; i < m->nvcpu; i++) {
    roots_drop_prev(m, &m->v[i]);
    roots_pin(m, &m->v[i].cur, -1);
    memset(&m->v[i].cur, 0, sizeof m->v[i].cur);
    m->v[i].roots_ok_gen = 0;
  }
  for (uint32_t s = m->sh.pool.oldest, next; s != SPT_NONE; s = next) {
    next = m->sh.pool.page[s].newer;
    shadow_note_zap(m, &m->sh.pool.page[s], w);
    spt_free(&m->sh.pool, s);
  }
}

const struct root_scheme roots_nocache = { "nocache", zap_everything, NULL };
