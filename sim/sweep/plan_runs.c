/* The run set of a sweep plan: the exclude rules, the expansion of the
** product of traces, policies and CPUs less what the rules exclude, and
** the shards that split the runs between machines.  Apart from the reading
** of the lists because this decides which runs exist and in which order,
** the order --shard counts in. */
#include "plan_int.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- exclude rules ---- */

static bool plan_has_param(const struct plan *p, const char *name) {
  char want[80], have[80];
  plan_option_of(name, want, sizeof want);
  for (size_t t = 0; t < p->ntraces; t++)
    for (size_t i = 0; i < p->traces[t].nparams; i++) {
      plan_option_of(p->traces[t].params[i].name, have, sizeof have);
      if (strcmp(want, have) == 0) return true;
    }
  return false;
}

static bool is_knob(const struct plan *p, const char *name) {
  struct policy scratch = p->policies[0].resolved[0];
  char why[1024];
  return !(policy_set(&scratch, name, "", why, sizeof why) && strstr(why, "unknown knob"));
}

/* What a rule's key names: a fixed key, a knob or a generator parameter. */
static int classify(struct ctx *c, const char *key, const char *where, struct plan_cond *cond) {
  static const struct { const char *name; enum plan_cond_kind kind; } fixed[] = {
    { "trace", COND_TRACE }, { "generator", COND_GENERATOR }, { "policy", COND_POLICY }, { "cpu", COND_CPU },
  };
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    if (!strcmp(key, fixed[i].name)) {
      cond->kind = fixed[i].kind;
      cond->key = xstrdup(key);
      return 0;
    }
  bool knob_form = !strncmp(key, "knobs.", 6), param_form = !strncmp(key, "params.", 7);
  const char *name = knob_form ? key + 6 : param_form ? key + 7 : key;
  bool knob = !param_form && is_knob(c->p, name), param = !knob_form && plan_has_param(c->p, name);
  if (knob && param)
    return plan_fail(c, EXIT_USAGE, where, "both a knob and a generator parameter: write knobs.%s or params.%s", name, name);
  if (!knob && !param)
    return plan_fail(c, EXIT_USAGE, where, "unknown key (expected trace, generator, policy, cpu, a policy knob or a "
                "parameter of the plan's generators)");
  cond->kind = knob ? COND_KNOB : COND_PARAM;
  cond->key = xstrdup(name);
  return 0;
}

static int parse_rule(struct ctx *c, const cJSON *obj, const char *where, struct plan_rule *r) {
  if (!cJSON_IsObject(obj) || !obj->child)
    return plan_fail(c, EXIT_USAGE, where, "expected an object of conditions, e.g. {\"policy\": \"ept\", \"cpu\": \"core2-2007\"}");
  r->conds = xcalloc(plan_array_size(obj), sizeof *r->conds);
  for (const cJSON *k = obj->child; k; k = k->next) {
    char here[PLAN_WHERE_MAX];
    plan_at_key(here, where, k->string);
    for (const cJSON *d = obj->child; d != k; d = d->next)
      if (strcmp(d->string, k->string) == 0) return plan_fail(c, EXIT_USAGE, here, "given twice");
    struct plan_cond *cond = &r->conds[r->nconds];
    int rc = classify(c, k->string, here, cond);
    r->nconds++;
    if (!rc) rc = plan_parse_values(c, k, here, &cond->values, &cond->nvalues);
    for (size_t v = 0; !rc && cond->kind == COND_KNOB && v < cond->nvalues; v++) {
      struct policy scratch = c->p->policies[0].resolved[0];
      char why[1024];
      if (policy_set(&scratch, cond->key, cond->values[v].text, why, sizeof why)) rc = plan_fail(c, EXIT_USAGE, here, "%s", why);
    }
    if (rc) return rc;
  }
  return 0;
}

int plan_parse_rules(struct ctx *c, const cJSON *arr) {
  if (!arr) return 0;
  if (!cJSON_IsArray(arr)) return plan_fail(c, EXIT_USAGE, "$.exclude", "expected a list of rules");
  struct plan *p = c->p;
  p->rules = xcalloc(plan_array_size(arr) + 1, sizeof *p->rules);
  for (const cJSON *r = arr->child; r; r = r->next) {
    char here[PLAN_WHERE_MAX];
    plan_at_index(here, "$.exclude", p->nrules);
    int rc = parse_rule(c, r, here, &p->rules[p->nrules++]);
    if (rc) return rc;
  }
  return 0;
}

/* ---- the run set ---- */

static bool value_in(const struct plan_cond *cond, const char *text) {
  for (size_t v = 0; v < cond->nvalues; v++)
    if (strcmp(cond->values[v].text, text) == 0) return true;
  return false;
}

static bool trace_matches(const struct plan_trace *t, size_t combo, const struct plan_cond *cond) {
  switch (cond->kind) {
  case COND_TRACE: return t->file && value_in(cond, t->file);
  case COND_GENERATOR: return t->generator && value_in(cond, t->generator);
  case COND_PARAM: {
    char want[80], have[80];
    plan_option_of(cond->key, want, sizeof want);
    for (size_t i = 0; i < t->nparams; i++) {
      plan_option_of(t->params[i].name, have, sizeof have);
      if (strcmp(want, have) == 0)
        return value_in(cond, t->params[i].values[plan_axis_index(t->params, t->nparams, combo, i)].text);
    }
    return false;
  }
  default: return true;
  }
}

/* A knob condition holds when setting the knob to one of its values changes nothing. */
static bool policy_matches(const struct plan_policy *pp, size_t combo, const struct plan_cond *cond) {
  if (cond->kind == COND_POLICY) return value_in(cond, pp->spec);
  if (cond->kind != COND_KNOB) return true;
  for (size_t v = 0; v < cond->nvalues; v++) {
    struct policy scratch = pp->resolved[combo];
    char why[1024];
    if (policy_set(&scratch, cond->key, cond->values[v].text, why, sizeof why)) continue;
    char *j = policy_to_json(&scratch);
    bool same = strcmp(j, pp->json[combo]) == 0;
    free(j);
    if (same) return true;
  }
  return false;
}

/* Per rule, which trace, policy and cpu instances it matches; a run is
** excluded when some rule matches all three of its instances. */
struct rule_masks {
  bool *trace, *policy, *cpu;
};

static size_t count_instances(const struct plan *p, bool traces) {
  size_t n = 0;
  if (traces) for (size_t t = 0; t < p->ntraces; t++) n += p->traces[t].ncombos;
  else for (size_t i = 0; i < p->npolicies; i++) n += p->policies[i].ncombos;
  return n;
}

static void rule_masks(const struct plan *p, const struct plan_rule *r, struct rule_masks *m) {
  m->trace = xcalloc(count_instances(p, true), sizeof *m->trace);
  m->policy = xcalloc(count_instances(p, false), sizeof *m->policy);
  m->cpu = xcalloc(p->ncpus, sizeof *m->cpu);
  size_t k = 0;
  for (size_t t = 0; t < p->ntraces; t++)
    for (size_t tc = 0; tc < p->traces[t].ncombos; tc++, k++) {
      m->trace[k] = true;
      for (size_t i = 0; i < r->nconds && m->trace[k]; i++) m->trace[k] = trace_matches(&p->traces[t], tc, &r->conds[i]);
    }
  k = 0;
  for (size_t i = 0; i < p->npolicies; i++)
    for (size_t pc = 0; pc < p->policies[i].ncombos; pc++, k++) {
      m->policy[k] = true;
      for (size_t j = 0; j < r->nconds && m->policy[k]; j++)
        m->policy[k] = policy_matches(&p->policies[i], pc, &r->conds[j]);
    }
  for (size_t u = 0; u < p->ncpus; u++) {
    m->cpu[u] = true;
    for (size_t j = 0; j < r->nconds && m->cpu[u]; j++)
      if (r->conds[j].kind == COND_CPU) m->cpu[u] = value_in(&r->conds[j], p->cpus[u].spec);
  }
}

static bool excluded(const struct rule_masks *m, size_t nrules, size_t ti, size_t pi, size_t u) {
  for (size_t r = 0; r < nrules; r++)
    if (m[r].trace[ti] && m[r].policy[pi] && m[r].cpu[u]) return true;
  return false;
}

int plan_expand(struct ctx *c) {
  struct plan *p = c->p;
  size_t nt = count_instances(p, true), np = count_instances(p, false);
  if (nt > PLAN_RUNS_MAX / np || nt * np > PLAN_RUNS_MAX / p->ncpus)
    return plan_fail(c, EXIT_USAGE, "$", "the product has more than %u runs: split the plan", PLAN_RUNS_MAX);
  struct rule_masks *m = xcalloc(p->nrules + 1, sizeof *m);
  for (size_t r = 0; r < p->nrules; r++) rule_masks(p, &p->rules[r], &m[r]);
  p->runs = xcalloc(nt * np * p->ncpus, sizeof *p->runs);
  size_t ti = 0;
  for (uint32_t t = 0; t < p->ntraces; t++)
    for (uint32_t tc = 0; tc < p->traces[t].ncombos; tc++, ti++) {
      size_t pi = 0;
      for (uint32_t i = 0; i < p->npolicies; i++)
        for (uint32_t pc = 0; pc < p->policies[i].ncombos; pc++, pi++)
          for (uint32_t u = 0; u < p->ncpus; u++) {
            if (excluded(m, p->nrules, ti, pi, u)) p->nexcluded++;
            else p->runs[p->nruns++] = (struct plan_run){ t, tc, i, pc, u };
          }
    }
  for (size_t r = 0; r < p->nrules; r++) free(m[r].trace), free(m[r].policy), free(m[r].cpu);
  free(m);
  if (p->nruns == 0 && p->nexcluded == 1)
    return plan_fail(c, EXIT_USAGE, "$.exclude", "the plan's one run is excluded: the product of the plan is empty");
  if (p->nruns == 0)
    return plan_fail(c, EXIT_USAGE, "$.exclude", "every one of the %zu runs is excluded: the product of the plan is empty",
                p->nexcluded);
  return 0;
}

/* ---- shards ---- */

int plan_shard_parse(const char *text, unsigned *shard, unsigned *nshards, char *err, size_t errlen) {
  const char *slash = text ? strchr(text, '/') : NULL;
  uint64_t i = 0, n = 0;
  char first[32];
  size_t len = slash ? (size_t)(slash - text) : 0;
  bool ok = slash && len > 0 && len < sizeof first;
  const char *hint = "";
  if (ok) {
    memcpy(first, text, len);
    first[len] = 0;
    ok = parse_u64(first, &i) && parse_u64(slash + 1, &n);
    hint = *parse_u64_hint(first) ? parse_u64_hint(first) : parse_u64_hint(slash + 1);
  }
  if (!ok || n == 0 || n > PLAN_SHARDS_MAX || i >= n) {
    snprintf(err, errlen, "--shard %s: expected I/N with 0 <= I < N <= %u (e.g. --shard 0/4, the first of four)%s",
             text ? text : "", PLAN_SHARDS_MAX, hint);
    return EXIT_USAGE;
  }
  *shard = (unsigned)i;
  *nshards = (unsigned)n;
  return 0;
}

size_t plan_shard_size(size_t nruns, unsigned shard, unsigned nshards) {
  return nruns > shard ? (nruns - shard + nshards - 1) / nshards : 0;
}
