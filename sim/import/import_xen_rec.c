/* xentrace: the HVM records (exit, entry, the handlers' details) of one vCPU. */
#include "import_xen_rec.h"
#include "import_xen_lean.h"
#include "sim/base/util.h"

#include <stdio.h>

/* An exit record: only its reason is recorded. */
static int exit_begins(struct xen *X, unsigned v, const struct xrec *r) {
  struct import_exit x = { .reason = r->extra[0] < 0xffff ? (int)r->extra[0] : 0xffff };   /* counted by number */
  X->im->used++;
  if (X->lv) return xen_lean_begins(X, v, r->has_tsc, r->tsc, (unsigned)x.reason);
  return import_exit_begins(&X->exits, v, r->has_tsc, r->tsc, &x);
}

/* ---- handler records (xen/include/public/trace.h, TRC_HVM_HANDLER + n; the
** layouts are those of the HVMTRACE calls in xen/arch/x86/hvm/ and read by
** tools/xentrace/xenalyze.c).  Each explains the vCPU's pending exit with
** one event. ---- */

HOT int ev(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  return X->lv ? xen_lean_event(X, v, type, aux, a, b) : import_emit(X->im, v, type, aux, a, b);
}

HOT int h_cr(struct xen *X, unsigned v, const uint32_t *w, bool write, bool wide) {
  uint32_t cr = w[0];
  uint64_t val = wide ? word64(w, 1) : w[1];
  if (!import_exit_cr_ok(cr)) return -1;
  if (cr == 3) import_exit_cr3_seen(&X->exits, v, val);
  if (!write) return ev(X, v, EV_CR_READ, cr, 0, 0);
  X->cr_writes++;
  return ev(X, v, EV_CR_WRITE, cr, val, 0);
}
static int h_cr_read(struct xen *X, unsigned v, const uint32_t *w) { return h_cr(X, v, w, false, false); }
static int h_cr_read64(struct xen *X, unsigned v, const uint32_t *w) { return h_cr(X, v, w, false, true); }
static int h_cr_write(struct xen *X, unsigned v, const uint32_t *w) { return h_cr(X, v, w, true, false); }
static int h_cr_write64(struct xen *X, unsigned v, const uint32_t *w) { return h_cr(X, v, w, true, true); }
/* {msr, value lo, value hi} */
static int h_msr_read(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_RDMSR, 0, w[0], 0); }
static int h_msr_write(struct xen *X, unsigned v, const uint32_t *w) {
  return ev(X, v, EV_WRMSR, 0, w[0], word64(w, 1));
}
/* {leaf, eax, ebx, ecx, edx}: the subleaf is not recorded */
static int h_cpuid(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_CPUID, 0, w[0], 0); }
static int h_intr(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_INTR, 0, w[0] & 0xff, 0); }
static int h_vmcall(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_VMCALL, 0, w[0], 0); }
static int h_hlt(struct xen *X, unsigned v, const uint32_t *w) { (void)w; return ev(X, v, EV_HLT, 0, 0, 0); }
/* {is_invlpga, va} and {is_invlpga, va lo, va hi} */
static int h_invlpg(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_INVLPG, 0, w[1], 0); }
static int h_invlpg64(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_INVLPG, 0, word64(w, 1), 0); }
static int h_clts(struct xen *X, unsigned v, const uint32_t *w) { (void)w; return ev(X, v, EV_CLTS, 0, 0, 0); }
static int h_lmsw(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_LMSW, 0, w[0] & 0xffff, 0); }
static int h_rdtsc(struct xen *X, unsigned v, const uint32_t *w) { (void)w; return ev(X, v, EV_RDTSC, 0, 0, 0); }
/* Shadow paging's page fault: {va, error code} and {va lo, va hi, error code} */
HOT int pf(struct xen *X, unsigned v, uint64_t va, uint32_t ec) {
  import_exit_detail(&X->exits, v, ec);
  return ev(X, v, EV_TOUCH, (ec & 2) ? TOUCH_AUX_WRITE : 0, va & ~0xfffull, 1);
}
static int h_pf(struct xen *X, unsigned v, const uint32_t *w) { return pf(X, v, w[0], w[1]); }
static int h_pf64(struct xen *X, unsigned v, const uint32_t *w) { return pf(X, v, word64(w, 0), w[2]); }
/* EPT violation: {gpa lo, gpa hi, mfn lo, mfn hi, qualification, p2m type}; bit 1: a write */
static int h_npf(struct xen *X, unsigned v, const uint32_t *w) {
  return ev(X, v, EV_TOUCH, (w[4] & 2) ? TOUCH_AUX_WRITE : 0, word64(w, 0) & ~0xfffull, 1);
}
static int h_trap(struct xen *X, unsigned v, const uint32_t *w) { return ev(X, v, EV_EXC, 0, w[0] & 0xff, 0); }
static int h_trap_debug(struct xen *X, unsigned v, const uint32_t *w) { (void)w; return ev(X, v, EV_EXC, 0, 1, 0); }
/* {port, data}: xentrace does not record the access size; 1 is assumed (counted) */
HOT int io(struct xen *X, unsigned v, const uint32_t *w, bool out) {
  X->io_size_assumed++;
  return ev(X, v, EV_IO, (out ? IO_AUX_OUT : 0) | 1u << 1, w[0] & 0xffff, 0);
}
static int h_io_read(struct xen *X, unsigned v, const uint32_t *w) { return io(X, v, w, false); }
static int h_io_write(struct xen *X, unsigned v, const uint32_t *w) { return io(X, v, w, true); }
/* {index, value lo, value hi} */
static int h_xcr_write(struct xen *X, unsigned v, const uint32_t *w) {
  return ev(X, v, EV_XSETBV, 0, w[0], word64(w, 1));
}

const struct handler xen_handlers[] = {
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

const size_t xen_nhandlers = sizeof xen_handlers / sizeof *xen_handlers;

/* A handler record: explains the vCPU's pending exit (other records of the
** same exit, and records outside an exit, are counted and skipped). */
static int on_handler(struct xen *X, unsigned v, const struct xrec *r, const struct handler *h) {
  if (!(X->lv ? X->lv[v].pending : X->exits.v[v].pending)) return import_skip_id(X->im, r->event);
  int rc = h->fn(X, v, r->extra);
  if (rc < 0) return import_skip_id(X->im, r->event);   /* understood, nothing to replay */
  if (X->lv) X->lv[v].pending = false;                 /* lean_event made it caused */
  else import_exit_explained(&X->exits, v, true);
  X->im->used++;
  return rc;
}

/* An HVM record of trace vCPU v. */
int xen_hvm_record(struct xen *X, unsigned v, const struct xrec *r, const struct handler *h) {
  struct import *im = X->im;
  if (h) {
    xen_saw_handler(X, r->event);
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

void xen_count_lost(struct xen *X, const struct xrec *r, unsigned pcpu) {
  X->lost_markers++;
  X->lost_records += r->extra[0];
  char text[IMPORT_TEXT_MAX];
  int n = snprintf(text, sizeof text, "pCPU %u lost %u records (TRC_LOST_RECORDS at byte %zu)", pcpu,
                   r->extra[0], r->off);
  import_recorder_warning(X->im, text, (size_t)n);
}
