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
** records up to the next one ran on that pCPU.  Each pCPU becomes a vCPU
** (dense, in order of appearance): record with the guest's vCPUs pinned.
** VMEXIT records carry only the exit reason, so an exit becomes a guest
** action when a handler record (CR, MSR, I/O port, CPUID, page fault, ...)
** explains it or when its reason alone says enough (HLT, RDTSC, ...).  TSC
** ticks are cycles: the time from a VMENTRY to the next VMEXIT on a pCPU is
** guest 'run' time as is, and from a VMEXIT to the next VMENTRY the exit's
** measured cost (an EV_MEASURED record).
*/

#define TRC_TRACE_CPU_CHANGE 0x0001f003u   /* {cpu (bits 15:0), window bytes} */
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

struct xen {
  struct import *im;
  struct import_exits exits;  /* one vCPU per pCPU */
  int vcpu;                   /* the current window's vCPU; -1 before the first CPU change */
  uint64_t cr_writes, io_size_assumed;
  unsigned seen_slot[SEEN_KINDS];   /* the name's slot in im->seen + 1, 0 before its first record */
  const struct handler *recent[HANDLER_RECENT];   /* handlers found, by the event's low bits */
};

static void saw(struct xen *X, enum seen kind) {
  static const char *const names[] = { "HVM CR_WRITE", "HVM VMENTRY", "HVM VMEXIT" };
  struct import_tally *t = &X->im->seen;
  if (!X->seen_slot[kind]) X->seen_slot[kind] = import_tally_name_slot(t, names[kind], strlen(names[kind])) + 1;
  t->count[X->seen_slot[kind] - 1]++;
}

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

static uint64_t word64(const struct xrec *r, unsigned i) { return r->extra[i] | (uint64_t)r->extra[i + 1] << 32; }

/* An exit record: only its reason is recorded. */
static int exit_begins(struct xen *X, unsigned v, const struct xrec *r) {
  struct import_exit x = { .reason = r->extra[0] < 0xffff ? (int)r->extra[0] : 0xffff };   /* counted by number */
  X->im->used++;
  return import_exit_begins(&X->exits, v, r->has_tsc, r->tsc, &x);
}

/* ---- handler records (xen/include/public/trace.h, TRC_HVM_HANDLER + n; the
** layouts are those of the HVMTRACE calls in xen/arch/x86/hvm/ and read by
** tools/xentrace/xenalyze.c).  Each explains the vCPU's pending exit with
** one event. ---- */

static int ev(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  return import_emit(X->im, v, type, aux, a, b);
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

static const struct handler *handler_of(struct xen *X, uint32_t event) {
  if ((event & 0xfffff000u) != TRC_HVM_HANDLER) return NULL;
  const struct handler **slot = &X->recent[event % HANDLER_RECENT];
  if (*slot && (*slot)->event == event) return *slot;
  for (size_t i = 0; i < sizeof handlers / sizeof *handlers; i++)
    if (handlers[i].event == event) return *slot = &handlers[i];
  return NULL;
}

/* A handler record: explains the vCPU's pending exit (other records of the
** same exit, and records outside an exit, are counted and skipped). */
static int on_handler(struct xen *X, unsigned v, const struct xrec *r, const struct handler *h) {
  if (!X->exits.v[v].pending) return import_skip_id(X->im, r->event);
  int rc = h->fn(X, v, r);
  if (rc < 0) return import_skip_id(X->im, r->event);   /* understood, nothing to replay */
  import_exit_explained(&X->exits, v, true);
  X->im->used++;
  return rc;
}

/* Extra words each used record needs. */
static unsigned words_needed(uint32_t event, const struct handler *h) {
  switch (event) {
  case TRC_TRACE_CPU_CHANGE: case TRC_HVM_VMEXIT: case TRC_HVM_VMEXIT64: return 1;
  }
  return h ? h->words : 0;
}

static int on_record(struct xen *X, const struct xrec *r) {
  struct import *im = X->im;
  const struct handler *h = handler_of(X, r->event);
  if (r->has_tsc) import_exits_saw_time(&X->exits, r->tsc);
  if (r->nextra < words_needed(r->event, h)) {
    char why[96];
    snprintf(why, sizeof why, "record 0x%08x has %u extra words, %u needed", r->event, r->nextra,
             words_needed(r->event, h));
    return import_bad(im, r->off, NULL, 0, why);
  }
  if (r->event == TRC_TRACE_CPU_CHANGE) {
    X->vcpu = import_vcpu_of_cpu(im, r->extra[0] & 0xffff);
    if (X->vcpu < 0) return import_bad(im, r->off, NULL, 0, "more than 256 physical CPUs");
    im->used++;
    return 0;
  }
  bool entry_exit = r->event == TRC_HVM_VMEXIT || r->event == TRC_HVM_VMEXIT64 || r->event == TRC_HVM_VMENTRY;
  if (!h && !entry_exit) return import_skip_id(im, r->event);
  if (X->vcpu < 0) return import_skip_why(im, "HVM record before the first CPU change");
  unsigned v = (unsigned)X->vcpu;
  if (h) {
    if (r->event == TRC_HVM_HANDLER + 0x009 || r->event == TRC_HVM_HANDLER + 0x109)
      saw(X, SEEN_CR_WRITE);
    return on_handler(X, v, r, h);
  }
  saw(X, r->event == TRC_HVM_VMENTRY ? SEEN_VMENTRY : SEEN_VMEXIT);
  if (r->event == TRC_HVM_VMENTRY) {
    im->used++;
    return import_exit_entry(&X->exits, v, r->has_tsc, r->tsc);
  }
  if (r->has_tsc && import_exit_gap_too_long(&X->exits, v, r->tsc))
    return import_bad(im, r->off, NULL, 0, IMPORT_GAP_WHY);
  return exit_begins(X, v, r);
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
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(r->extra, p, 4 * (size_t)r->nextra);     /* the file's words are little-endian, as the host's */
#else
  for (unsigned i = 0; i < r->nextra; i++) r->extra[i] = get32(p + 4 * i);
#endif
  return size;
}

static void add_metadata(struct xen *X) {
  cJSON *m = X->im->meta;
  import_add_native_cpus(X->im, "pcpus");
  import_exits_add_counts(&X->exits);
  cJSON_AddNumberToObject(m, "cr_writes", (double)X->cr_writes);
  cJSON_AddNumberToObject(m, "io_size_assumed", (double)X->io_size_assumed);
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
    import_release(im, buf, off);
  }
  if (rc == 0) rc = import_exits_finish(&X->exits);
  if (rc == 0) add_metadata(X);
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
  "usage: vmxsim import xentrace IN.bin -o OUT.bin [--paging 32|pae|64] [--workload NAME]\n"
  "                              [--skip-bad]\n"
  "\n"
  "IN.bin is a Xen binary trace (xentrace, host byte order). Used records:\n"
  "  CPU change 0x0001f003 {cpu, bytes}   following records run on that pCPU; each\n"
  "                                       pCPU becomes a vCPU (pin vCPUs to pCPUs)\n"
  "  HVM VMEXIT 0x00081102/0x00081002     the exit (reason); its TSC minus the last\n"
  "                                       VMENTRY's TSC becomes 'run' cycles\n"
  "  HVM handler records 0x00082xxx       the pending exit's action: CR_READ/WRITE\n"
  "                                       crNr/crNw, MSR_READ/WRITE rdmsr/wrmsr,\n"
  "                                       IOPORT_READ/WRITE io (size 1: not recorded),\n"
  "                                       CPUID cpuid LEAF, INTR intr, VMMCALL vmcall,\n"
  "                                       HLT, INVLPG, CLTS, LMSW, RDTSC, PF_XEN touch,\n"
  "                                       NPF touch, TRAP exc, XCR_WRITE64 xsetbv\n"
  "  HVM VMENTRY 0x00081001               end of the exit: its TSC minus the VMEXIT's\n"
  "                                       is the exit's measured cost (vmxsim summary)\n"
  "Exits without a detail record become hlt, rdtsc, pause, wbinvd, cpuid 0 or\n"
  "vmcall 0 where the reason says enough; the rest are counted in the metadata.\n"
  "Other records are counted and skipped.\n"
  "\n"
  "example:\n"
  "  xentrace -D -e 0x0008f000 xen.bin     # HVM class, on the Xen host\n"
  "  vmxsim import xentrace xen.bin -o xen.bin.trace\n";

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
