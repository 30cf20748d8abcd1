/* `vmxsim run`: replay a trace under a policy and print the report. */
#include "commands.h"
#include "options.h"
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
  "                    [--views] [--vcpu N] [--interval N[us|ms|s|ev]] [--input-format F]\n"
  "                    [--db FILE | --no-db] TRACE|RECORDING\n"
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
  "      --views         also the simulated exits by MSR, I/O port, vector, CPUID leaf,\n"
  "                      address space (CR3) and vCPU (stored with the run)\n"
  "      --vcpu N        the views of vCPU N only\n"
  "      --interval N    the simulated exits per reason per N microseconds of each\n"
  "                      vCPU's simulated time (us, ms, s), or per N events (ev)\n"
  "      --db FILE       results database (default vmxsim.db)\n"
  "      --no-db         do not store the result\n"
  "  -q, --quiet         no progress indicator\n"
  "      --input-format F  what TRACE is: auto (default: from its content), vmxsim, or a\n"
  "                      recording: trace-cmd, xentrace, kvm-ftrace, perf-script.  A\n"
  "                      recording is imported (as 'vmxsim import' does, into a temporary\n"
  "                      trace that is removed afterwards) and replayed\n"
  "\n"
  "A recording is replayed directly: vmxsim --policy ept --cpu skylake-2019 kvm.dat\n"
  "imports it first.\n"
  "A trace imported from a KVM or Xen recording carries each exit's measured cost:\n"
  "the report then shows, per reason and breakdown row, the measured count and average\n"
  "beside the simulated ones and their ratio ('measured' in JSON; stored with the run).\n"
  "\n"
  "example: vmxsim --policy cr3cache --cpu core2-2008 --format json lat_ctx.bin\n"
  "more examples:\n"
  "  vmxsim --policy shadowcache --views lat_ctx.bin\n"
  "  vmxsim --policy ept --cpu myhost.json kvm.trace     # measured beside simulated\n";

struct run_opts {
  const char *policy, *cpu, *db, *trace, *input_format;
  char *sets[MAX_SETS];
  int nsets;
  int format;
  bool no_db, quiet, views;
  int vcpu;                   /* -1: all */
  struct interval_opt interval;
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
    { "quiet", no_argument, 0, 'q' },        { "help", no_argument, 0, 'h' },
    { "views", no_argument, 0, 'V' },        { "vcpu", required_argument, 0, 'v' },
    { "interval", required_argument, 0, 'i' }, { "input-format", required_argument, 0, 'F' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->vcpu = -1;
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
    case 'V': o->views = true; break;
    case 'F':
      if (option_input_format(optarg)) return EXIT_USAGE;
      o->input_format = optarg;
      break;
    case 'v': if (option_vcpu(optarg, &o->vcpu)) return EXIT_USAGE; o->views = true; break;
    case 'i': if (option_interval(optarg, &o->interval)) return EXIT_USAGE; o->views = true; break;
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
static int store_result(const struct run_opts *o, const struct run_output *out, const char *trace_file) {
  char err[1024];
  struct store_run run = store_run_of(out, trace_file);
  int64_t id = 0;
  int rc = store_save(o->db, &run, &id, err, sizeof err);
  if (rc) errorf("%s", err);
  else if (!o->quiet && isatty(2)) fprintf(stderr, "run %lld stored in %s\n", (long long)id, o->db);
  return rc;
}

/* The simulated time series (--interval), after the report. */
static void print_intervals(const struct run_output *out) {
  struct views_print p = { .ghz = out->rep.clock_ghz, .series = "simulated" };
  views_print_intervals(stdout, out->simulated, &p);
}

int cmd_run(int argc, char **argv) {
  struct run_opts o;
  int rc = parse_run_opts(argc, argv, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  char err[1024], *imported = NULL, *scratch = NULL;
  if ((rc = recording_import(o.trace, o.input_format, &imported, &scratch))) {
    recording_remove(imported, scratch);
    return rc;
  }
  struct run_spec spec = { .trace = imported ? imported : o.trace, .policy = o.policy, .cpu = o.cpu, .sets = o.sets, .nsets = o.nsets,
                           .progress = o.quiet || !isatty(2) ? NULL : show_progress, .views = o.views,
                           .one_vcpu = o.vcpu >= 0, .vcpu = o.vcpu >= 0 ? (unsigned)o.vcpu : 0,
                           .interval = o.interval.n, .interval_events = o.interval.events,
                           .interval_us = o.interval.us };
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
    if (imported) snprintf(out->rep.trace, sizeof out->rep.trace, "%s", o.trace);   /* name the recording */
    report_print(stdout, &out->rep, (enum report_format)o.format);
    if (o.interval.n && out->simulated && o.format == FORMAT_TABLE) print_intervals(out);
    fflush(stdout);   /* the result stays printed whatever happens to the database */
    if (!o.no_db) rc = store_result(&o, out, imported ? imported : o.trace);
  }
  run_output_free(out);
  free(out);
  recording_remove(imported, scratch);
  return rc;
}
