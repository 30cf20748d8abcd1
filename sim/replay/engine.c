/* The engine: event loop and the only place cycles are charged.  Per event:
** the processor decides (models/vmx/exit.h); on an exit the hypervisor handles
** it (models/hv/) and the MMU does its part (models/mmu/); then the work they
** reported is priced at the CPU profile's prices.  The engine knows no policy
** by name: the mechanisms were chosen from the knobs when the vCPUs and the
** MMU were set up. */
#include "engine.h"
#include "models/hv/cr3cache.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit_reason.h"
#include "sim/base/util.h"

#include <stdlib.h>
#include <string.h>

/* Cycles of a set of work items at the profile's prices: the items added to
** only (a test of every item mispredicted on most exits, and multiplying them
** all took a third of an exit's charge). */
static uint64_t work_cost(const struct profile *pr, const struct work *w) {
  uint64_t c = 0;
  for (uint64_t used = w->used; used; used &= used - 1) {
    unsigned i = (unsigned)__builtin_ctzll(used);
    c += (uint64_t)w->n[i] * pr->p[i];
  }
  return c;
}

uint64_t engine_exit_cost(const struct profile *pr, unsigned key, const struct work *w) {
  return pr->p[PP_VM_ROUNDTRIP] + pr->handler[key] + work_cost(pr, w);
}

/* One ledger's charge for an exit: its price of the work, in its rows and clocks. */
static inline uint64_t charge_ledger(struct engine_ledger *l, unsigned vcpu, unsigned reason, unsigned key,
                                     const struct work *w) {
  uint64_t cost = engine_exit_cost(l->prof, key, w);
  stats_add_exit(l->st, reason, key, cost);
  l->st->vmm_cycles += cost;
  l->vcpu_cycles[vcpu] += cost;
  return cost;
}

/* Charges one exit in every ledger: the VMCS accesses the handler made are
** counted from the VMCS itself, so no handler can forget to report them.
** Every access made since the vCPU's previous charge counts, including those
** the MMU handler made before it reported the exit (e.g. clearing the CR3
** cache).  What the REPL and the observer see is ledger 0's price. */
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
  uint64_t cost = charge_ledger(&e->ledger[0], v->id, reason, key, w);
  for (unsigned k = 1; k < e->nledger; k++) charge_ledger(&e->ledger[k], v->id, reason, key, w);
  e->st.total_exits++;
  e->last.exits++;
  e->last.last_reason = reason;
  e->last.cycles += cost;
  if (e->obs.exit)
    e->obs.exit(e->obs.ctx, e, &(struct engine_exit_info){ v->id, reason, key, cost, e->cur });
}

static struct engine *engine_of(struct mmu_sink *s) {
  return (struct engine *)((char *)s - offsetof(struct engine, sink));
}

static struct mmu_ctx mmu_ctx_of(const struct vcpu *v) {
  return (struct mmu_ctx){ .vcpu = v->id, .cr3 = v->guest_cr3,
                           .pge = (vmcs_peek(&v->vmx.vmcs, VMCS_GUEST_CR4) & CR4_PGE) != 0 };
}

/* ---- what the MMU reports (struct mmu_sink) ---- */

/* The exit a fault causes: the processor's decision and the information it
** records (SDM 27.2.1, 27.2.2).  A #PF goes through the exception bitmap and
** the PFEC mask/match rule like any exception; shadow paging intercepts every
** #PF (vcpu_setup), so its hidden faults always exit. */
static bool fault_exit(const struct vcpu *v, const struct mmu_fault *f, struct vmx_exit_info *x) {
  if (f->kind == MMU_FAULT_EPT_VIOLATION) {
    *x = (struct vmx_exit_info){ .reason = EXIT_REASON_EPT_VIOLATION, .qual = f->ept_qual, .gla = f->gla, .gpa = f->gpa };
    return true;
  }
  struct exit_decision d = vmx_decide_page_fault(&v->vmx, f->gla, f->pfec);
  *x = (struct vmx_exit_info){ .reason = d.reason, .qual = d.qual, .intr_info = d.intr_info, .intr_error = d.intr_error };
  return d.exits;
}

static void take_exit(struct engine *e, struct vcpu *v, const struct vmx_exit_info *x,
                      const struct trace_event *ev, struct work *w);

static void sink_fault(struct mmu_sink *s, unsigned vcpu, const struct mmu_fault *f, const struct work *mw) {
  struct engine *e = engine_of(s);
  struct vcpu *v = &e->vcpu[vcpu];
  struct vmx_exit_info x;
  if (!fault_exit(v, f, &x)) return;   /* not intercepted: the guest takes it (no policy does this today) */
  struct work w = *mw;                 /* the MMU's work for the fault: the handler adds to it */
  take_exit(e, v, &x, NULL, &w);
}

/* Guest time that is no exit (TLB refills, the guest's own walks), in every ledger. */
static void charge_guest(struct engine *e, unsigned vcpu, const struct work *w) {
  for (unsigned k = 0; k < e->nledger; k++) {
    struct engine_ledger *l = &e->ledger[k];
    uint64_t c = work_cost(l->prof, w);
    l->st->guest_cycles += c;
    l->vcpu_cycles[vcpu] += c;
  }
}

static void sink_guest(struct mmu_sink *s, unsigned vcpu, const struct work *w) { charge_guest(engine_of(s), vcpu, w); }

/* n of one item (TLB refills: the hot path, so no work set to price). */
static void sink_guest_ops(struct mmu_sink *s, unsigned vcpu, enum profile_param op, uint32_t n) {
  struct engine *e = engine_of(s);
  for (unsigned k = 0; k < e->nledger; k++) {
    struct engine_ledger *l = &e->ledger[k];
    uint64_t c = (uint64_t)n * l->prof->p[op];
    l->st->guest_cycles += c;
    l->vcpu_cycles[vcpu] += c;
  }
}

static void sink_roots_loaded(struct mmu_sink *s, unsigned vcpu, uint64_t guest_cr3, uint64_t root_hpa, bool exited) {
  vcpu_roots_loaded(&engine_of(s)->vcpu[vcpu], guest_cr3, root_hpa, exited);
}

static bool sink_root_zapped(struct mmu_sink *s, uint64_t guest_cr3) {
  struct engine *e = engine_of(s);
  return e->vcpu[0].cr3c->root_zapped(e->vcpu, e->nvcpu, guest_cr3, e->st.counter);
}

static void sink_pt_zapped(struct mmu_sink *s) {
  struct engine *e = engine_of(s);
  e->vcpu[0].cr3c->pt_zapped(e->vcpu, e->nvcpu, e->st.counter);
}

/* ---- what a handler did besides its own work ---- */

/* An IPI reaches vCPU dest: if it was halted it wakes, at the sender's time
** at the earliest, so its clock jumps to the sender's (the time it spent
** halted passes). */
static void deliver_ipi(struct engine *e, const struct vcpu *from, int dest) {
  if (dest < 0 || (unsigned)dest >= e->nvcpu) return;           /* no such APIC: the IPI is lost */
  for (unsigned k = 0; k < e->nledger; k++) e->ledger[k].ipi_sent[dest] = e->ledger[k].vcpu_cycles[from->id];
  e->ipi_state[dest] = 0;                                       /* not taken yet */
  struct vcpu *t = &e->vcpu[dest];
  if (!t->halted) return;
  t->halted = false;
  for (unsigned k = 0; k < e->nledger; k++) {          /* each profile's clocks */
    uint64_t *vc = e->ledger[k].vcpu_cycles;
    if (vc[dest] < vc[from->id]) vc[dest] = vc[from->id];
  }
}

#define IPI_TAKEN  0x1u     /* the vCPU took the IPI sent to it last */
#define IPI_POSTED 0x2u     /* as a posted interrupt while it ran: no exit, the notification's processing */

/* A vCPU takes an IPI: its clock then, and how it came (a wait reads them). */
static void ipi_taken(struct engine *e, const struct vcpu *v, bool posted) {
  for (unsigned k = 0; k < e->nledger; k++) e->ledger[k].ipi_taken[v->id] = e->ledger[k].vcpu_cycles[v->id];
  e->ipi_state[v->id] = (uint8_t)(IPI_TAKEN | (posted ? IPI_POSTED : 0));
}

/* A spin until the interrupt this vCPU sent to vCPU t has been handled and the
** flag its handler stored is seen here (kvm-unit-tests' on_cpu, waiting on
** ipi_done).  The store happens when the IPI has crossed to t's core
** (ipi_latency after it left, or when t took it if later), t's processor has
** run posted-interrupt processing if it came so, t's handler has run as far
** as the wait record (t's own clock), and the handler has taken `lines` cache
** lines from this core; one more transfer brings the flag's line back.  The
** spin is guest time of this vCPU; t's clock moves to the store if it was
** behind.  Without an IPI to t that t took, there is nothing to wait for. */
static void wait_event(struct engine *e, struct vcpu *v, const struct trace_event *ev) {
  unsigned t = (unsigned)ev->a;
  if (t >= e->nvcpu || t == v->id || !(e->ipi_state[t] & IPI_TAKEN)) return;
  bool posted = e->ipi_state[t] & IPI_POSTED;
  for (unsigned k = 0; k < e->nledger; k++) {
    struct engine_ledger *l = &e->ledger[k];
    const uint64_t *p = l->prof->p;
    uint64_t *vc = l->vcpu_cycles;
    uint64_t crossed = l->ipi_sent[t] + p[PP_IPI_LATENCY];
    uint64_t arrived = crossed > l->ipi_taken[t] ? crossed : l->ipi_taken[t];
    uint64_t stored = arrived + (posted ? p[PP_POSTED_INTR_DELIVERY] : 0) + (vc[t] - l->ipi_taken[t]) +
                      ev->b * p[PP_CACHELINE_TRANSFER];
    uint64_t seen = stored + p[PP_CACHELINE_TRANSFER];
    if (vc[t] < stored) vc[t] = stored;
    if (seen <= vc[v->id]) continue;
    l->st->guest_cycles += seen - vc[v->id];
    vc[v->id] = seen;
  }
}

/* The effects of an exit's handling that reach beyond its vCPU. */
static void after_handler(struct engine *e, struct vcpu *v, const struct vcpu_result *r) {
  if (r->halted) v->halted = true;
  deliver_ipi(e, v, r->ipi);
}

/* ---- set-up ---- */

/* VM entry on the CPU of profile pr: every vCPU's controls must be allowed. */
static int entry_check(struct engine *e, const struct profile *pr, char *err, size_t errlen) {
  struct vmx_caps caps = profile_vmx_caps(pr);
  for (unsigned i = 0; i < e->nvcpu; i++) {
    char why[400];
    if (vmx_entry_check(&e->vcpu[i].vmx, &caps, why, sizeof why)) {
      snprintf(err, errlen, "%s (CPU profile %s, policy %s)", why, pr->name, e->pol->name);
      return EXIT_VMENTRY;
    }
  }
  return EXIT_OK;
}

int engine_init(struct engine *e, const struct policy *p, const struct profile *pr,
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
    return EXIT_USAGE;
  }
  e->vcpu = xcalloc(nvcpu, sizeof *e->vcpu);
  e->vcpu_cycles = xcalloc(nvcpu, sizeof *e->vcpu_cycles);
  e->ledger = xcalloc(1, sizeof *e->ledger);
  e->ledger[0] = (struct engine_ledger){ pr, &e->st, e->vcpu_cycles, xcalloc(nvcpu, sizeof(uint64_t)),
                                         xcalloc(nvcpu, sizeof(uint64_t)) };
  e->ipi_state = xcalloc(nvcpu, 1);
  e->nledger = 1;
  e->vmcs_charged = xcalloc(2 * (size_t)nvcpu, sizeof *e->vmcs_charged);
  for (unsigned i = 0; i < nvcpu; i++) {
    uint64_t forced = vcpu_setup(&e->vcpu[i], i, p);
    if (i == 0) e->st.counter[CTR_CR4_FORCED_OWNED] = forced;
  }
  int rc = entry_check(e, pr, err, errlen);
  if (rc) {
    engine_free(e);
    return rc;
  }
  e->sink = (struct mmu_sink){ .fault = sink_fault, .guest = sink_guest, .guest_ops = sink_guest_ops,
                               .roots_loaded = sink_roots_loaded,
                               .root_zapped = sink_root_zapped, .pt_zapped = sink_pt_zapped };
  e->mmu = mmu_create(p, paging, nvcpu, &e->sink, e->st.counter);
  return EXIT_OK;
}

int engine_add_profile(struct engine *e, const struct profile *pr, char *err, size_t errlen) {
  int rc = entry_check(e, pr, err, errlen);
  if (rc) return rc;
  e->ledger = xrealloc(e->ledger, (e->nledger + 1) * sizeof *e->ledger);
  struct engine_ledger *l = &e->ledger[e->nledger++];
  l->prof = pr;
  l->st = xmalloc(sizeof *l->st);
  stats_init(l->st);
  l->vcpu_cycles = xcalloc(e->nvcpu, sizeof *l->vcpu_cycles);
  l->ipi_sent = xcalloc(e->nvcpu, sizeof *l->ipi_sent);
  l->ipi_taken = xcalloc(e->nvcpu, sizeof *l->ipi_taken);
  return EXIT_OK;
}

void engine_ledger_stats(const struct engine *e, unsigned k, struct stats *st) {
  *st = e->st;
  if (k == 0) return;
  const struct stats *l = e->ledger[k].st;
  memcpy(st->row, l->row, sizeof st->row);
  st->guest_cycles = l->guest_cycles;
  st->vmm_cycles = l->vmm_cycles;
}

uint64_t engine_ledger_elapsed(const struct engine *e, unsigned k) {
  const uint64_t *vc = e->ledger[k].vcpu_cycles;
  uint64_t m = 0;
  for (unsigned i = 0; i < e->nvcpu; i++)
    if (vc[i] > m) m = vc[i];
  return m;
}

void engine_free(struct engine *e) {
  for (unsigned k = 1; k < e->nledger; k++) {   /* ledger 0's are the engine's own */
    stats_free(e->ledger[k].st);
    free(e->ledger[k].st);
    free(e->ledger[k].vcpu_cycles);
  }
  for (unsigned k = 0; k < e->nledger; k++) {
    free(e->ledger[k].ipi_sent);
    free(e->ledger[k].ipi_taken);
  }
  free(e->ipi_state);
  e->ipi_state = NULL;
  free(e->ledger);
  e->ledger = NULL;
  e->nledger = 0;
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

/* ---- events ---- */

/* Every exit goes this one way, whatever its reason, as every exit goes
** through KVM's vmx_handle_exit and its table of handlers: the processor's
** exit actions and the hypervisor's dispatch, the handler of the reason
** (models/hv/emulate.c), what it asks of the MMU, VM entry, then the charge
** for all of it and the handler's effects beyond the vCPU.  ev is the
** instruction the handler emulates, or NULL for a fault the MMU handled
** (whose work is already in w). */
static void take_exit(struct engine *e, struct vcpu *v, const struct vmx_exit_info *x,
                      const struct trace_event *ev, struct work *w) {
  struct vcpu_result r;
  vcpu_exit_begin_info(v, x, w, e->st.counter);
  vcpu_handle_exit(v, ev, x, &r);
  if (r.mmio) work_add(w, PP_APIC_EMULATE, 1);
  if (r.host_timer) work_add(w, PP_HOST_TIMER_IRQ, 1);
  if (r.mmu != MMU_NONE) {
    struct mmu_ctx c = mmu_ctx_of(v);
    mmu_request(e->mmu, &c, r.mmu, r.mmu_arg, true, w);
  }
  vcpu_exit_end(v, w, e->st.counter);
  mmu_on_vm_transition(e->mmu, v->id);
  charge_exit(e, v, x->reason, r.stat_key, w);
  after_handler(e, v, &r);
  if (r.reexecute) {               /* e.g. MOV DR after KVM stopped intercepting it */
    struct vmx_native again = { 0 };
    vcpu_no_exit(v, ev, ev->a, &again);
  }
}

static void exit_event(struct engine *e, struct vcpu *v, const struct trace_event *op,
                       const struct exit_decision *d) {
  struct work w;
  work_clear(&w);
  struct vmx_exit_info x = vmx_exit_info_of(d);
  take_exit(e, v, &x, op, &w);
}

/* op is the instruction as executed; guest_value the operand the guest meant
** (they differ when a paravirtual CR3-cache guest loaded a cached root). */
static void no_exit_event(struct engine *e, struct vcpu *v, const struct trace_event *op, uint64_t guest_value) {
  struct vmx_native r = { 0 };
  vcpu_no_exit(v, op, guest_value, &r);
  if (r.halted) v->halted = true;
  if (r.ipi) deliver_ipi(e, v, (int)r.ipi_dest);   /* IPI virtualization: sent without an exit */
  if (r.mmu != MMU_NONE) {
    struct work w;
    struct mmu_ctx c = mmu_ctx_of(v);
    work_clear(&w);
    mmu_request(e->mmu, &c, r.mmu, r.mmu_arg, false, &w);
    sink_guest(&e->sink, v->id, &w);
  }
}

/* A measured exit of the recording: no guest time, no event of the guest. */
static void measured_record(struct engine *e) {
  e->index++;
  memset(&e->last, 0, sizeof e->last);
}

/* A local-APIC access that is no instruction exit: an access to the APIC
** page, which the hypervisor leaves unmapped so that each one faults and is
** emulated (MMIO).  The fault's linear address is the guest's fixmap address
** of the APIC page (Linux FIX_APIC_BASE); it only fills the qualification. */
static void apic_mmio_event(struct engine *e, struct vcpu *v, const struct trace_event *op) {
  uint64_t gla = (e->paging == PAGING_64 ? 0xffffffffff5fb000ull : 0xfffff000ull) + op->a;
  struct mmu_fault f = mmu_mmio_fault(e->mmu, gla, APIC_BASE_GPA + op->a, op->aux & APIC_AUX_WRITE);
  struct vmx_exit_info x;
  if (!fault_exit(v, &f, &x)) return;
  struct work w;
  work_clear(&w);
  take_exit(e, v, &x, op, &w);
}

/* An instruction: the processor decides, then the exit or the native run.
** track: keep the decision for the REPL (e->last). */
static __attribute__((noinline)) void instruction_event(struct engine *e, struct vcpu *v, const struct trace_event *ev, bool track) {
  mmu_settle(e->mmu);               /* an instruction may change what touches do */
  vcpu_apic_mode(v, ev);
  struct trace_event op = vcpu_guest_op(v, ev);
  struct exit_decision d = vmx_decide(&v->vmx, &op);
  if (track) e->last.decision = d;
  vcpu_decided(v, &op, &d, e->st.counter);
  uint64_t mismatches = v->dr_mismatches;
  if (d.exits) exit_event(e, v, &op, &d);
  else if (d.why == WHY_APIC_MMIO) apic_mmio_event(e, v, &op);
  else no_exit_event(e, v, &op, ev->a);
  e->st.counter[CTR_DR_MISMATCHES] += v->dr_mismatches - mismatches;
}

/* A change of the guest's interrupt state (sti, cli, iret: the processor
** runs it) or an interrupt or NMI reaching the hypervisor for the vCPU (virq,
** vnmi), then the boundary after it: the processor decides whether a window
** the hypervisor asked for is open (SDM 26.6.5, 26.6.6). */
static __attribute__((noinline)) void interrupt_event(struct engine *e, struct vcpu *v, const struct trace_event *ev,
                                                      bool track, bool was_blocked) {
  mmu_settle(e->mmu);
  struct exit_decision arrival = vmx_decide_arrival(&v->vmx, ev);
  /* A vCPU blocked in the host after an HLT exit is not in VMX non-root
  ** operation: an interrupt for it (its timer's expiry, a host hrtimer then
  ** whichever timer KVM uses while it runs; a device's interrupt or an IPI,
  ** kvm_vcpu_kick) wakes it without an exit of the guest. */
  if (was_blocked && ev->type == EV_VIRQ && ev->aux != VIRQ_SRC_HOST)
    arrival = (struct exit_decision){ .exits = false, .why = WHY_VCPU_BLOCKED };
  if (ev->type == EV_VIRQ && ev->aux == VIRQ_SRC_IPI)
    ipi_taken(e, v, !arrival.exits && !was_blocked && pin_ctl(&v->vmx.vmcs, PIN_POSTED_INTR));
  if (arrival.exits) {                  /* the host interrupt that brings it exits first */
    if (track) e->last.decision = arrival;
    vcpu_event_pending(v, ev);
    exit_event(e, v, ev, &arrival);
  } else if (ev->type == EV_VIRQ || ev->type == EV_VNMI) {
    vcpu_event_arrives(v, ev);
    if (was_blocked) vcpu_timer_entry(v);   /* the VM entry that ends the HLT exit */
  } else {
    struct vmx_native r = { 0 };
    vcpu_no_exit(v, ev, ev->a, &r);
  }
  struct exit_decision d = vmx_decide_window(&v->vmx);
  if (track) e->last.decision = d;
  if (d.exits) exit_event(e, v, ev, &d);
}

/* A spin of PAUSEs (traces/FORMAT.md): the processor decides where in the
** spin it exits, if anywhere (SDM 25.1.3); after the exit's VM entry the rest
** of the spin is a new loop, decided again under the window the hypervisor
** set meanwhile.  Bounded: each exit takes at least one of at most
** PAUSE_SPIN_MAX PAUSEs. */
static __attribute__((noinline)) void pause_event(struct engine *e, struct vcpu *v, const struct trace_event *ev, bool track) {
  mmu_settle(e->mmu);
  struct trace_event op = *ev;
  uint64_t left = ev->a ? ev->a : 1;
  for (;;) {
    op.a = left;
    op.b = left > 1 ? ev->b : 0;
    struct exit_decision d = vmx_decide(&v->vmx, &op);
    if (track) e->last.decision = d;
    if (!d.exits) {
      no_exit_event(e, v, &op, op.a);
      return;
    }
    exit_event(e, v, &op, &d);
    uint64_t at = d.why == WHY_PLE_WINDOW ? d.detail : 0;   /* "PAUSE exiting": the first exits */
    if (at + 1 >= left) return;         /* the exiting PAUSE was the spin's last */
    left -= at + 1;
  }
}

/* What an event does besides its native time (which the callers count).
** Inlined into the loops: a touch, the commonest, is tested first. */
static __attribute__((always_inline)) inline void event(struct engine *e, const struct trace_event *ev, bool track) {
  struct vcpu *v = &e->vcpu[ev->vcpu];
  e->cur = ev;
  bool was_blocked = v->blocked;
  v->halted = false;                  /* whatever the vCPU does next, something woke it */
  if (was_blocked) {                  /* its thread is scheduled in again and enters the guest */
    vcpu_wake(v);
    if (ev->type != EV_VIRQ && ev->type != EV_VNMI) vcpu_timer_entry(v);   /* an interrupt: after its arrival */
  }
  if (ev->type == EV_TOUCH || ev->type == EV_PTWRITE) {
    struct mmu_ctx c = mmu_ctx_of(v);
    mmu_guest_event(e->mmu, &c, ev);
    return;
  }
  switch (ev->type) {
  case EV_RUN: return;
  case EV_MARK: e->st.counter[CTR_MARKS]++; return;
  case EV_INIT: mmu_settle(e->mmu); vcpu_init_reg(v, ev->aux, ev->a); return;
  /* SYSCALL/SYSRET never cause VM exits (SDM 25.1: not in the list of
  ** instructions that exit) and change nothing the models track. */
  case EV_SYSCALL: case EV_SYSRET: return;
  case EV_STI: case EV_CLI: case EV_IRET: case EV_VIRQ: case EV_VNMI: interrupt_event(e, v, ev, track, was_blocked); return;
  case EV_PAUSE: pause_event(e, v, ev, track); return;
  case EV_WAIT: wait_event(e, v, ev); return;
  default: instruction_event(e, v, ev, track);
  }
}

/* Once engine_failure has become true: the record that made it so, which the
** MMU names by a pointer into the block just replayed (block[0] is record
** first).  Checked after every block, so the pointer is never a stale one. */
static void locate_failure(struct engine *e, const struct trace_event *block, size_t n, uint64_t first) {
  if (e->failed_record || !engine_failure(e)) return;
  uintptr_t f = (uintptr_t)mmu_failure_event(e->mmu), b = (uintptr_t)block;
  e->failed_record = f >= b && f < b + n * sizeof *block ? first + (f - b) / sizeof *block + 1 : UINT64_MAX;
}

/* An event's native time: the same at every price, in every ledger. */
static inline void charge_native(struct engine *e, const struct trace_event *ev) {
  for (unsigned k = 0; k < e->nledger; k++) {
    e->ledger[k].st->guest_cycles += ev->cycles;
    e->ledger[k].vcpu_cycles[ev->vcpu] += ev->cycles;
  }
}

void engine_step(struct engine *e, const struct trace_event *ev) {
  mmu_stepwise(e->mmu);
  if (ev->type == EV_MEASURED) { measured_record(e); return; }
  e->index++;
  e->st.events++;
  charge_native(e, ev);
  memset(&e->last, 0, sizeof e->last);
  event(e, ev, true);
  locate_failure(e, ev, 1, e->index - 1);
}

/* A block of events, without what only the REPL shows (e->last).  Measured
** records (EV_MEASURED) are no guest events: passed over.  stepwise: as
** engine_step does it, a run wakes a halted vCPU; otherwise a run is only
** native time (the replay of a trace without measured exits has always
** counted it so, and its figures come from here).  What an observer reads at
** an exit (the events so far and the vCPUs' clocks) is kept current at every
** record; the rest (the guest cycles, the index) is added once a block. */
static inline void run_block(struct engine *e, const struct trace_event *ev, size_t n, bool stepwise, unsigned nledger) {
  const struct trace_event *block = ev;
  uint64_t first = e->index;
  uint64_t guest = 0;
  size_t measured = 0;
  uint64_t *clock = e->vcpu_cycles;   /* ledger 0's: held here, as the event's stores could alias it */
  if (stepwise || e->obs.exit) {
    for (const struct trace_event *end = ev + n; ev != end; ev++) {
      if (ev->type == EV_MEASURED) continue;                  /* no native time either */
      e->st.events++;
      guest += ev->cycles;
      clock[ev->vcpu] += ev->cycles;
      for (unsigned k = 1; k < nledger; k++) e->ledger[k].vcpu_cycles[ev->vcpu] += ev->cycles;
      if (ev->type != EV_RUN) event(e, ev, false);
      else if (stepwise) e->vcpu[ev->vcpu].halted = false;
    }
  } else {
    for (const struct trace_event *end = ev + n; ev != end; ev++) {
      guest += ev->cycles;
      clock[ev->vcpu] += ev->cycles;                   /* each profile's clocks */
      for (unsigned k = 1; k < nledger; k++) e->ledger[k].vcpu_cycles[ev->vcpu] += ev->cycles;
      if (ev->type == EV_RUN) continue;
      if (ev->type == EV_MEASURED) measured++;
      else event(e, ev, false);
    }
    e->st.events += n - measured;
  }
  for (unsigned k = 0; k < nledger; k++) e->ledger[k].st->guest_cycles += guest;   /* native time: the same at every price */
  e->index += n;
  locate_failure(e, block, n, first);
}

void engine_run_block(struct engine *e, const struct trace_event *ev, size_t n) {
  if (e->nledger > 1) run_block(e, ev, n, false, e->nledger);
  else run_block(e, ev, n, false, 1);    /* a loop for one profile, the count known */
}

void engine_run_block_stepwise(struct engine *e, const struct trace_event *ev, size_t n) {
  if (e->nledger > 1) run_block(e, ev, n, true, e->nledger);
  else run_block(e, ev, n, true, 1);
}

int engine_run(struct engine *e, struct trace_reader *r, bool (*progress)(struct engine *, void *), void *arg) {
  const struct trace_event *evs;
  size_t n;
  /* blocks end at every multiple of ENGINE_PROGRESS_EVENTS, where progress is called */
  while ((n = trace_next_block(r, &evs, engine_block_limit(e))) > 0) {
    engine_run_block(e, evs, n);
    if (engine_failure(e)) break;               /* it will be refused: no need to replay on */
    if (!progress || !engine_at_progress_point(e)) continue;
    engine_settle(e);
    if (!progress(e, arg)) return EXIT_OK;
  }
  engine_settle(e);
  if (trace_failed(r)) return EXIT_BADINPUT;
  return engine_refuse(e, r) ? EXIT_BADINPUT : EXIT_OK;
}

void engine_settle(struct engine *e) { mmu_settle(e->mmu); }

const char *engine_failure(const struct engine *e) { return mmu_failure(e->mmu); }

bool engine_failure_record(const struct engine *e, uint64_t *record) {
  if (!e->failed_record || e->failed_record == UINT64_MAX) return false;
  *record = e->failed_record - 1;
  return true;
}

bool engine_refuse(const struct engine *e, struct trace_reader *r) {
  const char *why = engine_failure(e);
  if (!why) return false;
  uint64_t rec;
  if (engine_failure_record(e, &rec))
    snprintf(r->err, sizeof r->err, "%s: byte %zu: record %llu: %s (policy %s)", r->path,
             trace_record_offset(r, rec), (unsigned long long)rec, why, e->pol->name);
  else snprintf(r->err, sizeof r->err, "%s: %s (policy %s)", r->path, why, e->pol->name);
  return true;
}

uint64_t engine_elapsed(const struct engine *e) { return engine_ledger_elapsed(e, 0); }
