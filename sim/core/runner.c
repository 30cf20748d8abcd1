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

static int replay(const struct run_spec *s, struct run_output *o, const struct policy *pol,
                  const struct profile *prof, struct trace_reader *r, char *err, size_t errlen) {
  struct engine e;
  int rc = engine_init(&e, pol, prof, r->hdr.vcpu_count, r->hdr.paging, err, errlen);
  if (rc) return rc;
  struct progress_ctx ctx = { s, r };
  double t0 = monotonic_seconds();
  rc = engine_run(&e, r, progress_shim, &ctx);
  o->wall_seconds = monotonic_seconds() - t0;
  o->interrupted = !rc && e.index < r->hdr.event_count;
  if (rc) {
    snprintf(err, errlen, "%s", r->err);
  } else {
    run_report(&o->rep, s->trace, &r->hdr, pol, prof, &e);
    if (!o->interrupted) trace_hash(r, o->rep.trace_hash);
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
    if (s->hash_trace) trace_hash_start(&r);
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
  free(o->policy_json);
  free(o->profile_json);
  free(o->metadata);
  o->policy_json = o->profile_json = o->metadata = NULL;
}
