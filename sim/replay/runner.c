/* Replays from names to reports (see runner.h). */
#include "runner.h"
#include "feeder.h"
#include "sim/base/util.h"
#include "sim/trace/trace_meta.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The report of ledger k of engine e (0: its own profile). */
static void report_ledger(struct report *rep, const char *trace, const struct trace_header *hdr, const struct policy *p,
                          const struct profile *pr, const struct engine *e, unsigned k) {
  struct stats st;
  engine_ledger_stats(e, k, &st);
  snprintf(rep->trace, sizeof rep->trace, "%s", trace);
  snprintf(rep->workload, sizeof rep->workload, "%s", hdr->workload);
  snprintf(rep->policy, sizeof rep->policy, "%s", p->name);
  snprintf(rep->cpu, sizeof rep->cpu, "%s", pr->name);
  snprintf(rep->paging, sizeof rep->paging, "%s", paging_name(hdr->paging) ? paging_name(hdr->paging) : "?");
  rep->vcpus = hdr->vcpu_count;
  rep->clock_ghz = pr->clock_ghz;
  report_from_stats(rep, &st);
  rep->elapsed_cycles = engine_ledger_elapsed(e, k);
}

void run_report(struct report *rep, const char *trace, const struct trace_header *hdr, const struct policy *p,
                const struct profile *pr, const struct engine *e) {
  report_ledger(rep, trace, hdr, p, pr, e, 0);
}

/* ---- views ---- */

/* The engine's observer: each simulated exit into the simulated views. */
static void observe_exit(void *ctx, const struct engine *e, const struct engine_exit_info *x) {
  struct views *w = ctx;
  w->events = e->st.events;
  views_add(w, x->vcpu, x->reason, x->cause, e->vcpu[x->vcpu].guest_cr3, e->vcpu_cycles[x->vcpu], x->cycles);
}

/* The same through the feeder: the exit noted, to be fed on the feeder's thread. */
struct noted { struct feeder *f; unsigned sink; struct views *w; };
static void observe_exit_noted(void *ctx, const struct engine *e, const struct engine_exit_info *x) {
  const struct noted *n = ctx;
  feeder_note(n->f, n->sink, e->st.events, x->vcpu, x->reason, x->cause, e->vcpu[x->vcpu].guest_cr3,
              e->vcpu_cycles[x->vcpu], x->cycles);
}

/* The views a run keeps: the measured ones only when the recording has exits. */
#define RUN_VIEWS_CR3_ROWS 64
static void keep_views(struct run_output *o, bool asked) {
  if (o->measured && !views_any(o->measured)) {
    views_free(o->measured);
    free(o->measured);
    o->measured = NULL;
  }
  /* A version-2 trace without measured exits (a pad, a streamed header): the
  ** simulated views were kept to stand beside measured ones, and there are none. */
  if (o->simulated && !o->measured && !asked) {
    views_free(o->simulated);
    free(o->simulated);
    o->simulated = NULL;
  }
  if (o->measured) views_append_all(o->measured, VS_MEASURED, RUN_VIEWS_CR3_ROWS, &o->rep.vrows, &o->rep.nvrows);
  if (o->simulated) views_append_all(o->simulated, VS_SIMULATED, RUN_VIEWS_CR3_ROWS, &o->rep.vrows, &o->rep.nvrows);
}

/* The views' vCPU rows named as the recording names its vCPUs (a xentrace
** recording's domains, metadata "vcpus": d1v0), as summary names them, so that
** run, sweep and calibrate print and store one name; EXIT_BADINPUT with the
** message in err for metadata that names them out of range. */
static int name_vcpu_rows(struct report *rep, const char *meta, const char *trace, char *err, size_t errlen) {
  if (!rep->nvrows) return EXIT_OK;
  struct trace_vcpu_names *m = xmalloc(sizeof *m);
  int rc = trace_meta_vcpu_names(meta, trace, m, err, errlen);
  for (unsigned k = 0; k < rep->nvrows && !rc; k++) {
    struct view_stat *v = &rep->vrows[k];
    if (v->dim == VD_VCPU && v->key < m->n) snprintf(v->name, sizeof v->name, "%s", m->name[v->key]);
  }
  free(m);
  return rc;
}

/* The time series' width in cycles at the profile's clock, or in events. */
static uint64_t interval_width(const struct run_views *v, const struct profile *prof) {
  return v->interval_events ? v->interval : views_interval_cycles(v->interval_us, prof->clock_ghz);
}

/* Sets up the views of a configuration: simulated ones when asked or when the
** trace can carry measured exits (version 2), measured ones then too. */
static void start_views(const struct run_views *v, const struct trace_header *hdr, const struct profile *prof,
                        struct engine *e, struct run_output *o) {
  int vcpu = v->one_vcpu ? (int)v->vcpu : -1;
  uint64_t width = interval_width(v, prof);
  if (v->views || hdr->version >= 2) {
    o->simulated = xmalloc(sizeof *o->simulated);
    views_init(o->simulated, vcpu, width, v->interval_events);
    e->obs = (struct engine_observer){ .exit = observe_exit, .ctx = o->simulated };
  }
  if (hdr->version >= 2) {      /* only version 2 can carry measured exits */
    o->measured = xmalloc(sizeof *o->measured);
    views_init(o->measured, vcpu, v->interval_events ? v->interval : 0, v->interval_events);
  }
}

/* ---- the engines of one pass, and the threads that share them ---- */

struct pass {
  struct engine *e;           /* [n] */
  unsigned n, jobs;
  bool stepwise;              /* replay as engine_step does (a trace with measured exits) */
  struct views **measured;    /* [nmeasured]: fed every record */
  unsigned nmeasured;
  struct feeder *feeder;      /* feeds the views on its thread, or NULL: the replay's threads do */
  struct noted *noted;        /* [n]: an engine's simulated view as the feeder's sink */
  /* the block every thread replays on its engines; guarded by mu */
  const struct trace_event *evs;
  size_t nevs;
  uint64_t block;             /* blocks published so far */
  unsigned busy;              /* helper threads still on the current block */
  bool quit;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t *helper;          /* [jobs - 1] */
};

struct helper_arg {
  struct pass *p;
  unsigned id;                /* 1..jobs-1: replays engines id, id + jobs, ... */
};

/* Thread `id` replays its share of the engines: every jobs-th from id on. */
static void replay_share(struct pass *p, unsigned id, const struct trace_event *evs, size_t n) {
  for (unsigned i = id; i < p->n; i += p->jobs)
    if (p->stepwise) engine_run_block_stepwise(&p->e[i], evs, n);
    else engine_run_block(&p->e[i], evs, n);
}

static void *helper_main(void *arg) {
  struct helper_arg *h = arg;
  struct pass *p = h->p;
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->block == seen && !p->quit) pthread_cond_wait(&p->cv, &p->mu);
    if (p->quit) break;
    seen = p->block;
    const struct trace_event *evs = p->evs;
    size_t n = p->nevs;
    pthread_mutex_unlock(&p->mu);
    replay_share(p, h->id, evs, n);
    pthread_mutex_lock(&p->mu);
    if (--p->busy == 0) pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  free(h);
  return NULL;
}

/* Starts jobs - 1 helper threads; with fewer (none could be started) the
** caller's thread replays more of the engines. */
static void start_helpers(struct pass *p) {
  if (p->jobs > p->n) p->jobs = p->n;
  if (p->jobs <= 1) { p->jobs = 1; return; }
  if (pthread_mutex_init(&p->mu, NULL) != 0) { p->jobs = 1; return; }
  if (pthread_cond_init(&p->cv, NULL) != 0) { pthread_mutex_destroy(&p->mu); p->jobs = 1; return; }
  p->helper = xcalloc(p->jobs - 1, sizeof *p->helper);
  unsigned started = 0;
  for (unsigned i = 1; i < p->jobs; i++) {
    struct helper_arg *h = xmalloc(sizeof *h);
    *h = (struct helper_arg){ p, i };
    if (pthread_create(&p->helper[started], NULL, helper_main, h) != 0) { free(h); break; }
    started++;
  }
  if (started + 1 < p->jobs) {          /* shares follow the thread count: stop and run alone */
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < started; i++) pthread_join(p->helper[i], NULL);
    free(p->helper);
    p->helper = NULL;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    p->jobs = 1;
  }
}

static void stop_helpers(struct pass *p) {
  if (p->jobs <= 1) return;
  pthread_mutex_lock(&p->mu);
  p->quit = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (unsigned i = 0; i + 1 < p->jobs; i++) pthread_join(p->helper[i], NULL);
  free(p->helper);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
}

/* Every engine replays the block; the helpers take their shares. */
static void replay_block(struct pass *p, const struct trace_event *evs, size_t n) {
  if (p->feeder) feeder_give(p->feeder, evs, n);   /* the recorded side */
  else views_feed_block(p->measured, p->nmeasured, evs, n);
  if (p->jobs <= 1) {
    replay_share(p, 0, evs, n);
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->evs = evs;
  p->nevs = n;
  p->block++;
  p->busy = p->jobs - 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  replay_share(p, 0, evs, n);
  pthread_mutex_lock(&p->mu);
  while (p->busy) pthread_cond_wait(&p->cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

/* The feeder, when there are views to feed and it can start: the engines'
** observers then note their exits for it. */
static void start_feeder(struct pass *p) {
  bool simulated = false;
  for (unsigned i = 0; i < p->n; i++) simulated |= p->e[i].obs.exit == observe_exit;
  if (!p->nmeasured && !simulated) return;
  if (!(p->feeder = feeder_start(p->measured, p->nmeasured))) return;
  p->noted = xcalloc(p->n, sizeof *p->noted);
  for (unsigned i = 0; i < p->n; i++) {
    struct engine *e = &p->e[i];
    if (e->obs.exit != observe_exit) continue;
    p->noted[i] = (struct noted){ p->feeder, feeder_add_sink(p->feeder, e->obs.ctx), e->obs.ctx };
    e->obs = (struct engine_observer){ .exit = observe_exit_noted, .ctx = &p->noted[i] };
  }
}

/* Feeds the exits noted last, stops the feeder, and gives the views back to the observers. */
static void stop_feeder(struct pass *p) {
  if (!p->feeder) return;
  feeder_give(p->feeder, NULL, 0);
  feeder_wait(p->feeder);
  feeder_stop(p->feeder);
  p->feeder = NULL;
  for (unsigned i = 0; i < p->n; i++) {
    struct engine *e = &p->e[i];
    if (e->obs.exit != observe_exit_noted) continue;
    e->obs = (struct engine_observer){ .exit = observe_exit, .ctx = p->noted[i].w };
  }
  free(p->noted);
  p->noted = NULL;
}

/* Whether an engine has found that its run will be refused (engine_failure):
** the replay need not go on to the end of the trace to say so. */
static bool any_refused(const struct pass *p) {
  for (unsigned i = 0; i < p->n; i++)
    if (engine_failure(&p->e[i])) return true;
  return false;
}

/* Replays the trace on every engine; false from progress stops it, and so
** does a run that will be refused.  0 or EXIT_BADINPUT (a bad record or a
** refused run: message in r->err). */
static int replay_pass(struct pass *p, const struct run_set *s, struct trace_reader *r) {
  const struct trace_event *evs;
  size_t n;
  struct engine *first = &p->e[0];
  int rc = EXIT_OK;
  start_helpers(p);
  start_feeder(p);
  while ((n = trace_next_block(r, &evs, engine_block_limit(first))) > 0) {
    replay_block(p, evs, n);
    if (any_refused(p)) break;
    if (!engine_at_progress_point(first)) continue;
    for (unsigned i = 0; i < p->n; i++) engine_settle(&p->e[i]);
    bool go = s->progress ? s->progress(first, r, s->progress_arg) : !interrupt_requested();
    if (!go) break;
  }
  if (trace_failed(r)) rc = EXIT_BADINPUT;
  stop_feeder(p);
  stop_helpers(p);
  for (unsigned i = 0; i < p->n; i++) engine_settle(&p->e[i]);
  for (unsigned i = 0; i < p->n && !rc; i++)
    if (engine_refuse(&p->e[i], r)) rc = EXIT_BADINPUT;
  return rc;
}

/* ---- configurations ---- */

struct config {
  struct policy pol;
  struct profile prof;
  bool prof_loaded;
  unsigned engine, ledger;    /* where it is replayed: configurations of one policy share an engine */
};

/* A time series asked for in microseconds must be at least one cycle wide at
** each profile's clock, not dropped. */
static int check_interval(const struct run_views *v, const struct config *cfg, unsigned n, char *err, size_t errlen) {
  for (unsigned i = 0; i < n && v->interval_us > 0 && !v->interval_events; i++)
    if (interval_width(v, &cfg[i].prof) == 0) {
      snprintf(err, errlen, "--interval %gus is less than one cycle at CPU profile %s's clock (%g GHz): give a "
               "longer interval", v->interval_us, cfg[i].prof.name, cfg[i].prof.clock_ghz);
      return EXIT_USAGE;
    }
  return EXIT_OK;
}

static bool same_policy(const struct run_config *a, const struct run_config *b) {
  if (strcmp(a->policy, b->policy) != 0 || a->nsets != b->nsets) return false;
  for (int i = 0; i < a->nsets; i++)
    if (strcmp(a->sets[i], b->sets[i]) != 0) return false;
  return true;
}

/* Groups the configurations by policy: one engine each, priced at every
** profile of the group (the model's behaviour does not depend on prices).
** Not with views: the simulated views see each exit at one profile's prices.
** Returns the number of engines. */
static unsigned group_configs(const struct run_set *s, struct config *cfg, bool views) {
  unsigned engines = 0;
  for (unsigned i = 0; i < s->nconfigs; i++) {
    unsigned j = 0;
    while (j < i && (views || !same_policy(&s->configs[j], &s->configs[i]))) j++;
    if (j == i) {
      cfg[i].engine = engines++;
      cfg[i].ledger = 0;
      continue;
    }
    cfg[i].engine = cfg[j].engine;
    cfg[i].ledger = 0;
    for (unsigned k = 0; k < i; k++) if (cfg[k].engine == cfg[i].engine) cfg[i].ledger++;
  }
  return engines;
}

static void name_config(char *err, size_t errlen, const struct run_set *s, unsigned i) {
  if (s->nconfigs <= 1) return;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", err);
  const struct run_config *c = &s->configs[i];
  snprintf(err, errlen, "%s (policy %s, cpu %s)", msg, c->policy ? c->policy : "", c->cpu ? c->cpu : PROFILE_DEFAULT);
}

static int resolve_config(struct config *c, const struct run_config *rc_, unsigned input_flags, char *err,
                          size_t errlen) {
  int rc = policy_resolve_flags(&c->pol, rc_->policy, rc_->sets, rc_->nsets, input_flags, err, errlen);
  if (rc) return rc;
  c->prof_loaded = true;
  return profile_load_flags(&c->prof, rc_->cpu ? rc_->cpu : PROFILE_DEFAULT, input_flags, err, errlen);
}

void run_name_capable_profiles(const struct policy *pol, unsigned vcpus, unsigned paging, char *err, size_t errlen) {
  char names[256] = "";
  struct engine *e = xmalloc(sizeof *e);
  for (const char *const *n = profile_names(); *n; n++) {
    struct profile pr;
    char why[512];
    if (profile_load(&pr, *n, why, sizeof why) == EXIT_OK &&
        engine_init(e, pol, &pr, vcpus, paging, why, sizeof why) == EXIT_OK) {
      engine_free(e);
      size_t used = strlen(names);
      snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", *n);
    }
    profile_free(&pr);
  }
  free(e);
  size_t used = strlen(err);
  if (names[0]) snprintf(err + used, errlen - used, "; the built-in CPU profiles that take it: %s (--cpu NAME)", names);
  else snprintf(err + used, errlen - used, "; no built-in CPU profile takes it");
}

/* Sets every engine up, each with the profiles of its configurations; on a
** failure frees those set up before it. */
static int init_engines(struct pass *p, struct config *cfg, const struct run_set *s, const struct trace_reader *r,
                        char *err, size_t errlen) {
  unsigned done = 0;
  int rc = EXIT_OK;
  for (unsigned i = 0; i < s->nconfigs && !rc; i++) {
    struct engine *e = &p->e[cfg[i].engine];
    if (cfg[i].ledger == 0) {
      rc = engine_init(e, &cfg[i].pol, &cfg[i].prof, r->hdr.vcpu_count, r->hdr.paging, err, errlen);
      if (!rc) done++;
      else if (rc == EXIT_VMENTRY) run_name_capable_profiles(&cfg[i].pol, r->hdr.vcpu_count, r->hdr.paging, err, errlen);
    } else {
      rc = engine_add_profile(e, &cfg[i].prof, err, errlen);
    }
    if (rc && rc != EXIT_VMENTRY) name_config(err, errlen, s, i);   /* a VM-entry message names both already */
  }
  if (rc)
    for (unsigned i = 0; i < done; i++) engine_free(&p->e[i]);
  return rc;
}

/* The recording's exits that have no measured time (report.h), from the
** counts its importer wrote; 0 for a trace that has none. */
static int unmeasured_exits(const struct trace_reader *r, const char *path, uint64_t *out, char *err, size_t errlen) {
  double exits, measured;
  const char *meta = r->hdr.metadata;
  if (trace_meta_number(meta, path, "exits", &trace_meta_count, 0, &exits, err, errlen) ||
      trace_meta_number(meta, path, "measured", &trace_meta_count, 0, &measured, err, errlen))
    return EXIT_BADINPUT;
  *out = exits > measured ? (uint64_t)(exits - measured) : 0;
  return EXIT_OK;
}

static int replay_configs(const struct run_set *s, struct run_output *out, struct config *cfg, char *err, size_t errlen) {
  unsigned n = s->nconfigs;
  struct trace_reader r;
  int rc = s->open ? s->open(&r, s->open_arg) : trace_open_flags(&r, s->trace, s->input_flags);
  if (rc) {
    snprintf(err, errlen, "%s", r.err);
    return rc;
  }
  bool views = s->views.views || r.hdr.version >= 2;
  unsigned nengines = group_configs(s, cfg, views);
  struct pass p = { .e = xcalloc(nengines, sizeof *p.e), .n = nengines, .jobs = s->jobs,
                    .stepwise = r.hdr.version >= 2, .measured = xcalloc(n, sizeof *p.measured) };
  double seconds = 0;
  rc = check_interval(&s->views, cfg, n, err, errlen);
  if (!rc) rc = init_engines(&p, cfg, s, &r, err, errlen);
  if (!rc) {
    for (unsigned i = 0; i < n && views; i++) {     /* one engine per configuration then */
      start_views(&s->views, &r.hdr, &cfg[i].prof, &p.e[cfg[i].engine], &out[i]);
      /* every configuration's measured views are the same: one is fed, the others copy it */
      if (out[i].measured && !p.nmeasured) p.measured[p.nmeasured++] = out[i].measured;
    }
    if (s->hash_trace) trace_hash_start(&r);
    else trace_hash_skip(&r);
    double t0 = monotonic_seconds();
    rc = replay_pass(&p, s, &r);
    for (unsigned i = 0; i < n && p.nmeasured; i++)
      if (out[i].measured && out[i].measured != p.measured[0]) {
        views_free(out[i].measured);
        views_copy(out[i].measured, p.measured[0]);
      }
    seconds = monotonic_seconds() - t0;
    if (rc) snprintf(err, errlen, "%s", r.err);
  }
  uint64_t unmeasured = 0;
  if (!rc) rc = unmeasured_exits(&r, s->trace, &unmeasured, err, errlen);
  for (unsigned i = 0; i < n; i++) {
    out[i].wall_seconds = seconds;
    out[i].rep.unmeasured_exits = unmeasured;
    report_undecided_from_meta(&out[i].rep, r.hdr.metadata);
    out[i].metadata = xstrdup(r.hdr.metadata ? r.hdr.metadata : "");
    out[i].trace_events = r.hdr.event_count;
  }
  char hash[sizeof out->rep.trace_hash] = "";
  bool interrupted = !rc && !trace_done(&r);
  /* a stream cannot be read again to hash it for the results database */
  if (!rc && !interrupted && !trace_hash_hex(&r, hash)) hash[0] = 0;
  for (unsigned i = 0; i < n && !rc; i++) {
    out[i].interrupted = interrupted;
    report_ledger(&out[i].rep, s->trace, &r.hdr, &cfg[i].pol, &cfg[i].prof, &p.e[cfg[i].engine], cfg[i].ledger);
    snprintf(out[i].rep.trace_hash, sizeof out[i].rep.trace_hash, "%s", hash);
    out[i].rep.show_views = s->views.views;
    keep_views(&out[i], s->views.views || s->views.interval || s->views.interval_us > 0);
    rc = name_vcpu_rows(&out[i].rep, out[i].metadata, s->trace ? s->trace : "-", err, errlen);
  }
  if (p.e[0].vcpu)
    for (unsigned i = 0; i < nengines; i++) engine_free(&p.e[i]);
  free(p.e);
  free(p.measured);
  trace_close(&r);
  return rc;
}

int run_traces(const struct run_set *s, struct run_output *out, char *err, size_t errlen) {
  unsigned n = s->nconfigs;
  memset(out, 0, n * sizeof *out);
  struct config *cfg = xcalloc(n, sizeof *cfg);
  int rc = EXIT_OK;
  unsigned i;
  for (i = 0; i < n && !rc; i++)
    if ((rc = resolve_config(&cfg[i], &s->configs[i], s->input_flags, err, errlen))) name_config(err, errlen, s, i);
  if (!rc) {
    rc = replay_configs(s, out, cfg, err, errlen);
    for (unsigned k = 0; k < n; k++) {
      out[k].policy_json = policy_to_json(&cfg[k].pol);
      out[k].profile_json = cfg[k].prof.json ? xstrdup(cfg[k].prof.json) : NULL;
    }
  }
  for (unsigned k = 0; k < i; k++)
    if (cfg[k].prof_loaded) profile_free(&cfg[k].prof);
  free(cfg);
  return rc;
}

int run_trace(const struct run_spec *spec, struct run_output *out, char *err, size_t errlen) {
  struct run_set s = { .trace = spec->trace, .configs = &spec->config, .nconfigs = 1, .hash_trace = spec->hash_trace,
                       .input_flags = spec->input_flags, .progress = spec->progress,
                       .progress_arg = spec->progress_arg, .views = spec->views };
  return run_traces(&s, out, err, errlen);
}

void run_output_free(struct run_output *o) {
  struct views *v[2] = { o->measured, o->simulated };
  for (int i = 0; i < 2; i++)
    if (v[i]) { views_free(v[i]); free(v[i]); }
  o->measured = o->simulated = NULL;
  report_free(&o->rep);
  free(o->policy_json);
  free(o->profile_json);
  free(o->metadata);
  o->policy_json = o->profile_json = o->metadata = NULL;
}
