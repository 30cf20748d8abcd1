/* `vmxsim run`: replay a trace under a policy and print the report. */
#include "commands.h"
#include "compare.h"
#include "options.h"
#include "sim/replay/engine.h"
#include "sim/config/policy.h"
#include "sim/replay/runner.h"
#include "sim/replay/report.h"
#include "sim/store/known.h"
#include "sim/store/store.h"
#include "sim/base/util.h"
#include "sim/import/import.h"
#include "sim/present/views_print.h"
#include "sim/present/report_print.h"

#include <cJSON.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SETS 64
#define MAX_CONFIGS 64

static const char run_usage[] =
  "usage: vmxsim [run] [--policy P[,P...]] [--cpu C[,C...]] [--set KEY=VALUE]... [-j N]\n"
  "                    [--format table|json|csv] [--views] [--vcpu N] [--interval N[us|ms|s|ev]]\n"
  "                    [--input-format F] [--skip-bad] [--domain D] [--db FILE | --no-db]\n"
  "                    TRACE|RECORDING\n"
  "\n"
  "Replays TRACE (a binary trace: see 'vmxsim trace asm', 'vmxsim gen') under hypervisor\n"
  "policy P on CPU cost profile C and reports VM exits by reason, their cycles, and the\n"
  "split of time between guest and hypervisor.  TRACE may be gzip, xz or zstd compressed,\n"
  "or - for standard input ('vmxsim gen ... -o - | vmxsim -').  With several policies or\n"
  "profiles, every pair of them is replayed in one pass over the trace and stored, and\n"
  "the table sets them side by side against the first, as 'vmxsim compare' does.\n"
  "\n"
  "  -p, --policy P      preset name, or presets joined with '+' (later ones override):\n"
  "                      nocache, shadowcache, cr3cache, prevroots, ept; modifiers cr4mask,\n"
  "                      lazydr.  A path to a JSON file also works.  See 'vmxsim policies'.\n"
  "                      Default " POLICY_DEFAULT ", as for 'vmxsim repl'.  Several,\n"
  "                      comma-separated; a part holding '=' overrides a knob of the\n"
  "                      policy before it (shadowcache,cr3_target_count=2,cr3cache);\n"
  "                      an empty part, or one policy named twice, is refused\n"
  "  -c, --cpu C         CPU cost profile (default " PROFILE_DEFAULT "); see 'vmxsim cpus'; several,\n"
  "                      comma-separated, each once\n"
  "  -s, --set K=V       override one policy knob of every policy, e.g. --set cr3_target_count=2;\n"
  "                      numbers in decimal (masks also 0x hex); a later value of a knob wins\n"
  "  -j, --jobs N        share the replays of one pass among N threads (default 1)\n"
  "  -f, --format F      table (default; reads like xenalyze --summary), json, csv; several\n"
  "                      runs print one table beside the first, a JSON array, CSV rows\n"
  "                      led by policy,cpu\n"
  "      --reports       with several runs, each run's own report too (as one run prints it)\n"
  "      --views         also the simulated exits by MSR, I/O port, vector, CPUID leaf,\n"
  "                      address space (CR3) and vCPU (stored with the run)\n"
  "      --vcpu N        the views of vCPU N only\n"
  "      --interval N    the simulated exits per reason per N microseconds of each\n"
  "                      vCPU's simulated time (us, ms, s; at most 10^12 us), or per N\n"
  "                      events (ev)\n"
  "      --db FILE       results database (default vmxsim.db)\n"
  "      --no-db         do not store the result\n"
  "  -q, --quiet         no progress indicator\n"
  "      --input-format F  what TRACE is: auto (default: from its content), vmxsim, or a\n"
  "                      recording: trace-cmd, xentrace, kvm-ftrace, perf-script.  A\n"
  "                      recording in a file is imported as it is replayed (the trace\n"
  "                      'vmxsim import' would write, through a pipe; the file is read\n"
  "                      twice; the trace is kept in ~/.cache/vmxsim/recordings, and a\n"
  "                      replay of the same file reads it instead: see VMXSIM_CACHE_MB\n"
  "                      and VMXSIM_NO_CACHE in vmxsim(1)); a trace.dat, and one on\n"
  "                      standard input, are imported into a temporary trace first\n"
  RECORDING_SKIP_BAD_USAGE
  "      --domain D      a xentrace recording: replay Xen domain D's vCPUs only.  A\n"
  "                      recording of one guest domain replays that guest (dom0's\n"
  "                      exits apart: --domain 0 replays them); one of several guest\n"
  "                      domains needs --domain (the message lists them); a trace\n"
  "                      imported from one must hold one domain (import --domain D)\n"
  "\n"
  "A recording is replayed directly: vmxsim --policy ept --cpu skylake-2019 kvm.dat\n"
  "imports it as it replays it.\n"
  "A trace imported from a KVM or Xen recording carries each exit's measured cost:\n"
  "the report then shows, per reason and breakdown row, the measured count and average\n"
  "beside the simulated ones and their ratio ('measured' in JSON; stored with the run).\n"
  "\n"
  "example: vmxsim --policy cr3cache --cpu core2-2008 --format json lat_ctx.bin\n"
  "more examples:\n"
  "  vmxsim --policy nocache,shadowcache,cr3cache --cpu core2-2007,core2-2008 lat_ctx.bin\n"
  "  vmxsim --policy shadowcache --views lat_ctx.bin\n"
  "  vmxsim --policy ept --cpu myhost.json kvm.trace     # measured beside simulated\n";

struct run_opts {
  const char *policy, *cpu, *db, *trace;
  struct recording_opts rec;   /* --input-format, --skip-bad */
  char *sets[MAX_SETS];
  int nsets;
  unsigned jobs;
  int format;
  bool no_db, quiet, views;
  bool reports;                /* several runs: each one's report too, not only the comparison */
  int vcpu;                   /* -1: all */
  int domain;                 /* --domain: the Xen domain a recording is replayed for; -1: its one guest */
  struct interval_opt interval;
  /* the configurations: --policy and --cpu lists split, their product */
  char *lists;                  /* the lists' copies, parts separated in place */
  struct run_config configs[MAX_CONFIGS];
  char *config_sets[MAX_CONFIGS][MAX_SETS];
  unsigned nconfigs;
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
    { "interval", required_argument, 0, 'i' }, { "input-format", required_argument, 0, 'F' },
    { "jobs", required_argument, 0, 'j' },   { "reports", no_argument, 0, 'R' },
    { "skip-bad", no_argument, 0, 'B' },     { "domain", required_argument, 0, 'd' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->policy = POLICY_DEFAULT;
  o->vcpu = o->domain = -1;
  o->cpu = PROFILE_DEFAULT;
  o->db = "vmxsim.db";
  int c;
  optind = 1;
  opterr = 0;
  o->jobs = 1;
  uint64_t jobs;
  while ((c = getopt_long(argc, argv, "p:c:s:f:j:qh", longopts, NULL)) != -1) {
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
    case 'R': o->reports = true; break;
    case 'j':
      if (!parse_u64(optarg, &jobs) || jobs < 1 || jobs > 256) {
        errorf("--jobs %s: expected a number of threads, 1..256%s", optarg, parse_u64_hint(optarg));
        return EXIT_USAGE;
      }
      o->jobs = (unsigned)jobs;
      break;
    case 'V': o->views = true; break;
    case 'F':
      if (option_input_format(optarg)) return EXIT_USAGE;
      o->rec.input_format = optarg;
      break;
    case 'B': o->rec.skip_bad = true; break;
    case 'v': if (option_vcpu(optarg, &o->vcpu)) return EXIT_USAGE; o->views = true; break;
    case 'd': if (option_domain(optarg, &o->domain)) return EXIT_USAGE; break;
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
  o->trace = argv[optind];
  return EXIT_OK;
}

static int split_cpus(struct run_opts *o, char *list, const char **cpu, unsigned *ncpu) {
  for (char *t, *rest = list; (t = option_list_next(&rest));) {
    if (option_list_empty("--cpu", o->cpu, t)) return EXIT_USAGE;
    for (unsigned i = 0; i < *ncpu; i++)
      if (!strcmp(cpu[i], t)) {
        errorf("--cpu '%s': %s is named twice (the same runs twice)", o->cpu, t);
        return EXIT_USAGE;
      }
    if (*ncpu == MAX_CONFIGS) { errorf("--cpu: at most %d profiles", MAX_CONFIGS); return EXIT_USAGE; }
    cpu[(*ncpu)++] = t;
  }
  return EXIT_OK;
}

/* Two items of --policy that name one policy (the same spec with the same
** overrides, however spelled: policy_name) would be the same runs twice.
** An override policy_name refuses is left to the replay, which names it. */
static int refuse_repeated_policies(const struct run_opts *o, unsigned npol, unsigned ncpu) {
  char names[MAX_CONFIGS][sizeof ((struct policy *)0)->name];   /* 16 KiB */
  char err[1024];
  for (unsigned i = 0; i < npol; i++) {
    const struct run_config *c = &o->configs[i * ncpu];
    if (policy_name(c->policy, c->sets, c->nsets, names[i], sizeof names[i], err, sizeof err)) {
      names[i][0] = 0;
      continue;
    }
    for (unsigned j = 0; j < i; j++)
      if (!strcmp(names[j], names[i])) {
        errorf("--policy '%s': policy %s is named twice (the same runs twice)", o->policy, names[i]);
        return EXIT_USAGE;
      }
  }
  return EXIT_OK;
}

/* Splits the --policy and --cpu lists into their product (policies first): a
** --policy part holding '=' overrides a knob of the policy before it, after
** the --set overrides that apply to every policy. */
static int make_configs(struct run_opts *o) {
  size_t lp = strlen(o->policy) + 1;
  o->lists = xmalloc(lp + strlen(o->cpu) + 1);
  char *pol = memcpy(o->lists, o->policy, lp), *cpus = strcpy(o->lists + lp, o->cpu);
  const char *cpu[MAX_CONFIGS];
  unsigned ncpu = 0, npol = 0;
  int rc = split_cpus(o, cpus, cpu, &ncpu);
  if (rc) return rc;
  struct { const char *spec; unsigned nsets; char *sets[MAX_SETS]; } p[MAX_CONFIGS];
  for (char *t, *rest = pol; (t = option_list_next(&rest));) {
    if (option_list_empty("--policy", o->policy, t)) return EXIT_USAGE;
    if (strchr(t, '=')) {
      if (!npol) { errorf("--policy: '%s' overrides a knob, but no policy comes before it", t); return EXIT_USAGE; }
      if (o->nsets + p[npol - 1].nsets == MAX_SETS) { errorf("too many overrides for policy %s (max %d)", p[npol - 1].spec, MAX_SETS); return EXIT_USAGE; }
      p[npol - 1].sets[p[npol - 1].nsets++] = t;
      continue;
    }
    if (npol == MAX_CONFIGS) { errorf("--policy: at most %d policies", MAX_CONFIGS); return EXIT_USAGE; }
    p[npol].spec = t;
    p[npol++].nsets = 0;
  }
  if (npol * ncpu > MAX_CONFIGS) {
    errorf("%u policies on %u CPU profiles make %u runs; at most %d in one pass", npol, ncpu, npol * ncpu, MAX_CONFIGS);
    return EXIT_USAGE;
  }
  for (unsigned i = 0; i < npol; i++)
    for (unsigned k = 0; k < ncpu; k++) {
      unsigned n = o->nconfigs++;
      char **sets = o->config_sets[n];
      memcpy(sets, o->sets, (size_t)o->nsets * sizeof *sets);
      memcpy(sets + o->nsets, p[i].sets, p[i].nsets * sizeof *sets);
      o->configs[n] = (struct run_config){ p[i].spec, cpu[k], sets, o->nsets + (int)p[i].nsets };
    }
  return refuse_repeated_policies(o, npol, ncpu);
}

/* Stores the printed result unless --no-db; EXIT_DB (with a message) on failure. */
static int store_result(const struct run_opts *o, const struct run_output *out, const char *trace_file,
                        const struct file_seen *seen) {
  char err[1024];
  struct store_run run = store_run_of(out, trace_file);
  run.seen = seen;
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

/* Several runs in a table: side by side against the first, as `compare`
** prints stored runs (at most COMPARE_MAX_RUNS a table; more go in further
** tables, each against its first). */
static void print_side_by_side(const struct run_opts *o, const struct run_output *out) {
  struct compare_run runs[COMPARE_MAX_RUNS];
  for (unsigned first = 0; first < o->nconfigs; first += COMPARE_MAX_RUNS) {
    unsigned n = o->nconfigs - first < COMPARE_MAX_RUNS ? o->nconfigs - first : COMPARE_MAX_RUNS;
    for (unsigned i = 0; i < n; i++) runs[i] = (struct compare_run){ .id = 0, .rep = out[first + i].rep };
    if (first) fputc('\n', stdout);
    if (n > 1) compare_print(stdout, runs, n, FORMAT_TABLE);
    else report_print(stdout, &runs[0].rep, FORMAT_TABLE);
  }
  fprintf(stdout, "\n(%u runs; --reports prints each one's own report too, --format csv or json every figure)\n",
          o->nconfigs);
}

/* The reports: tables one after the other (each with its time series), a
** JSON array or CSV rows of several runs. */
static void print_reports(const struct run_opts *o, const struct run_output *out) {
  if (o->format == FORMAT_TABLE && o->nconfigs > 1 && !o->reports && !o->interval.n) {
    print_side_by_side(o, out);
    return;
  }
  if (o->format == FORMAT_TABLE || o->nconfigs == 1) {
    for (unsigned i = 0; i < o->nconfigs; i++) {
      if (i) fputc('\n', stdout);
      report_print(stdout, &out[i].rep, (enum report_format)o->format);
      if (o->interval.n && out[i].simulated && o->format == FORMAT_TABLE) print_intervals(&out[i]);
    }
    return;
  }
  struct report *reps = xmalloc(o->nconfigs * sizeof *reps);
  for (unsigned i = 0; i < o->nconfigs; i++) reps[i] = out[i].rep;
  report_print_runs(stdout, reps, o->nconfigs, (enum report_format)o->format);
  free(reps);
}

/* A stored run of a trace file the database remembers needs no hash of its own. */
static void look_up_trace(const struct run_opts *o, bool streamed, struct trace_known *k) {
  bool stored = !o->no_db && !streamed && strcmp(o->trace, "-") != 0;
  trace_known_look_up(stored ? o->db : NULL, o->trace, k);
}

/* A remembered hash holds for the content only if the file did not change
** while it was replayed; then every run gets it. */
static int give_known_hash(const struct trace_known *k, const char *trace, struct run_output *out, unsigned n) {
  if (!k->known) return EXIT_OK;
  char err[1100];
  if (trace_known_check(k, trace, err, sizeof err)) {
    errorf("%s", err);
    return EXIT_BADINPUT;
  }
  for (unsigned i = 0; i < n; i++) snprintf(out[i].rep.trace_hash, sizeof out[i].rep.trace_hash, "%s", k->hash);
  return EXIT_OK;
}

int cmd_run(int argc, char **argv) {
  struct run_opts *o = xcalloc(1, sizeof *o);
  int rc = parse_run_opts(argc, argv, o);
  if (!rc) rc = make_configs(o);
  char err[1024];
  struct import_stream *imported = NULL;
  char *spooled = NULL, *scratch = NULL;              /* a recording read from a pipe */
  if (!rc) recording_domain(o->domain, true);
  if (!rc && (rc = recording_stream(o->trace, &o->rec, &imported, &spooled, &scratch)))
    recording_remove(spooled, scratch);
  if (rc) {
    free(o->lists);
    free(o);
    return rc < 0 ? EXIT_OK : rc;
  }
  bool streamed = imported != NULL || spooled != NULL;
  if (!streamed && (rc = trace_domain_check(o->trace, o->domain))) {
    recording_stream_finish(imported, rc, NULL, err, sizeof err);
    recording_remove(spooled, scratch);
    free(o->lists);
    free(o);
    return rc;
  }
  struct trace_known known;
  look_up_trace(o, streamed, &known);
  struct run_set set = { .trace = spooled ? spooled : o->trace, .open = imported ? import_stream_open : NULL,
                         .open_arg = imported,
                         .configs = o->configs, .nconfigs = o->nconfigs,
                         .jobs = o->jobs, .hash_trace = !o->no_db && !known.known,
                         .progress = o->quiet || !isatty(2) ? NULL : show_progress,
                         .views = { o->views, o->vcpu >= 0, o->vcpu >= 0 ? (unsigned)o->vcpu : 0, o->interval.n,
                                    o->interval.events, o->interval.us } };
  struct run_output *out = xcalloc(o->nconfigs, sizeof *out);
  struct interrupt_catch ic;
  interrupt_catch(&ic, false);
  rc = run_traces(&set, out, err, sizeof err);
  interrupt_release(&ic);
  if (set.progress == show_progress) fprintf(stderr, "\r%60s\r", "");
  char why[1024];
  int irc = recording_stream_finish(imported, rc, rc ? NULL : out->rep.trace_hash, why, sizeof why);
  if ((rc || irc) && interrupt_requested()) {       /* the interrupt cut the import's stream short */
    errorf("interrupted; nothing stored");
    rc = EXIT_INTERRUPTED;
  } else {
    if (rc != EXIT_OK) errorf("%s", err);
    if (irc) errorf("%s", why);                     /* the import's own failure comes after */
    if (rc == EXIT_OK) rc = irc;
  }
  if (rc != EXIT_OK) {
    /* said above */
  } else if (out->interrupted || interrupt_requested()) {   /* also after the last progress point */
    errorf("interrupted after %" PRIu64 " of %" PRIu64 " events; nothing stored", out->rep.events, out->trace_events);
    rc = EXIT_INTERRUPTED;
  } else if ((rc = give_known_hash(&known, o->trace, out, o->nconfigs)) != EXIT_OK) {
    /* said there */
  } else {
    for (unsigned i = 0; i < o->nconfigs && streamed; i++)   /* name the recording */
      snprintf(out[i].rep.trace, sizeof out[i].rep.trace, "%s", o->trace);
    print_reports(o, out);
    fflush(stdout);   /* the results stay printed whatever happens to the database */
    /* a recording's hash is the stream's, never its file's; a hash the database gave is there already */
    const struct file_seen *remember = streamed ? NULL : trace_known_to_remember(&known);
    for (unsigned i = 0; i < o->nconfigs && !o->no_db && !rc; i++)
      rc = store_result(o, &out[i], spooled ? spooled : imported ? NULL : o->trace, remember);
  }
  trace_known_free(&known);
  for (unsigned i = 0; i < o->nconfigs; i++) run_output_free(&out[i]);
  free(out);
  recording_remove(spooled, scratch);
  free(o->lists);
  free(o);
  return rc;
}
