/* VM exits recorded on the host -> guest actions (see import_exit.h). */
#include "import_exit.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
#include <string.h>

void import_exits_init(struct import_exits *X, struct import *im, bool time_ns) {
  memset(X, 0, sizeof *X);
  X->im = im;
  X->time_ns = time_ns;
}

bool import_exit_cr_ok(uint64_t cr) { return cr == 0 || cr == 3 || cr == 4 || cr == 8; }

void import_exit_cr3_seen(struct import_exits *X, unsigned v, uint64_t cr3) {
  struct import_init *init = &X->im->init[v];
  if (init->cr3_known || init->fixed) return;
  init->cr3 = cr3;
  init->cr3_known = true;
}

static uint64_t cycles_of(const struct import_exits *X, uint64_t delta) {
  return X->time_ns ? import_ns_to_cycles(X->im, delta) : delta;
}

bool import_exit_gap_too_long(const struct import_exits *X, unsigned v, uint64_t time) {
  const struct import_exit_vcpu *c = &X->v[v];
  return c->in_guest && time > c->entry_time && cycles_of(X, time - c->entry_time) > IMPORT_GAP_MAX;
}

/* ---- the exit-reason table: what an unexplained exit says by itself ---- */

static int emit(struct import_exits *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  X->v[v].caused = true;
  return import_emit(X->im, v, type, aux, a, b);
}

/* Why an exit was left unmapped: appended to its reason's name in "exits_unmapped". */
enum unmapped_why { WHY_NONE, WHY_NO_KVM_CR, WHY_OTHER_CR, WHY_NMI, WHY_NO_KVM_PIO, WHY_COUNT };
static const char *const why_text[WHY_COUNT] = { "", " without kvm_cr", " (other CR)", " (NMI)", " without kvm_pio" };

/* Exits known by a VMX reason number are counted by number and named at the
** end; an SVM host's or an unknown reason by the name the host recorded. */
static bool by_number(const struct import_exit *x) { return x->reason >= 0 && x->reason < 0xffff && !x->svm; }

static void reason_namer(uint64_t key, char *buf, size_t n) {
  const char *name = exit_reason_name((unsigned)key);
  if (name) snprintf(buf, n, "%s", name);
  else snprintf(buf, n, "reason %u", (unsigned)key);
}

static void unmapped_namer(uint64_t key, char *buf, size_t n) {
  reason_namer(key / WHY_COUNT, buf, n);
  size_t len = strlen(buf);
  snprintf(buf + len, n - len, "%s", why_text[key % WHY_COUNT]);
}

static int unmapped(struct import_exits *X, const struct import_exit *x, enum unmapped_why why) {
  if (by_number(x)) {
    import_tally_id(&X->unmapped, (uint64_t)x->reason * WHY_COUNT + why);
  } else {
    char name[80];
    int n = snprintf(name, sizeof name, "%s%s", x->name, why_text[why]);
    import_tally_name(&X->unmapped, name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1);
  }
  return 0;
}


/* CR_ACCESS qualification: bits 3:0 CR, 5:4 type (0 mov to, 1 mov from, 2 clts, 3 lmsw), 31:16 lmsw data.
** A MOV to CR needs the value, which only the handler's record has. */
static int cr_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  uint64_t q = x->info1, cr = q & 0xf;
  switch ((q >> 4) & 3) {
  case 1: return import_exit_cr_ok(cr) ? emit(X, v, EV_CR_READ, (unsigned)cr, 0, (q >> 8) & 0xf) : unmapped(X, x, WHY_OTHER_CR);
  case 2: return emit(X, v, EV_CLTS, 0, 0, 0);
  case 3: return emit(X, v, EV_LMSW, 0, (q >> 16) & 0xffff, 0);
  }
  return unmapped(X, x, WHY_NO_KVM_CR);
}

/* EXCEPTION_NMI: interruption info bits 7:0 vector, 10:8 type (2 = NMI). */
static int exception_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  unsigned vector = x->intr_info & 0xff, type = (x->intr_info >> 8) & 7;
  if (!(x->intr_info & 0x80000000u) || type == 2) return unmapped(X, x, WHY_NMI);
  if (vector == 14) {
    uint64_t addr = x->svm ? x->info2 : x->info1;  /* #PF: qualification = linear address */
    uint64_t ec = x->svm ? x->info1 : x->error_code;
    X->v[v].info = (uint32_t)ec;
    return emit(X, v, EV_TOUCH, (ec & 2) ? TOUCH_AUX_WRITE : 0, addr & ~0xfffull, 1);
  }
  return emit(X, v, EV_EXC, 0, vector, x->error_code);
}

/* IO qualification: bits 2:0 size-1, bit 3 in, 31:16 port. */
static int io_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  unsigned size = (unsigned)(x->info1 & 7) + 1;
  if (x->svm || (size != 1 && size != 2 && size != 4)) return unmapped(X, x, WHY_NO_KVM_PIO);
  unsigned aux = ((x->info1 >> 3) & 1 ? 0 : IO_AUX_OUT) | size << 1;
  return emit(X, v, EV_IO, aux, (x->info1 >> 16) & 0xffff, 0);
}

/* An EXTERNAL_INTERRUPT exit no record made the guest's timer: the host's
** interrupt, its vector from the VM-exit interruption information (SDM
** 27.2.2: valid, bit 31, with "acknowledge interrupt on exit"); counted when
** that cannot tell it from the guest's timer (import_exits_add_timer). */
static int host_interrupt(struct import_exits *X, unsigned v, const struct import_exit *x) {
  int vector = import_exit_vector(x);
  if (vector < 0) X->intr_no_vector++;
  else if (vector == LOCAL_TIMER_VECTOR) X->intr_timer_vector++;
  return emit(X, v, EV_INTR, 0, x->intr_info & 0xff, 0);
}

/* Reasons whose event needs the qualification or interruption info. */
static int qualified_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  if (!x->qualified) return unmapped(X, x, WHY_NONE);
  switch (x->reason) {
  case EXIT_REASON_CR_ACCESS: return cr_alone(X, v, x);
  case EXIT_REASON_INVLPG: return emit(X, v, EV_INVLPG, 0, x->info1, 0);
  case EXIT_REASON_DR_ACCESS:              /* bits 2:0 DR, bit 4 direction (1 = MOV from DR) */
    return (x->info1 & 0x10) ? emit(X, v, EV_DR_READ, (unsigned)(x->info1 & 7), 0, (x->info1 >> 8) & 0xf)
                             : emit(X, v, EV_DR_WRITE, (unsigned)(x->info1 & 7), 0, (x->info1 >> 8) & 0xf);
  case EXIT_REASON_EXTERNAL_INTERRUPT: return host_interrupt(X, v, x);
  case EXIT_REASON_EXCEPTION_NMI: return exception_alone(X, v, x);
  case EXIT_REASON_IO_INSTRUCTION: return io_alone(X, v, x);
  }
  return unmapped(X, x, WHY_NONE);
}

/* APIC_ACCESS qualification (SDM 27.2.1, table 27-6): bits 11:0 the offset
** in the APIC page, 15:12 the access type (1: a linear write).  Without it
** (xentrace) the access is taken as an EOI write, the commonest; its offset
** changes no decision but the TPR's. */
static int apic_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  if (!x->qualified || x->svm) return emit(X, v, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0);
  bool write = ((x->info1 >> 12) & 0xf) == 1;
  return emit(X, v, EV_APIC, write ? APIC_AUX_WRITE : 0, x->info1 & 0xff0, 0);
}

/* An interrupt-window exit: the hypervisor had an interrupt for a guest with
** interrupts disabled and asked for the window, which the guest then opened
** (SDM 26.6.5).  The events say so: IF clear, the interrupt (its vector is
** not recorded), IF set by POPF; the replay decides the exit again, and its
** VM entry injects the interrupt. */
#define WINDOW_VECTOR 0x20
static int interrupt_window(struct import_exits *X, unsigned v) {
  int rc = emit(X, v, EV_CLI, 0, 0, 0);
  if (!rc) rc = emit(X, v, EV_VIRQ, 0, WINDOW_VECTOR, 0);
  return rc ? rc : emit(X, v, EV_STI, STI_AUX_POPF, 0, 0);
}

/* An NMI-window exit: an NMI came while the guest handled another, and its
** IRET opened the window (SDM 26.6.6).  Two NMIs (the first is delivered
** unless NMIs are blocked already) and the IRET. */
static int nmi_window(struct import_exits *X, unsigned v) {
  int rc = emit(X, v, EV_VNMI, 0, 0, 0);
  if (!rc) rc = emit(X, v, EV_VNMI, 0, 0, 0);
  return rc ? rc : emit(X, v, EV_IRET, 0, 0, 0);
}

/* Reasons of the interrupt controller and the rarer instructions. */
static int rare_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  uint64_t q = x->qualified && !x->svm ? x->info1 : 0;
  switch (x->reason) {
  case EXIT_REASON_INTERRUPT_WINDOW: return interrupt_window(X, v);
  case EXIT_REASON_NMI_WINDOW: return nmi_window(X, v);
  case EXIT_REASON_APIC_ACCESS: return apic_alone(X, v, x);
  /* Trap-like exits of APIC-register virtualization and virtual-interrupt
  ** delivery (SDM 29.4.3.3, 29.1.4), which vmxsim does not model: the guest's
  ** write of the register (the qualification's offset) or its EOI. */
  case EXIT_REASON_APIC_WRITE: return emit(X, v, EV_APIC, APIC_AUX_WRITE, q ? q & 0xff0 : APIC_EOI, 0);
  case EXIT_REASON_EOI_INDUCED: return emit(X, v, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0);
  case EXIT_REASON_XSETBV: return emit(X, v, EV_XSETBV, 0, 0, 0);     /* XCR and value not recorded */
  case EXIT_REASON_RDTSCP: return emit(X, v, EV_RDTSCP, 0, 0, 0);
  case EXIT_REASON_MWAIT_INSTRUCTION: return emit(X, v, EV_MWAIT, 0, 0, 0);
  case EXIT_REASON_MONITOR_INSTRUCTION: return emit(X, v, EV_MONITOR, 0, 0, 0);
  case EXIT_REASON_INVPCID: return emit(X, v, EV_INVPCID, 0, 0, 0);   /* type and address not recorded */
  case EXIT_REASON_TASK_SWITCH: return emit(X, v, EV_TASK_SWITCH, (unsigned)(q >> 30) & 3, q & 0xffff, 0);
  case EXIT_REASON_TRIPLE_FAULT: return emit(X, v, EV_TRIPLE_FAULT, 0, 0, 0);
  }
  if (exit_reason_is_vmx_instruction((unsigned)x->reason)) return emit(X, v, EV_VMX, 0, (uint64_t)x->reason, 0);
  return qualified_alone(X, v, x);
}

/* An exit no detail record explained: what its reason (and qualification) say. */
static int exit_alone(struct import_exits *X, unsigned v, const struct import_exit *x) {
  switch (x->reason) {
  case EXIT_REASON_HLT: return emit(X, v, EV_HLT, 0, 0, 0);
  case EXIT_REASON_CPUID: return emit(X, v, EV_CPUID, 0, 0, 0);      /* leaf not recorded */
  case EXIT_REASON_VMCALL: return emit(X, v, EV_VMCALL, 0, 0, 0);    /* number not recorded */
  case EXIT_REASON_RDTSC: return emit(X, v, EV_RDTSC, 0, 0, 0);
  case EXIT_REASON_PAUSE_INSTRUCTION: return emit(X, v, EV_PAUSE, 0, 0, 0);
  /* The guest's deadline, kept in the VMX-preemption timer, expired: its
  ** timer interrupt (Linux's LOCAL_TIMER_VECTOR, 0xec) arrives, which a
  ** replay decides under the policy's lapic_timer (SDM 25.5.1, 25.2). */
  case EXIT_REASON_PREEMPTION_TIMER: return emit(X, v, EV_VIRQ, VIRQ_SRC_TIMER, LOCAL_TIMER_VECTOR, 0);
  case EXIT_REASON_WBINVD: return emit(X, v, EV_WBINVD, 0, 0, 0);
  case EXIT_REASON_RDPMC: return emit(X, v, EV_RDPMC, 0, 0, 0);
  }
  return rare_alone(X, v, x);
}

int import_exit_alone(struct import_exits *X, unsigned v, const struct import_exit *x) { return exit_alone(X, v, x); }

/* ---- the state machine ---- */

/* Emits the event the pending exit's reason alone implies, or counts it as unmapped. */
static int import_exit_settle(struct import_exits *X, unsigned v) {
  if (!X->v[v].pending) return 0;
  X->v[v].pending = false;
  return exit_alone(X, v, &X->v[v].x);
}

int import_exit_begins(struct import_exits *X, unsigned v, bool timed, uint64_t time, const struct import_exit *x) {
  struct import_exit_vcpu *c = &X->v[v];
  int rc = import_exit_settle(X, v);          /* an exit whose entry was not recorded */
  if (!rc && c->in_guest && timed && time > c->entry_time)
    rc = import_run(X->im, v, cycles_of(X, time - c->entry_time));
  c->in_guest = false;
  c->pending = true;
  c->open = timed;
  c->caused = false;
  c->exit_time = time;
  c->info = 0;
  c->x = *x;
  X->exits++;
  if (by_number(x)) import_tally_id(&X->reasons, (uint64_t)x->reason);
  else import_tally_name(&X->reasons, x->name, strlen(x->name));
  return rc;
}

/* The measured record of the exit the entry at `time` ends. */
static int measure(struct import_exits *X, unsigned v, uint64_t time) {
  struct import_exit_vcpu *c = &X->v[v];
  c->open = false;
  if (time < c->exit_time) return 0;                /* clocks out of order: no measurement */
  unsigned reason = c->x.reason >= 0 && c->x.reason < 0xffff ? (unsigned)c->x.reason : 0xffff;
  X->measured++;
  return import_emit(X->im, v, EV_MEASURED, c->caused ? 0 : MEASURED_ALONE, cycles_of(X, time - c->exit_time),
                     MEASURED_B(reason, c->info));
}

int import_exit_entry(struct import_exits *X, unsigned v, bool timed, uint64_t time) {
  struct import_exit_vcpu *c = &X->v[v];
  int rc = import_exit_settle(X, v);
  if (!rc && c->open && timed) rc = measure(X, v, time);
  c->open = false;
  c->in_guest = timed;
  c->entry_time = time;
  X->entries++;
  return rc;
}

int import_exit_close(struct import_exits *X, unsigned v, uint64_t time) {
  struct import_exit_vcpu *c = &X->v[v];
  int rc = import_exit_settle(X, v);
  if (!rc && c->open) rc = measure(X, v, time);
  c->open = false;
  c->in_guest = false;
  return rc;
}

void import_exit_forget(struct import_exits *X, unsigned v) {
  X->v[v].open = false;
  X->v[v].in_guest = false;
}

void import_exit_explained(struct import_exits *X, unsigned v, bool emitted) {
  X->v[v].pending = false;
  X->v[v].caused |= emitted;
}

void import_exit_detail(struct import_exits *X, unsigned v, uint32_t info) { X->v[v].info = info; }

int import_exits_finish(struct import_exits *X) {
  int rc = 0;
  for (unsigned v = 0; rc == 0 && v < X->im->nvcpus; v++) rc = import_exit_settle(X, v);
  return rc;
}

/* ---- metadata ---- */

void import_exits_add_counts(const struct import_exits *X) {
  cJSON_AddNumberToObject(X->im->meta, "exits", (double)X->exits);
  cJSON_AddNumberToObject(X->im->meta, "entries", (double)X->entries);
  cJSON_AddNumberToObject(X->im->meta, "measured", (double)X->measured);
  if (X->timed) cJSON_AddNumberToObject(X->im->meta, "span_cycles", (double)cycles_of(X, X->last_time - X->first_time));
}

void import_exits_add_reasons(const struct import_exits *X) {
  import_tally_json(X->im->meta, "exit_reasons", &X->reasons, reason_namer);
  import_tally_json(X->im->meta, "exits_unmapped", &X->unmapped, unmapped_namer);
}

static void undecided(cJSON *a, const char *reason, uint64_t count, const char *why) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "reason", reason);
  cJSON_AddNumberToObject(o, "count", (double)count);
  cJSON_AddStringToObject(o, "why", why);
  cJSON_AddItemToArray(a, o);
}

void import_exits_add_timer(const struct import_exits *X, uint64_t guest_timer, bool timer_marks) {
  cJSON_AddNumberToObject(X->im->meta, "guest_timer_exits", (double)guest_timer);
  if (!X->intr_no_vector && (timer_marks || !X->intr_timer_vector)) return;
  cJSON *a = cJSON_AddArrayToObject(X->im->meta, "exits_undecided");
  if (X->intr_no_vector)
    undecided(a, "EXTERNAL_INTERRUPT", X->intr_no_vector, "no vector recorded: the host's own interrupt cannot be "
              "told from the guest's timer in a host hrtimer; replayed as the host's");
  if (X->intr_timer_vector && !timer_marks)
    undecided(a, "EXTERNAL_INTERRUPT", X->intr_timer_vector, "at the host's timer vector, and no "
              "kvm_apic_accept_irq recorded: the host's own timer cannot be told "
              "from the guest's in a host hrtimer; replayed as the host's");
}
