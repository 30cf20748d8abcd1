/* ftrace / trace-cmd text of KVM's host tracepoints -> trace of the guest actions that caused each exit. */
#include "import.h"
#include "import_exit.h"
#include "sim/base/util.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
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
**
** Exits and entries are paired by the host thread that ran the vCPU (the
** task's pid in the text, the record's pid in trace.dat), never by the host
** CPU: a vCPU thread migrates between CPUs, and one CPU runs several vCPU
** threads in turn.  Each thread becomes one trace vCPU: the vcpu id KVM
** prints ("vcpu N") when the thread's records carry one, else the lowest
** number free; the metadata's "vcpu_threads" keeps the mapping.
**
** Text pasted from a mail or a report may hold lines no tracer wrote: an
** elision ("..."), an author's note after a record ("<---- [1]").  They are
** bad input (exit 3), counted and skipped with --skip-bad: an elision ends
** every vCPU's open exit and guest run (what happened in between is not in
** the text), a note after a record is dropped and the record kept.
*/

/* KE_ACCEPT comes last: its records end in words no end_fields row lists
** (record_end), so no note after them is looked for. */
enum kvm_event {
  KE_OTHER, KE_EXIT, KE_ENTRY, KE_CR, KE_MSR, KE_CPUID, KE_PF, KE_HYPERCALL, KE_PIO, KE_ACCEPT
};

static const struct { const char *name; enum kvm_event ev; } event_names[] = {
  { "kvm_exit", KE_EXIT }, { "kvm_entry", KE_ENTRY }, { "kvm_cr", KE_CR }, { "kvm_msr", KE_MSR },
  { "kvm_cpuid", KE_CPUID }, { "kvm_page_fault", KE_PF }, { "kvm_hypercall", KE_HYPERCALL },
  { "kvm_pio", KE_PIO }, { "kvm_apic_accept_irq", KE_ACCEPT },
};

/* A vCPU thread: the host task that ran one vCPU (its records' pid). */
struct kvm_thread {
  int64_t pid;
  int64_t kvm_id;              /* the vcpu id its records print, -1 when none */
  char comm[32];               /* the task's name ("CPU 0/KVM"), as first seen */
};

struct kvm {
  struct import *im;
  struct import_map vcpu_of;   /* host thread (pid) -> trace vCPU */
  struct kvm_thread thread[TRACE_VCPU_MAX];   /* trace vCPU -> its thread */
  bool taken[TRACE_VCPU_MAX];
  struct import_exits exits;
  const char *buf;             /* the input, for looking ahead for a thread's vcpu id */
  size_t len, pos;             /* pos: just past the current line */
  unsigned frac_digits;        /* the most digits seen after a timestamp's point */
  uint64_t zero_measured;      /* exits whose entry came at their exit's recorded time */
  bool timer_marks;            /* a record that can tell the guest's timer was seen (kvm_apic_accept_irq) */
  uint64_t guest_timer;        /* EXTERNAL_INTERRUPT exits that were the guest's timer expiring */
  import_emit_fn emit;         /* the import's own emitter (kvm_emit stands in front of it) */
  void *emit_ctx;
};

/* The parsed line. */
struct kline {
  int64_t host_pid;
  const char *comm; size_t comm_len;   /* the task's name, before "-PID" */
  uint64_t ns;
  unsigned frac_digits;        /* of the timestamp: 6 (microseconds) in ftrace's default text */
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

/* The end of "COMM-PID [CPU]", with the host thread's pid and name; NULL if absent. */
static const char *find_cpu(const char *s, const char *end, struct kline *k) {
  const char *ts, *te, *br = import_find_cpu(s, end, host_pid_ok, &k->host_pid, &ts, &te);
  if (!br) return NULL;
  const char *d = te;                              /* the name ends at "-PID" (ftrace) or the pid token (perf) */
  while (d > ts && (is_digit(d[-1]) || d[-1] == '/')) d--;
  const char *ce = d > ts && d[-1] == '-' ? d - 1 : ts, *cs = s;
  while (cs < ce && is_blank(*cs)) cs++;
  while (ce > cs && is_blank(ce[-1])) ce--;
  k->comm = cs;
  k->comm_len = (size_t)(ce - cs);
  return strchr(br, ']') + 1;
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
  const char *end = s + n, *ts, *te = find_cpu(s, end, k);
  if (!te) return "no 'COMM-PID [CPU]' columns (expected ftrace or trace-cmd report text)";
  bool have_ts = false;
  for (int i = 0; i < 3 && !have_ts; i++) {        /* FLAGS ("d..2.") may come first */
    te = token(te, end, &ts);
    have_ts = te - ts > 1 && te[-1] == ':' && import_parse_secs(ts, (size_t)(te - ts - 1), &k->ns);
  }
  if (!have_ts) return "no 'SECS.FRACTION:' timestamp after the CPU";
  const char *dot = memchr(ts, '.', (size_t)(te - ts));
  k->frac_digits = dot ? (unsigned)(te - 1 - dot - 1) : 0;
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

/* ---- where a record ends: text after it is no tracer's ---- */

/* The fields each event's print format ends with, the last printed first: the
** first found ends the record (a kernel that prints fewer ends earlier). */
static const char *const end_fields[][9] = {
  [KE_EXIT] = { "requests ", "error_code ", "intr_info ", "info2 ", "info1 ", "info ", "rip ", "vcpu " },
  [KE_ENTRY] = { "error_code ", "intr_info ", "rip ", "vcpu " },
  [KE_MSR] = { " = " },
  [KE_CR] = { " = " },
  [KE_CPUID] = { "rdx ", "rcx ", "rbx ", "rax ", "idx ", "func " },
  [KE_PF] = { "error_code ", "address ", "rip ", "vcpu " },
  [KE_HYPERCALL] = { "a3 ", "a2 ", "a1 ", "a0 ", "nr " },
  [KE_PIO] = { "val ", "count ", "size ", "at " },
};
/* kvm_msr's "(#GP)", kvm_pio's "(...)" (count > 1), kvm_cpuid's found flags. */
static const char *const end_words[] = {
  "(#GP)", "(...)", ", cpuid entry found", ", cpuid entry not found", ", used max basic", "[immediate exit]",
};

/* The end of the number after `name` in the fields, or NULL.  " = " (kvm_cr,
** kvm_msr) is no field name: found anywhere; "info " (kvm_exit before Linux
** 5.10) has two numbers. */
static const char *field_end(const struct kline *k, const char *name) {
  const char *end = k->f + k->n, *p, *stop;
  uint64_t v;
  size_t w = strlen(name);
  if (name[0] == ' ') {
    for (p = k->f; p + w <= end && memcmp(p, name, w); p++) {}
    p = p + w <= end ? p + w : NULL;
  } else {
    p = import_field(k->f, k->n, name);
  }
  if (!p || !import_num(p, end, true, &v, &stop)) return NULL;
  if (strcmp(name, "info ") == 0 && !(stop < end && import_num(stop + 1, end, true, &v, &stop))) return NULL;
  return stop;
}

/* Past "name NUMBER" at p (a field a later kernel added: Linux 6.x's kvm_exit
** ends with "requests 0x..."), or NULL: a note ("<---- [1]") is no such pair. */
static const char *named_number(const char *p, const char *end) {
  const char *q = p, *stop;
  uint64_t v;
  if (q == end || !(*q >= 'a' && *q <= 'z')) return NULL;
  while (q < end && ((*q >= 'a' && *q <= 'z') || is_digit(*q) || *q == '_')) q++;
  if (q == end || *q != ' ') return NULL;
  if (!import_num(q + 1, end, true, &v, &stop) || (stop < end && !is_blank(*stop))) return NULL;
  return stop;
}

/* Where the record's own text ends (past its last field and the words its
** format may print after it); NULL for a format whose end is not known. */
/* The common case, found from the line's end: it ends with one of its format's
** own fields ("error_code 0x00000000"), so nothing comes after the record. */
static bool ends_with_field(const struct kline *k) {
  const char *b = k->f, *e = k->f + k->n, *stop;
  uint64_t v;
  while (e > b && is_blank(e[-1])) e--;
  const char *num = e;
  while (num > b && !is_blank(num[-1])) num--;
  if (num == e || !import_num(num, e, true, &v, &stop) || stop != e) return false;
  const char *ne = num, *ns;
  while (ne > b && is_blank(ne[-1])) ne--;
  for (ns = ne; ns > b && !is_blank(ns[-1]); ns--) {}
  for (const char *const *f = end_fields[k->ev]; *f; f++) {
    const char *name = (*f)[0] == ' ' ? *f + 1 : *f;     /* " = " is "=" between blanks */
    size_t w = strlen(name) - 1;                         /* without its blank */
    if (w == (size_t)(ne - ns) && memcmp(ns, name, w) == 0) return true;
  }
  return false;
}

static const char *record_end(const struct kline *k) {
  if (k->ev == KE_OTHER || (size_t)k->ev >= sizeof end_fields / sizeof *end_fields) return NULL;
  if (ends_with_field(k)) return k->f + k->n;
  const char *e = NULL, *end = k->f + k->n;
  for (const char *const *f = end_fields[k->ev]; *f && !e; f++) e = field_end(k, *f);
  if (!e) return NULL;
  for (bool more = true; more;) {
    more = false;
    for (const char *b = e; b < end && is_blank(*b); b++) e = b + 1;
    for (size_t i = 0; i < sizeof end_words / sizeof *end_words; i++) {
      size_t w = strlen(end_words[i]);
      if ((size_t)(end - e) >= w && memcmp(e, end_words[i], w) == 0) { e += w; more = true; }
    }
    const char *after = more ? NULL : named_number(e, end);
    if (after) { e = after; more = true; }
  }
  return e;
}

/* ---- events ---- */

static int emit(struct kvm *K, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  return import_emit(K->im, v, type, aux, a, b);
}

/* ---- vCPU threads ---- */

/* Lines looked at, from a thread's first, for the vcpu id one of its later
** records prints: Linux before 5.10 prints none in kvm_exit, but does in
** kvm_entry, which follows within a few lines. */
#define ID_LOOKAHEAD_LINES 4096

/* The vcpu id of the thread's first kvm_entry or kvm_exit that prints one,
** from the line after the current one on; -1 when none is that near. */
static int64_t id_ahead(const struct kvm *K, int64_t pid) {
  size_t pos = K->pos, n;
  const char *s;
  uint64_t id;
  for (unsigned i = 0; i < ID_LOOKAHEAD_LINES && import_next_line(K->buf, K->len, &pos, &s, &n); i++) {
    struct kline k;
    if (parse_line(s, n, &k) || k.host_pid != pid || (k.ev != KE_EXIT && k.ev != KE_ENTRY)) continue;
    if (fnum(&k, "vcpu ", false, &id)) return id <= INT64_MAX ? (int64_t)id : -1;
  }
  return -1;
}

/* A thread seen for the first time: the trace vCPU numbered by its vcpu id
** when that is free (two virtual machines both have a vCPU 0), else the
** lowest number free; -2 when every number is taken. */
static int new_thread(struct kvm *K, const struct kline *k, int64_t id) {
  unsigned v = 0;
  if (id >= 0 && id < TRACE_VCPU_MAX && !K->taken[id]) v = (unsigned)id;
  else
    while (v < TRACE_VCPU_MAX && K->taken[v]) v++;
  if (v == TRACE_VCPU_MAX) return -2;
  struct kvm_thread *t = &K->thread[v];
  K->taken[v] = true;
  t->pid = k->host_pid;
  t->kvm_id = id;
  size_t n = k->comm_len < sizeof t->comm - 1 ? k->comm_len : sizeof t->comm - 1;
  for (size_t i = 0; i < n; i++) {                 /* the metadata is JSON text: printable ASCII only */
    unsigned char c = (unsigned char)k->comm[i];
    t->comm[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
  }
  *import_map_put(&K->vcpu_of, (uint32_t)k->host_pid, v) = v;
  import_use_vcpu(K->im, v);
  return (int)v;
}

/* The trace vCPU of a line's thread (field: the vcpu id the line prints, -1
** if none); a thread not seen before gets one when allocate, else -1. */
static int vcpu_of(struct kvm *K, const struct kline *k, int64_t field, bool allocate) {
  int64_t *slot = import_map_get(&K->vcpu_of, (uint32_t)k->host_pid);
  if (slot) return (int)*slot;
  if (!allocate) return -1;
  return new_thread(K, k, field >= 0 ? field : id_ahead(K, k->host_pid));
}

/* Metadata "vcpu_threads": each trace vCPU's host thread (pid, name) and vcpu id. */
static void add_threads(const struct kvm *K) {
  cJSON *a = cJSON_AddArrayToObject(K->im->meta, "vcpu_threads");
  for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) {
    if (!K->taken[v]) continue;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "vcpu", v);
    cJSON_AddNumberToObject(t, "pid", (double)K->thread[v].pid);
    cJSON_AddStringToObject(t, "comm", K->thread[v].comm);
    if (K->thread[v].kvm_id >= 0) cJSON_AddNumberToObject(t, "kvm_vcpu", (double)K->thread[v].kvm_id);
    cJSON_AddItemToArray(a, t);
  }
}

/* Was the exit the host's timer interrupt (Linux's LOCAL_TIMER_VECTOR, the
** vector of the VM-exit interruption information: SDM 27.2.2)? */
static bool host_timer_exit(const struct import_exit *x) {
  return x->reason == EXIT_REASON_EXTERNAL_INTERRUPT && import_exit_vector(x) == LOCAL_TIMER_VECTOR;
}

/* Does a detail event of kind ev explain an exit with this reason? */
static bool explains(enum kvm_event ev, const struct import_exit *x) {
  int reason = x->reason;
  switch (ev) {
  case KE_ACCEPT: return host_timer_exit(x);
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

/* kvm_apic_accept_irq "apicid N vec V (MODE|TRIGGER)" on the vCPU's own
** thread while its exit at the host's timer vector is open: the host's
** interrupt ran KVM's hrtimer of the guest's deadline (apic_timer_fn), which
** made the guest's timer interrupt pending, accepted before the entry
** (kvm_inject_apic_timer_irqs, or in the hrtimer itself).  The interrupt
** another vCPU or a device sends is accepted on the sender's thread, not in
** this exit; another vCPU's deadline, whose hrtimer may fire on this CPU
** while it runs (hrtimer_expire_entry function=apic_timer_fn), is accepted
** on that vCPU's thread: the hrtimer's record alone does not say whose
** deadline it was, so it is no evidence. */
static const char *detail_accept(struct kvm *K, unsigned v, const struct kline *k, int *rc) {
  uint64_t vec;
  if (!fnum(k, "vec ", false, &vec) || vec > 255) return "kvm_apic_accept_irq: expected 'apicid N vec V' (V to 255)";
  K->guest_timer++;
  *rc = emit(K, v, EV_VIRQ, VIRQ_SRC_TIMER, vec, 0);
  return NULL;
}

/* Turns a detail line into its event; returns what is wrong, or NULL with *rc set. */
static const char *detail_event(struct kvm *K, unsigned v, const struct kline *k, int *rc) {
  uint64_t a, b = 0;
  switch (k->ev) {
  case KE_CR: return detail_cr(K, v, k, rc);
  case KE_MSR: return detail_msr(K, v, k, rc);
  case KE_PIO: return detail_pio(K, v, k, rc);
  case KE_ACCEPT: return detail_accept(K, v, k, rc);
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
  if (k->ev == KE_ACCEPT) K->timer_marks = true;
  int v = vcpu_of(K, k, -1, false);                  /* a thread with no exit yet has none to explain */
  struct import_exit_vcpu *c = v >= 0 ? &K->exits.v[v] : NULL;
  if (!c || !c->pending || !explains(k->ev, &c->x)) {
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

/* ---- lines ---- */

/* "CPU 3 is empty" (trace-cmd report), "cpus=4", "version = 6": written by the
** tool, no record.  Only the whole form: "CPU 0/KVM" is QEMU's name for a vCPU
** thread, and its records start with it. */
static bool header_line(const char *t, const char *end) {
  size_t n = (size_t)(end - t);
  const char *p;
  uint64_t v;
  if (n > 5 && memcmp(t, "cpus=", 5) == 0) return import_num(t + 5, end, false, &v, &p) && p == end;
  if (n > 9 && memcmp(t, "version =", 9) == 0) return true;
  if (n > 4 && memcmp(t, "CPU ", 4) == 0 && import_num(t + 4, end, false, &v, &p))
    return (size_t)(end - p) == 9 && memcmp(p, " is empty", 9) == 0;
  return false;
}

/* An elision a person wrote where lines were left out: "...", "[...]", "…", "<snip>". */
static bool elision_line(const char *t, const char *end) {
  while (end > t && is_blank(end[-1])) end--;
  size_t n = (size_t)(end - t), dots = 0;        /* the line is no C string: counted within it */
  while (dots < n && t[dots] == '.') dots++;
  static const char *const marks[] = { "[...]", "(...)", "\xe2\x80\xa6", "<snip>", "[snip]", "snip" };
  if (n >= 3 && dots == n) return true;
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
    if (strlen(marks[i]) == n && memcmp(t, marks[i], n) == 0) return true;
  return false;
}

/* An elision under --skip-bad: nothing is measured across it (an exit open
** before it, or a guest run, may have ended in the lines left out). */
static int elision(struct kvm *K, uint64_t lineno, const char *s, size_t n) {
  int rc = import_bad(K->im, lineno, s, n, "an elision, no record: lines were left out (--skip-bad: nothing "
                                           "is measured across it)");
  for (unsigned v = 0; rc == 0 && v < TRACE_VCPU_MAX; v++) {
    K->exits.v[v].in_guest = false;
    K->exits.v[v].open = false;
  }
  return rc;
}

/* Text after a record's last field (an author's "<---- [1]") is no tracer's:
** bad input, and under --skip-bad the record is kept without it. */
static int trailing_text(struct kvm *K, struct kline *k, uint64_t lineno, const char *s, size_t n) {
  const char *e = record_end(k);
  if (!e || e == k->f + k->n) return 0;
  int rc = import_bad(K->im, lineno, s, n, "text after the record, a note? (--skip-bad keeps the record "
                                           "without it)");
  k->n = (size_t)(e - k->f);
  return rc;
}

static int on_exit_or_entry(struct kvm *K, const struct kline *k, uint64_t lineno, const char *s, size_t n) {
  struct import *im = K->im;
  struct import_exit x;
  int64_t field;
  uint64_t fv;
  const char *why;
  if (k->ev == KE_EXIT && (why = parse_exit(k, &x, &field))) return import_bad(im, lineno, s, n, why);
  if (k->ev == KE_ENTRY) field = fnum(k, "vcpu ", false, &fv) && fv <= INT64_MAX ? (int64_t)fv : -1;
  int v = vcpu_of(K, k, field, true);
  if (v < 0) return import_bad(im, lineno, s, n, "a vCPU thread beyond the 256 a trace can hold");
  if (k->ev == KE_EXIT && import_exit_gap_too_long(&K->exits, (unsigned)v, k->ns))
    return import_bad(im, lineno, s, n, IMPORT_GAP_WHY);
  im->used++;
  return k->ev == KE_EXIT ? import_exit_begins(&K->exits, (unsigned)v, true, k->ns, &x)
                          : import_exit_entry(&K->exits, (unsigned)v, true, k->ns);
}

static int kvm_line(struct kvm *K, const char *s, size_t n, uint64_t lineno) {
  struct import *im = K->im;
  struct kline k;
  im->units++;
  const char *t = s, *end = s + n;
  while (t < end && is_blank(*t)) t++;
  if (t == end || *t == '#' || header_line(t, end)) {
    im->ignored++;                                 /* comments and trace-cmd report headers */
    return 0;
  }
  if (end - t >= 4 && memcmp(t, "CPU:", 4) == 0) return import_skip_why(im, "lost events");
  if (elision_line(t, end)) return elision(K, lineno, s, n);
  const char *why = parse_line(s, n, &k);
  if (why) return import_bad(im, lineno, s, n, why);
  import_exits_saw_time(&K->exits, k.ns);
  if (k.ev == KE_OTHER) { import_skip(im, k.event, k.event_len); return 0; }
  if (k.frac_digits > K->frac_digits) K->frac_digits = k.frac_digits;
  int rc = trailing_text(K, &k, lineno, s, n);
  if (rc) return rc;
  import_saw(im, k.event, k.event_len);
  if (k.ev != KE_EXIT && k.ev != KE_ENTRY) return on_detail(K, &k, lineno, s, n);
  return on_exit_or_entry(K, &k, lineno, s, n);
}

/* A measured exit of 0 cycles: its entry came at its exit's recorded time,
** that is within the timestamps' resolution (1 us in ftrace's default text).
** The views leave exits of 0 cycles out of the averages (xenalyze's rule, for
** xentrace), and here that would count only the longer exits: it is kept as
** 1 cycle, the least the views count (docs/sources.md, "How vmxsim reads KVM
** text": why not half the resolution). */
static int kvm_emit(void *ctx, const struct trace_event *ev) {
  struct kvm *K = ctx;
  if (ev->type != EV_MEASURED || ev->a != 0) return K->emit(K->emit_ctx, ev);
  struct trace_event one = *ev;
  one.a = 1;
  K->zero_measured++;
  return K->emit(K->emit_ctx, &one);
}

/* Metadata of the timestamps: their resolution, and the exits shorter than it. */
static void add_resolution(const struct kvm *K) {
  uint64_t ns = 1;
  for (unsigned d = K->frac_digits < 9 ? K->frac_digits : 9; d < 9; d++) ns *= 10;
  cJSON_AddNumberToObject(K->im->meta, "time_resolution_ns", (double)ns);
  cJSON_AddNumberToObject(K->im->meta, "measured_below_resolution", (double)K->zero_measured);
}

/* Nothing of the recording comes before a vCPU's first exit, so nothing tells
** its initial CR0.  A running Linux guest's CR0 (IMPORT_CR0_INIT) would turn
** the recording's first CR0 write of that value, a measured exit, into a write
** that changes nothing and does not exit; with CD set, a value no running
** guest keeps, every CR0 write the recording measured changes a bit the host
** owns, as it must have for the host to see it. */
#define KVM_CR0_UNKNOWN (IMPORT_CR0_INIT | (1ull << 30))

int import_kvm_ftrace(struct import *im, const char *buf, size_t len) {
  struct kvm *K = xcalloc(1, sizeof *K);
  K->im = im;
  K->buf = buf;
  K->len = len;
  K->emit = im->emit;
  K->emit_ctx = im->emit_ctx;
  im->emit = kvm_emit;
  im->emit_ctx = K;
  for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) im->init[v].cr0 = KVM_CR0_UNKNOWN;
  import_exits_init(&K->exits, im, true);
  const char *s;
  size_t n;
  uint64_t lineno = 0;
  int rc = 0;
  while (rc == 0 && import_next_line(buf, len, &K->pos, &s, &n)) {
    rc = kvm_line(K, s, n, ++lineno);
    import_release(im, buf, K->pos);
  }
  if (rc == 0) rc = import_exits_finish(&K->exits);
  if (rc == 0) {
    import_exits_add_counts(&K->exits);
    import_exits_add_reasons(&K->exits);
    import_exits_add_timer(&K->exits, K->guest_timer, K->timer_marks);
    add_threads(K);
    add_resolution(K);
  }
  im->emit = K->emit;
  im->emit_ctx = K->emit_ctx;
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
  { "kvm_apic_accept_irq", "the guest's timer behind an EXTERNAL_INTERRUPT exit at the host's timer vector", NULL },
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
  "  EXTERNAL_INTERRUPT at 0xec +\n"
  "    kvm_apic_accept_irq (its thread)  virq-timer VEC (the guest's deadline in a\n"
  "                                      host hrtimer: a PREEMPTION_TIMER exit under\n"
  "                                      lapic_timer=preemption)\n"
  "Guest time from kvm_entry to the next kvm_exit becomes 'run' cycles. Exits pair\n"
  "by the vCPU thread (COMM-PID), not by CPU; each thread becomes the vCPU its\n"
  "'vcpu N' names (the lowest number free when it names none or a taken one), and\n"
  "the metadata's vcpu_threads keeps the mapping. Exits shorter than the timestamps'\n"
  "resolution (1 us in ftrace's text) count as 1 cycle. Only exits the host took are\n"
  "recorded: record with kvm_intel ept=0 to see every guest CR3 write.\n"
  "Text pasted from a mail: an elision ('...') and a note after a record are\n"
  "unparseable; --skip-bad counts and skips them (nothing is measured across an\n"
  "elision; a noted record is kept).\n"
  "\n"
  "example:\n"
  "  trace-cmd record -e kvm:kvm_exit -e kvm:kvm_entry -e kvm:kvm_cr -e kvm:kvm_msr \\\n"
  "      -e kvm:kvm_cpuid -e kvm:kvm_page_fault -e kvm:kvm_pio -e kvm:kvm_hypercall \\\n"
  "      -e kvm:kvm_apic_accept_irq\n"
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
             "kvm_cr, kvm_msr, kvm_cpuid, kvm_page_fault, kvm_hypercall, kvm_pio,\n"
             "kvm_apic_accept_irq",
  .usage = kvm_usage,
  .recording = "KVM ftrace text",
  .looks_for = "kvm_exit events",
  .probe = kvm_probe,
  .run = import_kvm_ftrace,
  .needs = kvm_needs,
  .nneeds = sizeof kvm_needs / sizeof *kvm_needs,
};
