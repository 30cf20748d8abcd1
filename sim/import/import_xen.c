/* Xen binary traces (xentrace) -> trace: HVM exits, entries and CR accesses, per physical CPU. */
/*
** The file is a sequence of records in host byte order (x86: little-endian),
** with no file header.  A record is a u32 header (bits 27:0 event, 30:28
** number of extra words, 31 TSC present), the TSC as two u32 (lo, hi) when
** present, then the extra words.  xentrace writes each physical CPU's buffer
** as a window that starts with a CPU-change record {cpu, window bytes}; the
** records up to the next one ran on that pCPU (Xen's xen/include/public/trace.h
** and tools/xentrace/xentrace.c).
**
** Who ran a record: a recording with the scheduler's records (class
** TRC_SCHED_MIN: runstate changes and continues, each naming a domain and
** vCPU) is read as Xen's tools/xentrace/xenalyze.c reads it.  The pCPUs'
** records are taken in TSC order (the windows of one pCPU overlap others' in
** time), each pCPU runs the (domain, vCPU) its last runstate change put on
** it, and an HVM record belongs to that vCPU, wherever it ran before.  A
** vCPU's exit is measured from its VMEXIT to its next VMENTRY, or to the
** runstate change that makes it runnable (preempted or woken: its wait for a
** pCPU is no cost of the exit; an exit that blocks, such as HLT, lasts until
** the wake-up).  Each (domain, vCPU) with HVM records becomes a vCPU of the
** trace, dense, in order of its first record; the metadata's "vcpus" names
** them (d1v0).  The idle domain's and records on a pCPU no runstate record
** has placed a vCPU on yet are skipped (counted).  Without scheduler records
** each pCPU becomes a vCPU: record with the guest's vCPUs pinned.
**
** Lost records (TRC_LOST_RECORDS {count, domain, vCPU, first lost TSC}): the
** pCPU's buffer overflowed.  As xenalyze does, the vCPU running there is
** taken off at the first lost TSC and its open exit is not measured (its
** VMENTRY may be among the lost), every vCPU not running is assumed to have
** run there (its open exit is not measured either), and the vCPU the marker
** names runs from the marker's TSC.  The markers are counted and reported.
**
** VMEXIT records carry only the exit reason, so an exit becomes a guest
** action when a handler record (CR, MSR, I/O port, CPUID, page fault, ...)
** explains it or when its reason alone says enough (HLT, RDTSC, ...).  TSC
** ticks are cycles: the time from a VMENTRY to the vCPU's next VMEXIT is
** guest 'run' time as is, and an exit's time (above) its measured cost (an
** EV_MEASURED record).
*/

#include "import_xen_lean.h"
#include "import_xen_rec.h"
#include "import_xen_sched.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- file order: each pCPU is a vCPU (no scheduler records) ---- */

static int on_record_file_order(struct xen *X, const struct xrec *r) {
  struct import *im = X->im;
  const struct handler *h = xen_handler_of(X, r->event);
  int ck = xen_check_record(X, r, h);
  if (ck) return ck == -2 ? EXIT_BADINPUT : 0;
  if (r->event == TRC_TRACE_CPU_CHANGE) {
    X->vcpu = import_vcpu_of_cpu(im, r->extra[0] & 0xffff);
    if (X->vcpu < 0) return import_bad(im, r->off, NULL, 0, "more than 256 physical CPUs");
    im->used++;
    return 0;
  }
  if (r->event == TRC_LOST_RECORDS && X->vcpu >= 0) {
    xen_count_lost(X, r, (unsigned)im->native_cpu[X->vcpu]);
    x_forget(X, (unsigned)X->vcpu);                     /* its entry may be among the lost */
    im->used++;
    return 0;
  }
  if (!is_hvm(r->event, h)) return import_skip_id(im, r->event);
  if (X->vcpu < 0) return import_skip_why(im, "HVM record before the first CPU change");
  return xen_hvm_record(X, (unsigned)X->vcpu, r, h);
}

static int import_file_order(struct xen *X, const unsigned char *buf, size_t len) {
  struct import *im = X->im;
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
                      : on_record_file_order(X, &r);
    off += size;
    import_release(im, buf, off);
    import_populate(im, buf, off + 40);
  }
  return rc;
}

/* The headers first (the windows, and whether the scheduler's records are
** there), then the records: in TSC order with them, in file order without. */
int xen_import_scanned(struct xen *X, const unsigned char *buf, size_t len) {
  size_t lead, cut;
  bool too_many;
  X->sched = xen_scan(X, buf, len, &lead, &cut, &too_many);
  X->im->map_released = X->im->map_populated = 0;   /* the second pass maps them in and gives them back again */
  return X->sched ? xen_import_sched(X, buf, len, lead, cut, too_many) : import_file_order(X, buf, len);
}

/* ---- metadata ---- */

static int by_domain(const void *a, const void *b) {
  const struct xvcpu *x = *(const struct xvcpu *const *)a, *y = *(const struct xvcpu *const *)b;
  return x->dom != y->dom ? (x->dom < y->dom ? -1 : 1) : (x->vid > y->vid) - (x->vid < y->vid);
}

/* "vcpus": each trace vCPU's domain and vCPU; "domains": per domain with HVM
** records, its vCPUs and exits, in domain order. */
static void add_domains(struct xen *X) {
  cJSON *m = X->im->meta;
  cJSON *vcpus = cJSON_AddArrayToObject(m, "vcpus");
  const struct xvcpu **v = xmalloc((X->im->nvcpus + 1) * sizeof *v);
  for (unsigned i = 0; i < X->im->nvcpus; i++) {
    const struct xvcpu *x = v[i] = &X->vc[X->dense_vc[i]];
    char name[24];
    snprintf(name, sizeof name, "d%uv%u", x->dom, x->vid);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddNumberToObject(o, "domain", x->dom);
    cJSON_AddNumberToObject(o, "vcpu", x->vid);
    cJSON_AddItemToArray(vcpus, o);
  }
  qsort(v, X->im->nvcpus, sizeof *v, by_domain);
  cJSON *doms = cJSON_AddArrayToObject(m, "domains");
  for (unsigned i = 0; i < X->im->nvcpus;) {
    unsigned j = i;
    uint64_t exits = 0;
    for (; j < X->im->nvcpus && v[j]->dom == v[i]->dom; j++) exits += v[j]->exits;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "domain", v[i]->dom);
    cJSON_AddNumberToObject(o, "vcpus", j - i);
    cJSON_AddNumberToObject(o, "exits", (double)exits);
    cJSON_AddItemToArray(doms, o);
    i = j;
  }
  free(v);
}

static void add_metadata(struct xen *X) {
  cJSON *m = X->im->meta;
  if (X->sched) {
    cJSON_AddNumberToObject(m, "scheduler_records", (double)X->sched_records);
    add_domains(X);
  } else {
    import_add_native_cpus(X->im, "pcpus");
  }
  if (X->lost_markers) {
    cJSON *l = cJSON_AddObjectToObject(m, "lost_records");
    cJSON_AddNumberToObject(l, "markers", (double)X->lost_markers);
    cJSON_AddNumberToObject(l, "records", (double)X->lost_records);
  }
  import_exits_add_counts(&X->exits);
  cJSON_AddNumberToObject(m, "cr_writes", (double)X->cr_writes);
  cJSON_AddNumberToObject(m, "io_size_assumed", (double)X->io_size_assumed);
  import_exits_add_reasons(&X->exits);
}

/* A replay takes one guest: with several guest domains (dom0 and the idle
** domain apart), it needs --domain. */
static int check_one_guest(struct xen *X) {
  struct import *im = X->im;
  if (!im->opt.domain_required || im->opt.one_domain || !X->sched) return 0;
  char list[256] = "";
  unsigned guests = 0;
  uint8_t listed[65536 / 8] = { 0 };
  for (unsigned i = 0; i < im->nvcpus; i++) {
    unsigned d = X->vc[X->dense_vc[i]].dom;
    if (d == 0 || (listed[d / 8] >> (d % 8) & 1)) continue;
    listed[d / 8] = (uint8_t)(listed[d / 8] | 1u << (d % 8));
    guests++;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%u", used ? ", " : "", d);
  }
  if (guests < 2) return 0;
  snprintf(im->err, sizeof im->err, "%s: the recording holds %u guest domains (%s): give --domain D to replay one",
           im->opt.input, guests, list);
  return EXIT_USAGE;
}

int import_xentrace(struct import *im, const unsigned char *buf, size_t len) {
  struct xen *X = xcalloc(1, sizeof *X);
  X->im = im;
  X->pc = xcalloc(XEN_PCPU_MAX, sizeof *X->pc);
  for (unsigned p = 0; p < XEN_PCPU_MAX; p++) X->pc[p].cur = X->pc[p].first_win = X->pc[p].win = -1;
  import_exits_init(&X->exits, im, false);
  X->vcpu = -1;
  im->binary = true;
  int rc = im->opt.notes ? xen_import_lean(X, buf, len) : xen_import_scanned(X, buf, len);
  xen_seen_fold(X);
  if (rc == 0 && !im->opt.notes) rc = import_exits_finish(&X->exits);   /* the lean pass settles its own */
  if (rc == 0) rc = check_one_guest(X);
  if (rc == 0) add_metadata(X);
  import_map_free(&X->vc_of);
  free(X->vc);
  free(X->win);
  free(X->pc);
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
  "usage: vmxsim import xentrace IN.bin -o OUT.bin [--domain D] [--paging 32|pae|64]\n"
  "                              [--workload NAME] [--skip-bad]\n"
  "\n"
  "IN.bin is a Xen binary trace (xentrace, host byte order). Used records:\n"
  "  CPU change 0x0001f003 {cpu, bytes}   following records ran on that pCPU\n"
  "  runstate 0x00021xx1/0x00021002       the scheduler: which (domain, vCPU) runs on\n"
  "    {vcpu, domain}                     each pCPU (xenalyze's rules; the pCPUs'\n"
  "                                       records taken in TSC order); each one with\n"
  "                                       HVM records becomes a vCPU, named d1v0 in the\n"
  "                                       metadata; the idle domain's are skipped.\n"
  "                                       Without them each pCPU becomes a vCPU (pin\n"
  "                                       vCPUs to pCPUs)\n"
  "  lost records 0x0001f001              counted and reported; the exits whose end\n"
  "                                       they may hold are not measured\n"
  "  HVM VMEXIT 0x00081102/0x00081002     the exit (reason); its TSC minus the vCPU's\n"
  "                                       last VMENTRY's becomes 'run' cycles\n"
  "  HVM handler records 0x00082xxx       the pending exit's action: CR_READ/WRITE\n"
  "                                       crNr/crNw, MSR_READ/WRITE rdmsr/wrmsr,\n"
  "                                       IOPORT_READ/WRITE io (size 1: not recorded),\n"
  "                                       CPUID cpuid LEAF, INTR intr, VMMCALL vmcall,\n"
  "                                       HLT, INVLPG, CLTS, LMSW, RDTSC, PF_XEN touch,\n"
  "                                       NPF touch, TRAP exc, XCR_WRITE64 xsetbv\n"
  "  HVM VMENTRY 0x00081001               end of the exit: its TSC minus the VMEXIT's\n"
  "                                       is the exit's measured cost (vmxsim summary);\n"
  "                                       a runstate change to runnable (preempted,\n"
  "                                       woken) ends it too\n"
  "Exits without a detail record become hlt, rdtsc, pause, wbinvd, cpuid 0 or\n"
  "vmcall 0 where the reason says enough; the rest are counted in the metadata.\n"
  "Other records are counted and skipped.  --domain D keeps Xen domain D's vCPUs\n"
  "(default: every domain with HVM records, dom0's too); a replay of a recording\n"
  "of several guest domains needs it.\n"
  "\n"
  "example:\n"
  "  xentrace -D -e 0x000af000 xen.bin     # scheduler and HVM classes, on the Xen host\n"
  "  vmxsim import xentrace xen.bin -o xen.bin.trace\n"
  "  vmxsim summary --domain 1 --vcpu 0 xen.bin.trace\n";

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
