/* Regression case files: loading, validation, comparison and --update (see
** regress_case.h); regress_json.c writes them back as canonical JSON. */
#include "regress_case.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const top_keys[] = { "cpu", "cycles_tolerance", "description", "expect",
                                        "generate", "policy", "set", "trace", NULL };
static const char *const expect_keys[] = { "counters", "cycles", "events", "exits", "total_exits", NULL };

/* ---- errors ---- */

/* Line of the first `"key":` in text (0 if not found), to point at a key in messages. */
static int key_line(const char *text, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = text; (p = strchr(p, '"')) != NULL; p++) {
    if (strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '"') continue;
    const char *q = p + 2 + kl;
    while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') q++;
    if (*q != ':') continue;
    int line = 1;
    for (const char *t = text; t < p; t++) line += *t == '\n';
    return line;
  }
  return 0;
}

/* "FILE:LINE: message" where LINE is that of key (omitted when unknown).  A
** case can have several problems: each is appended to err on a line of its
** own, so that one run of regress reports them all. */
static bool fail_at(const struct regress_case *c, const char *key, char *err, size_t errlen,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static bool fail_at(const struct regress_case *c, const char *key, char *err, size_t errlen,
                    const char *fmt, ...) {
  int line = key && c->text ? key_line(c->text, key) : 0;
  size_t used = strnlen(err, errlen);
  if (used + 2 >= errlen) return false;                /* full: the first problems are there */
  if (used) err[used++] = '\n';
  err += used;
  errlen -= used;
  size_t n = line ? (size_t)snprintf(err, errlen, "%s:%d: ", c->path, line)
                  : (size_t)snprintf(err, errlen, "%s: ", c->path);
  if (n < errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - n, fmt, ap);
    va_end(ap);
    /* a quoted key may hold a JSON-escaped newline or other control character: one problem, one line */
    for (char *p = err + n; *p; p++)
      if ((unsigned char)*p < 0x20) *p = '?';
  }
  return false;
}

static bool is_known(const char *const *keys, const char *k) {
  for (; *keys; keys++)
    if (!strcmp(*keys, k)) return true;
  return false;
}

static void list_keys(const char *const *keys, char *out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  for (const char *const *k = keys; *k && used < n; k++)
    used += (size_t)snprintf(out + used, n - used, "%s%s", k == keys ? "" : ", ", *k);
}

/* A duplicate key anywhere in the document: cJSON keeps both silently. */
static const char *find_duplicate(const cJSON *j) {
  for (const cJSON *c = j->child; c; c = c->next) {
    if (cJSON_IsObject(j))
      for (const cJSON *d = c->next; d; d = d->next)
        if (!strcmp(c->string, d->string)) return c->string;
    if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      const char *dup = find_duplicate(c);
      if (dup) return dup;
    }
  }
  return NULL;
}

/* A number too large for a double anywhere in the document (cJSON reads 1e999
** as infinity, which no JSON text can hold, so --update could not write it
** back): the key it is under, or "" at the top; NULL when there is none. */
static const char *find_infinite(const cJSON *j, const char *key) {
  if (cJSON_IsNumber(j) && !isfinite(j->valuedouble)) return key ? key : "";
  for (const cJSON *c = j->child; c; c = c->next) {
    const char *at = find_infinite(c, c->string ? c->string : key);
    if (at) return at;
  }
  return NULL;
}

/* ---- loading ---- */

static bool json_uint(const cJSON *v, uint64_t *out) {
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) ||
      v->valuedouble > REGRESS_JSON_INT_MAX)
    return false;
  *out = (uint64_t)v->valuedouble;
  return true;
}

/* The directory a case's paths are relative to: the case file's, or, when
** path is a symbolic link, that of the file it leads to (a link to a case
** kept elsewhere runs it as it runs there); "" for the current directory. */
static char *case_dir(const char *path) {
  struct stat st;
  char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
  char *dir = xstrdup(real ? real : path);
  char *slash = strrchr(dir, '/');
  if (slash) slash[slash == dir] = 0;            /* "/case.json" is in "/" */
  else dir[0] = 0;
  free(real);
  return dir;
}

/* dir/p for a relative p (dir "" = the current directory). */
static char *resolve(const char *dir, const char *p) {
  if (p[0] == '/' || !dir[0]) return xstrdup(p);
  size_t n = strlen(dir) + strlen(p) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s/%s", dir, p);
  return s;
}

/* Policy and CPU names that are files (contain '/' or end in .json, as data_load decides). */
static bool names_file(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"));
}

static char *resolve_policy(const char *dir, const char *spec) {
  struct strbuf b = { 0 };
  char *copy = xstrdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
    char *r = names_file(tok) ? resolve(dir, tok) : xstrdup(tok);
    if (b.len) strbuf_puts(&b, "+");
    strbuf_puts(&b, r);
    free(r);
  }
  free(copy);
  return b.s ? b.s : xstrdup("");
}

static void add_dropped(struct regress_case *c, const char *section, const char *name) {
  size_t n = strlen(c->dropped);
  snprintf(c->dropped + n, sizeof c->dropped - n, "%sexpect.%s%s%s", n ? ", " : "", section, name ? "." : "",
           name ? name : "");
}

static int counter_by_name(const char *name) {
  for (unsigned i = 0; i < CTR_COUNT; i++)
    if (!strcmp(counter_name(i), name)) return (int)i;
  return -1;
}

/* One map section of "expect": "exits" (stat keys) or "counters"; every bad entry is reported. */
static bool load_map(struct regress_case *c, const cJSON *m, bool exits, bool lenient, char *err, size_t errlen) {
  const char *sec = exits ? "exits" : "counters";
  if (!cJSON_IsObject(m)) {
    if (lenient) { add_dropped(c, sec, NULL); return true; }
    return fail_at(c, sec, err, errlen, "expect.%s: expected an object of name: count", sec);
  }
  if (exits) c->expect.has_exits = true;
  else c->expect.has_counters = true;
  bool ok = true;
  for (const cJSON *e = m->child; e; e = e->next) {
    int k = exits ? stat_key_by_name(e->string) : counter_by_name(e->string);
    uint64_t v;
    if (k < 0) {
      if (lenient) { add_dropped(c, sec, e->string); continue; }
      if (exits) {
        ok = fail_at(c, e->string, err, errlen,
                     "expect.exits: unknown exit reason or breakdown row '%s' (names as in "
                     "'vmxsim --format json': EXCEPTION_NMI, CR_ACCESS, cr3 write, dr7 read, ...)", e->string);
        continue;
      }
      char known[1024];
      size_t used = 0;
      for (unsigned i = 0; i < CTR_COUNT && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", counter_name(i));
      ok = fail_at(c, e->string, err, errlen, "expect.counters: unknown counter '%s' (known: %s)", e->string, known);
      continue;
    }
    if (!json_uint(e, &v)) {
      if (lenient) { add_dropped(c, sec, e->string); continue; }
      ok = fail_at(c, e->string, err, errlen, "expect.%s.%s: expected a non-negative integer", sec, e->string);
      continue;
    }
    if (exits) c->expect.exits[k] = v;
    else c->expect.counters[k] = v;
  }
  return ok;
}

static bool load_expect(struct regress_case *c, const cJSON *x, bool lenient, char *err, size_t errlen) {
  if (!cJSON_IsObject(x)) {
    if (lenient) { add_dropped(c, "expect", NULL); return true; }
    return fail_at(c, "expect", err, errlen, "\"expect\" must be an object");
  }
  c->has_expect = true;
  bool ok = true;
  for (const cJSON *e = x->child; e; e = e->next) {
    const char *k = e->string;
    if (!strcmp(k, "exits") || !strcmp(k, "counters")) {
      ok &= load_map(c, e, k[0] == 'e', lenient, err, errlen);
      continue;
    }
    uint64_t *dst = !strcmp(k, "events") ? &c->expect.events
                  : !strcmp(k, "total_exits") ? &c->expect.total_exits
                  : !strcmp(k, "cycles") ? &c->expect.cycles : NULL;
    bool *has = !strcmp(k, "events") ? &c->expect.has_events
              : !strcmp(k, "total_exits") ? &c->expect.has_total_exits : &c->expect.has_cycles;
    if (!dst) {
      if (lenient) { add_dropped(c, k, NULL); continue; }
      char known[128];
      list_keys(expect_keys, known, sizeof known);
      ok = fail_at(c, k, err, errlen, "expect: unknown key '%s' (expected %s)", k, known);
      continue;
    }
    if (!json_uint(e, dst)) {
      if (lenient) { add_dropped(c, k, NULL); continue; }
      ok = fail_at(c, k, err, errlen, "expect.%s: expected a non-negative integer", k);
      continue;
    }
    *has = true;
  }
  return ok;
}

static bool load_generate(struct regress_case *c, const cJSON *g, char *err, size_t errlen) {
  int n = cJSON_GetArraySize(g);
  if (!cJSON_IsArray(g) || n == 0)
    return fail_at(c, "generate", err, errlen, "\"generate\" must be a non-empty array: the workload and its "
                   "options, e.g. [\"lat_ctx\", \"--procs\", \"2\", \"--iters\", \"50\"]");
  c->gen = xcalloc((size_t)n + 1, sizeof *c->gen);
  for (const cJSON *a = g->child; a; a = a->next) {
    char num[32];
    if (cJSON_IsNumber(a) && a->valuedouble == floor(a->valuedouble) && fabs(a->valuedouble) < REGRESS_JSON_INT_MAX)
      snprintf(num, sizeof num, "%.0f", a->valuedouble);
    else if (cJSON_IsNumber(a))
      snprintf(num, sizeof num, "%.17g", a->valuedouble);
    else if (!cJSON_IsString(a))
      return fail_at(c, "generate", err, errlen, "\"generate\": element %d is not a string or number", c->ngen + 1);
    const char *s = cJSON_IsString(a) ? a->valuestring : num;
    if (!strcmp(s, "-o") || !strcmp(s, "--output") || !strncmp(s, "--output=", 9))
      return fail_at(c, "generate", err, errlen, "\"generate\": leave out %s: vmxsim regress writes the trace "
                     "to a temporary file", s);
    if (!strcmp(s, "-h") || !strcmp(s, "--help"))
      return fail_at(c, "generate", err, errlen, "\"generate\": %s is not a generator parameter", s);
    c->gen[c->ngen++] = xstrdup(s);
  }
  if (c->gen[0][0] == '-')
    return fail_at(c, "generate", err, errlen, "\"generate\": the first element must be the workload "
                   "(lat_ctx, hackbench, ...), not the option '%s'", c->gen[0]);
  return true;
}

static bool load_set(struct regress_case *c, const cJSON *s, char *err, size_t errlen) {
  if (!cJSON_IsObject(s))
    return fail_at(c, "set", err, errlen, "\"set\" must be an object of knob: value, e.g. {\"shadow_pages_max\": 64}");
  c->sets = xcalloc((size_t)cJSON_GetArraySize(s) + 1, sizeof *c->sets);
  bool ok = true;
  for (const cJSON *k = s->child; k; k = k->next) {
    char val[128];
    uint64_t u;
    if (cJSON_IsBool(k)) snprintf(val, sizeof val, "%s", cJSON_IsTrue(k) ? "true" : "false");
    else if (cJSON_IsString(k)) snprintf(val, sizeof val, "%s", k->valuestring);
    else if (json_uint(k, &u)) snprintf(val, sizeof val, "%llu", (unsigned long long)u);
    else {
      ok = fail_at(c, k->string, err, errlen, "set.%s: value must be a boolean, a non-negative integer or a string",
                   k->string);
      continue;
    }
    size_t n = strlen(k->string) + strlen(val) + 2;
    c->sets[c->nsets] = xmalloc(n);
    snprintf(c->sets[c->nsets++], n, "%s=%s", k->string, val);
  }
  return ok;
}

static bool load_json(struct regress_case *c, char *err, size_t errlen) {
  const char *text = c->text;
  if (!strncmp(text, "\xef\xbb\xbf", 3)) text += 3;            /* UTF-8 byte-order mark */
  const char *p = text;
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
  if (!*p) return fail_at(c, NULL, err, errlen, "empty file (expected a JSON object)");
  const char *end = NULL;
  c->json = cJSON_ParseWithOpts(text, &end, 1);
  if (!c->json) {
    const char *at = cJSON_GetErrorPtr();
    if (!at || at < text) at = text;
    bool eof = !*at;
    while (eof && at > text && (at[-1] == ' ' || at[-1] == '\t' || at[-1] == '\r' || at[-1] == '\n')) at--;
    int line = 1;
    const char *bol = text;
    for (const char *t = text; t < at && *t; t++)
      if (*t == '\n') { line++; bol = t + 1; }
    int len = 0;
    while (len < 20 && at[len] && at[len] != '\n' && at[len] != '\r') len++;
    if (eof)
      snprintf(err, errlen, "%s:%d:%d: invalid JSON: unexpected end of file (an object, array or string "
               "is not closed)", c->path, line, (int)(at - bol) + 1);
    else
      snprintf(err, errlen, "%s:%d:%d: invalid JSON near '%.*s'", c->path, line, (int)(at - bol) + 1, len, at);
    return false;
  }
  if (!cJSON_IsObject(c->json)) return fail_at(c, NULL, err, errlen, "expected a JSON object at the top level");
  const char *dup = find_duplicate(c->json);
  if (dup) return fail_at(c, dup, err, errlen, "duplicate key '%s'", dup);
  const char *inf = find_infinite(c->json, NULL);
  if (inf)
    return fail_at(c, *inf ? inf : NULL, err, errlen, "%s%s%sa number too large for a double (a JSON number "
                   "vmxsim cannot write back)", *inf ? "'" : "", inf, *inf ? "': " : "");
  return true;
}

int regress_case_load(struct regress_case *c, const char *path, bool lenient, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  if (errlen) err[0] = 0;
  c->path = xstrdup(path);
  size_t len;
  int fd = input_open(path, INPUT_REGULAR_ONLY, err, errlen);    /* a FIFO would keep regress waiting */
  if (fd < 0) return EXIT_BADINPUT;
  c->text = read_fd(fd, &len);
  if (!c->text) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return EXIT_BADINPUT;
  }
  const char *nul = memchr(c->text, 0, len);       /* the JSON parser would stop there */
  if (nul) {
    snprintf(err, errlen, "%s: byte %zu: NUL byte (a case file is JSON text in UTF-8; saved as UTF-16?)", path,
             (size_t)(nul - c->text));
    return EXIT_BADINPUT;
  }
  if (!load_json(c, err, errlen)) return EXIT_BADINPUT;
  const cJSON *j = c->json;
  bool ok = true;
  for (const cJSON *e = j->child; e; e = e->next) {
    if (is_known(top_keys, e->string)) continue;
    char known[256];
    list_keys(top_keys, known, sizeof known);
    ok = fail_at(c, e->string, err, errlen, "unknown key '%s' (expected %s)", e->string, known);
  }
  char *dir = case_dir(path);
  const cJSON *trace = cJSON_GetObjectItemCaseSensitive(j, "trace");
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(j, "generate");
  const cJSON *policy = cJSON_GetObjectItemCaseSensitive(j, "policy");
  const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(j, "cpu");
  const cJSON *set = cJSON_GetObjectItemCaseSensitive(j, "set");
  const cJSON *tol = cJSON_GetObjectItemCaseSensitive(j, "cycles_tolerance");
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(j, "description");
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(j, "expect");
  /* Each check reports its own problem and the next one runs all the same. */
  if (trace && gen) ok = fail_at(c, "generate", err, errlen, "give either \"trace\" or \"generate\", not both");
  else if (!trace && !gen)
    ok = fail_at(c, NULL, err, errlen, "missing \"trace\" (a trace file, relative to the case file) or \"generate\" "
                 "(a generator command, e.g. [\"lat_ctx\", \"--procs\", \"2\", \"--iters\", \"50\"])");
  if (trace && (!cJSON_IsString(trace) || !trace->valuestring[0]))
    ok = fail_at(c, "trace", err, errlen, "\"trace\" must be a file name (relative to the case file)");
  if (gen && !load_generate(c, gen, err, errlen)) ok = false;
  if (!policy)
    ok = fail_at(c, NULL, err, errlen, "missing \"policy\" (a preset such as \"shadowcache\", or presets joined "
                 "with '+' such as \"shadowcache+lazydr\"; 'vmxsim policies' lists them)");
  else if (!cJSON_IsString(policy) || !policy->valuestring[0])
    ok = fail_at(c, "policy", err, errlen, "\"policy\" must be a non-empty string such as \"shadowcache+lazydr\"");
  if (cpu && (!cJSON_IsString(cpu) || !cpu->valuestring[0]))
    ok = fail_at(c, "cpu", err, errlen, "\"cpu\" must be a CPU profile name such as \"core2-2007\" ('vmxsim cpus')");
  if (set && !load_set(c, set, err, errlen)) ok = false;
  if (tol && (!cJSON_IsNumber(tol) || !(tol->valuedouble >= 0 && tol->valuedouble <= 1)))
    ok = fail_at(c, "cycles_tolerance", err, errlen, "\"cycles_tolerance\" must be a number from 0 to 1 "
                 "(relative: 0.001 allows 0.1%%)");
  if (desc && !cJSON_IsString(desc)) ok = fail_at(c, "description", err, errlen, "\"description\" must be a string");
  if (expect && !load_expect(c, expect, lenient, err, errlen)) ok = false;
  if (ok) {
    if (trace) c->trace = resolve(dir, trace->valuestring);
    c->policy = resolve_policy(dir, policy->valuestring);
    if (cpu) c->cpu = names_file(cpu->valuestring) ? resolve(dir, cpu->valuestring) : xstrdup(cpu->valuestring);
    c->cycles_tolerance = tol ? tol->valuedouble : 0;
  }
  free(dir);
  return ok ? EXIT_OK : EXIT_BADINPUT;
}

void regress_case_free(struct regress_case *c) {
  for (int i = 0; i < c->ngen; i++) free(c->gen[i]);
  for (int i = 0; i < c->nsets; i++) free(c->sets[i]);
  free(c->gen);
  free(c->sets);
  free(c->path);
  free(c->text);
  free(c->trace);
  free(c->policy);
  free(c->cpu);
  cJSON_Delete(c->json);
  memset(c, 0, sizeof *c);
}

/* ---- results and comparison ---- */

void regress_values_from_report(struct regress_values *v, const struct report *rep) {
  memset(v, 0, sizeof *v);
  v->has_exits = v->has_counters = v->has_events = v->has_total_exits = v->has_cycles = true;
  for (unsigned i = 0; i < rep->nrows; i++) {
    int k = stat_key_by_name(rep->rows[i].name);
    if (k >= 0) v->exits[k] = rep->rows[i].count;
  }
  for (unsigned i = 0; i < rep->ncounters; i++) {
    int k = counter_by_name(rep->counters[i].name);
    if (k >= 0) v->counters[k] = rep->counters[i].value;
  }
  v->events = rep->events;
  v->total_exits = rep->total_exits;
  v->cycles = rep->guest_cycles + rep->vmm_cycles;
}

const char *regress_diff_section(const struct regress_diff *d) {
  static const char *const names[] = { "exits", "counters", "events", "total_exits", "cycles" };
  return names[d->kind];
}

const char *regress_diff_name(const struct regress_diff *d) {
  switch (d->kind) {
  case DIFF_EXIT: return stat_key_name(d->key);
  case DIFF_COUNTER: return counter_name(d->key);
  case DIFF_EVENTS: return "events";
  case DIFF_TOTAL_EXITS: return "total_exits";
  case DIFF_CYCLES: return "cycles";
  }
  return "?";
}

struct diffs {
  struct regress_diff *d;
  size_t n, cap;
  bool changes;
};

static void check(struct diffs *ds, enum regress_diff_kind kind, unsigned key, bool has, uint64_t e, uint64_t a) {
  bool differs = has ? e != a : ds->changes && a != 0;
  if (!differs) return;
  if (ds->n == ds->cap) {
    ds->cap = ds->cap ? ds->cap * 2 : 16;
    ds->d = xrealloc(ds->d, ds->cap * sizeof *ds->d);
  }
  ds->d[ds->n++] = (struct regress_diff){ kind, key, !has, has ? e : 0, a };
}

size_t regress_compare(const struct regress_values *exp, const struct regress_values *act, double tol,
                       bool changes, struct regress_diff **out) {
  struct diffs ds = { NULL, 0, 0, changes };
  for (unsigned r = 0; r < EXIT_REASON_MAX; r++) {
    check(&ds, DIFF_EXIT, r, exp->has_exits, exp->exits[r], act->exits[r]);
    unsigned lo = r == EXIT_REASON_CR_ACCESS ? STAT_CR_BASE : r == EXIT_REASON_DR_ACCESS ? STAT_DR_BASE : 0;
    unsigned hi = r == EXIT_REASON_CR_ACCESS ? STAT_DR_BASE : r == EXIT_REASON_DR_ACCESS ? STAT_KEYS : 0;
    for (unsigned k = lo; k < hi; k++) check(&ds, DIFF_EXIT, k, exp->has_exits, exp->exits[k], act->exits[k]);
  }
  for (unsigned i = 0; i < CTR_COUNT; i++)
    check(&ds, DIFF_COUNTER, i, exp->has_counters, exp->counters[i], act->counters[i]);
  check(&ds, DIFF_EVENTS, 0, exp->has_events, exp->events, act->events);
  check(&ds, DIFF_TOTAL_EXITS, 0, exp->has_total_exits, exp->total_exits, act->total_exits);
  uint64_t e = exp->cycles, a = act->cycles;
  double off = fabs((double)a - (double)e);
  if (changes || !exp->has_cycles || off > tol * (double)e)
    check(&ds, DIFF_CYCLES, 0, exp->has_cycles, e, a);
  *out = ds.d;
  return ds.n;
}

/* ---- --update ---- */

static bool add_uint(cJSON *o, const char *name, uint64_t v, char *err, size_t errlen) {
  if (v > (uint64_t)REGRESS_JSON_INT_MAX) {
    snprintf(err, errlen, "%s = %llu is too large for a JSON number to hold exactly (at most 2^53 - 1)", name,
             (unsigned long long)v);
    return false;
  }
  cJSON_AddNumberToObject(o, name, (double)v);
  return true;
}

int regress_case_update(struct regress_case *c, const struct regress_values *act, char **text, char *err,
                        size_t errlen) {
  cJSON *x = cJSON_CreateObject();
  cJSON *exits = cJSON_AddObjectToObject(x, "exits");
  cJSON *ctrs = cJSON_AddObjectToObject(x, "counters");
  bool ok = add_uint(x, "events", act->events, err, errlen) &&
            add_uint(x, "total_exits", act->total_exits, err, errlen) &&
            add_uint(x, "cycles", act->cycles, err, errlen);
  for (unsigned k = 0; ok && k < STAT_KEYS; k++)
    if (act->exits[k]) ok = add_uint(exits, stat_key_name(k), act->exits[k], err, errlen);
  for (unsigned i = 0; ok && i < CTR_COUNT; i++) ok = add_uint(ctrs, counter_name(i), act->counters[i], err, errlen);
  *text = NULL;
  if (!ok) {
    cJSON_Delete(x);
    return EXIT_BADINPUT;
  }
  if (cJSON_GetObjectItemCaseSensitive(c->json, "expect")) cJSON_ReplaceItemInObjectCaseSensitive(c->json, "expect", x);
  else cJSON_AddItemToObject(c->json, "expect", x);
  *text = json_canonical(c->json);
  return EXIT_OK;
}
