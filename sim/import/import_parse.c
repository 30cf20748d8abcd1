/* What the text importers share (import.h): reading a line, numbers in
** decimal and hex, a CPU column, seconds with a fraction, a named field, and a
** small map from a 32-bit key (a pid, a CPU) to a number. */
#include "import.h"
#include "sim/base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- parsing helpers ---- */

bool import_next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n) {
  if (*pos >= len) return false;
  const char *s = buf + *pos;
  const char *nl = memchr(s, '\n', len - *pos);
  size_t l = nl ? (size_t)(nl - s) : len - *pos;
  *pos += l + (nl ? 1 : 0);
  if (l && s[l - 1] == '\r') l--;
  *line = s;
  *n = l;
  return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool import_num(const char *s, const char *end, bool hex, uint64_t *v, const char **stop) {
  uint64_t x = 0;
  const char *p = s;
  if (hex && end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && hex_digit(p[2]) >= 0) p += 2;
  const char *digits = p;
  const uint64_t base = hex ? 16 : 10;
  for (; p < end; p++) {
    int d = hex ? hex_digit(*p) : (is_digit(*p) ? *p - '0' : -1);
    if (d < 0) break;
    /* the builtins, not a division per digit: this runs for every number of every line */
    if (__builtin_mul_overflow(x, base, &x) || __builtin_add_overflow(x, (uint64_t)d, &x)) return false;
  }
  if (p == digits) return false;
  *v = x;
  if (stop) *stop = p;
  return true;
}

bool import_snum(const char *s, const char *end, int64_t *v, const char **stop) {
  bool neg = s < end && *s == '-';
  uint64_t x;
  if (!import_num(s + neg, end, false, &x, stop) || x > (uint64_t)INT64_MAX) return false;
  *v = neg ? -(int64_t)x : (int64_t)x;
  return true;
}

const char *import_find_cpu(const char *s, const char *end, import_task_ok_fn ok, void *arg,
                            const char **ts, const char **te) {
  for (const char *q = s; (q = memchr(q, '[', (size_t)(end - q))); q++) {
    if (q == s || (q[-1] != ' ' && q[-1] != '\t')) continue;
    const char *d = q + 1;
    while (d < end && *d >= '0' && *d <= '9') d++;
    if (d == q + 1 || d >= end || *d != ']') continue;
    const char *e = q;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    const char *b = e;
    while (b > s && b[-1] != ' ' && b[-1] != '\t') b--;
    if (b < e && ok(b, e, arg)) { *ts = b; *te = e; return q; }
  }
  return NULL;
}

bool import_parse_secs(const char *s, size_t n, uint64_t *ns) {
  const char *end = s + n, *p;
  uint64_t secs, frac = 0;
  if (!import_num(s, end, false, &secs, &p) || secs > UINT64_MAX / 1000000000u) return false;
  unsigned digits = 0;
  if (p < end && *p == '.') {
    for (p++; p < end && is_digit(*p); p++, digits++)
      if (digits < 9) frac = frac * 10 + (uint64_t)(*p - '0');
    if (digits == 0) return false;
  }
  if (p != end) return false;
  for (unsigned d = digits; d < 9; d++) frac *= 10;
  return !__builtin_add_overflow(secs * 1000000000u, frac, ns);   /* secs <= UINT64_MAX / 1e9 */
}

const char *import_field(const char *s, size_t n, const char *name) {
  size_t k = strlen(name);
  const char *end = s + n;
  for (const char *p = s; (size_t)(end - p) >= k; p++) {
    p = memchr(p, name[0], (size_t)(end - p) - k + 1);
    if (!p) return NULL;
    if (memcmp(p, name, k) == 0 && (p == s || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ','))
      return p + k;
  }
  return NULL;
}

/* ---- maps ---- */

static size_t map_slot(const struct import_map *m, uint32_t key) {
  size_t i = (key * 2654435761u) & (m->cap - 1);
  while (m->used[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  return i;
}

int64_t *import_map_get(const struct import_map *m, uint32_t key) {
  if (!m->cap) return NULL;
  size_t i = map_slot(m, key);
  return m->used[i] ? &m->vals[i] : NULL;
}

static void map_grow(struct import_map *m) {
  struct import_map old = *m;
  m->cap = old.cap ? old.cap * 2 : 64;
  m->keys = xcalloc(m->cap, sizeof *m->keys);
  m->vals = xcalloc(m->cap, sizeof *m->vals);
  m->used = xcalloc(m->cap, 1);
  m->n = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i]) *import_map_put(m, old.keys[i], old.vals[i]) = old.vals[i];
  import_map_free(&old);
}

int64_t *import_map_put(struct import_map *m, uint32_t key, int64_t init) {
  if ((m->n + 1) * 2 > m->cap) map_grow(m);   /* keep it at most half full */
  size_t i = map_slot(m, key);
  if (!m->used[i]) {
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = init;
    m->n++;
  }
  return &m->vals[i];
}

void import_map_free(struct import_map *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  memset(m, 0, sizeof *m);
}
