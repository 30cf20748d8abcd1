/* The policies and CPU profiles of a sweep plan: each policy resolved for
** every combination of its knobs, and each profile loaded, when the plan is
** read, so that a bad spec, knob or profile is refused before any run and a
** run's policy and CPU are known by their JSON and hash. */
#include "plan_int.h"
#include "sim/trace/hash.h"
#include "sim/config/profile.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- policies ---- */

/* A policy spec whose file parts ("a/b.json") are resolved against dir. */
static char *resolve_spec(const char *dir, const char *spec) {
  size_t cap = strlen(spec) + 1, used = 0;
  char *out = xmalloc(cap);
  out[0] = 0;
  for (const char *s = spec;;) {
    const char *plus = strchr(s, '+');
    size_t n = plus ? (size_t)(plus - s) : strlen(s);
    char *part = xmalloc(n + 1);
    memcpy(part, s, n);
    part[n] = 0;
    char *r = n && plan_is_path(part) ? plan_resolve_path(dir, part) : xstrdup(part);
    cap += strlen(r) + 2;
    out = xrealloc(out, cap);
    used += (size_t)snprintf(out + used, cap - used, "%s%s", r, plus ? "+" : "");
    free(part);
    free(r);
    if (!plus) return out;
    s = plus + 1;
  }
}


static int check_knob_name(struct ctx *c, const char *name, const char *where, const void *arg) {
  struct policy scratch = *(const struct policy *)arg;
  char why[1024];
  if (policy_set(&scratch, name, "", why, sizeof why) && strstr(why, "unknown knob"))
    return plan_fail(c, EXIT_USAGE, where, "%s", why);
  return 0;
}

/* Checks each knob value on the policy as the spec alone gives it. */
static int check_knob_values(struct ctx *c, const struct plan_policy *pp, const struct policy *base, const char *where) {
  for (size_t k = 0; k < pp->nknobs; k++) {
    const struct plan_axis *a = &pp->knobs[k];
    for (size_t v = 0; v < a->nvalues; v++) {
      struct policy scratch = *base;
      char here[PLAN_WHERE_MAX], h2[PLAN_WHERE_MAX], why[1024];
      plan_at_key(h2, where, a->name);
      if (a->nvalues > 1) plan_at_index(here, h2, v);
      else snprintf(here, sizeof here, "%s", h2);
      if (policy_set(&scratch, a->name, a->values[v].text, why, sizeof why)) return plan_fail(c, EXIT_USAGE, here, "%s", why);
    }
  }
  return 0;
}

void plan_policy_sets(const struct plan_policy *pp, size_t combo, char ***sets, int *nsets) {
  *sets = xcalloc(pp->nknobs + 1, sizeof **sets);
  *nsets = (int)pp->nknobs;
  for (size_t k = 0; k < pp->nknobs; k++) {
    const struct plan_axis *a = &pp->knobs[k];
    const char *v = a->values[plan_axis_index(pp->knobs, pp->nknobs, combo, k)].text;
    size_t n = strlen(a->name) + strlen(v) + 2;
    (*sets)[k] = xmalloc(n);
    snprintf((*sets)[k], n, "%s=%s", a->name, v);
  }
}

void plan_argv_free(char **argv, int argc) {
  for (int i = 0; i < argc; i++) free(argv[i]);
  free(argv);
}

/* Resolves every knob combination of pp. */
static int resolve_combos(struct ctx *c, struct plan_policy *pp) {
  pp->resolved = xcalloc(pp->ncombos, sizeof *pp->resolved);
  pp->json = xcalloc(pp->ncombos, sizeof *pp->json);
  for (size_t i = 0; i < pp->ncombos; i++) {
    char **sets, why[1024];
    int nsets;
    plan_policy_sets(pp, i, &sets, &nsets);
    int rc = policy_resolve(&pp->resolved[i], pp->resolved_spec, sets, nsets, why, sizeof why);
    plan_argv_free(sets, nsets);
    if (rc) return plan_fail(c, rc == EXIT_BADINPUT ? EXIT_BADINPUT : EXIT_USAGE, pp->where, "%s", why);
    pp->json[i] = policy_to_json(&pp->resolved[i]);
  }
  return 0;
}

static int parse_policy(struct ctx *c, const cJSON *item, struct plan_policy *pp) {
  const cJSON *spec = item, *knobs = NULL;
  char spec_where[PLAN_WHERE_MAX], knobs_where[PLAN_WHERE_MAX];
  snprintf(spec_where, sizeof spec_where, "%s", pp->where);
  if (cJSON_IsObject(item)) {
    int rc = plan_check_keys(c, item, pp->where, (const char *const[]){ "policy", "knobs", NULL });
    if (rc) return rc;
    spec = cJSON_GetObjectItemCaseSensitive(item, "policy");
    knobs = cJSON_GetObjectItemCaseSensitive(item, "knobs");
    plan_at_key(spec_where, pp->where, "policy");
  }
  if (!cJSON_IsString(spec))
    return plan_fail(c, EXIT_USAGE, spec_where, "expected a policy (\"shadowcache+lazydr\") or {\"policy\": ..., \"knobs\": ...}");
  pp->spec = xstrdup(spec->valuestring);
  pp->resolved_spec = resolve_spec(c->p->dir, pp->spec);
  struct policy base;
  char why[1024];
  int rc = policy_resolve(&base, pp->resolved_spec, NULL, 0, why, sizeof why);
  if (rc) return plan_fail(c, rc == EXIT_BADINPUT ? EXIT_BADINPUT : EXIT_USAGE, spec_where, "%s", why);
  plan_at_key(knobs_where, pp->where, "knobs");
  rc = plan_parse_axes(c, knobs, knobs_where, &pp->knobs, &pp->nknobs, &pp->ncombos, check_knob_name, &base);
  if (!rc) rc = check_knob_values(c, pp, &base, knobs_where);
  if (!rc) rc = resolve_combos(c, pp);
  return rc;
}

int plan_parse_policies(struct ctx *c, const cJSON *arr) {
  if (!arr) return plan_fail(c, EXIT_USAGE, "$", "missing \"policies\": the policies to replay under");
  if (!cJSON_IsArray(arr)) return plan_fail(c, EXIT_USAGE, "$.policies", "expected a list");
  if (plan_array_size(arr) == 0) return plan_fail(c, EXIT_USAGE, "$.policies", "an empty list: the product of the plan has no runs");
  struct plan *p = c->p;
  p->policies = xcalloc(plan_array_size(arr), sizeof *p->policies);
  for (const cJSON *t = arr->child; t; t = t->next) {
    struct plan_policy *pp = &p->policies[p->npolicies++];
    plan_at_index(pp->where, "$.policies", p->npolicies - 1);
    pp->ncombos = 1;
    int rc = parse_policy(c, t, pp);
    if (rc) return rc;
  }
  return 0;
}

/* ---- CPU profiles ---- */

static int load_cpu(struct ctx *c, struct plan_cpu *pc) {
  struct profile pr;
  char why[1024];
  int rc = profile_load(&pr, pc->resolved_spec, why, sizeof why);
  if (rc == 0) {
    snprintf(pc->name, sizeof pc->name, "%s", pr.name);
    pc->json = xstrdup(pr.json ? pr.json : "");
    snprintf(pc->hash, sizeof pc->hash, "%016llx", (unsigned long long)xxh64(pc->json, strlen(pc->json)));
  }
  profile_free(&pr);
  return rc ? plan_fail(c, rc == EXIT_BADINPUT ? EXIT_BADINPUT : EXIT_USAGE, pc->where, "%s", why) : 0;
}

int plan_parse_cpus(struct ctx *c, const cJSON *arr) {
  struct plan *p = c->p;
  if (!arr) {   /* the default profile */
    p->cpus = xcalloc(1, sizeof *p->cpus);
    p->ncpus = 1;
    p->cpus[0].spec = xstrdup(PROFILE_DEFAULT);
    p->cpus[0].resolved_spec = xstrdup(PROFILE_DEFAULT);
    snprintf(p->cpus[0].where, sizeof p->cpus[0].where, "$.cpus (default)");
    return load_cpu(c, &p->cpus[0]);
  }
  if (!cJSON_IsArray(arr)) return plan_fail(c, EXIT_USAGE, "$.cpus", "expected a list of CPU profiles");
  if (plan_array_size(arr) == 0) return plan_fail(c, EXIT_USAGE, "$.cpus", "an empty list: the product of the plan has no runs");
  p->cpus = xcalloc(plan_array_size(arr), sizeof *p->cpus);
  for (const cJSON *t = arr->child; t; t = t->next) {
    struct plan_cpu *pc = &p->cpus[p->ncpus++];
    plan_at_index(pc->where, "$.cpus", p->ncpus - 1);
    if (!cJSON_IsString(t) || !*t->valuestring)
      return plan_fail(c, EXIT_USAGE, pc->where, "expected a CPU profile name or file");
    pc->spec = xstrdup(t->valuestring);
    pc->resolved_spec = plan_is_path(pc->spec) ? plan_resolve_path(p->dir, pc->spec) : xstrdup(pc->spec);
    int rc = load_cpu(c, pc);
    if (rc) return rc;
  }
  return 0;
}
