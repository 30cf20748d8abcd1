/* A guest whose hot path toggles a CR4 bit: PGE off and on for a global TLB flush, or TSD between tasks. */
#include "gen_cr4toggle.h"

#include <string.h>
#include "sim/base/util.h"

/* Global flush by toggling CR4.PGE: ~750-960 cycles (linux-mm "TLB flush
** multiple pages per IPI", 2015); the midpoint is taken. */
#define PGE_FLUSH_CYCLES 855

static const char *const bit_names[] = { "pge", "tsd", NULL };

static const char *const cr4toggle_sources[] = {
  "a global TLB flush toggles CR4.PGE off and on (2 CR4 writes) unless INVPCID exists "
  "(Linux arch/x86/include/asm/tlbflush.h __native_flush_tlb_global); "
  "CR4.TSD is written on switch when TIF_NOTSC differs "
  "(Linux arch/x86/kernel/process.c __switch_to_xtra)",
  "Xen PV shim guests in HVM toggle CR4 bits on hot paths "
  "(R. Pau Monne, xen-devel 'vmx/hap: optimize CR4 trapping', 2018-02)",
  "global flush by toggling CR4.PGE ~750-960 cycles, 855 taken: linux-mm \"TLB flush multiple pages per IPI\", 2015",
  "--work default is an estimate, not from a source",
  NULL,
};

void cr4toggle_defaults(struct cr4toggle_opts *o) {
  memset(o, 0, sizeof *o);
  o->bit = CR4TOGGLE_PGE;
  o->work = 10000;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

static void cr4w(struct gen *g, uint64_t value) { gen_ev(g, 0, EV_CR_WRITE, 4, value, 0, 0); }

/* __flush_tlb_global(): PGE off flushes everything, PGE on restores global
** pages; the TLB then refills with the pages the guest goes on to use. */
static void emit_pge(struct gen *g, const struct gen_layout *l, uint64_t count, uint64_t work) {
  struct gen_label label = gen_label_make("flush");
  for (uint64_t i = 0; i < count && g->rc == EXIT_OK; i++) {
    gen_run(g, 0, work);
    gen_touch(g, 0, gen_ktext(l, KTEXT_MM), 1, false);
    cr4w(g, l->cr4 & ~(uint64_t)CR4_PGE);
    cr4w(g, l->cr4);
    gen_run(g, 0, PGE_FLUSH_CYCLES);
    gen_touch(g, 0, gen_ktext(l, KTEXT_MM), 1, false);
    gen_touch(g, 0, l->user_code, 1, false);
    gen_touch(g, 0, l->user_stack, 1, true);
    gen_mark(g, 0, label);
  }
}

/* __switch_to_xtra() between threads that differ in TIF_NOTSC: one CR4
** write per switch, setting and clearing TSD in turn.  Threads share the
** address space, so there is no CR3 write. */
static void emit_tsd(struct gen *g, const struct gen_layout *l, uint64_t count, uint64_t work) {
  struct gen_label label = gen_label_make("toggle");
  for (uint64_t i = 0; i < count && g->rc == EXIT_OK; i++) {
    gen_run(g, 0, work);
    gen_touch(g, 0, gen_ktext(l, KTEXT_SCHED), 1, false);
    cr4w(g, i % 2 == 0 ? l->cr4 | CR4_TSD : l->cr4);
    gen_mark(g, 0, label);
  }
}

static cJSON *cr4toggle_meta(const struct cr4toggle_opts *o) {
  cJSON *m = gen_meta_new("cr4toggle", CR4TOGGLE_MODEL_VERSION);
  gen_meta_num(m, "count", (double)o->count);
  gen_meta_str(m, "bit", bit_names[o->bit]);
  gen_meta_num(m, "work", (double)o->work);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  gen_meta_num(m, "cr4_writes_per_mark", o->bit == CR4TOGGLE_PGE ? 2 : 1);
  gen_meta_sources(m, cr4toggle_sources);
  return m;
}

int gen_cr4toggle(const struct cr4toggle_opts *o, const char *path, char *err, size_t errlen) {
  if (!gen_check_range(err, errlen, "--count", o->count, 1, 1ull << 40) ||
      !gen_check_range(err, errlen, "--work", o->work, 0, UINT32_MAX) ||
      !gen_check_paging(err, errlen, o->paging) || !gen_check_ghz(err, errlen, o->cpu_ghz))
    return EXIT_USAGE;
  if (o->bit != CR4TOGGLE_PGE && o->bit != CR4TOGGLE_TSD) {
    gen_errf(err, errlen, "--bit must be pge or tsd");
    return EXIT_USAGE;
  }
  struct gen_layout l;
  gen_layout_init(&l, o->paging);
  struct gen g;
  if (gen_open(&g, path, "cr4toggle", 1, o->paging, cr4toggle_meta(o), err, errlen)) return g.rc;
  gen_init_vcpus(&g, &l, 1, gen_cr3(0));
  if (o->bit == CR4TOGGLE_PGE) emit_pge(&g, &l, o->count, o->work);
  else emit_tsd(&g, &l, o->count, o->work);
  return gen_close(&g);
}

const char cr4toggle_usage[] =
  "usage: vmxsim gen cr4toggle --count N [--bit pge|tsd] [--work C] [--paging 32|pae|64]\n"
  "                            [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "A guest whose hot path writes CR4, as Xen PV shim guests and older kernels do:\n"
  "  pge   global TLB flushes by toggling CR4.PGE off and on (2 CR4 writes), 'mark flush'\n"
  "  tsd   switches between threads that differ in TIF_NOTSC (1 CR4 write setting\n"
  "        or clearing CR4.TSD), 'mark toggle'\n"
  "\n"
  "  --count N        flushes or toggles (1..2^40)\n"
  "  --bit BIT        pge (default) or tsd\n"
  "  --work C         native guest cycles between them (0..0xffffffff, default 10000,\n"
  "                   an estimate)\n"
  "  --paging MODE    guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ    recorded in the metadata (above 0, at most 10; default 2.4)\n"
  "  -o, --output F   the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen cr4toggle --count 10000 --bit pge -o cr4.bin\n";

int gen_cr4toggle_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct cr4toggle_opts o;
  cr4toggle_defaults(&o);
  const struct gen_opt opts[] = {
    { "--count", NULL, GO_UINT, &o.count, NULL, true },
    { "--bit", NULL, GO_CHOICE, &o.bit, bit_names, false },
    { "--work", NULL, GO_UINT, &o.work, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_cr4toggle(&o, out, err, errlen);
}
