/* A null system-call loop, natively (hvm), in a 64-bit Xen PV guest (pv64) or under page-table isolation without PCID (pti). */
#include "kpages.h"
#include "gen_syscalls.h"

#include <string.h>
#include "sim/base/util.h"

/* CR3 reload with a full non-global flush, Haswell (linux-mm "TLB flush
** multiple pages per IPI", 2015: Westmere 108, Haswell 124 cycles). */
#define CR3_RELOAD_CYCLES 124
/* Xen's text, in the range Xen reserves in every 64-bit PV address space. */
#define XEN_TEXT 0xffff82d080000000ull
/* The user page tables sit one page above the kernel's (Linux PTI's 8 KB PGD pair). */
#define USER_PGD_OFFSET 0x1000

static const char *const mode_names[] = { "hvm", "pv64", "pti", NULL };

static const char *const syscalls_sources[] = {
  "Xen 64-bit PV guests (and xenner on KVM): every guest syscall does 2 CR3 switches "
  "(Xen xen/arch/x86/pv/domain.c toggle_guest_mode)",
  "page-table isolation without PCID: every syscall adds 2 CR3 writes "
  "(Linux 4.15 arch/x86/entry/calling.h SWITCH_TO_KERNEL_CR3, SWITCH_TO_USER_CR3_STACK)",
  "CR3 reload ~100-250 cycles; 124 taken (Haswell): linux-mm \"TLB flush multiple pages per IPI\", 2015",
  "null call = getppid(): lmbench lat_syscall null",
  "--syscall-cycles and --work defaults are estimates, not from a source",
  NULL,
};

void syscalls_defaults(struct syscalls_opts *o) {
  memset(o, 0, sizeof *o);
  o->nr = SYSCALLS_NR_DEFAULT;
  o->mode = SYSCALLS_HVM;
  o->syscall_cycles = 150;
  o->work = 50;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

struct sc {
  struct gen *g;
  struct gen_layout l;
  uint64_t nr, kernel_cr3, user_cr3, syscall_cycles, work;
  struct gen_label label;
};

/* The kernel's share of a null call (getppid): the system-call path's touch
** set, the call itself, and the parent's task_struct it reads (task 0 is the
** loop, task 1 its parent). */
static void kernel_part(struct sc *s, uint64_t extra_cycles) {
  kpages_touch(s->g, 0, &s->l, KP_SYSCALL | KG(GETPPID_TEXT), 0, 0, true);
  kpages_touch(s->g, 0, &s->l, KG(TASK), 1, 0, false);
  gen_run(s->g, 0, s->syscall_cycles + extra_cycles);
}

/* Entry through `entry_va` (mapped in both tables), CR3 to the kernel's
** tables, the call, CR3 back to the user's tables, return. */
static void split_tables_call(struct sc *s, uint64_t entry_va) {
  gen_ev(s->g, 0, EV_SYSCALL, 0, s->nr, 0, 0);
  gen_touch(s->g, 0, entry_va, 1, false);
  gen_cr3w(s->g, 0, s->kernel_cr3);
  kernel_part(s, CR3_RELOAD_CYCLES);
  gen_cr3w(s->g, 0, s->user_cr3);
  gen_run(s->g, 0, CR3_RELOAD_CYCLES);
  gen_ev(s->g, 0, EV_SYSRET, 0, 0, 0, 0);
}

static void emit_loop(struct sc *s, int mode, uint64_t count) {
  for (uint64_t i = 0; i < count && s->g->rc == EXIT_OK; i++) {
    gen_touch_user_loop(s->g, 0, &s->l);
    gen_run(s->g, 0, s->work);
    if (mode == SYSCALLS_HVM) {
      gen_ev(s->g, 0, EV_SYSCALL, 0, s->nr, 0, 0);
      kernel_part(s, 0);
      gen_ev(s->g, 0, EV_SYSRET, 0, 0, 0, 0);
    } else {
      split_tables_call(s, mode == SYSCALLS_PV64 ? XEN_TEXT : s->l.entry_area);
    }
    gen_mark(s->g, 0, s->label);
  }
}

static bool syscalls_valid(const struct syscalls_opts *o, char *err, size_t errlen) {
  if (!gen_check_range(err, errlen, "--count", o->count, 1, 1ull << 40) ||
      (o->nr != SYSCALLS_NR_DEFAULT && !gen_check_range(err, errlen, "--nr", o->nr, 0, 4095)) ||
      !gen_check_range(err, errlen, "--syscall-cycles", o->syscall_cycles, 0, UINT32_MAX) ||
      !gen_check_range(err, errlen, "--work", o->work, 0, UINT32_MAX) ||
      !gen_check_paging(err, errlen, o->paging) || !gen_check_ghz(err, errlen, o->cpu_ghz))
    return false;
  if (o->mode < SYSCALLS_HVM || o->mode > SYSCALLS_PTI) {
    gen_errf(err, errlen, "--mode must be hvm, pv64 or pti");
    return false;
  }
  if (o->mode == SYSCALLS_PV64 && o->paging != PAGING_64) {
    gen_errf(err, errlen, "--mode pv64 models a 64-bit PV guest: --paging must be 64 (got %s)",
             paging_name(o->paging));
    return false;
  }
  return true;
}

static cJSON *syscalls_meta(const struct syscalls_opts *o, uint64_t nr) {
  cJSON *m = gen_meta_new("syscalls", SYSCALLS_MODEL_VERSION);
  gen_meta_num(m, "count", (double)o->count);
  gen_meta_num(m, "nr", (double)nr);
  gen_meta_str(m, "mode", mode_names[o->mode]);
  gen_meta_num(m, "syscall_cycles", (double)o->syscall_cycles);
  gen_meta_num(m, "work", (double)o->work);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  gen_meta_num(m, "cr3_writes_per_syscall", o->mode == SYSCALLS_HVM ? 0 : 2);
  {
    struct gen_layout l;
    gen_layout_init(&l, o->paging);
    kpages_meta(m, &l, KP_SYSCALL | KG(GETPPID_TEXT), 0);
  }
  gen_meta_sources(m, syscalls_sources);
  return m;
}

int gen_syscalls(const struct syscalls_opts *o, const char *path, char *err, size_t errlen) {
  if (!syscalls_valid(o, err, errlen)) return EXIT_USAGE;
  struct sc s = { 0 };
  gen_layout_init(&s.l, o->paging);
  s.nr = o->nr == SYSCALLS_NR_DEFAULT ? s.l.nr_getppid : o->nr;
  s.kernel_cr3 = gen_cr3(0);
  s.user_cr3 = o->mode == SYSCALLS_HVM ? s.kernel_cr3 : s.kernel_cr3 + USER_PGD_OFFSET;
  s.syscall_cycles = o->syscall_cycles;
  s.work = o->work;
  s.label = gen_label_make("syscall");
  struct gen g;
  if (gen_open(&g, path, "syscalls", 1, o->paging, syscalls_meta(o, s.nr), err, errlen)) return g.rc;
  s.g = &g;
  gen_init_vcpus(&g, &s.l, 1, s.user_cr3);
  emit_loop(&s, o->mode, o->count);
  return gen_close(&g);
}

const char syscalls_usage[] =
  "usage: vmxsim gen syscalls --count N [--nr NR] --mode hvm|pv64|pti\n"
  "                           [--syscall-cycles C] [--work C] [--paging 32|pae|64]\n"
  "                           [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "A null system-call loop, one 'mark syscall' per call:\n"
  "  hvm   the guest's own syscall/sysret, no CR3 writes\n"
  "  pv64  a 64-bit Xen PV guest (or xenner): CR3 to the kernel's page tables on\n"
  "        entry and back to the user's on return (2 CR3 writes per call)\n"
  "  pti   page-table isolation without PCID (2 CR3 writes per call)\n"
  "\n"
  "  --count N            system calls (1..2^40)\n"
  "  --nr NR              system call number (0..4095; default getppid: 110, or 64\n"
  "                       for 32-bit)\n"
  "  --mode MODE          hvm, pv64 or pti\n"
  "  --syscall-cycles C   native cycles of one call (0..0xffffffff, default 150,\n"
  "                       an estimate)\n"
  "  --work C             native user cycles between calls (0..0xffffffff, default 50,\n"
  "                       an estimate)\n"
  "  --paging MODE        guest paging: 32, pae or 64 (default 64; pv64 needs 64)\n"
  "  --cpu-ghz GHZ        recorded in the metadata (above 0, at most 10; default 2.4)\n"
  "  -o, --output F       the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen syscalls --count 100000 --mode pti -o pti.bin\n";

int gen_syscalls_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct syscalls_opts o;
  syscalls_defaults(&o);
  const struct gen_opt opts[] = {
    { "--count", NULL, GO_UINT, &o.count, NULL, true },
    { "--nr", NULL, GO_UINT, &o.nr, NULL, false },
    { "--mode", NULL, GO_CHOICE, &o.mode, mode_names, true },
    { "--syscall-cycles", NULL, GO_UINT, &o.syscall_cycles, NULL, false },
    { "--work", NULL, GO_UINT, &o.work, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_syscalls(&o, out, err, errlen);
}
