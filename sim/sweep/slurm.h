/* A sweep on a Slurm cluster: a job-array script whose task I runs part I of N
** (`vmxsim sweep PLAN --shard I/N`) into its own database in a shared
** directory, a merge script for a job that depends on the whole array, and
** their submission with sbatch.  docs/sweeps.md, "On a Slurm cluster". */
#ifndef VMXSIM_SLURM_H
#define VMXSIM_SLURM_H

#include <stddef.h>

struct slurm_job {
  const char *program;        /* vmxsim, an absolute path (the tasks run elsewhere) */
  const char *plan;           /* the plan, absolute */
  const char *name;           /* the plan's name: job names vmxsim-NAME and vmxsim-NAME-merge */
  const char *dir;            /* the shared directory, absolute: shard-I.db, logs/, the scripts */
  const char *cache;          /* the trace cache, absolute (default DIR/traces) */
  const char *db;             /* the merged database, absolute (default DIR/merged.db) */
  unsigned nshards;           /* array tasks */
  unsigned cpus_per_task;     /* --cpus-per-task, and each task's -j */
  const char *time;           /* --time, or NULL */
  const char *partition;      /* --partition, or NULL */
  char *const *options;       /* more #SBATCH options for both jobs ("--account=x") */
  int noptions;
};

/* DIR/sweep.sbatch and DIR/merge.sbatch (malloc'd). */
char *slurm_array_script_path(const struct slurm_job *j);
char *slurm_merge_script_path(const struct slurm_job *j);

/* The scripts' text (malloc'd). */
char *slurm_array_script(const struct slurm_job *j);
char *slurm_merge_script(const struct slurm_job *j);

/* Creates DIR and DIR/logs and writes both scripts (mode 0755).  Every value
** is quoted in the scripts; 0, EXIT_USAGE (a value with a control character,
** a DIR the #SBATCH --output lines cannot carry) or EXIT_BADINPUT, message in err. */
int slurm_write(const struct slurm_job *j, char *err, size_t errlen);

/* Runs `SBATCH --parsable ARGS... SCRIPT` (SBATCH: $SBATCH, else "sbatch") and
** sets id to the job id it prints (before any ";cluster").  0, or EXIT_USAGE
** when sbatch is missing or refuses the job (sbatch says why on stderr). */
int slurm_submit(const char *script, const char *const *args, int nargs, char id[32], char *err, size_t errlen);

#endif
