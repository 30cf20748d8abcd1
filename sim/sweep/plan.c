/* Sweep plans (see plan.h): reading a plan file, its top-level object and
** the sections in order (plan_traces.c, plan_policies.c, plan_runs.c),
** and freeing it.  The sections are read in an order (plan_int.h says
** why), and this is the one place that fixes it. */
#include "plan.h"
#include "plan_int.h"
#include "sim/trace/hash.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The name names the sweep's directory (sweep-NAME, the default --dir) and its
** Slurm jobs: a '/' or a leading '.' would put the directory elsewhere (or hide
** it), a control character would start a line of its own in the job scripts. */
static int check_name(struct ctx *c, const char *name, bool from_file) {
  char why[96];
  const char *slash = strchr(name, '/'), *cc = control_char(name);
  if (!*name) snprintf(why, sizeof why, "an empty name");
  else if (name[0] == '.') snprintf(why, sizeof why, "a name that starts with '.'");
  else if (slash) snprintf(why, sizeof why, "a name with a '/' (offset %zu)", (size_t)(slash - name));
  else if (cc) snprintf(why, sizeof why, "a name with a control character (byte 0x%02x at offset %zu)", (unsigned char)*cc,
                        (size_t)(cc - name));
  else return 0;
  if (from_file) return plan_fail(c, EXIT_USAGE, "$.name", "the plan's file name gives %s; set \"name\"", why);
  return plan_fail(c, EXIT_USAGE, "$.name", "%s: the name names the sweep's directory and jobs, so it must not start "
                   "with '.' nor hold a '/' or a control character", why);
}

static int parse_top(struct ctx *c, const cJSON *root) {
  struct plan *p = c->p;
  if (!cJSON_IsObject(root)) return plan_fail(c, EXIT_USAGE, "$", "expected an object with \"traces\" and \"policies\"");
  int rc = plan_check_keys(c, root, "$", (const char *const[]){ "name", "description", "traces", "policies", "cpus",
                                                             "exclude", "cache", NULL });
  if (rc) return rc;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
  const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
  if (name && (!cJSON_IsString(name) || !*name->valuestring)) return plan_fail(c, EXIT_USAGE, "$.name", "expected a name");
  if (desc && !cJSON_IsString(desc)) return plan_fail(c, EXIT_USAGE, "$.description", "expected text");
  if (cache && (!cJSON_IsString(cache) || !*cache->valuestring))
    return plan_fail(c, EXIT_USAGE, "$.cache", "expected a directory");
  if (name) {
    free(p->name);
    p->name = xstrdup(name->valuestring);
  }
  rc = check_name(c, p->name, !name);
  if (rc) return rc;
  if (cache) p->cache = plan_resolve_path(p->dir, cache->valuestring);
  if (!rc) rc = plan_parse_traces(c, cJSON_GetObjectItemCaseSensitive(root, "traces"));
  if (!rc) rc = plan_parse_policies(c, cJSON_GetObjectItemCaseSensitive(root, "policies"));
  if (!rc) rc = plan_parse_cpus(c, cJSON_GetObjectItemCaseSensitive(root, "cpus"));
  if (!rc) rc = plan_parse_rules(c, cJSON_GetObjectItemCaseSensitive(root, "exclude"));
  if (!rc) rc = plan_expand(c);
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
    plan_axes_free(p->traces[t].params, p->traces[t].nparams);
  }
  for (size_t i = 0; i < p->npolicies; i++) {
    struct plan_policy *pp = &p->policies[i];
    free(pp->spec), free(pp->resolved_spec);
    plan_axes_free(pp->knobs, pp->nknobs);
    for (size_t k = 0; pp->json && k < pp->ncombos; k++) free(pp->json[k]);
    free(pp->json), free(pp->resolved);
  }
  for (size_t u = 0; u < p->ncpus; u++) free(p->cpus[u].spec), free(p->cpus[u].resolved_spec), free(p->cpus[u].json);
  for (size_t r = 0; r < p->nrules; r++) {
    for (size_t i = 0; i < p->rules[r].nconds; i++) {
      free(p->rules[r].conds[i].key);
      plan_values_free(p->rules[r].conds[i].values, p->rules[r].conds[i].nvalues);
    }
    free(p->rules[r].conds);
  }
  free(p->traces), free(p->policies), free(p->cpus), free(p->rules), free(p->runs);
  free(p->file), free(p->dir), free(p->name), free(p->cache);
  if (p->json) cJSON_free(p->json);
  memset(p, 0, sizeof *p);
}
