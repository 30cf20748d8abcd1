/* An interrupt-driven guest: timer ticks, IPIs, device interrupts, idle vCPUs
** in HLT (workloads/README.md, "interrupts"). */
#include "gen_interrupts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/base/util.h"

/* What an interrupt is, for the handler it runs and its mark. */
enum irq_kind { K_TICK, K_TIMER, K_RESCHED, K_CALLFUNC, K_DEVICE, K_NKINDS };

static const char *const kind_label[K_NKINDS] = { "tick", "timer", "resched", "callfunc", "device" };
static const char *const kind_count_key[K_NKINDS] = { "ticks", "timer_expiries", "resched_ipis",
                                                      "callfunc_ipis", "device_interrupts" };

/* Native cycles of the handlers (estimates: workloads/README.md, "interrupts"):
** the entry up to the EOI, then the handler's body. */
#define ENTRY_CYCLES 200u
static const uint32_t body_cycles[K_NKINDS] = { 3000, 1500, 500, 1500, 6000 };

/* At most this many interrupts in one trace: they are sorted in memory (24 bytes each). */
#define IRQ_MAX (1u << 21)

/* One interrupt, placed in time before the trace is written. */
struct irq {
  uint64_t t;                /* cycles from the start of the trace */
  uint32_t seq;              /* order of generation: breaks ties, so the sort is deterministic */
  uint16_t vcpu, from;       /* the receiver; the sender of an IPI */
  uint8_t kind;              /* enum irq_kind */
};

struct vstate {
  uint64_t now;              /* the vCPU's time: where its records have got to */
  bool busy;                 /* runs tasks all the time (else idle between interrupts) */
  bool halted;               /* in HLT, waiting for an interrupt */
};

struct irqgen {
  struct gen g;
  const struct interrupts_opts *o;
  bool nohz;                 /* idle vCPUs stop their tick (NO_HZ_IDLE) */
  double timers;             /* --timers, resolved */
  uint64_t end;              /* cycles the trace covers */
  uint64_t period;           /* cycles per tick */
  uint64_t wake;             /* cycles a woken idle vCPU runs */
  uint64_t far;              /* one second of cycles: a stopped tick's next event */
  uint64_t timer_gap;        /* cycles between two other timer expiries of one vCPU, on average */
  unsigned awake;            /* idle vCPUs woken and running their task */
  uint64_t count[K_NKINDS];
  struct vstate *v;
  struct irq *irq;
  size_t nirq;
  struct gen_label label[K_NKINDS];
};

static const char *const timer_choices[] = { "deadline", "periodic", NULL };
static const char *const idle_choices[] = { "nohz", "tick", NULL };
static const char *const apic_choices[] = { "x2apic", "xapic", NULL };

void interrupts_defaults(struct interrupts_opts *o) {
  memset(o, 0, sizeof *o);
  o->vcpus = 4;
  o->busy = 2;
  o->duration_ms = 1000;
  o->hz = 250;
  o->timer = IRQ_TIMER_DEADLINE;
  o->idle = IRQ_IDLE_AUTO;
  o->apic = IRQ_APIC_X2APIC;
  o->timers = NAN;
  o->resched = 50;
  o->callfunc = 1;
  o->device = 50;
  o->device_vector = 0x22;
  o->wake_us = 20;
  o->seed = 1;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

/* ---- how many of each ---- */

/* Events at `rate` per second over the trace, rounded to nearest. */
static uint64_t per_duration(const struct interrupts_opts *o, double rate) {
  return (uint64_t)(rate * (double)o->duration_ms / 1000.0 + 0.5);
}

/* The busy vCPUs other than v, which can send it an IPI. */
static uint64_t senders_for(const struct interrupts_opts *o, uint64_t v) {
  return o->busy - (v < o->busy ? 1 : 0);
}

static bool ticks(const struct irqgen *ig, uint64_t v) { return v < ig->o->busy || !ig->nohz; }

static void count_all(struct irqgen *ig) {
  const struct interrupts_opts *o = ig->o;
  memset(ig->count, 0, sizeof ig->count);
  for (uint64_t v = 0; v < o->vcpus; v++) {
    if (ticks(ig, v)) ig->count[K_TICK] += ig->end / ig->period;
    ig->count[K_TIMER] += per_duration(o, ig->timers);
    if (senders_for(o, v)) {
      ig->count[K_RESCHED] += per_duration(o, o->resched);
      ig->count[K_CALLFUNC] += per_duration(o, o->callfunc);
    }
  }
  ig->count[K_DEVICE] = per_duration(o, o->device);
}

/* ---- options ---- */

static bool check_rate(char *err, size_t errlen, const char *opt, double r) {
  if (r >= 0 && r <= 1e6) return true;
  gen_errf(err, errlen, "%s must be between 0 and 1000000 per second (got %g)", opt, r);
  return false;
}

static bool check_modes(const struct interrupts_opts *o, char *err, size_t errlen) {
  if (o->timer != IRQ_TIMER_PERIODIC) return true;
  if (o->idle == IRQ_IDLE_NOHZ) {
    gen_errf(err, errlen, "--idle nohz needs --timer deadline (Linux stops an idle CPU's tick only "
             "with a one-shot clock event device)");
    return false;
  }
  if (!isnan(o->timers) && o->timers != 0) {
    gen_errf(err, errlen, "--timers needs --timer deadline (with a periodic tick, timers expire "
             "from the tick itself)");
    return false;
  }
  return true;
}

static bool check_opts(const struct interrupts_opts *o, char *err, size_t errlen) {
  return gen_check_range(err, errlen, "--vcpus", o->vcpus, 1, 255) &&
         gen_check_range(err, errlen, "--busy", o->busy, 0, o->vcpus) &&
         gen_check_range(err, errlen, "--duration", o->duration_ms, 1, 3600000) &&
         gen_check_range(err, errlen, "--hz", o->hz, 10, 10000) &&
         gen_check_range(err, errlen, "--device-vector", o->device_vector, 0x20, IRQ_VECTOR_TIMER - 1) &&
         gen_check_range(err, errlen, "--wake-work", o->wake_us, 0, 1000000) &&
         (isnan(o->timers) || check_rate(err, errlen, "--timers", o->timers)) &&
         check_rate(err, errlen, "--resched", o->resched) && check_rate(err, errlen, "--callfunc", o->callfunc) &&
         check_rate(err, errlen, "--device", o->device) && check_modes(o, err, errlen) &&
         gen_check_paging(err, errlen, o->paging) && gen_check_ghz(err, errlen, o->cpu_ghz);
}

/* The options resolved into the generator's state; 0 or EXIT_USAGE. */
static int irqgen_init(struct irqgen *ig, const struct interrupts_opts *o, char *err, size_t errlen) {
  memset(ig, 0, sizeof *ig);
  ig->o = o;
  if (!check_opts(o, err, errlen)) return EXIT_USAGE;
  bool periodic = o->timer == IRQ_TIMER_PERIODIC;
  ig->nohz = periodic ? false : o->idle != IRQ_IDLE_TICK;
  ig->timers = periodic ? 0 : isnan(o->timers) ? 30 : o->timers;
  ig->end = gen_us_to_cycles((double)o->duration_ms * 1000.0, o->cpu_ghz);
  ig->period = gen_us_to_cycles(1e6 / (double)o->hz, o->cpu_ghz);
  ig->wake = gen_us_to_cycles((double)o->wake_us, o->cpu_ghz);
  ig->far = gen_us_to_cycles(1e6, o->cpu_ghz);
  if (ig->period < ENTRY_CYCLES + body_cycles[K_TICK]) {    /* ticks would overlap their handlers */
    gen_errf(err, errlen, "--hz %llu at --cpu-ghz %g leaves %llu cycles between ticks, fewer than the "
             "tick's handler takes (%u)", (unsigned long long)o->hz, o->cpu_ghz, (unsigned long long)ig->period,
             ENTRY_CYCLES + body_cycles[K_TICK]);
    return EXIT_USAGE;
  }
  uint64_t ntimers = per_duration(o, ig->timers);
  ig->timer_gap = ntimers ? ig->end / ntimers : ig->far;
  count_all(ig);
  uint64_t total = 0;
  for (int k = 0; k < K_NKINDS; k++) total += ig->count[k];
  if (total > IRQ_MAX) {
    gen_errf(err, errlen, "--duration %llu ms at these rates gives %llu interrupts, more than %u: "
             "shorten it or lower the rates", (unsigned long long)o->duration_ms, (unsigned long long)total, IRQ_MAX);
    return EXIT_USAGE;
  }
  for (int k = 0; k < K_NKINDS; k++) ig->label[k] = gen_label_make(kind_label[k]);
  return EXIT_OK;
}

/* ---- placing the interrupts in time ---- */

static void add(struct irqgen *ig, uint64_t t, uint64_t vcpu, uint64_t from, int kind) {
  ig->irq[ig->nirq] = (struct irq){ t, (uint32_t)ig->nirq, (uint16_t)vcpu, (uint16_t)from, (uint8_t)kind };
  ig->nirq++;
}

/* n events spread over the trace: the i-th at a uniformly drawn point of the
** i-th of n equal slots, so the count is exact and the gaps vary. */
static uint64_t slot_time(const struct irqgen *ig, uint64_t i, uint64_t n, uint64_t *rng) {
  double u = (double)(gen_random(rng) >> 11) * (1.0 / 9007199254740992.0);
  return (uint64_t)(((double)i + u) * (double)ig->end / (double)n);
}

static void place_ipis(struct irqgen *ig, uint64_t v, int kind, double rate, uint64_t *rng) {
  const struct interrupts_opts *o = ig->o;
  uint64_t nsend = senders_for(o, v), n = nsend ? per_duration(o, rate) : 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t = slot_time(ig, i, n, rng), from = gen_random(rng) % nsend;
    if (v < o->busy && from >= v) from++;          /* a busy receiver does not send to itself */
    add(ig, t, v, from, kind);
  }
}

static int by_time(const void *a, const void *b) {
  const struct irq *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void place_all(struct irqgen *ig) {
  const struct interrupts_opts *o = ig->o;
  uint64_t rng = o->seed;
  for (uint64_t v = 0; v < o->vcpus; v++) {
    if (ticks(ig, v))                               /* every CPU ticks at once (skew_tick=0) */
      for (uint64_t k = 1; k <= ig->end / ig->period; k++) add(ig, k * ig->period, v, 0, K_TICK);
    uint64_t n = per_duration(o, ig->timers);
    for (uint64_t i = 0; i < n; i++) add(ig, slot_time(ig, i, n, &rng), v, 0, K_TIMER);
    place_ipis(ig, v, K_RESCHED, o->resched, &rng);
    place_ipis(ig, v, K_CALLFUNC, o->callfunc, &rng);
  }
  uint64_t n = ig->count[K_DEVICE];
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t = slot_time(ig, i, n, &rng);
    add(ig, t, gen_random(&rng) % o->vcpus, 0, K_DEVICE);
  }
  qsort(ig->irq, ig->nirq, sizeof *ig->irq, by_time);
}

/* ---- writing the guest's side ---- */

static void wrmsr(struct irqgen *ig, unsigned vcpu, uint32_t msr, uint64_t value) {
  gen_ev(&ig->g, vcpu, EV_WRMSR, 0, msr, value, 0);
}

/* Linux's lapic_next_deadline: the TSC read, then the deadline written. */
static void arm_deadline(struct irqgen *ig, unsigned vcpu, uint64_t deadline) {
  gen_ev(&ig->g, vcpu, EV_RDTSC, 0, 0, 0, 0);
  wrmsr(ig, vcpu, MSR_TSC_DEADLINE, deadline);
}

/* The vCPU runs on until time t (nothing when it is there already). */
static void catch_up(struct irqgen *ig, unsigned vcpu, uint64_t t) {
  struct vstate *s = &ig->v[vcpu];
  if (t > s->now) {
    gen_run(&ig->g, vcpu, t - s->now);
    s->now = t;
  }
}

/* Linux's idle loop (do_idle, default_idle): interrupts off, the tick stopped
** under NO_HZ (its next event reprogrammed far ahead), then STI; HLT. */
static void go_idle(struct irqgen *ig, unsigned vcpu) {
  struct vstate *s = &ig->v[vcpu];
  gen_ev(&ig->g, vcpu, EV_CLI, 0, 0, 0, 0);
  if (ig->nohz) arm_deadline(ig, vcpu, s->now + ig->far);
  gen_ev(&ig->g, vcpu, EV_STI, 0, 0, 0, 0);
  gen_ev(&ig->g, vcpu, EV_HLT, 0, 0, 0, 0);
  s->halted = true;
}

/* Woken idle vCPUs whose task is done by time t go back to idle, so that
** their records keep their place in time among the other vCPUs'. */
static void settle_awake(struct irqgen *ig, uint64_t t) {
  for (unsigned v = 0; ig->awake && v < ig->o->vcpus; v++) {
    struct vstate *s = &ig->v[v];
    if (s->busy || s->halted || s->now > t) continue;
    go_idle(ig, v);
    ig->awake--;
  }
}

/* A woken idle vCPU leaves idle: the tick restarts (NO_HZ), then the woken task runs. */
static void wake(struct irqgen *ig, unsigned vcpu) {
  struct vstate *s = &ig->v[vcpu];
  if (ig->nohz) arm_deadline(ig, vcpu, (s->now / ig->period + 1) * ig->period);
  gen_run(&ig->g, vcpu, ig->wake);
  s->now += ig->wake;
  s->halted = false;
  ig->awake++;
}

static void eoi(struct irqgen *ig, unsigned vcpu) {
  if (ig->o->apic == IRQ_APIC_X2APIC) wrmsr(ig, vcpu, MSR_X2APIC_EOI, 0);
  else gen_ev(&ig->g, vcpu, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0, 0);
}

/* The sender's ICR write: x2APIC, one WRMSR with the destination in bits
** 63:32; xAPIC, as Linux's __default_send_IPI_dest_field: wait for the ICR to
** be idle (a read), ICR2, then the ICR (the trace's 64-bit ICR: destination in 63:56). */
static void send_ipi(struct irqgen *ig, unsigned from, unsigned to, unsigned vector) {
  if (ig->o->apic == IRQ_APIC_X2APIC) {
    wrmsr(ig, from, MSR_X2APIC_ICR, (uint64_t)to << 32 | vector);
    return;
  }
  gen_ev(&ig->g, from, EV_APIC, 0, APIC_ICR, 0, 0);
  gen_ev(&ig->g, from, EV_APIC, APIC_AUX_WRITE, APIC_ICR + 0x10, (uint64_t)to << 24, 0);
  gen_ev(&ig->g, from, EV_APIC, APIC_AUX_WRITE, APIC_ICR, (uint64_t)to << 56 | vector, 0);
}

/* The next deadline a timer handler programs: the next tick, or on an idle
** vCPU without its tick the next timer (about one gap of --timers away). */
static uint64_t next_deadline(const struct irqgen *ig, const struct vstate *s, uint64_t t) {
  if (s->halted && ig->nohz) return t + ig->timer_gap;
  return (t / ig->period + 1) * ig->period;
}

/* The interrupt arrives, the handler runs with IF = 0 (the interrupt gate
** cleared it): EOI first, as Linux acks the local APIC before the handler's
** work (sysvec_apic_timer_interrupt, sysvec_reschedule_ipi, handle_edge_irq),
** the body, a TSC-deadline timer's re-arm, IRET. */
static void handler(struct irqgen *ig, const struct irq *q) {
  static const unsigned src[K_NKINDS] = { VIRQ_SRC_TIMER, VIRQ_SRC_TIMER, VIRQ_SRC_IPI, VIRQ_SRC_IPI, VIRQ_SRC_DEVICE };
  const unsigned vec[K_NKINDS] = { IRQ_VECTOR_TIMER, IRQ_VECTOR_TIMER, IRQ_VECTOR_RESCHED, IRQ_VECTOR_CALLFUNC,
                                   (unsigned)ig->o->device_vector };
  unsigned c = q->vcpu;
  struct vstate *s = &ig->v[c];
  gen_ev(&ig->g, c, EV_VIRQ, src[q->kind], vec[q->kind], src[q->kind] == VIRQ_SRC_IPI ? q->from : 0, 0);
  gen_run(&ig->g, c, ENTRY_CYCLES);
  eoi(ig, c);
  gen_run(&ig->g, c, body_cycles[q->kind]);
  bool timer = q->kind == K_TICK || q->kind == K_TIMER;
  if (timer && ig->o->timer == IRQ_TIMER_DEADLINE) arm_deadline(ig, c, next_deadline(ig, s, s->now));
  gen_ev(&ig->g, c, EV_IRET, 0, 0, 0, 0);
  gen_mark(&ig->g, c, ig->label[q->kind]);
  s->now += ENTRY_CYCLES + body_cycles[q->kind];
}

/* Interrupt q reaches its vCPU at time t.  A running vCPU runs up to t first
** (if it is still in an earlier handler, this one waits); a halted vCPU wakes
** at t, and a reschedule IPI makes it leave idle to run the woken task; any
** other interrupt sends it back to HLT. */
static void arrive(struct irqgen *ig, const struct irq *q, uint64_t t) {
  unsigned c = q->vcpu;
  struct vstate *s = &ig->v[c];
  bool was_halted = s->halted;
  if (!was_halted) catch_up(ig, c, t);
  else if (t > s->now) s->now = t;                 /* halted time is no guest run */
  handler(ig, q);
  if (!was_halted) return;
  if (q->kind == K_RESCHED) {
    wake(ig, c);
    return;
  }
  gen_ev(&ig->g, c, EV_CLI, 0, 0, 0, 0);          /* back round the idle loop */
  gen_ev(&ig->g, c, EV_STI, 0, 0, 0, 0);
  gen_ev(&ig->g, c, EV_HLT, 0, 0, 0, 0);
}

static void emit(struct irqgen *ig, const struct irq *q) {
  uint64_t t = q->t;
  settle_awake(ig, t);
  if (q->kind == K_RESCHED || q->kind == K_CALLFUNC) {
    catch_up(ig, q->from, t);
    send_ipi(ig, q->from, q->vcpu, q->kind == K_RESCHED ? IRQ_VECTOR_RESCHED : IRQ_VECTOR_CALLFUNC);
    if (ig->v[q->from].now > t) {                 /* sent late: the sender was in a handler */
      t = ig->v[q->from].now;
      settle_awake(ig, t);
    }
  }
  arrive(ig, q, t);
}

static void emit_all(struct irqgen *ig) {
  const struct interrupts_opts *o = ig->o;
  for (uint64_t v = 0; v < o->vcpus; v++) {
    ig->v[v].busy = v < o->busy;
    if (!ig->v[v].busy) go_idle(ig, (unsigned)v);
  }
  for (size_t i = 0; i < ig->nirq && ig->g.rc == EXIT_OK; i++) emit(ig, &ig->irq[i]);
  settle_awake(ig, UINT64_MAX);
  for (uint64_t v = 0; v < o->vcpus; v++)
    if (ig->v[v].busy) catch_up(ig, (unsigned)v, ig->end);
}

/* ---- metadata ---- */

static const char *const interrupts_sources[] = {
  "vectors: Linux arch/x86/include/asm/irq_vectors.h (LOCAL_TIMER_VECTOR 0xec, RESCHEDULE_VECTOR 0xfd, "
  "CALL_FUNCTION_SINGLE_VECTOR 0xfb)",
  "EOI before the handler's work: Linux sysvec_apic_timer_interrupt, sysvec_reschedule_ipi (arch/x86/kernel), "
  "handle_edge_irq (kernel/irq/chip.c)",
  "TSC-deadline re-arm: Linux lapic_next_deadline (arch/x86/kernel/apic/apic.c); x2APIC ICR and EOI MSRs: "
  "x2apic_send_IPI, native_apic_msr_eoi",
  "idle loop: Linux do_idle (kernel/sched/idle.c), default_idle (arch/x86/kernel/process.c): STI; HLT; "
  "NO_HZ_IDLE stops and restarts the tick (kernel/time/tick-sched.c)",
  "default rates: /proc/interrupts of a 2-vCPU KVM guest (Linux 6.18, HZ=250, NO_HZ_IDLE) compiling, "
  "20 s: LOC 267-290/s per CPU, RES 51-54/s, CAL 0.25/s, virtio-blk 42/s, virtio-net 4/s",
  "handler cycles, --wake-work and the split of time: estimates",
  NULL,
};

static cJSON *interrupts_meta(const struct irqgen *ig) {
  const struct interrupts_opts *o = ig->o;
  cJSON *m = gen_meta_new("interrupts", INTERRUPTS_MODEL_VERSION);
  gen_meta_num(m, "vcpus", (double)o->vcpus);
  gen_meta_num(m, "busy", (double)o->busy);
  gen_meta_num(m, "duration", (double)o->duration_ms);
  gen_meta_num(m, "hz", (double)o->hz);
  gen_meta_str(m, "timer", timer_choices[o->timer]);
  gen_meta_str(m, "idle", ig->nohz ? "nohz" : "tick");
  gen_meta_str(m, "apic", apic_choices[o->apic]);
  gen_meta_num(m, "timers", ig->timers);
  gen_meta_num(m, "resched", o->resched);
  gen_meta_num(m, "callfunc", o->callfunc);
  gen_meta_num(m, "device", o->device);
  gen_meta_num(m, "device_vector", (double)o->device_vector);
  gen_meta_num(m, "wake_work", (double)o->wake_us);
  gen_meta_num(m, "seed", (double)o->seed);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  for (int k = 0; k < K_NKINDS; k++) gen_meta_num(m, kind_count_key[k], (double)ig->count[k]);
  gen_meta_num(m, "cycles_per_tick", (double)ig->period);
  gen_meta_num(m, "handler_entry_cycles", ENTRY_CYCLES);
  cJSON *b = cJSON_AddObjectToObject(m, "handler_cycles");
  for (int k = 0; b && k < K_NKINDS; k++) cJSON_AddNumberToObject(b, kind_label[k], body_cycles[k]);
  gen_meta_sources(m, interrupts_sources);
  return m;
}

int gen_interrupts(const struct interrupts_opts *o, const char *path, char *err, size_t errlen) {
  struct irqgen ig;
  int rc = irqgen_init(&ig, o, err, errlen);
  if (rc) return rc;
  struct gen_layout l;
  gen_layout_init(&l, o->paging);
  if (gen_open(&ig.g, path, "interrupts", (unsigned)o->vcpus, o->paging, interrupts_meta(&ig), err, errlen))
    return ig.g.rc;
  uint64_t total = 0;
  for (int k = 0; k < K_NKINDS; k++) total += ig.count[k];
  ig.irq = xcalloc(total ? total : 1, sizeof *ig.irq);
  ig.v = xcalloc(o->vcpus, sizeof *ig.v);
  gen_init_vcpus(&ig.g, &l, (unsigned)o->vcpus, gen_cr3(0));
  place_all(&ig);
  emit_all(&ig);
  free(ig.irq);
  free(ig.v);
  return gen_close(&ig.g);
}

const char interrupts_usage[] =
  "usage: vmxsim gen interrupts [--vcpus V] [--busy B] [--duration MS] [--hz N]\n"
  "                             [--timer deadline|periodic] [--idle nohz|tick] [--apic x2apic|xapic]\n"
  "                             [--timers R] [--resched R] [--callfunc R] [--device R] [--device-vector V]\n"
  "                             [--wake-work US] [--seed S] [--paging 32|pae|64] [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "A guest driven by interrupts, as a 2020s Linux guest runs: local-APIC timer ticks\n"
  "(TSC-deadline re-armed by WRMSR 0x6e0, or periodic), other timer expiries, reschedule\n"
  "(0xfd) and call-function (0xfb) IPIs written to the ICR, device interrupts, each\n"
  "handler ending in an EOI and IRET; idle vCPUs wait in STI; HLT. One mark per\n"
  "interrupt: tick, timer, resched, callfunc or device. Set a rate to 0 to leave a\n"
  "source out.\n"
  "\n"
  "  --vcpus V          vCPUs (1..255, default 4)\n"
  "  --busy B           vCPUs 0..B-1 run tasks all the time, the rest idle (0..V, default 2)\n"
  "  --duration MS      guest time covered, milliseconds (1..3600000, default 1000)\n"
  "  --hz N             scheduler tick rate, CONFIG_HZ (10..10000, default 250)\n"
  "  --timer MODE       deadline (TSC-deadline, re-armed per expiry) or periodic (default deadline)\n"
  "  --idle MODE        nohz: idle vCPUs stop their tick; tick: they keep it\n"
  "                     (default nohz with --timer deadline; periodic needs tick)\n"
  "  --timers R         other timer expiries per vCPU per second, busy or idle\n"
  "                     (0..1000000, default 30; needs --timer deadline)\n"
  "  --resched R        reschedule IPIs each vCPU receives per second, from the busy vCPUs;\n"
  "                     one to a halted vCPU wakes it (0..1000000, default 50)\n"
  "  --callfunc R       call-function IPIs (TLB shootdowns) each vCPU receives per second\n"
  "                     (0..1000000, default 1)\n"
  "  --device R         device interrupts per second, all vCPUs together (0..1000000, default 50)\n"
  "  --device-vector V  the device's vector (0x20..0xeb, default 0x22)\n"
  "  --wake-work US     microseconds a woken idle vCPU runs before it idles again\n"
  "                     (0..1000000, default 20)\n"
  "  --seed S           where the interrupts fall, senders and targets (default 1)\n"
  "  --paging MODE      guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ      clock that turns time into cycles (above 0, at most 10; default 2.4)\n"
  "  -o, --output F     the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen interrupts --vcpus 4 --busy 2 --duration 1000 -o irq.bin\n"
  "  vmxsim --policy ept --cpu skylake-2019 irq.bin\n";

int gen_interrupts_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct interrupts_opts o;
  interrupts_defaults(&o);
  const struct gen_opt opts[] = {
    { "--vcpus", NULL, GO_UINT, &o.vcpus, NULL, false },
    { "--busy", NULL, GO_UINT, &o.busy, NULL, false },
    { "--duration", NULL, GO_UINT, &o.duration_ms, NULL, false },
    { "--hz", NULL, GO_UINT, &o.hz, NULL, false },
    { "--timer", NULL, GO_CHOICE, &o.timer, timer_choices, false },
    { "--idle", NULL, GO_CHOICE, &o.idle, idle_choices, false },
    { "--apic", NULL, GO_CHOICE, &o.apic, apic_choices, false },
    { "--timers", NULL, GO_DOUBLE, &o.timers, NULL, false },
    { "--resched", NULL, GO_DOUBLE, &o.resched, NULL, false },
    { "--callfunc", NULL, GO_DOUBLE, &o.callfunc, NULL, false },
    { "--device", NULL, GO_DOUBLE, &o.device, NULL, false },
    { "--device-vector", NULL, GO_UINT, &o.device_vector, NULL, false },
    { "--wake-work", NULL, GO_UINT, &o.wake_us, NULL, false },
    { "--seed", NULL, GO_UINT, &o.seed, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_interrupts(&o, out, err, errlen);
}
