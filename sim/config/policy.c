/* Hypervisor policies: knob table, preset loading, '+' composition and overrides. */
#include "policy.h"
#include "models/hv/dr.h"
#include "models/mmu/mmu.h"
#include "data.h"
#include "sim/base/texttable.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum knob_type { KNOB_B, KNOB_U, KNOB_P, KNOB_X, KNOB_E };

struct knob {
  const char *name;
  enum knob_type type;
  const char *def;
  size_t offset;
  uint32_t lo, hi;              /* KNOB_U, KNOB_P: the range (models/knobs.h says why) */
  const char *desc;
  const char *const *choices;   /* KNOB_E: NULL-terminated */
};

/* Each enum knob's names come from where its values are defined (models/knobs.h,
** the tables of models/mmu/mmu.c and models/hv/dr.c). */
static const char *const evict_choices[] = { SHADOW_EVICT_VALUES(KNOB_VALUE_NAME) NULL };
static const char *const lapic_timer_choices[] = { LAPIC_TIMER_VALUES(KNOB_VALUE_NAME) NULL };

static const char *const *choices_for(const char *name) {
  if (strcmp(name, "paging") == 0) return mmu_paging_names();     /* one per paging mode (models/mmu/mmu.c) */
  if (strcmp(name, "dr_switch") == 0) return dr_scheme_names();   /* one per models/hv/dr_*.c */
  if (strcmp(name, "shadow_eviction") == 0) return evict_choices;
  if (strcmp(name, "lapic_timer") == 0) return lapic_timer_choices;
  return NULL;
}

static const struct knob knobs[] = {
#define X(n, t, d, field, lo, hi, desc) { #n, KNOB_##t, d, offsetof(struct policy, field), lo, hi, desc, NULL },
  POLICY_KNOBS(X)
#undef X
};
#define NKNOBS (sizeof knobs / sizeof knobs[0])

static const struct knob *find_knob(const char *name) {
  for (size_t i = 0; i < NKNOBS; i++)
    if (strcmp(knobs[i].name, name) == 0) return &knobs[i];
  return NULL;
}

static void list_knob_names(char *buf, size_t n) {
  size_t used = 0;
  for (size_t i = 0; i < NKNOBS && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", knobs[i].name);
}

/* The words a boolean takes; a run's name spells it true or false whatever word was given. */
static bool parse_bool(const char *s, bool *out) {
  if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "on") || !strcmp(s, "yes")) { *out = true; return true; }
  if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "off") || !strcmp(s, "no")) { *out = false; return true; }
  return false;
}

static bool is_pow2(uint64_t u) { return u && !(u & (u - 1)); }

static bool hex_text(const char *s) { return s[0] == '0' && (s[1] == 'x' || s[1] == 'X'); }

/* A value as a message shows it: quoted, or "the value" when it comes from a
** file whose content is not shown (INPUT_HIDE_CONTENT). */
static const char *shown(const char *value, bool hide, char *buf, size_t n) {
  if (hide) return "the value";
  snprintf(buf, n, "'%s'", value);
  return buf;
}

/* A whole number in decimal within the knob's range (and a power of two for
** KNOB_P); otherwise false with a message naming the value (unless hide) and
** the range.  Counts and sizes are decimal only: 0x hex is for the masks
** (KNOB_X), and parse_u64 refuses a leading 0, which C would read as octal. */
static bool set_ranged(const struct knob *k, unsigned *dest, const char *value, bool hide, char *err, size_t errlen) {
  uint64_t u;
  bool hex = hex_text(value), whole = !hex && parse_u64(value, &u);
  if (whole && u >= k->lo && u <= k->hi && (k->type != KNOB_P || is_pow2(u))) {
    *dest = (unsigned)u;
    return true;
  }
  const char *what = hex ? "is not a decimal whole number in" : !whole ? "is not a whole number in"
                    : k->type == KNOB_P ? "is not a power of two in" : "is outside the range";
  const char *why = hex ? " (only the mask knobs take 0x hex)" : parse_u64_hint(value);
  char buf[512];
  snprintf(err, errlen, "knob %s: %s %s %u..%u%s", k->name, shown(value, hide, buf, sizeof buf), what, k->lo,
           k->hi, why);
  return false;
}

static bool set_knob(struct policy *p, const struct knob *k, const char *value, bool hide, char *err,
                     size_t errlen) {
  char *base = (char *)p + k->offset, buf[512];
  uint64_t u;
  bool b;
  switch (k->type) {
  case KNOB_B:
    if (!parse_bool(value, &b)) break;
    *(bool *)base = b;
    return true;
  case KNOB_U: case KNOB_P:
    return set_ranged(k, (unsigned *)base, value, hide, err, errlen);
  case KNOB_X:
    if (!parse_u64(value, &u)) break;
    *(uint64_t *)base = u;
    return true;
  case KNOB_E: {
    const char *const *c = choices_for(k->name);
    for (int i = 0; c[i]; i++)
      if (strcmp(c[i], value) == 0) { *(int *)base = i; return true; }
    size_t used = (size_t)snprintf(err, errlen, "knob %s: %s is not one of: ", k->name,
                                   shown(value, hide, buf, sizeof buf));
    for (int i = 0; c[i] && used < errlen; i++)
      used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", c[i]);
    return false;
  }
  }
  static const char *const what[] = { [KNOB_B] = "true or false (or 1|0, on|off, yes|no)",
                                      [KNOB_X] = "a 64-bit mask: decimal, or 0x hex" };
  snprintf(err, errlen, "knob %s: %s is not %s%s", k->name, shown(value, hide, buf, sizeof buf), what[k->type],
           k->type == KNOB_X ? parse_u64_hint(value) : "");
  return false;
}

/* The knob's value in p as a run's name spells it: decimal, 0x and lowercase
** hex for a mask, true or false, a choice's name.  One value, one text, so
** that two spellings of a value are one run (docs/schema.md). */
static const char *knob_text(const struct policy *p, const struct knob *k, char *buf, size_t n) {
  const char *base = (const char *)p + k->offset;
  switch (k->type) {
  case KNOB_B: return *(const bool *)base ? "true" : "false";
  case KNOB_U: case KNOB_P: snprintf(buf, n, "%u", *(const unsigned *)base); break;
  case KNOB_X: snprintf(buf, n, "0x%llx", (unsigned long long)*(const uint64_t *)base); break;
  case KNOB_E: return choices_for(k->name)[*(const int *)base];
  }
  return buf;
}

/* "unknown knob 'k'; valid knobs: ..." */
static int unknown_knob(const char *key, char *err, size_t errlen) {
  char names[1024];
  list_knob_names(names, sizeof names);
  snprintf(err, errlen, "unknown knob '%s'; valid knobs: %s", key, names);
  return EXIT_USAGE;
}

int policy_set(struct policy *p, const char *key, const char *value, char *err, size_t errlen) {
  const struct knob *k = find_knob(key);
  if (!k) return unknown_knob(key, err, errlen);
  return set_knob(p, k, value, false, err, errlen) ? EXIT_OK : EXIT_USAGE;
}

/* Applies the overrides "KEY=VALUE" in order (a later value of a key wins)
** and marks in given[] (NKNOBS of them) each knob they set. */
static int apply_sets(struct policy *p, char *const *sets, int nsets, bool *given, char *err, size_t errlen) {
  for (int i = 0; i < nsets; i++) {
    char key[128];
    const char *eq = strchr(sets[i], '=');
    if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof key) {
      snprintf(err, errlen, "--set %s: expected KEY=VALUE", sets[i]);
      return EXIT_USAGE;
    }
    memcpy(key, sets[i], (size_t)(eq - sets[i]));
    key[eq - sets[i]] = 0;
    const struct knob *k = find_knob(key);
    if (!k) return unknown_knob(key, err, errlen);
    if (!set_knob(p, k, eq + 1, false, err, errlen)) return EXIT_USAGE;
    given[k - knobs] = true;
  }
  return EXIT_OK;
}

/* spec, then ",KEY=VALUE" for each knob given[], in the table's order and
** spelled by knob_text: one configuration, one name, however its overrides
** were ordered, repeated or spelled (cut at n - 1 bytes). */
static void write_name(char *name, size_t n, const char *spec, const struct policy *p, const bool *given) {
  size_t used = (size_t)snprintf(name, n, "%s", spec);
  for (size_t i = 0; i < NKNOBS && used < n; i++) {
    char buf[32];
    if (given[i])
      used += (size_t)snprintf(name + used, n - used, ",%s=%s", knobs[i].name, knob_text(p, &knobs[i], buf, sizeof buf));
  }
}

static void policy_defaults(struct policy *p) {
  char err[256];
  memset(p, 0, sizeof *p);
  for (size_t i = 0; i < NKNOBS; i++)
    if (!set_knob(p, &knobs[i], knobs[i].def, false, err, sizeof err)) abort();   /* table bug */
}

/* A JSON knob value as the text policy_set accepts; a number as it reads
** back (64.7, -1), so that policy_set refuses what is not a whole number
** instead of it being rounded here. */
static bool json_value_text(const cJSON *v, char *buf, size_t n) {
  char num[NUM_TEXT_MAX];
  if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsString(v)) snprintf(buf, n, "%s", v->valuestring);
  else if (cJSON_IsNumber(v)) snprintf(buf, n, "%s", num_shortest(num, v->valuedouble));
  else return false;
  return true;
}

/* One knob of a file: 0, or EXIT_BADINPUT with the message (without the
** file and line) in sub.  With hide, neither an unknown knob's name nor the
** value is shown. */
static int apply_knob(struct policy *p, const cJSON *k, bool hide, char *sub, size_t n) {
  const struct knob *kn = find_knob(k->string);
  char text[128];
  if (!kn && hide) {
    char names[1024];
    list_knob_names(names, sizeof names);
    snprintf(sub, n, "unknown knob; valid knobs: %s", names);
  } else if (!json_value_text(k, text, sizeof text)) {
    snprintf(sub, n, "knob %s: value must be a boolean, number or string", k->string);
  } else if (!kn) {
    policy_set(p, k->string, text, sub, n);        /* its message for an unknown knob */
  } else if (set_knob(p, kn, text, hide, sub, n)) {
    return EXIT_OK;
  }
  return EXIT_BADINPUT;
}

/* Applies the knobs of a preset's "knobs" object; a bad one is bad input,
** named with the file and line. */
static int apply_knobs(struct policy *p, const struct data_doc *d, const cJSON *ks, char *err, size_t errlen) {
  for (const cJSON *k = ks->child; k; k = k->next) {
    char sub[1536];
    if (!apply_knob(p, k, d->flags & INPUT_HIDE_CONTENT, sub, sizeof sub)) continue;
    const char *path[] = { "knobs", k->string, NULL };   /* found only for a message: it scans the text */
    int line = data_line(d, path);
    snprintf(err, errlen, "%s:%d: %s", d->label, line ? line : 1, sub);
    return EXIT_BADINPUT;
  }
  return EXIT_OK;
}

/* A message about the preset that file d names as "base", prefixed with where
** d names it, so that a missing or bad base says which file asked for it.
** When d's content is not to be shown, neither is the base's name (a path
** or a preset name is text of d) nor what its loading said (it names the
** base, and its content is that of a file d names): only whether it is no
** preset's name, with the valid ones. */
static void in_base(const struct data_doc *d, int rc, char *err, size_t errlen) {
  const char *path[] = { "base", NULL };
  int line = data_line(d, path);
  char inner[1024];
  if (!(d->flags & INPUT_HIDE_CONTENT)) {
    snprintf(inner, sizeof inner, "%s", err);
  } else if (rc == EXIT_USAGE) {
    size_t used = (size_t)snprintf(inner, sizeof inner, "not the name of a preset; valid: ");
    for (const char *const *n = data_names("policies"); *n && used < sizeof inner; n++)
      used += (size_t)snprintf(inner + used, sizeof inner - used, "%s%s", n == data_names("policies") ? "" : ", ", *n);
  } else {
    snprintf(inner, sizeof inner, "the file it names cannot be used as a policy (what is wrong is not shown, as "
             "it would show the name and text of that file)");
  }
  snprintf(err, errlen, "%s:%d: \"base\": %s", d->label, line ? line : 1, inner);
}

/* Applies one preset (and, first, the preset it names as "base"), reading a
** file as flags say.  A file whose content is wrong is bad input
** (EXIT_BADINPUT); an unknown name is a usage error (data_load). */
static int apply_preset(struct policy *p, const char *name, int depth, unsigned flags, char *err, size_t errlen) {
  if (depth > 8) {
    snprintf(err, errlen, "policy %s: \"base\" chain too deep (a cycle?)", name);
    return EXIT_BADINPUT;
  }
  struct data_doc d;
  int rc = data_open_flags("policies", name, flags, &d, err, errlen);
  if (rc) return rc;
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(d.json, "base");
  if (cJSON_IsString(base) && (rc = apply_preset(p, base->valuestring, depth + 1, flags, err, errlen)) != 0)
    in_base(&d, rc, err, errlen);
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(d.json, "knobs");
  if (!rc && !cJSON_IsObject(ks)) {
    snprintf(err, errlen, "%s: missing \"knobs\" object", d.label);
    rc = EXIT_BADINPUT;
  }
  if (!rc) rc = apply_knobs(p, &d, ks, err, errlen);
  data_close(&d);
  return rc;
}

/* Applies "a+b+c" in order; an empty part ("+", "a+", "a++b") is a usage error. */
static int apply_presets(struct policy *p, const char *spec, unsigned flags, char *err, size_t errlen) {
  for (const char *s = spec;;) {
    const char *plus = strchr(s, '+');
    size_t n = plus ? (size_t)(plus - s) : strlen(s);
    char name[256];
    if (n == 0 || n >= sizeof name) {
      snprintf(err, errlen, "--policy %s: %s", spec, n ? "a preset name is too long"
               : "an empty preset name (presets compose as NAME+NAME, e.g. shadowcache+lazydr)");
      return EXIT_USAGE;
    }
    memcpy(name, s, n);
    name[n] = 0;
    int rc = apply_preset(p, name, 0, flags, err, errlen);
    if (rc || !plus) return rc;
    s = plus + 1;
  }
}

int policy_resolve(struct policy *p, const char *spec, char *const *sets, int nsets,
                   char *err, size_t errlen) {
  return policy_resolve_flags(p, spec, sets, nsets, 0, err, errlen);
}

int policy_resolve_flags(struct policy *p, const char *spec, char *const *sets, int nsets, unsigned flags,
                         char *err, size_t errlen) {
  policy_defaults(p);
  if (!spec || !*spec) {
    snprintf(err, errlen, "empty policy name");
    return EXIT_USAGE;
  }
  bool given[NKNOBS] = { 0 };
  int rc = apply_presets(p, spec, flags, err, errlen);
  if (!rc) rc = apply_sets(p, sets, nsets, given, err, errlen);
  write_name(p->name, sizeof p->name, spec, p, given);
  return rc;
}

int policy_from_name(struct policy *p, const char *name, char *err, size_t errlen) {
  char buf[sizeof p->name];
  if (snprintf(buf, sizeof buf, "%s", name) >= (int)sizeof buf) {
    snprintf(err, errlen, "policy name too long");
    return EXIT_USAGE;
  }
  char *sets[NKNOBS];
  int nsets = 0;
  for (char *comma = strchr(buf, ','); comma && nsets < (int)NKNOBS; comma = strchr(comma + 1, ',')) {
    *comma = 0;
    sets[nsets++] = comma + 1;
  }
  return policy_resolve(p, buf, sets, nsets, err, errlen);
}

int policy_name(const char *spec, char *const *sets, int nsets, char *name, size_t n, char *err, size_t errlen) {
  struct policy p;
  bool given[NKNOBS] = { 0 };
  policy_defaults(&p);   /* the overrides come last, so no preset changes what they set */
  int rc = apply_sets(&p, sets, nsets, given, err, errlen);
  if (!rc) write_name(name, n, spec, &p, given);
  return rc;
}

char *policy_to_json(const struct policy *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", p->name);
  for (size_t i = 0; i < NKNOBS; i++) {
    const struct knob *k = &knobs[i];
    const char *base = (const char *)p + k->offset;
    char buf[32];
    switch (k->type) {
    case KNOB_B: cJSON_AddBoolToObject(o, k->name, *(const bool *)base); break;
    case KNOB_U: case KNOB_P: cJSON_AddNumberToObject(o, k->name, *(const unsigned *)base); break;
    case KNOB_X: case KNOB_E: cJSON_AddStringToObject(o, k->name, knob_text(p, k, buf, sizeof buf)); break;
    }
  }
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

const char *const *policy_preset_names(void) { return data_names("policies"); }

static const char *const knob_type_names[] = { [KNOB_B] = "bool", [KNOB_U] = "integer", [KNOB_P] = "power of two", [KNOB_X] = "hex",
                                                [KNOB_E] = "choice" };

/* A preset's description from its JSON file ("" when it has none). */
static char *preset_description(const char *name) {
  char err[256];
  cJSON *j = NULL;
  data_load("policies", name, &j, err, sizeof err);
  const cJSON *d = j ? cJSON_GetObjectItemCaseSensitive(j, "description") : NULL;
  char *s = xstrdup(cJSON_IsString(d) ? d->valuestring : "");
  cJSON_Delete(j);
  return s;
}

/* "fifo|lru" for a choice knob, "" otherwise (buf). */
static const char *knob_values(const struct knob *k, char *buf, size_t n) {
  const char *const *c = k->type == KNOB_E ? choices_for(k->name) : NULL;
  size_t used = 0;
  buf[0] = 0;
  for (; c && *c && used < n; c++) used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "|" : "", *c);
  return buf;
}

/* A knob's accepted values as the listings show them: "0..8", "powers of
** two 4..16384", "true|false", "fifo|lru", "any 64-bit value" (buf). */
static const char *knob_range(const struct knob *k, char *buf, size_t n) {
  switch (k->type) {
  case KNOB_U: snprintf(buf, n, "%u..%u", k->lo, k->hi); break;
  case KNOB_P: snprintf(buf, n, "powers of two %u..%u", k->lo, k->hi); break;
  case KNOB_B: snprintf(buf, n, "true|false"); break;
  case KNOB_X: snprintf(buf, n, "0..0xffffffffffffffff"); break;
  case KNOB_E: return knob_values(k, buf, n);
  }
  return buf;
}

static void list_table(FILE *f) {
  struct texttable t;
  fprintf(f, "Policy presets (compose with '+', later ones override: --policy shadowcache+lazydr):\n");
  tt_init(&t, 3);
  for (const char *const *n = policy_preset_names(); *n; n++) {
    char *d = preset_description(*n);
    tt_cell(&t, "%s", ""), tt_cell(&t, "%s", *n), tt_cell(&t, "%s", d);
    free(d);
  }
  tt_print(f, &t, "lll", 2);
  tt_free(&t);
  fprintf(f, "\nKnobs (override with --set KEY=VALUE; defaults before any preset; a value outside the range "
             "is refused):\n");
  tt_init(&t, 5);
  tt_cell(&t, "%s", ""), tt_cell(&t, "name"), tt_cell(&t, "default"), tt_cell(&t, "range"), tt_cell(&t, "description");
  for (size_t i = 0; i < NKNOBS; i++) {
    char range[256];
    tt_cell(&t, "%s", ""), tt_cell(&t, "%s", knobs[i].name), tt_cell(&t, "%s", knobs[i].def),
      tt_cell(&t, "%s", knob_range(&knobs[i], range, sizeof range)), tt_cell(&t, "%s", knobs[i].desc);
  }
  tt_print(f, &t, "lllll", 2);
  tt_free(&t);
  fprintf(f, "\nValues: numbers in decimal, masks also in 0x hex, never with a leading 0 (C would read 010 as\n"
             "octal); booleans true|false (or 1|0, on|off, yes|no).  A run is named with each overridden knob\n"
             "once, in this table's order, its value spelled one way (a later --set of a knob wins):\n"
             "shadowcache,cr4_guest_host_mask=0xf0,rdtsc_exiting=true\n");
}

static void list_csv(FILE *f) {
  char vals[256];
  fprintf(f, "kind,name,type,default,values,min,max,description\n");
  for (const char *const *n = policy_preset_names(); *n; n++) {
    char *d = preset_description(*n);
    fprintf(f, "preset,%s,,,,,,", *n);
    csv_field(f, d);
    fputc('\n', f);
    free(d);
  }
  for (size_t i = 0; i < NKNOBS; i++) {
    const struct knob *k = &knobs[i];
    fprintf(f, "knob,%s,%s,", k->name, knob_type_names[k->type]);
    csv_field(f, k->def);
    fputc(',', f);
    csv_field(f, knob_values(k, vals, sizeof vals));
    if (k->type == KNOB_U || k->type == KNOB_P) fprintf(f, ",%u,%u,", k->lo, k->hi);
    else if (k->type == KNOB_X) fprintf(f, ",0,%llu,", (unsigned long long)UINT64_MAX);
    else fprintf(f, ",,,");
    csv_field(f, k->desc);
    fputc('\n', f);
  }
}

static void list_json(FILE *f) {
  cJSON *o = cJSON_CreateObject(), *presets = cJSON_AddArrayToObject(o, "presets");
  cJSON *ks = cJSON_AddArrayToObject(o, "knobs");
  for (const char *const *n = policy_preset_names(); *n; n++) {
    cJSON *p = cJSON_CreateObject();
    char *d = preset_description(*n);
    cJSON_AddStringToObject(p, "name", *n);
    cJSON_AddStringToObject(p, "description", d);
    cJSON_AddItemToArray(presets, p);
    free(d);
  }
  for (size_t i = 0; i < NKNOBS; i++) {
    const struct knob *k = &knobs[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", k->name);
    cJSON_AddStringToObject(j, "type", knob_type_names[k->type]);
    cJSON_AddStringToObject(j, "default", k->def);
    if (k->type == KNOB_E) {
      cJSON *v = cJSON_AddArrayToObject(j, "values");
      for (const char *const *c = choices_for(k->name); c && *c; c++) cJSON_AddItemToArray(v, cJSON_CreateString(*c));
    }
    if (k->type == KNOB_U || k->type == KNOB_P) {
      cJSON_AddNumberToObject(j, "min", k->lo);
      cJSON_AddNumberToObject(j, "max", k->hi);
    }
    if (k->type == KNOB_P) cJSON_AddBoolToObject(j, "power_of_two", true);
    cJSON_AddStringToObject(j, "description", k->desc);
    cJSON_AddItemToArray(ks, j);
  }
  char *text = cJSON_Print(o);
  fprintf(f, "%s\n", text);
  free(text);
  cJSON_Delete(o);
}

void policy_list(FILE *f, enum report_format fmt) {
  if (fmt == FORMAT_CSV) list_csv(f);
  else if (fmt == FORMAT_JSON) list_json(f);
  else list_table(f);
}
