/* Stepping: replaying events toward a goal (a number of events or exits, an
** index, a breakpoint, the end) and the commands that set one (step,
** next-exit, continue, until).  They all go through run_to(), so an interrupt,
** the end of the trace and a corrupt record are reported in one place. */
#include "repl_int.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* "exit CR_ACCESS", "3 exits EXCEPTION_NMI" or "no exit". */
static void outcome(const struct repl *s, char *buf, size_t n) {
  const struct engine_last *l = &s->e->last;
  if (!l->exits) snprintf(buf, n, "no exit");
  else if (l->exits == 1) snprintf(buf, n, "exit %s", repl_reason_name(l->last_reason));
  else snprintf(buf, n, "%u exits %s", l->exits, repl_reason_name(l->last_reason));
}

/* Where a stepping command stopped: "event 7 vcpu 0: cpuid 0x0  -> exit CPUID". */
static void print_stop(const struct repl *s) {
  char text[160], out[64];
  trace_text_format(&s->ev, text, sizeof text);
  outcome(s, out, sizeof out);
  printf("event %" PRIu64 " vcpu %u: %s  -> %s\n", repl_last_index(s), s->ev.vcpu, text, out);
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
    if (s->nbp && repl_check_breakpoints(s)) return STOP_BREAK;
    if ((g->events && *n >= g->events) || (g->exits && exits >= g->exits) ||
        (g->has_until && repl_last_index(s) >= g->until))
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
  /* A run would be refused from here on (a 32-bit guest out of frames): the
  ** REPL goes on stepping, but says so once. */
  const char *unreal = engine_failure(s->e);
  if (unreal && !s->failure_said) {
    uint64_t rec;
    if (engine_failure_record(s->e, &rec))
      printf("warning: %s: since event %" PRIu64 ": %s; a run of this trace is refused as bad input\n",
             s->trace_path, rec, unreal);
    else printf("warning: %s: %s; a run of this trace is refused as bad input\n", s->trace_path, unreal);
    s->failure_said = true;
  }
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
    printf("end of trace after event %" PRIu64 " (all %" PRIu64 " events replayed)\n", repl_last_index(s), s->e->index);
    return 0;
  case STOP_INTERRUPT:
    /* The same index as the stop line below: the last event replayed. */
    if (n) printf("interrupted after event %" PRIu64 "\n", repl_last_index(s));
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
    repl_error(s, "%s: '%s' is not a positive number%s", cmd, argv[0], parse_u64_hint(argv[0]));
    return -1;
  }
  return 0;
}

/* gdb shows where each step ends: one line per event replayed. */
int repl_do_step(struct repl *s, int argc, char **argv) {
  struct goal g = { .each = true };
  if (count_arg(s, "step", argc, argv, &g.events)) return -1;
  return run_to(s, &g);
}

int repl_do_next_exit(struct repl *s, int argc, char **argv) {
  struct goal g = { 0 };
  if (count_arg(s, "next-exit", argc, argv, &g.exits)) return -1;
  return run_to(s, &g);
}

int repl_do_continue(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  struct goal g = { 0 };
  return run_to(s, &g);
}

int repl_do_until(struct repl *s, int argc, char **argv) {
  (void)argc;
  struct goal g = { .has_until = true };
  if (!parse_u64(argv[0], &g.until)) {
    repl_error(s, "until: '%s' is not an event index%s", argv[0], parse_u64_hint(argv[0]));
    return -1;
  }
  if (g.until < s->e->index) {
    repl_error(s, "until: event %" PRIu64 " was already replayed (next is event %" PRIu64 "); 'reset' starts over",
               g.until, s->e->index);
    return -1;
  }
  return run_to(s, &g);
}
