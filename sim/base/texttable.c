/* Plain-text tables for `vmxsim runs` and `vmxsim compare`: columns sized to fit their cells. */
#include "texttable.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tt_init(struct texttable *t, unsigned ncols) {
  memset(t, 0, sizeof *t);
  t->ncols = ncols;
}

void tt_free(struct texttable *t) {
  for (size_t i = 0; i < (size_t)t->nrows * t->ncols; i++) free(t->cell[i]);
  free(t->cell);
  memset(t, 0, sizeof *t);
}

static void new_row(struct texttable *t) {
  if (t->nrows == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 16;
    t->cell = xrealloc(t->cell, (size_t)t->cap * t->ncols * sizeof *t->cell);
  }
  memset(t->cell + (size_t)t->nrows * t->ncols, 0, t->ncols * sizeof *t->cell);
  t->nrows++;
  t->col = 0;
}

void tt_cell(struct texttable *t, const char *fmt, ...) {
  if (!t->nrows || t->col == t->ncols) new_row(t);
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  t->cell[(size_t)(t->nrows - 1) * t->ncols + t->col++] = xstrdup(buf);
}

void tt_endrow(struct texttable *t) {
  if (!t->nrows || t->col == t->ncols || t->col == 0) new_row(t);
  t->col = t->ncols;
}

void tt_print(FILE *f, const struct texttable *t, const char *align, unsigned gap) {
  size_t *w = xcalloc(t->ncols, sizeof *w);
  for (unsigned r = 0; r < t->nrows; r++)
    for (unsigned c = 0; c < t->ncols; c++) {
      const char *s = t->cell[(size_t)r * t->ncols + c];
      if (s && strlen(s) > w[c]) w[c] = strlen(s);
    }
  char *line = xmalloc(4096 + 1);
  for (unsigned r = 0; r < t->nrows; r++) {
    size_t n = 0;
    for (unsigned c = 0; c < t->ncols && n < 4096; c++) {
      const char *s = t->cell[(size_t)r * t->ncols + c];
      int len = (int)w[c];
      n += (size_t)snprintf(line + n, 4097 - n, align[c] == 'r' ? "%*s%*s" : "%-*s%*s", len, s ? s : "",
                            c + 1 < t->ncols ? (int)gap : 0, "");
    }
    if (n > 4096) n = 4096;
    while (n && line[n - 1] == ' ') n--;
    fprintf(f, "%.*s\n", (int)n, line);
  }
  free(line);
  free(w);
}
