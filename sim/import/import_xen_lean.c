/* xentrace: a summary's lean pass (import.h, opt.note). */
#include "import_xen_lean.h"
#include "import_xen_rec.h"
#include "sim/base/util.h"

#include <stdlib.h>

/* ---- the lean state machine (opt.note): import_exit.h's, followed here
** without its records (each vCPU's exit state, and what views_feed would make
** of the records it would emit), the measured exits noted ---- */


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
int xen_lean_event(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  lean_first(X, v);
  struct lean_vcpu *L = &X->lv[v];
  L->cause = (struct trace_event){ .type = (uint8_t)type, .aux = (uint8_t)aux, .vcpu = (uint16_t)v, .a = a, .b = b };
  if (type == EV_CR_WRITE && aux == 3) L->cr3 = a;
  L->caused = true;
  return 0;
}

/* import_exit_alone emits through the import: its events come here. */
static int lean_capture(void *ctx, const struct trace_event *e) {
  return xen_lean_event(ctx, e->vcpu, e->type, e->aux, e->a, e->b);
}

int xen_lean_settle(struct xen *X, unsigned v) {
  struct lean_vcpu *L = &X->lv[v];
  if (!L->pending) return 0;
  L->pending = false;
  struct import_exit x = { .reason = L->reason };
  return import_exit_alone(&X->exits, v, &x);
}

/* import_exit_begins */
int xen_lean_begins(struct xen *X, unsigned v, bool timed, uint64_t time, unsigned reason) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = xen_lean_settle(X, v);
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
int xen_lean_entry(struct xen *X, unsigned v, bool timed, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = xen_lean_settle(X, v);
  if (!rc && timed) rc = lean_measure(X, v, time);
  L->open = false;
  L->in_guest = timed;
  L->entry_time = time;
  X->exits.entries++;
  return rc;
}

/* import_exit_close: the exit ends without an entry (a runstate change) */
int xen_lean_close(struct xen *X, unsigned v, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = xen_lean_settle(X, v);
  if (!rc) rc = lean_measure(X, v, time);
  L->open = false;
  L->in_guest = false;
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
  const struct handler *h = xen_handler_of(X, r->event);
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
    return xen_lean_entry(X, vc, r->has_tsc, r->tsc);
  }
  if (r->event != TRC_HVM_VMEXIT && r->event != TRC_HVM_VMEXIT64) return lean_handler(X, vc, r);
  const struct lean_vcpu *L = &X->lv[vc];
  if (r->nextra < 1 || r->extra[0] >= 0xffff ||
      (r->has_tsc && L->in_guest && r->tsc > L->entry_time && r->tsc - L->entry_time > IMPORT_GAP_MAX))
    return IMPORT_NOT_LEAN;
  saw(X, SEEN_VMEXIT);
  im->used++;
  return xen_lean_begins(X, vc, r->has_tsc, r->tsc, r->extra[0]);
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
  for (unsigned i = 0; rc == 0 && i < im->nvcpus; i++) rc = xen_lean_settle(X, i);   /* import_exits_finish */
  return rc;
}

int xen_import_lean(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
  import_emit_fn emit = im->emit;
  void *ctx = im->emit_ctx;
  bool inline_inits = im->opt.inits_inline;
  X->lv = xcalloc(TRACE_VCPU_MAX, sizeof *X->lv);
  im->emit = lean_capture;                       /* the events of exits left unexplained */
  im->emit_ctx = X;
  im->opt.inits_inline = false;                  /* lean_first follows them */
  int rc = im->opt.note_scan ? xen_import_scanned(X, buf, len) : lean_records(X, buf, len);
  im->emit = emit;
  im->emit_ctx = ctx;
  im->opt.inits_inline = inline_inits;
  free(X->lv);
  X->lv = NULL;
  return rc;
}
