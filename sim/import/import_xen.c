/* Xen binary traces (xentrace) -> trace: HVM exits, entries and CR accesses, per physical CPU. */
#include "import.h"
#include "import_exit.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** The file is a sequence of records in host byte order (x86: little-endian),
** with no file header.  A record is a u32 header (bits 27:0 event, 30:28
** number of extra words, 31 TSC present), the TSC as two u32 (lo, hi) when
** present, then the extra words.  xentrace writes each physical CPU's buffer
** as a window that starts with a CPU-change record {cpu, window bytes}; the
** records up to the next one ran on that pCPU (Xen's xen/include/public/trace.h
** and tools/xentrace/xentrace.c).
**
** Who ran a record: a recording with the scheduler's records (class
** TRC_SCHED_MIN: runstate changes and continues, each naming a domain and
** vCPU) is read as Xen's tools/xentrace/xenalyze.c reads it.  The pCPUs'
** records are taken in TSC order (the windows of one pCPU overlap others' in
** time), each pCPU runs the (domain, vCPU) its last runstate change put on
** it, and an HVM record belongs to that vCPU, wherever it ran before.  A
** vCPU's exit is measured from its VMEXIT to its next VMENTRY, or to the
** runstate change that makes it runnable (preempted or woken: its wait for a
** pCPU is no cost of the exit; an exit that blocks, such as HLT, lasts until
** the wake-up).  Each (domain, vCPU) with HVM records becomes a vCPU of the
** trace, dense, in order of its first record; the metadata's "vcpus" names
** them (d1v0).  The idle domain's and records on a pCPU no runstate record
** has placed a vCPU on yet are skipped (counted).  Without scheduler records
** each pCPU becomes a vCPU: record with the guest's vCPUs pinned.
**
** Lost records (TRC_LOST_RECORDS {count, domain, vCPU, first lost TSC}): the
** pCPU's buffer overflowed.  As xenalyze does, the vCPU running there is
** taken off at the first lost TSC and its open exit is not measured (its
** VMENTRY may be among the lost), every vCPU not running is assumed to have
** run there (its open exit is not measured either), and the vCPU the marker
** names runs from the marker's TSC.  The markers are counted and reported.
**
** VMEXIT records carry only the exit reason, so an exit becomes a guest
** action when a handler record (CR, MSR, I/O port, CPUID, page fault, ...)
** explains it or when its reason alone says enough (HLT, RDTSC, ...).  TSC
** ticks are cycles: the time from a VMENTRY to the vCPU's next VMEXIT is
** guest 'run' time as is, and an exit's time (above) its measured cost (an
** EV_MEASURED record).
*/

#define TRC_LOST_RECORDS     0x0001f001u   /* {count, domain (15:0) | vCPU (31:16), first lost TSC lo, hi} */
#define TRC_TRACE_CPU_CHANGE 0x0001f003u   /* {cpu (bits 15:0), window bytes} */
#define TRC_SCHED_MIN        0x00021000u   /* runstate records: low nibble 1 change, 2 continue */
#define TRC_SCHED_MIN_MASK   0xfffff000u
#define XEN_IDLE_DOMAIN      32767u
#define XEN_PCPU_MAX         256           /* pCPUs followed (xenalyze's MAX_CPUS) */
#define XEN_SCHED_VCPUS_MAX  65536         /* (domain, vCPU) pairs followed */
#define TRC_HVM_VMENTRY      0x00081001u   /* {} */
#define TRC_HVM_VMEXIT       0x00081002u   /* {exit reason, rip} */
#define TRC_HVM_VMEXIT64     0x00081102u   /* {exit reason, rip lo, rip hi} */
#define TRC_HVM_HANDLER      0x00082000u   /* handler records: the details of the pending exit */

/* The records counted as seen by name on nearly every record (import_saw). */
enum seen { SEEN_CR_WRITE, SEEN_VMENTRY, SEEN_VMEXIT, SEEN_KINDS };

/* Handlers found are kept by the low bits of their event (direct-mapped), so
** that the table is searched once per kind of record, not once per record. */
#define HANDLER_RECENT 32
struct handler;

/* The helpers every record goes through, inlined into the record loops (one
** call each was a fifth of a recording's summary). */
#define HOT static inline __attribute__((always_inline))

/* One decoded record. */
struct xrec {
  size_t off;
  uint32_t event;
  unsigned nextra;
  bool has_tsc;
  uint64_t tsc;
  uint32_t extra[7];
};

/* Xen's runstates (xen/include/public/vcpu.h: RUNSTATE_running 0, runnable 1,
** blocked 2, offline 3), then xenalyze's own: lost, and not yet seen running. */
enum { RS_RUNNING, RS_RUNNABLE, RS_BLOCKED, RS_OFFLINE, RS_LOST, RS_INIT = 6 };

/* A (domain, vCPU) the scheduler's records name. */
struct xvcpu {
  uint16_t dom, vid;
  uint8_t state;             /* RS_* */
  int pcpu;                  /* where it last ran; -1 never */
  int dense;                 /* its vCPU in the trace; -1 before its first HVM record */
  uint64_t exits;
};

/* One pCPU's records: its windows in file order, read one record ahead. */
struct xpcpu {
  bool seen, active;
  int first_win, win;        /* windows: indexes into xen.win; -1 none */
  size_t off, end;           /* the next record and the end of the current window */
  uint64_t order_tsc, last_tsc;
  int cur;                   /* the xvcpu running here; -1 none (or not known yet) */
  bool lost, lost_end_due, lost_vcpu_valid;   /* a lost-records marker is being handled */
  uint64_t lost_tsc;
  uint16_t lost_dom, lost_vid;
  struct xrec rec;           /* the record read ahead (active) */
};

struct xwin { size_t start, end; int next; };

struct xen {
  struct import *im;
  struct import_exits exits;  /* one vCPU per pCPU, or per (domain, vCPU) with scheduler records */
  int vcpu;                   /* file order: the current window's vCPU; -1 before the first CPU change */
  uint64_t cr_writes, io_size_assumed;
  unsigned seen_slot[SEEN_KINDS];   /* the name's slot in im->seen + 1, 0 before its first record */
  const struct handler *recent[HANDLER_RECENT];   /* handlers found, by the event's low bits */
  /* scheduler records: who runs where */
  bool sched;
  uint64_t sched_records, lost_markers, lost_records;
  struct xvcpu *vc;
  unsigned nvc, capvc;
  struct import_map vc_of;    /* domain << 16 | vCPU -> index into vc */
  int dense_vc[TRACE_VCPU_MAX];   /* the xvcpu behind each trace vCPU */
  struct xpcpu *pc;           /* [XEN_PCPU_MAX] */
  int lost_cpus;              /* pCPUs inside a lost-records marker */
  struct xwin *win;
  unsigned nwin, capwin;
  /* the lean pass (opt.note): its vCPUs, and each exit reason's slot in the tally + 1 */
  struct lean_vcpu *lv;
  unsigned reason_slot[128];
};

static int lean_event(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b);

HOT void saw(struct xen *X, enum seen kind) {
  static const char *const names[] = { "HVM CR_WRITE", "HVM VMENTRY", "HVM VMEXIT" };
  struct import_tally *t = &X->im->seen;
  if (!X->seen_slot[kind]) X->seen_slot[kind] = import_tally_name_slot(t, names[kind], strlen(names[kind])) + 1;
  t->count[X->seen_slot[kind] - 1]++;
}


/* ---- the lean state machine (opt.note): import_exit.h's, followed here
** without its records (each vCPU's exit state, and what views_feed would make
** of the records it would emit), the measured exits noted ---- */

struct lean_vcpu {
  bool seen;                 /* a record of it would have gone out (its @init ones first) */
  bool in_guest, pending, open, caused;
  uint16_t reason;
  uint64_t entry_time, exit_time;
  uint64_t clock, cr3;       /* views_feed's: run and measured cycles, the last CR3 */
  struct trace_event cause;  /* the last record it would have emitted (not run or measured) */
};

/* Before any record of vCPU v would go out: its @init records (CR0, CR3,
** CR4: CR4's is the last record a first exit could be caused by). */
static void lean_first(struct xen *X, unsigned v) {
  struct lean_vcpu *L = &X->lv[v];
  if (L->seen) return;
  const struct import_init *in = &X->im->init[v];
  L->seen = true;
  X->im->init[v].fixed = true;
  L->cr3 = in->cr3;
  L->cause = (struct trace_event){ .type = EV_INIT, .aux = 4, .vcpu = (uint16_t)v, .a = in->cr4 };
}

/* An event the import would emit for v (a handler's, or an exit's reason's). */
static int lean_event(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  lean_first(X, v);
  struct lean_vcpu *L = &X->lv[v];
  L->cause = (struct trace_event){ .type = (uint8_t)type, .aux = (uint8_t)aux, .vcpu = (uint16_t)v, .a = a, .b = b };
  if (type == EV_CR_WRITE && aux == 3) L->cr3 = a;
  L->caused = true;
  return 0;
}

/* import_exit_alone emits through the import: its events come here. */
static int lean_capture(void *ctx, const struct trace_event *e) {
  return lean_event(ctx, e->vcpu, e->type, e->aux, e->a, e->b);
}

static int lean_settle(struct xen *X, unsigned v) {
  struct lean_vcpu *L = &X->lv[v];
  if (!L->pending) return 0;
  L->pending = false;
  struct import_exit x = { .reason = L->reason };
  return import_exit_alone(&X->exits, v, &x);
}

/* import_exit_begins */
static int lean_begins(struct xen *X, unsigned v, bool timed, uint64_t time, unsigned reason) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = lean_settle(X, v);
  if (rc) return rc;
  if (L->in_guest && timed && time > L->entry_time) {      /* its run record */
    lean_first(X, v);
    L->clock += time - L->entry_time;
  }
  L->in_guest = false;
  L->pending = true;
  L->open = timed;
  L->caused = false;
  L->exit_time = time;
  L->reason = (uint16_t)reason;
  X->exits.exits++;
  if (reason >= 0xffff) {                        /* not a reason's number: by its (empty) name, as import_exit_begins */
    import_tally_name(&X->exits.reasons, "", 0);
    return 0;
  }
  if (reason >= sizeof X->reason_slot / sizeof *X->reason_slot) {
    import_tally_id(&X->exits.reasons, reason);
    return 0;
  }
  unsigned *slot = &X->reason_slot[reason];      /* the tally's slot, found once */
  if (!*slot) *slot = import_tally_id_slot(&X->exits.reasons, reason) + 1;
  X->exits.reasons.count[*slot - 1]++;
  return 0;
}

/* measure(): the open exit's measured record, noted instead */
static int lean_measure(struct xen *X, unsigned v, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  if (!L->open) return 0;
  L->open = false;
  if (time < L->exit_time) return 0;             /* clocks out of order: no measurement */
  uint64_t cycles = time - L->exit_time;
  X->exits.measured++;
  lean_first(X, v);
  L->clock += cycles;
  int dom = -1, vid = -1;
  if (X->sched) {
    const struct xvcpu *x = &X->vc[X->dense_vc[v]];
    dom = x->dom;
    vid = x->vid;
  }
  return X->im->opt.note(X->im->opt.note_ctx, v, L->reason, L->caused ? &L->cause : NULL, L->cr3, L->clock, cycles,
                         dom, vid);
}

/* import_exit_entry */
static int lean_entry(struct xen *X, unsigned v, bool timed, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = lean_settle(X, v);
  if (!rc && timed) rc = lean_measure(X, v, time);
  L->open = false;
  L->in_guest = timed;
  L->entry_time = time;
  X->exits.entries++;
  return rc;
}

/* import_exit_close: the exit ends without an entry (a runstate change) */
static int lean_close(struct xen *X, unsigned v, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = lean_settle(X, v);
  if (!rc) rc = lean_measure(X, v, time);
  L->open = false;
  L->in_guest = false;
  return rc;
}

/* The state machine the import runs: the lean one (opt.note) or import_exit.h's. */
static int x_entry(struct xen *X, unsigned v, bool timed, uint64_t time) {
  return X->lv ? lean_entry(X, v, timed, time) : import_exit_entry(&X->exits, v, timed, time);
}
static int x_close(struct xen *X, unsigned v, uint64_t time) {
  return X->lv ? lean_close(X, v, time) : import_exit_close(&X->exits, v, time);
}
static void x_forget(struct xen *X, unsigned v) {
  if (X->lv) X->lv[v].open = X->lv[v].in_guest = false;
  else import_exit_forget(&X->exits, v);
}
static bool x_gap_too_long(const struct xen *X, unsigned v, uint64_t time) {
  if (!X->lv) return import_exit_gap_too_long(&X->exits, v, time);
  const struct lean_vcpu *L = &X->lv[v];
  return L->in_guest && time > L->entry_time && time - L->entry_time > IMPORT_GAP_MAX;
}
static int x_finish(struct xen *X) {
  if (!X->lv) return import_exits_finish(&X->exits);
  int rc = 0;
  for (unsigned v = 0; rc == 0 && v < X->im->nvcpus; v++) rc = lean_settle(X, v);
  return rc;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t word64(const struct xrec *r, unsigned i) { return r->extra[i] | (uint64_t)r->extra[i + 1] << 32; }

/* An exit record: only its reason is recorded. */
HOT int exit_begins(struct xen *X, unsigned v, const struct xrec *r) {
  struct import_exit x = { .reason = r->extra[0] < 0xffff ? (int)r->extra[0] : 0xffff };   /* counted by number */
  X->im->used++;
  if (X->lv) return lean_begins(X, v, r->has_tsc, r->tsc, (unsigned)x.reason);
  return import_exit_begins(&X->exits, v, r->has_tsc, r->tsc, &x);
}

/* ---- handler records (xen/include/public/trace.h, TRC_HVM_HANDLER + n; the
** layouts are those of the HVMTRACE calls in xen/arch/x86/hvm/ and read by
** tools/xentrace/xenalyze.c).  Each explains the vCPU's pending exit with
** one event. ---- */

static int ev(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  return X->lv ? lean_event(X, v, type, aux, a, b) : import_emit(X->im, v, type, aux, a, b);
}

static int h_cr(struct xen *X, unsigned v, const struct xrec *r, bool write, bool wide) {
  uint32_t cr = r->extra[0];
  uint64_t val = wide ? word64(r, 1) : r->extra[1];
  if (!import_exit_cr_ok(cr)) return -1;
  if (cr == 3) import_exit_cr3_seen(&X->exits, v, val);
  if (!write) return ev(X, v, EV_CR_READ, cr, 0, 0);
  X->cr_writes++;
  return ev(X, v, EV_CR_WRITE, cr, val, 0);
}
static int h_cr_read(struct xen *X, unsigned v, const struct xrec *r) { return h_cr(X, v, r, false, false); }
static int h_cr_read64(struct xen *X, unsigned v, const struct xrec *r) { return h_cr(X, v, r, false, true); }
static int h_cr_write(struct xen *X, unsigned v, const struct xrec *r) { return h_cr(X, v, r, true, false); }
static int h_cr_write64(struct xen *X, unsigned v, const struct xrec *r) { return h_cr(X, v, r, true, true); }
/* {msr, value lo, value hi} */
static int h_msr_read(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_RDMSR, 0, r->extra[0], 0); }
static int h_msr_write(struct xen *X, unsigned v, const struct xrec *r) {
  return ev(X, v, EV_WRMSR, 0, r->extra[0], word64(r, 1));
}
/* {leaf, eax, ebx, ecx, edx}: the subleaf is not recorded */
static int h_cpuid(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_CPUID, 0, r->extra[0], 0); }
static int h_intr(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_INTR, 0, r->extra[0] & 0xff, 0); }
static int h_vmcall(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_VMCALL, 0, r->extra[0], 0); }
static int h_hlt(struct xen *X, unsigned v, const struct xrec *r) { (void)r; return ev(X, v, EV_HLT, 0, 0, 0); }
/* {is_invlpga, va} and {is_invlpga, va lo, va hi} */
static int h_invlpg(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_INVLPG, 0, r->extra[1], 0); }
static int h_invlpg64(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_INVLPG, 0, word64(r, 1), 0); }
static int h_clts(struct xen *X, unsigned v, const struct xrec *r) { (void)r; return ev(X, v, EV_CLTS, 0, 0, 0); }
static int h_lmsw(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_LMSW, 0, r->extra[0] & 0xffff, 0); }
static int h_rdtsc(struct xen *X, unsigned v, const struct xrec *r) { (void)r; return ev(X, v, EV_RDTSC, 0, 0, 0); }
/* Shadow paging's page fault: {va, error code} and {va lo, va hi, error code} */
static int pf(struct xen *X, unsigned v, uint64_t va, uint32_t ec) {
  import_exit_detail(&X->exits, v, ec);
  return ev(X, v, EV_TOUCH, (ec & 2) ? TOUCH_AUX_WRITE : 0, va & ~0xfffull, 1);
}
static int h_pf(struct xen *X, unsigned v, const struct xrec *r) { return pf(X, v, r->extra[0], r->extra[1]); }
static int h_pf64(struct xen *X, unsigned v, const struct xrec *r) { return pf(X, v, word64(r, 0), r->extra[2]); }
/* EPT violation: {gpa lo, gpa hi, mfn lo, mfn hi, qualification, p2m type}; bit 1: a write */
static int h_npf(struct xen *X, unsigned v, const struct xrec *r) {
  return ev(X, v, EV_TOUCH, (r->extra[4] & 2) ? TOUCH_AUX_WRITE : 0, word64(r, 0) & ~0xfffull, 1);
}
static int h_trap(struct xen *X, unsigned v, const struct xrec *r) { return ev(X, v, EV_EXC, 0, r->extra[0] & 0xff, 0); }
static int h_trap_debug(struct xen *X, unsigned v, const struct xrec *r) { (void)r; return ev(X, v, EV_EXC, 0, 1, 0); }
/* {port, data}: xentrace does not record the access size; 1 is assumed (counted) */
static int io(struct xen *X, unsigned v, const struct xrec *r, bool out) {
  X->io_size_assumed++;
  return ev(X, v, EV_IO, (out ? IO_AUX_OUT : 0) | 1u << 1, r->extra[0] & 0xffff, 0);
}
static int h_io_read(struct xen *X, unsigned v, const struct xrec *r) { return io(X, v, r, false); }
static int h_io_write(struct xen *X, unsigned v, const struct xrec *r) { return io(X, v, r, true); }
/* {index, value lo, value hi} */
static int h_xcr_write(struct xen *X, unsigned v, const struct xrec *r) {
  return ev(X, v, EV_XSETBV, 0, r->extra[0], word64(r, 1));
}

typedef int (*handler_fn)(struct xen *X, unsigned v, const struct xrec *r);
static const struct handler { uint32_t event; unsigned words; handler_fn fn; } handlers[] = {
  { TRC_HVM_HANDLER + 0x001, 2, h_pf },         /* PF_XEN */
  { TRC_HVM_HANDLER + 0x101, 3, h_pf64 },       /* PF_XEN64 */
  { TRC_HVM_HANDLER + 0x008, 2, h_cr_read },    /* CR_READ */
  { TRC_HVM_HANDLER + 0x108, 3, h_cr_read64 },
  { TRC_HVM_HANDLER + 0x009, 2, h_cr_write },   /* CR_WRITE */
  { TRC_HVM_HANDLER + 0x109, 3, h_cr_write64 },
  { TRC_HVM_HANDLER + 0x00c, 3, h_msr_read },   /* MSR_READ */
  { TRC_HVM_HANDLER + 0x00d, 3, h_msr_write },  /* MSR_WRITE */
  { TRC_HVM_HANDLER + 0x00e, 1, h_cpuid },      /* CPUID */
  { TRC_HVM_HANDLER + 0x00f, 1, h_intr },       /* INTR */
  { TRC_HVM_HANDLER + 0x012, 1, h_vmcall },     /* VMMCALL */
  { TRC_HVM_HANDLER + 0x013, 0, h_hlt },        /* HLT */
  { TRC_HVM_HANDLER + 0x014, 2, h_invlpg },     /* INVLPG */
  { TRC_HVM_HANDLER + 0x114, 3, h_invlpg64 },
  { TRC_HVM_HANDLER + 0x016, 1, h_io_read },    /* IOPORT_READ */
  { TRC_HVM_HANDLER + 0x216, 1, h_io_write },   /* IOPORT_WRITE */
  { TRC_HVM_HANDLER + 0x018, 0, h_clts },       /* CLTS */
  { TRC_HVM_HANDLER + 0x019, 1, h_lmsw },       /* LMSW */
  { TRC_HVM_HANDLER + 0x119, 2, h_lmsw },       /* LMSW64: the low word is the operand */
  { TRC_HVM_HANDLER + 0x01a, 0, h_rdtsc },      /* RDTSC */
  { TRC_HVM_HANDLER + 0x021, 6, h_npf },        /* NPF */
  { TRC_HVM_HANDLER + 0x023, 1, h_trap },       /* TRAP */
  { TRC_HVM_HANDLER + 0x024, 0, h_trap_debug }, /* TRAP_DEBUG */
  { TRC_HVM_HANDLER + 0x127, 3, h_xcr_write },  /* XCR_WRITE64 */
};

HOT const struct handler *handler_of(struct xen *X, uint32_t event) {
  if ((event & 0xfffff000u) != TRC_HVM_HANDLER) return NULL;
  const struct handler **slot = &X->recent[event % HANDLER_RECENT];
  if (*slot && (*slot)->event == event) return *slot;
  for (size_t i = 0; i < sizeof handlers / sizeof *handlers; i++)
    if (handlers[i].event == event) return *slot = &handlers[i];
  return NULL;
}

/* A handler record: explains the vCPU's pending exit (other records of the
** same exit, and records outside an exit, are counted and skipped). */
HOT int on_handler(struct xen *X, unsigned v, const struct xrec *r, const struct handler *h) {
  if (!(X->lv ? X->lv[v].pending : X->exits.v[v].pending)) return import_skip_id(X->im, r->event);
  int rc = h->fn(X, v, r);
  if (rc < 0) return import_skip_id(X->im, r->event);   /* understood, nothing to replay */
  if (X->lv) X->lv[v].pending = false;                 /* lean_event made it caused */
  else import_exit_explained(&X->exits, v, true);
  X->im->used++;
  return rc;
}

/* How far ahead of the record being read the input is asked for (two pages: the
** processor's own prefetch stops at each 4 KiB page), as the record loops
** waited for memory at every page (a quarter of a recording's summary). */
#define XEN_PREFETCH 8192

/* Decodes the record at off; returns its size, or 0 when the file ends inside it. */
HOT size_t decode(const unsigned char *buf, size_t len, size_t off, struct xrec *r) {
  if (len - off < 4) return 0;
  if (len - off > XEN_PREFETCH) __builtin_prefetch(buf + off + XEN_PREFETCH);
  uint32_t h = get32(buf + off);
  r->off = off;
  r->event = h & 0x0fffffffu;
  r->nextra = (h >> 28) & 7;
  r->has_tsc = h >> 31;
  size_t size = 4 + (r->has_tsc ? 8 : 0) + 4 * (size_t)r->nextra;
  if (len - off < size) return 0;
  const unsigned char *p = buf + off + 4;
  r->tsc = r->has_tsc ? get32(p) | (uint64_t)get32(p + 4) << 32 : 0;
  p += r->has_tsc ? 8 : 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  /* The file's words are little-endian, as the host's.  Where the buffer
  ** holds them, all seven words are copied (a fixed-size copy is a few
  ** instructions, a sized one a call); the words past nextra are never read. */
  if ((size_t)(buf + len - p) >= sizeof r->extra) memcpy(r->extra, p, sizeof r->extra);
  else memcpy(r->extra, p, 4 * (size_t)r->nextra);
#else
  for (unsigned i = 0; i < r->nextra; i++) r->extra[i] = get32(p + 4 * i);
#endif
  return size;
}

/* Extra words each used record needs. */
HOT unsigned words_needed(uint32_t event, const struct handler *h) {
  switch (event) {
  case TRC_TRACE_CPU_CHANGE: case TRC_HVM_VMEXIT: case TRC_HVM_VMEXIT64: return 1;
  case TRC_LOST_RECORDS: return 4;
  }
  if ((event & TRC_SCHED_MIN_MASK) == TRC_SCHED_MIN) return 1;
  return h ? h->words : 0;
}

HOT bool is_hvm(uint32_t event, const struct handler *h) {
  return h || event == TRC_HVM_VMEXIT || event == TRC_HVM_VMEXIT64 || event == TRC_HVM_VMENTRY;
}

/* The checks every record gets: a time seen, and the words it needs. */
HOT int check_record(struct xen *X, const struct xrec *r, const struct handler *h) {
  if (r->has_tsc) import_exits_saw_time(&X->exits, r->tsc);
  if (r->nextra >= words_needed(r->event, h)) return 0;
  char why[96];
  snprintf(why, sizeof why, "record 0x%08x has %u extra words, %u needed", r->event, r->nextra,
           words_needed(r->event, h));
  return import_bad(X->im, r->off, NULL, 0, why) ? -2 : -1;   /* -1: skipped, go on */
}

/* An HVM record of trace vCPU v. */
HOT int hvm_record(struct xen *X, unsigned v, const struct xrec *r, const struct handler *h) {
  struct import *im = X->im;
  if (h) {
    if (r->event == TRC_HVM_HANDLER + 0x009 || r->event == TRC_HVM_HANDLER + 0x109)
      saw(X, SEEN_CR_WRITE);
    return on_handler(X, v, r, h);
  }
  saw(X, r->event == TRC_HVM_VMENTRY ? SEEN_VMENTRY : SEEN_VMEXIT);
  if (r->event == TRC_HVM_VMENTRY) {
    im->used++;
    return x_entry(X, v, r->has_tsc, r->tsc);
  }
  if (r->has_tsc && x_gap_too_long(X, v, r->tsc))
    return import_bad(im, r->off, NULL, 0, IMPORT_GAP_WHY);
  if (X->sched) X->vc[X->dense_vc[v]].exits++;
  return exit_begins(X, v, r);
}

static void count_lost(struct xen *X, const struct xrec *r, unsigned pcpu) {
  X->lost_markers++;
  X->lost_records += r->extra[0];
  char text[IMPORT_TEXT_MAX];
  int n = snprintf(text, sizeof text, "pCPU %u lost %u records (TRC_LOST_RECORDS at byte %zu)", pcpu,
                   r->extra[0], r->off);
  import_recorder_warning(X->im, text, (size_t)n);
}

/* ---- file order: each pCPU is a vCPU (no scheduler records) ---- */

static int on_record_file_order(struct xen *X, const struct xrec *r) {
  struct import *im = X->im;
  const struct handler *h = handler_of(X, r->event);
  int ck = check_record(X, r, h);
  if (ck) return ck == -2 ? EXIT_BADINPUT : 0;
  if (r->event == TRC_TRACE_CPU_CHANGE) {
    X->vcpu = import_vcpu_of_cpu(im, r->extra[0] & 0xffff);
    if (X->vcpu < 0) return import_bad(im, r->off, NULL, 0, "more than 256 physical CPUs");
    im->used++;
    return 0;
  }
  if (r->event == TRC_LOST_RECORDS && X->vcpu >= 0) {
    count_lost(X, r, (unsigned)im->native_cpu[X->vcpu]);
    x_forget(X, (unsigned)X->vcpu);                     /* its entry may be among the lost */
    im->used++;
    return 0;
  }
  if (!is_hvm(r->event, h)) return import_skip_id(im, r->event);
  if (X->vcpu < 0) return import_skip_why(im, "HVM record before the first CPU change");
  return hvm_record(X, (unsigned)X->vcpu, r, h);
}

/* ---- scheduler records: who runs on each pCPU (xenalyze's rules) ---- */

static struct xvcpu *vcpu_find(struct xen *X, unsigned dom, unsigned vid) {
  uint32_t key = (uint32_t)dom << 16 | vid;
  int64_t *slot = import_map_get(&X->vc_of, key);
  if (slot) return &X->vc[*slot];
  if (X->nvc == XEN_SCHED_VCPUS_MAX) return NULL;
  if (X->nvc == X->capvc) {
    X->capvc = X->capvc ? 2 * X->capvc : 16;
    X->vc = xrealloc(X->vc, X->capvc * sizeof *X->vc);
  }
  struct xvcpu *v = &X->vc[X->nvc];
  *v = (struct xvcpu){ .dom = (uint16_t)dom, .vid = (uint16_t)vid, .state = RS_INIT, .pcpu = -1, .dense = -1 };
  *import_map_put(&X->vc_of, key, 0) = X->nvc++;
  return v;
}

static int vc_index(const struct xen *X, const struct xvcpu *v) { return (int)(v - X->vc); }

/* The vCPU's open exit is not measured (lost records may hold its end). */
static void lose(struct xen *X, struct xvcpu *v) {
  if (v->dense >= 0) x_forget(X, (unsigned)v->dense);
  v->state = RS_LOST;
}

/* v leaves pCPU p for state `to` (xenalyze's vcpu_prev_update). */
static void leave(struct xen *X, unsigned p, struct xvcpu *v, unsigned to) {
  X->pc[p].cur = -1;
  v->state = (uint8_t)to;
}

/* v runs on pCPU p from now (vcpu_next_update, vcpu_start). */
static void enter(struct xen *X, unsigned p, struct xvcpu *v) {
  X->pc[p].cur = vc_index(X, v);
  v->pcpu = (int)p;
  v->state = RS_RUNNING;
}

/* Is the transition old -> new of a vCPU now in `state` out of step (a skewed
** clock between pCPUs)?  xenalyze then leaves a running vCPU as it is, a lost
** one unless it starts running, and updates the others. */
static bool runstate_ignored(const struct xvcpu *v, unsigned old, unsigned new) {
  if (v->state == old || v->state == RS_INIT) return false;
  if (v->state == RS_LOST) return new != RS_RUNNING;
  return v->state == RS_RUNNING;
}

/* TRC_SCHED_MIN + 1 (change: event bits 11:8 old runstate, 7:4 new) or + 2
** (continue running), {vCPU (15:0), domain (31:16)}. */
static int on_runstate(struct xen *X, unsigned p, const struct xrec *r) {
  unsigned kind = r->event & 0xf;
  if (kind != 1 && kind != 2) return import_skip_id(X->im, r->event);
  unsigned old = kind == 1 ? (r->event >> 8) & 0xf : RS_RUNNING, new = kind == 1 ? (r->event >> 4) & 0xf : RS_RUNNING;
  struct xvcpu *v = vcpu_find(X, r->extra[0] >> 16, r->extra[0] & 0xffff);
  if (!v) return import_bad(X->im, r->off, NULL, 0, "more than 65536 (domain, vCPU) pairs");
  X->sched_records++;
  X->im->used++;
  int rc = 0;
  if (new == RS_RUNNABLE && v->dense >= 0)       /* preempted or woken: the exit ends here */
    rc = x_close(X, (unsigned)v->dense, r->tsc);
  if (rc || runstate_ignored(v, old, new)) return rc;
  if (kind == 2) {
    if (v->state == RS_LOST && X->pc[p].cur >= 0) leave(X, p, &X->vc[X->pc[p].cur], RS_LOST);
    if (v->state == RS_INIT || v->state == RS_LOST) enter(X, p, v);
  } else if (old == RS_RUNNING || v->state == RS_RUNNING) {
    unsigned from = old == RS_RUNNING || v->pcpu < 0 ? p : (unsigned)v->pcpu;
    if (v->state == RS_INIT) enter(X, p, v);    /* start of day: it ran here before the first record */
    leave(X, from, v, new);
    if (X->lost_cpus && v->dom != XEN_IDLE_DOMAIN) lose(X, v);
  } else if (new == RS_RUNNING) {
    enter(X, p, v);
  } else if (v->state != RS_INIT) {
    v->state = (uint8_t)new;
  }
  return 0;
}

/* A lost-records marker, first at the first lost TSC, then (end) at its own. */
static int on_lost(struct xen *X, unsigned p, const struct xrec *r, bool end) {
  struct xpcpu *P = &X->pc[p];
  if (end) {
    if (!P->lost || r->tsc <= P->lost_tsc) return 0;
    if (P->lost_vcpu_valid) {
      struct xvcpu *v = vcpu_find(X, P->lost_dom, P->lost_vid);
      if (!v) return import_bad(X->im, r->off, NULL, 0, "more than 65536 (domain, vCPU) pairs");
      enter(X, p, v);
    }
    P->lost = P->lost_vcpu_valid = false;
    X->lost_cpus--;
    return 0;
  }
  count_lost(X, r, p);
  X->im->used++;
  uint64_t first = r->extra[2] | (uint64_t)r->extra[3] << 32;
  if (P->cur >= 0) {
    lose(X, &X->vc[P->cur]);
    leave(X, p, &X->vc[P->cur], RS_LOST);
  }
  if (!P->lost) X->lost_cpus++;
  P->lost = true;
  P->lost_tsc = first;
  for (unsigned i = 0; i < X->nvc; i++)           /* any vCPU not running may have run here */
    if (X->vc[i].state != RS_RUNNING) lose(X, &X->vc[i]);
  P->lost_vcpu_valid = true;
  P->lost_dom = (uint16_t)(r->extra[1] & 0xffff);
  P->lost_vid = (uint16_t)(r->extra[1] >> 16);
  return 0;
}

/* The trace vCPU of the (domain, vCPU) running on pCPU p, allocated on its
** first HVM record; -1: the record is skipped (counted), -2: failed. */
static int running_vcpu(struct xen *X, unsigned p, const struct xrec *r) {
  struct import *im = X->im;
  int c = X->pc[p].cur;
  if (c < 0) return import_skip_why(im, "HVM record on a pCPU no runstate record has placed a vCPU on") ? -2 : -1;
  struct xvcpu *v = &X->vc[c];
  if (v->dom == XEN_IDLE_DOMAIN) return import_skip_why(im, "HVM record of the idle domain") ? -2 : -1;
  if (im->opt.one_domain && v->dom != im->opt.domain)
    return import_skip_why(im, "HVM record of another domain (--domain)") ? -2 : -1;
  if (im->opt.domain_required && !im->opt.one_domain && v->dom == 0)   /* a replay takes the guest */
    return import_skip_why(im, "HVM record of dom0 (a replay takes a guest; --domain 0 replays dom0)") ? -2 : -1;
  if (v->dense >= 0) return v->dense;
  if (im->nvcpus >= TRACE_VCPU_MAX) {
    import_bad(im, r->off, NULL, 0, "more than 256 vCPUs with HVM records");
    im->opt.skip_bad = false;                       /* no vCPU to put it on: the import stops */
    return -2;
  }
  v->dense = (int)im->nvcpus;
  X->dense_vc[v->dense] = c;
  import_use_vcpu(im, (unsigned)v->dense);
  im->native_cpu[v->dense] = -1;
  return v->dense;
}

static int on_record_sched(struct xen *X, unsigned p, const struct xrec *r, bool lost_end) {
  if (lost_end) return on_lost(X, p, r, true);
  const struct handler *h = handler_of(X, r->event);
  int ck = check_record(X, r, h);
  if (ck) return ck == -2 ? EXIT_BADINPUT : 0;
  if (r->event == 0) return import_bad(X->im, r->off, NULL, 0, "event 0 (not a xentrace record; zero padding?)");
  if (r->event == TRC_TRACE_CPU_CHANGE) { X->im->used++; return 0; }
  if (r->event == TRC_LOST_RECORDS) return on_lost(X, p, r, false);
  if ((r->event & TRC_SCHED_MIN_MASK) == TRC_SCHED_MIN) return on_runstate(X, p, r);
  if (!is_hvm(r->event, h)) return import_skip_id(X->im, r->event);
  int v = running_vcpu(X, p, r);
  return v == -2 ? EXIT_BADINPUT : v < 0 ? 0 : hvm_record(X, (unsigned)v, r, h);
}

/* ---- the pCPUs' records in TSC order (xenalyze's record_order) ---- */

/* Reads pCPU p's next record; false at the end of its windows. */
static bool read_ahead(struct xen *X, const unsigned char *buf, unsigned p) {
  struct xpcpu *P = &X->pc[p];
  while (P->win >= 0) {
    if (P->off < P->end && decode(buf, P->end, P->off, &P->rec)) {
      P->off += 4 + (P->rec.has_tsc ? 8 : 0) + 4 * (size_t)P->rec.nextra;
      import_populate(X->im, buf, P->off + 40);
      if (!P->rec.has_tsc) P->rec.tsc = P->last_tsc;
      else {
        P->last_tsc = P->rec.tsc;
        P->order_tsc = P->rec.event == TRC_LOST_RECORDS && P->rec.nextra == 4
                       ? (P->rec.extra[2] | (uint64_t)P->rec.extra[3] << 32) : P->rec.tsc;
      }
      return true;
    }
    P->win = X->win[P->win].next;
    if (P->win >= 0) { P->off = X->win[P->win].start; P->end = X->win[P->win].end; }
  }
  P->active = false;
  return false;
}

/* Moves order[0] down past the pCPUs whose next record comes earlier. */
static void bubble(struct xen *X, unsigned *order, unsigned n) {
  unsigned first = order[0], i = 0;
  for (; i + 1 < n && X->pc[order[i + 1]].order_tsc < X->pc[first].order_tsc; i++) order[i] = order[i + 1];
  order[i] = first;
}

/* The lowest byte offset a pCPU still has to read (pages below it can be given back). */
static size_t lowest_offset(const struct xen *X, const unsigned *order, unsigned n) {
  size_t low = SIZE_MAX;
  for (unsigned i = 0; i < n; i++) {
    const struct xpcpu *P = &X->pc[order[i]];
    size_t o = P->rec.off < P->off ? P->rec.off : P->off;
    if (o < low) low = o;
  }
  return low;
}

static int merge_pcpus(struct xen *X, const unsigned char *buf) {
  unsigned order[XEN_PCPU_MAX], n = 0;
  for (unsigned p = 0; p < XEN_PCPU_MAX; p++) {
    struct xpcpu *P = &X->pc[p];
    if (!P->seen) continue;
    P->win = P->first_win;
    P->off = X->win[P->win].start;
    P->end = X->win[P->win].end;
    P->active = true;
    if (!read_ahead(X, buf, p)) continue;
    unsigned i = n++;
    for (; i > 0 && X->pc[order[i - 1]].order_tsc > P->order_tsc; i--) order[i] = order[i - 1];
    order[i] = p;
  }
  int rc = 0;
  for (uint64_t k = 1; rc == 0 && n > 0; k++) {
    unsigned p = order[0];
    struct xpcpu *P = &X->pc[p];
    X->im->units += !P->lost_end_due;
    bool lost_start = !P->lost_end_due && P->rec.event == TRC_LOST_RECORDS && P->rec.nextra == 4;
    rc = on_record_sched(X, p, &P->rec, P->lost_end_due);
    if (lost_start) {                               /* read again, as its end, at its own TSC */
      P->lost_end_due = true;
      if (P->rec.tsc > P->order_tsc) P->order_tsc = P->rec.tsc;
    } else {
      P->lost_end_due = false;
      if (!read_ahead(X, buf, p)) { memmove(order, order + 1, --n * sizeof *order); continue; }
    }
    bubble(X, order, n);
    if (k % 65536 == 0) import_release(X->im, buf, lowest_offset(X, order, n));
  }
  return rc;
}

/* ---- the first pass: windows, and whether the scheduler's records are there ---- */

static void add_window(struct xen *X, int cpu, size_t start) {
  if (X->nwin == X->capwin) {
    X->capwin = X->capwin ? 2 * X->capwin : 64;
    X->win = xrealloc(X->win, X->capwin * sizeof *X->win);
  }
  X->win[X->nwin] = (struct xwin){ .start = start, .end = start, .next = -1 };
  struct xpcpu *P = &X->pc[cpu];
  if (!P->seen) { P->seen = true; P->first_win = (int)X->nwin; }
  else X->win[P->win].next = (int)X->nwin;
  P->win = (int)X->nwin++;
}

/* Walks the records' headers: the windows of each pCPU, the byte where the
** first pCPU change is (*lead: what comes before is on no pCPU), and where a
** record the file ends inside starts (*cut, len when none).  True when
** scheduler records are there. */
static bool scan(struct xen *X, const unsigned char *buf, size_t len, size_t *lead, size_t *cut, bool *too_many) {
  bool sched = false;
  int cpu = -1;
  size_t off = 0;
  *lead = len;
  *too_many = false;
  /* Only the headers are read (and a CPU change's first word): this pass
  ** decodes no record, as decode() would, it only finds where each starts. */
  for (size_t size; len - off >= 4; off += size) {
    uint32_t h = get32(buf + off), event = h & 0x0fffffffu;
    unsigned nextra = (h >> 28) & 7;
    size_t tsc_bytes = (h >> 31) ? 8 : 0;
    size = 4 + tsc_bytes + 4 * (size_t)nextra;
    if (len - off < size) break;
    import_release(X->im, buf, off);              /* the second pass maps the pages in again */
    import_populate(X->im, buf, off + 40);        /* 40: the longest record */
    sched |= (event & TRC_SCHED_MIN_MASK) == TRC_SCHED_MIN;
    if (event != TRC_TRACE_CPU_CHANGE || nextra < 1) continue;
    uint32_t pcpu = get32(buf + off + 4 + tsc_bytes) & 0xffff;
    if (cpu >= 0) X->win[X->pc[cpu].win].end = off;
    else *lead = off;
    if (pcpu >= XEN_PCPU_MAX) { *too_many = true; *cut = off; return sched; }
    cpu = (int)pcpu;
    add_window(X, cpu, off);
  }
  if (cpu >= 0) X->win[X->pc[cpu].win].end = off;
  *cut = off;
  return sched;
}

/* What comes before the first pCPU change runs on no pCPU. */
static int lead_records(struct xen *X, const unsigned char *buf, size_t lead) {
  int rc = 0;
  struct xrec r;
  for (size_t off = 0, size; rc == 0 && off < lead && (size = decode(buf, lead, off, &r)); off += size) {
    X->im->units++;
    const struct handler *h = handler_of(X, r.event);
    int ck = check_record(X, &r, h);
    if (ck) { rc = ck == -2 ? EXIT_BADINPUT : 0; continue; }
    rc = r.event == 0 ? import_bad(X->im, off, NULL, 0, "event 0 (not a xentrace record; zero padding?)")
                      : import_skip_why(X->im, "record before the first CPU change");
  }
  return rc;
}

static int import_sched(struct xen *X, const unsigned char *buf, size_t len, size_t lead, size_t cut,
                        bool too_many) {
  struct import *im = X->im;
  int rc = 0;
  if (too_many) rc = import_bad(im, cut, NULL, 0, "more than 256 physical CPUs");
  else if (cut < len) {
    char why[96];
    snprintf(why, sizeof why, "truncated record: the file ends %zu bytes into it", len - cut);
    rc = import_bad(im, cut, NULL, 0, why);
  }
  if (rc == 0) rc = lead_records(X, buf, lead);
  if (rc == 0) rc = merge_pcpus(X, buf);
  import_release(im, buf, len);
  return rc;
}

static int import_file_order(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
  int rc = 0;
  size_t off = 0;
  while (rc == 0 && off < len) {
    struct xrec r;
    size_t size = decode(buf, len, off, &r);
    im->units++;
    if (size == 0) {
      char why[96];
      snprintf(why, sizeof why, "truncated record: the file ends %zu bytes into it", len - off);
      rc = import_bad(im, off, NULL, 0, why);
      break;                                   /* nothing follows to resynchronise on */
    }
    rc = r.event == 0 ? import_bad(im, off, NULL, 0, "event 0 (not a xentrace record; zero padding?)")
                      : on_record_file_order(X, &r);
    off += size;
    import_release(im, buf, off);
    import_populate(im, buf, off + 40);
  }
  return rc;
}

/* ---- the lean pass: a summary's one pass over a recording without
** scheduler records (opt.note).  It reads the records import_file_order
** reads, in the same order, with the same state machine (import_exit.h's,
** followed here without its records: the exit's own state, and what
** views_feed would make of the records it would emit), and keeps the same
** counts for the metadata; it gives up (IMPORT_NOT_LEAN) on anything else:
** scheduler or lost records, other events, bad or truncated records, a
** handler record outside an exit. ---- */

/* A handler record of v's pending exit: its handler's event (lean_event). */
static int lean_handler(struct xen *X, unsigned v, const struct xrec *r) {
  const struct handler *h = handler_of(X, r->event);
  if (!h || r->nextra < h->words || !X->lv[v].pending) return IMPORT_NOT_LEAN;
  if (r->event == TRC_HVM_HANDLER + 0x009 || r->event == TRC_HVM_HANDLER + 0x109) saw(X, SEEN_CR_WRITE);
  if (h->fn(X, v, r) < 0) return IMPORT_NOT_LEAN;              /* the full import skips it */
  X->lv[v].pending = false;
  X->im->used++;
  return 0;
}

/* One record; v: the current pCPU's vCPU (-1 before the first CPU change). */
static int lean_record(struct xen *X, int *v, const struct xrec *r) {
  struct import *im = X->im;
  if (r->has_tsc) import_exits_saw_time(&X->exits, r->tsc);
  if (r->event == TRC_TRACE_CPU_CHANGE) {
    if (r->nextra < 1 || (*v = import_vcpu_of_cpu(im, r->extra[0] & 0xffff)) < 0) return IMPORT_NOT_LEAN;
    im->used++;
    return 0;
  }
  if (*v < 0) return IMPORT_NOT_LEAN;
  unsigned vc = (unsigned)*v;
  if (r->event == TRC_HVM_VMENTRY) {
    saw(X, SEEN_VMENTRY);
    im->used++;
    return lean_entry(X, vc, r->has_tsc, r->tsc);
  }
  if (r->event != TRC_HVM_VMEXIT && r->event != TRC_HVM_VMEXIT64) return lean_handler(X, vc, r);
  const struct lean_vcpu *L = &X->lv[vc];
  if (r->nextra < 1 || r->extra[0] >= 0xffff ||
      (r->has_tsc && L->in_guest && r->tsc > L->entry_time && r->tsc - L->entry_time > IMPORT_GAP_MAX))
    return IMPORT_NOT_LEAN;
  saw(X, SEEN_VMEXIT);
  im->used++;
  return lean_begins(X, vc, r->has_tsc, r->tsc, r->extra[0]);
}

static int lean_records(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
  int v = -1, rc = 0;
  struct xrec r;
  for (size_t off = 0, size; rc == 0 && off < len; off += size) {
    size = decode(buf, len, off, &r);
    if (!size || r.event == 0) return IMPORT_NOT_LEAN;
    im->units++;
    rc = lean_record(X, &v, &r);
    import_release(im, buf, off + size);
    import_populate(im, buf, off + size + 40);
  }
  for (unsigned i = 0; rc == 0 && i < im->nvcpus; i++) rc = lean_settle(X, i);   /* import_exits_finish */
  return rc;
}

/* The headers first (the windows, and whether the scheduler's records are
** there), then the records: in TSC order with them, in file order without. */
static int import_scanned(struct xen *X, const unsigned char *buf, size_t len) {
  size_t lead, cut;
  bool too_many;
  X->sched = scan(X, buf, len, &lead, &cut, &too_many);
  X->im->map_released = X->im->map_populated = 0;   /* the second pass maps them in and gives them back again */
  return X->sched ? import_sched(X, buf, len, lead, cut, too_many) : import_file_order(X, buf, len);
}

static int import_lean(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
  import_emit_fn emit = im->emit;
  void *ctx = im->emit_ctx;
  bool inline_inits = im->opt.inits_inline;
  X->lv = xcalloc(TRACE_VCPU_MAX, sizeof *X->lv);
  im->emit = lean_capture;                       /* the events of exits left unexplained */
  im->emit_ctx = X;
  im->opt.inits_inline = false;                  /* lean_first follows them */
  int rc = im->opt.note_scan ? import_scanned(X, buf, len) : lean_records(X, buf, len);
  im->emit = emit;
  im->emit_ctx = ctx;
  im->opt.inits_inline = inline_inits;
  free(X->lv);
  X->lv = NULL;
  return rc;
}

/* ---- metadata ---- */

static int by_domain(const void *a, const void *b) {
  const struct xvcpu *x = *(const struct xvcpu *const *)a, *y = *(const struct xvcpu *const *)b;
  return x->dom != y->dom ? (x->dom < y->dom ? -1 : 1) : (x->vid > y->vid) - (x->vid < y->vid);
}

/* "vcpus": each trace vCPU's domain and vCPU; "domains": per domain with HVM
** records, its vCPUs and exits, in domain order. */
static void add_domains(struct xen *X) {
  cJSON *m = X->im->meta;
  cJSON *vcpus = cJSON_AddArrayToObject(m, "vcpus");
  const struct xvcpu **v = xmalloc((X->im->nvcpus + 1) * sizeof *v);
  for (unsigned i = 0; i < X->im->nvcpus; i++) {
    const struct xvcpu *x = v[i] = &X->vc[X->dense_vc[i]];
    char name[24];
    snprintf(name, sizeof name, "d%uv%u", x->dom, x->vid);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddNumberToObject(o, "domain", x->dom);
    cJSON_AddNumberToObject(o, "vcpu", x->vid);
    cJSON_AddItemToArray(vcpus, o);
  }
  qsort(v, X->im->nvcpus, sizeof *v, by_domain);
  cJSON *doms = cJSON_AddArrayToObject(m, "domains");
  for (unsigned i = 0; i < X->im->nvcpus;) {
    unsigned j = i;
    uint64_t exits = 0;
    for (; j < X->im->nvcpus && v[j]->dom == v[i]->dom; j++) exits += v[j]->exits;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "domain", v[i]->dom);
    cJSON_AddNumberToObject(o, "vcpus", j - i);
    cJSON_AddNumberToObject(o, "exits", (double)exits);
    cJSON_AddItemToArray(doms, o);
    i = j;
  }
  free(v);
}

static void add_metadata(struct xen *X) {
  cJSON *m = X->im->meta;
  if (X->sched) {
    cJSON_AddNumberToObject(m, "scheduler_records", (double)X->sched_records);
    add_domains(X);
  } else {
    import_add_native_cpus(X->im, "pcpus");
  }
  if (X->lost_markers) {
    cJSON *l = cJSON_AddObjectToObject(m, "lost_records");
    cJSON_AddNumberToObject(l, "markers", (double)X->lost_markers);
    cJSON_AddNumberToObject(l, "records", (double)X->lost_records);
  }
  import_exits_add_counts(&X->exits);
  cJSON_AddNumberToObject(m, "cr_writes", (double)X->cr_writes);
  cJSON_AddNumberToObject(m, "io_size_assumed", (double)X->io_size_assumed);
  import_exits_add_reasons(&X->exits);
}

/* A replay takes one guest: with several guest domains (dom0 and the idle
** domain apart), it needs --domain. */
static int check_one_guest(struct xen *X) {
  struct import *im = X->im;
  if (!im->opt.domain_required || im->opt.one_domain || !X->sched) return 0;
  char list[256] = "";
  unsigned guests = 0;
  uint8_t listed[65536 / 8] = { 0 };
  for (unsigned i = 0; i < im->nvcpus; i++) {
    unsigned d = X->vc[X->dense_vc[i]].dom;
    if (d == 0 || (listed[d / 8] >> (d % 8) & 1)) continue;
    listed[d / 8] = (uint8_t)(listed[d / 8] | 1u << (d % 8));
    guests++;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%u", used ? ", " : "", d);
  }
  if (guests < 2) return 0;
  snprintf(im->err, sizeof im->err, "%s: the recording holds %u guest domains (%s): give --domain D to replay one",
           im->opt.input, guests, list);
  return EXIT_USAGE;
}

int import_xentrace(struct import *im, const unsigned char *buf, size_t len) {
  struct xen *X = xcalloc(1, sizeof *X);
  X->im = im;
  X->pc = xcalloc(XEN_PCPU_MAX, sizeof *X->pc);
  for (unsigned p = 0; p < XEN_PCPU_MAX; p++) X->pc[p].cur = X->pc[p].first_win = X->pc[p].win = -1;
  import_exits_init(&X->exits, im, false);
  X->vcpu = -1;
  im->binary = true;
  int rc = im->opt.note ? import_lean(X, buf, len) : import_scanned(X, buf, len);
  if (rc == 0) rc = x_finish(X);
  if (rc == 0) rc = check_one_guest(X);
  if (rc == 0) add_metadata(X);
  import_map_free(&X->vc_of);
  free(X->vc);
  free(X->win);
  free(X->pc);
  free(X);
  return rc;
}

/* ---- the format's row (the table of sim/import/import.c) ---- */

/* xentrace: the HVM records this importer reads. */
static const struct import_need xen_needs[] = {
  { "HVM VMEXIT", "VM exits", "no VM exits" },
  { "HVM VMENTRY", "VM entries (guest time between exits: run cycles)",
    "no VM entries: the guest's time between exits is not replayed (no run cycles)" },
  { "HVM CR_WRITE", "control-register writes (register and value)", NULL },
};

static const char xen_usage[] =
  "usage: vmxsim import xentrace IN.bin -o OUT.bin [--domain D] [--paging 32|pae|64]\n"
  "                              [--workload NAME] [--skip-bad]\n"
  "\n"
  "IN.bin is a Xen binary trace (xentrace, host byte order). Used records:\n"
  "  CPU change 0x0001f003 {cpu, bytes}   following records ran on that pCPU\n"
  "  runstate 0x00021xx1/0x00021002       the scheduler: which (domain, vCPU) runs on\n"
  "    {vcpu, domain}                     each pCPU (xenalyze's rules; the pCPUs'\n"
  "                                       records taken in TSC order); each one with\n"
  "                                       HVM records becomes a vCPU, named d1v0 in the\n"
  "                                       metadata; the idle domain's are skipped.\n"
  "                                       Without them each pCPU becomes a vCPU (pin\n"
  "                                       vCPUs to pCPUs)\n"
  "  lost records 0x0001f001              counted and reported; the exits whose end\n"
  "                                       they may hold are not measured\n"
  "  HVM VMEXIT 0x00081102/0x00081002     the exit (reason); its TSC minus the vCPU's\n"
  "                                       last VMENTRY's becomes 'run' cycles\n"
  "  HVM handler records 0x00082xxx       the pending exit's action: CR_READ/WRITE\n"
  "                                       crNr/crNw, MSR_READ/WRITE rdmsr/wrmsr,\n"
  "                                       IOPORT_READ/WRITE io (size 1: not recorded),\n"
  "                                       CPUID cpuid LEAF, INTR intr, VMMCALL vmcall,\n"
  "                                       HLT, INVLPG, CLTS, LMSW, RDTSC, PF_XEN touch,\n"
  "                                       NPF touch, TRAP exc, XCR_WRITE64 xsetbv\n"
  "  HVM VMENTRY 0x00081001               end of the exit: its TSC minus the VMEXIT's\n"
  "                                       is the exit's measured cost (vmxsim summary);\n"
  "                                       a runstate change to runnable (preempted,\n"
  "                                       woken) ends it too\n"
  "Exits without a detail record become hlt, rdtsc, pause, wbinvd, cpuid 0 or\n"
  "vmcall 0 where the reason says enough; the rest are counted in the metadata.\n"
  "Other records are counted and skipped.  --domain D keeps Xen domain D's vCPUs\n"
  "(default: every domain with HVM records, dom0's too); a replay of a recording\n"
  "of several guest domains needs it.\n"
  "\n"
  "example:\n"
  "  xentrace -D -e 0x000af000 xen.bin     # scheduler and HVM classes, on the Xen host\n"
  "  vmxsim import xentrace xen.bin -o xen.bin.trace\n"
  "  vmxsim summary --domain 1 --vcpu 0 xen.bin.trace\n";

/* xentrace starts with a CPU-change record (0x0001f003, with the TSC flag and
** extra-word count in its top bits). */
static int xen_probe(const unsigned char *head, size_t n, const char *text) {
  (void)text;
  if (n < 4) return IMPORT_PROBE_NO;
  uint32_t w0 = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 | (uint32_t)head[3] << 24;
  return (w0 & 0x0fffffffu) == 0x0001f003u ? IMPORT_PROBE_MAGIC : IMPORT_PROBE_NO;
}

static int xen_run(struct import *im, const char *buf, size_t len) {
  return import_xentrace(im, (const unsigned char *)buf, len);
}

const struct import_format import_xentrace_format = {
  .name = "xentrace",
  .summary = "Xen binary trace: HVM VMEXIT, VMENTRY and handler records",
  .usage = xen_usage,
  .recording = "xentrace",
  .probe = xen_probe,
  .run = xen_run,
  .binary = true,
  .needs = xen_needs,
  .nneeds = sizeof xen_needs / sizeof *xen_needs,
};
