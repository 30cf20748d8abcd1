/* `vmxsim sweep`: run a sweep plan here (-j workers, or one --shard of it),
** or write and submit it as a Slurm job array; `vmxsim merge`: merge shard
** databases.  The work is in sim/sweep (plan, sweep, slurm) and sim/store. */
#define _GNU_SOURCE   /* sched_getaffinity: the CPUs this process may use */
#include "commands.h"
#include "sim/base/util.h"
#include "sim/store/store.h"
#include "sim/sweep/plan.h"
#include "sim/sweep/slurm.h"
#include "sim/sweep/sweep.h"

#include <cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SBATCH_OPTIONS 32
#define RUNS_PER_SHARD 50          /* --slurm without --shards */
#define SHARDS_DEFAULT_MAX 1000
#define FAILURES_SHOWN 20
#define LOG_PROGRESS_SECONDS 10.0  /* progress lines when stderr is not a terminal */

static const char sweep_usage[] =
  "usage: vmxsim sweep PLAN.json [-j N] [--db FILE] [--cache DIR] [--shard I/N]\n"
  "                              [--dry-run] [--format table|json] [-q]\n"
  "       vmxsim sweep PLAN.json --slurm [--submit] [--shards N] [--dir DIR]\n"
  "                              [--cpus-per-task C] [--time T] [--partition P]\n"
  "                              [--sbatch-option OPT]... [--db FILE] [--cache DIR]\n"
  "\n"
  "Runs every run of the plan: the product of its traces (files, or generator\n"
  "parameter lists), policies (presets, compositions, knob lists) and CPU profiles,\n"
  "less its exclude rules (docs/sweeps.md).  Generated traces are made once, into a\n"
  "cache keyed by their parameters, and reused by later sweeps.  Runs the database\n"
  "already holds (same trace content, policy and knobs, profile and vmxsim version)\n"
  "are skipped, so an interrupted sweep resumes where it stopped.\n"
  "\n"
  "  -j, --jobs N          worker processes (default: the CPUs this process may use)\n"
  "      --db FILE         results database (default " STORE_DEFAULT_PATH "; with --shard I/N,\n"
  "                        shard-I.db, written with a rollback journal)\n"
  "      --cache DIR       generated traces (default: the plan's \"cache\", else\n"
  "                        $XDG_CACHE_HOME/vmxsim/traces or ~/.cache/vmxsim/traces)\n"
  "      --shard I/N       only part I of N (0 <= I < N): the runs whose index is I modulo N\n"
  "  -n, --dry-run         list the runs and whether each is stored; run nothing\n"
  "  -f, --format F        table (default: a summary) or json (every run with its id)\n"
  "  -q, --quiet           no progress line\n"
  "\n"
  "  --slurm               write DIR/sweep.sbatch, a job array of N tasks each running\n"
  "                        --shard $SLURM_ARRAY_TASK_ID/N into DIR/shard-I.db, and\n"
  "                        DIR/merge.sbatch, which merges them into the --db file\n"
  "                        (default DIR/merged.db); --cache defaults to DIR/traces\n"
  "  --submit              and submit both: the merge job with --dependency=afterok\n"
  "  --shards N            array tasks (default: one per 50 runs)\n"
  "  --dir DIR             a directory every node sees (default ./sweep-NAME)\n"
  "  --cpus-per-task C     each task's CPUs and workers (default 1)\n"
  "  --time T, --partition P, --sbatch-option OPT   passed to both jobs as #SBATCH lines,\n"
  "                        quoted (OPT is one option, one word: --sbatch-option=--account=lab)\n"
  "\n"
  "examples:\n"
  "  vmxsim sweep cr3-study.json -j 2\n"
  "  vmxsim sweep cr3-study.json --slurm --submit --shards 16 --time 01:00:00 --dir /shared/cr3\n";

static const char merge_usage[] =
  "usage: vmxsim merge OUT.db SHARD.db...\n"
  "\n"
  "Merges results databases (the shards of a sweep) into OUT.db, each in one\n"
  "transaction: traces by content, runs by identity (trace content, policy and knobs,\n"
  "CPU profile, vmxsim version), so merging a file twice, or overlapping files,\n"
  "stores each run once; run ids are renumbered.  A new OUT.db uses a rollback\n"
  "journal.  Files of an older schema are read as they are; newer ones are refused.\n"
  "Reports the files that are missing and the parts of a sharded sweep that OUT.db\n"
  "lacks or holds unfinished, and then exits with 3 (the rest is merged).\n"
  "\n"
  "example: vmxsim merge study.db sweep-study/shard-*.db\n";

struct sweep_cli {
  const char *plan, *db, *cache, *shard, *dir, *time, *partition;
  char *options[MAX_SBATCH_OPTIONS];
  int noptions;
  unsigned jobs, shards, cpus_per_task;
  bool dry_run, json, quiet, slurm, submit;
  /* progress */
  bool tty;
  double last_line;
};

static unsigned cpus_available(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (unsigned)CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

static bool parse_count(const char *opt, const char *text, unsigned max, unsigned *out) {
  uint64_t v;
  if (!parse_u64(text, &v) || v == 0 || v > max) {
    errorf("%s %s: expected a whole number from 1 to %u%s", opt, text, max, parse_u64_hint(text));
    return false;
  }
  *out = (unsigned)v;
  return true;
}

enum { OPT_CACHE = 256, OPT_SHARD, OPT_SLURM, OPT_SUBMIT, OPT_SHARDS, OPT_DIR, OPT_CPT, OPT_TIME, OPT_PART,
       OPT_SBOPT, OPT_DB };

static int parse_sweep_opts(int argc, char **argv, struct sweep_cli *o) {
  static const struct option longopts[] = {
    { "jobs", required_argument, 0, 'j' },        { "db", required_argument, 0, OPT_DB },
    { "cache", required_argument, 0, OPT_CACHE }, { "shard", required_argument, 0, OPT_SHARD },
    { "dry-run", no_argument, 0, 'n' },           { "format", required_argument, 0, 'f' },
    { "quiet", no_argument, 0, 'q' },             { "slurm", no_argument, 0, OPT_SLURM },
    { "submit", no_argument, 0, OPT_SUBMIT },     { "shards", required_argument, 0, OPT_SHARDS },
    { "dir", required_argument, 0, OPT_DIR },     { "cpus-per-task", required_argument, 0, OPT_CPT },
    { "time", required_argument, 0, OPT_TIME },   { "partition", required_argument, 0, OPT_PART },
    { "sbatch-option", required_argument, 0, OPT_SBOPT }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->cpus_per_task = 1;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "j:nf:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'j': if (!parse_count("--jobs", optarg, 4096, &o->jobs)) return EXIT_USAGE; break;
    case OPT_DB: o->db = optarg; break;
    case OPT_CACHE: o->cache = optarg; break;
    case OPT_SHARD: o->shard = optarg; break;
    case 'n': o->dry_run = true; break;
    case 'f':
      if (strcmp(optarg, "json") && strcmp(optarg, "table")) {
        errorf("--format %s: expected table or json", optarg);
        return EXIT_USAGE;
      }
      o->json = !strcmp(optarg, "json");
      break;
    case 'q': o->quiet = true; break;
    case OPT_SLURM: o->slurm = true; break;
    case OPT_SUBMIT: o->submit = o->slurm = true; break;
    case OPT_SHARDS: if (!parse_count("--shards", optarg, PLAN_SHARDS_MAX, &o->shards)) return EXIT_USAGE; break;
    case OPT_DIR: o->dir = optarg; break;
    case OPT_CPT: if (!parse_count("--cpus-per-task", optarg, 4096, &o->cpus_per_task)) return EXIT_USAGE; break;
    case OPT_TIME: o->time = optarg; break;
    case OPT_PART: o->partition = optarg; break;
    case OPT_SBOPT:
      if (o->noptions == MAX_SBATCH_OPTIONS) { errorf("too many --sbatch-option (max %d)", MAX_SBATCH_OPTIONS); return EXIT_USAGE; }
      o->options[o->noptions++] = optarg;
      break;
    case 'h': fputs(sweep_usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim sweep --help'", argv[optind - 1]);
      return EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    errorf("no plan given; see 'vmxsim sweep --help'");
    return EXIT_USAGE;
  }
  if (optind < argc - 1) {
    errorf("one plan expected, got extra argument '%s'", argv[optind + 1]);
    return EXIT_USAGE;
  }
  o->plan = argv[optind];
  if (o->slurm && (o->shard || o->dry_run)) {
    errorf("--slurm writes the scripts of every part: it takes no --shard or --dry-run");
    return EXIT_USAGE;
  }
  if (!o->slurm && (o->shards || o->dir || o->time || o->partition || o->noptions)) {
    errorf("--shards, --dir, --time, --partition and --sbatch-option go with --slurm");
    return EXIT_USAGE;
  }
  return 0;
}

/* ---- progress ---- */

static void progress(const struct sweep *s, void *arg) {
  struct sweep_cli *o = arg;
  double now = monotonic_seconds();
  if (!o->tty && now - o->last_line < LOG_PROGRESS_SECONDS) return;
  o->last_line = now;
  char line[160];
  if (!s->started) {
    snprintf(line, sizeof line, "sweep: traces %zu/%zu ready", s->traces_ready, s->traces_todo);
  } else {
    double rate, eta;
    sweep_rate(s, &rate, &eta);
    unsigned e = (unsigned)(eta + 0.5);
    snprintf(line, sizeof line, "sweep: %zu/%zu runs, %.1f runs/s, ETA %u:%02u:%02u%s", s->answered, s->todo, rate,
             e / 3600, e / 60 % 60, e % 60, s->failed ? " (some failed)" : "");
  }
  if (o->tty) fprintf(stderr, "\r  %-70s", line);
  else fprintf(stderr, "  %s\n", line);
}

static void clear_progress(const struct sweep_cli *o) {
  if (o->tty) fprintf(stderr, "\r%74s\r", "");
}

/* ---- results ---- */

static const char *state_name(const struct sweep *s, const struct sweep_item *it, bool dry) {
  switch (it->state) {
  case SWEEP_STORED: return "stored";
  case SWEEP_RAN: return "ran";
  case SWEEP_FAILED: return "failed";
  case SWEEP_REPEAT: return "repeat";
  case SWEEP_TODO: break;
  }
  if (dry && s->traces[it->trace].generate) return "to generate";
  return dry ? "to run" : "not run";
}

static void identity(const struct sweep *s, const struct sweep_item *it, const char **policy, const char **cpu) {
  const struct plan_run *r = &s->plan->runs[it->run];
  *policy = s->plan->policies[r->policy].resolved[r->pcombo].name;
  *cpu = s->plan->cpus[r->cpu].name;
}

static void print_json(const struct sweep *s, bool dry) {
  cJSON *o = cJSON_CreateObject(), *ids = cJSON_CreateArray(), *runs = cJSON_CreateArray();
  cJSON_AddStringToObject(o, "plan", s->plan->name);
  cJSON_AddStringToObject(o, "plan_hash", s->plan->hash);
  cJSON_AddStringToObject(o, "db", s->opts.db);
  cJSON_AddNumberToObject(o, "shard", s->opts.shard);
  cJSON_AddNumberToObject(o, "nshards", s->opts.nshards);
  cJSON_AddNumberToObject(o, "runs", (double)s->nitems);
  cJSON_AddNumberToObject(o, "excluded", (double)s->plan->nexcluded);
  cJSON_AddNumberToObject(o, "stored_before", (double)s->stored_before);
  cJSON_AddNumberToObject(o, "ran", (double)s->ran);
  cJSON_AddNumberToObject(o, "failed", (double)s->failed);
  cJSON_AddNumberToObject(o, "repeats", (double)s->repeats);
  for (size_t i = 0; i < s->nitems; i++) {
    const struct sweep_item *it = &s->items[i];
    const char *policy, *cpu;
    identity(s, it, &policy, &cpu);
    cJSON_AddItemToArray(ids, it->run_id ? cJSON_CreateNumber((double)it->run_id) : cJSON_CreateNull());
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "index", (double)it->run);
    if (it->run_id) cJSON_AddNumberToObject(r, "id", (double)it->run_id);
    else cJSON_AddNullToObject(r, "id");
    cJSON_AddStringToObject(r, "status", state_name(s, it, dry));
    cJSON_AddStringToObject(r, "trace", s->traces[it->trace].label);
    cJSON_AddStringToObject(r, "trace_file", s->traces[it->trace].path);
    cJSON_AddStringToObject(r, "trace_hash", s->traces[it->trace].hash);
    cJSON_AddStringToObject(r, "policy", policy);
    cJSON_AddStringToObject(r, "cpu", cpu);
    if (it->key[0]) cJSON_AddStringToObject(r, "run_key", it->key);
    if (it->state == SWEEP_REPEAT) cJSON_AddNumberToObject(r, "repeats", (double)s->items[it->same_as].run);
    if (it->err) cJSON_AddStringToObject(r, "error", it->err);
    cJSON_AddItemToArray(runs, r);
  }
  cJSON_AddItemToObject(o, "ids", ids);
  cJSON_AddItemToObject(o, "list", runs);
  char *text = cJSON_Print(o);
  printf("%s\n", text);
  cJSON_free(text);
  cJSON_Delete(o);
}

static void print_part(const struct sweep *s) {
  printf("sweep %s", s->plan->name);
  if (s->opts.nshards > 1) printf(", part %u of %u", s->opts.shard, s->opts.nshards);
  printf(": %zu runs", s->nitems);
  if (s->plan->nexcluded && s->opts.nshards == 1) printf(" (%zu excluded)", s->plan->nexcluded);
}

static void print_dry_run(const struct sweep *s) {
  print_part(s);
  printf("; %zu stored in %s, %zu to run", s->stored_before, s->opts.db,
         s->nitems - s->stored_before - s->failed - s->repeats);
  if (s->repeats) printf(", %zu repeat other runs", s->repeats);
  printf("; traces in %s\n", s->cache_dir);
  printf("%7s  %-12s %-36s %-32s %s\n", "run", "status", "trace", "policy", "cpu");
  for (size_t i = 0; i < s->nitems; i++) {
    const struct sweep_item *it = &s->items[i];
    const char *policy, *cpu;
    identity(s, it, &policy, &cpu);
    char status[32];
    if (it->state == SWEEP_STORED) snprintf(status, sizeof status, "stored #%lld", (long long)it->run_id);
    else if (it->state == SWEEP_REPEAT) snprintf(status, sizeof status, "as run %zu", s->items[it->same_as].run);
    else snprintf(status, sizeof status, "%s", state_name(s, it, true));
    printf("%7zu  %-12s %-36s %-32s %s\n", it->run, status, s->traces[it->trace].label, policy, cpu);
  }
}

static void print_summary(const struct sweep *s) {
  double t = s->started ? monotonic_seconds() - s->started : 0;
  print_part(s);
  printf(": %zu run now, %zu stored before, ", s->ran, s->stored_before);
  if (s->repeats) printf("%zu repeats of other runs of the plan, ", s->repeats);
  printf("%zu failed in %.1f s", s->failed, t);
  if (s->ran && t > 0)
    printf(" (%.1f runs/s on %u worker%s)", (double)s->ran / t, s->opts.jobs, s->opts.jobs == 1 ? "" : "s");
  printf("; results in %s\n", s->opts.db);
}

static void report_failures(const struct sweep *s) {
  size_t shown = 0;
  for (size_t i = 0; i < s->nitems; i++) {
    const struct sweep_item *it = &s->items[i];
    if (it->state != SWEEP_FAILED) continue;
    if (shown++ == FAILURES_SHOWN) {
      errorf("... and %zu more failed runs ('--format json' lists them all)", s->failed - FAILURES_SHOWN);
      break;
    }
    const char *policy, *cpu;
    identity(s, it, &policy, &cpu);
    errorf("run %zu (%s | %s | %s): %s", it->run, s->traces[it->trace].label, policy, cpu, it->err);
  }
}

/* ---- running here ---- */

static int run_here(struct sweep_cli *o, struct plan *plan) {
  char err[1024], shard_db[64];
  struct sweep_opts so = { .db = o->db, .cache = o->cache, .jobs = o->jobs ? o->jobs : cpus_available(),
                           .nshards = 1, .journal = STORE_JOURNAL_WAL, .progress = progress, .progress_arg = o };
  if (o->shard) {
    int rc = plan_shard_parse(o->shard, &so.shard, &so.nshards, err, sizeof err);
    if (rc) {
      errorf("%s", err);
      return rc;
    }
    so.journal = STORE_JOURNAL_ROLLBACK;
    snprintf(shard_db, sizeof shard_db, "shard-%u.db", so.shard);
    if (!so.db) so.db = shard_db;
  }
  if (!so.db) so.db = STORE_DEFAULT_PATH;
  o->tty = isatty(2);
  o->last_line = monotonic_seconds();   /* in a log, the first line after LOG_PROGRESS_SECONDS */
  if (o->quiet || o->dry_run) so.progress = NULL;
  struct sweep s;
  int rc = sweep_init(&s, plan, &so, err, sizeof err);
  if (!rc && o->dry_run) rc = sweep_lookup(&s, err, sizeof err);
  if (!rc && !o->dry_run) {
    struct interrupt_catch ic;
    interrupt_catch(&ic, true);
    rc = sweep_run(&s, err, sizeof err);
    interrupt_release(&ic);
    if (so.progress) clear_progress(o);
  }
  if (rc) {
    if (rc == EXIT_INTERRUPTED)
      errorf("interrupted: %zu of %zu runs stored; the same command resumes", s.stored_before + s.ran, s.nitems);
    else errorf("%s", err);
  }
  if (o->json) print_json(&s, o->dry_run);
  else if (o->dry_run) print_dry_run(&s);
  else if (rc != EXIT_INTERRUPTED) print_summary(&s);
  report_failures(&s);
  if (!rc) rc = sweep_first_failure(&s);
  sweep_free(&s);
  return rc;
}

/* ---- Slurm ---- */

/* path made absolute against the working directory (malloc'd). */
static char *absolute(const char *path) {
  if (path[0] == '/') return xstrdup(path);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return xstrdup(path);
  size_t n = strlen(cwd) + strlen(path) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s/%s", cwd, strncmp(path, "./", 2) ? path : path + 2);
  return s;
}

static char *path_in(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s/%s", dir, name);
  return s;
}

static char *self_path(void) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return NULL;
  buf[n] = 0;
  return xstrdup(buf);
}

/* {"tasks": N, "dir": ..., "db": ...[, "array_job": ID, "merge_job": ID]} on standard output. */
static void print_slurm_json(const struct slurm_job *j, const char *array_id, const char *merge_id) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "tasks", j->nshards);
  cJSON_AddStringToObject(o, "dir", j->dir);
  cJSON_AddStringToObject(o, "db", j->db);
  if (array_id) cJSON_AddStringToObject(o, "array_job", array_id);
  if (merge_id) cJSON_AddStringToObject(o, "merge_job", merge_id);
  char *text = cJSON_PrintUnformatted(o);
  printf("%s\n", text);
  cJSON_free(text);
  cJSON_Delete(o);
}

static int submit(const struct slurm_job *j, bool json) {
  char err[1024], array_id[32], merge_id[32];
  char *ap = slurm_array_script_path(j), *mp = slurm_merge_script_path(j);
  int rc = slurm_submit(ap, NULL, 0, array_id, err, sizeof err);
  if (!rc) {
    char dep[64];
    snprintf(dep, sizeof dep, "--dependency=afterok:%s", array_id);
    const char *args[] = { dep, "--kill-on-invalid-dep=yes" };
    rc = slurm_submit(mp, args, 2, merge_id, err, sizeof err);
    if (rc) errorf("the array job %s is submitted, the merge job not: %s", array_id, err);
  } else {
    errorf("%s", err);
  }
  if (!rc && json) {
    print_slurm_json(j, array_id, merge_id);
  } else if (!rc) {
    printf("submitted array job %s (%u tasks) and merge job %s (runs when every task succeeded)\n", array_id,
           j->nshards, merge_id);
    struct strbuf t = { 0 };
    strbuf_puts(&t, "a failed task runs again alone with: sbatch --array=I ");
    shell_quote(&t, ap);
    strbuf_puts(&t, ", then: sbatch ");
    shell_quote(&t, mp);
    printf("%s\n", t.s);
    free(t.s);
  }
  free(ap), free(mp);
  return rc;
}

/* How to submit the scripts by hand: commands to paste, every word quoted as sh needs it. */
static void print_submit_hint(const struct sweep_cli *o, const struct slurm_job *j) {
  char *ap = slurm_array_script_path(j), *mp = slurm_merge_script_path(j);
  struct strbuf t = { 0 };
  strbuf_puts(&t, "submit them with: vmxsim sweep ");
  shell_quote(&t, o->plan);
  strbuf_puts(&t, " --slurm --submit (the same options), or:\n  id=$(sbatch --parsable ");
  shell_quote(&t, ap);
  strbuf_puts(&t, " | cut -d';' -f1)\n  sbatch --dependency=afterok:$id --kill-on-invalid-dep=yes ");
  shell_quote(&t, mp);
  printf("%s\n", t.s);
  free(t.s), free(ap), free(mp);
}

static int run_slurm(struct sweep_cli *o, const struct plan *plan) {
  char err[1024];
  struct strbuf dflt_dir = { 0 };
  strbuf_printf(&dflt_dir, "sweep-%s", plan->name);
  unsigned n = o->shards;
  if (!n) {
    size_t want = (plan->nruns + RUNS_PER_SHARD - 1) / RUNS_PER_SHARD;
    n = (unsigned)(want < 1 ? 1 : want > SHARDS_DEFAULT_MAX ? SHARDS_DEFAULT_MAX : want);
  }
  if (n > plan->nruns) n = (unsigned)plan->nruns;
  char *program = self_path(), *plan_abs = realpath(o->plan, NULL), *dir = absolute(o->dir ? o->dir : dflt_dir.s);
  char *cache = o->cache ? absolute(o->cache) : NULL, *db = o->db ? absolute(o->db) : NULL;
  if (!cache) cache = path_in(dir, "traces");
  if (!db) db = path_in(dir, "merged.db");
  struct slurm_job j = { program ? program : "vmxsim", plan_abs ? plan_abs : o->plan, plan->name, dir, cache, db, n,
                         o->cpus_per_task, o->time, o->partition, o->options, o->noptions };
  int rc = slurm_write(&j, err, sizeof err);
  if (rc) errorf("%s", err);
  else if (o->submit) rc = submit(&j, o->json);
  else if (o->json) print_slurm_json(&j, NULL, NULL);
  else {
    printf("wrote %s/sweep.sbatch (%u tasks, part I into %s/shard-I.db) and %s/merge.sbatch (into %s)\n", dir, n, dir,
           dir, db);
    print_submit_hint(o, &j);
  }
  free(program), free(plan_abs), free(dir), free(cache), free(db), free(dflt_dir.s);
  return rc;
}

int cmd_sweep(int argc, char **argv) {
  struct sweep_cli o;
  int rc = parse_sweep_opts(argc, argv, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  struct plan plan;
  char err[1024];
  rc = plan_load(&plan, o.plan, err, sizeof err);
  if (rc) errorf("%s", err);
  else rc = o.slurm ? run_slurm(&o, &plan) : run_here(&o, &plan);
  plan_free(&plan);
  return rc;
}

/* ---- merge ---- */

static void report_gaps(struct sqlite3 *db, const char *out, int *rc) {
  struct store_gap *gaps;
  size_t n;
  char err[1024];
  int grc = store_sweep_gaps(db, out, &gaps, &n, err, sizeof err);
  if (grc) {
    errorf("%s", err);
    *rc = grc;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const struct store_gap *g = &gaps[i];
    if (g->missing)
      errorf("%s: part %u of %u of sweep %s (plan %s) is missing", out, g->shard, g->nshards, g->name, g->plan_hash);
    else
      errorf("%s: part %u of %u of sweep %s (plan %s) is unfinished: %llu of %llu runs stored, %llu failed", out,
             g->shard, g->nshards, g->name, g->plan_hash, (unsigned long long)g->done, (unsigned long long)g->runs,
             (unsigned long long)g->failed);
  }
  if (n && !*rc) *rc = EXIT_BADINPUT;
  free(gaps);
}

int cmd_merge(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(merge_usage, stdout);
    return EXIT_OK;
  }
  if (argc < 3) {
    errorf("%s; see 'vmxsim merge --help'", argc < 2 ? "no output database given" : "no database to merge given");
    return EXIT_USAGE;
  }
  const char *out = argv[1];
  char err[1024];
  struct sqlite3 *db = NULL;
  int rc = store_open_journal(out, true, STORE_JOURNAL_KEEP, &db, err, sizeof err);
  if (rc) {
    errorf("%s", err);
    return rc;
  }
  uint64_t added = 0;
  int merged = 0;
  for (int i = 2; i < argc; i++) {
    struct store_merge_result res;
    int mrc = store_merge(db, out, argv[i], &res, err, sizeof err);
    if (mrc) {
      errorf("%s", err);
      if (!rc || mrc == EXIT_DB) rc = mrc;
      continue;
    }
    added += res.added;
    merged++;
    printf("%s: %llu runs: %llu added, %llu already in %s\n", argv[i], (unsigned long long)res.runs,
           (unsigned long long)res.added, (unsigned long long)res.present, out);
  }
  report_gaps(db, out, &rc);
  printf("%s: %llu run%s added from %d file%s", out, (unsigned long long)added, added == 1 ? "" : "s", merged,
         merged == 1 ? "" : "s");
  if (merged < argc - 2) printf(" (%d of %d could not be merged)", argc - 2 - merged, argc - 2);
  printf("\n");
  store_close(db);
  return rc;
}
