/* The engine: event loop and the only place cycles are charged. */
#include "engine.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Cycles of a set of work items at the profile's prices. */
static uint64_t work_cost(const struct profile *pr, const struct work *w) {
  uint64_t c = 0;
  for (unsigned i = 0; i < PP_COUNT; i++)
    if (w->n[i]) c += (uint64_t)w->n[i] * pr->p[i];
  return c;
}

uint64_t engine_exit_cost(const struct profile *pr, unsigned key, const struct work *w) {
  return pr->p[PP_VM_ROUNDTRIP] + pr->handler[key] + work_cost(pr, w);
}

/* Charges one exit: the VMCS accesses the handler made are counted from the
** VMCS itself, so no handler can forget to report them.  Every access made
** since the vCPU's previous charge counts, including those the MMU handler
** made before it reported the exit (e.g. clearing the CR3 cache). */
static void charge_exit(struct engine *e, struct vcpu *v, unsigned reason, unsigned key, struct work *w) {
  struct vmcs *c = &v->vmx.vmcs;
  uint64_t *done = &e->vmcs_charged[2 * v->id];
  uint64_t reads = c->reads - done[0], writes = c->writes - done[1];
  done[0] = c->reads;
  done[1] = c->writes;
  work_add(w, PP_VMREAD, (uint32_t)reads);
  work_add(w, PP_VMWRITE, (uint32_t)writes);
  e->st.counter[CTR_VMREADS] += reads;
  e->st.counter[CTR_VMWRITES] += writes;
  uint64_t cost = engine_exit_cost(e->prof, key, w);
  stats_add(&e->st, reason, cost);
  if (key != reason) stats_add(&e->st, key, cost);
  e->st.total_exits++;
  e->st.vmm_cycles += cost;
  e->vcpu_cycles[v->id] += cost;
  e->last.exits++;
  e->last.last_reason = reason;
  e->last.cycles += cost;
}

static void sink_exit(struct mmu_sink *s, struct vcpu *v, unsigned reason, uint64_t qual, const struct work *mw) {
  struct engine *e = (struct engine *)((char *)s - offsetof(struct engine, sink));
  struct work w = *mw;
  vcpu_exit_begin(v, reason, qual, &w, e->st.counter);
  vcpu_exit_end(v, &w, e->st.counter);
  mmu_on_vm_transition(e->mmu, v, s);
  charge_exit(e, v, reason, reason, &w);
}

static void sink_guest(struct mmu_sink *s, struct vcpu *v, const struct work *w) {
  struct engine *e = (struct engine *)((char *)s - offsetof(struct engine, sink));
  uint64_t c = work_cost(e->prof, w);
  e->st.guest_cycles += c;
  e->vcpu_cycles[v->id] += c;
}

bool engine_init(struct engine *e, const struct policy *p, const struct profile *pr,
                 unsigned nvcpu, unsigned paging, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  e->pol = p;
  e->prof = pr;
  e->nvcpu = nvcpu;
  e->paging = paging;
  stats_init(&e->st);
  unsigned min_pool = mmu_min_pool(p, paging, nvcpu);
  if (p->shadow_pages_max < min_pool) {
    snprintf(err, errlen, "shadow_pages_max %u is too small for %u vCPU%s with %s-bit paging and %u previous "
             "roots: the pinned shadow roots need at least %u pages", p->shadow_pages_max, nvcpu,
             nvcpu == 1 ? "" : "s", paging_name(paging), p->prev_roots, min_pool);
    return false;
  }
  e->vcpu = xcalloc(nvcpu, sizeof *e->vcpu);
  e->vcpu_cycles = xcalloc(nvcpu, sizeof *e->vcpu_cycles);
  e->vmcs_charged = xcalloc(2 * (size_t)nvcpu, sizeof *e->vmcs_charged);
  for (unsigned i = 0; i < nvcpu; i++) {
    uint64_t forced = vcpu_setup(&e->vcpu[i], i, p);
    if (i == 0) e->st.counter[CTR_CR4_FORCED_OWNED] = forced;
    if (vcpu_entry_check(&e->vcpu[i], pr->p[PP_CR3_TARGETS], err, errlen)) {
      engine_free(e);
      return false;
    }
  }
  e->mmu = mmu_create(p, paging, nvcpu, e->vcpu, e->st.counter);
  e->sink.exit = sink_exit;
  e->sink.guest = sink_guest;
  e->sink.counters = e->st.counter;
  return true;
}

void engine_free(struct engine *e) {
  if (e->mmu) mmu_destroy(e->mmu);
  free(e->vcpu);
  free(e->vcpu_cycles);
  free(e->vmcs_charged);
  stats_free(&e->st);
  e->mmu = NULL;
  e->vcpu = NULL;
  e->vcpu_cycles = NULL;
  e->vmcs_charged = NULL;
}

static void exit_event(struct engine *e, struct vcpu *v, const struct trace_event *ev,
                       const struct exit_decision *d) {
  struct work w;
  struct vcpu_result r = { 0 };
  work_clear(&w);
  vcpu_exit_begin(v, d->reason, d->qual, &w, e->st.counter);
  vcpu_emulate(v, ev, d, &r);
  if (r.mmu != MMU_NONE) mmu_request(e->mmu, v, r.mmu, r.mmu_arg, true, &w, &e->sink);
  vcpu_exit_end(v, &w, e->st.counter);
  mmu_on_vm_transition(e->mmu, v, &e->sink);
  charge_exit(e, v, d->reason, r.stat_key, &w);
  if (r.reexecute) {               /* e.g. MOV DR after KVM stopped intercepting it */
    struct vcpu_result again = { 0 };
    vcpu_no_exit(v, ev, &again);
  }
}

/* op is the event as executed; guest_cr3 the guest's own CR3 operand, which
** differs from op->a when a paravirtual CR3-cache guest loaded a cached root. */
static void no_exit_event(struct engine *e, struct vcpu *v, const struct trace_event *op, uint64_t guest_cr3) {
  struct vcpu_result r = { 0 };
  vcpu_no_exit(v, op, &r);
  if (r.mmu == MMU_CR3_SWITCH) v->guest_cr3 = r.mmu_arg = guest_cr3;
  if (r.mmu != MMU_NONE) {
    struct work w;
    work_clear(&w);
    mmu_request(e->mmu, v, r.mmu, r.mmu_arg, false, &w, &e->sink);
    sink_guest(&e->sink, v, &w);
  }
}

static void count_cr3_target(struct engine *e, const struct vcpu *v, const struct exit_decision *d) {
  if (!v->pol->cr3_cache) return;
  if (d->why == WHY_CR3_TARGET_HIT) e->st.counter[CTR_CR3_TARGET_HITS]++;
  else if (d->why == WHY_CR3_NO_TARGET) e->st.counter[CTR_CR3_TARGET_MISSES]++;
}

void engine_step(struct engine *e, const struct trace_event *ev) {
  struct vcpu *v = &e->vcpu[ev->vcpu];
  e->index++;
  e->st.events++;
  e->st.guest_cycles += ev->cycles;
  e->vcpu_cycles[ev->vcpu] += ev->cycles;
  memset(&e->last, 0, sizeof e->last);
  switch (ev->type) {
  case EV_RUN: return;
  case EV_MARK: e->st.counter[CTR_MARKS]++; return;
  case EV_INIT: vcpu_init_reg(v, ev->aux, ev->a); return;
  case EV_TOUCH: case EV_PTWRITE:
    mmu_guest_event(e->mmu, v, ev, &e->sink);
    return;
  /* SYSCALL/SYSRET never cause VM exits (SDM 26.1: not in the list of
  ** instructions that exit) and change nothing the models track. */
  case EV_SYSCALL: case EV_SYSRET: return;
  default: break;
  }
  struct trace_event op = *ev;
  if (ev->type == EV_CR_WRITE && ev->aux == 3) op.a = vcpu_cr3_operand(v, ev->a);
  struct exit_decision d = vmx_decide(&v->vmx, &op);
  e->last.decision = d;
  if (op.type == EV_CR_WRITE && op.aux == 3) count_cr3_target(e, v, &d);
  uint64_t mismatches = v->dr_mismatches;
  if (d.exits) exit_event(e, v, &op, &d);
  else no_exit_event(e, v, &op, ev->a);
  e->st.counter[CTR_DR_MISMATCHES] += v->dr_mismatches - mismatches;
}

bool engine_run(struct engine *e, struct trace_reader *r, bool (*progress)(struct engine *, void *), void *arg) {
  const struct trace_event *ev;
  while ((ev = trace_next(r)) != NULL) {
    if (ev->type == EV_RUN) {       /* the common case, kept out of engine_step */
      e->index++;
      e->st.events++;
      e->st.guest_cycles += ev->cycles;
      e->vcpu_cycles[ev->vcpu] += ev->cycles;
    } else {
      engine_step(e, ev);
    }
    if (progress && (e->index & ((1u << 22) - 1)) == 0 && !progress(e, arg)) return true;
  }
  return !trace_failed(r);
}

uint64_t engine_elapsed(const struct engine *e) {
  uint64_t m = 0;
  for (unsigned i = 0; i < e->nvcpu; i++)
    if (e->vcpu_cycles[i] > m) m = e->vcpu_cycles[i];
  return m;
}
