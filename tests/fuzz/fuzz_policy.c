/* libFuzzer harness: policies (sim/config/policy.c), as files and as
** `--policy SPEC --set KEY=VALUE...`.
**
** An input that starts with '{' (after blanks) is a policy file; any other
** is a command line: its first line the --policy spec, each further line
** (eight at most) one --set value.  A policy either resolves, or is refused
** with a usage or input error and a message (naming the file for a file);
** a resolved one gives the same knobs again when its JSON is read back as a
** policy file, and the small trace replays under it (a knob in range must
** not exhaust memory or overflow: fuzz_replay.h).  Its name is policy_name's
** for the same spec and sets, and names itself: its own overrides, resolved
** again, give the same name and knobs (one configuration, one name).  A file
** is resolved again as a regression case's (INPUT_HIDE_CONTENT): the same
** policy or the same refusal, named by the file, with nothing of it quoted. */
#include "fuzz_replay.h"
#include <ctype.h>
#include "sim/config/policy.h"
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

/* p's name, resolved from spec and sets, is policy_name's, and spec with the
** overrides the name spells gives the same name and knobs. */
static void check_name(const struct policy *p, const char *spec, char *const *sets, int nsets) {
  char name[sizeof p->name], err[2048] = "";
  if (policy_name(spec, sets, nsets, name, sizeof name, err, sizeof err) || strcmp(name, p->name)) {
    fprintf(stderr, "policy %s: policy_name gives '%s' (%s)\n", p->name, name, err);
    abort();
  }
  size_t n = strlen(spec);
  if (strlen(p->name) == sizeof p->name - 1 || strchr(spec, ',')) return;   /* cut, or no name to split */
  char *own[SETS_MAX], *copy = strdup(p->name + n), *rest = copy, *t;
  int nown = 0;
  if (!copy) abort();
  while ((t = strsep(&rest, ","))) if (*t && nown < SETS_MAX) own[nown++] = t;
  struct policy q;
  int rc = policy_resolve(&q, spec, own, nown, err, sizeof err);
  char *a = policy_to_json(p), *b = rc ? NULL : policy_to_json(&q);
  if (rc || strcmp(a, b)) {
    fprintf(stderr, "policy %s resolved again from its name: %s (%d: %s)\n", a, b ? b : "nothing", rc, err);
    abort();
  }
  free(a);
  free(b);
  free(copy);
}

/* The file resolved as one a regression case names: what resolve gave
** (rc, and the same knobs), its message naming the file and quoting nothing
** (no message about such a file has a ' after the file's name). */
static void check_hidden(const char *file, int rc, const struct policy *p) {
  struct policy q;
  char err[2048] = "";
  int hidden_rc = policy_resolve_flags(&q, file, NULL, 0, INPUT_HIDE_CONTENT | INPUT_REGULAR_ONLY, err, sizeof err);
  char *want = rc == 0 ? policy_to_json(p) : NULL, *got = hidden_rc == 0 ? policy_to_json(&q) : NULL;
  bool same = hidden_rc == rc && (rc != 0 || strcmp(want, got) == 0);
  if (!same || (rc != 0 && (strncmp(err, file, strlen(file)) != 0 || strchr(err + strlen(file), '\'')))) {
    fprintf(stderr, "as a case's file: exit code %d (not %d), message '%s', knobs %s (not %s)\n", hidden_rc, rc, err,
            got ? got : "none", want ? want : "none");
    abort();
  }
  free(want);
  free(got);
}

static void resolve(const char *spec, char *const *sets, int nsets, const char *file) {
  struct policy p;
  char err[2048] = "";
  int rc = policy_resolve(&p, spec, sets, nsets, err, sizeof err);
  if (rc == 0) {
    check_round_trip(&p);
    check_name(&p, spec, sets, nsets);
    fuzz_replay(spec, "core2-2007", sets, nsets);
    fuzz_replay(spec, "skylake-2019", sets, nsets);
  } else if ((rc != EXIT_USAGE && rc != EXIT_BADINPUT) || !err[0] ||
             (file && strncmp(err, file, strlen(file)) != 0)) {
    fprintf(stderr, "policy refused with exit code %d and message '%s'\n", rc, err);
    abort();
  }
  if (file) check_hidden(file, rc, &p);
}

/* The input's lines, each an exact copy of its own bytes (at most 1 + SETS_MAX). */
static int split_lines(const uint8_t *data, size_t size, char **lines) {
  int n = 0;
  for (size_t at = 0; at < size && n < 1 + SETS_MAX;) {
    const uint8_t *nl = memchr(data + at, '\n', size - at);
    size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
    if (len) lines[n++] = fuzz_copy(data + at, len);
    at += len + (nl != NULL);
  }
  return n;
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
  /* a command line: the first line the --policy spec (a path only the file mode reads), the others --set */
  char *lines[1 + SETS_MAX];
  int n = split_lines(data, size, lines);
  if (n && !strpbrk(lines[0], "/.")) resolve(lines[0], lines + 1, n - 1, NULL);
  for (int i = 0; i < n; i++) free(lines[i]);
  return 0;
}
