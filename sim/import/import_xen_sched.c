/* xentrace: who ran each record, from the scheduler's records (xenalyze's rules), and the
** pCPUs' records taken in TSC order; the first pass over the records' headers. */
#include "import_xen_sched.h"
#include "import_xen_lean.h"
#include "import_xen_rec.h"
#include "sim/base/util.h"

#include <stdio.h>
#include <stdlib.h>

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
  xen_count_lost(X, r, p);
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
  const struct handler *h = xen_handler_of(X, r->event);
  int ck = xen_check_record(X, r, h);
  if (ck) return ck == -2 ? EXIT_BADINPUT : 0;
  if (r->event == 0) return import_bad(X->im, r->off, NULL, 0, "event 0 (not a xentrace record; zero padding?)");
  if (r->event == TRC_TRACE_CPU_CHANGE) { X->im->used++; return 0; }
  if (r->event == TRC_LOST_RECORDS) return on_lost(X, p, r, false);
  if ((r->event & TRC_SCHED_MIN_MASK) == TRC_SCHED_MIN) return on_runstate(X, p, r);
  if (!is_hvm(r->event, h)) return import_skip_id(X->im, r->event);
  int v = running_vcpu(X, p, r);
  return v == -2 ? EXIT_BADINPUT : v < 0 ? 0 : xen_hvm_record(X, (unsigned)v, r, h);
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
bool xen_scan(struct xen *X, const unsigned char *buf, size_t len, size_t *lead, size_t *cut, bool *too_many) {
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
    const struct handler *h = xen_handler_of(X, r.event);
    int ck = xen_check_record(X, &r, h);
    if (ck) { rc = ck == -2 ? EXIT_BADINPUT : 0; continue; }
    rc = r.event == 0 ? import_bad(X->im, off, NULL, 0, "event 0 (not a xentrace record; zero padding?)")
                      : import_skip_why(X->im, "record before the first CPU change");
  }
  return rc;
}

int xen_import_sched(struct xen *X, const unsigned char *buf, size_t len, size_t lead, size_t cut,
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
