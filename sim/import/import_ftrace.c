/* ftrace / trace-cmd text of KVM's host tracepoints -> trace of the guest actions that caused each exit. */
#include "import.h"
#include "import_exit.h"
#include "sim/base/util.h"
#include "models/vmx/exit_reason.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** A line is "COMM-PID [CPU] FLAGS SECS.FRAC: EVENT: fields" (trace-cmd report
** drops FLAGS; perf script's "COMM TID [CPU] SECS: kvm:EVENT:" also parses).
** kvm_exit opens an exit on its vCPU; a detail line from the same host thread
** (kvm_cr, kvm_msr, ...) says what the guest did; kvm_entry closes it.  An exit
** that no detail line explained is decoded from its reason and qualification
** (info1) where that says enough: that state machine and table are shared
** with the xentrace importer (import_exit.h).  Fields are found by name: their
** set changed in Linux 5.10 (info -> info1/info2/intr_info/error_code) and
** kvm_entry gained "rip".  SVM hosts' exit names (write_cr3, msr, npf, ...)
** are mapped onto the VMX reasons.
*/

enum kvm_event {
  KE_OTHER, KE_EXIT, KE_ENTRY, KE_CR, KE_MSR, KE_CPUID, KE_PF, KE_HYPERCALL, KE_PIO
};

static const struct { const char *name; enum kvm_event ev; } event_names[] = {
  { "kvm_exit", KE_EXIT }, { "kvm_entry", KE_ENTRY }, { "kvm_cr", KE_CR }, { "kvm_msr", KE_MSR },
  { "kvm_cpuid", KE_CPUID }, { "kvm_page_fault", KE_PF }, { "kvm_hypercall", KE_HYPERCALL },
  { "kvm_pio", KE_PIO },
};

struct kvm {
  struct import *im;
  struct import_map vcpu_of;   /* host thread -> vCPU */
  struct import_exits exits;
};

/* The parsed line. */
struct kline {
  int64_t host_pid;
  uint64_t ns;
  enum kvm_event ev;
  const char *event; size_t event_len;
  const char *f; size_t n;     /* fields */
};

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* ---- the line prefix ---- */

/* Host PID from "COMM-PID" (ftrace) or "PID" / "PID/TID" (perf) ending at te. */
static bool host_pid(const char *ts, const char *te, int64_t *pid) {
  const char *d = te;
  while (d > ts && (is_digit(d[-1]) || d[-1] == '/')) d--;
  if (d == te || !(d == ts || d[-1] == '-')) return false;
  const char *slash = memchr(d, '/', (size_t)(te - d));
  uint64_t v;
  if (!import_num(slash ? slash + 1 : d, te, false, &v, NULL)) return false;
  *pid = (int64_t)v;
  return true;
}

static bool host_pid_ok(const char *ts, const char *te, void *pid) { return host_pid(ts, te, pid); }

/* The end of "COMM-PID [CPU]", with the host thread's pid; NULL if absent. */
static const char *find_cpu(const char *s, const char *end, int64_t *pid) {
  const char *ts, *te, *br = import_find_cpu(s, end, host_pid_ok, pid, &ts, &te);
  return br ? strchr(br, ']') + 1 : NULL;
}

static const char *token(const char *p, const char *end, const char **ts) {
  while (p < end && is_blank(*p)) p++;
  *ts = p;
  while (p < end && !is_blank(*p)) p++;
  return p;
}

static enum kvm_event event_kind(const char *s, size_t n) {
  if (n > 4 && memcmp(s, "kvm:", 4) == 0) { s += 4; n -= 4; }   /* perf's SUBSYS:EVENT */
  for (size_t i = 0; i < sizeof event_names / sizeof *event_names; i++)
    if (strlen(event_names[i].name) == n && memcmp(event_names[i].name, s, n) == 0) return event_names[i].ev;
  return KE_OTHER;
}

static const char *parse_line(const char *s, size_t n, struct kline *k) {
  const char *end = s + n, *ts, *te = find_cpu(s, end, &k->host_pid);
  if (!te) return "no 'COMM-PID [CPU]' columns (expected ftrace or trace-cmd report text)";
  bool have_ts = false;
  for (int i = 0; i < 3 && !have_ts; i++) {        /* FLAGS ("d..2.") may come first */
    te = token(te, end, &ts);
    have_ts = te - ts > 1 && te[-1] == ':' && import_parse_secs(ts, (size_t)(te - ts - 1), &k->ns);
  }
  if (!have_ts) return "no 'SECS.FRACTION:' timestamp after the CPU";
  te = token(te, end, &ts);
  if (!(te - ts > 1 && te[-1] == ':')) return "no 'EVENT:' name after the timestamp";
  k->event = ts;
  k->event_len = (size_t)(te - ts - 1);
  k->ev = event_kind(k->event, k->event_len);
  while (te < end && is_blank(*te)) te++;
  k->f = te;
  k->n = (size_t)(end - te);
  return NULL;
}

/* ---- fields ---- */

static bool fnum(const struct kline *k, const char *name, bool hex, uint64_t *v) {
  const char *p = import_field(k->f, k->n, name);
  return p && import_num(p, k->f + k->n, hex, v, NULL);
}

static int svm_reason(const char *name, struct import_exit *x) {
  static const struct { const char *name; int reason; } t[] = {
    { "cpuid", EXIT_REASON_CPUID }, { "hlt", EXIT_REASON_HLT }, { "invlpg", EXIT_REASON_INVLPG },
    { "io", EXIT_REASON_IO_INSTRUCTION }, { "vmmcall", EXIT_REASON_VMCALL },
    { "hypercall", EXIT_REASON_VMCALL }, { "npf", EXIT_REASON_EPT_VIOLATION },
    { "PF excp", EXIT_REASON_EXCEPTION_NMI }, { "interrupt", EXIT_REASON_EXTERNAL_INTERRUPT },
    { "pause", EXIT_REASON_PAUSE_INSTRUCTION }, { "rdtsc", EXIT_REASON_RDTSC },
    { "rdpmc", EXIT_REASON_RDPMC }, { "wbinvd", EXIT_REASON_WBINVD }, { "xsetbv", EXIT_REASON_XSETBV },
  };
  unsigned n;
  x->svm = true;
  /* read_cr3 / write_dr7: rebuild a VMX qualification (number, bit 4 = read). */
  if (sscanf(name, "read_cr%u", &n) == 1 || sscanf(name, "write_cr%u", &n) == 1) {
    x->info1 = n | (name[0] == 'r' ? 0x10u : 0);
    return EXIT_REASON_CR_ACCESS;
  }
  if (sscanf(name, "read_dr%u", &n) == 1 || sscanf(name, "write_dr%u", &n) == 1) {
    x->info1 = n | (name[0] == 'r' ? 0x10u : 0);
    return EXIT_REASON_DR_ACCESS;
  }
  if (strcmp(name, "msr") == 0) return x->info1 ? EXIT_REASON_MSR_WRITE : EXIT_REASON_MSR_READ;
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (strcmp(name, t[i].name) == 0) {
      if (t[i].reason == EXIT_REASON_EXCEPTION_NMI) x->intr_info = 0x80000300u | 14;  /* #PF */
      return t[i].reason;
    }
  x->svm = false;
  return -1;
}

/* kvm_exit: "[vcpu N ]reason NAME rip 0x.. info1 0x.. info2 0x.. intr_info 0x.. error_code 0x.."
** or before 5.10 "reason NAME rip 0x.. info Q I". */
static const char *parse_exit(const struct kline *k, struct import_exit *x, int64_t *vcpu) {
  const char *end = k->f + k->n, *r = import_field(k->f, k->n, "reason ");
  uint64_t v;
  memset(x, 0, sizeof *x);
  x->qualified = true;
  if (!r) return "kvm_exit: no 'reason' field";
  const char *re = import_field(r, (size_t)(end - r), "rip ");
  re = re ? re - 4 : end;
  while (re > r && is_blank(re[-1])) re--;
  snprintf(x->name, sizeof x->name, "%.*s", (int)(re - r), r);
  char *fail = strstr(x->name, " FAILED_VMENTRY");
  if (fail) *fail = 0;
  *vcpu = fnum(k, "vcpu ", false, &v) ? (int64_t)v : -1;
  const char *old = import_field(k->f, k->n, "info ");
  if (old) {                                       /* before 5.10: info QUALIFICATION INTR_INFO */
    const char *stop;
    if (!import_num(old, end, true, &x->info1, &stop) || !import_num(stop + 1, end, true, &x->info2, NULL))
      return "kvm_exit: 'info' needs two numbers";
    x->intr_info = (uint32_t)x->info2;
  } else {
    uint64_t ii = 0, ec = 0;
    fnum(k, "info1 ", true, &x->info1);
    fnum(k, "info2 ", true, &x->info2);
    fnum(k, "intr_info ", true, &ii);
    fnum(k, "error_code ", true, &ec);
    x->intr_info = (uint32_t)ii;
    x->error_code = (uint32_t)ec;
  }
  x->reason = exit_reason_by_name(x->name);
  if (x->reason < 0 && import_num(x->name, x->name + strlen(x->name), false, &v, NULL) && v < EXIT_REASON_MAX)
    x->reason = (int)v;                            /* printed as a number */
  if (x->reason < 0) x->reason = svm_reason(x->name, x);
  return NULL;
}

/* ---- events ---- */

static int emit(struct kvm *K, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  return import_emit(K->im, v, type, aux, a, b);
}

/* vCPU of a line: its "vcpu N" field, else its host thread's last one. */
static int vcpu_of(struct kvm *K, int64_t field, int64_t host_pid, bool allocate) {
  int64_t *slot = import_map_get(&K->vcpu_of, (uint32_t)host_pid);
  if (field >= 0) {
    if (field >= TRACE_VCPU_MAX) return -2;
    *import_map_put(&K->vcpu_of, (uint32_t)host_pid, field) = field;
    import_use_vcpu(K->im, (unsigned)field);
    return (int)field;
  }
  if (slot) return (int)*slot;
  if (!allocate) return -1;
  if (K->im->nvcpus >= TRACE_VCPU_MAX) return -2;
  int v = (int)K->im->nvcpus;                       /* old kvm_exit without "vcpu": one per thread */
  import_use_vcpu(K->im, (unsigned)v);
  *import_map_put(&K->vcpu_of, (uint32_t)host_pid, v) = v;
  return v;
}

/* Does a detail event of kind ev explain an exit with this reason? */
static bool explains(enum kvm_event ev, int reason) {
  switch (ev) {
  case KE_CR: return reason == EXIT_REASON_CR_ACCESS;
  case KE_MSR: return reason == EXIT_REASON_MSR_READ || reason == EXIT_REASON_MSR_WRITE;
  case KE_CPUID: return reason == EXIT_REASON_CPUID;
  case KE_PF: return reason == EXIT_REASON_EXCEPTION_NMI || reason == EXIT_REASON_EPT_VIOLATION;
  case KE_HYPERCALL: return reason == EXIT_REASON_VMCALL;
  case KE_PIO: return reason == EXIT_REASON_IO_INSTRUCTION;
  default: return false;
  }
}

/* Fields "READ N = VALUE" or "WRITE N = VALUE" (hex numbers), as kvm_cr and kvm_msr print them. */
static bool read_or_write(const struct kline *k, const char *rd, const char *wr, bool *w, uint64_t *n, uint64_t *val) {
  const char *end = k->f + k->n, *stop;
  size_t lr = strlen(rd), lw = strlen(wr);
  *w = k->n > lw && memcmp(k->f, wr, lw) == 0;
  if (!*w && !(k->n > lr && memcmp(k->f, rd, lr) == 0)) return false;
  return import_num(k->f + (*w ? lw : lr) + 1, end, true, n, &stop) && stop + 3 < end &&
         memcmp(stop, " = ", 3) == 0 && import_num(stop + 3, end, true, val, NULL);
}

static const char *detail_cr(struct kvm *K, unsigned v, const struct kline *k, int *rc) {
  bool w;
  uint64_t cr, val;
  if (!read_or_write(k, "cr_read", "cr_write", &w, &cr, &val)) return "kvm_cr: expected 'cr_read|cr_write N = VALUE'";
  if (!import_exit_cr_ok(cr)) { import_skip_why(K->im, "kvm_cr (not CR0/3/4/8)"); *rc = -1; return NULL; }
  if (cr == 3) import_exit_cr3_seen(&K->exits, v, val);
  *rc = w ? emit(K, v, EV_CR_WRITE, (unsigned)cr, val, 0) : emit(K, v, EV_CR_READ, (unsigned)cr, 0, 0);
  return NULL;
}

static const char *detail_msr(struct kvm *K, unsigned v, const struct kline *k, int *rc) {
  bool w;
  uint64_t idx, val;
  if (!read_or_write(k, "msr_read", "msr_write", &w, &idx, &val))
    return "kvm_msr: expected 'msr_read|msr_write INDEX = VALUE'";
  *rc = w ? emit(K, v, EV_WRMSR, 0, idx, val) : emit(K, v, EV_RDMSR, 0, idx, 0);
  return NULL;
}

static const char *detail_pio(struct kvm *K, unsigned v, const struct kline *k, int *rc) {
  uint64_t port, size;
  bool out = k->n > 9 && memcmp(k->f, "pio_write", 9) == 0;
  if (!(out || (k->n > 8 && memcmp(k->f, "pio_read", 8) == 0)) || !fnum(k, "at ", true, &port) ||
      !fnum(k, "size ", false, &size))
    return "kvm_pio: expected 'pio_read|pio_write at PORT size N ...'";
  if ((size != 1 && size != 2 && size != 4) || port > 0xffff) return "kvm_pio: size not 1, 2 or 4, or port beyond 0xffff";
  *rc = emit(K, v, EV_IO, (out ? IO_AUX_OUT : 0) | (unsigned)size << 1, port, 0);
  return NULL;
}

/* Turns a detail line into its event; returns what is wrong, or NULL with *rc set. */
static const char *detail_event(struct kvm *K, unsigned v, const struct kline *k, int *rc) {
  uint64_t a, b = 0;
  switch (k->ev) {
  case KE_CR: return detail_cr(K, v, k, rc);
  case KE_MSR: return detail_msr(K, v, k, rc);
  case KE_PIO: return detail_pio(K, v, k, rc);
  case KE_CPUID:
    if (!fnum(k, "func ", true, &a)) return "kvm_cpuid: no 'func' field";
    fnum(k, "idx ", true, &b);                    /* absent before Linux 2.6.3x */
    *rc = emit(K, v, EV_CPUID, 0, a & 0xffffffff, b & 0xffffffff);
    return NULL;
  case KE_PF:
    if (!fnum(k, "address ", true, &a) || !fnum(k, "error_code ", true, &b))
      return "kvm_page_fault: no 'address' or 'error_code' field";
    import_exit_detail(&K->exits, v, (uint32_t)b);
    *rc = emit(K, v, EV_TOUCH, (b & 2) ? TOUCH_AUX_WRITE : 0, a & ~0xfffull, 1);
    return NULL;
  case KE_HYPERCALL:
    if (!fnum(k, "nr ", true, &a)) return "kvm_hypercall: no 'nr' field";
    *rc = emit(K, v, EV_VMCALL, 0, a, 0);
    return NULL;
  default: return NULL;
  }
}

static int on_detail(struct kvm *K, const struct kline *k, uint64_t lineno, const char *s, size_t n) {
  uint64_t fv;
  int64_t field = k->ev == KE_PF && fnum(k, "vcpu ", false, &fv) ? (int64_t)fv : -1;
  int v = vcpu_of(K, field, k->host_pid, false);
  if (v == -2) return import_bad(K->im, lineno, s, n, "vcpu number beyond 255");
  struct import_exit_vcpu *c = v >= 0 ? &K->exits.v[v] : NULL;
  if (!c || !c->pending || !explains(k->ev, c->x.reason)) {
    /* Also traced for emulated instructions and userspace exits: not an exit of its own. */
    K->im->skipped++;
    import_tally_name2(&K->im->skipped_names, k->event, k->event_len > 20 ? 20 : k->event_len, " (no matching exit)");
    return 0;
  }
  int rc = 0;
  const char *why = detail_event(K, (unsigned)v, k, &rc);
  if (why) return import_bad(K->im, lineno, s, n, why);
  import_exit_explained(&K->exits, (unsigned)v, rc >= 0);
  if (rc < 0) return 0;                                /* understood, skipped */
  K->im->used++;
  return rc;
}

static int kvm_line(struct kvm *K, const char *s, size_t n, uint64_t lineno) {
  struct import *im = K->im;
  struct kline k;
  struct import_exit x;
  int64_t field;
  im->units++;
  const char *t = s;
  while (t < s + n && is_blank(*t)) t++;
  if (t == s + n || *t == '#' || (s + n - t >= 5 && (memcmp(t, "cpus=", 5) == 0 || memcmp(t, "CPU ", 4) == 0 ||
                                                     memcmp(t, "versi", 5) == 0))) {
    im->ignored++;                                 /* comments and trace-cmd report headers */
    return 0;
  }
  if (s + n - t >= 4 && memcmp(t, "CPU:", 4) == 0) return import_skip_why(im, "lost events");
  const char *why = parse_line(s, n, &k);
  if (why) return import_bad(im, lineno, s, n, why);
  import_exits_saw_time(&K->exits, k.ns);
  if (k.ev == KE_OTHER) { import_skip(im, k.event, k.event_len); return 0; }
  import_saw(im, k.event, k.event_len);
  if (k.ev != KE_EXIT && k.ev != KE_ENTRY) return on_detail(K, &k, lineno, s, n);
  uint64_t fv;
  if (k.ev == KE_EXIT && (why = parse_exit(&k, &x, &field))) return import_bad(im, lineno, s, n, why);
  if (k.ev == KE_ENTRY) field = fnum(&k, "vcpu ", false, &fv) ? (int64_t)fv : -1;
  int v = vcpu_of(K, field, k.host_pid, true);
  if (v < 0) return import_bad(im, lineno, s, n, "vcpu number beyond 255");
  if (k.ev == KE_EXIT && import_exit_gap_too_long(&K->exits, (unsigned)v, k.ns))
    return import_bad(im, lineno, s, n, IMPORT_GAP_WHY);
  im->used++;
  return k.ev == KE_EXIT ? import_exit_begins(&K->exits, (unsigned)v, true, k.ns, &x)
                         : import_exit_entry(&K->exits, (unsigned)v, true, k.ns);
}

int import_kvm_ftrace(struct import *im, const char *buf, size_t len) {
  struct kvm *K = xcalloc(1, sizeof *K);
  K->im = im;
  import_exits_init(&K->exits, im, true);
  const char *s;
  size_t n, pos = 0;
  uint64_t lineno = 0;
  int rc = 0;
  while (rc == 0 && import_next_line(buf, len, &pos, &s, &n)) {
    rc = kvm_line(K, s, n, ++lineno);
    import_release(im, buf, pos);
  }
  if (rc == 0) rc = import_exits_finish(&K->exits);
  if (rc == 0) {
    import_exits_add_counts(&K->exits);
    import_exits_add_reasons(&K->exits);
  }
  import_map_free(&K->vcpu_of);
  free(K);
  return rc;
}

/* ---- the format's row (the table of sim/import/import.c) ---- */

/* KVM ftrace: exits, entries and the detail events that give exits their operands. */
static const struct import_need kvm_needs[] = {
  { "kvm_exit", "VM exits", "no VM exits" },
  { "kvm_entry", "VM entries (guest time between exits: run cycles)",
    "no VM entries: the guest's time between exits is not replayed (no run cycles)" },
  { "kvm_cr", "control-register accesses (the register and value of CR_ACCESS exits)",
    "no kvm_cr: CR_ACCESS exits lose which register was written and with what value" },
  { "kvm_page_fault", "page faults behind EXCEPTION_NMI and EPT_VIOLATION exits (touch events)",
    "no kvm_page_fault: page-fault exits carry no address, so replays show no shadow-MMU work" },
  { "kvm_msr", "MSR accesses (rdmsr, wrmsr operands)", NULL },
  { "kvm_cpuid", "CPUID leaves", NULL },
  { "kvm_pio", "port I/O (port and size)", NULL },
  { "kvm_hypercall", "hypercall numbers", NULL },
};

static const char kvm_usage[] =
  "usage: vmxsim import kvm-ftrace IN.txt -o OUT.bin [--cpu-ghz G] [--paging 32|pae|64]\n"
  "                                [--workload NAME] [--skip-bad]\n"
  "\n"
  "IN.txt is /sys/kernel/tracing/trace text or 'trace-cmd report' output of KVM's\n"
  "tracepoints on the host (old and new line formats). Each exit the host took\n"
  "becomes the guest action that caused it:\n"
  "  CR_ACCESS + kvm_cr cr_write N = V   crNw V (cr_read: crNr; CLTS, LMSW from info1)\n"
  "  MSR_READ/MSR_WRITE + kvm_msr        rdmsr IDX / wrmsr IDX V\n"
  "  CPUID + kvm_cpuid                   cpuid FUNC IDX\n"
  "  HLT, INVLPG (info1), RDTSC, PAUSE   hlt, invlpg ADDR, rdtsc, pause\n"
  "  IO_INSTRUCTION + kvm_pio            io in|out PORT SIZE\n"
  "  VMCALL + kvm_hypercall              vmcall NR\n"
  "  EXCEPTION_NMI/EPT_VIOLATION +\n"
  "    kvm_page_fault                    touch PAGE 1 (w when error_code bit 1)\n"
  "  DR_ACCESS                           drw/drr N (info1 bits 2:0, direction bit 4)\n"
  "  EXTERNAL_INTERRUPT                  intr VECTOR\n"
  "Guest time from kvm_entry to the next kvm_exit becomes 'run' cycles; 'vcpu N'\n"
  "becomes vCPU N. Only exits the host took are recorded: record with kvm_intel\n"
  "ept=0 to see every guest CR3 write.\n"
  "\n"
  "example:\n"
  "  trace-cmd record -e kvm:kvm_exit -e kvm:kvm_entry -e kvm:kvm_cr -e kvm:kvm_msr \\\n"
  "      -e kvm:kvm_cpuid -e kvm:kvm_page_fault -e kvm:kvm_pio -e kvm:kvm_hypercall\n"
  "  trace-cmd report > kvm.txt\n"
  "  vmxsim import kvm-ftrace kvm.txt -o kvm.bin\n";

/* kvm_exit names KVM ftrace text; a host's recording may hold sched events
** as well, which perf script text also has: kvm_exit is the surer sign. */
static int kvm_probe(const unsigned char *head, size_t n, const char *text) {
  (void)head;
  (void)n;
  return text && strstr(text, "kvm_exit") ? IMPORT_PROBE_SPECIFIC : IMPORT_PROBE_NO;
}

const struct import_format import_kvm_ftrace_format = {
  .name = "kvm-ftrace",
  .summary = "ftrace / 'trace-cmd report' text of KVM's kvm_exit, kvm_entry,\n"
             "kvm_cr, kvm_msr, kvm_cpuid, kvm_page_fault, kvm_hypercall, kvm_pio",
  .usage = kvm_usage,
  .recording = "KVM ftrace text",
  .looks_for = "kvm_exit events",
  .probe = kvm_probe,
  .run = import_kvm_ftrace,
  .needs = kvm_needs,
  .nneeds = sizeof kvm_needs / sizeof *kvm_needs,
};
