/* `vmxsim regress`: replay regression cases and compare exit counts, counters
** and cycles with their expectations; --update records the current results.
** The case file format is in regress_case.h. */
#include "regress.h"
#include "regress_case.h"
#include "regress_int.h"
#include "sim/base/outfile.h"
#include "sim/replay/runner.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"
#include "workloads/generators.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_DIR "tests/regress"

/* How the trace, policy and CPU files a case names are read: a case may name
** any file the user can read, so that the messages about one quote none of
** its text, and one that is not a regular file (a FIFO, /dev/zero) is refused
** rather than waited on. */
#define CASE_INPUT_FLAGS (INPUT_HIDE_CONTENT | INPUT_REGULAR_ONLY)

static const char regress_usage[] =
  "usage: vmxsim regress [DIR|FILE...] [--update] [--format table|json|junit] [-o FILE]\n"
  "\n"
  "Replays regression cases and checks their results: exit counts per reason and\n"
  "per breakdown row (\"cr3 write\") and counters must match exactly, total cycles\n"
  "within the case's tolerance.  A case is a JSON file; DIRs are searched\n"
  "recursively for *.json (default: " DEFAULT_DIR ").  Prints one line per case\n"
  "and, for each failure, expected vs actual vs delta.\n"
  "\n"
  "  -u, --update        record the current results as each case's \"expect\" (the rest\n"
  "                      of the file is kept; keys sorted, 2-space indentation) and\n"
  "                      print what changed; files that did not change are not touched\n"
  "  -f, --format F      table (default), json (one object for scripts) or junit\n"
  "                      (JUnit XML: testsuite/testcase/failure, for CI systems)\n"
  "  -o, --output FILE   write the --format output to FILE; the table still goes to stdout\n"
  "  -q, --quiet         table: leave out the lines of passing cases\n"
  "\n"
  "A case file (paths relative to it; only \"policy\" and one of \"trace\" or\n"
  "\"generate\" are required; --update writes \"expect\"):\n"
  "  {\n"
  "    \"description\": \"lat_ctx, 2 processes, under shadowcache with lazy DRs\",\n"
  "    \"generate\": [\"lat_ctx\", \"--procs\", \"2\", \"--size\", \"0\", \"--iters\", \"50\"],\n"
  "    \"policy\": \"shadowcache+lazydr\",\n"
  "    \"cpu\": \"core2-2007\",\n"
  "    \"set\": {\"shadow_pages_max\": 64},\n"
  "    \"cycles_tolerance\": 0.001,\n"
  "    \"expect\": {\n"
  "      \"exits\": {\"CR_ACCESS\": 100, \"cr3 write\": 100, \"EXCEPTION_NMI\": 63},\n"
  "      \"counters\": {\"root_hits\": 99, \"root_misses\": 1, ...},\n"
  "      \"events\": 7403, \"total_exits\": 163, \"cycles\": 2564744\n"
  "    }\n"
  "  }\n"
  "\"trace\": \"my.bin\" replays a binary trace (a .txt trace is assembled first);\n"
  "\"generate\" runs 'vmxsim gen' with those arguments into a temporary file.  \"set\"\n"
  "overrides knobs as --set does; \"cpu\" defaults to " PROFILE_DEFAULT "; policy and CPU files\n"
  "(names with '/' or ending in .json) are also relative to the case file.  Every\n"
  "section of \"expect\" is checked completely (reasons and counters not listed are\n"
  "expected to be 0); sections left out are not checked.  cycles_tolerance is\n"
  "relative (0.001 = 0.1%; default 0, exact).\n"
  "\n"
  "A case may name any file you can read, by a path relative to the case file's\n"
  "directory (for a symbolic link, that of the file it leads to), ../ and absolute\n"
  "paths included.  A case is trusted as a Makefile is: run only cases you trust.\n"
  "Messages about the files a case names never quote their text (they give the\n"
  "line, column or byte and what was expected), and a file that is not a regular\n"
  "one (a FIFO, a device) is refused.\n"
  "\n"
  "exit status: 0 all cases passed; 6 a case failed; 3 a case could not be run\n"
  "(malformed case file, missing trace, unknown policy: the message names the file);\n"
  "2 usage error.\n"
  "\n"
  "examples:\n"
  "  vmxsim regress tests/regress\n"
  "  vmxsim regress --format junit -o vmxsim-regress.xml ci/vmxsim/\n"
  "  vmxsim regress --update ci/vmxsim/ && git diff ci/vmxsim/\n";

enum out_format { OUT_TABLE, OUT_JSON, OUT_JUNIT };

struct opts {
  bool update, quiet;
  enum out_format format;
  const char *output;
  char **paths;
  int npaths;
};

/* ---- small helpers ---- */

char *regress_asprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* ---- options ---- */

static int parse_opts(int argc, char **argv, struct opts *o) {
  memset(o, 0, sizeof *o);
  o->paths = xcalloc((size_t)argc + 1, sizeof *o->paths);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = NULL;
    bool takes = !strcmp(a, "-f") || !strcmp(a, "--format") || !strcmp(a, "-o") || !strcmp(a, "--output");
    if (takes) {
      if (i + 1 >= argc) {
        errorf("regress: option '%s' needs a value; see 'vmxsim regress --help'", a);
        return EXIT_USAGE;
      }
      v = argv[++i];
    } else if (!strncmp(a, "--format=", 9) || !strncmp(a, "--output=", 9)) {
      v = a + 9;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(regress_usage, stdout);
      return -1;
    } else if (!strcmp(a, "-u") || !strcmp(a, "--update")) {
      o->update = true;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      o->quiet = true;
    } else if (v && (a[1] == 'f' || !strncmp(a, "--format", 8))) {
      if (!strcmp(v, "table")) o->format = OUT_TABLE;
      else if (!strcmp(v, "json")) o->format = OUT_JSON;
      else if (!strcmp(v, "junit")) o->format = OUT_JUNIT;
      else {
        errorf("regress: unknown format '%s' (table, json, junit)", v);
        return EXIT_USAGE;
      }
    } else if (v) {
      if (!*v) {
        errorf("regress: -o needs a file name");
        return EXIT_USAGE;
      }
      o->output = v;
    } else if (a[0] == '-' && a[1]) {
      errorf("regress: unknown option '%s'; see 'vmxsim regress --help'", a);
      return EXIT_USAGE;
    } else {
      o->paths[o->npaths++] = argv[i];
    }
  }
  return EXIT_OK;
}

/* ---- finding case files ---- */

struct files {
  char **v;
  size_t n, cap;
};

static void files_add(struct files *f, char *path) {
  if (f->n == f->cap) {
    f->cap = f->cap ? f->cap * 2 : 64;
    f->v = xrealloc(f->v, f->cap * sizeof *f->v);
  }
  f->v[f->n++] = path;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool regress_has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && !strcmp(s + n - m, suf);
}

/* The directories a scan is in, innermost first: symbolic links to
** directories are followed, and one that leads back to one of these would
** be scanned for ever. */
struct dir_chain {
  dev_t dev;
  ino_t ino;
  const char *path;
  const struct dir_chain *up;
};

/* d's place in the chain; false (with the message printed) when d is already in it. */
static bool chain_enter(struct dir_chain *here, DIR *d, const char *dir, const struct dir_chain *up) {
  struct stat st;
  if (fstat(dirfd(d), &st) != 0) {
    errorf("%s: %s", dir, strerror(errno));
    return false;
  }
  *here = (struct dir_chain){ st.st_dev, st.st_ino, dir, up };
  for (const struct dir_chain *a = up; a; a = a->up)
    if (a->dev == st.st_dev && a->ino == st.st_ino) {
      errorf("%s: is %s again, a directory it is in (a loop of symbolic links)", dir, a->path);
      return false;
    }
  return true;
}

/* Adds every *.json under dir (recursively, dot-files skipped), sorted; up: the directories dir is in. */
static int scan_dir(struct files *f, const char *dir, const struct dir_chain *up) {
  DIR *d = opendir(dir);
  if (!d) {
    errorf("%s: %s", dir, strerror(errno));
    return EXIT_BADINPUT;
  }
  struct dir_chain chain;
  if (!chain_enter(&chain, d, dir, up)) {
    closedir(d);
    return EXIT_BADINPUT;
  }
  struct files here = { 0 };
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (!strcmp(dir, ".")) files_add(&here, xstrdup(e->d_name));
    else files_add(&here, regress_asprintf("%s%s%s", dir, regress_has_suffix(dir, "/") ? "" : "/", e->d_name));
  }
  closedir(d);
  if (here.n) qsort(here.v, here.n, sizeof *here.v, cmp_str);
  int rc = EXIT_OK;
  for (size_t i = 0; i < here.n; i++) {
    struct stat st;
    if (rc == EXIT_OK && stat(here.v[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      rc = scan_dir(f, here.v[i], &chain);
    } else if (rc == EXIT_OK && regress_has_suffix(here.v[i], ".json")) {
      files_add(f, here.v[i]);
      continue;
    }
    free(here.v[i]);
  }
  free(here.v);
  return rc;
}

static int find_cases(struct files *f, char **paths, int npaths) {
  static char *dflt[] = { DEFAULT_DIR };
  if (!npaths) {
    paths = dflt;
    npaths = 1;
  }
  for (int i = 0; i < npaths; i++) {
    struct stat st;
    if (stat(paths[i], &st) != 0) {
      errorf("%s: %s%s", paths[i], strerror(errno),
             npaths == 1 && paths == dflt ? " (give case files or directories; see 'vmxsim regress --help')" : "");
      return EXIT_BADINPUT;
    }
    if (!S_ISDIR(st.st_mode)) {
      files_add(f, xstrdup(paths[i]));
      continue;
    }
    size_t before = f->n;
    int rc = scan_dir(f, paths[i], NULL);
    if (rc) return rc;
    if (f->n == before) {
      errorf("%s: no case files (*.json) in this directory", paths[i]);
      return EXIT_BADINPUT;
    }
  }
  return EXIT_OK;
}

/* ---- traces: generated or assembled into a temporary directory, once per run ---- */

struct trace_cache {
  char *dir;                    /* mkdtemp'd, NULL until needed */
  char **key, **path;
  size_t n, cap;
};

static const char *cache_get(struct trace_cache *tc, const char *key, char *err, size_t errlen) {
  for (size_t i = 0; i < tc->n; i++)
    if (!strcmp(tc->key[i], key)) return tc->path[i];
  if (!tc->dir && outfile_tmpdir("vmxsim-regress", &tc->dir, err, errlen) != EXIT_OK) return NULL;
  if (tc->n == tc->cap) {
    tc->cap = tc->cap ? tc->cap * 2 : 16;
    tc->key = xrealloc(tc->key, tc->cap * sizeof *tc->key);
    tc->path = xrealloc(tc->path, tc->cap * sizeof *tc->path);
  }
  tc->key[tc->n] = xstrdup(key);
  tc->path[tc->n] = regress_asprintf("%s/trace-%zu.bin", tc->dir, tc->n);
  return tc->path[tc->n++];
}

/* The cache entry just added by cache_get did not get its file: forget it. */
static void cache_drop_last(struct trace_cache *tc) {
  tc->n--;
  remove(tc->path[tc->n]);
  free(tc->key[tc->n]);
  free(tc->path[tc->n]);
}

static void cache_free(struct trace_cache *tc) {
  for (size_t i = 0; i < tc->n; i++) {
    remove(tc->path[i]);
    free(tc->key[i]);
    free(tc->path[i]);
  }
  if (tc->dir) outfile_tmpdir_remove(tc->dir);
  free(tc->key);
  free(tc->path);
  free(tc->dir);
  memset(tc, 0, sizeof *tc);
}

static char *gen_command(const struct regress_case *c) {
  struct strbuf b = { 0 };
  for (int i = 0; i < c->ngen; i++) strbuf_printf(&b, "%s%s", i ? " " : "", c->gen[i]);
  return b.s;
}

/* The binary trace a case replays: its own file, or a generated or assembled temporary one. */
static const char *case_trace(const struct regress_case *c, struct trace_cache *tc, char *err, size_t errlen) {
  bool text = c->trace && regress_has_suffix(c->trace, ".txt");
  if (c->trace) {
    struct stat st;
    if (stat(c->trace, &st) != 0) {
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(c->json, "trace");
      if (cJSON_IsString(t) && strcmp(t->valuestring, c->trace))
        snprintf(err, errlen, "%s: trace %s (%s, relative to the case file): %s", c->path, t->valuestring, c->trace,
                 strerror(errno));
      else
        snprintf(err, errlen, "%s: trace %s: %s", c->path, c->trace, strerror(errno));
      return NULL;
    }
    if (!text) return c->trace;
  }
  char *cmd = c->trace ? regress_asprintf("asm %s", c->trace) : gen_command(c);
  size_t known = tc->n;
  const char *out = cache_get(tc, cmd, err, errlen);
  if (!out || tc->n == known) {
    if (!out) { size_t n = strlen(err); snprintf(err + n, errlen - n, " (case %s)", c->path); }
    free(cmd);
    return out;
  }
  char msg[1024];
  int rc = text ? trace_text_assemble_flags(c->trace, out, CASE_INPUT_FLAGS, msg, sizeof msg)
                : gen_generate(c->ngen, c->gen, out, msg, sizeof msg);
  if (rc != EXIT_OK) {
    snprintf(err, errlen, "%s: %s %s failed: %s", c->path, text ? "trace asm" : "generate", text ? c->trace : cmd, msg);
    cache_drop_last(tc);
    out = NULL;
  }
  free(cmd);
  return out;
}

/* ---- one case ---- */


static void set_error(struct result *r, const char *msg) {
  r->status = ST_ERROR;
  r->error = xstrdup(msg);
}

static void run_case(const char *file, const struct opts *o, struct trace_cache *tc, struct result *res,
                     struct result_extra *x) {
  static const struct regress_values nothing;     /* no section: every value is new */
  char err[4096];
  struct regress_case c;
  struct run_output *ro = NULL;
  memset(res, 0, sizeof *res);
  memset(x, 0, sizeof *x);
  res->file = xstrdup(file);
  if (regress_case_load(&c, file, o->update, err, sizeof err) != EXIT_OK) {
    set_error(res, err);
    goto done;
  }
  res->policy = xstrdup(c.policy);
  res->cpu = xstrdup(c.cpu ? c.cpu : PROFILE_DEFAULT);
  res->source = c.trace ? xstrdup(c.trace) : gen_command(&c);
  res->tolerance = c.cycles_tolerance;
  if (!o->update && !c.has_expect) {
    snprintf(err, sizeof err, "%s: no \"expect\" yet; record the current results with 'vmxsim regress --update %s'",
             file, file);
    set_error(res, err);
    goto done;
  }
  const char *trace = case_trace(&c, tc, err, sizeof err);
  if (!trace) {
    set_error(res, err);
    goto done;
  }
  struct run_spec spec = { .trace = trace, .config = { c.policy, c.cpu, c.sets, c.nsets },
                           .input_flags = CASE_INPUT_FLAGS };
  ro = xmalloc(sizeof *ro);
  char rerr[2048];
  int rc = run_trace(&spec, ro, rerr, sizeof rerr);
  if (rc != EXIT_OK || ro->interrupted) {
    snprintf(err, sizeof err, "%s: %s", file, rc != EXIT_OK ? rerr : "interrupted");
    set_error(res, err);
    goto done;
  }
  struct regress_values act;
  regress_values_from_report(&act, &ro->rep);
  if (!o->update) {
    res->ndiffs = regress_compare(&c.expect, &act, c.cycles_tolerance, false, &res->diffs);
    res->status = res->ndiffs ? ST_FAIL : ST_PASS;
    x->cycles_checked = c.expect.has_cycles;
    x->cycles_expected = c.expect.cycles;
    x->cycles_actual = act.cycles;
    goto done;
  }
  outfile_clean_leftovers(file);   /* a killed --update's, also when this case stays unchanged */
  res->ndiffs = regress_compare(c.has_expect ? &c.expect : &nothing, &act, 0, true, &res->diffs);
  if (c.dropped[0]) res->dropped = xstrdup(c.dropped);
  char *text;
  if (regress_case_update(&c, &act, &text, rerr, sizeof rerr) != EXIT_OK) {
    snprintf(err, sizeof err, "%s: %s", file, rerr);
    set_error(res, err);
  } else if (!strcmp(text, c.text)) {
    res->status = ST_UNCHANGED;
  } else if (outfile_write_text(file, text, err, sizeof err) != EXIT_OK) {
    set_error(res, err);
  } else {
    res->status = c.has_expect ? ST_UPDATED : ST_RECORDED;
  }
  free(text);
done:
  if (ro) run_output_free(ro);
  free(ro);
  regress_case_free(&c);
}

static void result_free(struct result *r) {
  free(r->file);
  free(r->error);
  free(r->diffs);
  free(r->policy);
  free(r->cpu);
  free(r->source);
  free(r->dropped);
}

/* ---- the command ---- */

static void emit_table(struct strbuf *all, bool to_stdout, const struct strbuf *part) {
  if (!part->len) return;
  if (to_stdout) {
    fputs(part->s, stdout);
    fflush(stdout);
  }
  strbuf_puts(all, part->s);
}

int cmd_regress(int argc, char **argv) {
  struct opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc) {
    free(o.paths);
    return rc < 0 ? EXIT_OK : rc;
  }
  struct files f = { 0 };
  rc = find_cases(&f, o.paths, o.npaths);
  struct outfile out = { 0 };        /* -o: written whole at the end, or not at all */
  char oerr[1024];
  if (rc == EXIT_OK && o.output && (rc = outfile_begin(&out, o.output, OUTFILE_ANY, oerr, sizeof oerr)) != EXIT_OK)
    errorf("%s", oerr);
  if (rc != EXIT_OK) {
    for (size_t i = 0; i < f.n; i++) free(f.v[i]);
    free(f.v);
    free(o.paths);
    return rc;
  }
  bool table_stdout = o.format == OUT_TABLE || o.output;
  struct interrupt_catch ic;
  interrupt_catch(&ic, true);

  struct result *rs = xcalloc(f.n ? f.n : 1, sizeof *rs);
  unsigned count[ST_RECORDED + 1] = { 0 };
  struct trace_cache tc = { 0 };
  struct strbuf table = { 0 };
  double t0 = monotonic_seconds();
  size_t n = 0;
  for (; n < f.n && !interrupt_requested(); n++) {
    struct result_extra x;
    double t = monotonic_seconds();
    run_case(f.v[n], &o, &tc, &rs[n], &x);
    rs[n].seconds = monotonic_seconds() - t;
    count[rs[n].status]++;
    if (rs[n].status == ST_ERROR) {
      fflush(stdout);
      for (const char *l = rs[n].error; *l; ) {       /* one line per problem */
        size_t len = strcspn(l, "\n");
        errorf("%.*s", (int)len, l);
        l += len + (l[len] == '\n');
      }
    }
    struct strbuf line = { 0 };
    regress_table_line(&line, &rs[n], &x, o.quiet);
    emit_table(&table, table_stdout, &line);
    free(line.s);
  }
  double secs = monotonic_seconds() - t0;
  cache_free(&tc);
  interrupt_release(&ic);

  struct strbuf sum = { 0 };
  if (o.update)
    strbuf_printf(&sum, "regress --update: %u updated, %u recorded, %u unchanged, %u error%s (%zu case%s, %.2f s)\n",
              count[ST_UPDATED], count[ST_RECORDED], count[ST_UNCHANGED], count[ST_ERROR],
              count[ST_ERROR] == 1 ? "" : "s", n, n == 1 ? "" : "s", secs);
  else
    strbuf_printf(&sum, "regress: %u passed, %u failed, %u error%s (%zu case%s, %.2f s)\n", count[ST_PASS],
              count[ST_FAIL], count[ST_ERROR], count[ST_ERROR] == 1 ? "" : "s", n, n == 1 ? "" : "s", secs);
  emit_table(&table, table_stdout, &sum);
  free(sum.s);

  char *doc = o.format == OUT_JSON ? regress_results_json(rs, n, count, secs)
            : o.format == OUT_JUNIT ? regress_junit_xml(rs, n, count, secs) : xstrdup(table.s ? table.s : "");
  if (out.target) {
    int wrc = outfile_put_text(&out, doc, oerr, sizeof oerr);
    if (wrc) errorf("%s", oerr);
    if (!rc) rc = wrc;
  } else if (o.format != OUT_TABLE) {
    fputs(doc, stdout);
  }
  free(doc);
  free(table.s);

  if (interrupt_requested()) {
    errorf("regress: interrupted after %zu of %zu cases", n, f.n);
    rc = EXIT_INTERRUPTED;
  } else if (count[ST_ERROR]) {
    rc = EXIT_BADINPUT;
  } else if (count[ST_FAIL]) {
    rc = EXIT_REGRESS;
  }
  for (size_t i = 0; i < n; i++) result_free(&rs[i]);
  for (size_t i = 0; i < f.n; i++) free(f.v[i]);
  free(rs);
  free(f.v);
  free(o.paths);
  return rc;
}
