/* Unit tests for the workload generators: event counts and structure, determinism, parameter errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/trace/trace.h"
#include "workloads/gen_cr4toggle.h"
#include "workloads/gen_debug.h"
#include "workloads/gen_hackbench.h"
#include "workloads/gen_interrupts.h"
#include "workloads/gen_ipi.h"
#include "workloads/gen_latctx.h"
#include "workloads/gen_syscalls.h"
#include "workloads/generators.h"
#include "models/mmu/mmu.h"

#define MAX_LOGGED 64

/* What a trace holds, counted by scan(). */
struct scan {
  struct trace_header hdr;
  cJSON *meta;
  uint64_t records, cycles, by_type[EV_COUNT];
  uint64_t cycles_nonrun;              /* native cycles on records other than `run` */
  uint64_t per_vcpu_marks[4];
  uint64_t init_value[4][5];           /* [vcpu][CR] from @init */
  uint64_t cr3[MAX_LOGGED], cr4[MAX_LOGGED], dr[MAX_LOGGED], sysnr[MAX_LOGGED];
  unsigned dr_reg[MAX_LOGGED];
  size_t ncr3, ncr4, ndr, nsys;
  uint64_t cr3_writes, cr4_writes, dr_writes;
  uint64_t min_kernel_touch, max_user_touch, max_touch_pages;
  uint64_t cycles_between_marks[MAX_LOGGED];
  size_t nmarks_logged;
  char label[MARK_LABEL_MAX + 1];
  bool init_after_events;              /* an @init record after an event: wrong */
};

static char tmpdir[256];

static const char *path_in_tmp(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
  return buf[k];
}

static void log_value(uint64_t *arr, size_t *n, uint64_t v) {
  if (*n < MAX_LOGGED) arr[*n] = v;
  (*n)++;
}

static void scan_event(struct scan *s, const struct trace_event *ev, uint64_t *since_mark) {
  s->records++;
  s->by_type[ev->type]++;
  s->cycles += ev->cycles;
  *since_mark += ev->cycles;
  if (ev->type != EV_RUN) s->cycles_nonrun += ev->cycles;
  switch (ev->type) {
  case EV_INIT:
    if (s->records > 3u * s->hdr.vcpu_count) s->init_after_events = true;
    if (ev->vcpu < 4 && ev->aux < 5) s->init_value[ev->vcpu][ev->aux] = ev->a;
    break;
  case EV_CR_WRITE:
    if (ev->aux == 3) { s->cr3_writes++; log_value(s->cr3, &s->ncr3, ev->a); }
    if (ev->aux == 4) { s->cr4_writes++; log_value(s->cr4, &s->ncr4, ev->a); }
    break;
  case EV_DR_WRITE:
    if (s->ndr < MAX_LOGGED) s->dr_reg[s->ndr] = ev->aux;
    s->dr_writes++;
    log_value(s->dr, &s->ndr, ev->a);
    break;
  case EV_SYSCALL: log_value(s->sysnr, &s->nsys, ev->a); break;
  case EV_TOUCH:
    if (ev->b > s->max_touch_pages) s->max_touch_pages = ev->b;
    if (ev->a >= (s->hdr.paging == PAGING_64 ? 0xffff800000000000ull : 0xC0000000ull)) { if (!s->min_kernel_touch || ev->a < s->min_kernel_touch) s->min_kernel_touch = ev->a; }
    else if (ev->a > s->max_user_touch) s->max_user_touch = ev->a;
    break;
  case EV_MARK:
    if (ev->vcpu < 4) s->per_vcpu_marks[ev->vcpu]++;
    log_value(s->cycles_between_marks, &s->nmarks_logged, *since_mark);
    *since_mark = 0;
    memcpy(s->label, &ev->a, 8);
    memcpy(s->label + 8, &ev->b, 8);
    break;
  default: break;
  }
}

static void scan(const char *path, struct scan *s) {
  struct trace_reader r;
  memset(s, 0, sizeof *s);
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  s->hdr = r.hdr;
  s->hdr.metadata = NULL;
  s->meta = cJSON_Parse(r.hdr.metadata);
  assert_non_null(s->meta);
  const struct trace_event *ev;
  uint64_t since_mark = 0;
  while ((ev = trace_next(&r)) != NULL) scan_event(s, ev, &since_mark);
  assert_false(trace_failed(&r));
  assert_int_equal(s->records, r.hdr.event_count);
  trace_close(&r);
}

static void scan_free(struct scan *s) { cJSON_Delete(s->meta); }

static double meta_num(const struct scan *s, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->meta, key);
  assert_true(cJSON_IsNumber(v));
  return v->valuedouble;
}

static const char *meta_str(const struct scan *s, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->meta, key);
  assert_true(cJSON_IsString(v));
  return v->valuestring;
}

/* Whole file contents (the test files are small). */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static bool same_bytes(const char *a, const char *b) {
  size_t la, lb;
  char *x = slurp(a, &la), *y = slurp(b, &lb);
  bool same = la == lb && memcmp(x, y, la) == 0;
  free(x);
  free(y);
  return same;
}

/* ---- lat_ctx ---- */

static int latctx(struct latctx_opts *o, const char *name) {
  char err[256] = "";
  int rc = gen_latctx(o, path_in_tmp(name), err, sizeof err);
  if (rc) print_message("gen_latctx: %s\n", err);
  return rc;
}

static void test_latctx_two_procs(void **state) {
  (void)state;
  struct latctx_opts o;
  latctx_defaults(&o);
  o.procs = 2;
  o.iters = 10;
  assert_int_equal(latctx(&o, "l2.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("l2.bin"), &s);
  assert_string_equal(s.hdr.workload, "lat_ctx");
  assert_int_equal(s.hdr.vcpu_count, 1);
  assert_int_equal(s.hdr.paging, PAGING_64);
  assert_int_equal(s.by_type[EV_MARK], 20);
  assert_string_equal(s.label, "switch");
  assert_int_equal(s.cr3_writes, 20);
  for (size_t i = 0; i < s.ncr3; i++)           /* alternates: to process 1, back to 0 */
    assert_int_equal(s.cr3[i], i % 2 == 0 ? gen_cr3(1) : gen_cr3(0));
  assert_int_equal(s.by_type[EV_SYSCALL], 40);
  assert_int_equal(s.by_type[EV_SYSRET], 40);
  for (size_t i = 0; i < s.nsys; i++) assert_int_equal(s.sysnr[i], i % 2 == 0 ? 1 : 0);   /* write, read */
  assert_int_equal(s.by_type[EV_INIT], 3);
  assert_false(s.init_after_events);
  assert_int_equal(s.init_value[0][0], 0x80050033);
  assert_int_equal(s.init_value[0][3], gen_cr3(0));
  assert_int_equal(s.init_value[0][4], 0x6f0);
  /* 2.02 us x 2.4 GHz per switch, all of it in `run` records */
  assert_int_equal(s.cycles, 20 * 4848);
  assert_int_equal(s.cycles_nonrun, 0);
  for (size_t i = 0; i < s.nmarks_logged; i++) assert_int_equal(s.cycles_between_marks[i], 4848);
  assert_int_equal((int)meta_num(&s, "model_version"), LATCTX_MODEL_VERSION);
  assert_string_equal(meta_str(&s, "generator"), "lat_ctx");
  assert_int_equal((int)meta_num(&s, "procs"), 2);
  assert_int_equal((int)meta_num(&s, "iters"), 10);
  assert_true(meta_num(&s, "cpu_ghz") == 2.4);
  assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s.meta, "sources")));
  assert_true(s.min_kernel_touch >= 0xffff800000000000ull);
  scan_free(&s);
}

static void test_latctx_anchors(void **state) {
  (void)state;
  assert_true(latctx_native_us(2, 0) == 2.02);
  assert_true(latctx_native_us(20, 0) == 4.04);
  assert_true(latctx_native_us(50, 1000) == 218.1);
  assert_true(latctx_native_us(200, 0) == 4.30);                    /* held above 50 */
  assert_true(latctx_native_us(35, 0) > 4.169 && latctx_native_us(35, 0) < 4.171);
  assert_true(latctx_native_us(2, 500) > 76.25 && latctx_native_us(2, 500) < 76.27);
}

static void test_latctx_size_and_clock(void **state) {
  (void)state;
  struct latctx_opts o;
  latctx_defaults(&o);
  o.procs = 20;
  o.size = 1000;
  o.iters = 1;
  o.cpu_ghz = 3.0;
  assert_int_equal(latctx(&o, "l20.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("l20.bin"), &s);
  assert_int_equal(s.by_type[EV_MARK], 20);
  assert_int_equal(s.cycles, 20 * 649800);          /* 216.6 us x 3.0 GHz */
  assert_int_equal(s.cr3_writes, 20);
  assert_int_equal(s.cr3[19], gen_cr3(0));          /* the ring closes */
  assert_int_equal(s.max_touch_pages, 251);          /* bread() of 1000 KB: 1,024,000 bytes after malloc's 16-byte header span 251 pages */
  scan_free(&s);
}

static void test_latctx_32bit_and_vcpus(void **state) {
  (void)state;
  struct latctx_opts o;
  latctx_defaults(&o);
  o.procs = 3;
  o.iters = 2;
  o.paging = PAGING_32;
  o.vcpus = 4;
  assert_int_equal(latctx(&o, "l32.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("l32.bin"), &s);
  assert_int_equal(s.hdr.paging, PAGING_32);
  assert_int_equal(s.hdr.vcpu_count, 4);
  assert_int_equal(s.by_type[EV_INIT], 12);
  for (int v = 0; v < 4; v++) {
    assert_int_equal(s.init_value[v][4], 0x690);
    assert_int_equal(s.init_value[v][3], gen_cr3(0));
  }
  assert_int_equal(s.per_vcpu_marks[0], 6);         /* the ring stays on vCPU 0 */
  assert_int_equal(s.per_vcpu_marks[1] + s.per_vcpu_marks[2] + s.per_vcpu_marks[3], 0);
  assert_int_equal(s.sysnr[0], 4);                  /* i386 write */
  assert_int_equal(s.sysnr[1], 3);                  /* i386 read */
  assert_true(s.min_kernel_touch >= 0xC0000000ull && s.max_user_touch < 0xC0000000ull);
  scan_free(&s);
}

static void test_latctx_deterministic(void **state) {
  (void)state;
  struct latctx_opts o;
  latctx_defaults(&o);
  o.procs = 5;
  o.size = 16;
  o.iters = 50;
  o.jitter = 10;
  o.seed = 7;
  assert_int_equal(latctx(&o, "d1.bin"), EXIT_OK);
  assert_int_equal(latctx(&o, "d2.bin"), EXIT_OK);
  assert_true(same_bytes(path_in_tmp("d1.bin"), path_in_tmp("d2.bin")));
  o.seed = 8;
  assert_int_equal(latctx(&o, "d3.bin"), EXIT_OK);
  assert_false(same_bytes(path_in_tmp("d1.bin"), path_in_tmp("d3.bin")));
  struct scan s;
  scan(path_in_tmp("d3.bin"), &s);
  uint64_t mean = gen_us_to_cycles(latctx_native_us(5, 16), 2.4) * 250;
  assert_true(s.cycles > mean * 95 / 100 && s.cycles < mean * 105 / 100);
  scan_free(&s);
}

static void test_latctx_errors(void **state) {
  (void)state;
  struct latctx_opts o;
  char err[256];
  latctx_defaults(&o);
  o.iters = 1;
  o.procs = 0;
  assert_int_equal(gen_latctx(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--procs"));
  assert_int_equal(access(path_in_tmp("bad.bin"), F_OK), -1);
  o.procs = 2;
  o.size = LATCTX_SIZE_MAX + 1;
  assert_int_equal(gen_latctx(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--size"));
  o.size = 0;
  o.iters = 0;
  assert_int_equal(gen_latctx(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--iters"));
  o.iters = 1;
  o.cpu_ghz = 0;
  assert_int_equal(gen_latctx(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--cpu-ghz"));
  o.cpu_ghz = 2.4;
  o.paging = 48;
  assert_int_equal(gen_latctx(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--paging"));
  o.paging = PAGING_64;
  assert_int_equal(gen_latctx(&o, NULL, err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "-o"));
  assert_int_equal(gen_latctx(&o, "/nonexistent-dir/x.bin", err, sizeof err), EXIT_IO);
  assert_non_null(strstr(err, "/nonexistent-dir/x.bin"));
}

/* ---- hackbench ---- */

static int hackbench(struct hackbench_opts *o, const char *name) {
  char err[256] = "";
  int rc = gen_hackbench(o, path_in_tmp(name), err, sizeof err);
  if (rc) print_message("gen_hackbench: %s\n", err);
  return rc;
}

static void test_hackbench_processes(void **state) {
  (void)state;
  struct hackbench_opts o;
  hackbench_defaults(&o);
  o.groups = 1;
  o.loops = 1;
  assert_int_equal(hackbench(&o, "h.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("h.bin"), &s);
  assert_string_equal(s.hdr.workload, "hackbench");
  assert_int_equal(s.by_type[EV_MARK], 400);                 /* groups x 400 x loops */
  assert_string_equal(s.label, "message");
  /* start-up: 20 receivers run and sleep, then at least one switch per sender run */
  print_message("CR3 writes for 400 messages: %llu (expected 39..440)\n", (unsigned long long)s.cr3_writes);
  assert_true(s.cr3_writes >= 39 && s.cr3_writes <= 440);
  /* every call returns except the 40 exit_group()s */
  assert_int_equal(s.by_type[EV_SYSCALL] - 40, s.by_type[EV_SYSRET]);
  assert_int_equal(s.init_value[0][3], gen_cr3(1));          /* receiver 0 of group 0 runs first */
  assert_int_equal((int)meta_num(&s, "messages"), 400);
  scan_free(&s);
}

static void test_hackbench_threads_pipes_vcpus(void **state) {
  (void)state;
  struct hackbench_opts o;
  hackbench_defaults(&o);
  o.groups = 3;
  o.loops = 2;
  o.threads = true;
  o.pipe = true;
  o.vcpus = 2;
  assert_int_equal(hackbench(&o, "ht.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("ht.bin"), &s);
  assert_int_equal(s.by_type[EV_MARK], 3 * 400 * 2);
  assert_int_equal(s.cr3_writes, 0);                         /* one address space */
  assert_int_equal(s.hdr.vcpu_count, 2);
  assert_int_equal(s.per_vcpu_marks[0], 2 * 800);            /* groups 0 and 2 */
  assert_int_equal(s.per_vcpu_marks[1], 800);                /* group 1 */
  scan_free(&s);
}

/* The scheduling pattern measured on Linux (workloads/README.md, "hackbench"):
** 0.03-0.07 context switches per message on one CPU. */
static void test_hackbench_switches_per_message_as_measured(void **state) {
  (void)state;
  struct hackbench_opts o;
  hackbench_defaults(&o);
  o.groups = 1;
  o.loops = 100;
  assert_int_equal(hackbench(&o, "hm.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("hm.bin"), &s);
  double per_msg = (double)s.cr3_writes / (double)s.by_type[EV_MARK];
  print_message("CR3 writes per message %.4f (measured 0.03-0.07)\n", per_msg);
  assert_true(per_msg >= 0.03 && per_msg <= 0.07);
  scan_free(&s);
}

static void test_hackbench_sender_run(void **state) {
  (void)state;
  struct hackbench_opts o;
  hackbench_defaults(&o);
  o.groups = 1;
  o.loops = 5;
  o.sender_run = 1;
  assert_int_equal(hackbench(&o, "hb1.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("hb1.bin"), &s);
  assert_int_equal(s.by_type[EV_MARK], 2000);
  /* a receiver after every message, then a sender again: about two switches per message */
  double per_msg = (double)s.cr3_writes / 2000.0;
  print_message("CR3 writes per message with --sender-run 1: %.3f (expected 1.9..2.3)\n", per_msg);
  assert_true(per_msg >= 1.9 && per_msg <= 2.3);
  scan_free(&s);
  char err[256];
  o.sender_run = 0;
  assert_int_equal(gen_hackbench(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--sender-run"));
  o.sender_run = 53;
  o.resume = 101;
  assert_int_equal(gen_hackbench(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--resume"));
  o.resume = 45;
  o.groups = 0;
  assert_int_equal(gen_hackbench(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--groups"));
}

/* A lat_ctx pass touches the documented touch set: distinct pages per pass on
** a 32-bit 2-process ring (8 user pages, the kernel's groups of kpages.h). */
static void test_latctx_touch_set(void **state) {
  (void)state;
  struct latctx_opts o;
  latctx_defaults(&o);
  o.procs = 2;
  o.iters = 1;
  o.paging = PAGING_32;
  assert_int_equal(latctx(&o, "ts.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("ts.bin"), &s);
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(s.meta, "touch_set");
  assert_non_null(ts);
  double user = cJSON_GetObjectItemCaseSensitive(ts, "user_pages")->valuedouble;
  double text = cJSON_GetObjectItemCaseSensitive(ts, "kernel_text_pages")->valuedouble;
  double glob = cJSON_GetObjectItemCaseSensitive(ts, "kernel_global_pages")->valuedouble;
  double task = cJSON_GetObjectItemCaseSensitive(ts, "kernel_pages_per_task")->valuedouble;
  double pipe = cJSON_GetObjectItemCaseSensitive(ts, "kernel_pages_per_pipe")->valuedouble;
  double per_pass = user + text + glob + 2 * task + 2 * pipe;
  print_message("touch set: %g user, %g text, %g global, %g per task, %g per pipe: %g pages per 2-process pass "
                "(expected 50..73)\n", user, text, glob, task, pipe, per_pass);
  assert_int_equal((int)user, 8);                            /* measured for a 32-bit process */
  assert_true(per_pass >= 50 && per_pass <= 73);
  scan_free(&s);
}

/* --cross: a crossing wake-up sends an IPI (ICR read, ICR2 and ICR writes),
** the waker's vCPU halts and the wakee's signals its EOI. */
static void test_latctx_cross_vcpu_wakeups(void **state) {
  (void)state;
  struct latctx_opts o;
  latctx_defaults(&o);
  o.procs = 2;
  o.iters = 500;
  o.vcpus = 2;
  o.cross = 20;
  assert_int_equal(latctx(&o, "cx.bin"), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("cx.bin"), &s);
  uint64_t apic = s.by_type[EV_APIC], hlt = s.by_type[EV_HLT];
  print_message("1000 passes at 20%%: %llu HLT (1 at start + one per crossing), %llu APIC accesses (4 per crossing)\n",
                (unsigned long long)hlt, (unsigned long long)apic);
  assert_int_equal(apic, 4 * (hlt - 1));
  assert_true(hlt - 1 >= 150 && hlt - 1 <= 250);
  assert_true(s.per_vcpu_marks[0] > 0 && s.per_vcpu_marks[1] > 0);
  assert_int_equal(s.per_vcpu_marks[0] + s.per_vcpu_marks[1], 1000);
  scan_free(&s);
  char err[256];
  o.vcpus = 1;
  assert_int_equal(gen_latctx(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--cross"));
}

static void test_hackbench_deterministic(void **state) {
  (void)state;
  struct hackbench_opts o;
  hackbench_defaults(&o);
  o.groups = 2;
  o.loops = 3;
  assert_int_equal(hackbench(&o, "hd1.bin"), EXIT_OK);
  assert_int_equal(hackbench(&o, "hd2.bin"), EXIT_OK);
  assert_true(same_bytes(path_in_tmp("hd1.bin"), path_in_tmp("hd2.bin")));
}

/* ---- syscalls ---- */

static void gen_sys(int mode, unsigned paging, struct scan *s) {
  struct syscalls_opts o;
  char err[256] = "";
  syscalls_defaults(&o);
  o.count = 5;
  o.mode = mode;
  o.paging = paging;
  assert_int_equal(gen_syscalls(&o, path_in_tmp("sc.bin"), err, sizeof err), EXIT_OK);
  scan(path_in_tmp("sc.bin"), s);
}

static void test_syscalls_modes(void **state) {
  (void)state;
  struct scan s;
  gen_sys(SYSCALLS_HVM, PAGING_64, &s);
  assert_int_equal(s.by_type[EV_MARK], 5);
  assert_string_equal(s.label, "syscall");
  assert_int_equal(s.cr3_writes, 0);
  assert_int_equal(s.by_type[EV_SYSCALL], 5);
  assert_int_equal(s.by_type[EV_SYSRET], 5);
  assert_int_equal(s.sysnr[0], 110);                         /* getppid */
  assert_int_equal(s.cycles, 5 * (150 + 50));
  scan_free(&s);
  gen_sys(SYSCALLS_PTI, PAGING_64, &s);
  assert_int_equal(s.cr3_writes, 10);
  for (size_t i = 0; i < s.ncr3; i++)   /* kernel tables on entry, user tables (+4 KB) on return */
    assert_int_equal(s.cr3[i], i % 2 == 0 ? gen_cr3(0) : gen_cr3(0) + 0x1000);
  assert_int_equal(s.init_value[0][3], gen_cr3(0) + 0x1000);
  assert_string_equal(meta_str(&s, "mode"), "pti");
  scan_free(&s);
  gen_sys(SYSCALLS_PV64, PAGING_64, &s);
  assert_int_equal(s.cr3_writes, 10);
  assert_int_equal(s.by_type[EV_MARK], 5);
  scan_free(&s);
  gen_sys(SYSCALLS_PTI, PAGING_PAE, &s);
  assert_int_equal(s.sysnr[0], 64);                          /* i386 getppid */
  assert_int_equal(s.init_value[0][4], 0x6b0);
  scan_free(&s);
}

static void test_syscalls_errors(void **state) {
  (void)state;
  struct syscalls_opts o;
  char err[256];
  syscalls_defaults(&o);
  o.count = 1;
  o.mode = SYSCALLS_PV64;
  o.paging = PAGING_32;
  assert_int_equal(gen_syscalls(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--paging"));
  o.paging = PAGING_64;
  o.count = 0;
  assert_int_equal(gen_syscalls(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--count"));
  o.count = 1;
  o.mode = 7;
  assert_int_equal(gen_syscalls(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--mode"));
  o.mode = SYSCALLS_HVM;
  o.nr = 39;
  assert_int_equal(gen_syscalls(&o, path_in_tmp("nr.bin"), err, sizeof err), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("nr.bin"), &s);
  assert_int_equal(s.sysnr[0], 39);
  scan_free(&s);
}

/* ---- cr4toggle ---- */

static void test_cr4toggle(void **state) {
  (void)state;
  struct cr4toggle_opts o;
  char err[256] = "";
  struct scan s;
  cr4toggle_defaults(&o);
  o.count = 3;
  assert_int_equal(gen_cr4toggle(&o, path_in_tmp("c.bin"), err, sizeof err), EXIT_OK);
  scan(path_in_tmp("c.bin"), &s);
  assert_int_equal(s.by_type[EV_MARK], 3);
  assert_string_equal(s.label, "flush");
  assert_int_equal(s.cr4_writes, 6);
  for (size_t i = 0; i < s.ncr4; i++) assert_int_equal(s.cr4[i], i % 2 == 0 ? 0x670 : 0x6f0);
  assert_int_equal(s.cr3_writes, 0);
  scan_free(&s);
  o.bit = CR4TOGGLE_TSD;
  o.paging = PAGING_PAE;
  assert_int_equal(gen_cr4toggle(&o, path_in_tmp("c.bin"), err, sizeof err), EXIT_OK);
  scan(path_in_tmp("c.bin"), &s);
  assert_string_equal(s.label, "toggle");
  assert_int_equal(s.cr4_writes, 3);
  assert_int_equal(s.cr4[0], 0x6b4);
  assert_int_equal(s.cr4[1], 0x6b0);
  assert_int_equal(s.cr4[2], 0x6b4);
  scan_free(&s);
  o.count = 0;
  assert_int_equal(gen_cr4toggle(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--count"));
}

/* ---- debug ---- */

static void test_debug(void **state) {
  (void)state;
  struct debug_opts o;
  char err[256] = "";
  struct scan s;
  debug_defaults(&o);
  o.procs = 2;
  o.iters = 2;
  assert_int_equal(gen_debug(&o, path_in_tmp("dbg.bin"), err, sizeof err), EXIT_OK);
  scan(path_in_tmp("dbg.bin"), &s);
  assert_int_equal(s.by_type[EV_MARK], 4);
  assert_int_equal(s.cr3_writes, 4);
  /* process 0's breakpoints at the start, then per trip: DR7 cleared (0 -> 1), DR0-3 + DR7 (1 -> 0) */
  assert_int_equal(s.dr_writes, 5 + 2 * (1 + 5));
  assert_int_equal(s.dr_reg[4], 7);
  assert_int_equal(s.dr[4], DEBUG_DR7_ARMED);
  assert_int_equal(s.dr_reg[5], 7);
  assert_int_equal(s.dr[5], 0);
  assert_int_equal(s.dr_reg[6], 0);
  scan_free(&s);
  o.debugged = 0;
  assert_int_equal(gen_debug(&o, path_in_tmp("dbg0.bin"), err, sizeof err), EXIT_OK);
  scan(path_in_tmp("dbg0.bin"), &s);
  assert_int_equal(s.dr_writes, 0);
  scan_free(&s);
  o.debugged = 3;
  assert_int_equal(gen_debug(&o, path_in_tmp("bad.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--debugged"));
}

/* ---- interrupts ---- */

/* An interrupt trace walked with each vCPU's interrupt state, as the processor keeps it. */
struct irqscan {
  uint64_t virq[VIRQ_SRC_MAX + 1][256];   /* [source][vector] */
  uint64_t eoi, icr, icr_reads, deadline, rdtsc, hlt, sti, cli, iret, marks, busy_cycles[4];
  uint64_t waits;                         /* wait records on a vCPU whose handler has run, not yet EOIed */
  uint64_t wrong;                         /* records against the guest's interrupt state */
  char first_wrong[160];
};

struct irqvcpu { bool intr_off, in_handler, eoi_done; uint64_t sent[4][256]; };

static void irq_wrong(struct irqscan *s, uint64_t rec, const char *what) {
  if (!s->wrong++) snprintf(s->first_wrong, sizeof s->first_wrong, "record %llu: %s", (unsigned long long)rec, what);
}

/* One record: an interrupt arrives only when IF = 1; its handler runs with
** IF = 0 and signals one EOI before its IRET; HLT comes after STI; an IPI
** arrives from another vCPU that wrote it to the ICR before. */
static void irq_step(struct irqscan *s, struct irqvcpu *vs, const struct trace_event *ev, uint64_t rec) {
  struct irqvcpu *v = &vs[ev->vcpu];
  bool eoi = (ev->type == EV_WRMSR && ev->a == MSR_X2APIC_EOI) ||
             (ev->type == EV_APIC && (ev->aux & APIC_AUX_WRITE) && ev->a == APIC_EOI);
  if (eoi) {
    s->eoi++;
    if (!v->in_handler || v->eoi_done || !v->intr_off) irq_wrong(s, rec, "EOI outside a handler, twice, or with IF = 1");
    v->eoi_done = true;
  }
  switch (ev->type) {
  case EV_VIRQ:
    s->virq[ev->aux][ev->a & 0xff]++;
    if (v->intr_off || v->in_handler) irq_wrong(s, rec, "interrupt while IF = 0");
    if (ev->aux == VIRQ_SRC_IPI) {
      if (ev->b >= 4 || ev->b == ev->vcpu || !vs[ev->b].sent[ev->vcpu][ev->a & 0xff])
        irq_wrong(s, rec, "IPI that no other vCPU sent");
      else vs[ev->b].sent[ev->vcpu][ev->a & 0xff]--;
    }
    v->intr_off = v->in_handler = true;
    v->eoi_done = false;
    break;
  case EV_IRET:
    s->iret++;
    if (!v->in_handler || !v->eoi_done) irq_wrong(s, rec, "IRET without an interrupt or its EOI");
    v->intr_off = v->in_handler = false;
    break;
  case EV_CLI: s->cli++; v->intr_off = true; break;
  case EV_STI: s->sti++; v->intr_off = false; break;
  case EV_HLT:
    s->hlt++;
    if (v->intr_off) irq_wrong(s, rec, "HLT with IF = 0: it would never wake");
    break;
  case EV_WRMSR:
    if (ev->a == MSR_TSC_DEADLINE) s->deadline++;
    if (ev->a == MSR_X2APIC_ICR) {
      s->icr++;
      if ((ev->b >> 32) < 4) v->sent[ev->b >> 32][ev->b & 0xff]++;
    }
    break;
  case EV_APIC:
    if (ev->a == APIC_ICR && !(ev->aux & APIC_AUX_WRITE)) s->icr_reads++;
    if (ev->a == APIC_ICR && (ev->aux & APIC_AUX_WRITE)) {
      s->icr++;
      if ((ev->b >> 56) < 4) v->sent[ev->b >> 56][ev->b & 0xff]++;
    }
    break;
  case EV_WAIT:
    if (ev->a >= 4 || ev->a == ev->vcpu || !vs[ev->a].in_handler || vs[ev->a].eoi_done)
      irq_wrong(s, rec, "wait on a vCPU that is not in its handler before its EOI");
    else s->waits++;
    break;
  case EV_MARK: s->marks++; break;
  case EV_RDTSC: s->rdtsc++; break;
  case EV_RUN: if (ev->vcpu < 4) s->busy_cycles[ev->vcpu] += ev->cycles; break;
  default: break;
  }
}

static void irqscan(const char *path, struct irqscan *s) {
  struct trace_reader r;
  struct irqvcpu vs[4];
  memset(s, 0, sizeof *s);
  memset(vs, 0, sizeof vs);
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  assert_true(r.hdr.vcpu_count <= 4);
  const struct trace_event *ev;
  for (uint64_t rec = 1; (ev = trace_next(&r)) != NULL; rec++) irq_step(s, vs, ev, rec);
  assert_false(trace_failed(&r));
  trace_close(&r);
  if (s->wrong) fail_msg("%llu records against the interrupt state; first: %s", (unsigned long long)s->wrong, s->first_wrong);
}

static int interrupts(const struct interrupts_opts *o, const char *name) {
  char err[256] = "";
  int rc = gen_interrupts(o, path_in_tmp(name), err, sizeof err);
  if (rc) print_message("gen_interrupts: %s\n", err);
  return rc;
}

static uint64_t all_sources(const struct irqscan *s, unsigned vector) {
  uint64_t n = 0;
  for (unsigned src = 0; src <= VIRQ_SRC_MAX; src++) n += s->virq[src][vector];
  return n;
}

/* Timer ticks alone: HZ per busy vCPU, re-armed by one TSC-deadline write
** each; NO_HZ idle vCPUs take none, and halt once. */
static void test_interrupts_ticks(void **state) {
  (void)state;
  struct interrupts_opts o;
  interrupts_defaults(&o);
  o.duration_ms = 200;
  o.timers = o.resched = o.callfunc = o.device = 0;
  assert_int_equal(interrupts(&o, "it.bin"), EXIT_OK);
  struct irqscan s;
  irqscan(path_in_tmp("it.bin"), &s);
  assert_int_equal(s.virq[VIRQ_SRC_TIMER][IRQ_VECTOR_TIMER], 2 * 50);    /* 2 busy vCPUs x 250 Hz x 0.2 s */
  assert_int_equal(all_sources(&s, IRQ_VECTOR_TIMER), 100);
  assert_int_equal(s.eoi, 100);
  assert_int_equal(s.iret, 100);
  assert_int_equal(s.marks, 100);
  assert_int_equal(s.deadline, 100 + 2);     /* a re-arm per tick; each idle vCPU stops its tick once */
  assert_int_equal(s.rdtsc, s.deadline);      /* each deadline computed from the TSC */
  assert_int_equal(s.hlt, 2);
  assert_int_equal(s.icr, 0);
  /* a busy vCPU's native time is the trace's duration (its last handler may run past it) */
  assert_true(s.busy_cycles[0] >= 480000000 && s.busy_cycles[0] < 480000000 + 4000);
  assert_int_equal(s.busy_cycles[2], 0);

  o.idle = IRQ_IDLE_TICK;                     /* now the idle vCPUs tick too, halting after each */
  assert_int_equal(interrupts(&o, "it2.bin"), EXIT_OK);
  irqscan(path_in_tmp("it2.bin"), &s);
  assert_int_equal(s.virq[VIRQ_SRC_TIMER][IRQ_VECTOR_TIMER], 4 * 50);
  assert_int_equal(s.deadline, 200);
  assert_int_equal(s.hlt, 2 + 2 * 50);

  o.timer = IRQ_TIMER_PERIODIC;               /* a periodic LAPIC timer needs no re-arm */
  o.hz = 1000;
  o.apic = IRQ_APIC_XAPIC;
  assert_int_equal(interrupts(&o, "it3.bin"), EXIT_OK);
  irqscan(path_in_tmp("it3.bin"), &s);
  assert_int_equal(s.virq[VIRQ_SRC_TIMER][IRQ_VECTOR_TIMER], 4 * 200);
  assert_int_equal(s.deadline, 0);
  assert_int_equal(s.eoi, 800);
}

/* IPIs: each vCPU receives --resched and --callfunc per second from the busy
** vCPUs (a busy one only from the other busy one), each sent by an ICR write;
** a reschedule IPI wakes a halted vCPU, which restarts its tick, runs and
** halts again. */
static void test_interrupts_ipis(void **state) {
  (void)state;
  struct interrupts_opts o;
  interrupts_defaults(&o);
  o.duration_ms = 500;
  o.timers = o.device = 0;
  o.hz = 100;
  o.resched = 40;
  o.callfunc = 10;
  for (int apic = IRQ_APIC_X2APIC; apic <= IRQ_APIC_XAPIC; apic++) {
    o.apic = apic;
    assert_int_equal(interrupts(&o, "ii.bin"), EXIT_OK);
    struct irqscan s;
    irqscan(path_in_tmp("ii.bin"), &s);
    assert_int_equal(s.virq[VIRQ_SRC_IPI][IRQ_VECTOR_RESCHED], 4 * 20);   /* 4 receivers x 40/s x 0.5 s */
    assert_int_equal(s.virq[VIRQ_SRC_IPI][IRQ_VECTOR_CALLFUNC], 4 * 5);
    assert_int_equal(s.icr, 100);
    assert_int_equal(s.icr_reads, apic == IRQ_APIC_XAPIC ? 100 : 0);
    assert_int_equal(s.eoi, 100 + 2 * 50);                                /* and the busy vCPUs' ticks */
    /* every halt after the first two is a return to idle: after a woken task, or a call-function IPI */
    assert_true(s.hlt > 2 && s.hlt <= 2 + 2 * 20 + 2 * 5);
    /* deadline writes: the ticks' re-arms, and a stop and a restart of the tick per wake-up */
    assert_int_equal((s.deadline - 100 - 2) % 2, 0);
    assert_true(s.deadline - 100 - 2 <= 2 * 2 * 20);
  }
  o.busy = 0;                                   /* nobody runs to send one */
  assert_int_equal(interrupts(&o, "ii0.bin"), EXIT_OK);
  struct irqscan s;
  irqscan(path_in_tmp("ii0.bin"), &s);
  assert_int_equal(s.icr, 0);
  assert_int_equal(s.virq[VIRQ_SRC_IPI][IRQ_VECTOR_RESCHED], 0);
}

/* Device interrupts: --device per second in all, on the vector asked for, spread over the vCPUs. */
static void test_interrupts_devices(void **state) {
  (void)state;
  struct interrupts_opts o;
  interrupts_defaults(&o);
  o.duration_ms = 100;
  o.timers = o.resched = o.callfunc = 0;
  o.hz = 100;
  o.device = 1230;
  o.device_vector = 0x41;
  o.busy = 4;
  assert_int_equal(interrupts(&o, "id.bin"), EXIT_OK);
  struct irqscan s;
  irqscan(path_in_tmp("id.bin"), &s);
  assert_int_equal(s.virq[VIRQ_SRC_DEVICE][0x41], 123);
  assert_int_equal(s.virq[VIRQ_SRC_TIMER][IRQ_VECTOR_TIMER], 4 * 10);
  assert_int_equal(s.hlt, 0);
  assert_int_equal(s.eoi, 163);
  struct scan sc;
  scan(path_in_tmp("id.bin"), &sc);
  for (unsigned v = 0; v < 4; v++) assert_true(sc.per_vcpu_marks[v] > 10 + 10);   /* its ticks and some devices */
  assert_int_equal((int)meta_num(&sc, "device_interrupts"), 123);
  assert_int_equal((int)meta_num(&sc, "model_version"), INTERRUPTS_MODEL_VERSION);
  assert_string_equal(meta_str(&sc, "idle"), "nohz");
  scan_free(&sc);
}

/* The same seed gives the same bytes; another seed moves the interrupts but keeps their counts. */
static void test_interrupts_deterministic(void **state) {
  (void)state;
  struct interrupts_opts o;
  interrupts_defaults(&o);
  o.duration_ms = 300;
  assert_int_equal(interrupts(&o, "ir1.bin"), EXIT_OK);
  assert_int_equal(interrupts(&o, "ir2.bin"), EXIT_OK);
  assert_true(same_bytes(path_in_tmp("ir1.bin"), path_in_tmp("ir2.bin")));
  o.seed = 2;
  assert_int_equal(interrupts(&o, "ir3.bin"), EXIT_OK);
  assert_false(same_bytes(path_in_tmp("ir1.bin"), path_in_tmp("ir3.bin")));
  struct irqscan a, b;
  irqscan(path_in_tmp("ir1.bin"), &a);
  irqscan(path_in_tmp("ir3.bin"), &b);
  assert_int_equal(a.marks, b.marks);
  assert_int_equal(a.icr, b.icr);
  /* the defaults: 2 busy vCPUs tick at 250 Hz, 30 other timers per vCPU per second,
  ** 50 reschedule and 1 call-function IPIs per vCPU per second, 50 device interrupts per second */
  assert_int_equal(a.virq[VIRQ_SRC_TIMER][IRQ_VECTOR_TIMER], 2 * 75 + 4 * 9);
  assert_int_equal(a.virq[VIRQ_SRC_IPI][IRQ_VECTOR_RESCHED], 4 * 15);
  assert_int_equal(a.virq[VIRQ_SRC_DEVICE][0x22], 15);
}

/* kvm-unit-tests' ipi round trip: per mark one ICR write on vCPU 0 (in xAPIC
** mode after a read of the ICR), one IPI on vCPU 1 that was sent before it
** arrives (irqscan checks that), vCPU 0's wait while vCPU 1's handler runs
** (before its EOI: ipi_done is set first), its EOI; the same options give
** the same bytes. */
static void test_ipi_round_trips(void **state) {
  (void)state;
  struct ipi_opts o;
  ipi_defaults(&o);
  o.count = 12;
  char err[256] = "";
  for (int apic = IRQ_APIC_X2APIC; apic <= IRQ_APIC_XAPIC; apic++) {
    o.apic = apic;
    assert_int_equal(gen_ipi(&o, path_in_tmp("ipi1.bin"), err, sizeof err), EXIT_OK);
    struct irqscan s;
    irqscan(path_in_tmp("ipi1.bin"), &s);
    assert_int_equal(s.marks, 12);
    assert_int_equal(s.icr, 12);
    assert_int_equal(s.icr_reads, apic == IRQ_APIC_XAPIC ? 12 : 0);
    assert_int_equal(s.virq[VIRQ_SRC_IPI][0x20], 12);
    assert_int_equal(s.eoi, 12);
    assert_int_equal(s.waits, 12);                               /* the source's spin, once per round trip */
    assert_int_equal(s.busy_cycles[0], 12 * o.work);
    assert_int_equal(s.busy_cycles[1], 12 * o.handler);
    assert_int_equal(gen_ipi(&o, path_in_tmp("ipi2.bin"), err, sizeof err), EXIT_OK);
    assert_true(same_bytes(path_in_tmp("ipi1.bin"), path_in_tmp("ipi2.bin")));
  }
  o.count = 0;
  assert_int_equal(gen_ipi(&o, path_in_tmp("ipi0.bin"), err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "--count"));
}

static void test_interrupts_errors(void **state) {
  (void)state;
  /* case i sets one bad value below */
  struct { const char *what, *needle; } cases[] = {
    { "no vCPU", "--vcpus" }, { "more busy than vCPUs", "--busy" }, { "zero duration", "--duration" },
    { "periodic and NO_HZ", "--idle nohz" }, { "timers with periodic", "--timers" },
    { "a system vector", "--device-vector" }, { "a negative rate", "--resched" },
    { "too many interrupts", "--duration" }, { "a clock too slow for the tick", "--hz" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct interrupts_opts o;
    interrupts_defaults(&o);
    switch (i) {
    case 0: o.vcpus = 0; break;
    case 1: o.busy = 5; break;
    case 2: o.duration_ms = 0; break;
    case 3: o.timer = IRQ_TIMER_PERIODIC; o.idle = IRQ_IDLE_NOHZ; break;
    case 4: o.timer = IRQ_TIMER_PERIODIC; o.timers = 5; break;
    case 5: o.device_vector = IRQ_VECTOR_TIMER; break;
    case 6: o.resched = -1; break;
    case 7: o.duration_ms = 3600000; o.device = 1000; break;
    case 8: o.cpu_ghz = 1e-9; break;             /* no whole cycle per tick: once a division by zero */
    }
    char err[256] = "";
    int rc = gen_interrupts(&o, path_in_tmp("ie.bin"), err, sizeof err);
    if (rc != EXIT_USAGE || !strstr(err, cases[i].needle))
      fail_msg("%s: expected exit %d naming %s, got %d \"%s\"", cases[i].what, EXIT_USAGE, cases[i].needle, rc, err);
  }
  assert_int_equal(access(path_in_tmp("ie.bin"), F_OK), -1);
  char err[512] = "";
  char *ok[] = { "interrupts", "--duration", "20", "--timer", "periodic", "--apic", "xapic", NULL };
  assert_int_equal(gen_generate(7, ok, path_in_tmp("ibn.bin"), err, sizeof err), EXIT_OK);
  char *bad[] = { "interrupts", "--timer", "oneshot", NULL };
  assert_int_equal(gen_generate(3, bad, path_in_tmp("ibn.bin"), err, sizeof err), EXIT_USAGE);
  assert_string_equal(err, "gen interrupts: --timer: unknown value 'oneshot' (expected deadline or periodic); "
                      "see 'vmxsim gen interrupts --help'");
}

/* ---- helpers ---- */

/* gen_generate: the generators by name with command-line options, as regress and reproduce run them. */
static void test_generate_by_name(void **state) {
  (void)state;
  char err[512] = "";
  char *ok[] = { "cpuid", "--count", "3", NULL };
  assert_int_equal(gen_generate(3, ok, path_in_tmp("byname.bin"), err, sizeof err), EXIT_OK);
  struct scan s;
  scan(path_in_tmp("byname.bin"), &s);
  assert_int_equal(s.by_type[EV_CPUID], 3);
  scan_free(&s);
  struct { char *argv[6]; int argc; int rc; const char *msg; } bad[] = {
    { { "cpuid", "--count", "0" }, 3, EXIT_USAGE,
      "gen cpuid: --count must be between 1 and 1099511627776 (got 0); see 'vmxsim gen cpuid --help'" },
    { { "cpuid", "--count" }, 2, EXIT_USAGE, "gen cpuid: --count needs a value; see 'vmxsim gen cpuid --help'" },
    { { "cpuid", "--help" }, 2, EXIT_USAGE, "gen cpuid: unknown option '--help'; see 'vmxsim gen cpuid --help'" },
    { { "lat_ctx", "--procs", "2" }, 3, EXIT_USAGE,
      "gen lat_ctx: missing required option --iters; see 'vmxsim gen lat_ctx --help'" },
    { { "nope" }, 1, EXIT_USAGE, "gen: unknown workload 'nope' (expected lat_ctx, hackbench, syscalls, "
      "cr4toggle, debug, cpuid, interrupts or ipi); see 'vmxsim gen --help'" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = 0;
    int rc = gen_generate(bad[i].argc, bad[i].argv, path_in_tmp("never.bin"), err, sizeof err);
    if (rc != bad[i].rc || strcmp(err, bad[i].msg) != 0)
      fail_msg("case %zu: expected %d \"%s\", actual %d \"%s\"", i, bad[i].rc, bad[i].msg, rc, err);
  }
  /* no output given either way: the message of `vmxsim gen` without -o */
  char *noout[] = { "cpuid", "--count", "3", NULL };
  assert_int_equal(gen_generate(3, noout, NULL, err, sizeof err), EXIT_USAGE);
  assert_string_equal(err, "gen cpuid: missing -o FILE (the output trace); see 'vmxsim gen cpuid --help'");
  assert_int_equal(access(path_in_tmp("never.bin"), F_OK), -1);
}

static void test_label_and_interp(void **state) {
  (void)state;
  struct gen_label l = gen_label_make("switch");
  assert_memory_equal(&l.a, "switch\0\0", 8);
  assert_int_equal(l.b, 0);
  l = gen_label_make("0123456789abcdefXYZ");                 /* truncated to 16 bytes */
  assert_memory_equal(&l.b, "89abcdef", 8);
  const double xs[] = { 0, 10 }, ys[] = { 1, 3 };
  assert_true(gen_interp(xs, ys, 2, 5) == 2);
  assert_true(gen_interp(xs, ys, 2, -1) == 1);
  assert_true(gen_interp(xs, ys, 2, 99) == 3);
  assert_int_equal(gen_us_to_cycles(2.02, 2.4), 4848);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/vmxsim-test-workloads-XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Every task's address space has its own page-aligned CR3 in guest RAM below
** 3 GiB (a 32-bit guest's CR3 is a 32-bit address; the PCI hole holds no RAM),
** so none is a PAE shadow root's address (models/mmu/mmu.h) by accident. */
static void test_gen_cr3_stays_below_3_gib_and_apart(void **state) {
  (void)state;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (unsigned pid = 0; pid <= GEN_TASKS_MAX; pid++) {
    uint64_t c = gen_cr3(pid);
    if (c % 4096 || c >= 0xc0000000ull || c >= SHADOW_PDPT_HPA_BASE)
      fail_msg("pid %u: CR3 0x%llx (expected page-aligned, below 3 GiB)", pid, (unsigned long long)c);
    /* each range rises with the pid, and the second lies wholly below the first */
    if (pid && pid != GEN_CR3_SPREAD && c <= gen_cr3(pid - 1)) fail_msg("pid %u: CR3 not above pid %u's", pid, pid - 1);
    if (c < lo) lo = c;
    if (c > hi) hi = c;
  }
  assert_true(gen_cr3(GEN_TASKS_MAX) < gen_cr3(0));
  print_message("CR3 of pids 0..%u: 0x%llx..0x%llx\n", GEN_TASKS_MAX, (unsigned long long)lo, (unsigned long long)hi);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_latctx_two_procs),
    cmocka_unit_test(test_gen_cr3_stays_below_3_gib_and_apart),
    cmocka_unit_test(test_latctx_anchors),
    cmocka_unit_test(test_latctx_size_and_clock),
    cmocka_unit_test(test_latctx_32bit_and_vcpus),
    cmocka_unit_test(test_latctx_deterministic),
    cmocka_unit_test(test_latctx_errors),
    cmocka_unit_test(test_hackbench_processes),
    cmocka_unit_test(test_hackbench_threads_pipes_vcpus),
    cmocka_unit_test(test_hackbench_switches_per_message_as_measured),
    cmocka_unit_test(test_hackbench_sender_run),
    cmocka_unit_test(test_latctx_touch_set),
    cmocka_unit_test(test_latctx_cross_vcpu_wakeups),
    cmocka_unit_test(test_hackbench_deterministic),
    cmocka_unit_test(test_syscalls_modes),
    cmocka_unit_test(test_syscalls_errors),
    cmocka_unit_test(test_cr4toggle),
    cmocka_unit_test(test_debug),
    cmocka_unit_test(test_label_and_interp),
    cmocka_unit_test(test_generate_by_name),
    cmocka_unit_test(test_interrupts_ticks),
    cmocka_unit_test(test_interrupts_ipis),
    cmocka_unit_test(test_interrupts_devices),
    cmocka_unit_test(test_interrupts_deterministic),
    cmocka_unit_test(test_interrupts_errors),
    cmocka_unit_test(test_ipi_round_trips),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
