/* CPU cost profiles: loading and validating the JSON files of models/cpus/. */
#include "profile.h"
#include "models/vmx/controls.h"
#include "data.h"
#include "sim/base/texttable.h"
#include "sim/base/util.h"

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

/*
** The range of a profile's values, and why: every value is a finite,
** non-negative number.  Prices are whole cycles up to 2^32 - 1, so that a
** price times a 32-bit count of work items (models/work.h) never overflows
** 64 bits; no VT-x operation comes near 4 billion cycles.  clock_ghz is in
** (0, 10], the range of every clock (CLOCK_GHZ_MAX, util.h).  cr3_targets_supported is IA32_VMX_MISC[24:16], 9 bits: 0..511
** (SDM A.6).  A capability is 0 or 1.
*/
#define PRICE_MAX   4294967295.0
#define CR3_TARGETS_MAX 511.0

static bool hidden(const struct data_doc *d) { return d->flags & INPUT_HIDE_CONTENT; }

/* "FILE:LINE: params.KEY" for messages (the line of the entry's "value" when
** found); a key that names nothing is not shown from a file whose content
** is not (INPUT_HIDE_CONTENT): "a key of params" then. */
static const char *where(const struct data_doc *d, const char *key, bool known, char *buf, size_t n) {
  const char *value_path[] = { "params", key, "value", NULL }, *key_path[] = { "params", key, NULL };
  int line = data_line(d, value_path);
  if (!line) line = data_line(d, key_path);
  if (!known && hidden(d)) snprintf(buf, n, "%s:%d: a key of params", d->label, line ? line : 1);
  else snprintf(buf, n, "%s:%d: params.%s", d->label, line ? line : 1, key);
  return buf;
}

/* A value of the file as a message shows it: "value 12.5", or "the value"
** when its content is not shown. */
static const char *value_shown(const struct data_doc *d, double v, char *buf, size_t n) {
  char num[NUM_TEXT_MAX];
  if (hidden(d)) return "the value";
  snprintf(buf, n, "value %s", num_shortest(num, v));
  return buf;
}

/* One entry: {"value": N, "kind": "measured|derived|estimated", "source": "..."}. */
static bool read_entry(const struct data_doc *d, const char *key, const cJSON *e, double *out,
                       char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "source");
  char at[600], val[NUM_TEXT_MAX + 8];
  if (!cJSON_IsObject(e) || !cJSON_IsNumber(v)) {
    snprintf(err, errlen, "%s: expected {\"value\": non-negative number, \"kind\", \"source\"}",
             where(d, key, true, at, sizeof at));
    return false;
  }
  if (!isfinite(v->valuedouble) || v->valuedouble < 0) {
    snprintf(err, errlen, "%s: %s is negative (values are non-negative numbers)", where(d, key, true, at, sizeof at),
             value_shown(d, v->valuedouble, val, sizeof val));
    return false;
  }
  if (!cJSON_IsString(k) || (strcmp(k->valuestring, "measured") && strcmp(k->valuestring, "derived") &&
                             strcmp(k->valuestring, "estimated"))) {
    snprintf(err, errlen, "%s: \"kind\" must be measured, derived or estimated", where(d, key, true, at, sizeof at));
    return false;
  }
  if (!cJSON_IsString(s) || !s->valuestring[0]) {
    snprintf(err, errlen, "%s: every value needs a \"source\"", where(d, key, true, at, sizeof at));
    return false;
  }
  *out = v->valuedouble;
  return true;
}

/* A whole number of cycles (or a count) in 0..max. */
static bool read_whole(const struct data_doc *d, const char *key, const cJSON *e, double max, uint64_t *out,
                       char *err, size_t errlen) {
  double v;
  char at[600], val[NUM_TEXT_MAX + 8];
  if (!read_entry(d, key, e, &v, err, errlen)) return false;
  if (v != floor(v) || v > max) {
    snprintf(err, errlen, "%s: %s is not a whole number in 0..%.0f", where(d, key, true, at, sizeof at),
             value_shown(d, v, val, sizeof val), max);
    return false;
  }
  *out = (uint64_t)v;
  return true;
}

static bool read_cycles(const struct data_doc *d, const char *key, const cJSON *e, uint64_t *out,
                        char *err, size_t errlen) {
  return read_whole(d, key, e, PRICE_MAX, out, err, errlen);
}

static bool is_capability(unsigned param) { return param >= PP_CAP_SECONDARY && param <= PP_CAP_IPI_VIRT; }

struct vmx_caps profile_vmx_caps(const struct profile *pr) {
  const uint64_t *p = pr->p;
  /* Every pin-based and primary control vmxsim uses was in the first VT-x
  ** processors but these. */
  uint32_t pin_missing = (p[PP_CAP_PREEMPT_TIMER] ? 0 : PIN_PREEMPTION_TIMER) | (p[PP_CAP_POSTED_INTR] ? 0 : PIN_POSTED_INTR);
  uint32_t cpu_missing = (p[PP_CAP_SECONDARY] ? 0 : CPU_ACTIVATE_SECONDARY) | (p[PP_CAP_TPR_SHADOW] ? 0 : CPU_TPR_SHADOW) |
                         (p[PP_CAP_IPI_VIRT] ? 0 : CPU_ACTIVATE_TERTIARY);
  uint32_t sec = SEC_WBINVD_EXITING | (p[PP_CAP_APIC_ACCESS] ? SEC_APIC_ACCESS : 0) |
                 (p[PP_CAP_EPT] ? SEC_ENABLE_EPT | SEC_ENABLE_RDTSCP | SEC_ENABLE_INVPCID : 0) |
                 (p[PP_CAP_VPID] ? SEC_ENABLE_VPID : 0) | (p[PP_CAP_UNRESTRICTED] ? SEC_UNRESTRICTED_GUEST : 0) |
                 (p[PP_CAP_VIRT_X2APIC] ? SEC_VIRT_X2APIC : 0) | (p[PP_CAP_APIC_REG_VIRT] ? SEC_APIC_REGISTER_VIRT : 0) |
                 (p[PP_CAP_VIRT_INTR] ? SEC_VIRTUAL_INTR_DELIVERY : 0) | (p[PP_CAP_PLE] ? SEC_PAUSE_LOOP_EXITING : 0);
  struct vmx_caps c = {
    .pin_allowed1 = ~pin_missing,
    .cpu_allowed1 = ~cpu_missing,
    .sec_allowed1 = p[PP_CAP_SECONDARY] ? sec : 0,
    .ter_allowed1 = p[PP_CAP_IPI_VIRT] ? TER_IPI_VIRT : 0,
    .cr3_targets = p[PP_CR3_TARGETS],
  };
  return c;
}

/* handler.<REASON> and handler.<REASON>.<breakdown row>, e.g. handler.CR_ACCESS.cr3 write */
static bool read_handlers(struct profile *pr, const struct data_doc *d, const cJSON *params, char *err, size_t errlen) {
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
      char at[600];
      snprintf(err, errlen, "%s: unknown exit reason or breakdown row", where(d, e->string, false, at, sizeof at));
      return false;
    }
    uint64_t c;
    if (!read_cycles(d, e->string, e, &c, err, errlen)) return false;
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
    if (dot) read_cycles(d, e->string, e, &pr->handler[stat_key_by_name(dot + 1)], err, errlen);
  }
  return true;
}

/* Every key is a parameter or a handler cost: a misspelt one must not be ignored. */
static bool check_known(const struct data_doc *d, const cJSON *params, char *err, size_t errlen) {
  for (const cJSON *e = params->child; e; e = e->next) {
    bool known = strncmp(e->string, "handler.", 8) == 0;
    for (unsigned i = 0; i < PP_JSON_COUNT && !known; i++) known = strcmp(e->string, param_names[i]) == 0;
    if (!known) {
      char at[600];
      size_t used = (size_t)snprintf(err, errlen, "%s: unknown parameter; valid: ",
                                     where(d, e->string, false, at, sizeof at));
      for (unsigned i = 0; i < PP_JSON_COUNT && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", param_names[i]);
      if (used < errlen) snprintf(err + used, errlen - used, ", handler.<EXIT_REASON>[.<breakdown row>]");
      return false;
    }
  }
  return true;
}

/* Parameter i of the profile, in its range. */
static bool read_param(struct profile *pr, const struct data_doc *d, unsigned i, const cJSON *e, char *err, size_t errlen) {
  char at[600], val[NUM_TEXT_MAX + 8];
  if (i == PP_CLOCK_GHZ) {
    if (!read_entry(d, param_names[i], e, &pr->clock_ghz, err, errlen)) return false;
    if (clock_ghz_in_range(pr->clock_ghz)) return true;
    snprintf(err, errlen, "%s: %s is outside the range (0, %g] GHz", where(d, param_names[i], true, at, sizeof at),
             value_shown(d, pr->clock_ghz, val, sizeof val), CLOCK_GHZ_MAX);
    return false;
  }
  double max = is_capability(i) ? 1 : i == PP_CR3_TARGETS ? CR3_TARGETS_MAX : PRICE_MAX;
  return read_whole(d, param_names[i], e, max, &pr->p[i], err, errlen);
}

int profile_load(struct profile *pr, const char *name, char *err, size_t errlen) {
  return profile_load_flags(pr, name, 0, err, errlen);
}

int profile_load_flags(struct profile *pr, const char *name, unsigned flags, char *err, size_t errlen) {
  memset(pr, 0, sizeof *pr);
  struct data_doc d;
  int rc = data_open_flags("cpus", name, flags, &d, err, errlen);
  if (rc) return rc;
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(d.json, "params");
  bool ok = cJSON_IsObject(params);
  if (!ok) snprintf(err, errlen, "%s: missing \"params\" object", d.label);
  if (ok) ok = check_known(&d, params, err, errlen);
  for (unsigned i = 0; ok && i < PP_JSON_COUNT; i++) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(params, param_names[i]);
    if (!e) {
      snprintf(err, errlen, "%s: params.%s missing (%s)", d.label, param_names[i], param_descs[i]);
      ok = false;
    } else {
      ok = read_param(pr, &d, i, e, err, errlen);
    }
  }
  if (ok) ok = read_handlers(pr, &d, params, err, errlen);
  if (ok && pr->p[PP_TLB_MISS_2D] < pr->p[PP_TLB_MISS_NATIVE]) {
    char at[600];
    snprintf(err, errlen, "%s must not be below tlb_miss_native", where(&d, "tlb_miss_2d", true, at, sizeof at));
    ok = false;
  }
  if (ok) pr->p[PP_TLB_MISS_2D_EXTRA] = pr->p[PP_TLB_MISS_2D] - pr->p[PP_TLB_MISS_NATIVE];
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(d.json, "name");
  snprintf(pr->name, sizeof pr->name, "%s", cJSON_IsString(n) ? n->valuestring : name);
  if (ok) pr->json = cJSON_PrintUnformatted(d.json);
  data_close(&d);
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
