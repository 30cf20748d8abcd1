/* Sweep plans: parsing, checking and expanding the run set (see plan.h). */
#include "plan.h"
#include "sim/core/hash.h"
#include "sim/core/profile.h"
#include "sim/core/util.h"
#include "workloads/generators.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
  struct plan *p;
  char *err;
  size_t errlen;
};

/* "PLAN: $.where: what"; returns rc. */
static int fail(struct ctx *c, int rc, const char *where, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static int fail(struct ctx *c, int rc, const char *where, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(c->err, c->errlen, "%s: %s: %s", c->p->file, where, what);
  return rc;
}

static void at_key(char *out, const char *where, const char *key) {
  snprintf(out, PLAN_WHERE_MAX, "%s.%s", where, key);
}

static void at_index(char *out, const char *where, size_t i) {
  snprintf(out, PLAN_WHERE_MAX, "%s[%zu]", where, i);
}

static size_t array_size(const cJSON *a) { return (size_t)cJSON_GetArraySize(a); }

/* Rejects keys not in allowed (NULL-terminated) and keys given twice. */
static int check_keys(struct ctx *c, const cJSON *obj, const char *where, const char *const *allowed) {
  for (const cJSON *k = obj->child; k; k = k->next) {
    char here[PLAN_WHERE_MAX];
    at_key(here, where, k->string);
    bool known = false;
    for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, k->string) == 0;
    if (!known) {
      char list[256] = "";
      size_t used = 0;
      for (const char *const *a = allowed; *a && used < sizeof list; a++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
      return fail(c, EXIT_USAGE, here, "unknown key (expected %s)", list);
    }
    for (const cJSON *d = obj->child; d != k; d = d->next)
      if (strcmp(d->string, k->string) == 0) return fail(c, EXIT_USAGE, here, "given twice");
  }
  return 0;
}

/* ---- values ---- */

/* The shortest decimal text that reads back as v. */
static void number_text(double v, char *buf, size_t n) {
  if (v == floor(v) && fabs(v) < 9007199254740992.0) {
    snprintf(buf, n, "%.0f", v);
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, n, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) return;
  }
}

static int parse_value(struct ctx *c, const cJSON *item, const char *where, struct plan_value *out) {
  char buf[64];
  out->is_bool = cJSON_IsBool(item);
  if (cJSON_IsBool(item)) {
    out->text = xstrdup(cJSON_IsTrue(item) ? "true" : "false");
  } else if (cJSON_IsNumber(item)) {
    number_text(item->valuedouble, buf, sizeof buf);
    out->text = xstrdup(buf);
  } else if (cJSON_IsString(item)) {
    out->text = xstrdup(item->valuestring);
  } else {
    out->text = NULL;
    return fail(c, EXIT_USAGE, where, "expected a number, a string or a boolean");
  }
  return 0;
}

static void values_free(struct plan_value *v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].text);
  free(v);
}

/* One value, or a non-empty list of values. */
static int parse_values(struct ctx *c, const cJSON *item, const char *where, struct plan_value **values, size_t *n) {
  *values = NULL;
  *n = 0;
  if (!cJSON_IsArray(item)) {
    *values = xcalloc(1, sizeof **values);
    *n = 1;
    return parse_value(c, item, where, *values);
  }
  size_t count = array_size(item);
  if (count == 0) return fail(c, EXIT_USAGE, where, "an empty list: the product of the plan has no runs");
  *values = xcalloc(count, sizeof **values);
  size_t i = 0;
  for (const cJSON *v = item->child; v; v = v->next, i++) {
    char here[PLAN_WHERE_MAX];
    at_index(here, where, i);
    *n = i + 1;
    int rc = parse_value(c, v, here, &(*values)[i]);
    if (rc) return rc;
  }
  return 0;
}

static void axes_free(struct plan_axis *a, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(a[i].name);
    values_free(a[i].values, a[i].nvalues);
  }
  free(a);
}

/* The axes of an object {name: value or [values]}; check(name) validates each name. */
static int parse_axes(struct ctx *c, const cJSON *obj, const char *where, struct plan_axis **axes, size_t *n,
                      size_t *ncombos, int (*check)(struct ctx *, const char *, const char *, const void *),
                      const void *arg) {
  *axes = NULL;
  *n = 0;
  *ncombos = 1;
  if (!obj) return 0;
  if (!cJSON_IsObject(obj)) return fail(c, EXIT_USAGE, where, "expected an object {\"name\": value or [values]}");
  int rc = 0;
  *axes = xcalloc(array_size(obj) + 1, sizeof **axes);
  for (const cJSON *k = obj->child; k && !rc; k = k->next) {
    char here[PLAN_WHERE_MAX];
    at_key(here, where, k->string);
    for (size_t i = 0; i < *n && !rc; i++)
      if (strcmp((*axes)[i].name, k->string) == 0) rc = fail(c, EXIT_USAGE, here, "given twice");
    if (!rc) rc = check(c, k->string, here, arg);
    if (rc) break;
    struct plan_axis *a = &(*axes)[(*n)++];
    a->name = xstrdup(k->string);
    rc = parse_values(c, k, here, &a->values, &a->nvalues);
    if (!rc && *ncombos > PLAN_RUNS_MAX / a->nvalues)
      rc = fail(c, EXIT_USAGE, here, "the product has more than %u runs: split the plan", PLAN_RUNS_MAX);
    if (!rc) *ncombos *= a->nvalues;
  }
  return rc;
}

size_t plan_axis_index(const struct plan_axis *axes, size_t naxes, size_t combo, size_t i) {
  for (size_t j = naxes; j-- > i + 1;) combo /= axes[j].nvalues;
  return combo % axes[i].nvalues;
}

/* ---- paths ---- */

static bool is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

/* path relative to dir (unless absolute, or dir is "."). */
static char *resolve_path(const char *dir, const char *path) {
  if (path[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0) return xstrdup(path);
  size_t n = strlen(dir) + strlen(path) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s/%s", dir, path);
  return s;
}

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
    char *r = n && is_path(part) ? resolve_path(dir, part) : xstrdup(part);
    cap += strlen(r) + 2;
    out = xrealloc(out, cap);
    used += (size_t)snprintf(out + used, cap - used, "%s%s", r, plus ? "+" : "");
    free(part);
    free(r);
    if (!plus) return out;
    s = plus + 1;
  }
}

/* ---- traces ---- */

/* "--cpu-ghz" for "cpu_ghz" or "cpu-ghz". */
static void option_of(const char *name, char *buf, size_t n) {
  snprintf(buf, n, "--%s", name);
  for (char *s = buf + 2; *s; s++)
    if (*s == '_') *s = '-';
}

/* Is --name among the generator's options (its usage text lists them)? */
static int check_param(struct ctx *c, const char *name, const char *where, const void *arg) {
  const struct generator *g = arg;
  char opt[80];
  option_of(name, opt, sizeof opt);
  if (!strcmp(opt, "--output") || !strcmp(opt, "--o") || !strcmp(opt, "--help"))
    return fail(c, EXIT_USAGE, where, "not a parameter: the sweep chooses the output file");
  size_t n = strlen(opt);
  for (const char *s = strstr(g->usage, opt); s; s = strstr(s + 1, opt)) {
    char next = s[n];
    if (!(next >= 'a' && next <= 'z') && !(next >= '0' && next <= '9') && next != '-' && next != '_') return 0;
  }
  return fail(c, EXIT_USAGE, where, "generator %s has no option %s (see 'vmxsim gen %s --help')", g->name, opt,
              g->name);
}

static int parse_generated(struct ctx *c, const cJSON *obj, struct plan_trace *t) {
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(obj, "generator");
  char here[PLAN_WHERE_MAX];
  at_key(here, t->where, "generator");
  if (!cJSON_IsString(gen)) return fail(c, EXIT_USAGE, here, "expected the generator's name (a string)");
  const struct generator *g = generator_find(gen->valuestring);
  if (!g) {
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < ngenerators && used < sizeof names; i++)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", generators[i].name);
    return fail(c, EXIT_USAGE, here, "unknown generator '%s' (expected %s)", gen->valuestring, names);
  }
  t->generator = xstrdup(g->name);
  at_key(here, t->where, "params");
  return parse_axes(c, cJSON_GetObjectItemCaseSensitive(obj, "params"), here, &t->params, &t->nparams,
                    &t->ncombos, check_param, g);
}

static int parse_trace(struct ctx *c, const cJSON *item, struct plan_trace *t) {
  t->ncombos = 1;
  const cJSON *file = item;
  if (cJSON_IsObject(item)) {
    int rc = check_keys(c, item, t->where, (const char *const[]){ "file", "generator", "params", NULL });
    if (rc) return rc;
    file = cJSON_GetObjectItemCaseSensitive(item, "file");
    bool gen = cJSON_GetObjectItemCaseSensitive(item, "generator") != NULL;
    if (file && gen) return fail(c, EXIT_USAGE, t->where, "either \"file\" or \"generator\", not both");
    if (!file && !gen) return fail(c, EXIT_USAGE, t->where, "needs \"file\" or \"generator\"");
    if (gen) return parse_generated(c, item, t);
    if (cJSON_GetObjectItemCaseSensitive(item, "params"))
      return fail(c, EXIT_USAGE, t->where, "\"params\" belong to a generator, not a file");
  }
  if (!cJSON_IsString(file) || !*file->valuestring)
    return fail(c, EXIT_USAGE, t->where, "expected a trace file name or {\"generator\": ..., \"params\": ...}");
  t->file = xstrdup(file->valuestring);
  t->path = resolve_path(c->p->dir, t->file);
  return 0;
}

static int parse_traces(struct ctx *c, const cJSON *arr) {
  if (!arr) return fail(c, EXIT_USAGE, "$", "missing \"traces\": the traces to replay");
  if (!cJSON_IsArray(arr)) return fail(c, EXIT_USAGE, "$.traces", "expected a list");
  if (array_size(arr) == 0) return fail(c, EXIT_USAGE, "$.traces", "an empty list: the product of the plan has no runs");
  struct plan *p = c->p;
  p->traces = xcalloc(array_size(arr), sizeof *p->traces);
  for (const cJSON *t = arr->child; t; t = t->next) {
    struct plan_trace *pt = &p->traces[p->ntraces++];
    at_index(pt->where, "$.traces", p->ntraces - 1);
    int rc = parse_trace(c, t, pt);
    if (rc) return rc;
  }
  return 0;
}

/* ---- policies ---- */

static int check_knob_name(struct ctx *c, const char *name, const char *where, const void *arg) {
  struct policy scratch = *(const struct policy *)arg;
  char why[1024];
  if (policy_set(&scratch, name, "", why, sizeof why) && strstr(why, "unknown knob"))
    return fail(c, EXIT_USAGE, where, "%s", why);
  return 0;
}

/* Checks each knob value on the policy as the spec alone gives it. */
static int check_knob_values(struct ctx *c, const struct plan_policy *pp, const struct policy *base, const char *where) {
  for (size_t k = 0; k < pp->nknobs; k++) {
    const struct plan_axis *a = &pp->knobs[k];
    for (size_t v = 0; v < a->nvalues; v++) {
      struct policy scratch = *base;
      char here[PLAN_WHERE_MAX], h2[PLAN_WHERE_MAX], why[1024];
      at_key(h2, where, a->name);
      if (a->nvalues > 1) at_index(here, h2, v);
      else snprintf(here, sizeof here, "%s", h2);
      if (policy_set(&scratch, a->name, a->values[v].text, why, sizeof why)) return fail(c, EXIT_USAGE, here, "%s", why);
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
    if (rc) return fail(c, rc == EXIT_BADINPUT ? EXIT_BADINPUT : EXIT_USAGE, pp->where, "%s", why);
    pp->json[i] = policy_to_json(&pp->resolved[i]);
  }
  return 0;
}

static int parse_policy(struct ctx *c, const cJSON *item, struct plan_policy *pp) {
  const cJSON *spec = item, *knobs = NULL;
  char spec_where[PLAN_WHERE_MAX], knobs_where[PLAN_WHERE_MAX];
  snprintf(spec_where, sizeof spec_where, "%s", pp->where);
  if (cJSON_IsObject(item)) {
    int rc = check_keys(c, item, pp->where, (const char *const[]){ "policy", "knobs", NULL });
    if (rc) return rc;
    spec = cJSON_GetObjectItemCaseSensitive(item, "policy");
    knobs = cJSON_GetObjectItemCaseSensitive(item, "knobs");
    at_key(spec_where, pp->where, "policy");
  }
  if (!cJSON_IsString(spec))
    return fail(c, EXIT_USAGE, spec_where, "expected a policy (\"shadowcache+lazydr\") or {\"policy\": ..., \"knobs\": ...}");
  pp->spec = xstrdup(spec->valuestring);
  pp->resolved_spec = resolve_spec(c->p->dir, pp->spec);
  struct policy base;
  char why[1024];
  int rc = policy_resolve(&base, pp->resolved_spec, NULL, 0, why, sizeof why);
  if (rc) return fail(c, rc == EXIT_BADINPUT ? EXIT_BADINPUT : EXIT_USAGE, spec_where, "%s", why);
  at_key(knobs_where, pp->where, "knobs");
  rc = parse_axes(c, knobs, knobs_where, &pp->knobs, &pp->nknobs, &pp->ncombos, check_knob_name, &base);
  if (!rc) rc = check_knob_values(c, pp, &base, knobs_where);
  if (!rc) rc = resolve_combos(c, pp);
  return rc;
}

static int parse_policies(struct ctx *c, const cJSON *arr) {
  if (!arr) return fail(c, EXIT_USAGE, "$", "missing \"policies\": the policies to replay under");
  if (!cJSON_IsArray(arr)) return fail(c, EXIT_USAGE, "$.policies", "expected a list");
  if (array_size(arr) == 0) return fail(c, EXIT_USAGE, "$.policies", "an empty list: the product of the plan has no runs");
  struct plan *p = c->p;
  p->policies = xcalloc(array_size(arr), sizeof *p->policies);
  for (const cJSON *t = arr->child; t; t = t->next) {
    struct plan_policy *pp = &p->policies[p->npolicies++];
    at_index(pp->where, "$.policies", p->npolicies - 1);
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
  return rc ? fail(c, rc == EXIT_BADINPUT ? EXIT_BADINPUT : EXIT_USAGE, pc->where, "%s", why) : 0;
}

static int parse_cpus(struct ctx *c, const cJSON *arr) {
  struct plan *p = c->p;
  if (!arr) {   /* the default profile */
    p->cpus = xcalloc(1, sizeof *p->cpus);
    p->ncpus = 1;
    p->cpus[0].spec = xstrdup(PROFILE_DEFAULT);
    p->cpus[0].resolved_spec = xstrdup(PROFILE_DEFAULT);
    snprintf(p->cpus[0].where, sizeof p->cpus[0].where, "$.cpus (default)");
    return load_cpu(c, &p->cpus[0]);
  }
  if (!cJSON_IsArray(arr)) return fail(c, EXIT_USAGE, "$.cpus", "expected a list of CPU profiles");
  if (array_size(arr) == 0) return fail(c, EXIT_USAGE, "$.cpus", "an empty list: the product of the plan has no runs");
  p->cpus = xcalloc(array_size(arr), sizeof *p->cpus);
  for (const cJSON *t = arr->child; t; t = t->next) {
    struct plan_cpu *pc = &p->cpus[p->ncpus++];
    at_index(pc->where, "$.cpus", p->ncpus - 1);
    if (!cJSON_IsString(t) || !*t->valuestring)
      return fail(c, EXIT_USAGE, pc->where, "expected a CPU profile name or file");
    pc->spec = xstrdup(t->valuestring);
    pc->resolved_spec = is_path(pc->spec) ? resolve_path(p->dir, pc->spec) : xstrdup(pc->spec);
    int rc = load_cpu(c, pc);
    if (rc) return rc;
  }
  return 0;
}

/* ---- exclude rules ---- */

static bool plan_has_param(const struct plan *p, const char *name) {
  char want[80], have[80];
  option_of(name, want, sizeof want);
  for (size_t t = 0; t < p->ntraces; t++)
    for (size_t i = 0; i < p->traces[t].nparams; i++) {
      option_of(p->traces[t].params[i].name, have, sizeof have);
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
    return fail(c, EXIT_USAGE, where, "both a knob and a generator parameter: write knobs.%s or params.%s", name, name);
  if (!knob && !param)
    return fail(c, EXIT_USAGE, where, "unknown key (expected trace, generator, policy, cpu, a policy knob or a "
                "parameter of the plan's generators)");
  cond->kind = knob ? COND_KNOB : COND_PARAM;
  cond->key = xstrdup(name);
  return 0;
}

static int parse_rule(struct ctx *c, const cJSON *obj, const char *where, struct plan_rule *r) {
  if (!cJSON_IsObject(obj) || !obj->child)
    return fail(c, EXIT_USAGE, where, "expected an object of conditions, e.g. {\"policy\": \"ept\", \"cpu\": \"core2-2007\"}");
  r->conds = xcalloc(array_size(obj), sizeof *r->conds);
  for (const cJSON *k = obj->child; k; k = k->next) {
    char here[PLAN_WHERE_MAX];
    at_key(here, where, k->string);
    for (const cJSON *d = obj->child; d != k; d = d->next)
      if (strcmp(d->string, k->string) == 0) return fail(c, EXIT_USAGE, here, "given twice");
    struct plan_cond *cond = &r->conds[r->nconds];
    int rc = classify(c, k->string, here, cond);
    r->nconds++;
    if (!rc) rc = parse_values(c, k, here, &cond->values, &cond->nvalues);
    for (size_t v = 0; !rc && cond->kind == COND_KNOB && v < cond->nvalues; v++) {
      struct policy scratch = c->p->policies[0].resolved[0];
      char why[1024];
      if (policy_set(&scratch, cond->key, cond->values[v].text, why, sizeof why)) rc = fail(c, EXIT_USAGE, here, "%s", why);
    }
    if (rc) return rc;
  }
  return 0;
}

static int parse_rules(struct ctx *c, const cJSON *arr) {
  if (!arr) return 0;
  if (!cJSON_IsArray(arr)) return fail(c, EXIT_USAGE, "$.exclude", "expected a list of rules");
  struct plan *p = c->p;
  p->rules = xcalloc(array_size(arr) + 1, sizeof *p->rules);
  for (const cJSON *r = arr->child; r; r = r->next) {
    char here[PLAN_WHERE_MAX];
    at_index(here, "$.exclude", p->nrules);
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
    option_of(cond->key, want, sizeof want);
    for (size_t i = 0; i < t->nparams; i++) {
      option_of(t->params[i].name, have, sizeof have);
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

static int expand(struct ctx *c) {
  struct plan *p = c->p;
  size_t nt = count_instances(p, true), np = count_instances(p, false);
  if (nt > PLAN_RUNS_MAX / np || nt * np > PLAN_RUNS_MAX / p->ncpus)
    return fail(c, EXIT_USAGE, "$", "the product has more than %u runs: split the plan", PLAN_RUNS_MAX);
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
    return fail(c, EXIT_USAGE, "$.exclude", "the plan's one run is excluded: the product of the plan is empty");
  if (p->nruns == 0)
    return fail(c, EXIT_USAGE, "$.exclude", "every one of the %zu runs is excluded: the product of the plan is empty",
                p->nexcluded);
  return 0;
}

/* ---- the plan ---- */

static int parse_top(struct ctx *c, const cJSON *root) {
  struct plan *p = c->p;
  if (!cJSON_IsObject(root)) return fail(c, EXIT_USAGE, "$", "expected an object with \"traces\" and \"policies\"");
  int rc = check_keys(c, root, "$", (const char *const[]){ "name", "description", "traces", "policies", "cpus",
                                                             "exclude", "cache", NULL });
  if (rc) return rc;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
  const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
  if (name && (!cJSON_IsString(name) || !*name->valuestring)) return fail(c, EXIT_USAGE, "$.name", "expected a name");
  if (desc && !cJSON_IsString(desc)) return fail(c, EXIT_USAGE, "$.description", "expected text");
  if (cache && (!cJSON_IsString(cache) || !*cache->valuestring))
    return fail(c, EXIT_USAGE, "$.cache", "expected a directory");
  if (name) {
    free(p->name);
    p->name = xstrdup(name->valuestring);
  }
  if (cache) p->cache = resolve_path(p->dir, cache->valuestring);
  if (!rc) rc = parse_traces(c, cJSON_GetObjectItemCaseSensitive(root, "traces"));
  if (!rc) rc = parse_policies(c, cJSON_GetObjectItemCaseSensitive(root, "policies"));
  if (!rc) rc = parse_cpus(c, cJSON_GetObjectItemCaseSensitive(root, "cpus"));
  if (!rc) rc = parse_rules(c, cJSON_GetObjectItemCaseSensitive(root, "exclude"));
  if (!rc) rc = expand(c);
  return rc;
}

static int line_of(const char *text, size_t off) {
  int line = 1;
  for (size_t i = 0; i < off; i++) line += text[i] == '\n';
  return line;
}

/* The file name without directories and ".json". */
static char *default_name(const char *file) {
  const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  char *n = xstrdup(*base ? base : "plan");
  size_t len = strlen(n);
  if (len > 5 && strcmp(n + len - 5, ".json") == 0) n[len - 5] = 0;
  return n;
}

int plan_parse(struct plan *p, const char *text, size_t len, const char *file, const char *dir, char *err,
               size_t errlen) {
  memset(p, 0, sizeof *p);
  p->file = xstrdup(file);
  p->dir = xstrdup(dir && *dir ? dir : ".");
  p->name = default_name(file);
  struct ctx c = { p, err, errlen };
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
  if (!root) {
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    if (off > len) off = len;
    snprintf(err, errlen, "%s:%d: malformed JSON (byte %zu)", file, line_of(text, off), off);
    return EXIT_BADINPUT;
  }
  int rc = parse_top(&c, root);
  if (!rc) {
    p->json = cJSON_PrintUnformatted(root);
    snprintf(p->hash, sizeof p->hash, "%016llx", (unsigned long long)xxh64(p->json, strlen(p->json)));
  }
  cJSON_Delete(root);
  return rc;
}

int plan_load(struct plan *p, const char *path, char *err, size_t errlen) {
  size_t len = 0;
  char *text = read_file(path, &len);
  if (!text) {
    memset(p, 0, sizeof *p);
    snprintf(err, errlen, "%s: cannot read the plan: %s", path, strerror(errno));
    return EXIT_BADINPUT;
  }
  char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash) *(slash == dir ? slash + 1 : slash) = 0;
  else strcpy(dir, ".");
  int rc = plan_parse(p, text, len, path, dir, err, errlen);
  free(dir);
  free(text);
  return rc;
}

void plan_free(struct plan *p) {
  for (size_t t = 0; t < p->ntraces; t++) {
    free(p->traces[t].file), free(p->traces[t].path), free(p->traces[t].generator);
    axes_free(p->traces[t].params, p->traces[t].nparams);
  }
  for (size_t i = 0; i < p->npolicies; i++) {
    struct plan_policy *pp = &p->policies[i];
    free(pp->spec), free(pp->resolved_spec);
    axes_free(pp->knobs, pp->nknobs);
    for (size_t k = 0; pp->json && k < pp->ncombos; k++) free(pp->json[k]);
    free(pp->json), free(pp->resolved);
  }
  for (size_t u = 0; u < p->ncpus; u++) free(p->cpus[u].spec), free(p->cpus[u].resolved_spec), free(p->cpus[u].json);
  for (size_t r = 0; r < p->nrules; r++) {
    for (size_t i = 0; i < p->rules[r].nconds; i++) {
      free(p->rules[r].conds[i].key);
      values_free(p->rules[r].conds[i].values, p->rules[r].conds[i].nvalues);
    }
    free(p->rules[r].conds);
  }
  free(p->traces), free(p->policies), free(p->cpus), free(p->rules), free(p->runs);
  free(p->file), free(p->dir), free(p->name), free(p->cache);
  if (p->json) cJSON_free(p->json);
  memset(p, 0, sizeof *p);
}

/* ---- traces of the run set ---- */

void plan_trace_argv(const struct plan_trace *t, size_t combo, char ***argv, int *argc) {
  *argv = xcalloc(2 * t->nparams + 2, sizeof **argv);
  int n = 0;
  (*argv)[n++] = xstrdup(t->generator ? t->generator : "");
  for (size_t i = 0; i < t->nparams; i++) {
    const struct plan_value *v = &t->params[i].values[plan_axis_index(t->params, t->nparams, combo, i)];
    if (v->is_bool && strcmp(v->text, "false") == 0) continue;   /* a flag left off */
    char opt[80];
    option_of(t->params[i].name, opt, sizeof opt);
    (*argv)[n++] = xstrdup(opt);
    if (!v->is_bool) (*argv)[n++] = xstrdup(v->text);
  }
  *argc = n;
}

char *plan_trace_label(const struct plan_trace *t, size_t combo) {
  if (!t->generator) return xstrdup(t->file);
  size_t cap = strlen(t->generator) + 1, used;
  for (size_t i = 0; i < t->nparams; i++) {
    const struct plan_axis *a = &t->params[i];
    cap += strlen(a->name) + strlen(a->values[plan_axis_index(t->params, t->nparams, combo, i)].text) + 2;
  }
  char *s = xmalloc(cap);
  used = (size_t)snprintf(s, cap, "%s", t->generator);
  for (size_t i = 0; i < t->nparams; i++) {
    const struct plan_axis *a = &t->params[i];
    used += (size_t)snprintf(s + used, cap - used, " %s=%s", a->name,
                             a->values[plan_axis_index(t->params, t->nparams, combo, i)].text);
  }
  return s;
}

/* ---- shards ---- */

int plan_shard_parse(const char *text, unsigned *shard, unsigned *nshards, char *err, size_t errlen) {
  const char *slash = text ? strchr(text, '/') : NULL;
  uint64_t i = 0, n = 0;
  char first[32];
  size_t len = slash ? (size_t)(slash - text) : 0;
  bool ok = slash && len > 0 && len < sizeof first;
  if (ok) {
    memcpy(first, text, len);
    first[len] = 0;
    ok = parse_u64(first, &i) && parse_u64(slash + 1, &n);
  }
  if (!ok || n == 0 || n > PLAN_SHARDS_MAX || i >= n) {
    snprintf(err, errlen, "--shard %s: expected I/N with 0 <= I < N <= %u (e.g. --shard 0/4, the first of four)",
             text ? text : "", PLAN_SHARDS_MAX);
    return EXIT_USAGE;
  }
  *shard = (unsigned)i;
  *nshards = (unsigned)n;
  return 0;
}

size_t plan_shard_size(size_t nruns, unsigned shard, unsigned nshards) {
  return nruns > shard ? (nruns - shard + nshards - 1) / nshards : 0;
}
