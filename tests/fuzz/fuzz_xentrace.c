/* libFuzzer harness: the xentrace binary importer (sim/import/import_xen*.c); the checks are in fuzz_import.h,
** and, for the lean pass a summary reads a recording with (import.h, opt.notes), in lean_check below. */
#include "fuzz.h"
#include "sim/import/import.h"
#include "sim/replay/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The measured exits, as the full import emits them (EV_MEASURED records) or as the lean pass notes them; and
** the views each makes (views_feed of the records, views_add_notes of the notes). */
struct exits {
  uint64_t n, cap;
  struct { unsigned vcpu, reason; uint64_t cycles; } *v;
  struct views *w;
  struct exit_note_reader reader;
  struct exit_note *block;       /* the lean pass's block of notes */
};

static void exits_add(struct exits *e, unsigned vcpu, unsigned reason, uint64_t cycles) {
  if (e->n == e->cap) {
    e->cap = e->cap ? 2 * e->cap : 64;
    e->v = realloc(e->v, e->cap * sizeof *e->v);
    if (!e->v) abort();
  }
  e->v[e->n].vcpu = vcpu;
  e->v[e->n].reason = reason;
  e->v[e->n++].cycles = cycles;
}

static int full_emit(void *ctx, const struct trace_event *ev) {
  struct exits *e = ctx;
  if (ev->type == EV_MEASURED) exits_add(e, ev->vcpu, MEASURED_REASON(ev->b), ev->a);
  views_feed(e->w, ev);
  return 0;
}

static int lean_emit(void *ctx, const struct trace_event *ev) {
  (void)ctx;
  fprintf(stderr, "the lean pass emitted a record (type %u)\n", ev->type);
  abort();
}

static void bad_note(const struct exit_note *x, const char *why) {
  fprintf(stderr, "lean note (kind %u vcpu %u type %u aux %u cycles %llu): %s\n", x->kind, x->vcpu, x->type, x->aux,
          (unsigned long long)x->cycles, why);
  abort();
}

static struct exit_note *lean_notes(void *ctx, struct exit_note *full, size_t n) {
  struct exits *e = ctx;
  if (n > IMPORT_NOTES_BLOCK || (n && full != e->block)) {
    fprintf(stderr, "lean notes: %zu handed on, not in the block given\n", n);
    abort();
  }
  for (size_t i = 0; i < n; i++) {
    const struct exit_note *x = &full[i];
    if (x->kind > EXIT_NOTE_VCPU) bad_note(x, "unknown kind");
    if (x->kind == EXIT_NOTE_EXIT && x->type >= EV_COUNT && x->type != EXIT_NOTE_NO_CAUSE) bad_note(x, "cause type");
    if (x->kind == EXIT_NOTE_EXIT) exits_add(e, x->vcpu, x->reason, x->cycles);
  }
  views_add_notes(e->w, &e->reader, full, n);
  if (!e->block && !(e->block = malloc(IMPORT_NOTES_BLOCK * sizeof *e->block))) abort();
  return e->block;
}

struct run { int rc; uint64_t units, used, skipped, bad; unsigned nvcpus; char *meta; struct exits e; };

/* The input in a file of its own, as the lean pass reads a mapped file (with pread, import_xen_lean.c); -1 when
** none can be made. */
static int input_file(const uint8_t *data, size_t size) {
  FILE *f = tmpfile();
  if (!f) return -1;
  int fd = dup(fileno(f));
  bool ok = fwrite(data, 1, size, f) == size && fflush(f) == 0;
  fclose(f);
  if (!ok && fd >= 0) { close(fd); fd = -1; }
  return fd;
}

static void import_run_as(const uint8_t *data, size_t size, bool lean, bool scan, int fd, struct run *r) {
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .input = "recording", .inits_inline = true };
  if (lean) { o.notes = lean_notes; o.notes_ctx = &r->e; o.note_scan = scan; }
  if (!(r->e.w = malloc(sizeof *r->e.w))) abort();
  views_init(r->e.w, -1, 0, false);
  exit_note_reader_init(&r->e.reader, -1, -1);
  struct import im;
  import_init(&im, &o, lean ? lean_emit : full_emit, &r->e);
  if (fd >= 0) {                                 /* as if mapped: nothing releases or populates it on this path */
    im.map_base = (const char *)data;
    im.map_len = size;
    im.map_fd = fd;
  }
  r->rc = import_xentrace(&im, data, size);
  im.map_base = NULL;
  r->units = im.units;
  r->used = im.used;
  r->skipped = im.skipped;
  r->bad = im.bad;
  r->nvcpus = im.nvcpus;
  r->meta = cJSON_PrintUnformatted(im.meta);   /* counts settled at the end too (exits_unmapped) */
  import_free(&im);
}

static void run_free(struct run *r) {
  free(r->meta);
  free(r->e.v);
  free(r->e.block);
  views_free(r->e.w);
  free(r->e.w);
}

/* The rows of the views of two runs, of one dimension, are the same (percentiles too: the exits' order). */
static bool same_rows(const struct views *a, const struct views *b, unsigned dim) {
  struct view_stat *x, *y;
  unsigned n = views_stats(a, dim, dim == VD_REASON, SORT_REASON, &x), m = views_stats(b, dim, dim == VD_REASON, SORT_REASON, &y);
  bool same = n == m;
  for (unsigned i = 0; same && i < n; i++)
    same = x[i].dim == y[i].dim && x[i].reason == y[i].reason && x[i].key == y[i].key && x[i].count == y[i].count &&
           x[i].cycles == y[i].cycles && x[i].min == y[i].min && x[i].max == y[i].max && x[i].p5 == y[i].p5 &&
           x[i].p50 == y[i].p50 && x[i].p95 == y[i].p95;
  free(x);
  free(y);
  return same;
}

static bool same_run(const struct run *a, const struct run *b) {
  if (a->rc != b->rc || a->units != b->units || a->used != b->used || a->skipped != b->skipped || a->bad != b->bad ||
      a->nvcpus != b->nvcpus || a->e.n != b->e.n || !a->meta != !b->meta || (a->meta && strcmp(a->meta, b->meta)))
    return false;
  for (uint64_t i = 0; i < a->e.n; i++)
    if (a->e.v[i].vcpu != b->e.v[i].vcpu || a->e.v[i].reason != b->e.v[i].reason || a->e.v[i].cycles != b->e.v[i].cycles)
      return false;
  if (a->rc != 0) return true;                   /* a failed import's views are not read */
  return same_rows(a->e.w, b->e.w, VD_REASON) && same_rows(a->e.w, b->e.w, VD_CR3) && same_rows(a->e.w, b->e.w, VD_VCPU);
}

/* The lean pass with its first pass over the headers reads what the full import reads (the same result, counts,
** metadata and measured exits, in order, and the same views of them); the one pass without it the same, unless it
** gives up (IMPORT_NOT_LEAN). */
static void lean_check(const uint8_t *data, size_t size) {
  struct run full = { 0 }, scanned = { 0 }, one = { 0 }, read = { 0 };
  import_run_as(data, size, false, false, -1, &full);
  import_run_as(data, size, true, true, -1, &scanned);
  import_run_as(data, size, true, false, -1, &one);
  int fd = input_file(data, size);
  if (fd >= 0) {
    import_run_as(data, size, true, false, fd, &read);      /* the one pass reading the file */
    close(fd);
  }
  if (!same_run(&full, &scanned) || (one.rc != IMPORT_NOT_LEAN && !same_run(&full, &one)) ||
      (fd >= 0 && read.rc != one.rc) || (fd >= 0 && read.rc != IMPORT_NOT_LEAN && !same_run(&full, &read))) {
    fprintf(stderr, "lean pass differs: rc %d/%d/%d/%d, used %llu/%llu/%llu, exits %llu/%llu/%llu\n", full.rc,
            scanned.rc, one.rc, read.rc, (unsigned long long)full.used, (unsigned long long)scanned.used,
            (unsigned long long)one.used, (unsigned long long)full.e.n, (unsigned long long)scanned.e.n,
            (unsigned long long)one.e.n);
    fprintf(stderr, "metadata:\n  full    %s\n  scanned %s\n  one     %s\n", full.meta ? full.meta : "(none)",
            scanned.meta ? scanned.meta : "(none)", one.meta ? one.meta : "(none)");
    abort();
  }
  run_free(&full);
  run_free(&scanned);
  run_free(&one);
  if (fd >= 0) run_free(&read);
}

#define IMPORT_EXTRA_CHECK lean_check
#define IMPORTER import_xentrace
#define IMPORT_FORMAT "xentrace"
#include "fuzz_import.h"
