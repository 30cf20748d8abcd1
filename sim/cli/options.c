/* Option values several commands share (options.h). */
#include "options.h"
#include "sim/base/format.h"
#include "sim/replay/report.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/base/outfile.h"
#include "sim/import/import.h"
#include "stream_memo.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int option_vcpu(const char *s, int *vcpu) {
  uint64_t v;
  if (!parse_u64(s, &v) || v >= TRACE_VCPU_MAX) {
    errorf("--vcpu %s: expected a vCPU number 0..%d%s", s, TRACE_VCPU_MAX - 1, parse_u64_hint(s));
    return EXIT_USAGE;
  }
  *vcpu = (int)v;
  return EXIT_OK;
}

int option_domain(const char *s, int *domain) {
  uint64_t v;
  if (!parse_u64(s, &v) || v > 65535) {
    errorf("--domain %s: expected a Xen domain id 0..65535%s", s, parse_u64_hint(s));
    return EXIT_USAGE;
  }
  *domain = (int)v;
  return EXIT_OK;
}

int option_interval(const char *s, struct interval_opt *o) {
  static const struct { const char *suffix; double us; } units[] = {
    { "us", 1 }, { "ms", 1e3 }, { "s", 1e6 }, { "ev", 0 }, { "", 1 } };
  char num[32];
  size_t n = strspn(s, "0123456789");
  uint64_t v;
  snprintf(num, sizeof num, "%.*s", (int)(n < 31 ? n : 31), s);
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    if (strcmp(s + n, units[i].suffix) != 0) continue;
    if (!parse_u64(num, &v) || v == 0) break;
    /* A width of time becomes cycles at up to 10 GHz (CLOCK_GHZ_MAX): 10^12 us is 10^16 cycles, below 2^63 */
    if (units[i].us != 0 && (double)v * units[i].us > INTERVAL_US_MAX) {
      errorf("--interval %s: more than %.0f us (11.6 days): expected 1us..1000000s, or N ev", s, INTERVAL_US_MAX);
      return EXIT_USAGE;
    }
    o->events = units[i].us == 0;
    o->n = v;
    o->us = (double)v * units[i].us;
    return EXIT_OK;
  }
  errorf("--interval %s: expected a positive number with us (default), ms, s or ev (events)%s", s, parse_u64_hint(num));
  return EXIT_USAGE;
}

char *option_list_next(char **rest) {
  char *item = *rest, *comma = item ? strchr(item, ',') : NULL;
  if (comma) *comma = 0;
  *rest = comma ? comma + 1 : NULL;
  return item;
}

int option_list_empty(const char *opt, const char *list, const char *item) {
  if (*item) return EXIT_OK;
  errorf("%s '%s': an empty item (separate the names with single commas, e.g. %s)", opt, list,
         strcmp(opt, "--cpu") ? "shadowcache,ept" : "core2-2007,skylake-2019");
  return EXIT_USAGE;
}

int option_sort(const char *s, enum view_sort *sort) {
  int k = view_sort_from_name(s);
  if (k < 0) {
    errorf("--sort %s: expected reason, count, time or avg", s);
    return EXIT_USAGE;
  }
  *sort = (enum view_sort)k;
  return EXIT_OK;
}

int option_unsigned(const char *name, const char *s, unsigned *v) {
  uint64_t u;
  if (!parse_u64(s, &u) || u > 1000000) {
    errorf("%s %s: expected a number 0..1000000%s", name, s, parse_u64_hint(s));
    return EXIT_USAGE;
  }
  *v = (unsigned)u;
  return EXIT_OK;
}

int option_ghz(const char *s, double *ghz) {
  if (!parse_double(s, ghz) || !clock_ghz_in_range(*ghz)) {
    errorf("--cpu-ghz %s: expected a number of GHz above 0 and at most %g", s, CLOCK_GHZ_MAX);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

int option_format(const char *s, int *format) {
  if ((*format = report_format_from_name(s)) < 0) {
    errorf("--format %s: expected table, json or csv", s);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

int option_input_format(const char *s) {
  if (strcmp(s, "auto") && strcmp(s, "vmxsim") && !import_format_find(s)) {
    char names[256];
    import_format_names(names, sizeof names, ", ", " or ");
    errorf("--input-format %s: expected auto, vmxsim, %s", s, names);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

/* The recording format of path as the options say (NULL: a vmxsim trace). */
/* The recording format of path (*f NULL: a vmxsim trace).  EXIT_BADINPUT,
** with detection's message printed, when the content is neither. */
static int recording_format(const char *path, const char *input_format, const struct import_format **f) {
  char err[1024];
  *f = NULL;
  if (input_format && strcmp(input_format, "auto")) {
    if (strcmp(input_format, "vmxsim")) *f = import_format_find(input_format);
    return EXIT_OK;
  }
  struct stat st;
  if (strcmp(path, "-") && stat(path, &st) != 0) return EXIT_OK;   /* no such file: the trace reader says so, or
                                                                      runs and compare match the name */
  *f = import_detect(path, err, sizeof err);
  if (*f || !err[0]) return EXIT_OK;
  errorf("%s", err);
  return EXIT_BADINPUT;
}

/* The Xen domain a replay of a recording takes (recording_domain). */
static struct { bool one, required; uint16_t domain; } replay_domain;

/* "0, 1 and 2" of the domains an imported xentrace trace names (metadata "domains"), and how many. */
static unsigned trace_domains(const char *meta, int *only, char *list, size_t n) {
  cJSON *m = meta && meta[0] ? cJSON_Parse(meta) : NULL;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(m, "domains"), *e;
  if (!cJSON_IsArray(a)) a = NULL;
  unsigned count = 0;
  list[0] = 0;
  cJSON_ArrayForEach(e, a) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "domain");
    if (!cJSON_IsNumber(d)) continue;
    size_t used = strlen(list);
    snprintf(list + used, n - used, "%s%.0f", count++ ? ", " : "", d->valuedouble);
    *only = (int)d->valuedouble;
  }
  cJSON_Delete(m);
  return count;
}

int trace_domain_check(const char *trace, int domain) {
  struct stat st;                                   /* a pipe or FIFO can be read once: the replay's */
  if (!strcmp(trace, "-") || stat(trace, &st) != 0 || !S_ISREG(st.st_mode)) return EXIT_OK;
  struct trace_reader r;
  if (trace_open(&r, trace)) return EXIT_OK;               /* the replay says why */
  char list[512];
  int only = -1;
  unsigned n = trace_domains(r.hdr.metadata, &only, list, sizeof list);
  trace_close(&r);
  if (domain >= 0 && n == 0) {
    errorf("%s: --domain %d: the trace names no domains (a xentrace recording with the scheduler's records, "
           "imported, does)", trace, domain);
    return EXIT_USAGE;
  }
  if (n > 1 || (domain >= 0 && only != domain)) {
    errorf("%s: the trace holds domains %s: a replay takes one: import the recording again with "
           "'vmxsim import xentrace --domain D', or replay the recording itself with --domain D", trace, list);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

void recording_domain(int domain, bool required) {
  replay_domain.one = domain >= 0;
  replay_domain.domain = domain >= 0 ? (uint16_t)domain : 0;
  replay_domain.required = required;
}

/* The job of a recording imported to be replayed: the metadata's command says so. */
static struct import_job recording_job(const struct import_format *f, const char *path, bool skip_bad, char *cmd,
                                       size_t n) {
  snprintf(cmd, n, "vmxsim (%s %s%s, imported on the fly)", f->name, path, skip_bad ? " --skip-bad" : "");
  return (struct import_job){ .format = f, .input = path, .command = cmd,
                              .opt = { .cpu_ghz = IMPORT_GHZ_DEFAULT, .paging = PAGING_64, .skip_bad = skip_bad,
                                       .one_domain = replay_domain.one, .domain = replay_domain.domain,
                                       .domain_required = replay_domain.required } };
}

/* The import's failure; one at a line ("IN:12: ...") or byte ("IN: byte 96: ...")
** of the recording says how to go on past such lines. */
static void say_import_failed(const char *path, const char *err, bool skip_bad) {
  size_t n = strlen(path);
  bool at_unit = strncmp(err, path, n) == 0 && err[n] == ':' &&
                 (isdigit((unsigned char)err[n + 1]) || strncmp(err + n + 1, " byte ", 6) == 0);
  if (at_unit && !skip_bad) errorf("%s (--skip-bad counts and skips such input)", err);
  else errorf("%s", err);
}

/* "skipped N unparseable lines of IN, first: ..." from an imported trace's
** metadata (the importer's counts: sim/import/import.c), when it skipped any. */
static void say_skipped(const char *metadata) {
  cJSON *m = cJSON_Parse(metadata ? metadata : "");
  const cJSON *units = cJSON_GetObjectItemCaseSensitive(m, "lines");
  bool lines = units != NULL;
  if (!units) units = cJSON_GetObjectItemCaseSensitive(m, "records");
  const cJSON *bad = cJSON_GetObjectItemCaseSensitive(units, "unparseable");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(m, "input"), *first = cJSON_GetObjectItemCaseSensitive(m, "unparseable");
  const char *input = cJSON_IsString(in) ? in->valuestring : "the recording";
  if (cJSON_IsNumber(bad) && bad->valuedouble > 0) {
    errorf("skipped %.0f unparseable %s of %s (--skip-bad)%s", bad->valuedouble, lines ? "lines" : "records", input,
           cJSON_GetArraySize(first) ? ", first:" : "");
    const cJSON *b;
    cJSON_ArrayForEach(b, first) {
      const cJSON *at = cJSON_GetObjectItemCaseSensitive(b, lines ? "line" : "byte");
      const cJSON *why = cJSON_GetObjectItemCaseSensitive(b, "why"), *text = cJSON_GetObjectItemCaseSensitive(b, "text");
      double where = cJSON_IsNumber(at) ? at->valuedouble : 0;
      const char *w = cJSON_IsString(why) ? why->valuestring : "";
      if (lines) fprintf(stderr, "  %s:%.0f: %s: '%s'\n", input, where, w, cJSON_IsString(text) ? text->valuestring : "");
      else fprintf(stderr, "  %s: byte %.0f: %s\n", input, where, w);
    }
  }
  cJSON_Delete(m);
}

/* say_skipped of the trace file an import wrote. */
static void say_skipped_in(const char *trace) {
  struct trace_reader r;
  if (trace_open(&r, trace) == 0) say_skipped(r.hdr.metadata);
  trace_close(&r);
}

int recording_import(const char *path, const struct recording_opts *ro, char **trace, char **dir) {
  char err[1024];
  *dir = NULL;
  *trace = NULL;
  const struct import_format *f;
  int rc = recording_format(path, ro->input_format, &f);
  if (rc || !f) return rc;                    /* a vmxsim trace, or neither */
  if ((rc = outfile_tmpdir("vmxsim-import", dir, err, sizeof err))) { errorf("%s", err); return rc; }
  size_t n = strlen(*dir) + 16;
  *trace = xmalloc(n);
  snprintf(*trace, n, "%s/import.bin", *dir);
  char cmd[512];
  struct import_job job = recording_job(f, path, ro->skip_bad, cmd, sizeof cmd);
  job.output = *trace;
  struct import im;
  rc = import_file(&job, &im, err, sizeof err);
  import_free(&im);
  if (rc) say_import_failed(strcmp(path, "-") ? path : "<stdin>", err, ro->skip_bad);
  else say_skipped_in(*trace);
  return rc;
}

/* The running stream's remembered entry, kept copy and copy being written
** (one stream at a time: run and summary replay one recording). */
static struct stream_memo memo;
static bool memo_live, memo_kept;

int recording_stream(const char *path, const struct recording_opts *ro, struct import_stream **s, char **trace,
                     char **dir) {
  *s = NULL;
  *trace = *dir = NULL;
  struct stat st;
  if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode))   /* read once: imported first */
    return recording_import(path, ro, trace, dir);
  const struct import_format *f;
  int rc = recording_format(path, ro->input_format, &f);
  if (rc || !f) return rc;
  /* trace.dat is read in a child process (import_tracecmd.c), which the importing
  ** thread would fork while the replay's threads run: an allocator lock another
  ** thread holds then (seen under ThreadSanitizer) hangs the child, so it is
  ** imported first, before any other thread starts */
  if (f->run_path) return recording_import(path, ro, trace, dir);
  char cmd[512], err[1024];
  struct import_job job = recording_job(f, path, ro->skip_bad, cmd, sizeof cmd);
  struct stream_memo *m = &memo;
  stream_memo_look_up(m, &job);
  if (m->kept_found) {                        /* converted before, and kept: read instead */
    *s = import_stream_of_kept(m->kept_path, path, &m->known);
  } else {
    rc = import_stream_start(&job, m->found ? &m->known : NULL, stream_memo_copy_begin(m), s, err, sizeof err);
    if (rc) say_import_failed(path, err, ro->skip_bad);
    else if (!m->found) stream_memo_keep(m, *s);
  }
  if (!rc) {                                  /* the stream's metadata, remembered or not, holds the counts */
    char *meta = import_stream_metadata(*s);
    say_skipped(meta);
    free(meta);
    memo_live = true;
    memo_kept = m->kept_found;
  } else {
    stream_memo_free(m);
  }
  return rc;
}

/* A kept copy read to its end: its content must be what was kept. */
static int check_kept(const char *read_hash, char *err, size_t errlen) {
  char want[32];
  snprintf(want, sizeof want, "%016llx", (unsigned long long)memo.known.kept_hash);
  if (!read_hash || !*read_hash || !strcmp(read_hash, want)) return EXIT_OK;
  snprintf(err, errlen, "%s: the conversion kept from an earlier replay is not what was kept (content hash %s, "
           "kept %s): it is dropped; replay again to convert the recording anew", memo.kept_path, read_hash, want);
  return EXIT_BADINPUT;
}

int recording_stream_finish(struct import_stream *s, int replay_rc, const char *read_hash, char *err,
                            size_t errlen) {
  int rc = import_stream_join(s, err, errlen);
  if (memo_live) {
    bool drop = rc != EXIT_OK;
    if (memo_kept && !rc) {
      rc = check_kept(read_hash, err, errlen);
      /* a bad record in the copy (its message names the copy): the next replay converts anew */
      drop = rc != EXIT_OK || replay_rc == EXIT_BADINPUT;
    } else if (!memo_kept) {
      stream_memo_copy_end(&memo, s, rc);
    }
    if (drop) stream_memo_forget(&memo);       /* the next replay converts twice */
    stream_memo_free(&memo);
    memo_live = memo_kept = false;
  }
  char ignored[8];
  (void)import_stream_finish(s, ignored, sizeof ignored);   /* joined above: its result is rc */
  return rc;
}

/* recording_feed, or recording_notes when notes is given. */
static int feed(const char *path, const struct recording_opts *ro, int (*emit)(void *ctx, const struct trace_event *ev),
                import_notes_fn notes, bool scan, void *ctx, char *workload, size_t wlen, char **meta, unsigned *nvcpus) {
  struct stat st;
  if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  const struct import_format *f;
  int rc = recording_format(path, ro->input_format, &f);
  if (rc) return rc;
  if (!f || f->run_path || (notes && f != import_format_find("xentrace"))) return -1;
  char cmd[512], err[1024];
  struct import_job job = recording_job(f, path, ro->skip_bad, cmd, sizeof cmd);
  job.opt.notes = notes;
  job.opt.notes_ctx = ctx;
  job.opt.note_scan = scan;
  rc = import_feed(&job, emit, ctx, workload, wlen, meta, nvcpus, err, sizeof err);
  if (rc == IMPORT_NOT_LEAN) return rc;
  if (rc) say_import_failed(path, err, ro->skip_bad);
  else say_skipped(*meta);
  return rc;
}

int recording_feed(const char *path, const struct recording_opts *ro,
                   int (*emit)(void *ctx, const struct trace_event *ev), void *ctx, char *workload, size_t wlen,
                   char **meta, unsigned *nvcpus) {
  return feed(path, ro, emit, NULL, false, ctx, workload, wlen, meta, nvcpus);
}

/* A lean import emits no record: one that did would be a bug. */
static int no_records(void *ctx, const struct trace_event *ev) {
  (void)ctx;
  errorf("internal error: a summary's lean import emitted a record (type %u)", ev->type);
  return EXIT_INTERNAL;
}

int recording_notes(const char *path, const struct recording_opts *ro, import_notes_fn notes, bool scan, void *ctx,
                    char *workload, size_t wlen, char **meta, unsigned *nvcpus) {
  return feed(path, ro, no_records, notes, scan, ctx, workload, wlen, meta, nvcpus);
}

void recording_remove(char *trace, char *dir) {
  if (trace) unlink(trace);
  if (dir) outfile_tmpdir_remove(dir);
  free(trace);
  free(dir);
}
