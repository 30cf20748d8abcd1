/* `perf script` text of a native Linux recording -> trace of what the guest kernel would do (workloads/record/README.md). */
#include "import.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
** A line is "COMM PID/TID [CPU] SECS.FRAC: SUBSYS:EVENT: fields" ('perf script
** -F +pid'; without +pid just "COMM TID").  COMM may hold blanks, so the line
** is anchored on the "[CPU]" token, and the fields are found by name because
** their order and spelling drift between kernels.
**
** Two passes over the text: the first learns which process (thread group)
** each thread belongs to and which tasks are kernel threads, because a
** sched_switch names the next task by TID before any line of that task shows
** its PID; the second converts.
**
** As a 64-bit Xen PV guest (--guest pv64: Xen, or xenner on KVM) the kernel
** and user space of a process run on separate page tables, so every entry
** to the guest kernel from user space (a system call, a user page fault, an
** interrupt that ends in a switch) and every return to user space is a CR3
** write: each vCPU's mode (user or kernel tables) is followed, and a change
** of mode becomes a cr3w of the process's other root.
*/

enum perf_event {
  PE_OTHER, PE_SWITCH, PE_FORK, PE_SYS_ENTER, PE_SYS_EXIT, PE_PF_USER, PE_PF_KERNEL, PE_TLB, PE_EXEC
};

#define NAME(s) s, sizeof s - 1
static const struct { const char *name; size_t len; enum perf_event ev; } event_names[] = {
  { NAME("raw_syscalls:sys_enter"), PE_SYS_ENTER },   { NAME("raw_syscalls:sys_exit"), PE_SYS_EXIT },
  { NAME("sched:sched_switch"), PE_SWITCH },          { NAME("sched:sched_process_fork"), PE_FORK },
  { NAME("exceptions:page_fault_user"), PE_PF_USER }, { NAME("exceptions:page_fault_kernel"), PE_PF_KERNEL },
  { NAME("tlb:tlb_flush"), PE_TLB },                  { NAME("sched:sched_process_exec"), PE_EXEC },
};
#undef NAME

/* The fixed part of a line. */
struct prefix {
  const char *comm; size_t comm_len;
  int64_t pid;              /* thread group id; -1 when the line has no PID column */
  int64_t tid;
  int64_t cpu;
  uint64_t ns;              /* timestamp */
  const char *event; size_t event_len;
  enum perf_event ev;
  const char *fields; size_t fields_len;
};

/* What the event-specific fields say. */
struct fields {
  int64_t next_pid;         /* sched_switch */
  const char *next_comm; size_t next_comm_len;
  int64_t parent, child;    /* sched_process_fork */
  int64_t nr;               /* sys_enter */
  uint64_t address;         /* page faults */
  bool address_known;       /* false when perf printed a symbol instead of a number */
  bool user;                /* page_fault_user */
  uint64_t error_code;
  int64_t pages, reason;    /* tlb_flush */
};

struct perf_cpu {
  uint64_t last_ns;
  bool seen;                /* last_ns is valid */
  int32_t mm;               /* process whose address space is loaded; -1 none yet */
  bool switched;            /* the last sched_switch loaded a new CR3 not yet matched by its flush */
  bool user;                /* --guest pv64: the process's user page tables are loaded */
};

struct perf {
  struct import *im;
  struct import_map tgid_of;   /* tid -> thread group (pass 1, from PID/TID columns) */
  struct import_map kthreads;  /* tid -> 1 for children of kthreadd (pass 1, fork records) */
  struct import_map proc_of;   /* thread group -> process number (CR3 index) */
  struct import_map class_of;  /* tid -> process number, or -1 for a kernel thread (cache) */
  unsigned nprocs;
  bool pid_column;
  struct perf_cpu cpu[TRACE_VCPU_MAX];
  uint64_t switches, cr3_switches, inferred, flushes, flushes_merged, syscalls, faults, execs;
  uint64_t mode_switches;      /* --guest pv64: CR3 writes between a process's kernel and user tables */
  cJSON *recording;            /* "# key : value" header lines of 'perf script --header' */
};

/* ---- the line prefix ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* True if [s, e) is "N" or "N/N". */
static bool is_task_token(const char *s, const char *e) {
  const char *p = s;
  while (p < e && is_digit(*p)) p++;
  if (p == s) return false;
  if (p == e) return true;
  if (*p++ != '/' || p == e) return false;
  while (p < e && is_digit(*p)) p++;
  return p == e;
}

static bool task_token_ok(const char *ts, const char *te, void *arg) {
  (void)arg;
  return is_task_token(ts, te);
}

/* Finds "[CPU]" preceded by the task token; sets [*tok, *tok_end) to that token. */
static const char *find_cpu(const char *s, const char *end, const char **tok, const char **tok_end) {
  return import_find_cpu(s, end, task_token_ok, NULL, tok, tok_end);
}

/* The task token's PID and TID; false when one does not fit a pid_t. */
static bool parse_task(const char *s, const char *e, struct prefix *p) {
  const char *stop;
  uint64_t a, b;
  if (!import_num(s, e, false, &a, &stop) || a > INT32_MAX) return false;
  if (stop < e && *stop == '/') {
    if (!import_num(stop + 1, e, false, &b, NULL) || b > INT32_MAX) return false;
    p->pid = (int64_t)a;
    p->tid = (int64_t)b;
  } else {
    p->pid = -1;
    p->tid = (int64_t)a;
  }
  return true;
}

static const char *skip_blanks(const char *p, const char *end) {
  while (p < end && is_blank(*p)) p++;
  return p;
}

/* Next blank-separated token at p: [*ts, return). */
static const char *token(const char *p, const char *end, const char **ts) {
  p = skip_blanks(p, end);
  *ts = p;
  while (p < end && !is_blank(*p)) p++;
  return p;
}

static enum perf_event event_kind(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof event_names / sizeof *event_names; i++)
    if (event_names[i].len == n && memcmp(event_names[i].name, s, n) == 0) return event_names[i].ev;
  return PE_OTHER;
}

/* Parses the fixed part; returns NULL or what is wrong. */
static const char *parse_prefix(const char *s, size_t n, struct prefix *p) {
  const char *end = s + n, *tok, *tok_end, *ts, *te;
  const char *br = find_cpu(s, end, &tok, &tok_end);
  if (!br) return "no 'TID [CPU]' or 'PID/TID [CPU]' columns (expected perf script output)";
  const char *c = skip_blanks(s, tok), *ce = tok;
  while (ce > c && is_blank(ce[-1])) ce--;
  p->comm = c;
  p->comm_len = (size_t)(ce - c);
  if (!parse_task(tok, tok_end, p)) return "PID or TID out of range (at most 2147483647)";
  uint64_t cpu;
  if (!import_num(br + 1, end, false, &cpu, &te) || cpu > INT32_MAX)
    return "CPU number out of range (at most 2147483647)";
  p->cpu = (int64_t)cpu;
  te++;                                            /* past ']' */
  bool have_ts = false;
  for (int i = 0; i < 3 && !have_ts; i++) {        /* skip optional columns before the time */
    te = token(te, end, &ts);
    have_ts = te - ts > 1 && te[-1] == ':' && import_parse_secs(ts, (size_t)(te - ts - 1), &p->ns);
  }
  if (!have_ts) return "no 'SECS.FRACTION:' timestamp after the CPU";
  for (int i = 0; i < 3; i++) {                    /* the event, perhaps after a period column */
    te = token(te, end, &ts);
    if (te - ts > 1 && te[-1] == ':') break;
    if (ts == te || !is_digit(*ts)) return "no 'SUBSYS:EVENT:' name after the timestamp";
  }
  if (!(te - ts > 1 && te[-1] == ':')) return "no 'SUBSYS:EVENT:' name after the timestamp";
  p->event = ts;
  p->event_len = (size_t)(te - ts - 1);
  p->ev = event_kind(p->event, p->event_len);
  p->fields = skip_blanks(te, end);
  p->fields_len = (size_t)(end - p->fields);
  return NULL;
}

/* ---- event fields ---- */

static int skip(struct import *im, const char *why) {
  import_skip(im, why, strlen(why));
  return 0;
}

static bool field_snum(const struct prefix *p, const char *name, int64_t *v) {
  const char *f = import_field(p->fields, p->fields_len, name);
  return f && import_snum(f, p->fields + p->fields_len, v, NULL);
}

/* Old perf's sched_switch plugin: "prev:PID [PRIO] S ==> next:PID [PRIO]". */
static const char *parse_switch_plugin(const struct prefix *p, struct fields *f) {
  const char *end = p->fields + p->fields_len;
  const char *arrow = import_field(p->fields, p->fields_len, "==> ");
  if (!arrow) return "sched_switch: no next_pid= field";
  const char *br = arrow;
  while (br < end && !(br[0] == ' ' && br + 1 < end && br[1] == '[')) br++;
  const char *colon = br;
  while (colon > arrow && colon[-1] != ':') colon--;
  if (colon == arrow || !import_snum(colon, br, &f->next_pid, NULL))
    return "sched_switch: no next_pid= field";
  f->next_comm = arrow;
  f->next_comm_len = (size_t)(colon - 1 - arrow);
  return NULL;
}

static const char *parse_switch(const struct prefix *p, struct fields *f) {
  const char *nc = import_field(p->fields, p->fields_len, "next_comm=");
  if (!field_snum(p, "next_pid=", &f->next_pid)) return parse_switch_plugin(p, f);
  const char *np = import_field(p->fields, p->fields_len, "next_pid=");
  f->next_comm = nc ? nc : "";
  f->next_comm_len = nc && np - nc > 10 ? (size_t)(np - nc - 10) : 0;   /* up to " next_pid=" */
  return NULL;
}

static const char *parse_fault(const struct prefix *p, struct fields *f) {
  const char *end = p->fields + p->fields_len, *a = import_field(p->fields, p->fields_len, "address="), *stop;
  const char *e = import_field(p->fields, p->fields_len, "error_code=");
  if (!a) return "page fault: no address= field";
  if (!e || !import_num(e, end, true, &f->error_code, NULL)) return "page fault: no error_code= field";
  /* %ps prints a symbol ("copy_user_generic+0x2c") for kernel text addresses. */
  f->address_known = end - a > 2 && a[0] == '0' && a[1] == 'x' && import_num(a, end, true, &f->address, &stop) &&
                     (stop == end || is_blank(*stop));
  return NULL;
}

static const char *parse_tlb(const struct prefix *p, struct fields *f) {
  const char *end = p->fields + p->fields_len, *open = NULL;
  if (!field_snum(p, "pages:", &f->pages)) return "tlb_flush: no pages: field";
  for (const char *q = end; q > p->fields; q--)       /* the reason number: the last "(N)" */
    if (q[-1] == '(') { open = q; break; }
  if (!open || !import_snum(open, end, &f->reason, NULL)) return "tlb_flush: no '(REASON)' number";
  return NULL;
}

static const char *parse_fields(const struct prefix *p, struct fields *f) {
  memset(f, 0, sizeof *f);
  switch (p->ev) {
  case PE_SWITCH: return parse_switch(p, f);
  case PE_FORK:
    if (!field_snum(p, "pid=", &f->parent) || !field_snum(p, "child_pid=", &f->child))
      return "sched_process_fork: no pid= or child_pid= field";
    return NULL;
  case PE_SYS_ENTER:
    return field_snum(p, "NR ", &f->nr) ? NULL : "sys_enter: no 'NR n' field";
  case PE_SYS_EXIT:
    return field_snum(p, "NR ", &f->nr) ? NULL : "sys_exit: no 'NR n' field";
  case PE_PF_USER: case PE_PF_KERNEL: f->user = p->ev == PE_PF_USER; return parse_fault(p, f);
  case PE_TLB: return parse_tlb(p, f);
  case PE_EXEC: case PE_OTHER: break;
  }
  return NULL;
}

/* ---- tasks and address spaces ---- */

/* Kernel threads named by the kernel: per-CPU "name/N" ones and the usual daemons. */
static bool kernel_thread_name(const char *c, size_t n) {
  static const char *const prefixes[] = {
    "kworker/", "ksoftirqd/", "migration/", "rcu_", "rcuc/", "rcuop/", "rcuos/", "rcuog/",
    "cpuhp/", "idle_inject/", "watchdog/", "irq/", "kthreadd", "kswapd", "kcompactd",
    "khugepaged", "ksmd", "kauditd", "khungtaskd", "oom_reaper", "kblockd", "kdevtmpfs",
    "kintegrityd", "writeback", "jbd2/", "kthrotld", "scsi_eh_", "scsi_tmf_", "xfsaild/",
    "swapper", "pool_workqueue_", "psimon", "ext4-rsv-conver", "kvm-pit/", "kvm-nx-lpage",
  };
  if (n >= 2 && c[0] == '[' && c[n - 1] == ']') return true;
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
    size_t k = strlen(prefixes[i]);
    if (n >= k && memcmp(c, prefixes[i], k) == 0) return true;
  }
  return false;
}

/* Process number of task tid (allocated on first sight), or -1 for idle and kernel threads. */
static int32_t task_proc(struct perf *P, int64_t tid, const char *comm, size_t comm_len) {
  int64_t *c = import_map_get(&P->class_of, (uint32_t)tid);
  if (c) return (int32_t)*c;
  int32_t proc = -1;
  if (tid != 0 && tid != 2 && !import_map_get(&P->kthreads, (uint32_t)tid) &&
      !kernel_thread_name(comm, comm_len)) {
    int64_t *g = import_map_get(&P->tgid_of, (uint32_t)tid);
    int64_t *pr = import_map_put(&P->proc_of, (uint32_t)(g ? *g : tid), -1);
    if (*pr < 0) *pr = P->nprocs++;
    proc = (int32_t)*pr;
  }
  *import_map_put(&P->class_of, (uint32_t)tid, proc) = proc;
  return proc;
}

/* Loads process proc's address space on vCPU v: the vCPU's first one becomes its
** @init CR3; a later change is a CR3 write.  Returns 1 if it wrote CR3. */
static int load_mm(struct perf *P, unsigned v, int32_t proc, int *rc) {
  struct perf_cpu *c = &P->cpu[v];
  *rc = 0;
  if (proc < 0 || proc == c->mm) return 0;
  bool first = c->mm < 0;
  c->mm = proc;
  if (first) {
    P->im->init[v].cr3 = import_cr3_of((unsigned)proc);
    P->im->init[v].cr3_known = true;
    return 0;
  }
  *rc = import_emit(P->im, v, EV_CR_WRITE, 3, import_cr3_of((unsigned)proc), 0);
  return 1;
}

/* --guest pv64: a process's user tables sit one page above its kernel tables
** (as the syscalls generator's pv64 mode places them); Xen's entry code, mapped
** in both, is in the range Xen reserves in every 64-bit PV address space. */
#define PV_USER_ROOT_OFFSET 0x1000ull
#define PV_XEN_TEXT 0xffff82d080000000ull

static bool pv64(const struct perf *P) { return P->im->opt.guest == IMPORT_GUEST_PV64; }

/* --guest pv64: vCPU v to the user (user true) or kernel tables of its process,
** a CR3 write when that changes the mode (nothing before a process is loaded). */
static int pv_mode(struct perf *P, unsigned v, bool user) {
  struct perf_cpu *c = &P->cpu[v];
  if (!pv64(P) || c->user == user || c->mm < 0) return 0;
  c->user = user;
  P->mode_switches++;
  return import_emit(P->im, v, EV_CR_WRITE, 3, import_cr3_of((unsigned)c->mm) + (user ? PV_USER_ROOT_OFFSET : 0), 0);
}

/* A line of a task whose address space is not loaded: the switch to it was not
** recorded (perf follows only the workload's tasks), so it happened just before. */
static int infer_switch(struct perf *P, unsigned v, const struct prefix *p) {
  int32_t proc = task_proc(P, p->tid, p->comm, p->comm_len);
  int rc = 0;
  if (proc < 0 || proc == P->cpu[v].mm) return 0;
  if (P->cpu[v].mm < 0) {                      /* the vCPU's first process: its @init CR3 */
    load_mm(P, v, proc, &rc);
    return rc;
  }
  if ((rc = pv_mode(P, v, false)) || (rc = import_mark(P->im, v, "switch"))) return rc;
  P->inferred++;
  load_mm(P, v, proc, &rc);
  return rc;
}

static int do_switch(struct perf *P, unsigned v, const struct fields *f) {
  int rc = import_mark(P->im, v, "switch");
  P->switches++;
  P->cpu[v].switched = false;
  if (rc) return rc;
  int32_t proc = task_proc(P, f->next_pid, f->next_comm, f->next_comm_len);
  if (load_mm(P, v, proc, &rc)) {
    P->cr3_switches++;
    P->cpu[v].switched = true;
  }
  return rc;
}

/* A system call: from user space; as a PV guest through Xen's entry code, then
** to the kernel's tables. */
static int do_syscall(struct perf *P, unsigned v, const struct fields *f) {
  P->syscalls++;
  P->im->used++;
  int rc = pv_mode(P, v, true);
  if (!rc) rc = import_emit(P->im, v, EV_SYSCALL, 0, (uint64_t)f->nr, 0);
  if (!rc && pv64(P)) rc = import_emit(P->im, v, EV_TOUCH, 0, PV_XEN_TEXT, 1);
  return rc ? rc : pv_mode(P, v, false);
}

static int do_sysret(struct perf *P, unsigned v) {
  P->im->used++;
  int rc = pv_mode(P, v, false);
  if (!rc) rc = pv_mode(P, v, true);
  return rc ? rc : import_emit(P->im, v, EV_SYSRET, 0, 0, 0);
}

/* exec gives the thread group a new address space: a new process number (CR3),
** loaded at once (exec_mmap switches to it). */
static int do_exec(struct perf *P, unsigned v, const struct prefix *p) {
  int32_t old = task_proc(P, p->tid, p->comm, p->comm_len);
  P->im->used++;
  if (old < 0) return 0;
  int rc = pv_mode(P, v, false);
  if (rc) return rc;
  int64_t *g = import_map_get(&P->tgid_of, (uint32_t)p->tid);
  int32_t proc = (int32_t)P->nprocs++;
  *import_map_put(&P->proc_of, (uint32_t)(g ? *g : p->tid), proc) = proc;
  *import_map_put(&P->class_of, (uint32_t)p->tid, proc) = proc;
  P->execs++;
  load_mm(P, v, proc, &rc);
  return rc;
}

static int do_fault(struct perf *P, unsigned v, const struct fields *f) {
  if (!f->address_known) return skip(P->im, "page fault at a symbol address");
  if (P->im->opt.paging != PAGING_64 && f->address > UINT32_MAX) return skip(P->im, "page fault beyond 32 bits");
  P->faults++;
  P->im->used++;
  /* PV: a user fault (from user space: its return there, if not recorded,
  ** came first) enters the guest kernel (its tables) and returns; the access
  ** is then retried on the user's tables */
  int rc = f->user ? pv_mode(P, v, true) : 0;
  if (!rc) rc = pv_mode(P, v, false);
  if (!rc && f->user) rc = pv_mode(P, v, true);
  if (rc) return rc;
  return import_emit(P->im, v, EV_TOUCH, (f->error_code & 2) ? TOUCH_AUX_WRITE : 0, f->address & ~0xfffull, 1);
}

/*
** tlb:tlb_flush reasons: 0 the flush switch_mm does when it loads a CR3 (the
** switch's cr3w already stands for it, unless the switch kept the address
** space: then it is a reload), 1 this CPU flushing for a remote request, 2/3
** local flushes; 4 (and later ones) only report sending IPIs.  The tracepoint
** has no address, so every flush becomes a full one: a cr3w of the current CR3.
*/
static int do_tlb(struct perf *P, unsigned v, const struct fields *f) {
  struct perf_cpu *c = &P->cpu[v];
  if (f->reason == 0 && c->switched) {
    c->switched = false;
    P->flushes_merged++;
    P->im->used++;
    return 0;
  }
  if (f->reason > 3 || f->reason < 0 || f->pages == 0) return skip(P->im, "tlb:tlb_flush (no local flush)");
  if (c->mm < 0) return skip(P->im, "tlb:tlb_flush (no process yet)");
  P->flushes++;
  P->im->used++;
  int rc = pv_mode(P, v, false);                    /* flushed by the guest kernel */
  if (rc) return rc;
  return import_emit(P->im, v, EV_CR_WRITE, 3, import_cr3_of((unsigned)c->mm), 0);
}

/* Cycles of recorded time since vCPU v's previous line (0 when the time goes back). */
static uint64_t gap_cycles(const struct perf *P, unsigned v, uint64_t ns) {
  const struct perf_cpu *c = &P->cpu[v];
  return c->seen && ns > c->last_ns ? import_ns_to_cycles(P->im, ns - c->last_ns) : 0;
}

static int advance_time(struct perf *P, unsigned v, uint64_t ns) {
  struct perf_cpu *c = &P->cpu[v];
  uint64_t cycles = gap_cycles(P, v, ns);
  if (!c->seen || ns > c->last_ns) c->last_ns = ns;
  c->seen = true;
  return cycles ? import_run(P->im, v, cycles) : 0;
}

/* Events of one parsed line on vCPU v. */
static int convert(struct perf *P, unsigned v, const struct prefix *p, const struct fields *f) {
  struct import *im = P->im;
  if (p->ev == PE_SYS_ENTER && f->nr < 0) return skip(im, "raw_syscalls:sys_enter NR < 0");
  int rc = advance_time(P, v, p->ns);
  if (!rc && !(p->ev == PE_TLB && f->reason == 0)) rc = infer_switch(P, v, p);
  if (rc) return rc;
  switch (p->ev) {
  case PE_SWITCH: im->used++; return (rc = pv_mode(P, v, false)) ? rc : do_switch(P, v, f);
  case PE_FORK: im->used++; return 0;
  case PE_SYS_ENTER: return do_syscall(P, v, f);
  case PE_SYS_EXIT: return do_sysret(P, v);
  case PE_PF_USER: case PE_PF_KERNEL: return do_fault(P, v, f);
  case PE_TLB: return do_tlb(P, v, f);
  case PE_EXEC: return do_exec(P, v, p);
  case PE_OTHER: break;
  }
  return 0;
}

/* "# event : name = sched:sched_switch, ..." of 'perf script --header': what was
** recorded; a comment that says data was lost (record.sh keeps perf's warnings
** as "# perf: ..." lines): a recorder warning.  Both go to the coverage. */
static void coverage_comment(struct perf *P, const char *s, size_t n) {
  static const char ev[] = "# event : name = ";
  if (n > sizeof ev - 1 && !memcmp(s, ev, sizeof ev - 1)) {
    const char *name = s + sizeof ev - 1, *end = memchr(name, ',', n - (sizeof ev - 1));
    import_recorded(P->im, name, end ? (size_t)(end - name) : n - (sizeof ev - 1));
    return;
  }
  for (size_t i = 0; i + 4 <= n; i++)
    if (!strncasecmp(s + i, "lost", 4) && (i == 0 || s[i - 1] == ' ')) {
      size_t skip = 1;
      while (skip < n && (s[skip] == ' ' || s[skip] == '#')) skip++;
      import_recorder_warning(P->im, s + skip, n - skip);
      return;
    }
}

/* "# os release : 6.1.0" header lines of 'perf script --header' go into the metadata. */
static void header_comment(struct perf *P, const char *s, size_t n) {
  coverage_comment(P, s, n);
  static const char *const keys[] = { "captured on", "hostname", "os release", "perf version",
                                      "arch", "nrcpus avail", "cpudesc", "cmdline", "total memory" };
  const char *sep = n > 4 ? memchr(s, ':', n) : NULL;
  if (!sep || s[1] != ' ') return;
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    size_t k = strlen(keys[i]);
    if ((size_t)(sep - s) < k + 2 || memcmp(s + 2, keys[i], k) != 0) continue;
    const char *v = skip_blanks(sep + 1, s + n);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(s + n - v), v);
    if (!P->recording) P->recording = cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(P->recording, keys[i]))
      cJSON_AddStringToObject(P->recording, keys[i], buf);
  }
}

static int perf_line(struct perf *P, const char *s, size_t n, uint64_t lineno) {
  struct import *im = P->im;
  struct prefix p;
  struct fields f;
  im->units++;
  const char *t = skip_blanks(s, s + n);
  if (t == s + n || *t == '#') {
    if (t < s + n) header_comment(P, t, (size_t)(s + n - t));
    im->ignored++;
    return 0;
  }
  const char *why = parse_prefix(s, n, &p);
  if (why) return import_bad(im, lineno, s, n, why);
  if (p.ev == PE_OTHER) { import_skip(im, p.event, p.event_len); return 0; }
  if ((why = parse_fields(&p, &f))) return import_bad(im, lineno, s, n, why);
  import_saw(im, p.event, p.event_len);
  int v = import_vcpu_of_cpu(im, p.cpu);
  if (v < 0) return import_bad(im, lineno, s, n, "more than 256 CPUs");
  if (gap_cycles(P, (unsigned)v, p.ns) > IMPORT_GAP_MAX) return import_bad(im, lineno, s, n, IMPORT_GAP_WHY);
  return convert(P, (unsigned)v, &p, &f);
}

/* Pass 1: thread groups from PID/TID columns, kernel threads from kthreadd's forks.
** Only the task column is read, and the rest of a line only if it may be a fork. */
static void learn(struct perf *P, const char *buf, size_t len) {
  const char *s, *tok, *tok_end;
  size_t n, pos = 0;
  while (import_next_line(buf, len, &pos, &s, &n)) {
    struct prefix p;
    struct fields f;
    import_release(P->im, buf, pos);
    const char *t = skip_blanks(s, s + n);   /* s + n when the line is all blanks: nothing to read there */
    if (t == s + n || *t == '#' || !find_cpu(s, s + n, &tok, &tok_end) ||
        !parse_task(tok, tok_end, &p))
      continue;
    if (p.pid >= 0) {
      P->pid_column = true;
      *import_map_put(&P->tgid_of, (uint32_t)p.tid, p.pid) = p.pid;
    }
    if (!import_field(tok_end, (size_t)(s + n - tok_end), "sched:sched_process_fork:") || parse_prefix(s, n, &p)) continue;
    if (p.ev == PE_FORK && !parse_fields(&p, &f) &&
        (f.parent == 2 || import_map_get(&P->kthreads, (uint32_t)f.parent)))
      *import_map_put(&P->kthreads, (uint32_t)f.child, 1) = 1;
  }
}

static void add_metadata(struct perf *P) {
  cJSON *m = P->im->meta;
  cJSON_AddBoolToObject(m, "pid_column", P->pid_column);
  cJSON_AddNumberToObject(m, "processes", P->nprocs);
  import_add_native_cpus(P->im, "cpus");
  cJSON *c = cJSON_AddObjectToObject(m, "converted");
  cJSON_AddNumberToObject(c, "context_switches", (double)P->switches);
  cJSON_AddNumberToObject(c, "cr3_switches", (double)P->cr3_switches);
  cJSON_AddNumberToObject(c, "switches_inferred", (double)P->inferred);
  cJSON_AddNumberToObject(c, "tlb_flushes", (double)P->flushes);
  cJSON_AddNumberToObject(c, "tlb_flushes_in_switch", (double)P->flushes_merged);
  cJSON_AddNumberToObject(c, "syscalls", (double)P->syscalls);
  cJSON_AddNumberToObject(c, "page_faults", (double)P->faults);
  if (P->execs) cJSON_AddNumberToObject(c, "execs", (double)P->execs);   /* recordings with sched_process_exec */
  if (pv64(P)) cJSON_AddNumberToObject(c, "pv_mode_switches", (double)P->mode_switches);
  if (P->recording) { cJSON_AddItemToObject(m, "recording", P->recording); P->recording = NULL; }
}

int import_perf_script(struct import *im, const char *buf, size_t len) {
  struct perf *P = xcalloc(1, sizeof *P);
  P->im = im;
  for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) P->cpu[v].mm = -1;
  learn(P, buf, len);
  if (!P->pid_column && len && !im->tids_only)
    errorf("import: %s has no PID column (record with 'perf script -F +pid'): "
           "each thread is treated as its own process", im->opt.input);
  const char *s;
  size_t n, pos = 0;
  uint64_t lineno = 0;
  int rc = 0;
  im->map_released = 0;                        /* the first pass may have given pages back */
  while (rc == 0 && import_next_line(buf, len, &pos, &s, &n)) {
    rc = perf_line(P, s, n, ++lineno);
    import_release(im, buf, pos);
  }
  if (rc == 0) add_metadata(P);
  cJSON_Delete(P->recording);
  import_map_free(&P->tgid_of);
  import_map_free(&P->kthreads);
  import_map_free(&P->proc_of);
  import_map_free(&P->class_of);
  free(P);
  return rc;
}

/* ---- the format's row (the table of sim/import/import.c) ---- */

/* What perf's results rely on: the tracepoints workloads/record/record.sh records. */
static const struct import_need perf_needs[] = {
  { "sched:sched_switch", "context switches (CR3 writes)", "no context switches: no CR3 exits at all" },
  { "raw_syscalls:sys_enter", "system calls (syscall events)",
    "no system calls: the CR3 switches of PTI or Xen-PV kernels on entry are not replayed" },
  { "raw_syscalls:sys_exit", "system call returns (sysret events)",
    "no system call returns: the CR3 switches of PTI or Xen-PV kernels on return are not replayed" },
  { "exceptions:page_fault_user", "user page faults (touch events)",
    "no user page faults: replays show no shadow page faults, and no shadow-MMU cost, for user memory" },
  { "exceptions:page_fault_kernel", "kernel page faults (touch events)",
    "no kernel page faults: replays show no shadow page faults for kernel memory" },
  { "tlb:tlb_flush", "TLB flushes outside context switches (CR3 reloads)",
    "no TLB flushes: CR3 reloads outside context switches are not replayed" },
  { "sched:sched_process_fork", "process creation (which tasks share an address space)", NULL },
};

static const char perf_usage[] =
  "usage: vmxsim import perf-script IN.txt -o OUT.bin [--cpu-ghz G] [--paging 32|pae|64]\n"
  "                                 [--guest hvm|pv64] [--workload NAME] [--skip-bad]\n"
  "\n"
  "IN.txt is 'perf script -F +pid' output of a recording of the tracepoints\n"
  "sched:sched_switch, sched:sched_process_fork, raw_syscalls:sys_enter/sys_exit,\n"
  "exceptions:page_fault_user/page_fault_kernel and tlb:tlb_flush (workloads/record/).\n"
  "It describes what the guest kernel would do running that workload:\n"
  "  sched_switch to another process   mark switch; cr3w of that process's CR3\n"
  "                                    (0x10000000 + n*0x100000; idle and kernel\n"
  "                                    threads keep the previous address space)\n"
  "  sys_enter NR / sys_exit           syscall NR / sysret\n"
  "  page_fault_* address error_code   touch PAGE 1 (w when error_code bit 1)\n"
  "  tlb_flush pages:-1 or N           cr3w of the current CR3 (tlb_flush carries no\n"
  "                                    address); reason 0 belongs to the switch's cr3w\n"
  "  sched_process_exec                a new address space: cr3w of a new CR3\n"
  "  time between events on a CPU      run (seconds x cpu-ghz)\n"
  "Each CPU becomes a vCPU (dense, in order of appearance). A line of a task whose\n"
  "process is not the one loaded on its CPU means the switch to it was not recorded\n"
  "(perf records only the workload's tasks): the cr3w is inserted there.\n"
  "--guest pv64 replays it as a 64-bit Xen PV guest (xenner on KVM): kernel and\n"
  "user space on separate tables (user: CR3 + 0x1000), so each entry to the kernel\n"
  "(syscall, user page fault) and each return to user space adds a cr3w.\n"
  "workloads/record/README.md has the full mapping.\n"
  "\n"
  "example:\n"
  "  perf record -e sched:sched_switch -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \\\n"
  "      -o pipe.data -- taskset -c 0 perf bench sched pipe -l 10000\n"
  "  perf script -F +pid -i pipe.data > pipe.txt\n"
  "  vmxsim import perf-script pipe.txt -o pipe.bin\n";

/* perf script text names its tracepoints by group: "sched:", "raw_syscalls:", "exceptions:page_fault". */
static int perf_probe(const unsigned char *head, size_t n, const char *text) {
  (void)head;
  (void)n;
  if (!text) return IMPORT_PROBE_NO;
  return strstr(text, "sched:") || strstr(text, "raw_syscalls:") || strstr(text, "exceptions:page_fault")
         ? IMPORT_PROBE_EVENTS : IMPORT_PROBE_NO;
}

const struct import_format import_perf_format = {
  .name = "perf-script",
  .summary = "'perf script -F +pid' text of a native Linux recording: context\n"
             "switches become CR3 writes, syscalls, page faults, TLB flushes",
  .usage = perf_usage,
  .recording = "perf script text",
  .looks_for = "perf script events",
  .probe = perf_probe,
  .run = import_perf_script,
  .needs = perf_needs,
  .nneeds = sizeof perf_needs / sizeof *perf_needs,
};
