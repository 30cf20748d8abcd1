/* Shared machinery of the workload generators: option parsing, the guest address layout, metadata and fast event emission. */
#include "genutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/base/outfile.h"
#include "sim/base/util.h"

/* ---- layout ---- */

/* User addresses of a 32-bit process of 2007 (an i386 ELF at 0x08048000, libc
** in the low "ASCII armor" area of exec-shield, the vsyscall page at
** 0xffffe000) and of a 64-bit process (the x86-64 ELF at 0x400000, libc
** near the top of the mmap area).  workloads/README.md, "Address-space
** conventions". */
void gen_layout_init(struct gen_layout *l, unsigned paging) {
  bool is64 = paging == PAGING_64;
  l->paging = paging;
  l->user_code = is64 ? 0x400000 : 0x08048000;
  l->user_pdata = is64 ? 0x601000 : 0x0804a000;
  l->user_data = is64 ? 0x603000 : 0x0804c000;
  l->libc_text = is64 ? 0x7ffff7a3e000ull : 0x00110000;
  l->libc_data = is64 ? 0x7ffff7dd5000ull : 0x00252000;
  l->tls = is64 ? 0x7ffff7fe4000ull : 0xb7f8f000;
  l->vdso = is64 ? 0 : 0xffffe000;
  l->mmap_buf = is64 ? 0x7ffff7800000ull : 0xb7d00000;
  l->malloc_header = is64 ? 16 : 8;
  l->user_stack = is64 ? 0x7ffffffde000ull : 0xbffde000ull;
  l->ktext = is64 ? 0xffffffff81000000ull : 0xC1000000ull;
  l->kdirect = is64 ? 0xffff888000000000ull : 0xC0000000ull;
  l->entry_area = is64 ? 0xfffffe0000000000ull : 0xffc00000ull;
  /* arch/x86/entry/syscalls/syscall_64.tbl and syscall_32.tbl */
  l->nr_read = is64 ? 0 : 3;
  l->nr_write = is64 ? 1 : 4;
  l->nr_getppid = is64 ? 110 : 64;
  l->nr_exit_group = is64 ? 231 : 252;
  l->cr0 = 0x80050033;            /* PG|AM|WP|NE|ET|MP|PE */
  l->cr4 = paging == PAGING_64 ? 0x6f0 : paging == PAGING_PAE ? 0x6b0 : 0x690;
  struct gen_span *u = l->user_loop;
  *u++ = (struct gen_span){ l->user_code, 1, false };
  *u++ = (struct gen_span){ l->user_pdata, 1, true };
  *u++ = (struct gen_span){ l->libc_text, is64 ? 1 : 2, false };   /* i386 PIC: plus the thunk's page */
  *u++ = (struct gen_span){ l->libc_data, 1, true };
  *u++ = (struct gen_span){ l->tls, 1, false };
  if (l->vdso) *u++ = (struct gen_span){ l->vdso, 1, false };
  *u++ = (struct gen_span){ l->user_stack, 1, true };
  l->nuser_loop = (unsigned)(u - l->user_loop);
}

void gen_touch_user_loop(struct gen *g, unsigned vcpu, const struct gen_layout *l) {
  for (unsigned i = 0; i < l->nuser_loop; i++)
    gen_touch(g, vcpu, l->user_loop[i].va, l->user_loop[i].pages, l->user_loop[i].write);
}

unsigned gen_user_loop_pages(const struct gen_layout *l) {
  unsigned n = 0;
  for (unsigned i = 0; i < l->nuser_loop; i++) n += l->user_loop[i].pages;
  return n;
}

uint64_t gen_buffer_addr(const struct gen_layout *l, uint64_t bytes) {
  return (bytes >= 128 * 1024 ? l->mmap_buf : l->user_data) + l->malloc_header;
}

/* ---- errors ---- */

void gen_errf(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

bool gen_check_range(char *err, size_t errlen, const char *opt, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v >= lo && v <= hi) return true;
  gen_errf(err, errlen, "%s must be between %llu and %llu (got %llu)", opt,
           (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)v);
  return false;
}

bool gen_check_ghz(char *err, size_t errlen, double ghz) {
  if (clock_ghz_in_range(ghz)) return true;
  gen_errf(err, errlen, "--cpu-ghz must be above 0 and at most %g (got %g)", CLOCK_GHZ_MAX, ghz);
  return false;
}

bool gen_check_paging(char *err, size_t errlen, unsigned paging) {
  if (paging_name(paging)) return true;
  gen_errf(err, errlen, "--paging must be 32, pae or 64 (got %u)", paging);
  return false;
}

/* ---- writing ---- */

/* A failure of the output (EXIT_IO: not the input's fault) or of the writer's checks. */
static int io_fail(struct gen *g, const char *msg, int rc) {
  gen_errf(g->err, g->errlen, "%s", msg);
  return g->rc = rc;
}

int gen_open(struct gen *g, const char *path, const char *workload, unsigned vcpus,
             unsigned paging, cJSON *meta, char *err, size_t errlen) {
  memset(g, 0, sizeof *g);
  g->err = err;
  g->errlen = errlen;
  if (!path || !*path) {
    gen_errf(err, errlen, "missing -o FILE (the output trace)");
    cJSON_Delete(meta);
    return g->rc = EXIT_USAGE;
  }
  char *json = meta ? cJSON_PrintUnformatted(meta) : NULL;
  cJSON_Delete(meta);
  if (meta && !json) return io_fail(g, "out of memory formatting metadata", EXIT_INTERNAL);
  if (!strcmp(path, "-")) {                  /* the count is not known before the end */
    g->to_stdout = true;
    if ((g->rc = trace_create_stdout(&g->w, workload, vcpus, paging, json, TRACE_COUNT_UNKNOWN)) != EXIT_OK)
      gen_errf(err, errlen, "%s", g->w.err);
    free(json);
    return g->rc;
  }
  if ((g->rc = outfile_begin(&g->out, path, OUTFILE_REGULAR, err, errlen)) != EXIT_OK) {
    free(json);
    return g->rc;
  }
  int rc = trace_create(&g->w, outfile_path(&g->out), workload, vcpus, paging, json);
  if (rc != EXIT_OK) {
    io_fail(g, g->w.err, rc);
    outfile_discard(&g->out);
  } else {
    trace_set_label(&g->w, g->out.target);
  }
  free(json);
  return g->rc;
}

void gen_write_failed(struct gen *g, int rc) { io_fail(g, g->w.err, rc); }

int gen_close(struct gen *g) {
  if (g->to_stdout) {
    if (!g->w.buf) return g->rc;           /* gen_open failed */
    int rc;
    if (g->rc != EXIT_OK) trace_abort(&g->w);
    else if ((rc = trace_finish(&g->w)) != EXIT_OK) io_fail(g, g->w.err, rc);
    return g->rc;
  }
  if (!g->out.target) return g->rc;       /* gen_open failed */
  int rc;
  if (g->rc != EXIT_OK) {
    trace_abort(&g->w);
  } else if ((rc = trace_finish(&g->w)) != EXIT_OK) {
    io_fail(g, g->w.err, rc);
  } else if ((rc = outfile_commit(&g->out, g->err, g->errlen)) != EXIT_OK) {
    return g->rc = rc;
  }
  if (g->rc != EXIT_OK) outfile_discard(&g->out);
  return g->rc;
}

void gen_run(struct gen *g, unsigned vcpu, uint64_t cycles) {
  while (cycles > UINT32_MAX) {
    gen_ev(g, vcpu, EV_RUN, 0, 0, 0, UINT32_MAX);
    cycles -= UINT32_MAX;
  }
  if (cycles) gen_ev(g, vcpu, EV_RUN, 0, 0, 0, (uint32_t)cycles);
}

struct gen_label gen_label_make(const char *text) {
  unsigned char bytes[MARK_LABEL_MAX] = { 0 };
  memcpy(bytes, text, strnlen(text, MARK_LABEL_MAX));
  struct gen_label l = { 0, 0 };
  for (int i = 7; i >= 0; i--) {
    l.a = l.a << 8 | bytes[i];
    l.b = l.b << 8 | bytes[8 + i];
  }
  return l;
}

void gen_init_vcpu(struct gen *g, const struct gen_layout *l, unsigned vcpu, uint64_t cr3) {
  gen_ev(g, vcpu, EV_INIT, 0, l->cr0, 0, 0);
  gen_ev(g, vcpu, EV_INIT, 3, cr3, 0, 0);
  gen_ev(g, vcpu, EV_INIT, 4, l->cr4, 0, 0);
}

void gen_init_vcpus(struct gen *g, const struct gen_layout *l, unsigned nvcpu, uint64_t cr3) {
  for (unsigned v = 0; v < nvcpu; v++) gen_init_vcpu(g, l, v, cr3);
}

/* ---- native time ---- */

uint64_t gen_us_to_cycles(double us, double ghz) {
  double c = us * ghz * 1000.0;
  return c <= 0 ? 0 : (uint64_t)(c + 0.5);
}

double gen_interp(const double *xs, const double *ys, size_t n, double x) {
  if (x <= xs[0]) return ys[0];
  for (size_t i = 1; i < n; i++)
    if (x <= xs[i]) return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return ys[n - 1];
}

/* ---- metadata ---- */

cJSON *gen_meta_new(const char *generator, int model_version) {
  cJSON *m = cJSON_CreateObject();
  if (!m) { errorf("out of memory"); exit(EXIT_INTERNAL); }
  gen_meta_str(m, "generator", generator);
  gen_meta_num(m, "model_version", model_version);
  return m;
}

void gen_meta_num(cJSON *meta, const char *key, double value) { cJSON_AddNumberToObject(meta, key, value); }
void gen_meta_str(cJSON *meta, const char *key, const char *value) { cJSON_AddStringToObject(meta, key, value); }
void gen_meta_bool(cJSON *meta, const char *key, bool value) { cJSON_AddBoolToObject(meta, key, value); }

void gen_meta_sources(cJSON *meta, const char *const *sources) {
  cJSON *a = cJSON_AddArrayToObject(meta, "sources");
  for (size_t i = 0; a && sources[i]; i++) cJSON_AddItemToArray(a, cJSON_CreateString(sources[i]));
}

/* ---- command-line options ---- */

/* The output option every generator takes (its value goes to gen_parse_args' *out). */
static const struct gen_opt output_opts[] = { { "--output", "-o", GO_STRING, NULL, NULL, false }, { 0 } };

static const struct gen_opt *find_opt(const struct gen_opt *opts, const char *arg, size_t len) {
  for (const struct gen_opt *o = opts; o->name; o++) {
    if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0) return o;
    if (o->short_name && strlen(o->short_name) == len && strncmp(o->short_name, arg, len) == 0) return o;
  }
  return NULL;
}

static void choice_list(const char *const *choices, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t i = 0; choices[i] && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? (choices[i + 1] ? ", " : " or ") : "", choices[i]);
}

/* Stores the value v of option o in dest; returns 0 or EXIT_USAGE with the message in err. */
static int store_value(const struct gen_opt *o, void *dest, const char *v, char *err, size_t errlen) {
  char list[128];
  switch (o->kind) {
  case GO_UINT:
    if (parse_u64(v, dest)) return EXIT_OK;
    gen_errf(err, errlen, "%s: expected a whole number >= 0, got '%s'%s", o->name, v, parse_u64_hint(v));
    return EXIT_USAGE;
  case GO_DOUBLE:                           /* the range is the generator's check (0 may be valid) */
    if (parse_double(v, dest)) return EXIT_OK;
    gen_errf(err, errlen, "%s: expected a number, got '%s'", o->name, v);
    return EXIT_USAGE;
  case GO_CHOICE:
    for (int i = 0; o->choices[i]; i++)
      if (strcmp(o->choices[i], v) == 0) { *(int *)dest = i; return EXIT_OK; }
    choice_list(o->choices, list, sizeof list);
    gen_errf(err, errlen, "%s: unknown value '%s' (expected %s)", o->name, v, list);
    return EXIT_USAGE;
  case GO_PAGING: {
    int p = paging_from_name(v);
    if (p >= 0) { *(unsigned *)dest = (unsigned)p; return EXIT_OK; }
    gen_errf(err, errlen, "%s: unknown paging mode '%s' (expected 32, pae or 64)", o->name, v);
    return EXIT_USAGE;
  }
  case GO_STRING:
    if (*v) { *(const char **)dest = v; return EXIT_OK; }
    gen_errf(err, errlen, "%s: empty value", o->name);
    return EXIT_USAGE;
  case GO_FLAG:
    break;
  }
  gen_errf(err, errlen, "%s takes no value", o->name);
  return EXIT_USAGE;
}

/* The first option in opts that is required but was not seen, or NULL. */
static const struct gen_opt *missing_opt(const struct gen_opt *opts, const bool *seen) {
  for (const struct gen_opt *o = opts; o->name; o++)
    if (o->required && !seen[o - opts]) return o;
  return NULL;
}

int gen_parse_args(int argc, char **argv, const struct gen_opt *opts, const char **out, char *err, size_t errlen) {
  bool seen[64] = { false };
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || !arg[1]) {
      gen_errf(err, errlen, "unexpected argument '%s'", arg);
      return EXIT_USAGE;
    }
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const struct gen_opt *o = find_opt(opts, arg, len);
    if (!o && !find_opt(output_opts, arg, len)) {
      gen_errf(err, errlen, "unknown option '%s'", arg);
      return EXIT_USAGE;
    }
    if (o) seen[o - opts] = true;
    else o = output_opts;
    if (o->kind == GO_FLAG) {
      if (eq) { gen_errf(err, errlen, "%s takes no value", o->name); return EXIT_USAGE; }
      *(bool *)o->dest = true;
      continue;
    }
    const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (!v) { gen_errf(err, errlen, "%s needs a value", o->name); return EXIT_USAGE; }
    if (store_value(o, o == output_opts ? (void *)out : o->dest, v, err, errlen)) return EXIT_USAGE;
  }
  const struct gen_opt *m = missing_opt(opts, seen);
  if (m) gen_errf(err, errlen, "missing required option %s", m->name);
  else if (!*out) gen_errf(err, errlen, "missing -o FILE (the output trace)");
  return m || !*out ? EXIT_USAGE : EXIT_OK;
}
