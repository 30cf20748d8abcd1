/* Finding JSON data (policy presets, CPU profiles) by name or path. */
#include "data.h"
#include "embedded.h"
#include "util.h"

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

static cJSON *parse(const char *label, const char *text, char *err, size_t errlen) {
  cJSON *j = cJSON_ParseWithOpts(text, NULL, 1);
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    size_t off = at ? (size_t)(at - text) : 0;
    snprintf(err, errlen, "%s:%d: malformed JSON near '%.20s'", label, data_line_of(text, off), at ? at : "");
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

int data_load(const char *dir, const char *name, cJSON **out, char *err, size_t errlen) {
  *out = NULL;
  if (is_path(name)) {
    char *text = read_file(name, NULL);
    if (!text) {
      snprintf(err, errlen, "%s: %s", name, strerror(errno));
      return EXIT_BADINPUT;
    }
    *out = parse(name, text, err, errlen);
    free(text);
    return *out ? EXIT_OK : EXIT_BADINPUT;
  }
  char path[256];
  snprintf(path, sizeof path, "models/%s/%s.json", dir, name);
  for (const struct embedded_file *f = embedded_files; f->path; f++)
    if (strcmp(f->path, path) == 0) return (*out = parse(path, f->text, err, errlen)) ? EXIT_OK : EXIT_INTERNAL;
  size_t used = (size_t)snprintf(err, errlen, "unknown %s '%s'; valid: ",
                                 strcmp(dir, "cpus") == 0 ? "CPU profile" : "policy", name);
  for (const char *const *n = data_names(dir); *n && used < errlen; n++)
    used += (size_t)snprintf(err + used, errlen - used, "%s%s", n == data_names(dir) ? "" : ", ", *n);
  return EXIT_USAGE;
}
