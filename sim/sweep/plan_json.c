/* Reading a sweep plan's JSON: the messages that name a place in it, keys,
** values (numbers kept as their shortest exact text, so a plan's values
** read back as written), the axes a list of values makes, and paths
** relative to the plan.  Every section (plan_traces.c, plan_policies.c,
** plan_runs.c) reads through these, so that all of them refuse alike. */
#include "plan_int.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int plan_fail(struct ctx *c, int rc, const char *where, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(c->err, c->errlen, "%s: %s: %s", c->p->file, where, what);
  return rc;
}

void plan_at_key(char *out, const char *where, const char *key) {
  snprintf(out, PLAN_WHERE_MAX, "%s.%s", where, key);
}

void plan_at_index(char *out, const char *where, size_t i) {
  snprintf(out, PLAN_WHERE_MAX, "%s[%zu]", where, i);
}

size_t plan_array_size(const cJSON *a) { return (size_t)cJSON_GetArraySize(a); }

/* Rejects keys not in allowed (NULL-terminated) and keys given twice. */
int plan_check_keys(struct ctx *c, const cJSON *obj, const char *where, const char *const *allowed) {
  for (const cJSON *k = obj->child; k; k = k->next) {
    char here[PLAN_WHERE_MAX];
    plan_at_key(here, where, k->string);
    bool known = false;
    for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, k->string) == 0;
    if (!known) {
      char list[256] = "";
      size_t used = 0;
      for (const char *const *a = allowed; *a && used < sizeof list; a++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
      return plan_fail(c, EXIT_USAGE, here, "unknown key (expected %s)", list);
    }
    for (const cJSON *d = obj->child; d != k; d = d->next)
      if (strcmp(d->string, k->string) == 0) return plan_fail(c, EXIT_USAGE, here, "given twice");
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
    return plan_fail(c, EXIT_USAGE, where, "expected a number, a string or a boolean");
  }
  return 0;
}

void plan_values_free(struct plan_value *v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].text);
  free(v);
}

/* One value, or a non-empty list of values. */
int plan_parse_values(struct ctx *c, const cJSON *item, const char *where, struct plan_value **values, size_t *n) {
  *values = NULL;
  *n = 0;
  if (!cJSON_IsArray(item)) {
    *values = xcalloc(1, sizeof **values);
    *n = 1;
    return parse_value(c, item, where, *values);
  }
  size_t count = plan_array_size(item);
  if (count == 0) return plan_fail(c, EXIT_USAGE, where, "an empty list: the product of the plan has no runs");
  *values = xcalloc(count, sizeof **values);
  size_t i = 0;
  for (const cJSON *v = item->child; v; v = v->next, i++) {
    char here[PLAN_WHERE_MAX];
    plan_at_index(here, where, i);
    *n = i + 1;
    int rc = parse_value(c, v, here, &(*values)[i]);
    if (rc) return rc;
  }
  return 0;
}

void plan_axes_free(struct plan_axis *a, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(a[i].name);
    plan_values_free(a[i].values, a[i].nvalues);
  }
  free(a);
}

/* The axes of an object {name: value or [values]}; check(name) validates each name. */
int plan_parse_axes(struct ctx *c, const cJSON *obj, const char *where, struct plan_axis **axes, size_t *n,
                      size_t *ncombos, int (*check)(struct ctx *, const char *, const char *, const void *),
                      const void *arg) {
  *axes = NULL;
  *n = 0;
  *ncombos = 1;
  if (!obj) return 0;
  if (!cJSON_IsObject(obj)) return plan_fail(c, EXIT_USAGE, where, "expected an object {\"name\": value or [values]}");
  int rc = 0;
  *axes = xcalloc(plan_array_size(obj) + 1, sizeof **axes);
  for (const cJSON *k = obj->child; k && !rc; k = k->next) {
    char here[PLAN_WHERE_MAX];
    plan_at_key(here, where, k->string);
    for (size_t i = 0; i < *n && !rc; i++)
      if (strcmp((*axes)[i].name, k->string) == 0) rc = plan_fail(c, EXIT_USAGE, here, "given twice");
    if (!rc) rc = check(c, k->string, here, arg);
    if (rc) break;
    struct plan_axis *a = &(*axes)[(*n)++];
    a->name = xstrdup(k->string);
    rc = plan_parse_values(c, k, here, &a->values, &a->nvalues);
    if (!rc && *ncombos > PLAN_RUNS_MAX / a->nvalues)
      rc = plan_fail(c, EXIT_USAGE, here, "the product has more than %u runs: split the plan", PLAN_RUNS_MAX);
    if (!rc) *ncombos *= a->nvalues;
  }
  return rc;
}

size_t plan_axis_index(const struct plan_axis *axes, size_t naxes, size_t combo, size_t i) {
  for (size_t j = naxes; j-- > i + 1;) combo /= axes[j].nvalues;
  return combo % axes[i].nvalues;
}

/* ---- paths ---- */

bool plan_is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

/* path relative to dir (unless absolute, or dir is "."). */
char *plan_resolve_path(const char *dir, const char *path) {
  if (path[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0) return xstrdup(path);
  size_t n = strlen(dir) + strlen(path) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s/%s", dir, path);
  return s;
}
