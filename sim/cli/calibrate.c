/* Fitting a CPU profile to a recording's measured exit costs (calibrate.h). */
#include "calibrate.h"
#include "sim/config/data.h"
#include "sim/trace/hash.h"
#include "sim/config/profile.h"
#include "sim/replay/runner.h"
#include "sim/base/util.h"
#include "sim/replay/views.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* What the fit works from: the replay on the base profile and the recording's rows. */
struct fitctx {
  const struct calibrate_opts *o;
  struct calibrate_result *r;
  struct run_output out;
  struct profile base;
  struct view_stat *meas;
  unsigned nmeas;
  cJSON *params;
  uint64_t roundtrip;          /* the round trip the handlers are fitted against */
  const char *name;            /* the recording as the user named it */
};

/* The recording's row of stat key k: its reason, or its CR/DR breakdown row. */
static const struct view_stat *measured_row(const struct fitctx *c, unsigned k) {
  for (unsigned i = 0; i < c->nmeas; i++) {
    const struct view_stat *v = &c->meas[i];
    if (k < STAT_CR_BASE ? v->dim == VD_REASON && v->reason == k
                         : (v->dim == VD_CR || v->dim == VD_DR) && strcmp(v->name, stat_key_name(k)) == 0)
      return v;
  }
  return NULL;
}

/* The replay's row of stat key k. */
static const struct report_row *simulated_row(const struct fitctx *c, unsigned k) {
  const struct report *rep = &c->out.rep;
  for (unsigned i = 0; i < rep->nrows; i++) {
    const struct report_row *r = &rep->rows[i];
    if (k < STAT_CR_BASE ? !r->parent[0] && r->reason == k : r->parent[0] && strcmp(r->name, stat_key_name(k)) == 0)
      return r->count ? r : NULL;
  }
  return NULL;
}

static void param_name(unsigned k, char *buf, size_t n) {
  if (k < STAT_CR_BASE) snprintf(buf, n, "handler.%s", exit_reason_name(k));
  else snprintf(buf, n, "handler.%s.%s", exit_reason_name(k < STAT_DR_BASE ? EXIT_REASON_CR_ACCESS
                                                                         : EXIT_REASON_DR_ACCESS), stat_key_name(k));
}

/* The modelled work of one exit of key k on the base profile: its simulated
** average less the base's round trip and handler. */
static double work_of(const struct fitctx *c, unsigned k, const struct report_row *s) {
  return (double)s->cycles / (double)s->count - (double)c->base.handler[k] - (double)c->base.p[PP_VM_ROUNDTRIP];
}

/* A parameter entry of the new profile: replaces the base's or adds one. */
static void set_entry(struct fitctx *c, const char *param, uint64_t value, const char *kind, const char *source,
                      const struct view_stat *m) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "value", (double)value);
  cJSON_AddStringToObject(e, "kind", kind);
  cJSON_AddStringToObject(e, "source", source);
  if (m) {
    cJSON_AddNumberToObject(e, "samples", (double)m->count);
    cJSON *sp = cJSON_AddObjectToObject(e, "spread");
    cJSON_AddNumberToObject(sp, "stddev", round(m->stddev * 10) / 10);
    cJSON_AddNumberToObject(sp, "p5", (double)m->p5);
    cJSON_AddNumberToObject(sp, "p50", (double)m->p50);
    cJSON_AddNumberToObject(sp, "p95", (double)m->p95);
  }
  if (cJSON_GetObjectItemCaseSensitive(c->params, param)) cJSON_ReplaceItemInObjectCaseSensitive(c->params, param, e);
  else cJSON_AddItemToObject(c->params, param, e);
}

static struct calibrate_fit *new_fit(struct fitctx *c, const char *param, uint64_t base, const struct view_stat *m,
                                     const struct report_row *s) {
  struct calibrate_fit *f = &c->r->fits[c->r->nfits++];
  snprintf(f->param, sizeof f->param, "%s", param);
  f->base = f->value = base;
  f->samples = m ? m->count : 0;
  f->measured_avg = m ? m->avg : 0;
  f->stddev = m ? m->stddev : 0;
  f->simulated_avg_before = s && s->count ? (s->cycles + s->count / 2) / s->count : 0;
  return f;
}

static void keep_base(struct fitctx *c, const char *param, uint64_t value, const struct view_stat *m,
                      const struct report_row *s) {
  new_fit(c, param, value, m, s);
  const cJSON *old = cJSON_GetObjectItemCaseSensitive(c->params, param);
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(old ? old : cJSON_GetObjectItemCaseSensitive(c->params, "handler.default"), "kind");
  char src[512];
  snprintf(src, sizeof src, "the base profile %s's value, kept: only %llu measured exits in %s (xxh64 %s, %s), "
           "fewer than %u", c->base.name, (unsigned long long)(m ? m->count : 0), c->name, c->r->hash,
           c->r->date, c->o->min_samples);
  set_entry(c, param, value, cJSON_IsString(kind) ? kind->valuestring : "estimated", src, m);
}

static void fitted(struct fitctx *c, const char *param, double value, const struct view_stat *m,
                   const struct report_row *s, uint64_t base, const char *how) {
  struct calibrate_fit *f = new_fit(c, param, base, m, s);
  f->fitted = true;
  f->clamped = value < 0;
  f->value = value < 0 ? 0 : (uint64_t)(value + 0.5);
  char src[640];
  snprintf(src, sizeof src, "vmxsim calibrate from %s (xxh64 %s, %s) under policy %s on %s: %llu exits, "
           "measured mean %llu cycles (stddev %.0f, p5 %llu, p95 %llu); %s%s", c->name, c->r->hash,
           c->r->date, c->o->policy, c->base.name, (unsigned long long)m->count, (unsigned long long)m->avg,
           m->stddev, (unsigned long long)m->p5, (unsigned long long)m->p95, how,
           f->clamped ? "; negative, so 0 (the measured exit is cheaper than the modelled round trip and work)" : "");
  set_entry(c, param, f->value, "measured", src, m);
}

/* The round trip from the CPUID exits, when there are enough of them. */
static void fit_roundtrip(struct fitctx *c) {
  const struct view_stat *m = measured_row(c, EXIT_REASON_CPUID);
  const struct report_row *s = simulated_row(c, EXIT_REASON_CPUID);
  uint64_t rt = c->base.p[PP_VM_ROUNDTRIP], h = c->base.handler[EXIT_REASON_CPUID];
  c->roundtrip = rt;
  if (!m || !s || m->count < c->o->min_samples || rt + h == 0) {
    keep_base(c, "vm_roundtrip", rt, m, s);
    return;
  }
  double total = (double)m->avg - work_of(c, EXIT_REASON_CPUID, s);
  double fit_rt = total * (double)rt / (double)(rt + h);
  fitted(c, "vm_roundtrip", fit_rt, m, s, rt, "the CPUID exit (the lightest, as in kvm-unit-tests' vmexit test) "
         "less its modelled work, the round trip's share as in the base profile");
  c->roundtrip = c->r->fits[c->r->nfits - 1].value;
  char how[160];
  snprintf(how, sizeof how, "the CPUID exit less its modelled work and the fitted round trip of %llu cycles",
           (unsigned long long)c->roundtrip);
  fitted(c, "handler.CPUID", total - (double)c->roundtrip, m, s, h, how);
}

/* Each other stat key the replay charged: the handler cost that makes its average the measured one. */
static void fit_handlers(struct fitctx *c) {
  for (unsigned k = 0; k < STAT_KEYS; k++) {
    if (k == EXIT_REASON_CPUID || k == EXIT_REASON_CR_ACCESS || k == EXIT_REASON_DR_ACCESS) continue;
    const struct report_row *s = simulated_row(c, k);
    if (!s) continue;                          /* the replay has no such exit: nothing to fit */
    const struct view_stat *m = measured_row(c, k);
    char param[64];
    param_name(k, param, sizeof param);
    if (!m || m->count < c->o->min_samples) { keep_base(c, param, c->base.handler[k], m, s); continue; }
    char how[200];
    snprintf(how, sizeof how, "less the round trip of %llu and %.0f cycles of modelled work per exit",
             (unsigned long long)c->roundtrip, work_of(c, k, s));
    fitted(c, param, (double)m->avg - (double)c->roundtrip - work_of(c, k, s), m, s, c->base.handler[k], how);
  }
}

/* The measured reasons with no simulated exit: left unfitted, and said so. */
static void find_unmatched(struct fitctx *c) {
  struct calibrate_result *r = c->r;
  for (unsigned i = 0; i < c->nmeas; i++) {
    const struct view_stat *m = &c->meas[i];
    if (m->dim != VD_REASON || m->reason >= STAT_CR_BASE || simulated_row(c, m->reason)) continue;
    if (r->nunmatched < sizeof r->unmatched / sizeof *r->unmatched) {
      r->unmatched[r->nunmatched].reason = m->reason;
      r->unmatched[r->nunmatched++].count = m->count;
    }
  }
}

static void identify_recording(struct fitctx *c) {
  char why[256];
  if (hash_file(c->name, c->r->hash, why, sizeof why) != 0) snprintf(c->r->hash, sizeof c->r->hash, "?");
  struct stat st;
  if (stat(c->name, &st) == 0) {
    struct tm tm;
    gmtime_r(&st.st_mtime, &tm);
    strftime(c->r->date, sizeof c->r->date, "%Y-%m-%d %H:%M UTC", &tm);
  }
}

static void describe(struct fitctx *c, cJSON *j) {
  char desc[512];
  cJSON_DeleteItemFromObjectCaseSensitive(j, "name");
  cJSON_DeleteItemFromObjectCaseSensitive(j, "description");
  cJSON_DeleteItemFromObjectCaseSensitive(j, "calibration");
  snprintf(desc, sizeof desc, "%s fitted by vmxsim calibrate to the exit costs measured in %s (policy %s)",
           c->base.name, c->name, c->o->policy);
  cJSON_AddStringToObject(j, "name", c->o->name ? c->o->name : "calibrated");
  cJSON_AddStringToObject(j, "description", desc);
  cJSON *cal = cJSON_AddObjectToObject(j, "calibration");
  cJSON_AddStringToObject(cal, "recording", c->name);
  cJSON_AddStringToObject(cal, "hash", c->r->hash);
  cJSON_AddStringToObject(cal, "date", c->r->date);
  cJSON_AddStringToObject(cal, "base", c->base.name);
  cJSON_AddStringToObject(cal, "policy", c->o->policy);
  cJSON_AddNumberToObject(cal, "min_samples", c->o->min_samples);
}

int calibrate(const struct calibrate_opts *o, struct calibrate_result *r, char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  struct fitctx c = { .o = o, .r = r, .name = o->source ? o->source : o->recording };
  struct run_spec spec = { .trace = o->recording, .config = { o->policy, o->base, o->sets, o->nsets },
                           .views = { .views = true } };
  cJSON *j = NULL;
  int rc = run_trace(&spec, &c.out, err, errlen);
  if (!rc && !c.out.measured) {
    snprintf(err, errlen, "%s: no measured exits to fit: give a KVM or Xen recording, or a trace imported "
             "from one (vmxsim import kvm-ftrace|xentrace|trace-cmd)", c.name);
    rc = EXIT_BADINPUT;
  }
  if (!rc) rc = profile_load(&c.base, o->base, err, errlen);
  if (!rc) rc = data_load("cpus", o->base, &j, err, errlen);
  if (!rc) {
    identify_recording(&c);
    c.nmeas = views_stats(c.out.measured, VD_REASON, true, SORT_REASON, &c.meas);
    c.params = cJSON_GetObjectItemCaseSensitive(j, "params");
    fit_roundtrip(&c);
    fit_handlers(&c);
    find_unmatched(&c);
    describe(&c, j);
    r->profile = j;
    j = NULL;
  }
  cJSON_Delete(j);
  free(c.meas);
  profile_free(&c.base);
  run_output_free(&c.out);
  return rc;
}
