/* `vmxsim summary`: a recording's exits as the host measured them, the way
** xenalyze --summary and perf kvm stat report show them (sim/replay/views.h). */
#include "commands.h"
#include "options.h"
#include "sim/import/import.h"
#include "sim/replay/report.h"
#include "sim/trace/trace.h"
#include "sim/trace/trace_meta.h"
#include "sim/base/util.h"
#include "sim/replay/feeder.h"
#include "sim/replay/views.h"
#include "sim/present/views_print.h"
#include "sim/base/format.h"

#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char summary_usage[] =
  "usage: vmxsim summary [--domain D] [--vcpu N] [--interval N[us|ms|s|ev]]\n"
  "                      [--sort reason|count|time|avg] [--top N] [--units cycles|us]\n"
  "                      [--cpu-ghz G] [--format table|json|csv] [--input-format F] [--skip-bad]\n"
  "                      TRACE|RECORDING\n"
  "\n"
  "The exits of a host recording as the host measured them, not re-decided: per exit\n"
  "reason the count, measured time, share of the recording, average cycles and\n"
  "{p5|p50|p95}, maximum and standard deviation; under each reason its breakdown by\n"
  "control register, debug register, MSR, I/O port, vector and CPUID leaf; then the\n"
  "address spaces (CR3) and vCPUs the exits came from (with the host thread behind each\n"
  "vCPU of a KVM recording).  TRACE is a trace imported from a KVM or Xen recording\n"
  "('vmxsim import kvm-ftrace|xentrace|trace-cmd'), which keeps each exit's measured\n"
  "cycles, or the recording itself; the figures are those xenalyze --summary prints for\n"
  "the same recording (counts, averages, percentiles of the same even sample).\n"
  "A xentrace recording with the scheduler's records keeps each exit's domain and\n"
  "vCPU (rows d1v0, ...); by default the summary holds every domain's exits (dom0's\n"
  "too), and the share of time is of the vCPUs' recorded time (the recording's span\n"
  "times the vCPUs summarised), so no share passes 100%.\n"
  "\n"
  "  -d, --domain D      only Xen domain D's exits (a xentrace recording's)\n"
  "  -v, --vcpu N        only vCPU N's exits (default: all); with --domain, that\n"
  "                      domain's vCPU N, as xenalyze's per-vCPU section counts it\n"
  "                      (--domain is needed when the recording has several domains)\n"
  "  -i, --interval N    also a time series of exits per reason: N microseconds (us,\n"
  "                      ms, s suffixes; at most 10^12 us) of each vCPU's recorded time,\n"
  "                      or N events (ev)\n"
  "      --sort K        order of reasons and rows: reason (default), count, time, avg\n"
  "                      (no -s: it means --set in run)\n"
  "      --top N         rows of the CR3 and vCPU views (default 10; 0: all)\n"
  "      --units U       cycles (default), or us: perf kvm stat report's columns (Samples,\n"
  "                      Samples%, Time%, Min, Max and Avg time in microseconds)\n"
  "      --cpu-ghz G     cycles to seconds, above 0 and at most 10 (default: the\n"
  "                      recording's, else 2.4 as xenalyze)\n"
  "  -f, --format F      table (default), json, csv\n"
  "      --input-format F  auto (default: from the content), vmxsim, or a recording:\n"
  "                      trace-cmd, xentrace, kvm-ftrace, perf-script.  A recording in a\n"
  "                      file is read once, its records summarised as they are converted\n"
  RECORDING_SKIP_BAD_USAGE
  "\n"
  "examples:\n"
  "  vmxsim import xentrace xen.bin -o xen.trace && vmxsim summary xen.trace\n"
  "  vmxsim summary --sort time --vcpu 1 kvm.trace\n"
  "  vmxsim summary --domain 1 --vcpu 0 xen.bin   # d1v0, however it migrated\n"
  "  vmxsim summary kvm.dat                      # a trace-cmd recording, imported on the fly\n"
  "  vmxsim summary --interval 1ms --format csv kvm.trace > exits-per-ms.csv\n";

struct summary_opts {
  const char *trace;
  struct recording_opts rec;   /* --input-format, --skip-bad */
  int vcpu, domain, format;
  enum view_sort sort;
  unsigned top;
  double ghz;                  /* 0: from the trace */
  bool units_us;               /* --units us */
  struct interval_opt interval;
};

static int parse_summary_opts(int argc, char **argv, struct summary_opts *o) {
  static const struct option longopts[] = {
    { "vcpu", required_argument, 0, 'v' }, { "domain", required_argument, 0, 'd' },
    { "interval", required_argument, 0, 'i' },
    { "sort", required_argument, 0, 's' }, { "top", required_argument, 0, 'T' },
    { "cpu-ghz", required_argument, 0, 'g' }, { "format", required_argument, 0, 'f' },
    { "input-format", required_argument, 0, 'F' }, { "units", required_argument, 0, 'u' },
    { "skip-bad", no_argument, 0, 'B' },
    { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->vcpu = o->domain = -1;
  o->top = 10;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "v:d:i:f:h", longopts, NULL)) != -1) {
    int rc = EXIT_OK;
    switch (c) {
    case 'v': rc = option_vcpu(optarg, &o->vcpu); break;
    case 'd': rc = option_domain(optarg, &o->domain); break;
    case 'i': rc = option_interval(optarg, &o->interval); break;
    case 's': rc = option_sort(optarg, &o->sort); break;
    case 'T': rc = option_unsigned("--top", optarg, &o->top); break;
    case 'g': rc = option_ghz(optarg, &o->ghz); break;
    case 'f': rc = option_format(optarg, &o->format); break;
    case 'F': rc = option_input_format(optarg); o->rec.input_format = optarg; break;
    case 'B': o->rec.skip_bad = true; break;
    case 'u':
      if (strcmp(optarg, "us") && strcmp(optarg, "cycles")) {
        errorf("--units '%s': cycles (the default) or us (perf kvm stat's columns)", optarg);
        rc = EXIT_USAGE;
      }
      o->units_us = !strcmp(optarg, "us");
      break;
    case 'h': fputs(summary_usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim summary --help'", argv[optind - 1]);
      return EXIT_USAGE;
    }
    if (rc) return rc;
  }
  if (optind != argc - 1) {
    errorf(optind >= argc ? "summary: no trace given; see 'vmxsim summary --help'"
                          : "summary: one trace expected; see 'vmxsim summary --help'");
    return EXIT_USAGE;
  }
  o->trace = argv[optind];
  return EXIT_OK;
}

/* What the summary reads says of itself: the header's workload and the metadata. */
struct about {
  const char *path;
  char workload[TRACE_WORKLOAD_MAX + 1];
  char *meta;                  /* JSON text; NULL: none yet */
  unsigned nvcpus;             /* the header's vCPU count */
};

static int meta_number(const struct about *a, const char *key, const struct meta_range *want, double def,
                       double *out) {
  char err[512];
  int rc = trace_meta_number(a->meta, a->path, key, want, def, out, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

static int read_vcpu_names(const struct about *r, struct trace_vcpu_names *m) {
  char err[1024];
  int rc = trace_meta_vcpu_names(r->meta, r->path, m, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

/* "0, 1 and 2": the domains of the trace's vCPUs (want < 0), or domain want's vCPUs. */
static void list_ids(const struct trace_vcpu_names *m, int want, char *buf, size_t n) {
  bool seen[65536 / 64 * 64] = { false };
  unsigned count = 0;
  buf[0] = 0;
  for (int id = 0; id < 65536; id++) {
    for (unsigned v = 0; v < m->n && !seen[id]; v++)
      seen[id] = want < 0 ? m->domain[v] == id : m->domain[v] == want && m->vcpu[v] == id;
    if (!seen[id]) continue;
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%s%d", count++ ? ", " : "", id);
  }
}

/* The vCPUs the options select: keep[v]; *one: the one vCPU of --vcpu (-1: all
** kept); *shown: how many are kept (the shares' denominator counts them). */
static int select_vcpus(const struct summary_opts *o, const struct about *r, const struct trace_vcpu_names *m,
                        bool *keep, int *one, unsigned *shown) {
  char ids[512];
  if (!m->n) {
    if (o->domain >= 0) {
      errorf("%s: --domain %d: the trace names no domains (a xentrace recording with the scheduler's records does)",
             o->trace, o->domain);
      return EXIT_USAGE;
    }
    unsigned nv = r->nvcpus ? r->nvcpus : 1;
    if (o->vcpu >= (int)nv) {
      if (nv == 1) errorf("%s: --vcpu %d: the trace has one vCPU, vCPU 0", o->trace, o->vcpu);
      else errorf("%s: --vcpu %d: the trace has vCPUs 0 to %u", o->trace, o->vcpu, nv - 1);
      return EXIT_USAGE;
    }
    for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) keep[v] = o->vcpu < 0 || (int)v == o->vcpu;
    *one = o->vcpu;
    *shown = o->vcpu >= 0 ? 1 : (r->nvcpus ? r->nvcpus : 1);
    return EXIT_OK;
  }
  int dom = o->domain;
  bool one_domain = true;
  for (unsigned v = 1; v < m->n; v++) one_domain &= m->domain[v] == m->domain[0];
  list_ids(m, -1, ids, sizeof ids);
  if (dom < 0 && o->vcpu >= 0 && !one_domain) {
    errorf("%s: --vcpu %d: the trace holds domains %s: give --domain D too", o->trace, o->vcpu, ids);
    return EXIT_USAGE;
  }
  if (dom < 0 && o->vcpu >= 0) dom = m->domain[0];
  *one = -1;
  *shown = 0;
  for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) {
    keep[v] = v < m->n && (dom < 0 || m->domain[v] == dom) && (o->vcpu < 0 || m->vcpu[v] == o->vcpu);
    if (keep[v]) { (*shown)++; *one = (int)v; }
  }
  char vids[512];
  list_ids(m, dom, vids, sizeof vids);
  if (!vids[0]) {
    errorf("%s: --domain %d: the trace holds domains %s", o->trace, dom, ids);
    return EXIT_USAGE;
  }
  if (!*shown) {                 /* no such vCPU in the domain: said, as without domains */
    errorf("%s: --vcpu %d: domain %d has vCPUs %s", o->trace, o->vcpu, dom, vids);
    return EXIT_USAGE;
  }
  if (o->vcpu < 0) *one = -1;
  return EXIT_OK;
}

#define SUMMARY_BLOCK 8192   /* records filtered at a time (--domain) */

/* The records of the kept vCPUs (a domain's), fed to the views. */
static void feed_kept(struct views *w, const bool *keep, const struct trace_event *evs, size_t n,
                      struct trace_event *buf) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (evs[i].vcpu >= TRACE_VCPU_MAX || keep[evs[i].vcpu]) buf[k++] = evs[i];
  views_feed_block(&w, 1, buf, k);
}

/* A trace with no measured exit: why, as far as its metadata tells. */
static int no_exits(const struct summary_opts *o, const struct about *r) {
  double sched;
  if (meta_number(r, "scheduler_records", &trace_meta_span_cycles, 0, &sched)) return EXIT_BADINPUT;
  if (sched > 0)
    errorf("%s: no measured exits: the recording holds %.0f scheduler records and no HVM exit records: was it "
           "taken with the HVM class enabled (xentrace -e 0x000af000: the scheduler's and HVM classes)?",
           o->trace, sched);
  else
    errorf("%s: no measured exits: only traces imported from host recordings (vmxsim import kvm-ftrace, "
           "xentrace, trace-cmd) carry them; 'vmxsim --policy P %s' simulates exits", o->trace, o->trace);
  return EXIT_BADINPUT;
}

/* Before the records: the clock (given, or the metadata's, else xenalyze's
** 2.4 GHz), the time series' width, and the one vCPU kept (-1: all). */
static int views_begin(const struct summary_opts *o, const struct about *a, int one, struct views *w,
                       struct views_print *p) {
  p->ghz = o->ghz;
  if (!o->ghz && meta_number(a, "cpu_ghz", &trace_meta_cpu_ghz, IMPORT_GHZ_DEFAULT, &p->ghz)) return EXIT_BADINPUT;
  uint64_t width = o->interval.events ? o->interval.n : views_interval_cycles(o->interval.us, p->ghz);
  if (o->interval.n && width == 0) {
    errorf("--interval %.0fus at %g GHz is less than one cycle: give a longer interval", o->interval.us, p->ghz);
    return EXIT_USAGE;
  }
  views_init(w, one, width, o->interval.events);
  return EXIT_OK;
}

/* After the records: what only the end says (the recording's span), and the
** clock of a recording read in one pass, whose metadata came last.  shown:
** the vCPUs summarised, whose recorded time the shares are of. */
static int views_end(const struct summary_opts *o, const struct about *a, const struct views *w,
                     const struct trace_vcpu_names *m, unsigned shown, struct views_print *p) {
  if (!views_any(w) && o->vcpu < 0 && o->domain < 0) return no_exits(o, a);
  double ghz = p->ghz;
  if (!o->ghz && meta_number(a, "cpu_ghz", &trace_meta_cpu_ghz, IMPORT_GHZ_DEFAULT, &ghz)) return EXIT_BADINPUT;
  if (ghz != p->ghz && o->interval.n && !o->interval.events) {
    errorf("%s: internal error: the recording's clock (%g GHz) became known after its time series was cut at "
           "%g GHz", o->trace, ghz, p->ghz);
    return EXIT_INTERNAL;
  }
  p->ghz = ghz;
  /* xenalyze's share of time is of the recording's whole span, when the importer kept it */
  double span;                       /* -1: absent (the range starts at 0) */
  if (meta_number(a, "span_cycles", &trace_meta_span_cycles, -1, &span)) return EXIT_BADINPUT;
  p->total_cycles = (span >= 0 ? (uint64_t)span : views_elapsed(w)) * shown;
  p->sort = o->sort;
  p->top = o->top;
  p->units_us = o->units_us;
  p->vcpu_names = m->n ? m->names : NULL;
  p->nvcpu_names = m->n;
  return EXIT_OK;
}

/* A row's name as printed: a vCPU's as the recording names it (d1v0). */
static const char *row_name(const struct view_stat *s, const struct views_print *p) {
  return s->dim == VD_VCPU && p->vcpu_names && s->key < p->nvcpu_names ? p->vcpu_names[s->key] : s->name;
}

/* A vCPU whose exits took longer than the recording: the metadata's span is not this
** trace's (edited, or another recording's). */
static int check_span(const struct summary_opts *o, const struct views *w, const struct views_print *p,
                      unsigned shown) {
  struct view_stat *s;
  unsigned n = views_stats(w, VD_VCPU, false, SORT_REASON, &s);
  uint64_t span = shown ? p->total_cycles / shown : 0;
  int rc = EXIT_OK;
  for (unsigned i = 0; i < n && !rc; i++)
    if (s[i].cycles > span) {
      errorf("%s: metadata \"span_cycles\" %" PRIu64 " is shorter than the measured exits of %s (%" PRIu64
             " cycles): not this recording's span", o->trace, span, row_name(&s[i], p), s[i].cycles);
      rc = EXIT_BADINPUT;
    }
  free(s);
  return rc;
}

/* A share of time above 100% means time counted twice: a bug, never printed. */
static int check_shares(const struct views *w, const struct views_print *p) {
  static const unsigned dims[] = { VD_REASON, VD_VCPU };
  int rc = EXIT_OK;
  for (unsigned d = 0; d < 2 && !rc && p->total_cycles; d++) {
    struct view_stat *s;
    unsigned n = views_stats(w, dims[d], false, SORT_REASON, &s);
    for (unsigned i = 0; i < n && !rc; i++)
      if (s[i].cycles > p->total_cycles) {
        errorf("internal error: %s takes %.2f%% of the vCPUs' recorded time (%" PRIu64 " of %" PRIu64
               " cycles): time counted twice", row_name(&s[i], p),
               100.0 * (double)s[i].cycles / (double)p->total_cycles, s[i].cycles, p->total_cycles);
        rc = EXIT_INTERNAL;
      }
    free(s);
  }
  return rc;
}

/* The host thread behind each vCPU, as the importer of a KVM recording kept it
** (metadata "vcpu_threads"), for the vCPU rows: "vcpu 0  CPU 0/KVM, pid 4100,
** kvm vcpu 0".  Only vcpu (the --vcpu one when given). */
static void print_vcpu_threads(const struct summary_opts *o, const cJSON *threads) {
  const cJSON *t;
  bool any = false;
  cJSON_ArrayForEach(t, threads) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "vcpu"), *pid = cJSON_GetObjectItemCaseSensitive(t, "pid");
    const cJSON *comm = cJSON_GetObjectItemCaseSensitive(t, "comm"), *id = cJSON_GetObjectItemCaseSensitive(t, "kvm_vcpu");
    if (!cJSON_IsNumber(v) || !cJSON_IsNumber(pid) || (o->vcpu >= 0 && v->valuedouble != o->vcpu)) continue;
    if (!any) printf("\nvCPUs: the recording's threads\n");
    any = true;
    printf(" vcpu %-4.0f %s, pid %.0f", v->valuedouble, cJSON_IsString(comm) ? comm->valuestring : "?", pid->valuedouble);
    if (cJSON_IsNumber(id)) printf(", kvm vcpu %.0f", id->valuedouble);
    putchar('\n');
  }
}

static void print_summary(const struct summary_opts *o, const struct about *a, const struct views *w,
                          struct views_print *p, unsigned shown) {
  uint64_t span = shown ? p->total_cycles / shown : p->total_cycles;
  cJSON *meta = cJSON_Parse(a->meta ? a->meta : "");
  cJSON *threads = cJSON_GetObjectItemCaseSensitive(meta, "vcpu_threads");
  if (!cJSON_IsArray(threads)) threads = NULL;
  if (o->format == FORMAT_JSON) {
    cJSON *j = views_json(w, p);
    if (threads) cJSON_AddItemToObject(j, "vcpu_threads", cJSON_Duplicate(threads, true));
    cJSON_AddStringToObject(j, "trace", o->trace);
    cJSON_AddStringToObject(j, "workload", a->workload);
    cJSON_AddNumberToObject(j, "cpu_ghz", p->ghz);
    cJSON_AddNumberToObject(j, "recorded_cycles", (double)span);
    cJSON_AddNumberToObject(j, "vcpus_summarised", shown);
    if (o->domain >= 0) cJSON_AddNumberToObject(j, "domain", o->domain);
    if (o->vcpu >= 0) cJSON_AddNumberToObject(j, "vcpu", o->vcpu);
    char *s = cJSON_Print(j);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(j);
  } else if (o->format == FORMAT_CSV) {
    printf("source,view,name,parent,count,cycles,avg,min,p5,p50,p95,max,stddev\n");
    views_print_csv(stdout, w, p, "measured");
  } else {
    char title[512], who[48] = "all vCPUs", times[32] = "";
    if (o->vcpu >= 0 && o->domain >= 0) snprintf(who, sizeof who, "vCPU d%dv%d", o->domain, o->vcpu);
    else if (o->vcpu >= 0) snprintf(who, sizeof who, "vCPU %d", o->vcpu);
    else if (o->domain >= 0) snprintf(who, sizeof who, "domain %d", o->domain);
    if (shown > 1) snprintf(times, sizeof times, " x %u vCPUs", shown);
    snprintf(title, sizeof title, "%s (%s): %" PRIu64 " measured VM exits of %s; %" PRIu64 " cycles recorded%s "
             "(%.6f s at %.2f GHz)", o->trace, a->workload[0] ? a->workload : "-", w->exits, who,
             span, times, (double)span / (p->ghz * 1e9), p->ghz);
    p->title = title;
    views_print_table(stdout, w, p);
    p->title = NULL;
    print_vcpu_threads(o, threads);
  }
  cJSON_Delete(meta);
}

/* ---- a recording read in one pass: its records go to the views as they are
** converted, a block at a time, fed on a thread of their own when the machine
** has a processor to spare (feeder.h) ---- */

#define ONE_PASS_BLOCK 4096

struct one_pass {
  struct views *w;
  struct feeder *f;            /* NULL: fed on this thread */
  struct trace_event *buf;     /* the block being filled: the feeder's next (feeder_reserve), or own */
  size_t n;
};

static void one_pass_flush(struct one_pass *op) {
  if (op->f) {
    feeder_commit(op->f, op->n);
    op->buf = feeder_reserve(op->f, ONE_PASS_BLOCK);
  } else {
    views_feed_block(&op->w, 1, op->buf, op->n);
  }
  op->n = 0;
}

static int one_pass_emit(void *ctx, const struct trace_event *ev) {
  struct one_pass *op = ctx;
  op->buf[op->n++] = *ev;
  if (op->n == ONE_PASS_BLOCK) one_pass_flush(op);
  return 0;
}

/* ---- the lean pass of a xentrace recording (recording_notes): the measured
** exits come as blocks of 32-byte notes (views.h, struct exit_note), none of
** the records around them; the views' thread reads them (views_add_notes:
** the breakdown, the vCPU's CR3 and whether the options keep it) ---- */

struct lean {
  struct views *w;
  struct feeder *f;            /* NULL: read on this thread */
  struct exit_note_reader reader;
  struct exit_note *own;       /* without a feeder: the one block */
  bool reserved;               /* a block of the feeder's is being written */
};

static struct exit_note *lean_notes(void *ctx, struct exit_note *full, size_t n) {
  struct lean *l = ctx;
  if (!l->f) {
    if (n) views_add_notes(l->w, &l->reader, full, n);
    return l->own;
  }
  if (l->reserved) feeder_commit_notes(l->f, n);
  l->reserved = true;
  return feeder_reserve_notes(l->f, IMPORT_NOTES_BLOCK);
}

/* IMPORT_NOT_LEAN: the views are left as views_begin made them; -1: no
** xentrace recording; otherwise recording_notes's result. */
static int lean_pass(const struct summary_opts *o, struct about *a, struct views *w, bool scan) {
  struct lean lean = { .w = w, .f = feeder_start(NULL, 0) }, *l = &lean;
  exit_note_reader_init(&l->reader, o->domain, o->vcpu);
  if (l->f) feeder_set_notes(l->f, w, &l->reader);
  else l->own = xmalloc(IMPORT_NOTES_BLOCK * sizeof *l->own);
  char *meta = NULL;
  int rc = recording_notes(o->trace, &o->rec, lean_notes, scan, l, a->workload, sizeof a->workload, &meta,
                           &a->nvcpus);
  if (l->f) {
    if (l->reserved) feeder_commit_notes(l->f, 0);   /* the block reserved last */
    feeder_wait(l->f);
    feeder_stop(l->f);
  }
  free(l->own);
  if (rc == 0) {
    a->meta = meta;
    return 0;
  }
  free(meta);
  if (rc == IMPORT_NOT_LEAN || rc < 0) {       /* the exits noted are dropped */
    int one = w->vcpu;
    uint64_t width = w->interval;
    bool events = w->interval_events;
    views_free(w);
    views_init(w, one, width, events);
  }
  return rc;
}

/* -1: not a recording read in one pass; otherwise the result.  *shown: the
** vCPUs summarised. */
static int summary_one_pass(const struct summary_opts *o, struct about *a, struct views *w, struct views_print *p,
                            struct trace_vcpu_names *m, unsigned *shown) {
  /* A time series in events counts the @init records, which one pass gives
  ** at each vCPU's first record rather than all first: read such a summary
  ** as a trace. */
  if (o->interval.n && o->interval.events) return -1;
  int rc = views_begin(o, a, -1, w, p);
  if (rc) return rc;
  /* xentrace: the lean pass, which knows each exit's domain and vCPU as it
  ** notes it (lean_kept); the choice of vCPUs is checked at the end */
  rc = lean_pass(o, a, w, false);                /* one pass, for a recording of exits alone */
  if (rc == IMPORT_NOT_LEAN) rc = lean_pass(o, a, w, true);
  if (rc > 0) return rc;
  if (rc == 0) {
    bool keep[TRACE_VCPU_MAX];
    int one;
    if ((rc = read_vcpu_names(a, m)) || (rc = select_vcpus(o, a, m, keep, &one, shown))) return rc;
    return views_end(o, a, w, m, *shown, p);
  }
  /* Other recordings: --domain and --vcpu choose vCPUs by the names the
  ** metadata gives at the end: read such a summary as a trace. */
  if (o->domain >= 0 || o->vcpu >= 0) return -1;
  struct one_pass op = { .w = w };
  op.f = feeder_start(&op.w, 1);
  op.buf = op.f ? feeder_reserve(op.f, ONE_PASS_BLOCK) : xmalloc(ONE_PASS_BLOCK * sizeof *op.buf);
  rc = recording_feed(o->trace, &o->rec, one_pass_emit, &op, a->workload, sizeof a->workload, &a->meta, &a->nvcpus);
  if (op.f) {
    feeder_commit(op.f, rc <= 0 ? op.n : 0);   /* the last block (the reserved one is handed on either way) */
    feeder_wait(op.f);
    feeder_stop(op.f);
  } else {
    if (rc <= 0) views_feed_block(&op.w, 1, op.buf, op.n);
    free(op.buf);
  }
  if (rc) return rc;
  bool keep[TRACE_VCPU_MAX];
  int one;
  if ((rc = read_vcpu_names(a, m)) || (rc = select_vcpus(o, a, m, keep, &one, shown))) return rc;
  return views_end(o, a, w, m, *shown, p);
}

/* The kept vCPUs' records of a trace, a block at a time, to the views. */
static int feed_trace(const struct summary_opts *o, struct trace_reader *r, struct views *w, const bool *keep) {
  bool all = o->domain < 0 || o->vcpu >= 0;
  struct trace_event *buf = all ? NULL : xmalloc(SUMMARY_BLOCK * sizeof *buf);
  const struct trace_event *evs;
  size_t n;
  while ((n = trace_next_block(r, &evs, all ? SIZE_MAX : SUMMARY_BLOCK)) > 0) {
    if (all) views_feed_block(&w, 1, evs, n);
    else feed_kept(w, keep, evs, n, buf);
  }
  free(buf);
  if (trace_failed(r)) {
    errorf("%s", r->err);
    return EXIT_BADINPUT;
  }
  return EXIT_OK;
}

/* A trace, or a recording converted into one as it is read (recording_stream). */
static int summary_of_trace(const struct summary_opts *o, struct about *a, struct views *w, struct views_print *p,
                            struct trace_vcpu_names *m, unsigned *shown) {
  struct import_stream *imported = NULL;
  char *spooled = NULL, *scratch = NULL;              /* a recording read from a pipe */
  int rc = recording_stream(o->trace, &o->rec, &imported, &spooled, &scratch);
  if (rc) {
    recording_remove(spooled, scratch);
    return rc;
  }
  struct trace_reader r;
  if ((rc = imported ? import_stream_open(&r, imported) : trace_open(&r, spooled ? spooled : o->trace))) {
    errorf("%s", r.err);
    recording_stream_finish(imported, rc, NULL, r.err, sizeof r.err);   /* the open's message is the one to see */
    recording_remove(spooled, scratch);
    return rc;
  }
  snprintf(a->workload, sizeof a->workload, "%s", r.hdr.workload);
  a->meta = r.hdr.metadata ? xstrdup(r.hdr.metadata) : NULL;
  a->nvcpus = r.hdr.vcpu_count;
  a->path = r.path;
  bool keep[TRACE_VCPU_MAX];
  int one;
  if (!(rc = read_vcpu_names(a, m)) && !(rc = select_vcpus(o, a, m, keep, &one, shown)) &&
      !(rc = views_begin(o, a, one, w, p)) && !(rc = feed_trace(o, &r, w, keep)))
    rc = views_end(o, a, w, m, *shown, p);
  a->path = o->trace;
  char read_hash[HASH_HEX_LEN + 1] = "";
  if (!rc && !trace_hash_hex(&r, read_hash)) read_hash[0] = 0;
  trace_close(&r);                    /* before the import's end: it may be waiting for the reader */
  char err[1024];
  int irc = recording_stream_finish(imported, rc, read_hash, err, sizeof err);
  if (irc) errorf("%s", err);
  recording_remove(spooled, scratch);
  return rc ? rc : irc;
}

int cmd_summary(int argc, char **argv) {
  struct summary_opts o;
  int rc = parse_summary_opts(argc, argv, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  struct about a = { .path = o.trace };
  struct views *w = xcalloc(1, sizeof *w);     /* views_free of one never initialised */
  struct trace_vcpu_names *m = xcalloc(1, sizeof *m);
  struct views_print p = { 0 };
  unsigned shown = 1;
  rc = summary_one_pass(&o, &a, w, &p, m, &shown);
  if (rc < 0) rc = summary_of_trace(&o, &a, w, &p, m, &shown);
  if (!rc) views_percentiles(w);
  if (!rc) rc = check_span(&o, w, &p, shown);
  if (!rc) rc = check_shares(w, &p);
  if (!rc) print_summary(&o, &a, w, &p, shown);
  views_free(w);
  free(w);
  free(m);
  free(a.meta);
  return rc;
}
