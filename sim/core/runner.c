/* One replay from names to a report (see runner.h). */
#include "runner.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct progress_ctx {
  const struct run_spec *spec;
  const struct trace_reader *r;
};

/* Without a progress callback a run still stops when interrupt_catch()'s
** handler saw Ctrl-C. */
static bool progress_shim(struct engine *e, void *arg) {
  const struct progress_ctx *c = arg;
  if (!c->spec->progress) return !interrupt_requested();
  return c->spec->progress(e, c->r, c->spec->progress_arg);
}

void run_report(struct report *rep, const char *trace, const struct trace_header *hdr, const struct policy *p,
                const struct profile *pr, const struct engine *e) {
  snprintf(rep->trace, sizeof rep->trace, "%s", trace);
  snprintf(rep->workload, sizeof rep->workload, "%s", hdr->workload);
  snprintf(rep->policy, sizeof rep->policy, "%s", p->name);
  snprintf(rep->cpu, sizeof rep->cpu, "%s", pr->name);
  snprintf(rep->paging, sizeof rep->paging, "%s", paging_name(hdr->paging) ? paging_name(hdr->paging) : "?");
  rep->vcpus = hdr->vcpu_count;
  rep->clock_ghz = pr->clock_ghz;
  report_from_stats(rep, &e->st);
  rep->elapsed_cycles = engine_elapsed(e);
}

/* The engine's observer: each simulated exit into the simulated views. */
static void observe_exit(void *ctx, const struct engine *e, const struct engine_exit_info *x) {
  struct views *w = ctx;
  w->events = e->st.events;
  views_add(w, x->vcpu, x->reason, x->cause, e->vcpu[x->vcpu].guest_cr3, e->vcpu_cycles[x->vcpu], x->cycles);
}

/* engine_run with the recorded side fed too: every record to the measured views. */
static int run_with_views(struct engine *e, struct trace_reader *r, struct views *meas, struct progress_ctx *ctx) {
  const struct trace_event *ev;
  while ((ev = trace_next(r)) != NULL) {
    views_feed(meas, ev);
    engine_step(e, ev);
    if ((e->index & ((1u << 22) - 1)) == 0 && !progress_shim(e, ctx)) return EXIT_OK;
  }
  return trace_failed(r) ? EXIT_BADINPUT : EXIT_OK;
}

/* The views a run keeps: the measured ones only when the recording has exits. */
#define RUN_VIEWS_CR3_ROWS 64
static void keep_views(struct run_output *o) {
  if (o->measured && !views_any(o->measured)) {
    views_free(o->measured);
    free(o->measured);
    o->measured = NULL;
  }
  if (o->measured) views_append_all(o->measured, VS_MEASURED, RUN_VIEWS_CR3_ROWS, &o->rep.vrows, &o->rep.nvrows);
  if (o->simulated) views_append_all(o->simulated, VS_SIMULATED, RUN_VIEWS_CR3_ROWS, &o->rep.vrows, &o->rep.nvrows);
}

static int replay(const struct run_spec *s, struct run_output *o, const struct policy *pol,
                  const struct profile *prof, struct trace_reader *r, char *err, size_t errlen) {
  struct engine e;
  int rc = engine_init(&e, pol, prof, r->hdr.vcpu_count, r->hdr.paging, err, errlen);
  if (rc) return rc;
  struct progress_ctx ctx = { s, r };
  uint64_t width = s->interval_events ? s->interval : (uint64_t)(s->interval_us * prof->clock_ghz * 1e3 + 0.5);
  if (s->views || r->hdr.version >= 2) {
    o->simulated = xmalloc(sizeof *o->simulated);
    views_init(o->simulated, s->one_vcpu ? (int)s->vcpu : -1, width, s->interval_events);
    e.obs = (struct engine_observer){ .exit = observe_exit, .ctx = o->simulated };
  }
  if (r->hdr.version >= 2) {      /* only version 2 can carry measured exits */
    o->measured = xmalloc(sizeof *o->measured);
    views_init(o->measured, s->one_vcpu ? (int)s->vcpu : -1, s->interval_events ? s->interval : 0, s->interval_events);
  }
  double t0 = monotonic_seconds();
  rc = o->measured ? run_with_views(&e, r, o->measured, &ctx) : engine_run(&e, r, progress_shim, &ctx);
  o->wall_seconds = monotonic_seconds() - t0;
  o->interrupted = !rc && e.index < r->hdr.event_count;
  if (rc) {
    snprintf(err, errlen, "%s", r->err);
  } else {
    run_report(&o->rep, s->trace, &r->hdr, pol, prof, &e);
    o->rep.show_views = s->views;
    keep_views(o);
  }
  engine_free(&e);
  return rc;
}

int run_trace(const struct run_spec *s, struct run_output *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  struct policy pol;
  struct profile prof;
  int rc = policy_resolve(&pol, s->policy, s->sets, s->nsets, err, errlen);
  if (rc) return rc;
  if ((rc = profile_load(&prof, s->cpu ? s->cpu : PROFILE_DEFAULT, err, errlen))) {
    profile_free(&prof);
    return rc;
  }
  struct trace_reader r;
  if ((rc = trace_open(&r, s->trace))) {
    snprintf(err, errlen, "%s", r.err);
  } else {
    rc = replay(s, o, &pol, &prof, &r, err, errlen);
    o->metadata = xstrdup(r.hdr.metadata ? r.hdr.metadata : "");
    o->trace_events = r.hdr.event_count;
    trace_close(&r);
  }
  o->policy_json = policy_to_json(&pol);
  o->profile_json = prof.json ? xstrdup(prof.json) : NULL;
  profile_free(&prof);
  return rc;
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
