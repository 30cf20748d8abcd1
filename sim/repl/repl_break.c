/* Breakpoints: matching each replayed event against them (the stepping loop
** calls repl_check_breakpoints) and the commands that set, delete and list
** them.  Matching, describing and parsing all follow the kinds of struct
** repl_bp, so a new kind is added in this one file. */
#include "repl_int.h"
#include "sim/base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
  case BP_AT:    return repl_last_index(s) == b->value;
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
  case BP_EXIT: snprintf(buf, n, "exit %s", repl_reason_name((unsigned)b->value)); break;
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
bool repl_check_breakpoints(struct repl *s) {
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
      repl_error(s, "break exit: unknown exit reason '%s' (e.g. CR_ACCESS, EXCEPTION_NMI; Tab completes)%s", v,
                 parse_u64_hint(v));
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
      repl_error(s, "break %s: '%s' is not a number%s", k, v, parse_u64_hint(v));
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

int repl_do_break(struct repl *s, int argc, char **argv) {
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

int repl_do_delete(struct repl *s, int argc, char **argv) {
  (void)argc;
  uint64_t id;
  if (!strcmp(argv[0], "all")) {
    printf("deleted %u breakpoint%s\n", s->nbp, s->nbp == 1 ? "" : "s");
    s->nbp = 0;
    return 0;
  }
  if (!parse_u64(argv[0], &id)) {
    repl_error(s, "delete: expected a breakpoint number or 'all', got '%s'%s", argv[0], parse_u64_hint(argv[0]));
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

int repl_do_breakpoints(struct repl *s, int argc, char **argv) {
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
