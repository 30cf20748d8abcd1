/* `vmxsim import`: options and messages; the importer library (sim/import/import.h) does the work. */
#include "commands.h"
#include "options.h"
#include "sim/import/import.h"
#include "sim/base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `vmxsim import --help`: these lines around the formats' own (their rows, sim/import/import.h). */
static const char usage_head[] =
  "usage: vmxsim import FORMAT IN -o OUT.bin [options]\n"
  "\n"
  "Turns a recording of a real system into a trace that vmxsim replays.  IN may be\n"
  "gzip, xz or zstd compressed (recognised by its first bytes, not its name) and - reads\n"
  "standard input; -o - writes the trace to standard output (a pipe or a file).\n"
  "formats:\n";

static const char usage_tail[] =
  "options:\n"
  "  -o, --output OUT.bin   the trace to write (required; - for standard output)\n"
  "      --cpu-ghz G        recorded seconds -> guest cycles (above 0, at most 10;\n"
  "                         default 2.4; text formats)\n"
  "      --paging 32|pae|64 guest paging mode (default 64)\n"
  "      --guest hvm|pv64   native recordings (perf-script, trace-cmd): replay them as\n"
  "                         the recorded kernel (hvm, the default) or as a 64-bit Xen\n"
  "                         PV guest (pv64: kernel and user space on separate page\n"
  "                         tables, a CR3 write on each entry to and return from the\n"
  "                         kernel; needs --paging 64)\n"
  "      --workload NAME    workload name in the header (default: IN's base name)\n"
  "      --skip-bad         count unparseable lines instead of failing (exit code 3)\n"
  "      --domain D         xentrace with the scheduler's records: only Xen domain D's\n"
  "                         vCPUs (default: every domain with HVM records, dom0's too)\n"
  "\n"
  "A recording that lacks events the results need (no raw_syscalls:sys_exit, no page\n"
  "faults, lost samples) still imports, with one warning per gap on stderr; the trace\n"
  "metadata's \"coverage\" keeps what was seen and what is missing ('vmxsim trace info').\n"
  "'vmxsim import FORMAT --help' for what each format maps; workloads/record/ records\n"
  "perf recordings; traces/recorded/ holds examples.\n"
  "\n"
  "example:\n"
  "  workloads/record/record.sh pipe -o pipe.txt\n"
  "  vmxsim import perf-script pipe.txt -o pipe.bin\n"
  "  vmxsim --policy shadowcache pipe.bin\n";

/* Each format's name, then its summary lines, indented under the column after the name. */
static void print_usage(FILE *out) {
  fputs(usage_head, out);
  for (const struct import_format *const *f = import_formats(); *f; f++) {
    fprintf(out, "  %-13s ", (*f)->name);
    for (const char *l = (*f)->summary; *l; ) {
      size_t len = strcspn(l, "\n");
      fprintf(out, "%s%.*s\n", l == (*f)->summary ? "" : "                ", (int)len, l);
      l += len + (l[len] == '\n');
    }
  }
  fputs(usage_tail, out);
}

struct import_args {
  const char *format, *in, *out, *workload;
  struct import_opts opt;
  bool help;
};

/* Value of "--name V" or "--name=V" at argv[*i]; NULL if argv[*i] is another option. */
static const char *opt_val(int argc, char **argv, int *i, const char *s, const char *l, bool *missing) {
  size_t n = strlen(l);
  if (strncmp(argv[*i], l, n) == 0 && argv[*i][n] == '=') return argv[*i] + n + 1;
  if (strcmp(argv[*i], l) != 0 && (!s || strcmp(argv[*i], s) != 0)) return NULL;
  if (*i + 1 >= argc) { *missing = true; return NULL; }
  return argv[++*i];
}

/* Applies one option; returns 1 if argv[*i] was one, 0 if not, -1 after an error. */
static int parse_option(int argc, char **argv, int *i, struct import_args *a) {
  bool missing = false;
  const char *v;
  if ((v = opt_val(argc, argv, i, "-o", "--output", &missing))) { a->out = v; return 1; }
  if ((v = opt_val(argc, argv, i, NULL, "--workload", &missing))) { a->workload = v; return 1; }
  if ((v = opt_val(argc, argv, i, NULL, "--cpu-ghz", &missing))) {
    if (!parse_double(v, &a->opt.cpu_ghz) || !clock_ghz_in_range(a->opt.cpu_ghz)) {
      errorf("import: --cpu-ghz '%s' is not a number of GHz above 0 and at most %g", v, CLOCK_GHZ_MAX);
      return -1;
    }
    return 1;
  }
  if ((v = opt_val(argc, argv, i, NULL, "--domain", &missing))) {
    int d;
    if (option_domain(v, &d)) return -1;
    a->opt.one_domain = true;
    a->opt.domain = (uint16_t)d;
    return 1;
  }
  if ((v = opt_val(argc, argv, i, NULL, "--paging", &missing))) {
    int p = paging_from_name(v);
    if (p < 0) { errorf("import: --paging '%s': expected 32, pae or 64", v); return -1; }
    a->opt.paging = (unsigned)p;
    return 1;
  }
  if ((v = opt_val(argc, argv, i, NULL, "--guest", &missing))) {
    if (!strcmp(v, "hvm")) a->opt.guest = IMPORT_GUEST_HVM;
    else if (!strcmp(v, "pv64")) a->opt.guest = IMPORT_GUEST_PV64;
    else { errorf("import: --guest '%s': expected hvm or pv64", v); return -1; }
    return 1;
  }
  if (missing) { errorf("import: option '%s' needs a value; see 'vmxsim import --help'", argv[*i]); return -1; }
  if (strcmp(argv[*i], "--skip-bad") == 0) { a->opt.skip_bad = true; return 1; }
  if (strcmp(argv[*i], "-h") == 0 || strcmp(argv[*i], "--help") == 0) { a->help = true; return 1; }
  return 0;
}

static int parse_import_args(int argc, char **argv, struct import_args *a) {
  memset(a, 0, sizeof *a);
  a->opt.cpu_ghz = IMPORT_GHZ_DEFAULT;
  a->opt.paging = PAGING_64;
  for (int i = 1; i < argc; i++) {
    int r = parse_option(argc, argv, &i, a);
    if (r < 0) return EXIT_USAGE;
    if (r > 0) continue;
    if (argv[i][0] == '-' && argv[i][1]) {
      errorf("import: unknown option '%s'; see 'vmxsim import --help'", argv[i]);
      return EXIT_USAGE;
    }
    if (!a->format) a->format = argv[i];
    else if (!a->in) a->in = argv[i];
    else { errorf("import: unexpected argument '%s' (one input file)", argv[i]); return EXIT_USAGE; }
  }
  return 0;
}

/* The command line as one string, for the metadata. */
static char *join_args(int argc, char **argv) {
  size_t n = 8;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 3;
  char *s = xmalloc(n), *p = s;
  p += sprintf(p, "vmxsim");
  for (int i = 0; i < argc; i++)
    p += sprintf(p, strpbrk(argv[i], " \t'\"") ? " '%s'" : " %s", argv[i]);
  return s;
}

static void report_skipped(const struct import *im) {
  if (!im->bad) return;
  errorf("import: skipped %llu unparseable %s of %s%s", (unsigned long long)im->bad,
         im->binary ? "records" : "lines", im->opt.input, im->nbad_kept ? ", first:" : "");
  for (unsigned i = 0; i < im->nbad_kept; i++) {
    char msg[640];
    import_format_bad(im, &im->first_bad[i], msg, sizeof msg);
    fprintf(stderr, "  %s\n", msg);
  }
}

/* Runs the import the arguments describe; prints the outcome. */
static int run_import(const struct import_args *a, const struct import_format *fmt, int argc, char **argv) {
  char *cmd = join_args(argc, argv);
  struct import_job job = { .format = fmt, .input = a->in, .output = a->out, .workload = a->workload,
                            .command = cmd, .opt = a->opt };
  struct import im;
  char err[1024];
  int rc = import_file(&job, &im, err, sizeof err);
  if (rc) errorf("%s", err);
  else report_skipped(&im);
  for (const char *l = rc ? "" : im.warnings; *l; ) {   /* an incomplete recording: warnings, not errors */
    size_t len = strcspn(l, "\n");
    errorf("warning: %.*s", (int)len, l);
    l += len + (l[len] == '\n');
  }
  import_free(&im);
  free(cmd);
  return rc;
}

int cmd_import(int argc, char **argv) {
  struct import_args a;
  int rc = parse_import_args(argc, argv, &a);
  if (rc) return rc;
  if (!a.format) {
    print_usage(a.help ? stdout : stderr);
    return a.help ? EXIT_OK : EXIT_USAGE;
  }
  const struct import_format *f = import_format_find(a.format);
  if (!f) {
    char names[256];
    import_format_names(names, sizeof names, ", ", ", ");
    errorf("import: unknown format '%s' (%s); see 'vmxsim import --help'", a.format, names);
    return EXIT_USAGE;
  }
  if (a.help) { fputs(f->usage, stdout); return EXIT_OK; }
  if (a.opt.guest == IMPORT_GUEST_PV64 && strcmp(f->name, "perf-script") && strcmp(f->name, "trace-cmd")) {
    errorf("import %s: --guest pv64 applies to native recordings (perf-script, trace-cmd), not to a host's exits", a.format);
    return EXIT_USAGE;
  }
  if (a.opt.guest == IMPORT_GUEST_PV64 && a.opt.paging != PAGING_64) {
    errorf("import: --guest pv64 models a 64-bit PV guest: --paging must be 64 (got %s)", paging_name(a.opt.paging));
    return EXIT_USAGE;
  }
  if (!a.in) { errorf("import %s: missing input file; see 'vmxsim import %s --help'", a.format, a.format); return EXIT_USAGE; }
  if (!a.out) { errorf("import %s: missing -o OUT.bin; see 'vmxsim import %s --help'", a.format, a.format); return EXIT_USAGE; }
  return run_import(&a, f, argc, argv);
}
