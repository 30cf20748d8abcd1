/* Touch sets of Linux code paths (see kpages.h and workloads/README.md, "Touch sets"). */
#include "kpages.h"

static const unsigned group_pages[KG_COUNT] = {
#define X(e, n, s, d) n,
  KGROUPS(X)
#undef X
};
static const enum kscope group_scope[KG_COUNT] = {
#define X(e, n, s, d) s,
  KGROUPS(X)
#undef X
};

unsigned kpages_pages(enum kgroup k) { return group_pages[k]; }
enum kscope kpages_scope(enum kgroup k) { return group_scope[k]; }

/* Text groups lie one after the other from the kernel text base; each data
** group has a 32 MB region of the direct map from 128 MB on (room for 4096
** instances of 2 pages, and 18 groups stay inside a 32-bit guest's 896 MB of
** lowmem). */
#define DATA_BASE   0x08000000ull
#define DATA_REGION 0x02000000ull

uint64_t kpages_addr(const struct gen_layout *l, enum kgroup k, unsigned instance) {
  uint64_t text = 0, data = 0;
  for (unsigned i = 0; i < (unsigned)k; i++) {
    if (group_scope[i] == KS_TEXT) text += group_pages[i];
    else data++;
  }
  if (group_scope[k] == KS_TEXT) return l->ktext + (text << 12);
  return l->kdirect + DATA_BASE + data * DATA_REGION + ((uint64_t)instance * group_pages[k] << 12);
}

/* Touches of adjacent pages with the same access merge into one record (the
** text groups of a path lie one after the other), which keeps traces small. */
void kpages_touch(struct gen *g, unsigned vcpu, const struct gen_layout *l, uint64_t set, unsigned task,
                  unsigned obj, bool write) {
  uint64_t start = 0, pages = 0;
  bool start_write = false;
  for (unsigned k = 0; k < KG_COUNT; k++) {
    if (!(set >> k & 1)) continue;
    enum kscope s = group_scope[k];
    unsigned instance = s == KS_TASK ? task : s == KS_PIPE || s == KS_SOCKET ? obj : 0;
    uint64_t va = kpages_addr(l, (enum kgroup)k, instance);
    bool w = write && s != KS_TEXT;
    if (pages && va == start + (pages << 12) && w == start_write) {
      pages += group_pages[k];
      continue;
    }
    gen_touch(g, vcpu, start, pages, start_write);
    start = va, pages = group_pages[k], start_write = w;
  }
  gen_touch(g, vcpu, start, pages, start_write);
}

void kpages_meta(cJSON *meta, const struct gen_layout *l, uint64_t set, unsigned extra_user) {
  cJSON *t = cJSON_AddObjectToObject(meta, "touch_set");
  if (!t) return;
  cJSON_AddNumberToObject(t, "user_pages", gen_user_loop_pages(l) + extra_user);
  cJSON_AddNumberToObject(t, "kernel_text_pages", kpages_count(set, KS_TEXT));
  cJSON_AddNumberToObject(t, "kernel_global_pages", kpages_count(set, KS_GLOBAL));
  cJSON_AddNumberToObject(t, "kernel_pages_per_task", kpages_count(set, KS_TASK));
  cJSON_AddNumberToObject(t, "kernel_pages_per_pipe", kpages_count(set, KS_PIPE));
  cJSON_AddNumberToObject(t, "kernel_pages_per_socket", kpages_count(set, KS_SOCKET));
  cJSON_AddStringToObject(t, "source", "Linux 2.6.18 code paths, workloads/README.md 'Touch sets'");
}

unsigned kpages_count(uint64_t set, enum kscope scope) {
  unsigned n = 0;
  for (unsigned k = 0; k < KG_COUNT; k++)
    if ((set >> k & 1) && group_scope[k] == scope) n += group_pages[k];
  return n;
}

/* ---- page tables: which 2 MB regions a touch set spans ---- */

#define REGION_SHIFT 21            /* one shadow page table maps 2 MB (PAE and 64-bit format) */
#define REGIONS_MAX  256

struct regions { uint64_t key[REGIONS_MAX]; unsigned n; };

static void regions_add(struct regions *r, uint64_t va, uint64_t pages) {
  for (uint64_t k = va >> REGION_SHIFT, last = (va + (pages << 12) - 1) >> REGION_SHIFT; k <= last; k++) {
    unsigned i = 0;
    while (i < r->n && r->key[i] != k) i++;
    if (i == r->n && r->n < REGIONS_MAX) r->key[r->n++] = k;
  }
}

void kpages_page_tables_meta(cJSON *meta, const struct gen_layout *l, uint64_t set, unsigned tasks, unsigned objs,
                             uint64_t buf, uint64_t buf_bytes) {
  struct regions user = { .n = 0 }, kernel = { .n = 0 };
  for (unsigned i = 0; i < l->nuser_loop; i++) {
    const struct gen_span *u = &l->user_loop[i];
    /* the i386 system-call gate is a user page in the kernel half: its tables are shared */
    regions_add(u->va == l->vdso ? &kernel : &user, u->va, u->pages);
  }
  if (buf_bytes) regions_add(&user, buf, (buf_bytes + 4095) >> 12);
  for (unsigned k = 0; k < KG_COUNT; k++) {
    if (!(set >> k & 1)) continue;
    unsigned n = group_scope[k] == KS_TASK ? tasks : group_scope[k] == KS_PIPE || group_scope[k] == KS_SOCKET ? objs : 1;
    for (unsigned i = 0; i < n; i++) regions_add(&kernel, kpages_addr(l, (enum kgroup)k, i), group_pages[k]);
  }
  cJSON *t = cJSON_AddObjectToObject(meta, "page_tables");
  if (!t) return;
  cJSON_AddNumberToObject(t, "user_per_process", user.n);
  cJSON_AddNumberToObject(t, "kernel_shared", kernel.n);
  if (l->paging == PAGING_32)
    cJSON_AddNumberToObject(t, "shadow_roots_per_process", 4);
  cJSON_AddStringToObject(t, "counts", "distinct 2 MB regions touched: one shadow page table each; the kernel's are "
                          "shared by every address space; a 32-bit guest shadowed with PAE-format tables needs 4 roots "
                          "(one page directory per GiB) per address space");
  cJSON_AddStringToObject(t, "source", "Linux 2.6.20 drivers/kvm/mmu.c mmu_alloc_roots(), paging_tmpl.h; "
                          "models/mmu/README.md 'Pool footprint'");
}
