/* The xentrace importer's shared state and record decoding (sim/import/import_xen.c
** says what the format is and how it is read; import_xen_rec.c reads the HVM
** records, import_xen_sched.c the scheduler's, import_xen_lean.c is a summary's
** lean pass). */
#ifndef VMXSIM_IMPORT_XEN_H
#define VMXSIM_IMPORT_XEN_H

#include "import.h"
#include "import_exit.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

struct lean_vcpu {
  bool seen;                 /* a record of it would have gone out (its @init ones first) */
  bool in_guest, pending, open, caused;
  bool named;                /* its domain and vCPU were noted (EXIT_NOTE_VCPU) */
  uint8_t cause_type, cause_aux;   /* the last record it would have emitted (not run or measured) */
  uint16_t reason;
  uint64_t entry_time, exit_time;
  uint64_t clock, cr3;       /* views_feed's: run and measured cycles, the last CR3 */
  uint64_t cr3_noted;        /* the CR3 the notes' reader knows */
  uint64_t cause_a;
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
  uint64_t seen_n[SEEN_KINDS];      /* records seen, added to im->seen at the end (xen_seen_fold) */
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
  /* the lean pass (opt.notes): its vCPUs, each exit reason's slot in the tally + 1,
  ** and the block of notes being written */
  struct lean_vcpu *lv;
  unsigned reason_slot[128];
  struct exit_note *notes;
  unsigned nnotes;
};

/* A record of this kind seen: its name takes its place in im->seen at the
** first (the metadata lists them in that order), its count is kept here and
** added at the end, as the tally's counts are a pointer away. */
HOT void saw(struct xen *X, enum seen kind) {
  static const char *const names[] = { "HVM CR_WRITE", "HVM VMENTRY", "HVM VMEXIT" };
  if (!X->seen_slot[kind])
    X->seen_slot[kind] = import_tally_name_slot(&X->im->seen, names[kind], strlen(names[kind])) + 1;
  X->seen_n[kind]++;
}
static inline void xen_seen_fold(struct xen *X) {
  for (unsigned k = 0; k < SEEN_KINDS; k++)
    if (X->seen_slot[k]) X->im->seen.count[X->seen_slot[k] - 1] += X->seen_n[k];
  memset(X->seen_n, 0, sizeof X->seen_n);
}

static inline uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Words i and i + 1 of a record's extra words as one 64-bit value (low first). */
static inline uint64_t word64(const uint32_t *w, unsigned i) { return w[i] | (uint64_t)w[i + 1] << 32; }

/* A record's n extra words at p into w[7], where the buffer holds 28 bytes
** from p (a fixed-size copy is a few instructions, a sized one a call); the
** words past n are never read. */
static inline void words_at(uint32_t *w, const unsigned char *p, unsigned n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  (void)n;
  memcpy(w, p, 7 * sizeof *w);
#else
  for (unsigned i = 0; i < n; i++) w[i] = get32(p + 4 * i);
#endif
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

#endif
