/* What the files that read a sweep plan share and nobody else needs: the
** reading context, the helpers every section reads its JSON through (so all
** of them refuse alike, naming the place: "PLAN: $.traces[2].params: ..."),
** and the section readers plan_parse calls in turn. */
#ifndef VMXSIM_PLAN_INT_H
#define VMXSIM_PLAN_INT_H

#include "plan.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Every reader takes the plan and the caller's message buffer together, so
** that the first refusal, wherever it happens, names the plan. */
struct ctx {
  struct plan *p;
  char *err;
  size_t errlen;
};

/* ---- reading the JSON (plan_json.c) ---- */

/* "PLAN: $.where: what"; returns rc. */
int plan_fail(struct ctx *c, int rc, const char *where, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
/* The JSON path of a member or an element of where, into out[PLAN_WHERE_MAX]. */
void plan_at_key(char *out, const char *where, const char *key);
void plan_at_index(char *out, const char *where, size_t i);
size_t plan_array_size(const cJSON *a);
/* Rejects keys not in allowed (NULL-terminated) and keys given twice. */
int plan_check_keys(struct ctx *c, const cJSON *obj, const char *where, const char *const *allowed);
/* One value, or a non-empty list of values. */
int plan_parse_values(struct ctx *c, const cJSON *item, const char *where, struct plan_value **values, size_t *n);
void plan_values_free(struct plan_value *v, size_t n);
/* The axes of an object {name: value or [values]}; check(name) validates each name. */
int plan_parse_axes(struct ctx *c, const cJSON *obj, const char *where, struct plan_axis **axes, size_t *n,
                    size_t *ncombos, int (*check)(struct ctx *, const char *, const char *, const void *),
                    const void *arg);
void plan_axes_free(struct plan_axis *a, size_t n);
/* A file rather than a name: it has a '/' or ends in ".json". */
bool plan_is_path(const char *s);
/* path relative to dir (unless absolute, or dir is "."). */
char *plan_resolve_path(const char *dir, const char *path);

/* ---- the sections, each 0 or an exit code with the message in c->err ---- */

/* "--cpu-ghz" for "cpu_ghz" or "cpu-ghz": the exclude rules match parameters
** the way the generators read them (plan_traces.c). */
void plan_option_of(const char *name, char *buf, size_t n);
/* In this order: the rules read the traces' parameters and the first
** policy's knobs, and the expansion needs every list. */
int plan_parse_traces(struct ctx *c, const cJSON *arr);     /* plan_traces.c */
int plan_parse_policies(struct ctx *c, const cJSON *arr);   /* plan_policies.c */
int plan_parse_cpus(struct ctx *c, const cJSON *arr);       /* plan_policies.c */
int plan_parse_rules(struct ctx *c, const cJSON *arr);      /* plan_runs.c */
/* The run set: the product of the lists less the excluded runs (plan_runs.c). */
int plan_expand(struct ctx *c);

#endif
