/* `vmxsim trace asm|dump|info`: assemble text traces, dump binary ones, summarise them. */
#include "commands.h"
#include "sim/base/outfile.h"
#include "sim/trace/trace.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char trace_usage[] =
  "usage: vmxsim trace asm IN.txt -o OUT.bin         text trace -> binary trace\n"
  "       vmxsim trace dump IN.bin [-o OUT.txt]      binary trace -> text (stdout by default)\n"
  "       vmxsim trace info IN.bin [--format table|json]\n"
  "\n"
  "The text form has one guest event per line ('cr3w 0x1000', 'run 2400', ...);\n"
  "traces/FORMAT.md specifies both forms. 'vmxsim trace SUBCOMMAND --help' for each.\n"
  "A binary trace may be gzip, xz or zstd compressed (recognised by its first bytes),\n"
  "and '-' reads standard input or writes standard output.\n"
  "\n"
  "example:\n"
  "  vmxsim trace asm traces/examples/basic.txt -o basic.bin\n"
  "  vmxsim trace dump basic.bin | head\n"
  "  vmxsim trace info basic.bin --format json\n";

static const char asm_usage[] =
  "usage: vmxsim trace asm IN.txt -o OUT.bin\n"
  "\n"
  "Assembles a text trace into a binary trace. IN may be - for standard input, OUT\n"
  "- for standard output (a pipe or a file: the header goes first with its record\n"
  "count unknown, format version 2, unless standard output is a file; declare the\n"
  "vCPUs with @vcpus, the header cannot grow afterwards).\n"
  "Header directives (@workload, @paging, @vcpus, @meta) come before the first\n"
  "event; the vCPU count grows to cover every 'vcpu N' used. Errors are reported\n"
  "as FILE:LINE: what, and leave no output file behind.\n"
  "\n"
  "example:\n"
  "  printf '@workload demo\\n@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0\\nrun 2400\\ncr3w 0x2000\\n' \\\n"
  "    | vmxsim trace asm - -o demo.bin\n";

static const char dump_usage[] =
  "usage: vmxsim trace dump IN.bin [-o OUT.txt]\n"
  "\n"
  "Prints a binary trace as text: the header directives, then one event per line.\n"
  "The output assembles back ('vmxsim trace asm') to a byte-identical binary.  IN may\n"
  "be gzip, xz or zstd compressed, or - for standard input.\n"
  "\n"
  "example:\n"
  "  vmxsim trace dump lat_ctx.bin -o lat_ctx.txt\n";

static const char info_usage[] =
  "usage: vmxsim trace info IN.bin [--format table|json]\n"
  "\n"
  "Summarises a binary trace: header fields, metadata, record count, vCPUs, total\n"
  "native cycles, marks, and event counts by type (CR and DR moves by register:\n"
  "cr3w, cr4w, drw7, ...).  IN may be gzip, xz or zstd compressed, or - for standard\n"
  "input.\n"
  "\n"
  "example:\n"
  "  vmxsim trace info lat_ctx.bin --format json\n";

/* ---- arguments ---- */

struct args {
  const char *in;          /* the one positional argument */
  const char *out;         /* -o */
  const char *format;      /* --format */
  bool help;
};

static bool is_opt(const char *arg, const char *s, const char *l) {
  return strcmp(arg, s) == 0 || strcmp(arg, l) == 0;
}

/* Value of an option given as "--long V", "-s V" or "--long=V"; NULL if arg is not it. */
static const char *opt_value(int argc, char **argv, int *i, const char *s, const char *l, bool *missing) {
  size_t ln = strlen(l);
  if (strncmp(argv[*i], l, ln) == 0 && argv[*i][ln] == '=') return argv[*i] + ln + 1;
  if (!is_opt(argv[*i], s, l)) return NULL;
  if (*i + 1 >= argc) { *missing = true; return NULL; }
  return argv[++*i];
}

/* Parses "SUB [options] IN"; `outopt`/`fmtopt` say which options SUB takes.
** Returns 0, or EXIT_USAGE after printing a one-line hint. */
static int parse_args(int argc, char **argv, bool outopt, bool fmtopt, struct args *a) {
  const char *sub = argv[0];
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    bool missing = false;
    const char *v;
    if (is_opt(argv[i], "-h", "--help")) { a->help = true; return 0; }
    if (outopt && (v = opt_value(argc, argv, &i, "-o", "--output", &missing))) a->out = v;
    else if (fmtopt && (v = opt_value(argc, argv, &i, "-f", "--format", &missing))) a->format = v;
    else if (missing) {
      errorf("trace %s: option '%s' needs a value; see 'vmxsim trace %s --help'", sub, argv[i], sub);
      return EXIT_USAGE;
    } else if (argv[i][0] == '-' && argv[i][1] != 0) {
      errorf("trace %s: unknown option '%s'; see 'vmxsim trace %s --help'", sub, argv[i], sub);
      return EXIT_USAGE;
    } else if (a->in) {
      errorf("trace %s: unexpected argument '%s' (one input file); see 'vmxsim trace %s --help'",
             sub, argv[i], sub);
      return EXIT_USAGE;
    } else {
      a->in = argv[i];
    }
  }
  if (!a->in) {
    errorf("trace %s: missing input file; see 'vmxsim trace %s --help'", sub, sub);
    return EXIT_USAGE;
  }
  return 0;
}

/* ---- asm ---- */

static int trace_asm(int argc, char **argv) {
  struct args a;
  int rc = parse_args(argc, argv, true, false, &a);
  if (rc || a.help) return a.help ? (fputs(asm_usage, stdout), EXIT_OK) : rc;
  if (!a.out) {
    errorf("trace asm: missing -o OUT.bin; see 'vmxsim trace asm --help'");
    return EXIT_USAGE;
  }
  char err[1024];
  rc = trace_text_assemble(a.in, a.out, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

/* ---- dump ---- */

/* Prints every record of r; returns 0 or EXIT_BADINPUT (reported). */
static int dump_records(struct trace_reader *r, FILE *out) {
  struct trace_text_printer pr;
  const struct trace_event *ev;
  trace_text_printer_init(&pr, out);
  trace_text_print_header(&pr, &r->hdr);
  while ((ev = trace_next(r))) trace_text_print(&pr, ev);
  trace_text_print_end(&pr);
  if (trace_failed(r)) {
    errorf("%s", r->err);
    return EXIT_BADINPUT;
  }
  return 0;
}

/* The dump's output: standard output, or PATH written atomically (sim/base/outfile.h).
** Returns 0 or EXIT_BADINPUT with the message in err. */
static int dump_open(struct outfile *o, const char *path, FILE **out, char *err, size_t errlen) {
  *out = stdout;
  if (!path || !strcmp(path, "-")) return EXIT_OK;
  int rc = outfile_begin(o, path, OUTFILE_ANY, err, errlen);
  if (rc) return rc;
  if ((*out = fopen(outfile_path(o), "w"))) return EXIT_OK;
  snprintf(err, errlen, "%s: %s", path, strerror(errno));
  outfile_discard(o);
  return EXIT_BADINPUT;
}

static int trace_dump(int argc, char **argv) {
  struct args a;
  int rc = parse_args(argc, argv, true, false, &a);
  if (rc || a.help) return a.help ? (fputs(dump_usage, stdout), EXIT_OK) : rc;
  struct trace_reader r;
  if (trace_open(&r, a.in) != EXIT_OK) {
    errorf("%s", r.err);
    return EXIT_BADINPUT;
  }
  struct outfile o = { 0 };
  FILE *out;
  char err[1024];
  rc = dump_open(&o, a.out, &out, err, sizeof err);
  if (rc) {
    errorf("%s", err);
    trace_close(&r);
    return rc;
  }
  rc = dump_records(&r, out);
  if (fflush(out) != 0 || ferror(out)) {
    errorf("%s: write failed: %s", a.out ? a.out : "<stdout>", strerror(errno));
    rc = EXIT_BADINPUT;
  }
  if (a.out && out != stdout) {
    if (fclose(out) != 0 && rc == 0) { errorf("%s: write failed: %s", a.out, strerror(errno)); rc = EXIT_BADINPUT; }
    if (rc) outfile_discard(&o);
    else if ((rc = outfile_commit(&o, err, sizeof err)) != EXIT_OK) errorf("%s", err);
  }
  trace_close(&r);
  return rc;
}

/* ---- info ---- */

#define LABELS_MAX 64      /* distinct mark labels listed; the rest count as "(other)" */

struct label_count { char label[MARK_LABEL_MAX + 1]; uint64_t n; };

struct summary {
  uint64_t records, cycles, marks;
  uint64_t vcpu_cycles[TRACE_VCPU_MAX];
  uint64_t by_type[EV_COUNT][256];      /* [type][aux]: aux only for CR/DR moves, else 0 */
  struct label_count labels[LABELS_MAX + 1];
  int nlabels;
};

static bool split_by_register(unsigned type) {
  return type == EV_CR_WRITE || type == EV_CR_READ || type == EV_DR_WRITE || type == EV_DR_READ;
}

/* Counts type/aux's row under its display name: "cr3w", "drw7", "init", "hlt". */
static void event_key(unsigned type, unsigned aux, char *buf, size_t n) {
  switch (type) {
  case EV_CR_WRITE: snprintf(buf, n, "cr%uw", aux); break;
  case EV_CR_READ:  snprintf(buf, n, "cr%ur", aux); break;
  case EV_DR_WRITE: snprintf(buf, n, "drw%u", aux); break;
  case EV_DR_READ:  snprintf(buf, n, "drr%u", aux); break;
  case EV_INIT:     snprintf(buf, n, "init"); break;
  default:          snprintf(buf, n, "%s", event_mnemonic(type));
  }
}

static void count_label(struct summary *s, const struct trace_event *ev) {
  char label[MARK_LABEL_MAX + 1] = { 0 };
  for (int i = 0; i < 8; i++) {
    label[i] = (char)(ev->a >> (8 * i));
    label[8 + i] = (char)(ev->b >> (8 * i));
  }
  int i;
  for (i = 0; i < s->nlabels; i++)
    if (strcmp(s->labels[i].label, label) == 0) break;
  if (i == s->nlabels) {
    if (s->nlabels == LABELS_MAX) snprintf(label, sizeof label, "(other)");
    i = s->nlabels < LABELS_MAX ? s->nlabels++ : LABELS_MAX;
    memcpy(s->labels[i].label, label, sizeof label);
  }
  s->labels[i].n++;
}

static int summarise(struct trace_reader *r, struct summary *s) {
  const struct trace_event *ev;
  while ((ev = trace_next(r))) {
    s->records++;
    s->cycles += ev->cycles;
    s->vcpu_cycles[ev->vcpu] += ev->cycles;
    s->by_type[ev->type][split_by_register(ev->type) ? ev->aux : 0]++;
    if (ev->type == EV_MARK) { s->marks++; count_label(s, ev); }
  }
  if (trace_failed(r)) {
    errorf("%s", r->err);
    return EXIT_BADINPUT;
  }
  return 0;
}

/* Pretty-printed under its label; cJSON's tabs become two spaces (one after a key). */
static void print_metadata_table(const char *meta) {
  cJSON *j = cJSON_Parse(meta);
  char *text = j ? cJSON_Print(j) : NULL;
  bool line_start = true;
  fputs("metadata:    ", stdout);
  for (const char *s = text ? text : meta; *s; s++) {
    if (*s == '\t') fputs(line_start ? "  " : " ", stdout);
    else putchar(*s);
    if (*s == '\n') fputs("             ", stdout);
    line_start = *s == '\n' || (line_start && *s == '\t');
  }
  putchar('\n');
  free(text);
  cJSON_Delete(j);
}

static void print_table(const struct trace_reader *r, const struct summary *s) {
  const struct trace_header *h = &r->hdr;
  printf("file:        %s\n", r->path);
  printf("format:      version %u, %u-byte records%s%s%s\n", h->version, h->record_size,
         r->compression[0] ? ", " : "", r->compression, r->compression[0] ? "-compressed" : "");
  if (h->flags & TRACE_FLAG_COUNT_UNKNOWN) printf("             (record count not in the header: written as a stream)\n");
  printf("workload:    %s\n", h->workload[0] ? h->workload : "(none)");
  printf("paging:      %s\n", paging_name(h->paging));
  printf("vcpus:       %u\n", h->vcpu_count);
  printf("records:     %llu\n", (unsigned long long)s->records);
  printf("cycles:      %llu native", (unsigned long long)s->cycles);
  for (unsigned v = 0; h->vcpu_count > 1 && v < h->vcpu_count; v++)
    printf("%svcpu %u: %llu", v ? ", " : " (", v, (unsigned long long)s->vcpu_cycles[v]);
  printf("%s\n", h->vcpu_count > 1 ? ")" : "");
  printf("marks:       %llu", (unsigned long long)s->marks);
  for (int i = 0; i <= s->nlabels && i <= LABELS_MAX; i++)
    if (s->labels[i].n) printf("%s%s %llu", i ? ", " : " (", s->labels[i].label, (unsigned long long)s->labels[i].n);
  printf("%s\n", s->nlabels ? ")" : "");
  if (h->metadata[0]) print_metadata_table(h->metadata);
  printf("events:%s\n", s->records ? "" : "      (none)");
  for (unsigned t = 0; t < EV_COUNT; t++)
    for (unsigned aux = 0; aux < 256; aux++) {
      char key[32];
      if (!s->by_type[t][aux]) continue;
      event_key(t, aux, key, sizeof key);
      printf("  %-10s %llu\n", key, (unsigned long long)s->by_type[t][aux]);
    }
}

/* Exact 64-bit integers (cJSON numbers are doubles, exact only to 2^53). */
static void json_u64(cJSON *obj, const char *key, uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  cJSON_AddRawToObject(obj, key, buf);
}

static void print_json(const struct trace_reader *r, const struct summary *s) {
  const struct trace_header *h = &r->hdr;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", r->path);
  cJSON_AddNumberToObject(o, "version", h->version);
  cJSON_AddNumberToObject(o, "record_size", h->record_size);
  cJSON_AddStringToObject(o, "compression", r->compression[0] ? r->compression : "none");
  cJSON_AddBoolToObject(o, "count_in_header", !(h->flags & TRACE_FLAG_COUNT_UNKNOWN));
  cJSON_AddStringToObject(o, "workload", h->workload);
  cJSON_AddStringToObject(o, "paging", paging_name(h->paging));
  cJSON_AddNumberToObject(o, "vcpus", h->vcpu_count);
  json_u64(o, "records", s->records);
  json_u64(o, "cycles", s->cycles);
  cJSON *vc = cJSON_AddArrayToObject(o, "vcpu_cycles");
  for (unsigned v = 0; v < h->vcpu_count; v++) {
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->vcpu_cycles[v]);
    cJSON_AddItemToArray(vc, cJSON_CreateRaw(buf));
  }
  json_u64(o, "marks", s->marks);
  cJSON *labels = cJSON_AddObjectToObject(o, "mark_labels");
  for (int i = 0; i <= s->nlabels && i <= LABELS_MAX; i++)
    if (s->labels[i].n) json_u64(labels, s->labels[i].label, s->labels[i].n);
  cJSON *meta = h->metadata[0] ? cJSON_Parse(h->metadata) : NULL;
  if (!meta) meta = h->metadata[0] ? cJSON_CreateString(h->metadata) : cJSON_CreateNull();
  cJSON_AddItemToObject(o, "metadata", meta);
  cJSON *events = cJSON_AddObjectToObject(o, "events");
  for (unsigned t = 0; t < EV_COUNT; t++)
    for (unsigned aux = 0; aux < 256; aux++) {
      char key[32];
      if (!s->by_type[t][aux]) continue;
      event_key(t, aux, key, sizeof key);
      json_u64(events, key, s->by_type[t][aux]);
    }
  char *text = cJSON_Print(o);
  puts(text);
  free(text);
  cJSON_Delete(o);
}

static int trace_info(int argc, char **argv) {
  struct args a;
  int rc = parse_args(argc, argv, false, true, &a);
  if (rc || a.help) return a.help ? (fputs(info_usage, stdout), EXIT_OK) : rc;
  bool json = a.format && strcmp(a.format, "json") == 0;
  if (a.format && !json && strcmp(a.format, "table") != 0) {
    errorf("trace info: unknown format '%s' (table, json); see 'vmxsim trace info --help'", a.format);
    return EXIT_USAGE;
  }
  struct trace_reader r;
  if (trace_open(&r, a.in) != EXIT_OK) {
    errorf("%s", r.err);
    return EXIT_BADINPUT;
  }
  struct summary *s = xcalloc(1, sizeof *s);
  rc = summarise(&r, s);
  if (rc == 0) json ? print_json(&r, s) : print_table(&r, s);
  free(s);
  trace_close(&r);
  return rc;
}

int cmd_trace(int argc, char **argv) {
  if (argc < 2) {
    fputs(trace_usage, stderr);
    return EXIT_USAGE;
  }
  const char *sub = argv[1];
  if (is_opt(sub, "-h", "--help") || strcmp(sub, "help") == 0) {
    fputs(trace_usage, stdout);
    return EXIT_OK;
  }
  if (strcmp(sub, "asm") == 0) return trace_asm(argc - 1, argv + 1);
  if (strcmp(sub, "dump") == 0) return trace_dump(argc - 1, argv + 1);
  if (strcmp(sub, "info") == 0) return trace_info(argc - 1, argv + 1);
  errorf("trace: unknown subcommand '%s' (asm, dump, info); see 'vmxsim trace --help'", sub);
  return EXIT_USAGE;
}
