/* Sweep plans: a JSON file naming traces (files, or generators with parameter
** lists), policies (presets, compositions, knob lists) and CPU profiles; the
** run set is their product less the `exclude` rules.  docs/sweeps.md is the
** format's reference.
**
** Errors (docs/architecture.md, "Errors"): 0, EXIT_BADINPUT (the file cannot
** be read, or is not JSON: "PLAN:LINE: ...") or EXIT_USAGE (anything else
** wrong in the plan: "PLAN: $.json.path: what"), the message in err. */
#ifndef VMXSIM_PLAN_H
#define VMXSIM_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/config/policy.h"

#define PLAN_RUNS_MAX 1000000u    /* a bigger product is refused (split the plan) */
#define PLAN_WHERE_MAX 160         /* a JSON path such as $.policies[3].knobs.cr3_target_count[2] */

/* One value of a parameter or knob, as text: numbers in their shortest exact
** decimal form, booleans as true/false. */
struct plan_value {
  char *text;
  bool is_bool;                   /* a JSON boolean: a generator flag (--name) when true */
};

/* A name with the values it takes: one (fixed) or a list (swept). */
struct plan_axis {
  char *name;                     /* "procs", "cr3_target_count" */
  struct plan_value *values;
  size_t nvalues;
};

struct plan_trace {
  char *file;                     /* a trace file as the plan writes it; NULL when generated */
  char *path;                     /* that file, relative to the plan's directory resolved */
  char *generator;                /* generated: the generator's name */
  struct plan_axis *params;       /* generated: its options, in the plan's order */
  size_t nparams;
  size_t ncombos;                 /* product of the parameters' value counts (1 for a file) */
  char where[PLAN_WHERE_MAX];     /* "$.traces[2]" */
};

struct plan_policy {
  char *spec;                     /* "cr3cache" or "shadowcache+lazydr" as written */
  char *resolved_spec;            /* with file parts relative to the plan's directory resolved */
  struct plan_axis *knobs;        /* knob lists, in the plan's order */
  size_t nknobs;
  size_t ncombos;                 /* product of the knobs' value counts */
  struct policy *resolved;        /* [ncombos]: the policy of each combination */
  char **json;                    /* [ncombos]: policy_to_json of each */
  char where[PLAN_WHERE_MAX];
};

struct plan_cpu {
  char *spec;                     /* as written */
  char *resolved_spec;            /* a path relative to the plan's directory resolved */
  char name[64];                  /* the profile's name */
  char *json;                     /* the profile as loaded */
  char hash[17];                  /* store_text_hash of json */
  char where[PLAN_WHERE_MAX];
};

enum plan_cond_kind { COND_TRACE, COND_GENERATOR, COND_POLICY, COND_CPU, COND_PARAM, COND_KNOB };

/* One condition of a rule: the run's KEY has one of the values. */
struct plan_cond {
  enum plan_cond_kind kind;
  char *key;                      /* the parameter or knob name (without "params."/"knobs.") */
  struct plan_value *values;
  size_t nvalues;
};

/* An exclude rule: a run matching every condition is left out. */
struct plan_rule {
  struct plan_cond *conds;
  size_t nconds;
};

/* One run of the product: indexes into the plan's lists and combinations. */
struct plan_run {
  uint32_t trace, tcombo;         /* traces[trace], parameter combination tcombo */
  uint32_t policy, pcombo;        /* policies[policy], knob combination pcombo */
  uint32_t cpu;
};

struct plan {
  char *file;                     /* the plan file as given */
  char *dir;                      /* its directory: relative paths in it start there */
  char *name;                     /* "name", else the file name without .json */
  char *cache;                    /* "cache" resolved, or NULL */
  char *json;                     /* the plan as compact JSON */
  char hash[17];                  /* XXH64 of json */
  struct plan_trace *traces;
  size_t ntraces;
  struct plan_policy *policies;
  size_t npolicies;
  struct plan_cpu *cpus;
  size_t ncpus;
  struct plan_rule *rules;
  size_t nrules;
  struct plan_run *runs;          /* the run set, in order: traces, then policies, then cpus */
  size_t nruns;
  size_t nexcluded;               /* runs of the product the rules left out */
};

/* Reads and checks the plan file. */
int plan_load(struct plan *p, const char *path, char *err, size_t errlen);
/* The same from text (len bytes, not necessarily NUL-terminated); file names
** the plan in messages, dir is where its relative paths start. */
int plan_parse(struct plan *p, const char *text, size_t len, const char *file, const char *dir,
               char *err, size_t errlen);
void plan_free(struct plan *p);

/* The value index of axis i in combination combo (the first axis varies slowest). */
size_t plan_axis_index(const struct plan_axis *axes, size_t naxes, size_t combo, size_t i);
/* The generator's argument vector for combination combo: argv[0] the
** generator, then "--name value" (or "--name" for a true flag) per parameter.
** *argv is malloc'd with its strings; free with plan_argv_free. */
void plan_trace_argv(const struct plan_trace *t, size_t combo, char ***argv, int *argc);
void plan_argv_free(char **argv, int argc);
/* "KNOB=VALUE" overrides of combination combo (malloc'd; plan_argv_free). */
void plan_policy_sets(const struct plan_policy *pp, size_t combo, char ***sets, int *nsets);
/* "lat_ctx procs=2 size=0" or the file: a run's trace, for listings (malloc'd). */
char *plan_trace_label(const struct plan_trace *t, size_t combo);

/* ---- shards: --shard I/N takes the runs whose index is I modulo N ---- */

/* Parses "I/N" (0 <= I < N <= PLAN_SHARDS_MAX).  0 or EXIT_USAGE with a message. */
#define PLAN_SHARDS_MAX 100000u
int plan_shard_parse(const char *text, unsigned *shard, unsigned *nshards, char *err, size_t errlen);
static inline bool plan_in_shard(size_t run, unsigned shard, unsigned nshards) {
  return run % nshards == shard;
}
/* How many of nruns runs shard I of N holds. */
size_t plan_shard_size(size_t nruns, unsigned shard, unsigned nshards);

#endif
