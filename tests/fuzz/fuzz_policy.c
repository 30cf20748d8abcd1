/* libFuzzer harness: policies (sim/core/policy.c), as files and as
** `--policy SPEC --set KEY=VALUE...`.
**
** An input that starts with '{' (after blanks) is a policy file; any other
** is a command line: its first line the --policy spec, each further line
** (eight at most) one --set value.  A policy either resolves, or is refused
** with a usage or input error and a message (naming the file for a file);
** a resolved one gives the same knobs again when its JSON is read back as a
** policy file, and the small trace replays under it (a knob in range must
** not exhaust memory or overflow: fuzz_replay.h). */
#include "fuzz_replay.h"
#include <ctype.h>
#include "sim/core/policy.h"
#include <cJSON.h>

#define SETS_MAX 8

/* The resolved knobs, written as a policy file ({"knobs": {...}}), resolve to the same policy. */
static void check_round_trip(const struct policy *p) {
  char *json = policy_to_json(p), err[1024] = "";
  cJSON *knobs = cJSON_Parse(json), *file = cJSON_CreateObject();
  cJSON_DeleteItemFromObjectCaseSensitive(knobs, "name");
  cJSON_AddItemToObject(file, "knobs", knobs);
  char *text = cJSON_PrintUnformatted(file);
  cJSON_Delete(file);
  const char *path = fuzz_file((const uint8_t *)text, strlen(text), "resolved.json");
  free(text);
  struct policy q;
  int rc = policy_resolve(&q, path, NULL, 0, err, sizeof err);
  char *again = rc == 0 ? policy_to_json(&q) : NULL;
  /* the same knobs under another name: compare without the names */
  if (rc == 0) memcpy(q.name, p->name, sizeof q.name), free(again), again = policy_to_json(&q);
  if (rc != 0 || strcmp(json, again) != 0) {
    fprintf(stderr, "resolved policy %s reads back as %s (%d: %s)\n", json, again ? again : "nothing", rc, err);
    abort();
  }
  free(again);
  free(json);
}

static void resolve(const char *spec, char *const *sets, int nsets, const char *file) {
  struct policy p;
  char err[2048] = "";
  int rc = policy_resolve(&p, spec, sets, nsets, err, sizeof err);
  if (rc == 0) {
    check_round_trip(&p);
    fuzz_replay(spec, "core2-2007", sets, nsets);
    fuzz_replay(spec, "skylake-2019", sets, nsets);
  } else if ((rc != EXIT_USAGE && rc != EXIT_BADINPUT) || !err[0] ||
             (file && rc == EXIT_BADINPUT && strncmp(err, file, strlen(file)) != 0)) {
    fprintf(stderr, "policy refused with exit code %d and message '%s'\n", rc, err);
    abort();
  }
}

/* First line the spec, the others --set values; false when the input names files. */
static bool command_line(char *text, char **spec, char **sets, int *nsets) {
  *spec = strtok(text, "\n");
  if (!*spec || strpbrk(*spec, "/.")) return false;   /* a path: only the file mode reads files */
  *nsets = 0;
  char *s;
  while (*nsets < SETS_MAX && (s = strtok(NULL, "\n"))) sets[(*nsets)++] = s;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_names_special_files(data, size) || memchr(data, 0, size)) return 0;
  size_t lead = 0;
  while (lead < size && isspace(data[lead])) lead++;
  if (lead < size && data[lead] == '{') {
    const char *path = fuzz_file(data, size, "policy.json");
    resolve(path, NULL, 0, path);
    return 0;
  }
  char *text = fuzz_copy(data, size), *spec, *sets[SETS_MAX];
  int nsets;
  if (command_line(text, &spec, sets, &nsets)) resolve(spec, sets, nsets, NULL);
  free(text);
  return 0;
}
