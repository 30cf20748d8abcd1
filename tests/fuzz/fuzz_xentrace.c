/* libFuzzer harness: the xentrace binary importer (sim/import/import_xen.c); the checks are in fuzz_import.h,
** and, for the lean pass a summary reads a recording with (import.h, opt.note), in lean_check below. */
#include "fuzz.h"
#include "sim/import/import.h"

#include <stdio.h>
#include <stdlib.h>

/* The measured exits, as the full import emits them (EV_MEASURED records) or as the lean pass notes them. */
struct exits { uint64_t n, cap; struct { unsigned vcpu, reason; uint64_t cycles; } *v; };

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
  if (ev->type == EV_MEASURED) exits_add(ctx, ev->vcpu, MEASURED_REASON(ev->b), ev->a);
  return 0;
}

static int lean_emit(void *ctx, const struct trace_event *ev) {
  (void)ctx;
  fprintf(stderr, "the lean pass emitted a record (type %u)\n", ev->type);
  abort();
}

static int lean_note(void *ctx, unsigned vcpu, unsigned reason, const struct trace_event *cause, uint64_t cr3,
                     uint64_t clock, uint64_t cycles, int domain, int vid) {
  (void)cr3;
  (void)clock;                                   /* a sum of recorded cycles: it wraps as views_feed's does */
  if (vcpu >= TRACE_VCPU_MAX || (cause && (cause->type >= EV_COUNT || cause->vcpu != vcpu)) ||
      (domain < 0) != (vid < 0) || domain > 65535 || vid > 65535) {
    fprintf(stderr, "lean note: vcpu %u cycles %llu cause type %d domain %d vcpu %d\n", vcpu,
            (unsigned long long)cycles, cause ? cause->type : -1, domain, vid);
    abort();
  }
  exits_add(ctx, vcpu, reason, cycles);
  return 0;
}

struct run { int rc; uint64_t units, used, skipped, bad; unsigned nvcpus; struct exits e; };

static void import_run_as(const uint8_t *data, size_t size, bool lean, bool scan, struct run *r) {
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .input = "recording", .inits_inline = true };
  if (lean) { o.note = lean_note; o.note_ctx = &r->e; o.note_scan = scan; }
  struct import im;
  import_init(&im, &o, lean ? lean_emit : full_emit, &r->e);
  r->rc = import_xentrace(&im, data, size);
  r->units = im.units;
  r->used = im.used;
  r->skipped = im.skipped;
  r->bad = im.bad;
  r->nvcpus = im.nvcpus;
  import_free(&im);
}

static bool same_run(const struct run *a, const struct run *b) {
  if (a->rc != b->rc || a->units != b->units || a->used != b->used || a->skipped != b->skipped || a->bad != b->bad ||
      a->nvcpus != b->nvcpus || a->e.n != b->e.n)
    return false;
  for (uint64_t i = 0; i < a->e.n; i++)
    if (a->e.v[i].vcpu != b->e.v[i].vcpu || a->e.v[i].reason != b->e.v[i].reason || a->e.v[i].cycles != b->e.v[i].cycles)
      return false;
  return true;
}

/* The lean pass with its first pass over the headers reads what the full import reads (the same result, counts
** and measured exits, in order); the one pass without it the same, unless it gives up (IMPORT_NOT_LEAN). */
static void lean_check(const uint8_t *data, size_t size) {
  struct run full = { 0 }, scanned = { 0 }, one = { 0 };
  import_run_as(data, size, false, false, &full);
  import_run_as(data, size, true, true, &scanned);
  import_run_as(data, size, true, false, &one);
  if (!same_run(&full, &scanned) || (one.rc != IMPORT_NOT_LEAN && !same_run(&full, &one))) {
    fprintf(stderr, "lean pass differs: rc %d/%d/%d, used %llu/%llu/%llu, exits %llu/%llu/%llu\n", full.rc,
            scanned.rc, one.rc, (unsigned long long)full.used, (unsigned long long)scanned.used,
            (unsigned long long)one.used, (unsigned long long)full.e.n, (unsigned long long)scanned.e.n,
            (unsigned long long)one.e.n);
    abort();
  }
  free(full.e.v);
  free(scanned.e.v);
  free(one.e.v);
}

#define IMPORT_EXTRA_CHECK lean_check
#define IMPORTER import_xentrace
#define IMPORT_FORMAT "xentrace"
#include "fuzz_import.h"
