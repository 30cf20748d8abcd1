/* CPU cost profiles: loading and validating the JSON files of models/cpus/. */
#include "profile.h"
#include "models/vmx/controls.h"
#include "data.h"
#include "texttable.h"
#include "util.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const param_names[] = {
#define X(e, n, d) n,
  PROFILE_PARAMS(X)
#undef X
};
static const char *const param_descs[] = {
#define X(e, n, d) d,
  PROFILE_PARAMS(X)
#undef X
};

/* One entry: {"value": N, "kind": "measured|derived|estimated", "source": "..."}. */
static bool read_entry(const char *file, const char *key, const cJSON *e, double *out,
                       char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "source");
  if (!cJSON_IsObject(e) || !cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
    snprintf(err, errlen, "%s: params.%s: expected {\"value\": non-negative number, \"kind\", \"source\"}", file, key);
    return false;
  }
  if (!cJSON_IsString(k) || (strcmp(k->valuestring, "measured") && strcmp(k->valuestring, "derived") &&
                             strcmp(k->valuestring, "estimated"))) {
    snprintf(err, errlen, "%s: params.%s: \"kind\" must be measured, derived or estimated", file, key);
    return false;
  }
  if (!cJSON_IsString(s) || !s->valuestring[0]) {
    snprintf(err, errlen, "%s: params.%s: every value needs a \"source\"", file, key);
    return false;
  }
  *out = v->valuedouble;
  return true;
}

static bool read_cycles(const char *file, const char *key, const cJSON *e, uint64_t *out,
                        char *err, size_t errlen) {
  double d;
  if (!read_entry(file, key, e, &d, err, errlen)) return false;
  if (d != floor(d) || d > 1e15) {
    snprintf(err, errlen, "%s: params.%s: cycle counts are whole numbers (got %g)", file, key, d);
    return false;
  }
  *out = (uint64_t)d;
  return true;
}

static bool is_capability(unsigned param) { return param >= PP_CAP_SECONDARY && param <= PP_CAP_UNRESTRICTED; }

struct vmx_caps profile_vmx_caps(const struct profile *pr) {
  const uint64_t *p = pr->p;
  struct vmx_caps c = {
    .pin_allowed1 = ~0u,
    /* Every primary control vmxsim uses was in the first VT-x processors but
    ** these two. */
    .cpu_allowed1 = ~(uint32_t)((p[PP_CAP_SECONDARY] ? 0 : CPU_ACTIVATE_SECONDARY) | (p[PP_CAP_TPR_SHADOW] ? 0 : CPU_TPR_SHADOW)),
    .sec_allowed1 = !p[PP_CAP_SECONDARY] ? 0 :
                    SEC_WBINVD_EXITING | (p[PP_CAP_APIC_ACCESS] ? SEC_APIC_ACCESS : 0) | (p[PP_CAP_EPT] ? SEC_ENABLE_EPT : 0) |
                    (p[PP_CAP_VPID] ? SEC_ENABLE_VPID : 0) | (p[PP_CAP_UNRESTRICTED] ? SEC_UNRESTRICTED_GUEST : 0),
    .cr3_targets = p[PP_CR3_TARGETS],
  };
  return c;
}

/* handler.<REASON> and handler.<REASON>.<breakdown row>, e.g. handler.CR_ACCESS.cr3 write */
static bool read_handlers(struct profile *pr, const char *file, const cJSON *params, char *err, size_t errlen) {
  for (unsigned k = 0; k < STAT_KEYS; k++) pr->handler[k] = pr->p[PP_HANDLER_DEFAULT];
  for (const cJSON *e = params->child; e; e = e->next) {
    if (strncmp(e->string, "handler.", 8) != 0 || strcmp(e->string, "handler.default") == 0) continue;
    char name[96];
    snprintf(name, sizeof name, "%s", e->string + 8);
    char *dot = strchr(name, '.');
    if (dot) *dot = 0;
    int reason = exit_reason_by_name(name);
    int sub = dot ? stat_key_by_name(dot + 1) : -1;
    if (reason < 0 || (dot && (sub < 0 || !stat_key_is_sub((unsigned)sub)))) {
      snprintf(err, errlen, "%s: params.%s: unknown exit reason or breakdown row", file, e->string);
      return false;
    }
    uint64_t c;
    if (!read_cycles(file, e->string, e, &c, err, errlen)) return false;
    if (!dot) {
      /* a reason's cost also becomes the default of its breakdown rows */
      for (unsigned k = STAT_CR_BASE; k < STAT_KEYS; k++)
        if ((k < STAT_DR_BASE ? EXIT_REASON_CR_ACCESS : EXIT_REASON_DR_ACCESS) == reason &&
            pr->handler[k] == pr->p[PP_HANDLER_DEFAULT])
          pr->handler[k] = c;
      pr->handler[reason] = c;
    }
  }
  for (const cJSON *e = params->child; e; e = e->next) {   /* breakdown rows override */
    const char *dot = strncmp(e->string, "handler.", 8) == 0 ? strchr(e->string + 8, '.') : NULL;
    if (dot) read_cycles(file, e->string, e, &pr->handler[stat_key_by_name(dot + 1)], err, errlen);
  }
  return true;
}

/* Every key is a parameter or a handler cost: a misspelt one must not be ignored. */
static bool check_known(const char *file, const cJSON *params, char *err, size_t errlen) {
  for (const cJSON *e = params->child; e; e = e->next) {
    bool known = strncmp(e->string, "handler.", 8) == 0;
    for (unsigned i = 0; i < PP_JSON_COUNT && !known; i++) known = strcmp(e->string, param_names[i]) == 0;
    if (!known) {
      size_t used = (size_t)snprintf(err, errlen, "%s: params.%s: unknown parameter; valid: ", file, e->string);
      for (unsigned i = 0; i < PP_JSON_COUNT && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", param_names[i]);
      if (used < errlen) snprintf(err + used, errlen - used, ", handler.<EXIT_REASON>[.<breakdown row>]");
      return false;
    }
  }
  return true;
}

int profile_load(struct profile *pr, const char *name, char *err, size_t errlen) {
  memset(pr, 0, sizeof *pr);
  cJSON *j;
  int rc = data_load("cpus", name, &j, err, errlen);
  if (rc) return rc;
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "params");
  bool ok = cJSON_IsObject(params);
  if (!ok) snprintf(err, errlen, "%s: missing \"params\" object", name);
  if (ok) ok = check_known(name, params, err, errlen);
  for (unsigned i = 0; ok && i < PP_JSON_COUNT; i++) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(params, param_names[i]);
    if (!e) {
      snprintf(err, errlen, "%s: params.%s missing (%s)", name, param_names[i], param_descs[i]);
      ok = false;
    } else if (i == PP_CLOCK_GHZ) {
      ok = read_entry(name, param_names[i], e, &pr->clock_ghz, err, errlen);
      if (ok && pr->clock_ghz <= 0) {
        snprintf(err, errlen, "%s: params.clock_ghz must be positive", name);
        ok = false;
      }
    } else {
      ok = read_cycles(name, param_names[i], e, &pr->p[i], err, errlen);
      if (ok && is_capability(i) && pr->p[i] > 1) {
        snprintf(err, errlen, "%s: params.%s: a capability is 0 (not supported) or 1 (supported), got %llu", name,
                 param_names[i], (unsigned long long)pr->p[i]);
        ok = false;
      }
    }
  }
  if (ok) ok = read_handlers(pr, name, params, err, errlen);
  if (ok && pr->p[PP_TLB_MISS_2D] < pr->p[PP_TLB_MISS_NATIVE]) {
    snprintf(err, errlen, "%s: params.tlb_miss_2d must not be below tlb_miss_native", name);
    ok = false;
  }
  if (ok) pr->p[PP_TLB_MISS_2D_EXTRA] = pr->p[PP_TLB_MISS_2D] - pr->p[PP_TLB_MISS_NATIVE];
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "name");
  snprintf(pr->name, sizeof pr->name, "%s", cJSON_IsString(n) ? n->valuestring : name);
  if (ok) pr->json = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return ok ? EXIT_OK : EXIT_BADINPUT;
}

void profile_free(struct profile *pr) {
  free(pr->json);
  pr->json = NULL;
}

const char *const *profile_names(void) { return data_names("cpus"); }

/* The profile's clock and description from its JSON (0 and "" when missing). */
static void profile_summary(const char *name, double *ghz, char **desc) {
  char err[256];
  cJSON *j = NULL;
  data_load("cpus", name, &j, err, sizeof err);
  const cJSON *d = j ? cJSON_GetObjectItemCaseSensitive(j, "description") : NULL;
  const cJSON *params = j ? cJSON_GetObjectItemCaseSensitive(j, "params") : NULL;
  const cJSON *clock = params ? cJSON_GetObjectItemCaseSensitive(params, "clock_ghz") : NULL;
  const cJSON *v = clock ? cJSON_GetObjectItemCaseSensitive(clock, "value") : NULL;
  *ghz = cJSON_IsNumber(v) ? v->valuedouble : 0;
  *desc = xstrdup(cJSON_IsString(d) ? d->valuestring : "");
  cJSON_Delete(j);
}

void profile_list(FILE *f, enum report_format fmt) {
  struct texttable t;
  cJSON *arr = cJSON_CreateArray();
  char num[NUM_TEXT_MAX];
  tt_init(&t, 4);
  if (fmt == FORMAT_TABLE) {
    fprintf(f, "CPU cost profiles (--cpu NAME, or a path to a JSON file; default %s):\n", PROFILE_DEFAULT);
    tt_cell(&t, "%s", ""), tt_cell(&t, "name"), tt_cell(&t, "GHz"), tt_cell(&t, "description");
  }
  if (fmt == FORMAT_CSV) fprintf(f, "name,clock_ghz,default,description\n");
  for (const char *const *n = profile_names(); *n; n++) {
    double ghz;
    char *desc;
    bool dflt = !strcmp(*n, PROFILE_DEFAULT);
    profile_summary(*n, &ghz, &desc);
    if (fmt == FORMAT_TABLE) {
      tt_cell(&t, "%s", ""), tt_cell(&t, "%s", *n), tt_cell(&t, "%.2f", ghz), tt_cell(&t, "%s", desc);
    } else if (fmt == FORMAT_CSV) {
      fprintf(f, "%s,%s,%d,", *n, num_shortest(num, ghz), dflt);
      csv_field(f, desc);
      fputc('\n', f);
    } else {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", *n);
      json_add_number(o, "clock_ghz", ghz);
      cJSON_AddBoolToObject(o, "default", dflt);
      cJSON_AddStringToObject(o, "description", desc);
      cJSON_AddItemToArray(arr, o);
    }
    free(desc);
  }
  if (fmt == FORMAT_TABLE) tt_print(f, &t, "llrl", 2);
  if (fmt == FORMAT_JSON) {
    char *text = cJSON_Print(arr);
    fprintf(f, "%s\n", text);
    free(text);
  }
  cJSON_Delete(arr);
  tt_free(&t);
}
