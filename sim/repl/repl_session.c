/* The session around the replay: opening and closing it, restarting it at
** event 0 under another policy (policy, set, reset), storing the run so far
** (save) and the command history.  These commands change or keep the session
** rather than move through the trace or show it, and restart() shares
** rebuild() with repl_open(), so a restart builds exactly what a start does. */
#include "repl_int.h"
#include "sim/replay/report.h"
#include "sim/replay/runner.h"
#include "sim/store/known.h"
#include "sim/store/store.h"
#include "sim/base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (rc == EXIT_VMENTRY) run_name_capable_profiles(p, s->r.hdr.vcpu_count, s->r.hdr.paging, err, errlen);
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
  s->failure_said = false;
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

/* ---- save ---- */

int repl_do_save(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  char err[1024];
  int64_t id = 0;
  struct report *rep = repl_make_report(s);
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

int repl_do_policy(struct repl *s, int argc, char **argv) {
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

int repl_do_set(struct repl *s, int argc, char **argv) {
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

int repl_do_reset(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  return restart(s, s->spec, s->sets, s->nsets);
}

/* ---- history ---- */

int repl_do_history(struct repl *s, int argc, char **argv) {
  uint64_t n = REPL_HISTORY_SHOWN;
  if (argc && (!parse_u64(argv[0], &n) || n == 0)) {
    repl_error(s, "history: '%s' is not a positive number%s", argv[0], parse_u64_hint(argv[0]));
    return -1;
  }
  unsigned first = n < s->nhistory ? s->nhistory - (unsigned)n : 0;
  for (unsigned i = first; i < s->nhistory; i++) printf("%5u  %s\n", i + 1, s->history[i]);
  return 0;
}
