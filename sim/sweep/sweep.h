/* Running a sweep plan (plan.h): its traces prepared once (generated into a
** content-addressed cache, hashed), the runs already stored skipped, the rest
** replayed by a pool of worker processes (pool.h) and stored by this process
** alone, in one transaction each, so that a sweep killed at any moment
** resumes where it stopped.  docs/sweeps.md describes it for users.
**
** Nothing here prints: the front end (sim/cli/cmd_sweep.c) gets progress
** through a callback and reads the outcome from struct sweep. */
#ifndef VMXSIM_SWEEP_H
#define VMXSIM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "plan.h"
#include "sim/store/known.h"
#include "sim/store/store.h"

struct sweep;

struct sweep_opts {
  const char *db;                 /* results database */
  const char *cache;              /* generated traces; NULL: the plan's "cache", else sweep_default_cache() */
  unsigned jobs;                  /* worker processes, at least 1 */
  unsigned shard, nshards;        /* this part of the run set; 0 of 1: all of it */
  enum store_journal journal;     /* STORE_JOURNAL_ROLLBACK for shards on a shared file system */
  /* In this process, after each answered run and trace (may be NULL). */
  void (*progress)(const struct sweep *s, void *arg);
  void *progress_arg;
};

enum sweep_state {
  SWEEP_TODO,                     /* not run (yet) */
  SWEEP_STORED,                   /* stored before this sweep started: skipped */
  SWEEP_RAN,                      /* run and stored now */
  SWEEP_FAILED,                   /* its trace could not be made, or the replay failed */
  SWEEP_REPEAT,                   /* the same run (same key) as an earlier one of the part
                                     (same_as): not run twice, it gets that one's id */
};

/* One run of this part. */
struct sweep_item {
  size_t run;                     /* index in plan->runs */
  uint32_t trace;                 /* index in sweep->traces */
  enum sweep_state state;
  int64_t run_id;                 /* stored run id (SWEEP_STORED, SWEEP_RAN) */
  char key[STORE_KEY_LEN + 1];    /* store_run_key, once its trace is hashed */
  size_t same_as;                 /* SWEEP_REPEAT: the index in items of the run it repeats */
  int rc;                         /* SWEEP_FAILED: enum exit_code ... */
  char *err;                      /* ... and message (malloc'd) */
};

/* One trace the part replays. */
struct sweep_trace {
  uint32_t trace, combo;          /* plan->traces[trace], parameter combination */
  char *path;                     /* the file replayed: the plan's, or one in the cache */
  char *label;                    /* plan_trace_label */
  bool generate;                  /* generated, and not in the cache when the sweep started */
  char hash[STORE_KEY_LEN + 1];   /* its content hash, once known ("" before) */
  struct file_seen seen;          /* a given file as seen before it was hashed, or when the database gave
                                     its hash (sim/store/known.h): a run is stored only while the file
                                     still looks so; ok false for a generated file */
  bool remembered;                /* the database gave the hash: not remembered again */
  int rc;                         /* preparing it failed: enum exit_code ... */
  char *err;                      /* ... and message (malloc'd) */
};

struct sweep {
  struct plan *plan;
  struct sweep_opts opts;
  char *cache_dir;
  struct sweep_trace *traces;
  size_t ntraces;
  struct sweep_item *items;       /* in run-set order */
  size_t nitems;
  size_t stored_before, ran, failed, todo;   /* items by state; todo: to run this time */
  size_t answered;                           /* of todo, run (stored or failed) */
  size_t repeats;                            /* items in state SWEEP_REPEAT */
  size_t traces_ready, traces_todo;          /* prepared of those to prepare */
  double started;                 /* monotonic_seconds() when the runs began */
  /* internal */
  struct sqlite3 *db;
  int64_t sweep_id;
  double progress_saved;
};

/* Chooses the part's runs and their traces (cache paths: no file is touched). */
int sweep_init(struct sweep *s, struct plan *plan, const struct sweep_opts *o, char *err, size_t errlen);
/* What --dry-run shows: hashes the traces that exist and looks the runs up in
** the database (when it exists), without generating or running anything. */
int sweep_lookup(struct sweep *s, char *err, size_t errlen);
/* Runs the part: 0 when it ran to its end (some runs may have failed: see
** failed and items), EXIT_INTERRUPTED, EXIT_DB or EXIT_INTERNAL (message in err). */
int sweep_run(struct sweep *s, char *err, size_t errlen);
/* The exit code of the first failed run, 0 when none failed. */
int sweep_first_failure(const struct sweep *s);
void sweep_free(struct sweep *s);

/* $XDG_CACHE_HOME/vmxsim/traces, else $HOME/.cache/vmxsim/traces, else
** ./.vmxsim-cache (malloc'd; user_cache_dir). */
char *sweep_default_cache(void);
/* The cache file of a generated trace: DIR/GENERATOR-KEY.bin, KEY the XXH64 of
** the generator, its model version, the trace format version and the
** parameters sorted by name (malloc'd). */
char *sweep_cache_path(const char *dir, const struct plan_trace *t, size_t combo);
/* mkdir -p: 0, or EXIT_BADINPUT with "PATH: cannot create DIR: why" in err. */
int sweep_make_dirs(const char *path, char *err, size_t errlen);
/* Runs per second since the runs began and seconds left (both 0 when unknown). */
void sweep_rate(const struct sweep *s, double *per_second, double *eta_seconds);

#endif
