/* `vmxsim regress`'s output: each case's table line with expected vs actual vs
** delta, and the results as JSON and as JUnit XML (regress_int.h). */
#include "regress_case.h"
#include "regress_int.h"
#include "sim/replay/stats.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = { "pass", "fail", "error", "unchanged", "updated", "recorded" };

/* ---- the table ---- */

static void fmt_delta(char *s, size_t n, const struct regress_diff *d) {
  if (d->absent) { snprintf(s, n, "new"); return; }
  unsigned long long mag = d->actual >= d->expected ? d->actual - d->expected : d->expected - d->actual;
  int len = snprintf(s, n, "%c%llu", d->actual >= d->expected ? '+' : '-', mag);
  if (d->kind == DIFF_CYCLES && d->expected && len > 0 && (size_t)len < n)
    snprintf(s + len, n - (size_t)len, " (%+.3f%%)", 100.0 * ((double)d->actual - (double)d->expected) / (double)d->expected);
}

static void fmt_tolerance(char *s, size_t n, double tol) {
  if (tol > 0) snprintf(s, n, "total (tolerance %g%%)", tol * 100);
  else snprintf(s, n, "total (exact)");
}

/* Expected vs actual vs delta, one row per difference. */
static void diff_table(struct strbuf *b, const struct result *r, bool update) {
  strbuf_printf(b, "       %-11s %-30s %14s %14s  %s\n", "section", "name", update ? "was" : "expected",
            update ? "now" : "actual", "delta");
  for (size_t i = 0; i < r->ndiffs; i++) {
    const struct regress_diff *d = &r->diffs[i];
    char name[64], exp[24], delta[64];
    if (d->kind == DIFF_CYCLES && !update) fmt_tolerance(name, sizeof name, r->tolerance);
    else if (d->kind == DIFF_CYCLES) snprintf(name, sizeof name, "total");
    else if (d->kind == DIFF_EXIT && stat_key_is_sub(d->key)) snprintf(name, sizeof name, "  %s", regress_diff_name(d));
    else if (d->kind == DIFF_EVENTS || d->kind == DIFF_TOTAL_EXITS) name[0] = 0;
    else snprintf(name, sizeof name, "%s", regress_diff_name(d));
    if (d->absent) snprintf(exp, sizeof exp, "-");
    else snprintf(exp, sizeof exp, "%llu", (unsigned long long)d->expected);
    fmt_delta(delta, sizeof delta, d);
    strbuf_printf(b, "       %-11s %-30s %14s %14llu  %s\n", regress_diff_section(d), name, exp,
              (unsigned long long)d->actual, delta);
  }
  if (r->dropped) strbuf_printf(b, "       dropped (unknown to this vmxsim): %s\n", r->dropped);
}

void regress_table_line(struct strbuf *b, const struct result *r, const struct result_extra *x, bool quiet) {
  switch (r->status) {
  case ST_PASS:
  case ST_UNCHANGED:
    if (quiet) return;
    strbuf_printf(b, "%-9s %s", r->status == ST_PASS ? "PASS" : "unchanged", r->file);
    if (x->cycles_checked && x->cycles_actual != x->cycles_expected && x->cycles_expected)
      strbuf_printf(b, "  (cycles %+.4f%%, within %g%%)",
                100.0 * ((double)x->cycles_actual - (double)x->cycles_expected) / (double)x->cycles_expected,
                r->tolerance * 100);
    strbuf_printf(b, "\n");
    return;
  case ST_FAIL:
    strbuf_printf(b, "%-9s %s  (%zu difference%s)\n", "FAIL", r->file, r->ndiffs, r->ndiffs == 1 ? "" : "s");
    diff_table(b, r, false);
    return;
  case ST_ERROR: {
    size_t problems = 1;
    for (const char *p = r->error; *p; p++) problems += *p == '\n';
    if (problems > 1) strbuf_printf(b, "%-9s %s  (%zu problems)\n", "ERROR", r->file, problems);
    else strbuf_printf(b, "%-9s %s\n", "ERROR", r->file);
    return;
  }
  case ST_UPDATED:
    if (!r->ndiffs && !r->dropped) {
      strbuf_printf(b, "%-9s %s  (layout only: sorted keys, 2-space indentation)\n", "updated", r->file);
      return;
    }
    strbuf_printf(b, "%-9s %s  (%zu change%s)\n", "updated", r->file, r->ndiffs, r->ndiffs == 1 ? "" : "s");
    diff_table(b, r, true);
    return;
  case ST_RECORDED:
    strbuf_printf(b, "%-9s %s\n", "recorded", r->file);
    return;
  }
}

/* ---- JSON and JUnit ---- */

char *regress_results_json(const struct result *rs, size_t n, const unsigned *count, double secs) {
  cJSON *o = cJSON_CreateObject();
  cJSON *cases = cJSON_AddArrayToObject(o, "cases");
  for (size_t i = 0; i < n; i++) {
    const struct result *r = &rs[i];
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "file", r->file);
    cJSON_AddStringToObject(c, "status", status_names[r->status]);
    cJSON_AddNumberToObject(c, "seconds", round(r->seconds * 1e6) / 1e6);
    if (r->error) cJSON_AddStringToObject(c, "error", r->error);
    if (r->policy) cJSON_AddStringToObject(c, "policy", r->policy);
    if (r->cpu) cJSON_AddStringToObject(c, "cpu", r->cpu);
    if (r->source) cJSON_AddStringToObject(c, "source", r->source);
    if (r->policy) cJSON_AddNumberToObject(c, "cycles_tolerance", r->tolerance);
    if (r->dropped) cJSON_AddStringToObject(c, "dropped", r->dropped);
    if (r->status != ST_ERROR) {
      cJSON *ds = cJSON_AddArrayToObject(c, "differences");
      for (size_t k = 0; k < r->ndiffs; k++) {
        const struct regress_diff *d = &r->diffs[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "section", regress_diff_section(d));
        cJSON_AddStringToObject(e, "name", regress_diff_name(d));
        if (d->absent) cJSON_AddNullToObject(e, "expected");
        else cJSON_AddNumberToObject(e, "expected", (double)d->expected);
        cJSON_AddNumberToObject(e, "actual", (double)d->actual);
        cJSON_AddNumberToObject(e, "delta", (double)d->actual - (double)(d->absent ? 0 : d->expected));
        cJSON_AddItemToArray(ds, e);
      }
    }
    cJSON_AddItemToArray(cases, c);
  }
  cJSON *s = cJSON_AddObjectToObject(o, "summary");
  cJSON_AddNumberToObject(s, "cases", (double)n);
  for (int st = 0; st <= ST_RECORDED; st++) {
    static const char *const keys[] = { "passed", "failed", "errors", "unchanged", "updated", "recorded" };
    cJSON_AddNumberToObject(s, keys[st], count[st]);
  }
  cJSON_AddNumberToObject(s, "seconds", round(secs * 1e3) / 1e3);
  char *text = json_canonical(o);
  cJSON_Delete(o);
  return text;
}

/* Text as XML character data or attribute value: markup escaped, characters XML 1.0
** forbids (most controls) and bytes that are not UTF-8 replaced with '?'. */
static void xml_text(struct strbuf *b, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned c = *p;
    size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    bool valid = len > 0 && !(len == 2 && c < 0xc2) && !(len == 4 && c > 0xf4);
    for (size_t k = 1; valid && k < len; k++) valid = (p[k] & 0xc0) == 0x80;
    if (valid && len == 3) {
      unsigned cp = ((c & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
      valid = cp >= 0x800 && !(cp >= 0xd800 && cp <= 0xdfff) && cp != 0xfffe && cp != 0xffff;
    }
    if (valid && len == 4) {
      unsigned cp = ((c & 0x07u) << 18) | ((p[1] & 0x3fu) << 12);
      valid = cp >= 0x10000 && cp <= 0x10ffff;
    }
    if (!valid) { strbuf_printf(b, "?"); p++; continue; }
    if (len > 1) { strbuf_printf(b, "%.*s", (int)len, (const char *)p); p += len; continue; }
    switch (c) {
    case '&': strbuf_printf(b, "&amp;"); break;
    case '<': strbuf_printf(b, "&lt;"); break;
    case '>': strbuf_printf(b, "&gt;"); break;
    case '"': strbuf_printf(b, "&quot;"); break;
    case '\'': strbuf_printf(b, "&apos;"); break;
    case '\t': case '\n': strbuf_printf(b, "%c", (char)c); break;
    default: strbuf_printf(b, "%c", c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    p++;
  }
}

char *regress_junit_xml(const struct result *rs, size_t n, const unsigned *count, double secs) {
  struct strbuf b = { 0 };
  unsigned fails = count[ST_FAIL], errs = count[ST_ERROR];
  strbuf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  strbuf_printf(&b, "<testsuites name=\"vmxsim regress\" tests=\"%zu\" failures=\"%u\" errors=\"%u\" time=\"%.3f\">\n",
            n, fails, errs, secs);
  strbuf_printf(&b, "  <testsuite name=\"vmxsim regress\" tests=\"%zu\" failures=\"%u\" errors=\"%u\" skipped=\"0\" "
            "time=\"%.3f\">\n", n, fails, errs, secs);
  for (size_t i = 0; i < n; i++) {
    const struct result *r = &rs[i];
    const char *slash = strrchr(r->file, '/');
    const char *base = slash ? slash + 1 : r->file;
    size_t blen = regress_has_suffix(base, ".json") ? strlen(base) - 5 : strlen(base);
    char *cls = slash ? regress_asprintf("%.*s", (int)(slash - r->file), r->file) : xstrdup("regress");
    for (char *p = cls; *p; p++)
      if (*p == '/') *p = '.';
    const char *clsp = cls;
    while (*clsp == '.') clsp++;
    char *name = regress_asprintf("%.*s", (int)blen, base);
    strbuf_printf(&b, "    <testcase classname=\"");
    xml_text(&b, *clsp ? clsp : "regress");
    strbuf_printf(&b, "\" name=\"");
    xml_text(&b, name);
    strbuf_printf(&b, "\" file=\"");
    xml_text(&b, r->file);
    strbuf_printf(&b, "\" time=\"%.6f\"", r->seconds);
    free(cls);
    free(name);
    if (r->status == ST_FAIL) {
      struct strbuf t = { 0 };
      diff_table(&t, r, false);
      char msg[256];
      const struct regress_diff *d = &r->diffs[0];
      snprintf(msg, sizeof msg, "%zu difference%s: %s %s expected %llu, got %llu%s", r->ndiffs,
               r->ndiffs == 1 ? "" : "s", regress_diff_section(d), regress_diff_name(d),
               (unsigned long long)d->expected, (unsigned long long)d->actual, r->ndiffs > 1 ? ", ..." : "");
      strbuf_printf(&b, ">\n      <failure type=\"regression\" message=\"");
      xml_text(&b, msg);
      strbuf_printf(&b, "\">");
      xml_text(&b, t.s);
      strbuf_printf(&b, "</failure>\n    </testcase>\n");
      free(t.s);
    } else if (r->status == ST_ERROR) {
      strbuf_printf(&b, ">\n      <error type=\"error\" message=\"");
      xml_text(&b, r->error);
      strbuf_printf(&b, "\">");
      xml_text(&b, r->error);
      strbuf_printf(&b, "</error>\n    </testcase>\n");
    } else if (r->status == ST_UPDATED || r->status == ST_RECORDED) {
      strbuf_printf(&b, ">\n      <system-out>%s</system-out>\n    </testcase>\n", status_names[r->status]);
    } else {
      strbuf_printf(&b, "/>\n");
    }
  }
  strbuf_printf(&b, "  </testsuite>\n</testsuites>\n");
  return b.s;
}
