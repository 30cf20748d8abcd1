/* xentrace: a summary's lean pass (import.h, opt.notes).  No records are
** emitted: the importer runs its own copy of import_exit.h's state machine,
** with what views_feed would make of the records it would emit (each vCPU's
** clock, CR3 and last event), and writes each measured exit as a 32-byte note
** (views.h, struct exit_note) into the block the views' thread takes. */
#include "import_xen_lean.h"
#include "import_xen_rec.h"
#include "import_ahead.h"
#include "sim/base/hugemem.h"
#include "sim/base/util.h"
#include "sim/replay/views.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the notes ---- */

/* The block is full (or the pass ends): hand it on, and take the next. */
static void notes_hand_on(struct xen *X) {
  X->notes = X->im->opt.notes(X->im->opt.notes_ctx, X->notes, X->nnotes);
  X->nnotes = 0;
}

HOT struct exit_note *note_next(struct xen *X) {
  if (X->nnotes == IMPORT_NOTES_BLOCK) notes_hand_on(X);
  return &X->notes[X->nnotes++];
}

/* What the reader must know before v's exit: with the scheduler's records,
** the domain and vCPU behind v (once); its CR3, unless the exit's own cause
** (a CR3 write) tells it. */
HOT void note_before_exit(struct xen *X, unsigned v) {
  struct lean_vcpu *L = &X->lv[v];
  if (X->sched && !L->named) {
    const struct xvcpu *x = &X->vc[X->dense_vc[v]];
    *note_next(X) = (struct exit_note){ .kind = EXIT_NOTE_VCPU, .vcpu = (uint8_t)v,
                                        .clock = (uint64_t)x->dom << 16 | x->vid };
    L->named = true;
  }
  bool by_cause = L->caused && L->cause_type == EV_CR_WRITE && L->cause_aux == 3;
  if (!by_cause && L->cr3 != L->cr3_noted)
    *note_next(X) = (struct exit_note){ .kind = EXIT_NOTE_CR3, .vcpu = (uint8_t)v, .clock = L->cr3 };
  L->cr3_noted = L->cr3;
}

HOT void note_exit(struct xen *X, unsigned v, uint64_t cycles) {
  const struct lean_vcpu *L = &X->lv[v];
  note_before_exit(X, v);
  *note_next(X) = (struct exit_note){ .clock = L->clock, .cycles = cycles, .a = L->cause_a, .reason = L->reason,
                                      .kind = EXIT_NOTE_EXIT, .vcpu = (uint8_t)v,
                                      .type = L->caused ? L->cause_type : EXIT_NOTE_NO_CAUSE,
                                      .aux = L->cause_aux };
}

/* ---- the state machine: import_exit.h's, followed without its records ---- */

/* import_exit_alone emits through the import: its events come here. */
static int lean_capture(void *ctx, const struct trace_event *e) {
  return xen_lean_event(ctx, e->vcpu, e->type, e->aux, e->a, e->b);
}

static int lean_settle(struct xen *X, unsigned v) {
  struct lean_vcpu *L = &X->lv[v];
  if (!L->pending) return 0;
  L->pending = false;
  struct import_exit x = { .reason = L->reason };
  return import_exit_alone(&X->exits, v, &x);
}

/* The exit's reason counted (import_exit_begins counts it by number). */
HOT void count_reason(struct xen *X, unsigned reason) {
  if (reason >= 0xffff) {                        /* not a reason's number: by its (empty) name */
    import_tally_name(&X->exits.reasons, "", 0);
    return;
  }
  if (reason >= sizeof X->reason_slot / sizeof *X->reason_slot) {
    import_tally_id(&X->exits.reasons, reason);
    return;
  }
  unsigned *slot = &X->reason_slot[reason];      /* the tally's slot, found once */
  if (!*slot) *slot = import_tally_id_slot(&X->exits.reasons, reason) + 1;
  X->exits.reasons.count[*slot - 1]++;
}

/* import_exit_begins */
HOT int lean_begins(struct xen *X, unsigned v, bool timed, uint64_t time, unsigned reason) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = L->pending ? lean_settle(X, v) : 0;
  if (rc) return rc;
  if (L->in_guest && timed && time > L->entry_time) {      /* its run record */
    xen_lean_first(X, v);
    L->clock += time - L->entry_time;
  }
  L->in_guest = false;
  L->pending = true;
  L->open = timed;
  L->caused = false;
  L->exit_time = time;
  L->reason = (uint16_t)reason;
  X->exits.exits++;
  count_reason(X, reason);
  return 0;
}

int xen_lean_begins(struct xen *X, unsigned v, bool timed, uint64_t time, unsigned reason) {
  return lean_begins(X, v, timed, time, reason);
}

/* measure(): the open exit's measured record, noted instead */
HOT void lean_measure(struct xen *X, unsigned v, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  if (!L->open) return;
  L->open = false;
  if (time < L->exit_time) return;               /* clocks out of order: no measurement */
  uint64_t cycles = time - L->exit_time;
  X->exits.measured++;
  xen_lean_first(X, v);
  L->clock += cycles;
  note_exit(X, v, cycles);
}

/* import_exit_entry */
HOT int lean_entry(struct xen *X, unsigned v, bool timed, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = L->pending ? lean_settle(X, v) : 0;
  if (!rc && timed) lean_measure(X, v, time);
  L->open = false;
  L->in_guest = timed;
  L->entry_time = time;
  X->exits.entries++;
  return rc;
}

int xen_lean_entry(struct xen *X, unsigned v, bool timed, uint64_t time) { return lean_entry(X, v, timed, time); }

/* import_exit_close: the exit ends without an entry (a runstate change) */
int xen_lean_close(struct xen *X, unsigned v, uint64_t time) {
  struct lean_vcpu *L = &X->lv[v];
  int rc = lean_settle(X, v);
  if (!rc) lean_measure(X, v, time);
  L->open = false;
  L->in_guest = false;
  return rc;
}

/* ---- the lean pass: a summary's one pass over a recording without
** scheduler records.  It reads the records import_file_order reads, in the
** same order, with the same state machine, and keeps the same counts for the
** metadata; it gives up (IMPORT_NOT_LEAN) on anything else: scheduler or lost
** records, other events, bad or truncated records, a handler record outside
** an exit. ---- */

/* v's pending exit explained by its handler record h with words w (the
** handler's event goes to xen_lean_event). */
HOT int lean_run_handler(struct xen *X, unsigned v, const struct handler *h, const uint32_t *w) {
  xen_saw_handler(X, h->event);
  if (h->fn(X, v, w) < 0) return IMPORT_NOT_LEAN;              /* the full import skips it */
  X->lv[v].pending = false;
  return 0;
}

/* A handler record of v's pending exit, read alone. */
static int lean_handler(struct xen *X, unsigned v, const struct xrec *r) {
  const struct handler *h = xen_handler_of(X, r->event);
  if (!h || r->nextra < h->words || !X->lv[v].pending) return IMPORT_NOT_LEAN;
  int rc = lean_run_handler(X, v, h, r->extra);
  if (!rc) X->im->used++;
  return rc;
}

/* Would an exit of v at `time` end a run longer than IMPORT_GAP_MAX (the full import's error)? */
HOT bool lean_gap_too_long(const struct lean_vcpu *L, uint64_t time) {
  return L->in_guest && time > L->entry_time && time - L->entry_time > IMPORT_GAP_MAX;
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
  if (r->nextra < 1 || r->extra[0] >= 0xffff || (r->has_tsc && lean_gap_too_long(&X->lv[vc], r->tsc)))
    return IMPORT_NOT_LEAN;
  saw(X, SEEN_VMEXIT);
  im->used++;
  return lean_begins(X, vc, r->has_tsc, r->tsc, r->extra[0]);
}

/* ---- one exit at once: in a pCPU's window an exit's records are nearly
** always a VMEXIT with its TSC, perhaps one handler record, and a VMENTRY
** with its TSC, adjacent.  They are decoded together, straight into the
** vCPU's state, with no struct xrec and no dispatch per record; anything else
** is read a record at a time (lean_record). ---- */

#define XEN_TSC_FLAG 0x80000000u
/* Bytes the buffer must hold from the exit on: three records of at most 40 bytes. */
#define LEAN_EXIT_ROOM 120

struct lean_exit {
  uint64_t exit_tsc, entry_tsc, handler_tsc;
  uint32_t reason;
  bool handler_timed;
  const struct handler *h;   /* NULL: no handler record */
  uint32_t w[7];             /* the handler record's words */
  size_t size;
};

/* The handler record at q, if it is one the table knows with its words; q
** moves past it.  False: q holds a record of the handler class that the record
** loop must read (it gives up on it). */
HOT bool lean_exit_handler(struct xen *X, const unsigned char **q, struct lean_exit *e) {
  uint32_t hdr = get32(*q);
  e->h = NULL;
  if ((hdr & 0x0ffff000u) != TRC_HVM_HANDLER) return true;
  unsigned n = hdr >> 28 & 7;
  e->h = xen_handler_of(X, hdr & 0x0fffffffu);
  if (!e->h || n < e->h->words) return false;
  const unsigned char *p = *q + 4;
  e->handler_timed = hdr & XEN_TSC_FLAG;
  if (e->handler_timed) {
    e->handler_tsc = get64(p);
    p += 8;
  }
  words_at(e->w, p, n);
  *q = p + 4 * n;
  return true;
}

/* Reads the exit at p (the buffer holds LEAN_EXIT_ROOM bytes from p); false
** when the records there are anything else. */
HOT bool lean_exit_read(struct xen *X, const unsigned char *p, struct lean_exit *e) {
  uint32_t hdr = get32(p), kind = hdr & 0x8fffffffu;
  unsigned n = hdr >> 28 & 7;
  if ((kind != (XEN_TSC_FLAG | TRC_HVM_VMEXIT64) && kind != (XEN_TSC_FLAG | TRC_HVM_VMEXIT)) || n == 0) return false;
  e->exit_tsc = get64(p + 4);
  e->reason = get32(p + 12);
  const unsigned char *q = p + 12 + 4 * n;
  if (e->reason >= 0xffff || !lean_exit_handler(X, &q, e)) return false;
  if (get32(q) != (XEN_TSC_FLAG | TRC_HVM_VMENTRY)) return false;
  e->entry_tsc = get64(q + 4);
  e->size = (size_t)(q + 12 - p);
  return true;
}

/* The exit's records as lean_record reads them one by one. */
HOT int lean_exit_apply(struct xen *X, unsigned v, const struct lean_exit *e) {
  struct lean_vcpu *L = &X->lv[v];
  struct import *im = X->im;
  if (lean_gap_too_long(L, e->exit_tsc)) return IMPORT_NOT_LEAN;
  unsigned records = e->h ? 3 : 2;
  im->units += records;
  im->used += records;
  import_exits_saw_time(&X->exits, e->exit_tsc);
  if (e->h && e->handler_timed) import_exits_saw_time(&X->exits, e->handler_tsc);
  import_exits_saw_time(&X->exits, e->entry_tsc);
  saw(X, SEEN_VMEXIT);
  int rc = lean_begins(X, v, true, e->exit_tsc, e->reason);
  if (rc) return rc;
  if (e->h && (rc = lean_run_handler(X, v, e->h, e->w))) return rc;
  saw(X, SEEN_VMENTRY);
  return lean_entry(X, v, true, e->entry_tsc);
}

/* The record at *off, read alone; *off moves past it. */
static int lean_one_record(struct xen *X, int *v, const unsigned char *buf, size_t len, size_t *off) {
  struct xrec r;
  size_t size = decode(buf, len, *off, &r);
  if (!size || r.event == 0) return IMPORT_NOT_LEAN;
  X->im->units++;
  *off += size;
  return lean_record(X, v, &r);
}

/* One exit (all its records) or one record at *off of buf[0..len). */
HOT int lean_step(struct xen *X, int *v, const unsigned char *buf, size_t len, size_t *off) {
  struct lean_exit e;
  if (*v >= 0 && len - *off >= LEAN_EXIT_ROOM && lean_exit_read(X, buf + *off, &e)) {
    *off += e.size;
    return lean_exit_apply(X, (unsigned)*v, &e);
  }
  return lean_one_record(X, v, buf, len, off);
}

/* A recording in a file is read with pread() a chunk at a time into one
** buffer, which stays in the processor's cache, rather than through its
** mapping: walking the mapping made the kernel set and clear a page-table
** entry for each 4 KiB page (MADV_POPULATE_READ ahead, MADV_DONTNEED behind,
** a quarter of the importer's thread on a paravirtualised machine) and the loop
** wait for each record's first load; the copy streams at memory speed (a
** summary's CPU time 23% less). */
#define LEAN_CHUNK (256u << 10)

/* Moves what is left of buf[*off..*have) to the front and reads on from file
** byte *pos + *have, up to len; false when the file cannot be read. */
static bool lean_refill(int fd, unsigned char *buf, size_t *pos, size_t *have, size_t *off, size_t len) {
  memmove(buf, buf + *off, *have - *off);
  *pos += *off;
  *have -= *off;
  *off = 0;
  size_t want = len - *pos - *have < LEAN_CHUNK ? len - *pos - *have : LEAN_CHUNK;
  ssize_t got = pread(fd, buf + *have, want, (off_t)(*pos + *have));
  if (got <= 0) return false;
  *have += (size_t)got;
  return true;
}

/* The exits and records in buf[*off..have): those that lie whole before its
** end (LEAN_EXIT_ROOM bytes from the cursor on), or all when end says that no
** byte follows. */
static int lean_records_in(struct xen *X, int *v, const unsigned char *buf, size_t have, size_t *off, bool end) {
  int rc = 0;
  while (rc == 0 && *off != have && (end || have - *off >= LEAN_EXIT_ROOM)) {
    /* the exits read at once while the buffer holds them, without the checks above */
    struct lean_exit e;
    while (*v >= 0 && have - *off >= LEAN_EXIT_ROOM && lean_exit_read(X, buf + *off, &e)) {
      *off += e.size;
      if ((rc = lean_exit_apply(X, (unsigned)*v, &e))) return rc;
    }
    if (*off != have && (end || have - *off >= LEAN_EXIT_ROOM)) rc = lean_step(X, v, buf, have, off);
  }
  return rc;
}

/* lean_records over the file fd, len bytes (those mapped), read a chunk at a
** time; a record or exit is never cut: the buffer holds LEAN_EXIT_ROOM bytes
** from the cursor on, or the rest of the file. */
static int lean_records_pread(struct xen *X, int fd, size_t len) {
  struct huge_arena arena = { 0 };               /* one fault for the buffer's pages (sim/base/hugemem.h) */
  unsigned char *buf = huge_alloc(&arena, LEAN_CHUNK + LEAN_EXIT_ROOM);
  size_t pos = 0, have = 0, off = 0;             /* buf[0..have) is file bytes pos.. */
  int v = -1, rc = 0;
  while (rc == 0) {
    if (have - off < LEAN_EXIT_ROOM && pos + have < len && !lean_refill(fd, buf, &pos, &have, &off, len)) {
      rc = IMPORT_NOT_LEAN;                      /* read again through the mapping, with note_scan */
      break;
    }
    if (off == have) break;
    rc = lean_records_in(X, &v, buf, have, &off, pos + have == len);
  }
  huge_arena_free(&arena);
  return rc;
}

/* The same, the file read ahead by a thread of its own (import_ahead.h): each
** chunk is read in place, what the chunk before left (a cut record, less than
** LEAN_EXIT_ROOM bytes) copied into the room before it. */
static int lean_records_ahead(struct xen *X, struct ahead *a) {
  unsigned char *buf = NULL, *next;
  size_t have = 0, off = 0;                      /* buf[off..have): not read yet */
  int v = -1, rc = 0;
  bool end = false;
  while (rc == 0 && !end) {
    ssize_t got = ahead_take(a, &next);
    if (got < 0) return IMPORT_NOT_LEAN;         /* read again through the mapping, with note_scan */
    size_t tail = have - off;
    end = got == 0;
    if (!end) {
      if (tail) memcpy(next - tail, buf + off, tail);
      if (buf) ahead_release(a);
      buf = next - tail;
      have = tail + (size_t)got;
      off = 0;
    }
    rc = lean_records_in(X, &v, buf, have, &off, end);
  }
  return rc;
}

static int lean_records_read(struct xen *X, int fd, size_t len) {
  struct ahead *a = len > 2 * LEAN_CHUNK ? ahead_start(fd, len, LEAN_CHUNK, LEAN_EXIT_ROOM) : NULL;
  if (!a) return lean_records_pread(X, fd, len);
  int rc = lean_records_ahead(X, a);
  ahead_stop(a);
  return rc;
}

/* The recording in buf[0..len), in file order (the mapped file read with pread when its descriptor is known). */
static int lean_records(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
  int v = -1, rc = 0;
  if (im->map_fd >= 0 && (const char *)buf == im->map_base && len == im->map_len) {
    rc = lean_records_read(X, im->map_fd, len);
  } else {
    for (size_t off = 0; rc == 0 && off < len;) {
      if (len - off > XEN_PREFETCH) __builtin_prefetch(buf + off + XEN_PREFETCH);
      rc = lean_step(X, &v, buf, len, &off);
      import_release(im, buf, off);
      import_populate(im, buf, off + LEAN_EXIT_ROOM);
    }
  }
  return rc;
}

/* import_exits_finish: each vCPU's exit still pending at the end of the
** recording (its VMENTRY never came) is settled from its reason, as the full
** import settles it (an unmapped one counted), whichever way the recording
** was read; once per vCPU, after the record loop. */
static int lean_finish(struct xen *X) {
  int rc = 0;
  for (unsigned v = 0; rc == 0 && v < X->im->nvcpus; v++) rc = lean_settle(X, v);
  return rc;
}

int xen_import_lean(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
  import_emit_fn emit = im->emit;
  void *ctx = im->emit_ctx;
  bool inline_inits = im->opt.inits_inline;
  X->lv = xcalloc(TRACE_VCPU_MAX, sizeof *X->lv);
  X->notes = im->opt.notes(im->opt.notes_ctx, NULL, 0);
  X->nnotes = 0;
  im->emit = lean_capture;                       /* the events of exits left unexplained */
  im->emit_ctx = X;
  im->opt.inits_inline = false;                  /* lean_first follows them */
  int rc = im->opt.note_scan ? xen_import_scanned(X, buf, len) : lean_records(X, buf, len);
  if (rc == 0) rc = lean_finish(X);              /* with lean_capture still taking the events */
  notes_hand_on(X);                              /* the last notes, whatever the result */
  im->emit = emit;
  im->emit_ctx = ctx;
  im->opt.inits_inline = inline_inits;
  free(X->lv);
  X->lv = NULL;
  return rc;
}
