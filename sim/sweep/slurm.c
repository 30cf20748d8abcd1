/* Slurm job-array scripts for a sweep, and their submission (see slurm.h). */
#include "slurm.h"
#include "sweep.h"
#include "sim/base/outfile.h"
#include "sim/base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *path_in(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = xmalloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

char *slurm_array_script_path(const struct slurm_job *j) { return path_in(j->dir, "sweep.sbatch"); }
char *slurm_merge_script_path(const struct slurm_job *j) { return path_in(j->dir, "merge.sbatch"); }

/* "#SBATCH OPTION=VALUE", or "#SBATCH VALUE" without an option: the value in
** quotes, which sbatch reads back as sh does (slurm_write has refused control
** characters: the line would end at a newline). */
static void sbatch_line(struct strbuf *t, const char *option, const char *value) {
  strbuf_printf(t, "#SBATCH %s%s", option ? option : "", option ? "=" : "");
  shell_quote_always(t, value);
  strbuf_puts(t, "\n");
}

/* The job's name: vmxsim-NAME and suffix. */
static void job_name(struct strbuf *t, const struct slurm_job *j, const char *suffix) {
  struct strbuf v = { 0 };
  strbuf_printf(&v, "vmxsim-%s%s", j->name, suffix);
  sbatch_line(t, "--job-name", v.s);
  free(v.s);
}

/* The log of a job, in DIR/logs (check_sbatch_path keeps '%' out of DIR: there it is a pattern). */
static void output(struct strbuf *t, const struct slurm_job *j, const char *file) {
  char *logs = path_in(j->dir, "logs"), *p = path_in(logs, file);
  sbatch_line(t, "--output", p);
  free(logs), free(p);
}

/* The #SBATCH lines both jobs share; an --sbatch-option is one word. */
static void common_options(struct strbuf *t, const struct slurm_job *j) {
  if (j->time) sbatch_line(t, "--time", j->time);
  if (j->partition) sbatch_line(t, "--partition", j->partition);
  for (int i = 0; i < j->noptions; i++) sbatch_line(t, NULL, j->options[i]);
}

char *slurm_array_script(const struct slurm_job *j) {
  struct strbuf t = { 0 };
  strbuf_printf(&t, "#!/bin/sh\n"
           "# A vmxsim sweep as a Slurm job array, written by 'vmxsim sweep --slurm'.\n"
           "#   plan: %s\n"
           "# Task I runs part I of %u of the run set into shard-I.db beside this script.\n"
           "# A failed task runs again alone with 'sbatch --array=I sweep.sbatch' (it\n"
           "# resumes: the runs its database holds are skipped); then sbatch merge.sbatch.\n",
       j->plan, j->nshards);
  job_name(&t, j, "");
  strbuf_printf(&t, "#SBATCH --array=0-%u\n", j->nshards - 1);
  strbuf_printf(&t, "#SBATCH --cpus-per-task=%u\n", j->cpus_per_task);
  output(&t, j, "shard-%a.out");
  common_options(&t, j);
  strbuf_printf(&t, "set -eu\n"
           "# %u is written here: a task resubmitted alone is an array of one\n"
           "# (SLURM_ARRAY_TASK_COUNT=1), but still part $SLURM_ARRAY_TASK_ID of %u.\n"
           "exec ", j->nshards, j->nshards);
  shell_quote_always(&t, j->program);
  strbuf_printf(&t, " sweep ");
  shell_quote_always(&t, j->plan);
  strbuf_printf(&t, " --shard \"$SLURM_ARRAY_TASK_ID/%u\" -j %u --cache ", j->nshards, j->cpus_per_task);
  shell_quote_always(&t, j->cache);
  strbuf_printf(&t, " \\\n  --db ");
  shell_quote_always(&t, j->dir);
  strbuf_printf(&t, "/shard-\"$SLURM_ARRAY_TASK_ID\".db\n");
  return t.s;
}

char *slurm_merge_script(const struct slurm_job *j) {
  struct strbuf t = { 0 };
  strbuf_printf(&t, "#!/bin/sh\n"
           "# Merges the %u shard databases of a vmxsim sweep, written by 'vmxsim sweep --slurm'.\n"
           "#   plan: %s\n"
           "# Submitted with --dependency=afterok on the array job.  Merging is idempotent:\n"
           "# running it again stores nothing twice.\n",
       j->nshards, j->plan);
  job_name(&t, j, "-merge");
  strbuf_printf(&t, "#SBATCH --cpus-per-task=1\n");
  output(&t, j, "merge.out");
  common_options(&t, j);
  strbuf_printf(&t, "set -eu\nexec ");
  shell_quote_always(&t, j->program);
  strbuf_printf(&t, " merge ");
  shell_quote_always(&t, j->db);
  for (unsigned i = 0; i < j->nshards; i++) {
    char name[32];
    snprintf(name, sizeof name, "shard-%u.db", i);
    char *p = path_in(j->dir, name);
    strbuf_printf(&t, " \\\n  ");
    shell_quote_always(&t, p);
    free(p);
  }
  strbuf_printf(&t, "\n");
  return t.s;
}

/* A value for a script: a control character would end an #SBATCH line (or the
** plan's comment line) early and start a line of its own, run by every task. */
static int check_value(const char *what, const char *value, char *err, size_t errlen) {
  const char *c = value ? control_char(value) : NULL;
  if (!c) return 0;
  snprintf(err, errlen, "%s: a control character (byte 0x%02x at offset %zu) cannot go into a job script", what,
           (unsigned char)*c, (size_t)(c - value));
  return EXIT_USAGE;
}

static int check_values(const struct slurm_job *j, char *err, size_t errlen) {
  const struct { const char *what, *value; } v[] = {
    { "the plan's \"name\"", j->name }, { "the plan's path", j->plan }, { "vmxsim's own path", j->program },
    { "--dir", j->dir }, { "--cache", j->cache }, { "--db", j->db }, { "--time", j->time },
    { "--partition", j->partition } };
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof v / sizeof *v; i++) rc = check_value(v[i].what, v[i].value, err, errlen);
  for (int i = 0; !rc && i < j->noptions; i++) rc = check_value("--sbatch-option", j->options[i], err, errlen);
  return rc;
}

/* DIR/logs is in an #SBATCH --output path, which Slurm expands: '%' is a
** pattern there and a '\' turns the patterns off.  Spaces and quotes stay
** refused, as they were before the #SBATCH lines were quoted. */
static int check_sbatch_path(const char *what, const char *path, char *err, size_t errlen) {
  size_t bad = strcspn(path, " \t'\"%\\");
  if (!path[bad]) return 0;
  snprintf(err, errlen, "%s %s: the jobs' log paths (#SBATCH --output) cannot hold spaces, quotes, '%%' or '\\'; "
           "choose another directory with --dir", what, path);
  return EXIT_USAGE;
}

static int write_script(const char *path, const char *text, char *err, size_t errlen) {
  int rc = outfile_write_text(path, text, err, errlen);
  if (!rc && chmod(path, 0755) != 0) {
    snprintf(err, errlen, "%s: cannot make it executable: %s", path, strerror(errno));
    rc = EXIT_BADINPUT;
  }
  return rc;
}

int slurm_write(const struct slurm_job *j, char *err, size_t errlen) {
  int rc = check_values(j, err, errlen);
  if (!rc) rc = check_sbatch_path("--dir", j->dir, err, errlen);
  if (rc) return rc;
  char *logs = path_in(j->dir, "logs");
  rc = sweep_make_dirs(logs, err, errlen);
  free(logs);
  if (rc) return rc;
  char *ap = slurm_array_script_path(j), *mp = slurm_merge_script_path(j);
  char *at = slurm_array_script(j), *mt = slurm_merge_script(j);
  rc = write_script(ap, at, err, errlen);
  if (!rc) rc = write_script(mp, mt, err, errlen);
  free(ap), free(mp), free(at), free(mt);
  return rc;
}

/* ---- submitting ---- */

/* Reads the child's standard output into out (up to n - 1 bytes). */
static void read_output(int fd, char *out, size_t n) {
  size_t used = 0;
  for (;;) {
    ssize_t got = read(fd, out + used, n - 1 - used);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    used += (size_t)got;
    if (used == n - 1) {   /* more than a job id: drain the rest */
      char sink[256];
      while (read(fd, sink, sizeof sink) > 0) {}
      break;
    }
  }
  out[used] = 0;
}

int slurm_submit(const char *script, const char *const *args, int nargs, char id[32], char *err, size_t errlen) {
  const char *sbatch = getenv("SBATCH") && *getenv("SBATCH") ? getenv("SBATCH") : "sbatch";
  const char **argv = xcalloc((size_t)nargs + 4, sizeof *argv);
  int n = 0;
  argv[n++] = sbatch;
  argv[n++] = "--parsable";
  for (int i = 0; i < nargs; i++) argv[n++] = args[i];
  argv[n++] = script;
  int fds[2];
  if (pipe(fds) != 0) {
    free(argv);
    snprintf(err, errlen, "%s: cannot run it: %s", sbatch, strerror(errno));
    return EXIT_INTERNAL;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]), close(fds[1]);
    execvp(sbatch, (char *const *)argv);
    _exit(127);
  }
  close(fds[1]);
  char out[256] = "";
  if (pid > 0) read_output(fds[0], out, sizeof out);
  close(fds[0]);
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  free(argv);
  out[strcspn(out, ";\n")] = 0;   /* "JOBID" or "JOBID;CLUSTER" */
  if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
    snprintf(err, errlen, "%s: cannot run it (is Slurm installed? without --submit the scripts are only written)",
             sbatch);
    return EXIT_USAGE;
  }
  uint64_t v;
  if (WEXITSTATUS(status) != 0 || !parse_u64(out, &v)) {
    snprintf(err, errlen, "%s refused %s (exit %d%s%s)", sbatch, script, WEXITSTATUS(status),
             out[0] ? ", printed " : "", out);
    return EXIT_USAGE;
  }
  snprintf(id, 32, "%.31s", out);
  return 0;
}
