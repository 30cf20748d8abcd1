/* What the session shows without moving the replay: the vCPU state after the
** last event (info), that event with why it exited or not (event), and the
** report so far (stats).  repl_make_report is here with stats, whose report
** `save` stores. */
#include "repl_int.h"
#include "sim/replay/report.h"
#include "sim/replay/runner.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"
#include "sim/present/report_print.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Info commands show the vCPU of the last event: that is the one that just acted. */
static struct vcpu *cur_vcpu(const struct repl *s) {
  return &s->e->vcpu[s->e->index ? s->ev.vcpu : 0];
}

/* ---- explaining what an event did ---- */

/* One phrase per MMU counter that an event can move; `bare` ones read
** better without a count when there was just one ("shadow page fault"). */
struct mmu_phrase {
  unsigned ctr;
  const char *one, *many;
  bool bare;
};
static const struct mmu_phrase mmu_phrases[] = {
  { CTR_SHADOW_FAULTS, "shadow page fault", "shadow page faults", true },
  { CTR_PTE_WRITES_EMULATED, "write to a shadowed guest page table, emulated",
    "writes to shadowed guest page tables, emulated", true },
  { CTR_EPT_VIOLATIONS, "EPT violation (first access to a guest-physical page)",
    "EPT violations (first accesses to guest-physical pages)", true },
  { CTR_ROOT_MISSES, "new shadow root built", "new shadow roots built", true },
  { CTR_ROOT_HITS, "shadow root found in the pool", "shadow roots found in the pool", true },
  { CTR_PREV_ROOT_HITS, "shadow root from the previous-roots cache", "shadow roots from the previous-roots cache", true },
  { CTR_SHADOW_ALLOCATED, "shadow page allocated", "shadow pages allocated", false },
  { CTR_SHADOW_EVICTED, "shadow page evicted (pool full)", "shadow pages evicted (pool full)", false },
  { CTR_FLOOD_ZAPS, "shadow page zapped for write flooding", "shadow pages zapped for write flooding", false },
  { CTR_SHADOW_ZAPPED, "shadow page zapped", "shadow pages zapped", false },
  { CTR_CR3_CACHE_CLEARS, "CR3 cache cleared", "CR3 cache clears", true },
  { CTR_TLB_MISSES, "TLB miss", "TLB misses", false },
};

static uint64_t ctr_delta(const struct repl *s, unsigned c) {
  uint64_t d = s->e->st.counter[c] - s->ctr_before[c];
  /* Zaps by eviction and flooding, and previous-root hits, have their own phrases. */
  if (c == CTR_SHADOW_ZAPPED) d -= ctr_delta(s, CTR_SHADOW_EVICTED) + ctr_delta(s, CTR_FLOOD_ZAPS);
  if (c == CTR_ROOT_HITS) d -= ctr_delta(s, CTR_PREV_ROOT_HITS);
  return d;
}

/* "shadow page fault, 2 shadow pages allocated": the MMU's part of the last event. */
static void mmu_story(const struct repl *s, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof mmu_phrases / sizeof *mmu_phrases && used < n; i++) {
    const struct mmu_phrase *ph = &mmu_phrases[i];
    uint64_t d = ctr_delta(s, ph->ctr);
    if (!d) continue;
    const char *sep = used ? ", " : "";
    if (d == 1 && ph->bare) used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, ph->one);
    else used += (size_t)snprintf(buf + used, n - used, "%s%" PRIu64 " %s", sep, d, d == 1 ? ph->one : ph->many);
  }
}

/* Why a guest memory action (touch, ptwrite) did not exit. */
static const char *mmu_no_exit(const struct repl *s) {
  return mmu_describe(s->e->mmu, s->ev.type == EV_PTWRITE ? MMU_WHY_NO_PTWRITE_EXIT : MMU_WHY_NO_TOUCH_EXIT, 0);
}

/* The one-line verdict for the last event, with the MMU's part appended. */
static void explain(const struct repl *s, char *buf, size_t n) {
  const struct engine_last *l = &s->e->last;
  char mmu[480], head[480];
  mmu_story(s, mmu, sizeof mmu);
  switch (s->ev.type) {
  case EV_RUN:  snprintf(buf, n, "no exit: the guest runs natively"); return;
  case EV_MARK: snprintf(buf, n, "no exit: an annotation (one workload operation done)"); return;
  case EV_INIT: snprintf(buf, n, "no exit: initial guest register state"); return;
  case EV_TOUCH: case EV_PTWRITE:
    if (!l->exits) {
      snprintf(buf, n, "%s%s%s", mmu_no_exit(s), mmu[0] ? "; " : "", mmu);
    } else if (l->exits == 1) {
      snprintf(buf, n, "exits (%s): %s", repl_reason_name(l->last_reason), mmu);
    } else {
      snprintf(buf, n, "exits (%s) x%u: %s", repl_reason_name(l->last_reason), l->exits, mmu);
    }
    return;
  default:
    vmx_explain(&l->decision, &s->ev, head, sizeof head);
    snprintf(buf, n, "%s%s%s", head, mmu[0] ? "; " : "", mmu);
  }
}

/* ---- info ---- */

/* A field's value at its width: 0x1234, 0x00000001, 0x00000000000006f0. */
static void print_vmcs_field(const struct vmcs *c, enum vmcs_field f) {
  unsigned digits = vmcs_width_bits(f) / 4;
  printf("  %-28s 0x%04" PRIx32 "  0x%0*" PRIx64 "\n", vmcs_name(f), vmcs_encoding(f), (int)digits, vmcs_peek(c, f));
}

static int info_vmcs(struct repl *s, const char *field) {
  const struct vcpu *v = cur_vcpu(s);
  const struct vmcs *c = &v->vmx.vmcs;
  if (!field) {
    printf("vCPU %u VMCS (%d fields; %" PRIu64 " VMREADs, %" PRIu64 " VMWRITEs so far)\n", v->id,
           VMCS_FIELD_COUNT, c->reads, c->writes);
    printf("  %-28s %-6s  %s\n", "field", "enc", "value");
    for (int f = 0; f < VMCS_FIELD_COUNT; f++) print_vmcs_field(c, (enum vmcs_field)f);
    return 0;
  }
  uint64_t enc;
  int f = vmcs_field_by_name(field);
  if (f < 0 && parse_u64(field, &enc) && enc <= UINT32_MAX) f = vmcs_field_by_encoding((uint32_t)enc);
  if (f < 0) {
    repl_error(s, "info vmcs: unknown field '%s' (a name as 'info vmcs' lists, or an encoding such as 0x6804)%s", field,
               parse_u64_hint(field));
    return -1;
  }
  print_vmcs_field(c, (enum vmcs_field)f);
  return 0;
}

/* CR0 or CR4: the value, what the guest reads, the read shadow and the mask. */
static void print_owned_cr(const struct vmcs *c, unsigned cr, enum vmcs_field val, enum vmcs_field shadow,
                           enum vmcs_field mask) {
  uint64_t v = vmcs_peek(c, val), sh = vmcs_peek(c, shadow), m = vmcs_peek(c, mask);
  printf("  cr%u               0x%016" PRIx64 "  (guest reads 0x%016" PRIx64 ")\n", cr, v, cr_read_value(v, m, sh));
  printf("  cr%u read shadow   0x%016" PRIx64 "\n", cr, sh);
  printf("  cr%u mask          0x%016" PRIx64 "  (1 = host-owned)\n", cr, m);
}

static int info_regs(struct repl *s) {
  const struct vcpu *v = cur_vcpu(s);
  const struct vmcs *c = &v->vmx.vmcs;
  printf("vCPU %u guest registers\n", v->id);
  print_owned_cr(c, 0, VMCS_GUEST_CR0, VMCS_CR0_READ_SHADOW, VMCS_CR0_GUEST_HOST_MASK);
  uint64_t root = vmcs_peek(c, VMCS_GUEST_CR3);
  const char *what = mmu_describe(s->e->mmu, MMU_GUEST_CR3_IS, root);
  printf("  cr3               0x%016" PRIx64 "  (GUEST_CR3 0x%016" PRIx64 "%s)\n", v->guest_cr3, root, what);
  print_owned_cr(c, 4, VMCS_GUEST_CR4, VMCS_CR4_READ_SHADOW, VMCS_CR4_GUEST_HOST_MASK);
  printf("  cr8               0x%016" PRIx64 "\n", v->vmx.cr8);
  static const unsigned drs[] = { 0, 1, 2, 3, 6, 7 };
  for (size_t i = 0; i < sizeof drs / sizeof *drs; i++)
    printf("  dr%u               0x%016" PRIx64 "\n", drs[i], v->guest_dr[drs[i]]);
  printf("  debug registers in hardware: %s\n", v->guest_dr_live ? "the guest's" : "the host's");
  return 0;
}

static int info_cr3targets(struct repl *s) {
  const struct vcpu *v = cur_vcpu(s);
  const struct vmcs *c = &v->vmx.vmcs;
  uint64_t count = vmcs_peek(c, VMCS_CR3_TARGET_COUNT);
  printf("vCPU %u: CR3_TARGET_COUNT %" PRIu64 " (the CPU supports %" PRIu64 ")%s\n", v->id, count,
         s->prof.p[PP_CR3_TARGETS], s->pol->cr3_cache ? "; paravirtual CR3 cache" : "");
  for (unsigned i = 0; i < VMCS_CR3_TARGET_FIELDS; i++) {
    enum vmcs_field f = (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i);
    printf("  %-18s 0x%016" PRIx64, vmcs_name(f), vmcs_peek(c, f));
    if (i >= count) printf("  (beyond the count: ignored)");
    else if (s->pol->cr3_cache && vmcs_peek(c, f)) printf("  root of guest cr3 0x%" PRIx64, v->cr3c_table.guest_cr3[i]);
    printf("\n");
  }
  if (s->pol->cr3_cache && count) printf("  next slot to fill: %u\n", v->cr3c_table.next);
  return 0;
}

int repl_do_info(struct repl *s, int argc, char **argv) {
  if (argc == 0) {                                   /* gdb's bare `info`: the topics */
    printf("info TOPIC shows the state after the last event:\n%s", repl_find_command("info")->detail);
    return 0;
  }
  const char *t = argv[0];
  if (argc > 1 && strcmp(t, "vmcs")) {
    repl_error(s, "info %s takes no argument", t);
    return -1;
  }
  if (!strcmp(t, "vmcs")) return info_vmcs(s, argc > 1 ? argv[1] : NULL);
  if (!strcmp(t, "regs")) return info_regs(s);
  if (!strcmp(t, "cr3targets")) return info_cr3targets(s);
  if (!strcmp(t, "shadow")) { mmu_print_shadow(s->e->mmu, stdout); return 0; }
  if (!strcmp(t, "tlb")) {
    printf("vCPU %u ", cur_vcpu(s)->id);
    mmu_print_tlb(s->e->mmu, cur_vcpu(s)->id, stdout);
    return 0;
  }
  repl_error(s, "info: unknown topic '%s' (vmcs, regs, cr3targets, shadow, tlb)", t);
  return -1;
}

/* ---- event, stats ---- */

int repl_do_event(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  if (!s->e->index) {
    printf("no event replayed yet; the next is event 0 of %" PRIu64 "\n", s->r.hdr.event_count);
    return 0;
  }
  char text[160], why[1024];
  const struct engine_last *l = &s->e->last;
  trace_text_format(&s->ev, text, sizeof text);
  explain(s, why, sizeof why);
  printf("event %" PRIu64 " of %" PRIu64 ", vcpu %u: %s\n", repl_last_index(s), s->r.hdr.event_count, s->ev.vcpu, text);
  printf("%s\n", why);
  printf("cycles: %" PRIu32 " native, %" PRIu64 " in the hypervisor", s->ev.cycles, l->cycles);
  if (l->decision.exits) printf(" (exit qualification 0x%" PRIx64 ")", l->decision.qual);
  printf("\n");
  return 0;
}

/* The report so far: the same identity lines as a batch run. */
struct report *repl_make_report(const struct repl *s) {
  struct report *rep = xcalloc(1, sizeof *rep);
  run_report(rep, s->trace_path, &s->r.hdr, s->pol, &s->prof, s->e);
  return rep;
}

int repl_do_stats(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  struct report *rep = repl_make_report(s);
  printf("after %" PRIu64 " of %" PRIu64 " events:\n", s->e->index, s->r.hdr.event_count);
  report_print(stdout, rep, FORMAT_TABLE);
  free(rep);
  return 0;
}
