/* `vmxsim run`: replay a trace under a policy and print the report. */
#include "commands.h"
#include "engine.h"
#include "report.h"
#include "store.h"
#include "util.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SETS 64

static const char run_usage[] =
  "usage: vmxsim [run] --policy P [--cpu C] [--set KEY=VALUE]... [--format table|json|csv]\n"
  "                    [--db FILE | --no-db] TRACE\n"
  "\n"
  "Replays TRACE (a binary trace: see 'vmxsim trace asm', 'vmxsim gen') under hypervisor\n"
  "policy P on CPU cost profile C and reports VM exits by reason, their cycles, and the\n"
  "split of time between guest and hypervisor.\n"
  "\n"
  "  -p, --policy P      preset name, or presets joined with '+' (later ones override):\n"
  "                      nocache, shadowcache, cr3cache, prevroots, ept; modifiers cr4mask,\n"
  "                      lazydr.  A path to a JSON file also works.  See 'vmxsim policies'.\n"
  "  -c, --cpu C         CPU cost profile (default " PROFILE_DEFAULT "); see 'vmxsim cpus'\n"
  "  -s, --set K=V       override one policy knob, e.g. --set cr3_target_count=2\n"
  "  -f, --format F      table (default; reads like xenalyze --summary), json, csv\n"
  "      --db FILE       results database (default vmxsim.db)\n"
  "      --no-db         do not store the result\n"
  "  -q, --quiet         no progress indicator\n"
  "\n"
  "example: vmxsim --policy cr3cache --cpu core2-2008 --format json lat_ctx.bin\n";

struct run_opts {
  const char *policy, *cpu, *db, *trace;
  char *sets[MAX_SETS];
  int nsets;
  int format;
  bool no_db, quiet;
};

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

static bool show_progress(struct engine *e, void *arg) {
  const struct trace_reader *r = arg;
  uint64_t n = r->hdr.event_count ? r->hdr.event_count : 1;
  fprintf(stderr, "\r  %3u%%  %" PRIu64 " of %" PRIu64 " events", (unsigned)(100 * e->index / n), e->index, n);
  return !interrupted;
}
static bool check_interrupt(struct engine *e, void *arg) { (void)e; (void)arg; return !interrupted; }

static int parse_run_opts(int argc, char **argv, struct run_opts *o) {
  static const struct option longopts[] = {
    { "policy", required_argument, 0, 'p' }, { "cpu", required_argument, 0, 'c' },
    { "set", required_argument, 0, 's' },    { "format", required_argument, 0, 'f' },
    { "db", required_argument, 0, 'D' },     { "no-db", no_argument, 0, 'N' },
    { "quiet", no_argument, 0, 'q' },        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->cpu = PROFILE_DEFAULT;
  o->db = "vmxsim.db";
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "p:c:s:f:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'p': o->policy = optarg; break;
    case 'c': o->cpu = optarg; break;
    case 's':
      if (o->nsets == MAX_SETS) { errorf("too many --set options (max %d)", MAX_SETS); return EXIT_USAGE; }
      o->sets[o->nsets++] = optarg;
      break;
    case 'f':
      if ((o->format = report_format_from_name(optarg)) < 0) {
        errorf("--format %s: expected table, json or csv", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'D': o->db = optarg; break;
    case 'N': o->no_db = true; break;
    case 'q': o->quiet = true; break;
    case 'h': fputs(run_usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim run --help'", argv[optind - 1]);
      return EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    errorf("no trace given; see 'vmxsim run --help'");
    return EXIT_USAGE;
  }
  if (optind < argc - 1) {
    errorf("one trace expected, got extra argument '%s'", argv[optind + 1]);
    return EXIT_USAGE;
  }
  if (!o->policy) {
    errorf("--policy is required (e.g. --policy shadowcache); 'vmxsim policies' lists them");
    return EXIT_USAGE;
  }
  o->trace = argv[optind];
  return EXIT_OK;
}

static void fill_identity(struct report *rep, const struct run_opts *o, const struct trace_reader *r,
                          const struct policy *p, const struct profile *pr) {
  memset(rep, 0, sizeof *rep);
  snprintf(rep->trace, sizeof rep->trace, "%s", o->trace);
  snprintf(rep->workload, sizeof rep->workload, "%s", r->hdr.workload);
  snprintf(rep->policy, sizeof rep->policy, "%s", p->name);
  snprintf(rep->cpu, sizeof rep->cpu, "%s", pr->name);
  snprintf(rep->paging, sizeof rep->paging, "%s", paging_name(r->hdr.paging));
  rep->vcpus = r->hdr.vcpu_count;
  rep->clock_ghz = pr->clock_ghz;
}

/* Stores the printed result unless --no-db; EXIT_DB (with a message) on failure. */
static int store_result(const struct run_opts *o, const struct report *rep, const struct trace_reader *r,
                        const struct policy *pol, const struct profile *prof, const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  char *pjson = policy_to_json(pol), err[1024];
  struct store_run run = {
    .rep = rep, .trace_path = o->trace, .trace_metadata = r->hdr.metadata, .trace_events = r->hdr.event_count,
    .policy_json = pjson, .profile_json = prof->json,
    .wall_seconds = (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9,
  };
  int64_t id = 0;
  int rc = store_save(o->db, &run, &id, err, sizeof err);
  free(pjson);
  if (rc) errorf("%s", err);
  else if (!o->quiet && isatty(2)) fprintf(stderr, "run %lld stored in %s\n", (long long)id, o->db);
  return rc;
}

int cmd_run(int argc, char **argv) {
  struct run_opts o;
  int rc = parse_run_opts(argc, argv, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  char err[1024];
  struct policy pol;
  struct profile prof;
  if (!policy_resolve(&pol, o.policy, o.sets, o.nsets, err, sizeof err)) { errorf("%s", err); return EXIT_USAGE; }
  if (!profile_load(&prof, o.cpu, err, sizeof err)) {
    errorf("%s", err);
    profile_free(&prof);
    return strstr(err, "unknown CPU") ? EXIT_USAGE : EXIT_BADINPUT;
  }
  struct trace_reader r;
  if (trace_open(&r, o.trace) != TRACE_OK) {
    errorf("%s", r.err);
    profile_free(&prof);
    return EXIT_BADINPUT;
  }
  struct engine e;
  if (!engine_init(&e, &pol, &prof, r.hdr.vcpu_count, r.hdr.paging, err, sizeof err)) {
    errorf("%s", err);
    trace_close(&r);
    profile_free(&prof);
    return EXIT_VMENTRY;
  }
  bool tty = !o.quiet && isatty(2) && r.hdr.event_count > (1u << 23);
  signal(SIGINT, on_sigint);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  bool ok = engine_run(&e, &r, tty ? show_progress : check_interrupt, &r);
  signal(SIGINT, SIG_DFL);
  if (tty) fprintf(stderr, "\r%60s\r", "");
  if (!ok) {
    errorf("%s", r.err);
    rc = EXIT_BADINPUT;
  } else if (interrupted) {
    errorf("interrupted after %" PRIu64 " of %" PRIu64 " events; nothing stored", e.index, r.hdr.event_count);
    rc = 130;
  } else {
    struct report *rep = xmalloc(sizeof *rep);
    fill_identity(rep, &o, &r, &pol, &prof);
    report_from_stats(rep, &e.st);
    rep->elapsed_cycles = engine_elapsed(&e);
    report_print(stdout, rep, (enum report_format)o.format);
    fflush(stdout);   /* the result stays printed whatever happens to the database */
    if (!o.no_db) rc = store_result(&o, rep, &r, &pol, &prof, &t0);
    free(rep);
  }
  engine_free(&e);
  trace_close(&r);
  profile_free(&prof);
  return rc;
}
