/* The traces of a sweep plan: files, or generators with parameter lists,
** each parameter checked against the generator's options when the plan is
** read, not when a worker runs it; and what a run makes of a trace: the
** generator's command line and the label listings show. */
#include "plan_int.h"
#include "sim/base/util.h"
#include "workloads/generators.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- traces ---- */

/* "--cpu-ghz" for "cpu_ghz" or "cpu-ghz". */
void plan_option_of(const char *name, char *buf, size_t n) {
  snprintf(buf, n, "--%s", name);
  for (char *s = buf + 2; *s; s++)
    if (*s == '_') *s = '-';
}

/* Is --name among the generator's options (its usage text lists them)? */
static int check_param(struct ctx *c, const char *name, const char *where, const void *arg) {
  const struct generator *g = arg;
  char opt[80];
  plan_option_of(name, opt, sizeof opt);
  if (!strcmp(opt, "--output") || !strcmp(opt, "--o") || !strcmp(opt, "--help"))
    return plan_fail(c, EXIT_USAGE, where, "not a parameter: the sweep chooses the output file");
  size_t n = strlen(opt);
  for (const char *s = strstr(g->usage, opt); s; s = strstr(s + 1, opt)) {
    char next = s[n];
    if (!(next >= 'a' && next <= 'z') && !(next >= '0' && next <= '9') && next != '-' && next != '_') return 0;
  }
  return plan_fail(c, EXIT_USAGE, where, "generator %s has no option %s (see 'vmxsim gen %s --help')", g->name, opt,
              g->name);
}

static int parse_generated(struct ctx *c, const cJSON *obj, struct plan_trace *t) {
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(obj, "generator");
  char here[PLAN_WHERE_MAX];
  plan_at_key(here, t->where, "generator");
  if (!cJSON_IsString(gen)) return plan_fail(c, EXIT_USAGE, here, "expected the generator's name (a string)");
  const struct generator *g = generator_find(gen->valuestring);
  if (!g) {
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < ngenerators && used < sizeof names; i++)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", generators[i].name);
    return plan_fail(c, EXIT_USAGE, here, "unknown generator '%s' (expected %s)", gen->valuestring, names);
  }
  t->generator = xstrdup(g->name);
  plan_at_key(here, t->where, "params");
  return plan_parse_axes(c, cJSON_GetObjectItemCaseSensitive(obj, "params"), here, &t->params, &t->nparams,
                    &t->ncombos, check_param, g);
}

static int parse_trace(struct ctx *c, const cJSON *item, struct plan_trace *t) {
  t->ncombos = 1;
  const cJSON *file = item;
  if (cJSON_IsObject(item)) {
    int rc = plan_check_keys(c, item, t->where, (const char *const[]){ "file", "generator", "params", NULL });
    if (rc) return rc;
    file = cJSON_GetObjectItemCaseSensitive(item, "file");
    bool gen = cJSON_GetObjectItemCaseSensitive(item, "generator") != NULL;
    if (file && gen) return plan_fail(c, EXIT_USAGE, t->where, "either \"file\" or \"generator\", not both");
    if (!file && !gen) return plan_fail(c, EXIT_USAGE, t->where, "needs \"file\" or \"generator\"");
    if (gen) return parse_generated(c, item, t);
    if (cJSON_GetObjectItemCaseSensitive(item, "params"))
      return plan_fail(c, EXIT_USAGE, t->where, "\"params\" belong to a generator, not a file");
  }
  if (!cJSON_IsString(file) || !*file->valuestring)
    return plan_fail(c, EXIT_USAGE, t->where, "expected a trace file name or {\"generator\": ..., \"params\": ...}");
  t->file = xstrdup(file->valuestring);
  t->path = plan_resolve_path(c->p->dir, t->file);
  return 0;
}

int plan_parse_traces(struct ctx *c, const cJSON *arr) {
  if (!arr) return plan_fail(c, EXIT_USAGE, "$", "missing \"traces\": the traces to replay");
  if (!cJSON_IsArray(arr)) return plan_fail(c, EXIT_USAGE, "$.traces", "expected a list");
  if (plan_array_size(arr) == 0) return plan_fail(c, EXIT_USAGE, "$.traces", "an empty list: the product of the plan has no runs");
  struct plan *p = c->p;
  p->traces = xcalloc(plan_array_size(arr), sizeof *p->traces);
  for (const cJSON *t = arr->child; t; t = t->next) {
    struct plan_trace *pt = &p->traces[p->ntraces++];
    plan_at_index(pt->where, "$.traces", p->ntraces - 1);
    int rc = parse_trace(c, t, pt);
    if (rc) return rc;
  }
  return 0;
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
    plan_option_of(t->params[i].name, opt, sizeof opt);
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
