/* `vmxsim reproduce`: the classic exit-cost experiments, run from the project's
** own generators, policies and CPU profiles (docs/experiments.md). */
#ifndef VMXSIM_REPRODUCE_H
#define VMXSIM_REPRODUCE_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/replay/report.h"

#define XP_MAX_COLS 10
#define XP_MAX_ROWS 24

/* One simulated run's figures. */
struct xp_result {
  double us_per_op;          /* (guest + hypervisor) microseconds per mark */
  double native_us_per_op;   /* the trace's native microseconds per mark */
  double exits_per_op;
  double seconds;            /* elapsed (busiest vCPU) seconds */
  uint64_t marks, total_exits;
  struct report rep;
};

/* One row of an experiment's table. */
struct xp_row {
  char label[64];
  double v[XP_MAX_COLS];
  bool calibrated[XP_MAX_COLS];   /* the value was fitted on a calibration point */
  double published[XP_MAX_COLS];  /* that point's published value (0: none) */
};

struct xp_table {
  const char *name, *title, *unit;
  const char *cols[XP_MAX_COLS];
  unsigned ncols, nrows;
  unsigned plot_first, plot_n;    /* columns drawn as clustered bars (plot_n 0: the first 3) */
  bool plot_log;                  /* logarithmic y axis */
  struct xp_row row[XP_MAX_ROWS];
  char notes[1024];
};

/* How progress is shown on standard error. */
enum xp_progress {
  XP_PROGRESS_OFF,           /* --quiet, or standard error is not a terminal */
  XP_PROGRESS_TTY,           /* one line rewritten in place (\r) */
  XP_PROGRESS_LINES,         /* --progress on a file or pipe: one line per step */
};

/* The context experiments run in: scratch directory, size, store, progress. */
struct xp_ctx {
  char dir[256];             /* scratch directory for generated traces */
  bool quick;                /* reduced sizes for tests */
  const char *db;            /* results database, NULL = do not store */
  unsigned traces;           /* traces generated so far (names) */
  int rc;                    /* first failure's exit code */
  char err[1024];
  /* progress: "[2/6] cr3-cache-2008: run 4: lat_ctx ... under cr3cache" */
  enum xp_progress progress;
  unsigned xp_index, xp_count;   /* the experiment running, 1-based, of how many */
  const char *xp_name;
  unsigned runs;             /* replays of this experiment so far */
};

/*
** Errors: the context keeps the first failure, its enum exit_code in rc and
** its message in err, so that an experiment can stop at any step and the
** command report it once.
*/
/* Generates a trace with `vmxsim gen` arguments (NULL-terminated); returns its
** path (static storage per call: copy it) or NULL on failure (c->rc, c->err). */
const char *xp_gen(struct xp_ctx *c, const char *const *args);
/* Imports a recording (its format detected) with the importer's options opt
** into the scratch directory, as label; returns the trace's path, or NULL on
** failure (c->rc, c->err), as xp_gen. */
struct import_opts;
const char *xp_import(struct xp_ctx *c, const char *recording, const char *label, const struct import_opts *opt);
/* Runs trace under policy/cpu with optional KEY=VALUE sets (NULL-terminated).
** Returns 0, or the enum exit_code also left in c->rc (message in c->err). */
int xp_run(struct xp_ctx *c, const char *trace, const char *policy, const char *cpu,
           const char *const *sets, struct xp_result *out);
/* One configuration of xp_run_many: xp_run's arguments. */
struct xp_config {
  const char *policy, *cpu;
  const char *const *sets;   /* NULL-terminated, or NULL */
};
/* Runs trace under every configuration in one pass over it, out[i] for
** cfg[i] (stored in that order); as xp_run otherwise. */
int xp_run_many(struct xp_ctx *c, const char *trace, const struct xp_config *cfg, unsigned n, struct xp_result *out);
/* What an experiment returns after a failed step: c->rc, or EXIT_INTERNAL when unset. */
int xp_failed(const struct xp_ctx *c);
/* Removes the generated traces and the scratch directory (unless keep). */
void xp_cleanup(const struct xp_ctx *c, bool keep);
struct xp_row *xp_add_row(struct xp_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The table t as a chart (PNG, SVG and PDF) in dir, by gnuplot and
** scripts/plot/bars.gp (reproduce_plot.c); a missing script or gnuplot is
** said on standard error, and the tables are printed all the same. */
void xp_plot(const struct xp_table *t, const char *dir);

/* The command: argv[0] is "reproduce"; returns an enum exit_code. */
int cmd_reproduce(int argc, char **argv);

/* The experiments (sim/reproduce/experiments.c); each fills its table(s) and
** returns 0 or an enum exit_code (see xp_failed). */
typedef int (*xp_fn)(struct xp_ctx *c, struct xp_table *t);   /* t: ntables tables */
struct experiment {
  const char *name;
  const char *summary;
  xp_fn run;
  unsigned ntables;
};
extern const struct experiment experiments[];
extern const unsigned nexperiments;

#endif
