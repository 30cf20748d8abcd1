/* Xen binary traces (xentrace) -> trace: HVM exits, entries and CR accesses, per physical CPU. */
#include "import.h"
#include "import_exit.h"
#include "sim/core/util.h"
#include "models/vmx/exit_reason.h"

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
** records up to the next one ran on that pCPU.  Each pCPU becomes a vCPU
** (dense, in order of appearance): record with the guest's vCPUs pinned.
** VMEXIT records carry only the exit reason, so an exit becomes a guest
** action when a handler record (CR_WRITE, CR_READ) explains it or when its
** reason alone says enough (HLT, RDTSC, ...).  TSC ticks are cycles: the time
** from a VMENTRY to the next VMEXIT on a pCPU is guest 'run' time as is.
*/

#define TRC_TRACE_CPU_CHANGE 0x0001f003u   /* {cpu (bits 15:0), window bytes} */
#define TRC_HVM_VMENTRY      0x00081001u   /* {} */
#define TRC_HVM_VMEXIT       0x00081002u   /* {exit reason, rip} */
#define TRC_HVM_VMEXIT64     0x00081102u   /* {exit reason, rip lo, rip hi} */
#define TRC_HVM_CR_READ      0x00082008u   /* {cr, value} */
#define TRC_HVM_CR_READ64    0x00082108u   /* {cr, value lo, value hi} */
#define TRC_HVM_CR_WRITE     0x00082009u   /* {cr, value} */
#define TRC_HVM_CR_WRITE64   0x00082109u   /* {cr, value lo, value hi} */

struct xen {
  struct import *im;
  struct import_exits exits;  /* one vCPU per pCPU */
  int vcpu;                   /* the current window's vCPU; -1 before the first CPU change */
  uint64_t cr_writes;
};

/* One decoded record. */
struct xrec {
  size_t off;
  uint32_t event;
  unsigned nextra;
  bool has_tsc;
  uint64_t tsc;
  uint32_t extra[7];
};

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* An exit record: only its reason is recorded. */
static int exit_begins(struct xen *X, unsigned v, const struct xrec *r) {
  struct import_exit x = { .reason = (int)(r->extra[0] & 0xffff) };
  const char *name = exit_reason_name(r->extra[0] & 0xffff);
  if (name) snprintf(x.name, sizeof x.name, "%s", name);
  else snprintf(x.name, sizeof x.name, "reason %u", r->extra[0]);
  X->im->used++;
  return import_exit_begins(&X->exits, v, r->has_tsc, r->tsc, &x);
}

static int on_cr(struct xen *X, unsigned v, const struct xrec *r, bool write, bool wide) {
  uint32_t cr = r->extra[0];
  uint64_t val = r->extra[1] | (wide ? (uint64_t)r->extra[2] << 32 : 0);
  if (!import_exit_cr_ok(cr)) return import_skip_why(X->im, "CR access (not CR0/3/4/8)");
  if (cr == 3) import_exit_cr3_seen(&X->exits, v, val);
  import_exit_explained(&X->exits, v);
  X->im->used++;
  if (!write) return import_emit(X->im, v, EV_CR_READ, cr, 0, 0);
  X->cr_writes++;
  return import_emit(X->im, v, EV_CR_WRITE, cr, val, 0);
}

/* Extra words each used record needs. */
static unsigned words_needed(uint32_t event) {
  switch (event) {
  case TRC_TRACE_CPU_CHANGE: case TRC_HVM_VMEXIT: case TRC_HVM_VMEXIT64: return 1;
  case TRC_HVM_CR_READ: case TRC_HVM_CR_WRITE: return 2;
  case TRC_HVM_CR_READ64: case TRC_HVM_CR_WRITE64: return 3;
  }
  return 0;
}

static int on_record(struct xen *X, const struct xrec *r) {
  struct import *im = X->im;
  char why[96];
  if (r->nextra < words_needed(r->event)) {
    snprintf(why, sizeof why, "record 0x%08x has %u extra words, %u needed", r->event, r->nextra, words_needed(r->event));
    return import_bad(im, r->off, NULL, 0, why);
  }
  if (r->event == TRC_TRACE_CPU_CHANGE) {
    X->vcpu = import_vcpu_of_cpu(im, r->extra[0] & 0xffff);
    if (X->vcpu < 0) return import_bad(im, r->off, NULL, 0, "more than 256 physical CPUs");
    im->used++;
    return 0;
  }
  bool hvm = words_needed(r->event) || r->event == TRC_HVM_VMENTRY;
  if (!hvm) {
    snprintf(why, sizeof why, "0x%08x", r->event);
    return import_skip_why(im, why);
  }
  if (X->vcpu < 0) return import_skip_why(im, "HVM record before the first CPU change");
  unsigned v = (unsigned)X->vcpu;
  if ((r->event == TRC_HVM_VMEXIT || r->event == TRC_HVM_VMEXIT64) && r->has_tsc &&
      import_exit_gap_too_long(&X->exits, v, r->tsc))
    return import_bad(im, r->off, NULL, 0, IMPORT_GAP_WHY);
  const char *seen = r->event == TRC_HVM_VMEXIT || r->event == TRC_HVM_VMEXIT64 ? "HVM VMEXIT"
                   : r->event == TRC_HVM_VMENTRY ? "HVM VMENTRY"
                   : r->event == TRC_HVM_CR_WRITE || r->event == TRC_HVM_CR_WRITE64 ? "HVM CR_WRITE" : "HVM CR_READ";
  import_saw(im, seen, strlen(seen));
  switch (r->event) {
  case TRC_HVM_VMEXIT: case TRC_HVM_VMEXIT64: return exit_begins(X, v, r);
  case TRC_HVM_VMENTRY:
    im->used++;
    return import_exit_entry(&X->exits, v, r->has_tsc, r->tsc);
  case TRC_HVM_CR_READ: return on_cr(X, v, r, false, false);
  case TRC_HVM_CR_READ64: return on_cr(X, v, r, false, true);
  case TRC_HVM_CR_WRITE: return on_cr(X, v, r, true, false);
  default: return on_cr(X, v, r, true, true);
  }
}

/* Decodes the record at off; returns its size, or 0 when the file ends inside it. */
static size_t decode(const unsigned char *buf, size_t len, size_t off, struct xrec *r) {
  if (len - off < 4) return 0;
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
  for (unsigned i = 0; i < r->nextra; i++) r->extra[i] = get32(p + 4 * i);
  return size;
}

static void add_metadata(struct xen *X) {
  cJSON *m = X->im->meta;
  import_add_native_cpus(X->im, "pcpus");
  import_exits_add_counts(&X->exits);
  cJSON_AddNumberToObject(m, "cr_writes", (double)X->cr_writes);
  import_exits_add_reasons(&X->exits);
}

int import_xentrace(struct import *im, const unsigned char *buf, size_t len) {
  struct xen *X = xcalloc(1, sizeof *X);
  X->im = im;
  import_exits_init(&X->exits, im, false);
  X->vcpu = -1;
  im->binary = true;
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
                      : on_record(X, &r);
    off += size;
  }
  if (rc == 0) rc = import_exits_finish(&X->exits);
  if (rc == 0) add_metadata(X);
  free(X);
  return rc;
}
