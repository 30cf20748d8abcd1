/* Running a sweep plan: traces, skipping, workers, storing (see sweep.h). */
#include "sweep.h"
#include "pool.h"
#include "sim/trace/hash.h"
#include "sim/replay/runner.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/base/version.h"
#include "workloads/generators.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Tasks: a trace to prepare, or a run (the top bit). */
#define TASK_RUN 0x80000000u

/* Seconds between updates of the sweep's row while it runs. */
#define PROGRESS_SAVE_SECONDS 2.0

/* ---- the trace cache ---- */

char *sweep_default_cache(void) {
  char *dir = user_cache_dir("traces");
  return dir ? dir : xstrdup("./.vmxsim-cache");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *sweep_cache_path(const char *dir, const struct plan_trace *t, size_t combo) {
  char **argv;
  int argc;
  plan_trace_argv(t, combo, &argv, &argc);
  /* "--opt\tvalue" pairs (a flag alone), sorted: the order in the plan does not matter */
  char **pairs = xcalloc((size_t)argc + 1, sizeof *pairs);
  size_t np = 0;
  for (int i = 1; i < argc; i++) {
    bool has_value = i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0;
    size_t n = strlen(argv[i]) + (has_value ? strlen(argv[i + 1]) : 0) + 2;
    pairs[np] = xmalloc(n);
    snprintf(pairs[np++], n, "%s\t%s", argv[i], has_value ? argv[i + 1] : "");
    i += has_value;
  }
  qsort(pairs, np, sizeof *pairs, cmp_str);
  const struct generator *g = generator_find(t->generator);
  char head[128];
  snprintf(head, sizeof head, "vmxsim trace cache\n%s\nmodel %d\nformat %d\n", t->generator,
           g ? g->model_version : 0, TRACE_VERSION);
  struct xxh64 h;
  xxh64_init(&h);
  xxh64_update(&h, head, strlen(head));
  for (size_t i = 0; i < np; i++) {
    xxh64_update(&h, pairs[i], strlen(pairs[i]) + 1);
    free(pairs[i]);
  }
  free(pairs);
  plan_argv_free(argv, argc);
  size_t n = strlen(dir) + strlen(t->generator) + 32;
  char *path = xmalloc(n);
  snprintf(path, n, "%s/%s-%016llx.bin", dir, t->generator, (unsigned long long)xxh64_final(&h));
  return path;
}

int sweep_make_dirs(const char *path, char *err, size_t errlen) {
  char *p = xstrdup(path);
  int rc = 0;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s) continue;
    char c = *s;
    *s = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      snprintf(err, errlen, "%s: cannot create %s: %s", path, p, strerror(errno));
      rc = EXIT_BADINPUT;
      break;
    }
    if (!(*s = c)) break;
  }
  free(p);
  return rc;
}

/* ---- choosing the part ---- */

static size_t instance_base(const struct plan *p, uint32_t t) {
  size_t base = 0;
  for (uint32_t i = 0; i < t; i++) base += p->traces[i].ncombos;
  return base;
}

static uint32_t add_trace(struct sweep *s, const struct plan_run *r) {
  struct plan_trace *t = &s->plan->traces[r->trace];
  struct sweep_trace *st = &s->traces[s->ntraces];
  st->trace = r->trace;
  st->combo = r->tcombo;
  st->label = plan_trace_label(t, r->tcombo);
  if (t->generator) {
    st->path = sweep_cache_path(s->cache_dir, t, r->tcombo);
    st->generate = access(st->path, F_OK) != 0;
  } else {
    st->path = xstrdup(t->path);
  }
  return (uint32_t)s->ntraces++;
}

int sweep_init(struct sweep *s, struct plan *plan, const struct sweep_opts *o, char *err, size_t errlen) {
  (void)err, (void)errlen;
  memset(s, 0, sizeof *s);
  s->plan = plan;
  s->opts = *o;
  if (s->opts.nshards == 0) s->opts.nshards = 1;
  if (s->opts.jobs == 0) s->opts.jobs = 1;
  s->cache_dir = o->cache ? xstrdup(o->cache) : plan->cache ? xstrdup(plan->cache) : sweep_default_cache();
  size_t ninst = instance_base(plan, (uint32_t)plan->ntraces);
  int64_t *local = xmalloc((ninst ? ninst : 1) * sizeof *local);
  for (size_t i = 0; i < ninst; i++) local[i] = -1;
  size_t n = plan_shard_size(plan->nruns, s->opts.shard, s->opts.nshards);
  s->items = xcalloc(n ? n : 1, sizeof *s->items);
  s->traces = xcalloc(n ? n : 1, sizeof *s->traces);
  for (size_t r = s->opts.shard; r < plan->nruns; r += s->opts.nshards) {
    const struct plan_run *run = &plan->runs[r];
    size_t inst = instance_base(plan, run->trace) + run->tcombo;
    if (local[inst] < 0) local[inst] = add_trace(s, run);
    s->items[s->nitems++] = (struct sweep_item){ .run = r, .trace = (uint32_t)local[inst] };
  }
  free(local);
  return 0;
}

void sweep_free(struct sweep *s) {
  for (size_t i = 0; i < s->ntraces; i++) {
    free(s->traces[i].path), free(s->traces[i].label), free(s->traces[i].err);
    file_seen_free(&s->traces[i].seen);
  }
  for (size_t i = 0; i < s->nitems; i++) free(s->items[i].err);
  free(s->traces), free(s->items), free(s->cache_dir);
  if (s->db) store_close(s->db);
  memset(s, 0, sizeof *s);
}

/* ---- replies: what a worker sends back ---- */

struct buf {
  char *data;
  size_t len;
};

static void put(struct buf *b, const void *p, size_t n) {
  if (n == 0) return;   /* p may be NULL then (no view rows) */
  b->data = xrealloc(b->data, b->len + n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void put_str(struct buf *b, const char *s) {
  uint32_t n = s ? (uint32_t)strlen(s) : 0;
  put(b, &n, sizeof n);
  put(b, s ? s : "", n);
}

/* Reads n bytes at *at; false when the reply is shorter. */
static bool get(const char **at, const char *end, void *p, size_t n) {
  if ((size_t)(end - *at) < n) return false;
  memcpy(p, *at, n);
  *at += n;
  return true;
}

static char *get_str(const char **at, const char *end) {
  uint32_t n;
  if (!get(at, end, &n, sizeof n) || (size_t)(end - *at) < n) return NULL;
  char *s = xmalloc((size_t)n + 1);
  memcpy(s, *at, n);
  s[n] = 0;
  *at += n;
  return s;
}

/* The report's view rows, after its strings (rep->nvrows of them). */
static bool get_views(const char **at, const char *end, struct report *rep) {
  size_t n = (size_t)rep->nvrows * sizeof *rep->vrows;
  rep->vrows = NULL;
  if ((size_t)(end - *at) != n) {
    rep->nvrows = 0;
    return false;
  }
  if (n) {
    rep->vrows = xmalloc(n);
    memcpy(rep->vrows, *at, n);
  }
  *at += n;
  return true;
}

struct trace_reply {
  int32_t rc;
  char hash[STORE_KEY_LEN + 1];
};

struct run_reply {
  int32_t rc;
  double wall_seconds;
  int64_t started_unix;
  uint64_t trace_events;
  /* A report's counter names point into this program's static data, which
  ** worker and parent share at the same addresses (the worker is a fork).
  ** Its view rows (rep.nvrows of them) follow the strings. */
  struct report rep;
};

/* In a worker: generate the trace if needed, then hash it. */
static void work_trace(struct sweep *s, struct sweep_trace *t, struct buf *b) {
  struct trace_reply r = { 0 };
  char err[1024] = "";
  if (t->generate && access(t->path, F_OK) != 0) {
    char **argv;
    int argc;
    plan_trace_argv(&s->plan->traces[t->trace], t->combo, &argv, &argc);
    r.rc = gen_generate(argc, argv, t->path, err, sizeof err);
    plan_argv_free(argv, argc);
  }
  if (!r.rc) r.rc = hash_file(t->path, r.hash, err, sizeof err);
  put(b, &r, sizeof r);
  put_str(b, err);
}

/* In a worker: one replay. */
static void work_run(struct sweep *s, struct sweep_item *it, struct buf *b) {
  const struct plan_run *pr = &s->plan->runs[it->run];
  const struct plan_policy *pp = &s->plan->policies[pr->policy];
  char **sets, err[1024] = "";
  int nsets;
  plan_policy_sets(pp, pr->pcombo, &sets, &nsets);
  struct run_spec spec = { .trace = s->traces[it->trace].path,
                           .config = { pp->resolved_spec, s->plan->cpus[pr->cpu].resolved_spec, sets, nsets } };
  struct run_output *out = xmalloc(sizeof *out);
  struct run_reply *r = xcalloc(1, sizeof *r);
  r->started_unix = (int64_t)time(NULL);
  r->rc = run_trace(&spec, out, err, sizeof err);
  if (!r->rc && out->interrupted) {
    r->rc = EXIT_INTERRUPTED;
    snprintf(err, sizeof err, "interrupted");
  }
  r->wall_seconds = out->wall_seconds;
  r->trace_events = out->trace_events;
  r->rep = out->rep;
  if (r->rc) r->rep.nvrows = 0;
  r->rep.vrows = NULL;   /* sent after the strings */
  put(b, r, sizeof *r);
  put_str(b, err);
  put_str(b, out->metadata);
  put_str(b, out->policy_json);
  put_str(b, out->profile_json);
  if (!r->rc) put(b, out->rep.vrows, (size_t)out->rep.nvrows * sizeof *out->rep.vrows);
  run_output_free(out);
  free(out);
  free(r);
  plan_argv_free(sets, nsets);
}

static void work(void *ctx, uint32_t task, void **reply, size_t *len) {
  struct sweep *s = ctx;
  struct buf b = { 0 };
  if (task & TASK_RUN) work_run(s, &s->items[task & ~TASK_RUN], &b);
  else work_trace(s, &s->traces[task], &b);
  *reply = b.data;
  *len = b.len;
}

/* ---- the parent: answers ---- */

static void item_fail(struct sweep *s, struct sweep_item *it, int rc, const char *why) {
  it->state = SWEEP_FAILED;
  it->rc = rc;
  free(it->err);
  it->err = xstrdup(why);
  s->failed++;
}

/* A worker that died answers with its wait status. */
static void died(char *why, size_t n, int status) {
  if (WIFSIGNALED(status)) snprintf(why, n, "the worker process died of signal %d", WTERMSIG(status));
  else snprintf(why, n, "the worker process exited with status %d", WEXITSTATUS(status));
}

static void show_progress(struct sweep *s) {
  if (s->opts.progress) s->opts.progress(s, s->opts.progress_arg);
}

static int on_trace_made(void *ctx, uint32_t task, const void *reply, size_t len, int status) {
  struct sweep *s = ctx;
  struct sweep_trace *t = &s->traces[task];
  struct trace_reply r;
  const char *at = reply, *end = reply ? at + len : NULL;   /* a worker that died: no reply */
  char *why = NULL;
  if (!reply || !get(&at, end, &r, sizeof r) || !(why = get_str(&at, end))) {
    char msg[128];
    if (reply) snprintf(msg, sizeof msg, "a malformed answer from a worker process");
    else died(msg, sizeof msg, status);
    t->rc = EXIT_INTERNAL;
    t->err = xstrdup(msg);
  } else if (r.rc) {
    t->rc = r.rc;
    t->err = xstrdup(why);
  } else {
    memcpy(t->hash, r.hash, sizeof t->hash);
    t->hash[STORE_KEY_LEN] = 0;
  }
  free(why);
  s->traces_ready++;
  show_progress(s);
  return 0;
}

static int save_progress(struct sweep *s, bool finished, char *err, size_t errlen) {
  s->progress_saved = monotonic_seconds();
  size_t repeats_done = 0;
  for (size_t i = 0; i < s->nitems; i++) repeats_done += s->items[i].state == SWEEP_REPEAT && s->items[i].run_id;
  return store_sweep_progress(s->db, s->opts.db, s->sweep_id, s->stored_before + s->ran + repeats_done, s->failed,
                              finished, err, errlen);
}

struct run_ctx {
  struct sweep *s;
  char *err;
  size_t errlen;
};

/* A given file that no longer looks as it did when its hash was taken or
** looked up: a run of it may have replayed other content than the hash names,
** so it is not stored (a sweep takes each file's hash once, at its start). */
static bool trace_changed(const struct sweep_trace *t) {
  if (!t->seen.ok) return false;
  struct file_seen now;
  bool same = file_seen_take(t->path, &now) && file_seen_same(&t->seen, &now);
  file_seen_free(&now);
  return !same;
}

/* Stores a finished replay; EXIT_DB stops the sweep. */
static int store_reply(struct run_ctx *c, struct sweep_item *it, struct run_reply *r, const char *meta,
                       const char *policy_json, const char *profile_json) {
  struct sweep *s = c->s;
  const struct sweep_trace *t = &s->traces[it->trace];
  if (trace_changed(t)) {
    char why[1200];
    snprintf(why, sizeof why, "%s: changed during the sweep (its hash was taken at the start); this run is "
             "not stored: run the sweep again", t->path);
    item_fail(s, it, EXIT_BADINPUT, why);
    return 0;
  }
  memcpy(r->rep.trace_hash, t->hash, sizeof t->hash);
  struct store_run run = { .rep = &r->rep, .trace_path = t->path, .trace_metadata = meta,
                           .trace_events = r->trace_events, .policy_json = policy_json,
                           .profile_json = profile_json, .wall_seconds = r->wall_seconds,
                           .started_unix = r->started_unix,
                           .seen = t->seen.ok && !t->remembered ? &t->seen : NULL };
  int rc = store_save_db(s->db, s->opts.db, &run, &it->run_id, c->err, c->errlen);
  if (rc) return rc;
  it->state = SWEEP_RAN;
  s->ran++;
  if (monotonic_seconds() - s->progress_saved >= PROGRESS_SAVE_SECONDS) return save_progress(s, false, c->err, c->errlen);
  return 0;
}

static int run_done(void *ctx, uint32_t task, const void *reply, size_t len, int status) {
  struct run_ctx *c = ctx;
  struct sweep *s = c->s;
  struct sweep_item *it = &s->items[task & ~TASK_RUN];
  struct run_reply *r = xcalloc(1, sizeof *r);
  const char *at = reply, *end = reply ? at + len : NULL;   /* a worker that died: no reply */
  char *why = NULL, *meta = NULL, *pol = NULL, *prof = NULL;
  int rc = 0;
  if (!reply || !get(&at, end, r, sizeof *r) || !(why = get_str(&at, end)) || !(meta = get_str(&at, end)) ||
      !(pol = get_str(&at, end)) || !(prof = get_str(&at, end))) {
    char msg[128];
    if (reply) snprintf(msg, sizeof msg, "a malformed answer from a worker process");
    else died(msg, sizeof msg, status);
    item_fail(s, it, EXIT_INTERNAL, msg);
  } else if (r->rc) {
    item_fail(s, it, r->rc, why);
  } else if (!get_views(&at, end, &r->rep)) {
    item_fail(s, it, EXIT_INTERNAL, "a malformed answer from a worker process");
  } else {
    rc = store_reply(c, it, r, meta, pol, prof);
  }
  report_free(&r->rep);   /* its view rows: NULL unless get_views made them */
  free(why), free(meta), free(pol), free(prof), free(r);
  s->answered++;
  show_progress(s);
  return rc;
}

/* ---- the steps ---- */

/* A file there before the sweep: its hash from the database when it remembers
** one (true), else the look at it before a worker hashes it, for the stores to
** remember the hash against.  Either way the look is kept: each store checks
** that the file still looks so (trace_changed). */
static bool known_trace(struct sweep *s, struct sweep_trace *t) {
  struct trace_known k;
  trace_known_look_up(s->opts.db, t->path, &k);
  file_seen_free(&t->seen);
  t->seen = k.seen;                   /* owned by t from here */
  t->remembered = k.known;
  if (k.known) {
    memcpy(t->hash, k.hash, sizeof t->hash);
    t->hash[STORE_KEY_LEN] = 0;
  }
  return k.known;
}

static int prepare_traces(struct sweep *s, struct pool *pool, char *err, size_t errlen) {
  uint32_t *tasks = xcalloc(s->ntraces + 1, sizeof *tasks);
  size_t n = 0;
  bool any_generated = false;
  for (size_t i = 0; i < s->ntraces; i++) {
    if (!s->traces[i].generate && known_trace(s, &s->traces[i])) continue;
    tasks[n++] = (uint32_t)i;
    any_generated |= s->traces[i].generate;
  }
  s->traces_todo = n;
  int rc = any_generated ? sweep_make_dirs(s->cache_dir, err, errlen) : 0;
  if (!rc) rc = pool_run(pool, tasks, n, on_trace_made, s, err, errlen);
  free(tasks);
  return rc;
}

/* Sets each item's key; those of a failed trace fail. */
static void compute_keys(struct sweep *s) {
  for (size_t i = 0; i < s->nitems; i++) {
    struct sweep_item *it = &s->items[i];
    const struct sweep_trace *t = &s->traces[it->trace];
    const struct plan_run *r = &s->plan->runs[it->run];
    if (t->rc) {
      char why[1200];
      snprintf(why, sizeof why, "%s: %s", s->plan->traces[t->trace].where, t->err);
      item_fail(s, it, t->rc, why);
      continue;
    }
    if (!t->hash[0]) continue;   /* not hashed (a dry run before generating) */
    store_run_key(t->hash, s->plan->policies[r->policy].json[r->pcombo], s->plan->cpus[r->cpu].hash,
                  VMXSIM_VERSION, false, 0, it->key);
  }
}

static int skip_stored(struct sweep *s, char *err, size_t errlen) {
  for (size_t i = 0; i < s->nitems; i++) {
    struct sweep_item *it = &s->items[i];
    if (it->state != SWEEP_TODO || !it->key[0]) continue;
    int rc = store_find_run(s->db, s->opts.db, it->key, &it->run_id, err, errlen);
    if (rc) return rc;
    if (it->run_id) {
      it->state = SWEEP_STORED;
      s->stored_before++;
    }
  }
  return 0;
}

/* Orders item indices by key, then by index. */
static const struct sweep *sort_sweep;
static int by_key(const void *a, const void *b) {
  const struct sweep_item *x = &sort_sweep->items[*(const size_t *)a], *y = &sort_sweep->items[*(const size_t *)b];
  int c = strcmp(x->key, y->key);
  return c ? c : (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* A plan may name one run twice (two spellings of one generator command, a
** policy listed twice): the later ones repeat the first and are not run. */
static void mark_repeats(struct sweep *s) {
  size_t *order = xcalloc(s->nitems + 1, sizeof *order), n = 0;
  for (size_t i = 0; i < s->nitems; i++)
    if (s->items[i].state == SWEEP_TODO && s->items[i].key[0]) order[n++] = i;
  sort_sweep = s;
  qsort(order, n, sizeof *order, by_key);
  for (size_t k = 1; k < n; k++) {
    struct sweep_item *first = &s->items[order[k - 1]], *it = &s->items[order[k]];
    if (strcmp(first->key, it->key) != 0) continue;
    it->state = SWEEP_REPEAT;
    it->same_as = first->state == SWEEP_REPEAT ? first->same_as : order[k - 1];
    s->repeats++;
  }
  free(order);
}

/* A repeat takes the id of the run it repeats, once that one is stored. */
static void resolve_repeats(struct sweep *s) {
  for (size_t i = 0; i < s->nitems; i++)
    if (s->items[i].state == SWEEP_REPEAT) s->items[i].run_id = s->items[s->items[i].same_as].run_id;
}

static int begin_part(struct sweep *s, char *err, size_t errlen) {
  int rc = store_open_journal(s->opts.db, true, s->opts.journal, &s->db, err, errlen);
  if (rc) return rc;
  struct store_sweep sw = { s->plan->hash, s->plan->name, s->plan->json, s->opts.shard, s->opts.nshards, s->nitems };
  return store_sweep_begin(s->db, s->opts.db, &sw, &s->sweep_id, err, errlen);
}

static int run_all(struct sweep *s, struct pool *pool, char *err, size_t errlen) {
  uint32_t *tasks = xcalloc(s->nitems + 1, sizeof *tasks);
  size_t n = 0;
  for (size_t i = 0; i < s->nitems; i++)
    if (s->items[i].state == SWEEP_TODO) tasks[n++] = TASK_RUN | (uint32_t)i;
  s->todo = n;
  s->started = monotonic_seconds();
  s->progress_saved = s->started;
  show_progress(s);
  struct run_ctx c = { s, err, errlen };
  int rc = pool_run(pool, tasks, n, run_done, &c, err, errlen);
  free(tasks);
  return rc;
}

int sweep_first_failure(const struct sweep *s) {
  for (size_t i = 0; i < s->nitems; i++)
    if (s->items[i].state == SWEEP_FAILED) return s->items[i].rc;
  return 0;
}

int sweep_run(struct sweep *s, char *err, size_t errlen) {
  struct pool *pool = NULL;
  int rc = pool_start(&pool, s->opts.jobs, work, s, err, errlen);   /* before any database is open */
  if (!rc) rc = prepare_traces(s, pool, err, errlen);
  if (!rc) {
    compute_keys(s);
    rc = begin_part(s, err, errlen);
  }
  if (!rc) rc = skip_stored(s, err, errlen);
  if (!rc) {
    mark_repeats(s);
    rc = run_all(s, pool, err, errlen);
  }
  pool_stop(pool);
  resolve_repeats(s);
  if (s->db && rc != EXIT_DB) {
    char why[1024];
    int src = save_progress(s, rc == 0, why, sizeof why);
    if (src && !rc) {
      snprintf(err, errlen, "%s", why);
      rc = src;
    }
  }
  return rc;
}

int sweep_lookup(struct sweep *s, char *err, size_t errlen) {
  for (size_t i = 0; i < s->ntraces; i++) {
    struct sweep_trace *t = &s->traces[i];
    if (t->generate) continue;
    char why[1024];
    if (!known_trace(s, t) && hash_file(t->path, t->hash, why, sizeof why)) {
      t->rc = EXIT_BADINPUT;
      t->err = xstrdup(why);
    }
  }
  compute_keys(s);
  int rc = 0;
  if (access(s->opts.db, F_OK) == 0) {   /* a dry run only reads: a read-only file or mount will do */
    rc = store_open_readonly(s->opts.db, &s->db, err, errlen);
    if (!rc) rc = skip_stored(s, err, errlen);
  }
  if (!rc) {
    mark_repeats(s);
    resolve_repeats(s);
  }
  return rc;
}

void sweep_rate(const struct sweep *s, double *per_second, double *eta) {
  double t = monotonic_seconds() - s->started;
  size_t done = s->answered;
  *per_second = t > 0 && done ? (double)done / t : 0;
  size_t left = s->todo > done ? s->todo - done : 0;
  *eta = *per_second > 0 ? (double)left / *per_second : 0;
}
