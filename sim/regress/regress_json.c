/* Canonical JSON for regression case files (regress_case.h: json_canonical):
** keys sorted, two-space indentation, numbers in their shortest form, so that
** `regress --update` rewrites a case the same way every time and a diff shows
** only what changed. */
#include "regress_case.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_string(struct strbuf *b, const char *s) {
  strbuf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
    case '"': strbuf_puts(b, "\\\""); break;
    case '\\': strbuf_puts(b, "\\\\"); break;
    case '\n': strbuf_puts(b, "\\n"); break;
    case '\r': strbuf_puts(b, "\\r"); break;
    case '\t': strbuf_puts(b, "\\t"); break;
    case '\b': strbuf_puts(b, "\\b"); break;
    case '\f': strbuf_puts(b, "\\f"); break;
    default:
      if (*p < 0x20) {
        snprintf(esc, sizeof esc, "\\u%04x", *p);
        strbuf_puts(b, esc);
      } else {
        strbuf_add(b, (const char *)p, 1);
      }
    }
  }
  strbuf_puts(b, "\"");
}

/* Integers exactly; other numbers in the shortest form that reads back the same. */
static void put_number(struct strbuf *b, double v) {
  char s[40];
  if (v == floor(v) && fabs(v) < 1e17) {
    snprintf(s, sizeof s, "%.0f", v == 0 ? 0.0 : v);
  } else {
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(s, sizeof s, "%.*g", prec, v);
      if (strtod(s, NULL) == v) break;
    }
  }
  strbuf_puts(b, s);
}

static int cmp_keys(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static void indent(struct strbuf *b, int depth) {
  for (int i = 0; i < depth; i++) strbuf_puts(b, "  ");
}

static void put_value(struct strbuf *b, const cJSON *j, int depth);

static void put_object(struct strbuf *b, const cJSON *j, int depth) {
  size_t n = 0;
  for (const cJSON *c = j->child; c; c = c->next) n++;
  if (!n) { strbuf_puts(b, "{}"); return; }
  const cJSON **kids = xmalloc(n * sizeof *kids);
  n = 0;
  for (const cJSON *c = j->child; c; c = c->next) kids[n++] = c;
  qsort(kids, n, sizeof *kids, cmp_keys);
  strbuf_puts(b, "{\n");
  for (size_t i = 0; i < n; i++) {
    indent(b, depth + 1);
    put_string(b, kids[i]->string);
    strbuf_puts(b, ": ");
    put_value(b, kids[i], depth + 1);
    strbuf_puts(b, i + 1 < n ? ",\n" : "\n");
  }
  indent(b, depth);
  strbuf_puts(b, "}");
  free(kids);
}

static void put_array(struct strbuf *b, const cJSON *j, int depth) {
  bool scalars = true;
  for (const cJSON *c = j->child; c; c = c->next)
    if (cJSON_IsObject(c) || cJSON_IsArray(c)) scalars = false;
  if (!j->child) { strbuf_puts(b, "[]"); return; }
  strbuf_puts(b, scalars ? "[" : "[\n");
  for (const cJSON *c = j->child; c; c = c->next) {
    if (!scalars) indent(b, depth + 1);
    put_value(b, c, depth + 1);
    if (c->next) strbuf_puts(b, scalars ? ", " : ",\n");
  }
  if (!scalars) { strbuf_puts(b, "\n"); indent(b, depth); }
  strbuf_puts(b, "]");
}

static void put_value(struct strbuf *b, const cJSON *j, int depth) {
  if (cJSON_IsObject(j)) put_object(b, j, depth);
  else if (cJSON_IsArray(j)) put_array(b, j, depth);
  else if (cJSON_IsString(j)) put_string(b, j->valuestring);
  else if (cJSON_IsNumber(j)) put_number(b, j->valuedouble);
  else if (cJSON_IsBool(j)) strbuf_puts(b, cJSON_IsTrue(j) ? "true" : "false");
  else if (cJSON_IsRaw(j)) strbuf_puts(b, j->valuestring);
  else strbuf_puts(b, "null");
}

char *json_canonical(const cJSON *j) {
  struct strbuf b = { 0 };
  put_value(&b, j, 0);
  strbuf_puts(&b, "\n");
  return b.s;
}
