/* One replay from names to a report (see runner.h). */
#include "runner.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct progress_ctx {
  const struct run_spec *spec;
  const struct trace_reader *r;
};

static bool progress_shim(struct engine *e, void *arg) {
  const struct progress_ctx *c = arg;
  return c->spec->progress(e, c->r, c->spec->progress_arg);
}

static void fill_identity(struct report *rep, const struct run_spec *s, const struct trace_reader *r,
                          const struct policy *p, const struct profile *pr) {
  snprintf(rep->trace, sizeof rep->trace, "%s", s->trace);
  snprintf(rep->workload, sizeof rep->workload, "%s", r->hdr.workload);
  snprintf(rep->policy, sizeof rep->policy, "%s", p->name);
  snprintf(rep->cpu, sizeof rep->cpu, "%s", pr->name);
  snprintf(rep->paging, sizeof rep->paging, "%s", paging_name(r->hdr.paging));
  rep->vcpus = r->hdr.vcpu_count;
  rep->clock_ghz = pr->clock_ghz;
}

static int replay(const struct run_spec *s, struct run_output *o, const struct policy *pol,
                  const struct profile *prof, struct trace_reader *r, char *err, size_t errlen) {
  struct engine e;
  if (!engine_init(&e, pol, prof, r->hdr.vcpu_count, r->hdr.paging, err, errlen))
    return strstr(err, "VM entry") ? EXIT_VMENTRY : EXIT_USAGE;
  struct progress_ctx ctx = { s, r };
  double t0 = monotonic_seconds();
  bool ok = engine_run(&e, r, s->progress ? progress_shim : NULL, &ctx);
  o->wall_seconds = monotonic_seconds() - t0;
  o->interrupted = ok && e.index < r->hdr.event_count;
  int rc = EXIT_OK;
  if (!ok) {
    snprintf(err, errlen, "%s", r->err);
    rc = EXIT_BADINPUT;
  } else {
    fill_identity(&o->rep, s, r, pol, prof);
    report_from_stats(&o->rep, &e.st);
    o->rep.elapsed_cycles = engine_elapsed(&e);
  }
  engine_free(&e);
  return rc;
}

int run_trace(const struct run_spec *s, struct run_output *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  struct policy pol;
  struct profile prof;
  if (!policy_resolve(&pol, s->policy, s->sets, s->nsets, err, errlen)) return EXIT_USAGE;
  if (!profile_load(&prof, s->cpu ? s->cpu : PROFILE_DEFAULT, err, errlen)) {
    profile_free(&prof);
    return strstr(err, "unknown CPU") ? EXIT_USAGE : EXIT_BADINPUT;
  }
  struct trace_reader r;
  int rc = EXIT_BADINPUT;
  if (trace_open(&r, s->trace) != TRACE_OK) {
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
  free(o->policy_json);
  free(o->profile_json);
  free(o->metadata);
  o->policy_json = o->profile_json = o->metadata = NULL;
}
