/* `vmxsim run`: replay a trace under a policy and print the report. */
#include "commands.h"
#include "sim/core/engine.h"
#include "sim/core/runner.h"
#include "sim/core/report.h"
#include "sim/store/store.h"
#include "sim/core/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
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

/* Progress on stderr for long runs when it is a terminal. */
static bool show_progress(struct engine *e, const struct trace_reader *r, void *arg) {
  (void)arg;
  if (r->hdr.event_count <= (1u << 23)) return !interrupt_requested();
  uint64_t n = r->hdr.event_count;
  fprintf(stderr, "\r  %3u%%  %" PRIu64 " of %" PRIu64 " events", (unsigned)(100 * e->index / n), e->index, n);
  return !interrupt_requested();
}

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

/* Stores the printed result unless --no-db; EXIT_DB (with a message) on failure. */
static int store_result(const struct run_opts *o, const struct run_output *out) {
  char err[1024];
  struct store_run run = store_run_of(out, o->trace);
  int64_t id = 0;
  int rc = store_save(o->db, &run, &id, err, sizeof err);
  if (rc) errorf("%s", err);
  else if (!o->quiet && isatty(2)) fprintf(stderr, "run %lld stored in %s\n", (long long)id, o->db);
  return rc;
}

int cmd_run(int argc, char **argv) {
  struct run_opts o;
  int rc = parse_run_opts(argc, argv, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  char err[1024];
  struct run_spec spec = { .trace = o.trace, .policy = o.policy, .cpu = o.cpu, .sets = o.sets, .nsets = o.nsets,
                           .hash_trace = !o.no_db, .progress = o.quiet || !isatty(2) ? NULL : show_progress };
  struct run_output *out = xmalloc(sizeof *out);
  struct interrupt_catch ic;
  interrupt_catch(&ic, false);
  rc = run_trace(&spec, out, err, sizeof err);
  interrupt_release(&ic);
  if (spec.progress == show_progress) fprintf(stderr, "\r%60s\r", "");
  if (rc != EXIT_OK) {
    errorf("%s", err);
  } else if (out->interrupted) {
    errorf("interrupted after %" PRIu64 " of %" PRIu64 " events; nothing stored", out->rep.events, out->trace_events);
    rc = EXIT_INTERRUPTED;
  } else {
    report_print(stdout, &out->rep, (enum report_format)o.format);
    fflush(stdout);   /* the result stays printed whatever happens to the database */
    if (!o.no_db) rc = store_result(&o, out);
  }
  run_output_free(out);
  free(out);
  return rc;
}
