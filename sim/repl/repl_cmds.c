/* The REPL's commands: the table that `help` and completion are generated from,
** the replay they drive, and their handlers. */
#include "repl.h"
#include "sim/core/report.h"
#include "sim/core/runner.h"
#include "sim/store/known.h"
#include "sim/store/store.h"
#include "sim/core/trace_text.h"
#include "sim/core/util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const repl_info_topics[] = { "vmcs", "regs", "cr3targets", "shadow", "tlb", NULL };
const char *const repl_break_kinds[] = { "exit", "event", "at", "cr3", "mark", NULL };

void repl_error(struct repl *s, const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  if (s->src) fprintf(stderr, "%s:%lu: ", s->src, s->line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  s->errors++;
}

static const char *reason_name(unsigned r) {
  const char *n = exit_reason_name(r);
  return n ? n : "?";
}

/* Index of the event replayed last; only meaningful when e->index > 0. */
static uint64_t last_index(const struct repl *s) { return s->e->index - 1; }

/* Info commands show the vCPU of the last event: that is the one that just acted. */
static struct vcpu *cur_vcpu(const struct repl *s) {
  return &s->e->vcpu[s->e->index ? s->ev.vcpu : 0];
}

/* ---- setting up and restarting the replay ---- */

/* Builds a policy and an engine for spec + sets and rewinds the trace to
** event 0.  On failure returns an enum exit_code with a message in err and
** leaves the session as it was. */
static int rebuild(struct repl *s, const char *spec, char *const *sets, int nsets, char *err, size_t errlen) {
  struct policy *p = xmalloc(sizeof *p);
  int rc = policy_resolve(p, spec, sets, nsets, err, errlen);
  if (rc) {
    free(p);
    return rc;
  }
  struct engine *e = xmalloc(sizeof *e);
  if ((rc = engine_init(e, p, &s->prof, s->r.hdr.vcpu_count, s->r.hdr.paging, err, errlen))) {
    free(e);
    free(p);
    return rc;
  }
  if (s->e) engine_free(s->e);
  free(s->e);
  free(s->pol);
  s->e = e;
  s->pol = p;
  s->wall = 0;
  if ((rc = trace_rewind(&s->r))) {               /* a compressed file is opened again */
    snprintf(err, errlen, "%s", s->r.err);
    return rc;
  }
  for (unsigned i = 0; i < s->nbp; i++) s->bp[i].hits = 0;
  return EXIT_OK;
}

int repl_open(struct repl *s) {
  char err[1024];
  int rc = profile_load(&s->prof, s->cpu, err, sizeof err);
  if (rc) {
    errorf("%s", err);
    return rc;
  }
  if (!strcmp(s->trace_path, "-")) {
    errorf("repl: standard input cannot be replayed again from event 0 ('reset', 'policy', 'set'); give a file");
    return EXIT_USAGE;
  }
  if (trace_open(&s->r, s->trace_path) != EXIT_OK) {
    errorf("%s", s->r.err);
    return EXIT_BADINPUT;
  }
  if (!s->r.count_known) {                         /* a count-unknown stream: count it once */
    while (trace_next(&s->r)) { }
    if (trace_failed(&s->r)) {
      errorf("%s", s->r.err);
      return EXIT_BADINPUT;
    }
  }
  rc = rebuild(s, s->spec, s->sets, s->nsets, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

void repl_history_add(struct repl *s, const char *line) {
  if (s->nhistory == s->caphistory) {
    s->caphistory = s->caphistory ? 2 * s->caphistory : 64;
    s->history = xrealloc(s->history, s->caphistory * sizeof *s->history);
  }
  s->history[s->nhistory++] = xstrdup(line);
}

void repl_close(struct repl *s) {
  for (unsigned i = 0; i < s->nhistory; i++) free(s->history[i]);
  free(s->history);
  s->history = NULL;
  s->nhistory = s->caphistory = 0;
  if (s->e) engine_free(s->e);
  free(s->e);
  free(s->pol);
  trace_close(&s->r);
  profile_free(&s->prof);
  free(s->spec);
  for (int i = 0; i < s->nsets; i++) free(s->sets[i]);
  s->e = NULL;
  s->pol = NULL;
}

/* ---- explaining what an event did ---- */

/* One phrase per MMU counter that an event can move; `bare` ones read
** better without a count when there was just one ("shadow page fault"). */
struct mmu_phrase {
  unsigned ctr;
  const char *one, *many;
  bool bare;
};
static const struct mmu_phrase mmu_phrases[] = {
  { CTR_SHADOW_FAULTS, "shadow page fault", "shadow page faults", true },
  { CTR_PTE_WRITES_EMULATED, "write to a shadowed guest page table, emulated",
    "writes to shadowed guest page tables, emulated", true },
  { CTR_EPT_VIOLATIONS, "EPT violation (first access to a guest-physical page)",
    "EPT violations (first accesses to guest-physical pages)", true },
  { CTR_ROOT_MISSES, "new shadow root built", "new shadow roots built", true },
  { CTR_ROOT_HITS, "shadow root found in the pool", "shadow roots found in the pool", true },
  { CTR_PREV_ROOT_HITS, "shadow root from the previous-roots cache", "shadow roots from the previous-roots cache", true },
  { CTR_SHADOW_ALLOCATED, "shadow page allocated", "shadow pages allocated", false },
  { CTR_SHADOW_EVICTED, "shadow page evicted (pool full)", "shadow pages evicted (pool full)", false },
  { CTR_FLOOD_ZAPS, "shadow page zapped for write flooding", "shadow pages zapped for write flooding", false },
  { CTR_SHADOW_ZAPPED, "shadow page zapped", "shadow pages zapped", false },
  { CTR_CR3_CACHE_CLEARS, "CR3 cache cleared", "CR3 cache clears", true },
  { CTR_TLB_MISSES, "TLB miss", "TLB misses", false },
};

static uint64_t ctr_delta(const struct repl *s, unsigned c) {
  uint64_t d = s->e->st.counter[c] - s->ctr_before[c];
  /* Zaps by eviction and flooding, and previous-root hits, have their own phrases. */
  if (c == CTR_SHADOW_ZAPPED) d -= ctr_delta(s, CTR_SHADOW_EVICTED) + ctr_delta(s, CTR_FLOOD_ZAPS);
  if (c == CTR_ROOT_HITS) d -= ctr_delta(s, CTR_PREV_ROOT_HITS);
  return d;
}

/* "shadow page fault, 2 shadow pages allocated": the MMU's part of the last event. */
static void mmu_story(const struct repl *s, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof mmu_phrases / sizeof *mmu_phrases && used < n; i++) {
    const struct mmu_phrase *ph = &mmu_phrases[i];
    uint64_t d = ctr_delta(s, ph->ctr);
    if (!d) continue;
    const char *sep = used ? ", " : "";
    if (d == 1 && ph->bare) used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, ph->one);
    else used += (size_t)snprintf(buf + used, n - used, "%s%" PRIu64 " %s", sep, d, d == 1 ? ph->one : ph->many);
  }
}

/* Why a guest memory action (touch, ptwrite) did not exit. */
static const char *mmu_no_exit(const struct repl *s) {
  bool ept = s->pol->paging == PAGING_EPT;
  if (s->ev.type == EV_PTWRITE)
    return ept ? "no exit: under EPT the guest's page tables are not write-protected"
               : "no exit: that guest page table is not shadowed, so it is not write-protected";
  return ept ? "no exit: EPT already maps every page touched"
             : "no exit: the shadow tables already map every page touched";
}

/* The one-line verdict for the last event, with the MMU's part appended. */
static void explain(const struct repl *s, char *buf, size_t n) {
  const struct engine_last *l = &s->e->last;
  char mmu[480], head[480];
  mmu_story(s, mmu, sizeof mmu);
  switch (s->ev.type) {
  case EV_RUN:  snprintf(buf, n, "no exit: the guest runs natively"); return;
  case EV_MARK: snprintf(buf, n, "no exit: an annotation (one workload operation done)"); return;
  case EV_INIT: snprintf(buf, n, "no exit: initial guest register state"); return;
  case EV_TOUCH: case EV_PTWRITE:
    if (!l->exits) {
      snprintf(buf, n, "%s%s%s", mmu_no_exit(s), mmu[0] ? "; " : "", mmu);
    } else if (l->exits == 1) {
      snprintf(buf, n, "exits (%s): %s", reason_name(l->last_reason), mmu);
    } else {
      snprintf(buf, n, "exits (%s) x%u: %s", reason_name(l->last_reason), l->exits, mmu);
    }
    return;
  default:
    vmx_explain(&l->decision, &s->ev, head, sizeof head);
    snprintf(buf, n, "%s%s%s", head, mmu[0] ? "; " : "", mmu);
  }
}

/* "exit CR_ACCESS", "3 exits EXCEPTION_NMI" or "no exit". */
static void outcome(const struct repl *s, char *buf, size_t n) {
  const struct engine_last *l = &s->e->last;
  if (!l->exits) snprintf(buf, n, "no exit");
  else if (l->exits == 1) snprintf(buf, n, "exit %s", reason_name(l->last_reason));
  else snprintf(buf, n, "%u exits %s", l->exits, reason_name(l->last_reason));
}

/* Where a stepping command stopped: "event 7 vcpu 0: cpuid 0x0  -> exit CPUID". */
static void print_stop(const struct repl *s) {
  char text[160], out[64];
  trace_text_format(&s->ev, text, sizeof text);
  outcome(s, out, sizeof out);
  printf("event %" PRIu64 " vcpu %u: %s  -> %s\n", last_index(s), s->ev.vcpu, text, out);
}

/* ---- breakpoints ---- */

static void mark_label(const struct trace_event *ev, char label[MARK_LABEL_MAX + 1]) {
  for (int i = 0; i < 8; i++) {
    label[i] = (char)(ev->a >> (8 * i));
    label[8 + i] = (char)(ev->b >> (8 * i));
  }
  label[MARK_LABEL_MAX] = 0;
}

static bool bp_matches(const struct repl *s, const struct repl_bp *b) {
  const struct trace_event *ev = &s->ev;
  char label[MARK_LABEL_MAX + 1];
  switch (b->kind) {
  case BP_EXIT:  return s->e->last.exits && s->e->last.last_reason == b->value;
  case BP_EVENT: return ev->type == b->value && (b->aux < 0 || ev->aux == b->aux);
  case BP_AT:    return last_index(s) == b->value;
  case BP_CR3:   return ev->type == EV_CR_WRITE && ev->aux == 3 && ev->a == b->value;
  case BP_MARK:
    if (ev->type != EV_MARK) return false;
    mark_label(ev, label);
    return !b->label[0] || strcmp(label, b->label) == 0;
  }
  return false;
}

static void bp_describe(const struct repl_bp *b, char *buf, size_t n) {
  switch (b->kind) {
  case BP_EXIT: snprintf(buf, n, "exit %s", reason_name((unsigned)b->value)); break;
  case BP_EVENT:
    if (b->aux >= 0) snprintf(buf, n, "event cr%d%c", b->aux, b->value == EV_CR_WRITE ? 'w' : 'r');
    else snprintf(buf, n, "event %s", event_mnemonic((unsigned)b->value));
    break;
  case BP_AT:   snprintf(buf, n, "at %" PRIu64, b->value); break;
  case BP_CR3:  snprintf(buf, n, "cr3 0x%" PRIx64, b->value); break;
  case BP_MARK: snprintf(buf, n, "mark%s%s", b->label[0] ? " " : "", b->label); break;
  }
}

/* Checks every breakpoint against the event just replayed; prints the hits. */
static bool check_breakpoints(struct repl *s) {
  bool hit = false;
  for (unsigned i = 0; i < s->nbp; i++) {
    struct repl_bp *b = &s->bp[i];
    if (!bp_matches(s, b)) continue;
    char what[64];
    bp_describe(b, what, sizeof what);
    printf("breakpoint %u (%s) hit\n", b->id, what);
    b->hits++;
    hit = true;
  }
  return hit;
}

/* ---- stepping ---- */

/* When a stepping command stops by itself (0 = no such limit). */
struct goal {
  uint64_t events;                 /* after this many events */
  uint64_t exits;                  /* after this many VM exits */
  uint64_t until;                  /* once this event index has been replayed */
  bool has_until;
  bool each;                       /* print every event's stop line as it is replayed */
};

enum stop { STOP_GOAL, STOP_BREAK, STOP_END, STOP_INTERRUPT, STOP_CORRUPT };

/* Replays one event; 1 at the end of the trace, -1 on a corrupt record. */
static int step_one(struct repl *s) {
  const struct trace_event *ev = trace_next(&s->r);
  if (!ev) return trace_failed(&s->r) ? -1 : 1;
  memcpy(s->ctr_before, s->e->st.counter, sizeof s->ctr_before);
  s->ev = *ev;
  engine_step(s->e, ev);
  return 0;
}

static enum stop replay(struct repl *s, const struct goal *g, uint64_t *n) {
  uint64_t exits = 0;
  for (*n = 0;; ) {
    if (interrupt_requested()) return STOP_INTERRUPT;
    int rc = step_one(s);
    if (rc) return rc > 0 ? STOP_END : STOP_CORRUPT;
    ++*n;
    exits += s->e->last.exits;
    if (g->each) print_stop(s);
    if (s->nbp && check_breakpoints(s)) return STOP_BREAK;
    if ((g->events && *n >= g->events) || (g->exits && exits >= g->exits) ||
        (g->has_until && last_index(s) >= g->until))
      return STOP_GOAL;
  }
}

/* Runs toward g and says where it stopped.  Ctrl-C pressed before the
** command started must not cut it short, hence the reset of the flag. */
static int run_to(struct repl *s, const struct goal *g) {
  uint64_t n;
  interrupt_clear();
  double t0 = monotonic_seconds();
  enum stop why = replay(s, g, &n);
  s->wall += monotonic_seconds() - t0;
  interrupt_clear();
  switch (why) {
  case STOP_CORRUPT:
    repl_error(s, "%s", s->r.err);
    return -1;
  case STOP_END:
    if (n == 0) {
      repl_error(s, "end of trace: all %" PRIu64 " events replayed; 'reset' starts over", s->e->index);
      return -1;
    }
    if (!g->each) print_stop(s);
    printf("end of trace after event %" PRIu64 " (all %" PRIu64 " events replayed)\n", last_index(s), s->e->index);
    return 0;
  case STOP_INTERRUPT:
    /* The same index as the stop line below: the last event replayed. */
    if (n) printf("interrupted after event %" PRIu64 "\n", last_index(s));
    else printf("interrupted before event %" PRIu64 "\n", s->e->index);
    if (n && !g->each) print_stop(s);
    return 0;
  default:
    if (!g->each) print_stop(s);
    return 0;
  }
}

/* A positive count argument, 1 when absent. */
static int count_arg(struct repl *s, const char *cmd, int argc, char **argv, uint64_t *n) {
  *n = 1;
  if (argc == 0) return 0;
  if (!parse_u64(argv[0], n) || *n == 0) {
    repl_error(s, "%s: '%s' is not a positive number", cmd, argv[0]);
    return -1;
  }
  return 0;
}

/* gdb shows where each step ends: one line per event replayed. */
static int do_step(struct repl *s, int argc, char **argv) {
  struct goal g = { .each = true };
  if (count_arg(s, "step", argc, argv, &g.events)) return -1;
  return run_to(s, &g);
}

static int do_next_exit(struct repl *s, int argc, char **argv) {
  struct goal g = { 0 };
  if (count_arg(s, "next-exit", argc, argv, &g.exits)) return -1;
  return run_to(s, &g);
}

static int do_continue(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  struct goal g = { 0 };
  return run_to(s, &g);
}

static int do_until(struct repl *s, int argc, char **argv) {
  (void)argc;
  struct goal g = { .has_until = true };
  if (!parse_u64(argv[0], &g.until)) {
    repl_error(s, "until: '%s' is not an event index", argv[0]);
    return -1;
  }
  if (g.until < s->e->index) {
    repl_error(s, "until: event %" PRIu64 " was already replayed (next is event %" PRIu64 "); 'reset' starts over",
               g.until, s->e->index);
    return -1;
  }
  return run_to(s, &g);
}

/* ---- breakpoint commands ---- */

/* "cr3w" -> (EV_CR_WRITE, 3); "cpuid" -> (EV_CPUID, any aux). */
static bool parse_event_kind(const char *w, uint64_t *type, int *aux) {
  if (w[0] == 'c' && w[1] == 'r' && w[2] && strchr("0348", w[2]) && (w[3] == 'w' || w[3] == 'r') && !w[4]) {
    *type = w[3] == 'w' ? EV_CR_WRITE : EV_CR_READ;
    *aux = w[2] - '0';
    return true;
  }
  int t = event_type_from_mnemonic(w);
  if (t < 0) return false;
  *type = (uint64_t)t;
  *aux = -1;
  return true;
}

/* An exit reason by name (CR_ACCESS) or SDM number (28); -1 when neither. */
static int parse_reason(const char *v) {
  uint64_t num;
  int r = exit_reason_by_name(v);
  if (r < 0 && parse_u64(v, &num) && num < EXIT_REASON_MAX && exit_reason_name((unsigned)num)) r = (int)num;
  return r;
}

/* Fills b from `break KIND VALUE` for the kinds that need a value. */
static bool parse_bp_value(struct repl *s, const char *k, const char *v, struct repl_bp *b) {
  int r;
  if (!strcmp(k, "exit")) {
    if ((r = parse_reason(v)) < 0) {
      repl_error(s, "break exit: unknown exit reason '%s' (e.g. CR_ACCESS, EXCEPTION_NMI; Tab completes)", v);
      return false;
    }
    b->kind = BP_EXIT;
    b->value = (uint64_t)r;
  } else if (!strcmp(k, "event")) {
    b->kind = BP_EVENT;
    if (!parse_event_kind(v, &b->value, &b->aux)) {
      repl_error(s, "break event: unknown event type '%s' (mnemonics as in traces/FORMAT.md: cr3w, cpuid, touch...)", v);
      return false;
    }
  } else {
    b->kind = !strcmp(k, "at") ? BP_AT : BP_CR3;
    if (!parse_u64(v, &b->value)) {
      repl_error(s, "break %s: '%s' is not a number", k, v);
      return false;
    }
  }
  return true;
}

/* Fills b from `break KIND [VALUE]`; false after printing what is wrong. */
static bool parse_breakpoint(struct repl *s, int argc, char **argv, struct repl_bp *b) {
  const char *k = argv[0], *v = argc > 1 ? argv[1] : NULL;
  if (!strcmp(k, "mark")) {
    if (v && strlen(v) > MARK_LABEL_MAX) {
      repl_error(s, "break mark: label longer than %d bytes", MARK_LABEL_MAX);
      return false;
    }
    b->kind = BP_MARK;
    snprintf(b->label, sizeof b->label, "%s", v ? v : "");
    return true;
  }
  if (strcmp(k, "exit") && strcmp(k, "event") && strcmp(k, "at") && strcmp(k, "cr3")) {
    repl_error(s, "break: unknown kind '%s' (exit REASON, event TYPE, at INDEX, cr3 VALUE, mark [LABEL])", k);
    return false;
  }
  if (!v) {
    repl_error(s, "break %s: missing value", k);
    return false;
  }
  return parse_bp_value(s, k, v, b);
}

static int do_break(struct repl *s, int argc, char **argv) {
  struct repl_bp b = { 0 };
  if (!parse_breakpoint(s, argc, argv, &b)) return -1;
  if (s->nbp == REPL_MAX_BP) {
    repl_error(s, "too many breakpoints (%d); 'delete' some", REPL_MAX_BP);
    return -1;
  }
  b.id = ++s->next_bp_id;
  s->bp[s->nbp++] = b;
  char what[64];
  bp_describe(&b, what, sizeof what);
  printf("breakpoint %u: %s\n", b.id, what);
  return 0;
}

static int do_delete(struct repl *s, int argc, char **argv) {
  (void)argc;
  uint64_t id;
  if (!strcmp(argv[0], "all")) {
    printf("deleted %u breakpoint%s\n", s->nbp, s->nbp == 1 ? "" : "s");
    s->nbp = 0;
    return 0;
  }
  if (!parse_u64(argv[0], &id)) {
    repl_error(s, "delete: expected a breakpoint number or 'all', got '%s'", argv[0]);
    return -1;
  }
  for (unsigned i = 0; i < s->nbp; i++) {
    if (s->bp[i].id != id) continue;
    memmove(&s->bp[i], &s->bp[i + 1], (s->nbp - i - 1) * sizeof *s->bp);
    s->nbp--;
    printf("deleted breakpoint %" PRIu64 "\n", id);
    return 0;
  }
  repl_error(s, "no breakpoint %s; 'breakpoints' lists them", argv[0]);
  return -1;
}

static int do_breakpoints(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  if (!s->nbp) {
    printf("no breakpoints\n");
    return 0;
  }
  printf("%-4s %-28s %s\n", "num", "stops after", "hits");
  for (unsigned i = 0; i < s->nbp; i++) {
    char what[64];
    bp_describe(&s->bp[i], what, sizeof what);
    printf("%-4u %-28s %" PRIu64 "\n", s->bp[i].id, what, s->bp[i].hits);
  }
  return 0;
}

/* ---- info ---- */

/* A field's value at its width: 0x1234, 0x00000001, 0x00000000000006f0. */
static void print_vmcs_field(const struct vmcs *c, enum vmcs_field f) {
  unsigned digits = vmcs_width_bits(f) / 4;
  printf("  %-28s 0x%04" PRIx32 "  0x%0*" PRIx64 "\n", vmcs_name(f), vmcs_encoding(f), (int)digits, vmcs_peek(c, f));
}

static int info_vmcs(struct repl *s, const char *field) {
  const struct vcpu *v = cur_vcpu(s);
  const struct vmcs *c = &v->vmx.vmcs;
  if (!field) {
    printf("vCPU %u VMCS (%d fields; %" PRIu64 " VMREADs, %" PRIu64 " VMWRITEs so far)\n", v->id,
           VMCS_FIELD_COUNT, c->reads, c->writes);
    printf("  %-28s %-6s  %s\n", "field", "enc", "value");
    for (int f = 0; f < VMCS_FIELD_COUNT; f++) print_vmcs_field(c, (enum vmcs_field)f);
    return 0;
  }
  uint64_t enc;
  int f = vmcs_field_by_name(field);
  if (f < 0 && parse_u64(field, &enc) && enc <= UINT32_MAX) f = vmcs_field_by_encoding((uint32_t)enc);
  if (f < 0) {
    repl_error(s, "info vmcs: unknown field '%s' (a name as 'info vmcs' lists, or an encoding such as 0x6804)", field);
    return -1;
  }
  print_vmcs_field(c, (enum vmcs_field)f);
  return 0;
}

/* CR0 or CR4: the value, what the guest reads, the read shadow and the mask. */
static void print_owned_cr(const struct vmcs *c, unsigned cr, enum vmcs_field val, enum vmcs_field shadow,
                           enum vmcs_field mask) {
  uint64_t v = vmcs_peek(c, val), sh = vmcs_peek(c, shadow), m = vmcs_peek(c, mask);
  printf("  cr%u               0x%016" PRIx64 "  (guest reads 0x%016" PRIx64 ")\n", cr, v, cr_read_value(v, m, sh));
  printf("  cr%u read shadow   0x%016" PRIx64 "\n", cr, sh);
  printf("  cr%u mask          0x%016" PRIx64 "  (1 = host-owned)\n", cr, m);
}

static int info_regs(struct repl *s) {
  const struct vcpu *v = cur_vcpu(s);
  const struct vmcs *c = &v->vmx.vmcs;
  bool ept = s->pol->paging == PAGING_EPT;
  printf("vCPU %u guest registers\n", v->id);
  print_owned_cr(c, 0, VMCS_GUEST_CR0, VMCS_CR0_READ_SHADOW, VMCS_CR0_GUEST_HOST_MASK);
  uint64_t root = vmcs_peek(c, VMCS_GUEST_CR3);
  /* Shadow roots for the first CR3 are built lazily, without a VMWRITE. */
  const char *what = ept ? "" : root ? ": the shadow root" : ": no CR3 exit has loaded a shadow root yet";
  printf("  cr3               0x%016" PRIx64 "  (GUEST_CR3 0x%016" PRIx64 "%s)\n", v->guest_cr3, root, what);
  print_owned_cr(c, 4, VMCS_GUEST_CR4, VMCS_CR4_READ_SHADOW, VMCS_CR4_GUEST_HOST_MASK);
  printf("  cr8               0x%016" PRIx64 "\n", v->vmx.cr8);
  static const unsigned drs[] = { 0, 1, 2, 3, 6, 7 };
  for (size_t i = 0; i < sizeof drs / sizeof *drs; i++)
    printf("  dr%u               0x%016" PRIx64 "\n", drs[i], v->guest_dr[drs[i]]);
  printf("  debug registers in hardware: %s\n", v->guest_dr_live ? "the guest's" : "the host's");
  return 0;
}

static int info_cr3targets(struct repl *s) {
  const struct vcpu *v = cur_vcpu(s);
  const struct vmcs *c = &v->vmx.vmcs;
  uint64_t count = vmcs_peek(c, VMCS_CR3_TARGET_COUNT);
  printf("vCPU %u: CR3_TARGET_COUNT %" PRIu64 " (the CPU supports %" PRIu64 ")%s\n", v->id, count,
         s->prof.p[PP_CR3_TARGETS], s->pol->cr3_cache ? "; paravirtual CR3 cache" : "");
  for (unsigned i = 0; i < VMCS_CR3_TARGET_FIELDS; i++) {
    enum vmcs_field f = (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + i);
    printf("  %-18s 0x%016" PRIx64, vmcs_name(f), vmcs_peek(c, f));
    if (i >= count) printf("  (beyond the count: ignored)");
    else if (s->pol->cr3_cache && vmcs_peek(c, f)) printf("  root of guest cr3 0x%" PRIx64, v->cr3c_table.guest_cr3[i]);
    printf("\n");
  }
  if (s->pol->cr3_cache && count) printf("  next slot to fill: %u\n", v->cr3c_table.next);
  return 0;
}

static int do_info(struct repl *s, int argc, char **argv) {
  if (argc == 0) {                                   /* gdb's bare `info`: the topics */
    printf("info TOPIC shows the state after the last event:\n%s", repl_find_command("info")->detail);
    return 0;
  }
  const char *t = argv[0];
  if (argc > 1 && strcmp(t, "vmcs")) {
    repl_error(s, "info %s takes no argument", t);
    return -1;
  }
  if (!strcmp(t, "vmcs")) return info_vmcs(s, argc > 1 ? argv[1] : NULL);
  if (!strcmp(t, "regs")) return info_regs(s);
  if (!strcmp(t, "cr3targets")) return info_cr3targets(s);
  if (!strcmp(t, "shadow")) { mmu_print_shadow(s->e->mmu, stdout); return 0; }
  if (!strcmp(t, "tlb")) {
    printf("vCPU %u ", cur_vcpu(s)->id);
    mmu_print_tlb(s->e->mmu, cur_vcpu(s)->id, stdout);
    return 0;
  }
  repl_error(s, "info: unknown topic '%s' (vmcs, regs, cr3targets, shadow, tlb)", t);
  return -1;
}

/* ---- event, stats, save ---- */

static int do_event(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  if (!s->e->index) {
    printf("no event replayed yet; the next is event 0 of %" PRIu64 "\n", s->r.hdr.event_count);
    return 0;
  }
  char text[160], why[1024];
  const struct engine_last *l = &s->e->last;
  trace_text_format(&s->ev, text, sizeof text);
  explain(s, why, sizeof why);
  printf("event %" PRIu64 " of %" PRIu64 ", vcpu %u: %s\n", last_index(s), s->r.hdr.event_count, s->ev.vcpu, text);
  printf("%s\n", why);
  printf("cycles: %" PRIu32 " native, %" PRIu64 " in the hypervisor", s->ev.cycles, l->cycles);
  if (l->decision.exits) printf(" (exit qualification 0x%" PRIx64 ")", l->decision.qual);
  printf("\n");
  return 0;
}

/* The report so far: the same identity lines as a batch run. */
static struct report *make_report(const struct repl *s) {
  struct report *rep = xcalloc(1, sizeof *rep);
  run_report(rep, s->trace_path, &s->r.hdr, s->pol, &s->prof, s->e);
  return rep;
}

static int do_stats(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  struct report *rep = make_report(s);
  printf("after %" PRIu64 " of %" PRIu64 " events:\n", s->e->index, s->r.hdr.event_count);
  report_print(stdout, rep, FORMAT_TABLE);
  free(rep);
  return 0;
}

static int do_save(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  char err[1024];
  int64_t id = 0;
  struct report *rep = make_report(s);
  char *pj = policy_to_json(s->pol);
  struct trace_known known;            /* the store hashes the file unless the database remembers it */
  trace_known_look_up(s->db, s->trace_path, &known);
  if (known.known) snprintf(rep->trace_hash, sizeof rep->trace_hash, "%s", known.hash);
  struct store_run run = {
    .rep = rep, .trace_path = s->trace_path, .trace_metadata = s->r.hdr.metadata ? s->r.hdr.metadata : "",
    .trace_events = s->r.hdr.event_count, .policy_json = pj, .profile_json = s->prof.json,
    .wall_seconds = s->wall, .partial = true, .seen = trace_known_to_remember(&known),
  };
  int rc = store_save(s->db, &run, &id, err, sizeof err);
  trace_known_free(&known);
  free(pj);
  free(rep);
  if (rc) {
    repl_error(s, "%s", err);
    return -1;
  }
  printf("saved run %" PRId64 " to %s (partial: %" PRIu64 " of %" PRIu64 " events)\n", id, s->db, s->e->index,
         s->r.hdr.event_count);
  return 0;
}

/* ---- policy, set, reset ---- */

static int restart(struct repl *s, const char *spec, char *const *sets, int nsets) {
  char err[1024];
  if (rebuild(s, spec, sets, nsets, err, sizeof err)) {
    repl_error(s, "%s", err);
    return -1;
  }
  printf("restarted at event 0 under policy %s\n", s->pol->name);
  return 0;
}

static int do_policy(struct repl *s, int argc, char **argv) {
  if (argc == 0) {
    printf("policy %s\n", s->pol->name);
    return 0;
  }
  if (restart(s, argv[0], s->sets, s->nsets)) return -1;
  free(s->spec);
  s->spec = xstrdup(argv[0]);
  return 0;
}

/* Index of the override for `key` in s->sets, or -1. */
static int find_set(const struct repl *s, const char *key, size_t klen) {
  for (int i = 0; i < s->nsets; i++)
    if (!strncmp(s->sets[i], key, klen) && s->sets[i][klen] == '=') return i;
  return -1;
}

static int do_set(struct repl *s, int argc, char **argv) {
  if (argc == 0) {
    if (!s->nsets) printf("no overrides\n");
    for (int i = 0; i < s->nsets; i++) printf("%s\n", s->sets[i]);
    return 0;
  }
  const char *eq = strchr(argv[0], '=');
  if ((argc == 1) != (eq != NULL) || eq == argv[0]) {
    repl_error(s, "usage: set KEY VALUE (or KEY=VALUE)");
    return -1;
  }
  size_t klen = eq ? (size_t)(eq - argv[0]) : strlen(argv[0]);
  size_t len = klen + 1 + strlen(eq ? eq + 1 : argv[1]) + 1;
  char *kv = xmalloc(len);
  snprintf(kv, len, "%.*s=%s", (int)klen, argv[0], eq ? eq + 1 : argv[1]);
  /* Try the new list first; commit it only if the policy resolves. */
  char *sets[REPL_MAX_SETS];
  int n = s->nsets, at = find_set(s, kv, klen);
  memcpy(sets, s->sets, sizeof *sets * (size_t)n);
  if (at < 0 && n == REPL_MAX_SETS) { free(kv); repl_error(s, "too many overrides (%d)", REPL_MAX_SETS); return -1; }
  if (at >= 0) sets[at] = kv;
  else sets[n++] = kv;
  if (restart(s, s->spec, sets, n)) { free(kv); return -1; }
  if (at >= 0) free(s->sets[at]);
  memcpy(s->sets, sets, sizeof *sets * (size_t)n);
  s->nsets = n;
  return 0;
}

static int do_reset(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  return restart(s, s->spec, s->sets, s->nsets);
}

/* ---- history ---- */

static int do_history(struct repl *s, int argc, char **argv) {
  uint64_t n = REPL_HISTORY_SHOWN;
  if (argc && (!parse_u64(argv[0], &n) || n == 0)) {
    repl_error(s, "history: '%s' is not a positive number", argv[0]);
    return -1;
  }
  unsigned first = n < s->nhistory ? s->nhistory - (unsigned)n : 0;
  for (unsigned i = first; i < s->nhistory; i++) printf("%5u  %s\n", i + 1, s->history[i]);
  return 0;
}

/* ---- help, quit ---- */

/* "name ARGS" as the help table shows it. */
static void synopsis(const struct repl_cmd *c, char *buf, size_t n) {
  snprintf(buf, n, "%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
}

static void alias_list(const struct repl_cmd *c, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < 3 && c->alias[i] && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", c->alias[i]);
}

static int do_help(struct repl *s, int argc, char **argv) {
  char syn[96], al[32];
  if (argc) {
    const struct repl_cmd *c = repl_find_command(argv[0]);
    if (!c) { repl_error(s, "help: unknown command '%s'; 'help' lists them", argv[0]); return -1; }
    synopsis(c, syn, sizeof syn);
    alias_list(c, al, sizeof al);
    printf("%s%s%s%s\n  %s\n", syn, al[0] ? "   (aliases: " : "", al, al[0] ? ")" : "", c->help);
    if (c->detail) printf("%s", c->detail);
    return 0;
  }
  int wsyn = 0, wal = 0;
  for (unsigned i = 0; i < repl_ncommands; i++) {
    synopsis(&repl_commands[i], syn, sizeof syn);
    alias_list(&repl_commands[i], al, sizeof al);
    if ((int)strlen(syn) > wsyn) wsyn = (int)strlen(syn);
    if ((int)strlen(al) > wal) wal = (int)strlen(al);
  }
  printf("Commands (events are numbered from 0; stepping stops after the event that ends it):\n");
  for (unsigned i = 0; i < repl_ncommands; i++) {
    synopsis(&repl_commands[i], syn, sizeof syn);
    alias_list(&repl_commands[i], al, sizeof al);
    printf("  %-*s  %-*s  %s\n", wsyn, syn, wal, al, repl_commands[i].help);
  }
  printf("Enter on an empty line repeats the last command if it shows or replays (step, next-exit, continue,\n"
         "info, event, stats, breakpoints); '#' starts a comment; 'help CMD' for more.\n");
  return 0;
}

static int do_quit(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  s->quit = true;
  return 0;
}

/* ---- the table ---- */

/* The order here is the order of `help`; unset fields are 0/NULL. */
const struct repl_cmd repl_commands[] = {
  { .name = "step", .alias = { "s" }, .args = "[N]", .help = "replay N events (default 1), showing each",
    .max_args = 1, .fn = do_step, .repeat = true },
  { .name = "next-exit", .alias = { "n", "nx" }, .args = "[N]",
    .help = "replay up to and including the Nth next VM exit (default 1)",
    .detail = "  Counts exits, not events: one touch event can raise several shadow page faults.\n",
    .max_args = 1, .fn = do_next_exit, .repeat = true },
  { .name = "continue", .alias = { "c" }, .help = "replay to the next breakpoint or the end (Ctrl-C interrupts)",
    .fn = do_continue, .repeat = true },
  { .name = "until", .alias = { "u" }, .args = "INDEX", .help = "replay up to and including event INDEX",
    .min_args = 1, .max_args = 1, .fn = do_until },
  { .name = "break", .alias = { "b" }, .args = "KIND [VALUE]",
    .help = "stop after an event: exit REASON, event TYPE, at INDEX, cr3 VALUE, mark [LABEL]",
    .detail = "  break exit REASON    the event caused a VM exit with that reason (break exit CR_ACCESS)\n"
              "  break event TYPE     an event of that type (break event cr3w; mnemonics as in traces/FORMAT.md)\n"
              "  break at INDEX       the event with that index (break at 1234)\n"
              "  break cr3 VALUE      a guest CR3 write of that value (break cr3 0x1000)\n"
              "  break mark [LABEL]   a mark event (with that label)\n",
    .min_args = 1, .max_args = 2, .fn = do_break, .arg = ARG_BREAK },
  { .name = "delete", .alias = { "d" }, .args = "N|all", .help = "delete breakpoint N, or all of them",
    .min_args = 1, .max_args = 1, .fn = do_delete, .arg = ARG_DELETE },
  { .name = "breakpoints", .alias = { "bl" }, .help = "list breakpoints with their hit counts", .fn = do_breakpoints,
    .repeat = true },
  { .name = "info", .alias = { "i" }, .args = "[TOPIC [FIELD]]",
    .help = "show vCPU state: vmcs [FIELD], regs, cr3targets, shadow, tlb",
    .detail = "  info vmcs [FIELD]   every VMCS field with its encoding and value, or one (by name or encoding)\n"
              "  info regs           guest CR0/CR3/CR4/CR8, DR0-3/6/7, CR0/CR4 read shadows and guest/host masks\n"
              "  info cr3targets     CR3_TARGET_COUNT and the CR3-target values\n"
              "  info shadow         shadow page pool usage, the oldest pages, each vCPU's roots (EPT: mappings)\n"
              "  info tlb            the vCPU's TLB\n"
              "  The vCPU is the one the last event ran on (vCPU 0 before any).\n",
    .max_args = 2, .fn = do_info, .arg = ARG_INFO, .repeat = true },
  { .name = "event", .alias = { "e" }, .help = "show the last event, whether it exited and why", .fn = do_event,
    .repeat = true },
  { .name = "stats", .alias = { "st" }, .help = "the run's report so far (as 'vmxsim run' prints it)", .fn = do_stats,
    .repeat = true },
  { .name = "policy", .args = "[P]",
    .help = "show the policy, or restart at event 0 under policy P (breakpoints kept)",
    .detail = "  P is a preset or presets joined with '+' (shadowcache+lazydr); overrides from --set and 'set' stay.\n",
    .max_args = 1, .fn = do_policy, .arg = ARG_POLICY },
  { .name = "set", .args = "[KEY VALUE]", .help = "list overrides, or override a policy knob and restart at event 0",
    .max_args = 2, .fn = do_set, .arg = ARG_KNOB },
  { .name = "reset", .help = "restart at event 0 under the same policy (breakpoints kept)", .fn = do_reset },
  { .name = "save", .help = "store the run so far in the results database (marked partial)", .fn = do_save },
  { .name = "history", .args = "[N]", .help = "the last N commands (default 20), numbered",
    .detail = "  On a terminal the list includes earlier sessions' commands (~/.vmxsim_history), as Up recalls them.\n",
    .max_args = 1, .fn = do_history, .repeat = false },
  { .name = "help", .alias = { "h", "?" }, .args = "[CMD]", .help = "list commands, or describe one",
    .max_args = 1, .fn = do_help, .arg = ARG_COMMAND },
  { .name = "quit", .alias = { "q", "exit" }, .help = "leave (Ctrl-D too)", .fn = do_quit },
};
const unsigned repl_ncommands = sizeof repl_commands / sizeof *repl_commands;

const struct repl_cmd *repl_find_command(const char *word) {
  for (unsigned i = 0; i < repl_ncommands; i++) {
    const struct repl_cmd *c = &repl_commands[i];
    if (!strcmp(word, c->name)) return c;
    for (int a = 0; a < 3 && c->alias[a]; a++)
      if (!strcmp(word, c->alias[a])) return c;
  }
  return NULL;
}

/* Splits line at whitespace up to a '#' word; returns the word count, or
** max + 1 if there were more words than fit. */
static int split(char *line, char **argv, int max) {
  int argc = 0;
  for (char *p = line;;) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') return argc;
    if (argc == max) return max + 1;
    argv[argc++] = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    if (*p) *p++ = 0;
  }
}

int repl_execute(struct repl *s, char *line) {
  char copy[sizeof s->repeat];
  snprintf(copy, sizeof copy, "%s", line);
  char *argv[8];
  int argc = split(line, argv, 8);
  if (argc == 0) return 0;
  const struct repl_cmd *c = repl_find_command(argv[0]);
  s->repeat[0] = 0;                 /* Enter repeats this command or nothing, never an older one */
  if (!c) {
    repl_error(s, "Unknown command '%s'; try 'help'", argv[0]);
    return -1;
  }
  if (argc - 1 < c->min_args || argc - 1 > c->max_args) {
    char syn[96];
    synopsis(c, syn, sizeof syn);
    repl_error(s, "usage: %s", syn);
    return -1;
  }
  if (c->repeat) memcpy(s->repeat, copy, sizeof copy);
  int rc = c->fn(s, argc - 1, argv + 1);
  fflush(stdout);
  return rc;
}
