/* Xen binary traces (xentrace) -> trace: HVM exits, entries and CR accesses, per physical CPU. */
#include "import.h"
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

struct xcpu {
  bool in_guest;            /* a VMENTRY with a TSC was seen, no exit since */
  uint64_t entry_tsc;
  bool pending;             /* an exit not yet explained */
  uint32_t reason;
};

struct xen {
  struct import *im;
  int vcpu;                 /* the current window's vCPU; -1 before the first CPU change */
  struct xcpu c[TRACE_VCPU_MAX];
  uint64_t exits, entries, cr_writes;
  struct import_name reasons[IMPORT_NAMES_MAX + 1], unmapped[IMPORT_NAMES_MAX + 1];
  unsigned nreasons, nunmapped;
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

static int skip(struct import *im, const char *why) {
  import_skip(im, why, strlen(why));
  return 0;
}

static void reason_name(uint32_t reason, char *buf, size_t n) {
  const char *name = exit_reason_name(reason & 0xffff);
  if (name) snprintf(buf, n, "%s", name);
  else snprintf(buf, n, "reason %u", reason);
}

/* An exit no handler record explained: what its reason alone says. */
static int settle(struct xen *X, unsigned v) {
  struct xcpu *c = &X->c[v];
  if (!c->pending) return 0;
  c->pending = false;
  switch (c->reason & 0xffff) {
  case EXIT_REASON_HLT: return import_emit(X->im, v, EV_HLT, 0, 0, 0);
  case EXIT_REASON_RDTSC: return import_emit(X->im, v, EV_RDTSC, 0, 0, 0);
  case EXIT_REASON_PAUSE_INSTRUCTION: return import_emit(X->im, v, EV_PAUSE, 0, 0, 0);
  case EXIT_REASON_WBINVD: return import_emit(X->im, v, EV_WBINVD, 0, 0, 0);
  case EXIT_REASON_RDPMC: return import_emit(X->im, v, EV_RDPMC, 0, 0, 0);
  case EXIT_REASON_CPUID: return import_emit(X->im, v, EV_CPUID, 0, 0, 0);    /* leaf not recorded */
  case EXIT_REASON_VMCALL: return import_emit(X->im, v, EV_VMCALL, 0, 0, 0);  /* number not recorded */
  }
  char name[48];
  reason_name(c->reason, name, sizeof name);
  import_count_name(X->unmapped, &X->nunmapped, IMPORT_NAMES_MAX, name);
  return 0;
}

static int exit_begins(struct xen *X, unsigned v, const struct xrec *r) {
  struct xcpu *c = &X->c[v];
  int rc = settle(X, v);                     /* its VMENTRY was not recorded */
  if (!rc && c->in_guest && r->has_tsc && r->tsc > c->entry_tsc)
    rc = import_run(X->im, v, r->tsc - c->entry_tsc);
  char name[48];
  reason_name(r->extra[0], name, sizeof name);
  import_count_name(X->reasons, &X->nreasons, IMPORT_NAMES_MAX, name);
  c->in_guest = false;
  c->pending = true;
  c->reason = r->extra[0];
  X->exits++;
  X->im->used++;
  return rc;
}

static int entry_seen(struct xen *X, unsigned v, const struct xrec *r) {
  struct xcpu *c = &X->c[v];
  int rc = settle(X, v);
  c->in_guest = r->has_tsc;
  c->entry_tsc = r->tsc;
  X->entries++;
  X->im->used++;
  return rc;
}

static int on_cr(struct xen *X, unsigned v, const struct xrec *r, bool write, bool wide) {
  uint32_t cr = r->extra[0];
  uint64_t val = r->extra[1] | (wide ? (uint64_t)r->extra[2] << 32 : 0);
  if (cr != 0 && cr != 3 && cr != 4 && cr != 8) return skip(X->im, "CR access (not CR0/3/4/8)");
  struct import_init *init = &X->im->init[v];
  if (cr == 3 && !init->cr3_known) {        /* the first CR3 seen stands for the initial one */
    init->cr3 = val;
    init->cr3_known = true;
  }
  X->c[v].pending = false;
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
    return skip(im, why);
  }
  if (X->vcpu < 0) return skip(im, "HVM record before the first CPU change");
  unsigned v = (unsigned)X->vcpu;
  const struct xcpu *c = &X->c[v];
  if ((r->event == TRC_HVM_VMEXIT || r->event == TRC_HVM_VMEXIT64) && c->in_guest && r->has_tsc &&
      r->tsc > c->entry_tsc && r->tsc - c->entry_tsc > IMPORT_GAP_MAX)
    return import_bad(im, r->off, NULL, 0, IMPORT_GAP_WHY);
  switch (r->event) {
  case TRC_HVM_VMEXIT: case TRC_HVM_VMEXIT64: return exit_begins(X, v, r);
  case TRC_HVM_VMENTRY: return entry_seen(X, v, r);
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

static void add_names(cJSON *m, const char *key, const struct import_name *t, unsigned n) {
  cJSON *o = cJSON_AddObjectToObject(m, key);
  for (unsigned i = 0; i <= n && i <= IMPORT_NAMES_MAX; i++)
    if (t[i].n) cJSON_AddNumberToObject(o, t[i].name, (double)t[i].n);
}

static void add_metadata(struct xen *X) {
  cJSON *m = X->im->meta;
  cJSON *cpus = cJSON_AddArrayToObject(m, "pcpus");
  for (unsigned v = 0; v < X->im->nvcpus; v++)
    cJSON_AddItemToArray(cpus, cJSON_CreateNumber((double)X->im->native_cpu[v]));
  cJSON_AddNumberToObject(m, "exits", (double)X->exits);
  cJSON_AddNumberToObject(m, "entries", (double)X->entries);
  cJSON_AddNumberToObject(m, "cr_writes", (double)X->cr_writes);
  add_names(m, "exit_reasons", X->reasons, X->nreasons);
  add_names(m, "exits_unmapped", X->unmapped, X->nunmapped);
}

int import_xentrace(struct import *im, const unsigned char *buf, size_t len) {
  struct xen *X = xcalloc(1, sizeof *X);
  X->im = im;
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
  for (unsigned v = 0; rc == 0 && v < im->nvcpus; v++) rc = settle(X, v);
  if (rc == 0) add_metadata(X);
  free(X);
  return rc;
}
