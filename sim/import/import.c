/* The importer library: import state, counting and metadata, and a whole
** import from input file to trace file.  The line-parsing helpers and maps
** the formats share are import_parse.c; the formats themselves are
** import_perf.c, import_ftrace.c, import_xen.c and import_tracecmd.c. */
#include "import.h"
#include "import_int.h"
#include "sim/base/outfile.h"
#include "sim/trace/zin.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- state ---- */

/* Default @init values for the paging mode (CR3: process 0's). */
static void import_default_init(const struct import *im, struct import_init *init) {
  /* Same CR4 per paging mode as the generators (workloads/genutil.c), so an
  ** imported trace and a generated one replay from the same state. */
  init->cr0 = IMPORT_CR0_INIT;
  init->cr3 = import_cr3_of(0);
  init->cr4 = im->opt.paging == PAGING_64 ? 0x6f0 : im->opt.paging == PAGING_PAE ? 0x6b0 : 0x690;
  init->cr3_known = false;
}

void import_init(struct import *im, const struct import_opts *opt, import_emit_fn emit, void *ctx) {
  memset(im, 0, sizeof *im);
  im->map_fd = -1;
  im->opt = *opt;
  if (!(im->opt.cpu_ghz > 0)) im->opt.cpu_ghz = IMPORT_GHZ_DEFAULT;
  if (!paging_name(im->opt.paging)) im->opt.paging = PAGING_64;
  if (!im->opt.input) im->opt.input = "<input>";
  im->emit = emit;
  im->emit_ctx = ctx;
  for (unsigned v = 0; v < TRACE_VCPU_MAX; v++) {
    import_default_init(im, &im->init[v]);
    im->native_cpu[v] = -1;
  }
  im->meta = cJSON_CreateObject();
}

void import_free(struct import *im) {
  import_map_free(&im->cpu_map);
  cJSON_Delete(im->meta);
  im->meta = NULL;
}


uint64_t import_cr3_of(unsigned n) { return IMPORT_CR3_BASE + (uint64_t)n * IMPORT_CR3_STRIDE; }

void import_use_vcpu(struct import *im, unsigned v) {
  if (v < TRACE_VCPU_MAX && v >= im->nvcpus) im->nvcpus = v + 1;
}

int import_vcpu_of_cpu(struct import *im, int64_t cpu) {
  int64_t *slot = import_map_get(&im->cpu_map, (uint32_t)cpu);
  if (slot) return (int)*slot;
  if (im->nvcpus >= TRACE_VCPU_MAX) return -1;
  unsigned v = im->nvcpus++;
  im->native_cpu[v] = cpu;
  *import_map_put(&im->cpu_map, (uint32_t)cpu, v) = v;
  return (int)v;
}

void import_add_native_cpus(struct import *im, const char *key) {
  cJSON *cpus = cJSON_AddArrayToObject(im->meta, key);
  for (unsigned v = 0; v < im->nvcpus; v++) cJSON_AddItemToArray(cpus, cJSON_CreateNumber((double)im->native_cpu[v]));
}

/* The @init records of vCPU v: CR0, CR3, CR4. */
static void init_of(const struct import *im, unsigned v, struct trace_event evs[3]) {
  const struct import_init *in = &im->init[v];
  const uint64_t val[3] = { in->cr0, in->cr3, in->cr4 };
  const uint8_t cr[3] = { 0, 3, 4 };
  for (int i = 0; i < 3; i++)
    evs[i] = (struct trace_event){ .type = EV_INIT, .aux = cr[i], .vcpu = (uint16_t)v, .a = val[i] };
}

/* Before vCPU v's first record: its initial registers are fixed (struct
** import_init), and a one-pass reader is given them now. */
int import_first_record(struct import *im, unsigned v) {
  im->init[v].fixed = true;
  if (!im->opt.inits_inline) return 0;
  struct trace_event evs[3];
  init_of(im, v, evs);
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++) rc = im->emit(im->emit_ctx, &evs[i]);
  return rc;
}

int import_run_long(struct import *im, unsigned vcpu, uint64_t cycles) {
  while (cycles) {
    uint32_t c = cycles > UINT32_MAX ? UINT32_MAX : (uint32_t)cycles;
    struct trace_event ev = { .type = EV_RUN, .vcpu = (uint16_t)vcpu, .cycles = c };
    int rc = import_before_record(im, vcpu);
    if (rc) return rc;
    if ((rc = im->emit(im->emit_ctx, &ev))) return rc;
    cycles -= c;
  }
  return 0;
}

int import_mark(struct import *im, unsigned vcpu, const char *label) {
  uint64_t ab[2] = { 0, 0 };
  for (size_t i = 0; label[i] && i < MARK_LABEL_MAX; i++)
    ab[i / 8] |= (uint64_t)(unsigned char)label[i] << (8 * (i % 8));
  return import_emit(im, vcpu, EV_MARK, 0, ab[0], ab[1]);
}

void import_release_slow(struct import *im, const void *buf, size_t upto) {
  if ((const char *)buf != im->map_base) return;     /* not the mapped input (a converted text) */
  size_t page = (size_t)sysconf(_SC_PAGESIZE), end = upto / page * page;
  if (end > im->map_released) madvise((void *)(im->map_base + im->map_released), end - im->map_released, MADV_DONTNEED);
  im->map_released = end;
}

void import_populate_slow(struct import *im, const void *buf, size_t at) {
  if ((const char *)buf != im->map_base) return;     /* not the mapped input */
  size_t page = (size_t)sysconf(_SC_PAGESIZE), from = at / page * page, end = from + IMPORT_POPULATE_STEP;
  if (end > im->map_len) end = im->map_len;
  im->map_populated = end;
#ifdef MADV_POPULATE_READ
  if (end > from) (void)madvise((void *)(im->map_base + from), end - from, MADV_POPULATE_READ);   /* a hint: faults stay the fallback */
#endif
}

uint64_t import_ns_to_cycles(const struct import *im, uint64_t ns) {
  double c = (double)ns * im->opt.cpu_ghz + 0.5;
  return c < 18446744073709551616.0 ? (uint64_t)c : UINT64_MAX;   /* 2^64: converting more is undefined */
}

/* Copies at most IMPORT_TEXT_MAX bytes, with control characters shown as '?'. */
static void quote_text(char *dst, const char *s, size_t len) {
  size_t n = len < IMPORT_TEXT_MAX ? len : IMPORT_TEXT_MAX;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  dst[n] = 0;
  if (len > IMPORT_TEXT_MAX && n >= 3) memcpy(dst + n - 3, "...", 3);
}

void import_format_bad(const struct import *im, const struct import_bad *b, char *out, size_t n) {
  if (im->binary)
    snprintf(out, n, "%s: byte %llu: %s", im->opt.input, (unsigned long long)b->where, b->why);
  else
    snprintf(out, n, "%s:%llu: %s: '%s'", im->opt.input, (unsigned long long)b->where, b->why, b->text);
}

int import_bad(struct import *im, uint64_t where, const char *text, size_t len, const char *why) {
  struct import_bad b = { .where = where };
  snprintf(b.why, sizeof b.why, "%s", why);
  quote_text(b.text, text ? text : "", text ? len : 0);
  im->bad++;
  if (im->nbad_kept < IMPORT_BAD_KEEP) im->first_bad[im->nbad_kept++] = b;
  if (im->opt.skip_bad) return 0;
  import_format_bad(im, &b, im->err, sizeof im->err);
  return EXIT_BADINPUT;
}

/* FNV-1a: names are short, so a byte loop is cheap; the bit marks a named key. */
static uint64_t fnv(uint64_t h, const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}
static uint64_t name_key(const char *s, size_t len) { return fnv(0xcbf29ce484222325ull, s, len) | IMPORT_TALLY_NAMED; }

/* The slot of key (a new one while there is room), or IMPORT_NAMES_MAX for "(other)". */
static unsigned tally_slot(struct import_tally *t, uint64_t key, bool *fresh) {
  *fresh = false;
  for (unsigned i = 0; i < t->n; i++)
    if (t->key[i] == key) return i;
  if (t->n == IMPORT_NAMES_MAX) return IMPORT_NAMES_MAX;
  t->key[t->n] = key;
  *fresh = true;
  return t->n++;
}

void import_tally_id(struct import_tally *t, uint64_t key) {
  bool fresh;
  t->count[tally_slot(t, key & ~IMPORT_TALLY_NAMED, &fresh)]++;
}

unsigned import_tally_id_slot(struct import_tally *t, uint64_t key) {
  bool fresh;
  return tally_slot(t, key & ~IMPORT_TALLY_NAMED, &fresh);
}

unsigned import_tally_name_slot(struct import_tally *t, const char *name, size_t len) {
  bool fresh;
  unsigned i = tally_slot(t, name_key(name, len), &fresh);
  if (fresh) snprintf(t->name[i], sizeof t->name[i], "%.*s", (int)(len < 47 ? len : 47), name);
  return i;
}

void import_tally_name(struct import_tally *t, const char *name, size_t len) {
  t->count[import_tally_name_slot(t, name, len)]++;
}

void import_tally_name2(struct import_tally *t, const char *name, size_t len, const char *suffix) {
  bool fresh;
  size_t slen = strlen(suffix);
  unsigned i = tally_slot(t, fnv(fnv(0xcbf29ce484222325ull, name, len), suffix, slen) | IMPORT_TALLY_NAMED, &fresh);
  if (fresh) snprintf(t->name[i], sizeof t->name[i], "%.*s%s", (int)(len < 24 ? len : 24), name, suffix);
  t->count[i]++;
}

uint64_t import_tally_total(const struct import_tally *t) {
  uint64_t n = t->count[IMPORT_NAMES_MAX];
  for (unsigned i = 0; i < t->n; i++) n += t->count[i];
  return n;
}

void import_tally_json(cJSON *obj, const char *key, const struct import_tally *t, import_namer_fn namer) {
  cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!o) o = cJSON_AddObjectToObject(obj, key);
  for (unsigned i = 0; i < t->n; i++) {
    char buf[64];
    if (t->key[i] & IMPORT_TALLY_NAMED) snprintf(buf, sizeof buf, "%s", t->name[i]);
    else namer(t->key[i], buf, sizeof buf);
    cJSON_AddNumberToObject(o, buf, (double)t->count[i]);
  }
  if (t->count[IMPORT_NAMES_MAX]) cJSON_AddNumberToObject(o, "(other)", (double)t->count[IMPORT_NAMES_MAX]);
}

void import_skip(struct import *im, const char *name, size_t len) {
  im->skipped++;
  import_tally_name(&im->skipped_names, name, len);
}

int import_skip_why(struct import *im, const char *why) {
  import_skip(im, why, strlen(why));
  return 0;
}

int import_skip_id(struct import *im, uint64_t id) {
  im->skipped++;
  import_tally_id(&im->skipped_ids, id);
  return 0;
}

static void hex_namer(uint64_t key, char *buf, size_t n) { snprintf(buf, n, "0x%08llx", (unsigned long long)key); }

/* Metadata JSON (caller frees): source, command, counts, bad lines, importer members. */
static char *import_metadata(const struct import *im, const char *source, const char *command) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "source", source);
  cJSON_AddStringToObject(o, "input", im->opt.input);
  cJSON_AddStringToObject(o, "command", command);
  if (!im->binary) cJSON_AddNumberToObject(o, "cpu_ghz", im->opt.cpu_ghz);
  cJSON *c = cJSON_AddObjectToObject(o, im->binary ? "records" : "lines");
  cJSON_AddNumberToObject(c, "total", (double)im->units);
  cJSON_AddNumberToObject(c, "used", (double)im->used);
  cJSON_AddNumberToObject(c, "skipped", (double)im->skipped);
  cJSON_AddNumberToObject(c, "unparseable", (double)im->bad);
  if (!im->binary) cJSON_AddNumberToObject(c, "comments", (double)im->ignored);
  import_tally_json(o, "skipped_events", &im->skipped_ids, im->skip_namer ? im->skip_namer : hex_namer);
  import_tally_json(o, "skipped_events", &im->skipped_names, hex_namer);
  cJSON *bad = cJSON_AddArrayToObject(o, "unparseable");
  for (unsigned i = 0; i < im->nbad_kept; i++) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddNumberToObject(b, im->binary ? "byte" : "line", (double)im->first_bad[i].where);
    cJSON_AddStringToObject(b, "why", im->first_bad[i].why);
    if (!im->binary) cJSON_AddStringToObject(b, "text", im->first_bad[i].text);
    cJSON_AddItemToArray(bad, b);
  }
  for (cJSON *m = im->meta ? im->meta->child : NULL; m; m = m->next)
    cJSON_AddItemToObject(o, m->string, cJSON_Duplicate(m, true));
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* ---- input ---- */

/* Reads all of a stream (standard input, a pipe, a compressed file) into memory. */
/* Reads fd (its own from here on), or standard input when fd is -1, into memory. */
static int input_slurp(struct input *in, int fd, const char *path, char *err, size_t errlen) {
  struct zin z;
  int rc = fd >= 0 ? zin_open_fd(&z, fd, path) : zin_open(&z, path);
  size_t cap = 1 << 16, n = 0;
  char *buf = rc ? NULL : xmalloc(cap);
  ssize_t got = 0;
  while (!rc && (got = zin_read(&z, buf + n, cap - n)) > 0)
    if ((n += (size_t)got) == cap) buf = xrealloc(buf, cap *= 2);
  if (!rc && got < 0) rc = EXIT_BADINPUT;
  if (rc) {
    snprintf(err, errlen, "%s", z.err);
    free(buf);
  } else {
    in->data = buf;
    in->len = n;
  }
  zin_close(&z);
  return rc;
}

/* Maps a regular uncompressed file; reads anything else (standard input "-",
** a pipe, a gzip, xz or zstd file, recognised by its first bytes) into memory. */
int import_input_open(struct input *in, const char *path, char *err, size_t errlen) {
  memset(in, 0, sizeof *in);
  if (!strcmp(path, "-")) return input_slurp(in, -1, path, err, errlen);
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return EXIT_BADINPUT;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: is a directory", path);
    close(fd);
    return EXIT_BADINPUT;
  }
  unsigned char magic[ZIN_MAGIC_MAX];
  ssize_t m = S_ISREG(st.st_mode) ? pread(fd, magic, sizeof magic, 0) : -1;
  if (m > 0 && zin_detect(magic, (size_t)m) == ZIN_PLAIN) {
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
      in->data = map; in->len = (size_t)st.st_size; in->mapped = true; in->fd = fd;
      return EXIT_OK;
    }
  }
  /* read through the descriptor already open: a FIFO opened again would wait
  ** for ever once its writer had finished */
  return input_slurp(in, fd, path, err, errlen);
}

void import_input_close(struct input *in) {
  if (!in->data) return;
  if (in->mapped) {
    munmap((void *)in->data, in->len);
    close(in->fd);
  } else {
    free((void *)in->data);
  }
}

/* ---- output: the trace, written once ---- */

/* Room before the records for the header, the metadata and the @init records:
** the importer writes its events first and these at the end (trace_create_reserved). */

static int writer_emit(void *ctx, const struct trace_event *ev) { return trace_write(ctx, ev); }

/* The @init records: CR0, CR3, CR4 of every vCPU. */
static size_t init_records(const struct import *im, struct trace_event *evs) {
  for (unsigned v = 0; v < im->nvcpus; v++) init_of(im, v, evs + 3 * v);
  return 3 * (size_t)im->nvcpus;
}

/* Metadata that fits its room: the largest free-form members go first, and it says so. */
static char *bounded_metadata(const struct import *im, const char *source, const char *command) {
  static const char *const drop[] = { "recording", "unparseable", "command", "skipped_events", "input" };
  char *meta = import_metadata(im, source, command);
  for (size_t i = 0; strlen(meta) > IMPORT_META_MAX && i < sizeof drop / sizeof *drop; i++) {
    cJSON *j = cJSON_Parse(meta);
    free(meta);
    cJSON_DeleteItemFromObjectCaseSensitive(j, drop[i]);
    if (!cJSON_GetObjectItemCaseSensitive(j, "metadata_truncated")) cJSON_AddTrueToObject(j, "metadata_truncated");
    meta = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
  }
  return meta;
}

/* Default workload name: the input's base name without its extension. */
static void default_workload(const char *in, char *out, size_t n) {
  const char *b = strrchr(in, '/');
  b = b ? b + 1 : in;
  snprintf(out, n, "%s", strcmp(in, "-") == 0 ? "import" : b);
  char *dot = strchr(out, '.');
  if (dot && dot != out) *dot = 0;
}

/* ---- a whole import ---- */

/* The importers: each row is defined in its importer's file.  The order is
** the order `vmxsim import --help` and the messages list them in. */
extern const struct import_format import_perf_format, import_kvm_ftrace_format, import_xentrace_format,
  import_tracecmd_format;
static const struct import_format *const formats[] = {
  &import_perf_format,
  &import_kvm_ftrace_format,
  &import_xentrace_format,
  &import_tracecmd_format,
  NULL,
};

const struct import_format *const *import_formats(void) { return formats; }

const struct import_format *import_format_find(const char *name) {
  for (const struct import_format *const *f = formats; *f; f++)
    if (strcmp(name, (*f)->name) == 0) return *f;
  return NULL;
}

/* The rows' names, or (recordings) their recordings, or (looks_for) what their text probes look for. */
enum format_word { WORD_NAME, WORD_RECORDING, WORD_LOOKS_FOR };

static const char *format_word(const struct import_format *f, enum format_word w) {
  return w == WORD_NAME ? f->name : w == WORD_RECORDING ? f->recording : f->looks_for;
}

/* The rows' words (those they have) joined by sep, the last two by last. */
static void join_formats(char *buf, size_t n, enum format_word w, const char *sep, const char *last) {
  size_t used = 0, total = 0, i = 0;
  buf[0] = 0;
  for (const struct import_format *const *f = formats; *f; f++) total += format_word(*f, w) != NULL;
  for (const struct import_format *const *f = formats; *f && used < n; f++) {
    const char *word = format_word(*f, w);
    if (!word) continue;
    used += (size_t)snprintf(buf + used, n - used, "%s%s", i == 0 ? "" : i + 1 == total ? last : sep, word);
    i++;
  }
}

void import_format_names(char *buf, size_t n, const char *sep, const char *last) {
  join_formats(buf, n, WORD_NAME, sep, last);
}

/* The surest probe's row for the file's first n bytes (head[n] is 0); NULL: none knows them. */
static const struct import_format *probe_formats(const unsigned char *head, size_t n) {
  const char *text = memchr(head, 0, n) ? NULL : (const char *)head;
  const struct import_format *best = NULL;
  int best_score = IMPORT_PROBE_NO;
  for (const struct import_format *const *f = formats; *f; f++) {
    int score = (*f)->probe(head, n, text);
    if (score > best_score) {
      best = *f;
      best_score = score;
    }
  }
  return best;
}

const struct import_format *import_detect(const char *path, char *err, size_t errlen) {
  unsigned char head[65536];
  err[0] = 0;
  if (!strcmp(path, "-")) return NULL;       /* standard input is read once: taken for a trace */
  struct stat st;                            /* so is a pipe (a FIFO, <(zcat ...)): reading its head here */
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return NULL;   /* would lose it */
  struct zin z;                              /* the head of the content, decompressed */
  int zrc = zin_open(&z, path);
  ssize_t got = zrc ? -1 : zin_read(&z, head, sizeof head - 1);
  if (got < 0) snprintf(err, errlen, "%s", z.err);
  zin_close(&z);
  if (got < 0) return NULL;
  size_t n = (size_t)got;
  head[n] = 0;
  if (n >= 8 && memcmp(head, TRACE_MAGIC, 8) == 0) return NULL;
  const struct import_format *f = probe_formats(head, n);
  if (f) return f;
  char what[256];
  if (memchr(head, 0, n)) {
    join_formats(what, sizeof what, WORD_RECORDING, ", ", " or ");
    snprintf(err, errlen, "%s: neither a vmxsim trace nor a recording vmxsim reads (%s); --input-format names it",
             path, what);
  } else {
    join_formats(what, sizeof what, WORD_LOOKS_FOR, ", ", " or ");
    snprintf(err, errlen, "%s: not a vmxsim trace (bad magic), and its first 64 KiB hold no %s; --input-format "
             "names the recording's format, 'vmxsim trace asm' assembles text traces", path, what);
  }
  return NULL;
}

/* Copies the decompressed content of z into path: 0, or an exit code with the message in err. */
static int decompress_to(struct zin *z, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return EXIT_IO;
  }
  enum { CHUNK = 1 << 16 };
  unsigned char *buf = xmalloc(CHUNK);
  ssize_t n;
  int rc = EXIT_OK;
  while ((n = zin_read(z, buf, CHUNK)) > 0)
    if (fwrite(buf, 1, (size_t)n, f) != (size_t)n) {
      snprintf(err, errlen, "%s: %s", path, strerror(errno));
      rc = EXIT_IO;
      break;
    }
  if (n < 0) {
    snprintf(err, errlen, "%s", z->err);
    rc = EXIT_BADINPUT;
  }
  free(buf);
  if (fclose(f) != 0 && !rc) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    rc = EXIT_IO;
  }
  return rc;
}

/* A format read by path (trace.dat, through its own library): a compressed
** file is decompressed into a scratch directory first, as every other input
** is read through zin, and the scratch copy is removed after. */
static int run_by_path(const struct import_job *job, struct import *im) {
  struct zin z;
  int rc = zin_open(&z, job->input);
  if (rc || z.kind == ZIN_PLAIN) {
    zin_close(&z);
    return job->format->run_path(im, job->input);
  }
  char *dir = NULL;
  if ((rc = outfile_tmpdir("vmxsim-decompress", &dir, im->err, sizeof im->err))) {
    zin_close(&z);
    return rc;
  }
  size_t n = strlen(dir) + 16;
  char *path = xmalloc(n);
  snprintf(path, n, "%s/input", dir);
  rc = decompress_to(&z, path, im->err, sizeof im->err);
  zin_close(&z);
  if (!rc) rc = job->format->run_path(im, path);
  unlink(path);
  outfile_tmpdir_remove(dir);
  free(path);
  free(dir);
  return rc;
}

int import_convert(const struct import_job *job, struct import *im, const struct input *in) {
  return job->format->run_path ? run_by_path(job, im) : job->format->run(im, in->data, in->len);
}

int import_head_of(const struct import_job *job, struct import *im, struct import_head *h, char *err, size_t errlen) {
  memset(h, 0, sizeof *h);
  import_coverage(im, job->format);
  if (im->used == 0) {
    /* Nothing recognised: most likely another format, or the wrong events recorded. */
    const char *f = job->format->name;
    snprintf(err, errlen, "%s: no %s events found in it; is it %s output? (see 'vmxsim import %s --help')",
             im->opt.input, f, f, f);
    return EXIT_BADINPUT;
  }
  if (job->workload) snprintf(h->workload, sizeof h->workload, "%s", job->workload);
  else default_workload(job->input, h->workload, sizeof h->workload);
  if (!im->nvcpus) im->nvcpus = 1;
  h->inits = xmalloc(3 * TRACE_VCPU_MAX * sizeof *h->inits);
  h->ninits = init_records(im, h->inits);
  h->meta = bounded_metadata(im, job->format->name, job->command);
  return EXIT_OK;
}

void import_head_free(struct import_head *h) {
  free(h->meta);
  free(h->inits);
  h->meta = NULL;
  h->inits = NULL;
}

/* Converts the input, then completes the trace: header, metadata, @init records. */
static int convert(const struct import_job *job, struct import *im, struct trace_writer *w, const struct input *in,
                   char *err, size_t errlen) {
  int rc = import_convert(job, im, in);
  if (rc) {
    snprintf(err, errlen, "%s", w->err[0] ? w->err : im->err);
    return rc;
  }
  struct import_head h;
  if ((rc = import_head_of(job, im, &h, err, errlen))) return rc;
  rc = trace_finish_reserved(w, h.workload, im->nvcpus, im->opt.paging, h.meta, h.inits, h.ninits);
  if (rc) snprintf(err, errlen, "%s: %s", job->output, w->err);
  import_head_free(&h);
  return rc;
}

static int import_to_file(const struct import_job *job, struct import *im, char *err, size_t errlen) {
  struct import_opts opt = job->opt;
  opt.input = strcmp(job->input, "-") == 0 ? "<stdin>" : job->input;
  struct trace_writer w;
  struct outfile o;
  import_init(im, &opt, writer_emit, &w);
  im->binary = job->format->binary;
  struct input in = { .data = NULL };
  int rc = 0;
  if (job->format->run_path && strcmp(job->input, "-") == 0) {
    snprintf(err, errlen, "%s input cannot be standard input: give the file", job->format->name);
    return EXIT_USAGE;
  }
  if (!job->format->run_path && (rc = import_input_open(&in, job->input, err, errlen))) return rc;
  if (in.mapped) { im->map_base = in.data; im->map_len = in.len; }
  if ((rc = outfile_begin(&o, job->output, OUTFILE_REGULAR, err, errlen))) {
    import_input_close(&in);
    return rc;
  }
  if ((rc = trace_create_reserved(&w, outfile_path(&o), o.target, IMPORT_RESERVE))) {
    snprintf(err, errlen, "%s", w.err);
  } else {
    rc = convert(job, im, &w, &in, err, errlen);   /* finishes w, or leaves it open on failure */
    if (rc && w.f) trace_abort(&w);
  }
  if (!rc) rc = outfile_commit(&o, err, errlen);
  else outfile_discard(&o);
  import_input_close(&in);
  im->emit = NULL;                   /* the writer is gone */
  im->emit_ctx = NULL;
  im->map_base = NULL;
  return rc;
}

/* Copies the file at path to standard output; 0 or EXIT_IO with the message in err. */
static int copy_to_stdout(const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  char buf[1 << 16];
  size_t n;
  bool ok = f != NULL;
  while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0) ok = fwrite(buf, 1, n, stdout) == n;
  if (f && ferror(f)) ok = false;
  if (fflush(stdout) != 0) ok = false;
  if (f) fclose(f);
  if (!ok) snprintf(err, errlen, "<stdout>: write failed: %s", strerror(errno));
  return ok ? EXIT_OK : EXIT_IO;
}

int import_file(const struct import_job *job, struct import *im, char *err, size_t errlen) {
  if (strcmp(job->output, "-")) return import_to_file(job, im, err, errlen);
  /* -o -: the trace is completed at its start last (trace_finish_reserved), so it is
  ** written to a scratch file first and copied out whole. */
  if (isatty(STDOUT_FILENO)) {
    snprintf(err, errlen, "-o -: standard output is a terminal; a binary trace belongs in a file or a pipe "
             "('| vmxsim trace dump -' shows it as text)");
    return EXIT_USAGE;
  }
  char *dir;
  int rc = outfile_tmpdir("vmxsim-import", &dir, err, errlen);
  if (rc) {
    memset(im, 0, sizeof *im);
    return rc;
  }
  size_t plen = strlen(dir) + sizeof "/trace.bin";
  char *path = xmalloc(plen);
  snprintf(path, plen, "%s/trace.bin", dir);
  struct import_job tmp = *job;
  tmp.output = path;
  rc = import_to_file(&tmp, im, err, errlen);
  if (!rc) rc = copy_to_stdout(path, err, errlen);
  remove(path);
  outfile_tmpdir_remove(dir);
  free(path);
  free(dir);
  return rc;
}
