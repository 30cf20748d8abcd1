/* Finding JSON data (policy presets, CPU profiles) by name or path. */
#include "data.h"
#include "embedded.h"
#include "sim/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MAX_NAMES 64

/* Line number (1-based) of byte offset off in text, for JSON error messages. */
static int data_line_of(const char *text, size_t off) {
  int line = 1;
  for (size_t i = 0; i < off && text[i]; i++)
    if (text[i] == '\n') line++;
  return line;
}

/* Where the text fails to parse, as "LINE:COLUMN" (1-based). */
static void line_col(const char *text, size_t off, char *buf, size_t n) {
  int line = 1;
  size_t bol = 0;
  for (size_t i = 0; i < off && text[i]; i++)
    if (text[i] == '\n') { line++; bol = i + 1; }
  snprintf(buf, n, "%d:%zu", line, off - bol + 1);
}

/* The message for text that is not JSON: the bytes where it fails, unless
** they are not to be shown (then the line and column, and whether the text
** ended too early, which is what cJSON tells). */
static void parse_error(const char *label, const char *text, bool hide, char *err, size_t errlen) {
  const char *at = cJSON_GetErrorPtr();
  size_t off = at ? (size_t)(at - text) : 0;
  if (!hide) {
    snprintf(err, errlen, "%s:%d: malformed JSON near '%.20s'", label, data_line_of(text, off), at ? at : "");
    return;
  }
  bool ended = at && !*at;
  while (ended && off > 0 && strchr(" \t\r\n", text[off - 1])) off--;   /* at the last character */
  char where[48];
  line_col(text, off, where, sizeof where);
  snprintf(err, errlen, "%s:%s: malformed JSON%s (expected a JSON object; its text is not shown)", label,
           where, ended ? ": the text ends before the value is complete" : "");
}

static cJSON *parse(const char *label, const char *text, bool hide, char *err, size_t errlen) {
  cJSON *j = cJSON_ParseWithOpts(text, NULL, 1);
  if (!j) {
    parse_error(label, text, hide, err, errlen);
    return NULL;
  }
  if (!cJSON_IsObject(j)) {
    snprintf(err, errlen, "%s:1: expected a JSON object", label);
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

static int is_path(const char *name) {
  size_t n = strlen(name);
  return strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

const char *const *data_names(const char *dir) {
  static const char *names[2][MAX_NAMES + 1];
  static char store[2][MAX_NAMES][64];
  int slot = strcmp(dir, "cpus") == 0;
  char prefix[64];
  snprintf(prefix, sizeof prefix, "models/%s/", dir);
  int n = 0;
  for (const struct embedded_file *f = embedded_files; f->path && n < MAX_NAMES; f++) {
    if (strncmp(f->path, prefix, strlen(prefix)) != 0) continue;
    snprintf(store[slot][n], 64, "%s", f->path + strlen(prefix));
    char *dot = strstr(store[slot][n], ".json");
    if (dot) *dot = 0;
    names[slot][n] = store[slot][n];
    n++;
  }
  names[slot][n] = NULL;
  return names[slot];
}

/* A JSON file (name is its path) into d, read as flags say. */
static int open_file(const char *name, unsigned flags, struct data_doc *d, char *err, size_t errlen) {
  int fd = input_open(name, flags, err, errlen);
  char *text = fd >= 0 ? read_fd(fd, NULL) : NULL;
  if (fd >= 0 && !text)
    snprintf(err, errlen, "%s: %s", name, errno == EISDIR ? "is a directory, not a JSON file" : strerror(errno));
  if (!text) return EXIT_BADINPUT;
  snprintf(d->label, sizeof d->label, "%s", name);
  d->text = d->owned = text;
  d->flags = flags;
  d->json = parse(name, text, flags & INPUT_HIDE_CONTENT, err, errlen);
  if (d->json) return EXIT_OK;
  data_close(d);
  return EXIT_BADINPUT;
}

int data_open(const char *dir, const char *name, struct data_doc *d, char *err, size_t errlen) {
  return data_open_flags(dir, name, 0, d, err, errlen);
}

int data_open_flags(const char *dir, const char *name, unsigned flags, struct data_doc *d, char *err,
                    size_t errlen) {
  memset(d, 0, sizeof *d);
  if (is_path(name)) return open_file(name, flags, d, err, errlen);
  char path[256];
  snprintf(path, sizeof path, "models/%s/%s.json", dir, name);
  for (const struct embedded_file *f = embedded_files; f->path; f++)
    if (strcmp(f->path, path) == 0) {
      snprintf(d->label, sizeof d->label, "%s", path);
      d->text = f->text;
      return (d->json = parse(path, f->text, false, err, errlen)) ? EXIT_OK : EXIT_INTERNAL;
    }
  size_t used = (size_t)snprintf(err, errlen, "unknown %s '%s'; valid: ",
                                 strcmp(dir, "cpus") == 0 ? "CPU profile" : "policy", name);
  for (const char *const *n = data_names(dir); *n && used < errlen; n++)
    used += (size_t)snprintf(err + used, errlen - used, "%s%s", n == data_names(dir) ? "" : ", ", *n);
  return EXIT_USAGE;
}

void data_close(struct data_doc *d) {
  cJSON_Delete(d->json);
  free(d->owned);
  memset(d, 0, sizeof *d);
}

int data_load(const char *dir, const char *name, cJSON **out, char *err, size_t errlen) {
  struct data_doc d;
  int rc = data_open(dir, name, &d, err, errlen);
  *out = d.json;
  d.json = NULL;
  data_close(&d);
  return rc;
}

/* After the first `"key"` followed by ':' at or after p, or NULL. */
static const char *after_key(const char *p, const char *key) {
  size_t kl = strlen(key);
  for (; (p = strchr(p, '"')) != NULL; p++) {
    if (strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '"') continue;
    const char *q = p + 2 + kl;
    while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') q++;
    if (*q == ':') return q;
  }
  return NULL;
}

int data_line(const struct data_doc *d, const char *const *path) {
  const char *p = d->text;
  for (; p && *path; path++) p = after_key(p, *path);
  return p ? data_line_of(d->text, (size_t)(p - d->text)) : 0;
}
