/* libFuzzer harness: sweep plans (sim/sweep/plan.c and plan_*.c).  A plan
** either fails with a usage or input error whose message names the plan
** file, or parses into a run set whose every run points into the plan's
** lists, whose traces give generator arguments, labels and cache files,
** whose knob combinations give overrides, and whose shards partition it;
** its name is a name, and the Slurm scripts made with it have the lines the
** scripts of a plain name have, no more. */
#include "fuzz.h"
#include "sim/base/util.h"
#include "sim/sweep/plan.h"
#include "sim/sweep/slurm.h"
#include "sim/sweep/sweep.h"

#define FILE_NAME "fuzz-plan.json"

static void check_runs(const struct plan *p) {
  if (p->nruns == 0 || p->nruns > PLAN_RUNS_MAX) abort();
  for (size_t i = 0; i < p->nruns; i++) {
    const struct plan_run *r = &p->runs[i];
    if (r->trace >= p->ntraces || r->tcombo >= p->traces[r->trace].ncombos || r->policy >= p->npolicies ||
        r->pcombo >= p->policies[r->policy].ncombos || r->cpu >= p->ncpus)
      abort();
  }
}

/* The first combinations of each trace and policy: arguments, labels, cache files, overrides. */
static void check_lists(const struct plan *p) {
  for (size_t t = 0; t < p->ntraces; t++)
    for (size_t c = 0; c < p->traces[t].ncombos && c < 4; c++) {
      char **argv, *label = plan_trace_label(&p->traces[t], c);
      int argc;
      plan_trace_argv(&p->traces[t], c, &argv, &argc);
      if (argc < 1 || !label[0]) abort();
      if (p->traces[t].generator) free(sweep_cache_path("cache", &p->traces[t], c));
      plan_argv_free(argv, argc);
      free(label);
    }
  for (size_t i = 0; i < p->npolicies; i++)
    for (size_t c = 0; c < p->policies[i].ncombos && c < 4; c++) {
      char **sets;
      int n;
      plan_policy_sets(&p->policies[i], c, &sets, &n);
      if ((size_t)n != p->policies[i].nknobs || !p->policies[i].json[c]) abort();
      plan_argv_free(sets, n);
    }
}

static void check_shards(const struct plan *p) {
  for (unsigned n = 1; n <= 5; n++) {
    size_t total = 0;
    for (unsigned s = 0; s < n; s++) total += plan_shard_size(p->nruns, s, n);
    if (total != p->nruns) abort();
  }
}

static size_t lines(char *text) {
  size_t n = 0;
  for (const char *s = text; *s; s++) n += *s == '\n';
  free(text);
  return n;
}

/* No '/', no leading '.', no control character: the name cannot move the
** default --dir (sweep-NAME) nor add a line to a job script. */
static void check_name(const struct plan *p) {
  const char *n = p->name;
  if (!n[0] || n[0] == '.' || strchr(n, '/') || control_char(n)) abort();
  struct slurm_job j = { .program = "/opt/vmxsim", .plan = "/plans/p.json", .name = n, .dir = "/shared/d",
                         .cache = "/shared/d/traces", .db = "/shared/d/merged.db", .nshards = 2, .cpus_per_task = 1 };
  struct slurm_job plain = j;
  plain.name = "x";
  if (lines(slurm_array_script(&j)) != lines(slurm_array_script(&plain)) ||
      lines(slurm_merge_script(&j)) != lines(slurm_merge_script(&plain)))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_names_special_files(data, size)) return 0;
  struct plan p;
  char err[2048] = "";
  int rc = plan_parse(&p, (const char *)data, size, FILE_NAME, "/nonexistent-plan-dir", err, sizeof err);
  if (rc == 0) {
    check_runs(&p);
    check_lists(&p);
    check_shards(&p);
    check_name(&p);
  } else if ((rc != EXIT_USAGE && rc != EXIT_BADINPUT) || strncmp(err, FILE_NAME, strlen(FILE_NAME)) != 0) {
    fprintf(stderr, "plan refused with exit code %d and message '%s'\n", rc, err);
    abort();
  }
  plan_free(&p);
  return 0;
}
