/* Unit tests for the importers: perf script, KVM ftrace and xentrace input to trace events. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/import/import.h"
#include "sim/replay/views.h"
#include "sim/base/util.h"

/* ---- helpers: run an importer over a text, collect what it emits ---- */

#define MAX_EVS 256

struct evs { struct trace_event ev[MAX_EVS]; int n; };

static int collect(void *ctx, const struct trace_event *ev) {
  struct evs *e = ctx;
  if (e->n < MAX_EVS) e->ev[e->n] = *ev;
  e->n++;
  return 0;
}

enum fmt { PERF, KVM, XEN };

static struct import im;
static struct evs got;

static int import_text(enum fmt f, const char *text, bool skip_bad) {
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .skip_bad = skip_bad, .input = "in.txt" };
  memset(&got, 0, sizeof got);
  import_init(&im, &o, collect, &got);
  switch (f) {
  case PERF: return import_perf_script(&im, text, strlen(text));
  case KVM: return import_kvm_ftrace(&im, text, strlen(text));
  default: return -1;
  }
}

static int teardown(void **state) { (void)state; import_free(&im); return 0; }

/* Runs an importer over text placed so that its last byte is the last byte
** before an inaccessible page: reading past the input faults in any build. */
static int import_at_page_end(enum fmt f, const char *text) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), len = strlen(text);
  assert_true(len <= page);
  char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(m != MAP_FAILED);
  assert_int_equal(mprotect(m + page, page, PROT_NONE), 0);
  char *buf = m + page - len;
  memcpy(buf, text, len);
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .input = "in.txt" };
  memset(&got, 0, sizeof got);
  import_init(&im, &o, collect, &got);
  int rc = f == PERF ? import_perf_script(&im, buf, len) : import_kvm_ftrace(&im, buf, len);
  munmap(m, 2 * page);
  return rc;
}

/* The emitted events without runs and marks, as "type aux a b" lines (mnemonic names). */
static const char *actions(void) {
  static char buf[8192];
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < got.n && i < MAX_EVS; i++) {
    const struct trace_event *e = &got.ev[i];
    if (e->type == EV_RUN || e->type == EV_MARK || e->type == EV_MEASURED) continue;   /* measured(): below */
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s v%u %u 0x%llx 0x%llx", n ? "; " : "",
                          event_mnemonic(e->type), e->vcpu, e->aux, (unsigned long long)e->a,
                          (unsigned long long)e->b);
  }
  return buf;
}

/* The measured records: "REASON cycles [alone]; ..." */
static const char *measured(void) {
  static char buf[4096];
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < got.n && i < MAX_EVS; i++) {
    const struct trace_event *e = &got.ev[i];
    if (e->type != EV_MEASURED) continue;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%u %llu%s", n ? "; " : "", MEASURED_REASON(e->b),
                          (unsigned long long)e->a, e->aux & MEASURED_ALONE ? " alone" : "");
  }
  return buf;
}

static int count(unsigned type) {
  int c = 0;
  for (int i = 0; i < got.n && i < MAX_EVS; i++) c += got.ev[i].type == type;
  return c;
}

static uint64_t run_cycles(void) {
  uint64_t c = 0;
  for (int i = 0; i < got.n && i < MAX_EVS; i++)
    if (got.ev[i].type == EV_RUN) c += got.ev[i].cycles;
  return c;
}

#define assert_str(actual, expected) do { \
    const char *a_ = (actual), *e_ = (expected); \
    if (strcmp(a_, e_) != 0) fail_msg("expected: %s\n  actual:   %s", e_, a_); \
  } while (0)

#define assert_contains(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!strstr(h_, n_)) fail_msg("expected to contain: %s\n  actual: %s", n_, h_); \
  } while (0)

#define SW(comm, pid, cpu, t, next, npid) \
  comm " " #pid "/" #pid " [" cpu "] " t ": sched:sched_switch: prev_comm=" comm " prev_pid=" #pid \
  " prev_prio=120 prev_state=S ==> next_comm=" next " next_pid=" #npid " next_prio=120\n"

/* ---- perf script ---- */

static void perf_switch_between_processes_writes_the_next_process_cr3(void **state) {
  (void)state;
  const char *t =
    SW("a", 100, "000", "10.000000", "b", 200)
    "b 200/200 [000] 10.000010: raw_syscalls:sys_exit: NR 0 = 4\n"
    SW("b", 200, "000", "10.000020", "a", 100);
  assert_int_equal(import_text(PERF, t, false), 0);
  /* a is process 0 (the vCPU's @init CR3), b process 1 */
  assert_str(actions(), "crw v0 3 0x10100000 0x0; sysret v0 0 0x0 0x0; crw v0 3 0x10000000 0x0");
  assert_int_equal(im.init[0].cr3, 0x10000000);
  assert_int_equal(count(EV_MARK), 2);
}

static void perf_idle_and_kernel_threads_keep_the_previous_address_space(void **state) {
  (void)state;
  const char *t =
    SW("a", 100, "000", "1.000000", "swapper/0", 0)
    "swapper 0/0 [000] 1.000001: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
    "prev_state=R ==> next_comm=kworker/0:1 next_pid=31 next_prio=120\n"
    "kworker/0:1 31/31 [000] 1.000002: sched:sched_switch: prev_comm=kworker/0:1 prev_pid=31 prev_prio=120 "
    "prev_state=I ==> next_comm=a next_pid=100 next_prio=120\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_str(actions(), "");
  assert_int_equal(count(EV_MARK), 3);
}

static void perf_threads_of_one_process_share_its_cr3(void **state) {
  (void)state;
  const char *t =
    "w 100/101 [000] 1.0: sched:sched_switch: prev_comm=w prev_pid=101 prev_prio=120 prev_state=S "
    "==> next_comm=w next_pid=102 next_prio=120\n"
    "w 100/102 [000] 1.1: raw_syscalls:sys_enter: NR 1 (1, 2, 3, 4, 5, 6)\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_str(actions(), "syscall v0 0 0x1 0x0");
}

static void perf_syscalls_and_faults_become_syscall_sysret_and_touches(void **state) {
  (void)state;
  const char *t =
    "p 7/7 [000] 5.000000: raw_syscalls:sys_enter: NR 39 (0, 0, 0, 0, 0, 0)\n"
    "p 7/7 [000] 5.000001: raw_syscalls:sys_exit: NR 39 = 7\n"
    "p 7/7 [000] 5.000002: exceptions:page_fault_user: address=0x7ff777125e06 ip=0x7ff77710d7ad error_code=0x6\n"
    "p 7/7 [000] 5.000003: exceptions:page_fault_kernel: address=0x55d2b8246430 ip=elf_load error_code=0x0\n"
    "p 7/7 [000] 5.000004: exceptions:page_fault_kernel: address=copy_page+0x4 ip=elf_load error_code=0x0\n"
    "p 7/7 [000] 5.000005: raw_syscalls:sys_enter: NR -1 (0, 0, 0, 0, 0, 0)\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_str(actions(), "syscall v0 0 0x27 0x0; sysret v0 0 0x0 0x0; touch v0 1 0x7ff777125000 0x1; "
                        "touch v0 0 0x55d2b8246000 0x1");
  assert_int_equal(im.skipped, 2);   /* the symbol address, NR -1 */
  assert_int_equal(im.used, 4);
}

static void perf_time_between_events_becomes_run_cycles(void **state) {
  (void)state;
  const char *t =
    "p 7/7 [000] 5.000000: raw_syscalls:sys_enter: NR 0 (0, 0, 0, 0, 0, 0)\n"
    "p 7/7 [000] 5.000010: raw_syscalls:sys_exit: NR 0 = 0\n";         /* 10 us at 2.4 GHz */
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_int_equal(run_cycles(), 24000);
}

static void perf_switch_flush_is_the_switch_cr3_write_other_flushes_reload_cr3(void **state) {
  (void)state;
  const char *t =
    SW("a", 100, "000", "1.0", "b", 200)
    "a 100/100 [000] 1.1: tlb:tlb_flush: pages:-1 reason:flush on task switch (0)\n"
    "b 200/200 [000] 1.2: tlb:tlb_flush: pages:1 reason:local MM shootdown (3)\n"
    "b 200/200 [000] 1.3: tlb:tlb_flush: pages:-1 reason:remote IPI send (4)\n"
    "b 200/200 [000] 1.4: tlb:tlb_flush: pages:-1 reason:flush on task switch (0)\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  /* the tlb_flush line of 'a' after the switch does not switch back to a */
  assert_str(actions(), "crw v0 3 0x10100000 0x0; crw v0 3 0x10100000 0x0; crw v0 3 0x10100000 0x0");
  assert_int_equal(im.skipped, 1);
}

static void perf_a_line_of_a_task_not_loaded_means_an_unrecorded_switch(void **state) {
  (void)state;
  const char *t =
    SW("a", 100, "000", "1.0", "swapper/0", 0)
    "b 200/200 [000] 1.1: raw_syscalls:sys_exit: NR 0 = 4\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_str(actions(), "crw v0 3 0x10100000 0x0; sysret v0 0 0x0 0x0");
  assert_int_equal(count(EV_MARK), 2);
}

static void perf_cpus_become_dense_vcpus_in_order_of_appearance(void **state) {
  (void)state;
  const char *t =
    "p 7/7 [005] 1.0: raw_syscalls:sys_enter: NR 1 (0, 0, 0, 0, 0, 0)\n"
    "q 8/8 [002] 1.0: raw_syscalls:sys_enter: NR 2 (0, 0, 0, 0, 0, 0)\n"
    "p 7/7 [005] 1.1: raw_syscalls:sys_exit: NR 1 = 0\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_str(actions(), "syscall v0 0 0x1 0x0; syscall v1 0 0x2 0x0; sysret v0 0 0x0 0x0");
  assert_int_equal(im.nvcpus, 2);
  assert_int_equal(im.native_cpu[0], 5);
  assert_int_equal(im.init[1].cr3, 0x10100000);    /* q, the second process, ran first on CPU 2 */
}

static void perf_comm_with_blanks_and_old_switch_format_parse(void **state) {
  (void)state;
  const char *t =
    "Web Content 300/300 [001] 2.000000: sched:sched_switch: Web Content:300 [120] S ==> bash:400 [120]\n";
  assert_int_equal(import_text(PERF, t, false), 0);
  assert_str(actions(), "crw v0 3 0x10100000 0x0");
}

static void perf_malformed_line_is_reported_with_number_and_text(void **state) {
  (void)state;
  const char *t =
    "# comment\n"
    "p 7/7 [000] 5.0: raw_syscalls:sys_enter: NR 0 (0, 0, 0, 0, 0, 0)\n"
    "p 7/7 [000] 5.1: sched:sched_switch: prev_comm=p prev_pid=7 garbage\n"
    "this is not perf output\n";
  assert_int_equal(import_text(PERF, t, false), EXIT_BADINPUT);
  assert_str(im.err, "in.txt:3: sched_switch: no next_pid= field: "
                     "'p 7/7 [000] 5.1: sched:sched_switch: prev_comm=p prev_pid=7 garbage'");
  import_free(&im);
  assert_int_equal(import_text(PERF, t, true), 0);
  assert_int_equal(im.bad, 2);
  assert_int_equal(im.first_bad[1].where, 4);
  assert_str(im.first_bad[1].text, "this is not perf output");
  assert_int_equal(im.used, 1);
  assert_int_equal(im.ignored, 1);
}

static void perf_fault_fields_at_the_end_of_the_input_are_not_read_past(void **state) {
  (void)state;
  /* "address=" is the last thing in the file: there is no address to read. */
  assert_int_equal(import_at_page_end(PERF, "p 7/7 [000] 5.0: exceptions:page_fault_user: error_code=0x2 address="), 0);
  assert_int_equal(im.skipped, 1);
  import_free(&im);
  assert_int_equal(import_at_page_end(PERF, "p 7/7 [000] 5.0: exceptions:page_fault_user: error_code=0x2 address=0"), 0);
  assert_int_equal(im.skipped, 1);
}

/* A last line of blanks without a newline (a fuzz input: one space) is not
** read past: the comment test looks at the first non-blank byte, if any. */
static void perf_a_last_line_of_blanks_is_not_read_past(void **state) {
  (void)state;
  static const char *const inputs[] = { " ", "\t", "  \t ", "p 7/7 [000] 5.0: raw_syscalls:sys_enter: NR 1\n " };
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    assert_int_equal(import_at_page_end(PERF, inputs[i]), 0);
    import_free(&im);
  }
}

static void perf_task_and_cpu_numbers_too_large_are_reported(void **state) {
  (void)state;
  static const char *const lines[] = {
    "p 99999999999999999999999/7 [000] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n",
    "p 7/99999999999999999999999 [000] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n",
    "p 99999999999999999999999 [000] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n",
    "p 7/4294967303 [000] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n",
    "p 7/7 [99999999999999999999999] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n",
    "p 7/7 [4294967296] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n",
  };
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
    char t[256];
    snprintf(t, sizeof t, "p 7/7 [000] 4.0: raw_syscalls:sys_exit: NR 0 = 0\n%s", lines[i]);
    assert_int_equal(import_text(PERF, t, false), EXIT_BADINPUT);
    assert_contains(im.err, "in.txt:2: ");
    assert_contains(im.err, "out of range");
    import_free(&im);
  }
  memset(&im, 0, sizeof im);
}

static void perf_timestamp_jump_beyond_the_gap_limit_is_reported(void **state) {
  (void)state;
  const char *t =
    "p 7/7 [000] 5.000000: raw_syscalls:sys_enter: NR 0 (0, 0, 0, 0, 0, 0)\n"
    "p 7/7 [000] 10000005.000000: raw_syscalls:sys_exit: NR 0 = 0\n"      /* a corrupt timestamp */
    "p 7/7 [000] 5.000010: raw_syscalls:sys_exit: NR 0 = 0\n";
  assert_int_equal(import_text(PERF, t, false), EXIT_BADINPUT);
  assert_contains(im.err, "in.txt:2: ");
  assert_contains(im.err, "2^48 cycles");
  import_free(&im);
  assert_int_equal(import_text(PERF, t, true), 0);
  assert_int_equal(im.bad, 1);
  assert_int_equal(run_cycles(), 24000);            /* the line after it still counts from 5.0 */
  assert_int_equal(count(EV_SYSRET), 1);
}

/* ---- KVM ftrace ---- */

static void kvm_cr_exit_with_kvm_cr_becomes_a_cr_write_and_guest_time_a_run(void **state) {
  (void)state;
  const char *t =
    "qemu-system-x86-8397 [002] d....  1404.389300: kvm_entry: vcpu 1, rip 0xffffffff81000000\n"
    "qemu-system-x86-8397 [002] d....  1404.389366: kvm_exit: vcpu 1 reason CR_ACCESS rip 0xffffffff8100007a "
    "info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000\n"
    "qemu-system-x86-8397 [002] .....  1404.389373: kvm_cr: cr_write 0 = 0x80050033\n"
    "qemu-system-x86-8397 [002] .....  1404.389509: kvm_msr: msr_read c0000080 = 0xd01\n"
    "qemu-system-x86-8397 [002] d....  1404.389510: kvm_entry: vcpu 1, rip 0xffffffff81000132\n";
  assert_int_equal(import_text(KVM, t, false), 0);
  /* the kvm_msr has no MSR exit to explain: skipped */
  assert_str(actions(), "crw v1 0 0x80050033 0x0");
  assert_int_equal(run_cycles(), 158400);             /* 66 us of guest time at 2.4 GHz */
  assert_int_equal(im.nvcpus, 2);
  assert_int_equal(im.skipped, 1);
}

static void kvm_details_and_qualifications_become_guest_actions(void **state) {
  (void)state;
  const char *t =
    "q-1 [000] 1.000000: kvm_exit: reason MSR_WRITE rip 0x1 info 0 0\n"
    "q-1 [000] 1.000001: kvm_msr: msr_write 6e0 = 0x1234\n"
    "q-1 [000] 1.000002: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000003: kvm_exit: reason DR_ACCESS rip 0x1 info 17 0\n"          /* MOV from DR7 */
    "q-1 [000] 1.000004: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000005: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 800000ec\n"
    "q-1 [000] 1.000006: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000007: kvm_exit: reason IO_INSTRUCTION rip 0x1 info 3f80000 0\n"
    "q-1 [000] 1.000008: kvm_pio: pio_write at 0x3f8 size 1 count 1 val 0x41\n"
    "q-1 [000] 1.000009: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000010: kvm_exit: reason CPUID rip 0x1 info 0 0\n"
    "q-1 [000] 1.000011: kvm_cpuid: func 7 idx 1 rax 0 rbx 0 rcx 0 rdx 0, cpuid entry found\n"
    "q-1 [000] 1.000012: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000013: kvm_exit: reason VMCALL rip 0x1 info 0 0\n"
    "q-1 [000] 1.000014: kvm_hypercall: nr 0x5 a0 0x0 a1 0x0 a2 0x0 a3 0x0\n"
    "q-1 [000] 1.000015: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000016: kvm_exit: reason EXCEPTION_NMI rip 0x1 info 7f0000001234 80000b0e\n"
    "q-1 [000] 1.000017: kvm_page_fault: address 7f0000001234 error_code 6\n"
    "q-1 [000] 1.000018: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000019: kvm_exit: reason CR_ACCESS rip 0x1 info 13 0\n"          /* MOV from CR3 */
    "q-1 [000] 1.000020: kvm_exit: reason HLT rip 0x1 info 0 0\n";
  assert_int_equal(import_text(KVM, t, false), 0);
  assert_str(actions(), "wrmsr v0 0 0x6e0 0x1234; drr v0 7 0x0 0x0; intr v0 0 0xec 0x0; io v0 3 0x3f8 0x0; "
                        "cpuid v0 0 0x7 0x1; vmcall v0 0 0x5 0x0; touch v0 1 0x7f0000001000 0x1; "
                        "crr v0 3 0x0 0x0; hlt v0 0 0x0 0x0");
}

static void kvm_malformed_line_is_reported_with_number_and_text(void **state) {
  (void)state;
  const char *t =
    "# tracer: nop\n"
    "q-1 [000] 1.0: kvm_exit: vcpu 0 rip 0x1\n";
  assert_int_equal(import_text(KVM, t, false), EXIT_BADINPUT);
  assert_str(im.err, "in.txt:2: kvm_exit: no 'reason' field: 'q-1 [000] 1.0: kvm_exit: vcpu 0 rip 0x1'");
}

static void kvm_timestamp_jump_beyond_the_gap_limit_is_reported(void **state) {
  (void)state;
  const char *t =
    "q-1 [000] 1.000000: kvm_entry: vcpu 0\n"
    "q-1 [000] 10000001.000000: kvm_exit: reason HLT rip 0x1 info 0 0\n"
    "q-1 [000] 1.000010: kvm_exit: reason HLT rip 0x1 info 0 0\n";
  assert_int_equal(import_text(KVM, t, false), EXIT_BADINPUT);
  assert_contains(im.err, "in.txt:2: ");
  assert_contains(im.err, "2^48 cycles");
  import_free(&im);
  assert_int_equal(import_text(KVM, t, true), 0);
  assert_int_equal(im.bad, 1);
  assert_int_equal(run_cycles(), 24000);
  assert_int_equal(count(EV_HLT), 1);
}

/* ---- xentrace ---- */

struct xbuf { unsigned char b[2048]; size_t n; };

static void put32(struct xbuf *x, uint32_t v) {
  assert_true(x->n + 4 <= sizeof x->b);
  for (int i = 0; i < 4; i++) x->b[x->n++] = (unsigned char)(v >> (8 * i));
}

static void xrec(struct xbuf *x, uint32_t event, bool tsc, uint64_t t, unsigned n, const uint32_t *extra) {
  put32(x, event | (uint32_t)n << 28 | (tsc ? 1u << 31 : 0));
  if (tsc) { put32(x, (uint32_t)t); put32(x, (uint32_t)(t >> 32)); }
  for (unsigned i = 0; i < n; i++) put32(x, extra[i]);
}

static int import_xen(const struct xbuf *x, bool skip_bad) {
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .skip_bad = skip_bad, .input = "x.bin" };
  memset(&got, 0, sizeof got);
  import_init(&im, &o, collect, &got);
  return import_xentrace(&im, x->b, x->n);
}

static void xen_exit_with_cr_write_becomes_cr_write_and_tsc_delta_a_run(void **state) {
  (void)state;
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 3, 0 });                  /* pCPU 3 */
  xrec(&x, 0x00081001, true, 1000, 0, NULL);                                /* VMENTRY */
  xrec(&x, 0x00081102, true, 6000, 3, (uint32_t[]){ 28, 0x81000000, 0xffffffff });
  xrec(&x, 0x00082109, false, 0, 3, (uint32_t[]){ 3, 0x5000, 0x1 });        /* CR3 <- 0x100005000 */
  xrec(&x, 0x00081001, true, 9000, 0, NULL);
  xrec(&x, 0x00081102, true, 9500, 3, (uint32_t[]){ 12, 0, 0 });            /* HLT */
  xrec(&x, 0x0002f001, true, 9600, 1, (uint32_t[]){ 7 });                   /* a scheduler record */
  assert_int_equal(import_xen(&x, false), 0);
  assert_str(actions(), "crw v0 3 0x100005000 0x0; hlt v0 0 0x0 0x0");
  assert_str(measured(), "28 3000");            /* VMEXIT at 6000 to VMENTRY at 9000; the HLT has no entry */
  assert_int_equal(run_cycles(), 5500);
  assert_int_equal(im.native_cpu[0], 3);
  assert_int_equal(im.skipped, 1);
}

static const char *meta_member(const char *key);

/* Every handler record that has a vmxsim event explains its exit (xen/include/public/trace.h). */
static void xen_handler_records_become_guest_actions(void **state) {
  (void)state;
  struct xbuf x = { .n = 0 };
  uint64_t t = 1000;
  struct { uint32_t reason, event; unsigned n; uint32_t w[6]; } exits[] = {
    { 32, 0x0008200d, 3, { 0x6e0, 0x1234, 0 } },            /* MSR_WRITE */
    { 31, 0x0008200c, 3, { 0xc0000080, 0xd01, 0 } },        /* MSR_READ */
    { 10, 0x0008200e, 5, { 0x7, 1, 2, 3, 4 } },             /* CPUID leaf 7 */
    { 30, 0x00082216, 2, { 0x3f8, 0x5a } },                 /* IOPORT_WRITE */
    { 30, 0x00082016, 1, { 0x71 } },                        /* IOPORT_READ */
    { 1, 0x0008200f, 1, { 236 } },                          /* INTR */
    { 18, 0x00082012, 1, { 5 } },                           /* VMMCALL */
    { 14, 0x00082114, 3, { 0, 0x1000, 0x7f00 } },           /* INVLPG64 */
    { 0, 0x00082101, 3, { 0x1234, 0x7f2a, 6 } },            /* PF_XEN64, error code 6 */
    { 48, 0x00082021, 6, { 0x5000, 0, 0, 0, 2, 0 } },       /* NPF, a write */
    { 0, 0x00082023, 1, { 6 } },                            /* TRAP #UD */
    { 28, 0x00082018, 0, { 0 } },                           /* CLTS */
    { 16, 0x0008201a, 2, { 0, 0 } },                        /* RDTSC */
    { 12, 0x00082013, 1, { 0 } },                           /* HLT */
    { 0, 0x00082010, 0, { 0 } },                            /* NMI: nothing to replay */
  };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  for (size_t i = 0; i < sizeof exits / sizeof *exits; i++) {
    xrec(&x, 0x00081102, true, t, 3, (uint32_t[]){ exits[i].reason, 0, 0 });
    xrec(&x, exits[i].event, false, 0, exits[i].n, exits[i].w);
    xrec(&x, 0x00081001, true, t + 100 + i, 0, NULL);
    t += 1000;
  }
  int rc = import_xen(&x, false);
  if (rc) print_message("%s\n", im.err);
  assert_int_equal(rc, 0);
  assert_str(actions(), "wrmsr v0 0 0x6e0 0x1234; rdmsr v0 0 0xc0000080 0x0; cpuid v0 0 0x7 0x0; "
             "io v0 3 0x3f8 0x0; io v0 2 0x71 0x0; intr v0 0 0xec 0x0; vmcall v0 0 0x5 0x0; "
             "invlpg v0 0 0x7f0000001000 0x0; touch v0 1 0x7f2a00001000 0x1; touch v0 1 0x5000 0x1; "
             "exc v0 0 0x6 0x0; clts v0 0 0x0 0x0; rdtsc v0 0 0x0 0x0; hlt v0 0 0x0 0x0");
  assert_str(measured(), "32 100; 31 101; 10 102; 30 103; 30 104; 1 105; 18 106; 14 107; 0 108; 48 109; "
             "0 110; 28 111; 16 112; 12 113; 0 114 alone");
  assert_str(meta_member("exits_unmapped"), "{\"EXCEPTION_NMI\":1}");
  assert_str(meta_member("io_size_assumed"), "2");
  bool ec = false;
  for (int i = 0; i < got.n; i++)
    ec |= got.ev[i].type == EV_MEASURED && MEASURED_REASON(got.ev[i].b) == 0 && MEASURED_INFO(got.ev[i].b) == 6;
  assert_true(ec);                                /* the page fault's error code is kept */
}

/* A vCPU's initial registers come only from what precedes its first record
** (import.h, struct import_init): a CR3 read at its first exit is the CR3 it
** ran with; one read after it has exited for something else is a later state,
** not the initial one. */
static void xen_initial_cr3_is_only_what_precedes_the_first_record(void **state) {
  (void)state;
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  xrec(&x, 0x00081102, true, 1000, 3, (uint32_t[]){ 28, 0, 0 });
  xrec(&x, 0x00082108, false, 0, 3, (uint32_t[]){ 3, 0x7000, 0 });           /* CR_READ64 CR3 = 0x7000 */
  xrec(&x, 0x00081001, true, 1100, 0, NULL);
  assert_int_equal(import_xen(&x, false), 0);
  print_message("first exit reads CR3: initial CR3 %#llx (expected 0x7000)\n", (unsigned long long)im.init[0].cr3);
  assert_int_equal(im.init[0].cr3, 0x7000);
  import_free(&im);

  x.n = 0;
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  xrec(&x, 0x00081102, true, 1000, 3, (uint32_t[]){ 32, 0, 0 });
  xrec(&x, 0x0008200d, false, 0, 3, (uint32_t[]){ 0x6e0, 1, 0 });          /* MSR_WRITE: the first record */
  xrec(&x, 0x00081001, true, 1100, 0, NULL);
  xrec(&x, 0x00081102, true, 2000, 3, (uint32_t[]){ 28, 0, 0 });
  xrec(&x, 0x00082108, false, 0, 3, (uint32_t[]){ 3, 0x7000, 0 });
  xrec(&x, 0x00081001, true, 2100, 0, NULL);
  assert_int_equal(import_xen(&x, false), 0);
  print_message("CR3 read after an MSR exit: initial CR3 %#llx (expected the default, %#llx)\n",
                (unsigned long long)im.init[0].cr3, (unsigned long long)import_cr3_of(0));
  assert_int_equal(im.init[0].cr3, import_cr3_of(0));
}

/* One pass (opt.inits_inline): a vCPU's @init records go out just before its first record. */
static void inits_inline_come_before_each_vcpus_first_record(void **state) {
  (void)state;
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  xrec(&x, 0x00081102, true, 1000, 3, (uint32_t[]){ 28, 0, 0 });
  xrec(&x, 0x00082108, false, 0, 3, (uint32_t[]){ 3, 0x7000, 0 });
  xrec(&x, 0x00081001, true, 1100, 0, NULL);
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 1, 0 });
  xrec(&x, 0x00081102, true, 1200, 3, (uint32_t[]){ 12, 0, 0 });
  xrec(&x, 0x00082013, false, 0, 0, NULL);                                   /* HLT */
  xrec(&x, 0x00081001, true, 1300, 0, NULL);
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .input = "x.bin", .inits_inline = true };
  memset(&got, 0, sizeof got);
  import_init(&im, &o, collect, &got);
  assert_int_equal(import_xentrace(&im, x.b, x.n), 0);
  char seq[256] = "";
  for (int i = 0; i < got.n && i < MAX_EVS; i++) {
    const struct trace_event *e = &got.ev[i];
    char one[32];
    if (e->type == EV_INIT) snprintf(one, sizeof one, "init v%u cr%u; ", e->vcpu, e->aux);
    else snprintf(one, sizeof one, "%s v%u; ", e->type == EV_MEASURED ? "measured" : "event", e->vcpu);
    strncat(seq, one, sizeof seq - strlen(seq) - 1);
  }
  print_message("%s\n", seq);
  assert_str(seq, "init v0 cr0; init v0 cr3; init v0 cr4; event v0; measured v0; "
                  "init v1 cr0; init v1 cr3; init v1 cr4; event v1; measured v1; ");
  assert_int_equal(got.ev[1].a, 0x7000);           /* v0's CR3, from its first exit */
}

static void xen_truncated_record_is_reported_with_its_byte_offset(void **state) {
  (void)state;
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });   /* 12 bytes */
  put32(&x, 0x00081102 | 3u << 28 | 1u << 31);               /* needs 24 bytes, has 4 */
  assert_int_equal(import_xen(&x, false), EXIT_BADINPUT);
  assert_str(im.err, "x.bin: byte 12: truncated record: the file ends 4 bytes into it");
}

static void xen_tsc_jump_beyond_the_gap_limit_is_reported_with_its_byte_offset(void **state) {
  (void)state;
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });                  /* 12 bytes */
  xrec(&x, 0x00081001, true, 1000, 0, NULL);                                /* 12 bytes */
  xrec(&x, 0x00081102, true, 1000 + (1ull << 56), 3, (uint32_t[]){ 12, 0, 0 });   /* byte 24: corrupt TSC */
  xrec(&x, 0x00081102, true, 3000, 3, (uint32_t[]){ 12, 0, 0 });
  assert_int_equal(import_xen(&x, false), EXIT_BADINPUT);
  assert_contains(im.err, "x.bin: byte 24: ");
  assert_contains(im.err, "2^48 cycles");
  import_free(&im);
  assert_int_equal(import_xen(&x, true), 0);
  assert_int_equal(im.bad, 1);
  assert_int_equal(run_cycles(), 2000);
  assert_int_equal(count(EV_HLT), 1);
}

/* ---- the exit table both host formats share (import_exit.h) ---- */

/* The metadata member `key` of the last import, unformatted. */
static const char *meta_member(const char *key) {
  static char buf[512];
  char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(im.meta, key));
  snprintf(buf, sizeof buf, "%s", s ? s : "(absent)");
  free(s);
  return buf;
}

static void exits_alone_map_alike_in_both_host_formats(void **state) {
  (void)state;
  const char *t =
    "q-1 [000] 1.000000: kvm_exit: reason RDTSC rip 0x1 info 0 0\n"
    "q-1 [000] 1.000001: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000002: kvm_exit: reason CR_ACCESS rip 0x1 info 3 0\n"          /* MOV to CR3, no kvm_cr */
    "q-1 [000] 1.000003: kvm_entry: vcpu 0\n";
  assert_int_equal(import_text(KVM, t, false), 0);
  assert_str(actions(), "rdtsc v0 0 0x0 0x0");
  assert_str(meta_member("exits_unmapped"), "{\"CR_ACCESS without kvm_cr\":1}");
  assert_str(meta_member("exits"), "2");
  import_free(&im);
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  xrec(&x, 0x00081102, true, 100, 3, (uint32_t[]){ 16, 0, 0 });              /* RDTSC */
  xrec(&x, 0x00081001, true, 200, 0, NULL);
  xrec(&x, 0x00081102, true, 300, 3, (uint32_t[]){ 28, 0, 0 });              /* CR_ACCESS, no CR record */
  xrec(&x, 0x00081102, true, 400, 3, (uint32_t[]){ 77, 0, 0 });              /* no such reason */
  assert_int_equal(import_xen(&x, false), 0);
  assert_str(actions(), "rdtsc v0 0 0x0 0x0");
  /* xentrace records no qualification: the reason's name alone, nothing about kvm_cr */
  assert_str(meta_member("exits_unmapped"), "{\"CR_ACCESS\":1,\"reason 77\":1}");
  assert_str(meta_member("exit_reasons"), "{\"RDTSC\":1,\"CR_ACCESS\":1,\"reason 77\":1}");
}

/* The reasons of the interrupt controller and the rarer instructions: each
** exit no detail record explained becomes the events whose replay decides the
** same exit again (docs/sources.md, "Exits a replay decides"), alike from
** KVM's text and from xentrace, where only the reason is recorded. */
static void interrupt_windows_and_rare_exits_map_to_events_in_both_host_formats(void **state) {
  (void)state;
  static const char *const window = "cli v0 0 0x0 0x0; virq v0 0 0x20 0x0; sti v0 1 0x0 0x0";
  static const char *const nmi = "vnmi v0 0 0x0 0x0; vnmi v0 0 0x0 0x0; iret v0 0 0x0 0x0";
  const char *t =
    "q-1 [000] 1.000000: kvm_exit: reason INTERRUPT_WINDOW rip 0x1 info 0 0\n"
    "q-1 [000] 1.000001: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000002: kvm_exit: reason NMI_WINDOW rip 0x1 info 0 0\n"
    "q-1 [000] 1.000003: kvm_exit: reason APIC_ACCESS rip 0x1 info 300 0\n"          /* a read of the ICR */
    "q-1 [000] 1.000004: kvm_exit: reason TASK_SWITCH rip 0x1 info c0000028 0\n"
    "q-1 [000] 1.000005: kvm_exit: reason VMREAD rip 0x1 info 0 0\n"
    "q-1 [000] 1.000006: kvm_exit: reason INVPCID rip 0x1 info 0 0\n"
    "q-1 [000] 1.000007: kvm_exit: reason PREEMPTION_TIMER rip 0x1 info 0 0\n";
  assert_int_equal(import_text(KVM, t, false), 0);
  char want[600];
  snprintf(want, sizeof want, "%s; %s; apic v0 0 0x300 0x0; taskswitch v0 3 0x28 0x0; vmx v0 0 0x17 0x0; "
           "invpcid v0 0 0x0 0x0; virq v0 3 0xec 0x0", window, nmi);
  assert_str(actions(), want);     /* the preemption timer's expiry: the guest's timer interrupt arriving */
  assert_str(meta_member("exits_unmapped"), "{}");
  import_free(&im);
  struct xbuf x = { .n = 0 };
  xrec(&x, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  static const uint32_t reasons[] = { 7, 8, 44, 45, 55, 51, 36, 39, 9, 2, 24, 49 };
  for (unsigned i = 0; i < sizeof reasons / sizeof *reasons; i++) {
    xrec(&x, 0x00081102, true, 100 + 200 * i, 3, (uint32_t[]){ reasons[i], 0, 0 });
    xrec(&x, 0x00081001, true, 200 + 200 * i, 0, NULL);
  }
  assert_int_equal(import_xen(&x, false), 0);
  snprintf(want, sizeof want, "%s; %s; apic v0 1 0xb0 0x0; apic v0 1 0xb0 0x0; xsetbv v0 0 0x0 0x0; "
           "rdtscp v0 0 0x0 0x0; mwait v0 0 0x0 0x0; monitor v0 0 0x0 0x0; taskswitch v0 0 0x0 0x0; "
           "triplefault v0 0 0x0 0x0; vmx v0 0 0x18 0x0", window, nmi);
  assert_str(actions(), want);
  assert_str(meta_member("exits_unmapped"), "{\"EPT_MISCONFIG\":1}");
}

/* ---- the guest's timer behind the host's timer interrupt (a recording made with the hrtimer) ---- */

/* An EXTERNAL_INTERRUPT exit at the host's timer vector (0xec) in which the
** vCPU's own thread accepted an interrupt is the guest's deadline expiring in
** KVM's hrtimer: the timer's arrival, in every kvm_exit format that records
** the vector; the host's own timer, an IPI's or a device's interrupt accepted
** on another thread, and other vectors stay host interrupts. */
static void host_timer_exit_with_an_accepted_interrupt_is_the_guests_timer(void **state) {
  (void)state;
  const char *t =
    /* Linux >= 5.10 */
    "CPU 0/KVM-11 [001] 1.000000: kvm_exit: vcpu 0 reason EXTERNAL_INTERRUPT rip 0x1 info1 0x0 info2 0x0 "
    "intr_info 0x800000ec error_code 0x00000000\n"
    "CPU 0/KVM-11 [001] 1.000001: kvm_apic_accept_irq: apicid 0 vec 236 (Fixed|edge)\n"
    "CPU 0/KVM-11 [001] 1.000001: kvm_inj_virq: IRQ 0xec\n"
    "CPU 0/KVM-11 [001] 1.000002: kvm_entry: vcpu 0, rip 0x1\n"
    /* the host's own tick: no interrupt accepted on the thread */
    "CPU 0/KVM-11 [001] 1.000003: kvm_exit: vcpu 0 reason EXTERNAL_INTERRUPT rip 0x1 info1 0x0 info2 0x0 "
    "intr_info 0x800000ec error_code 0x00000000\n"
    "CPU 0/KVM-11 [001] 1.000003: hrtimer_expire_entry: hrtimer=0xffff1 function=tick_sched_timer now=1000003\n"
    "io-10 [000] 1.000003: kvm_apic_accept_irq: apicid 0 vec 34 (Fixed|level)\n"
    "CPU 0/KVM-11 [001] 1.000004: kvm_entry: vcpu 0, rip 0x1\n"
    /* Linux 3.x to 5.9: info QUALIFICATION INTR_INFO */
    "CPU 1/KVM-12 [002] 1.000005: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 800000ec\n"
    "CPU 1/KVM-12 [002] 1.000005: hrtimer_expire_entry: hrtimer=0xffff2 function=apic_timer_fn now=1000005\n"
    "CPU 1/KVM-12 [002] 1.000006: kvm_apic_accept_irq: apicid 1 vec 236 (Fixed|edge) (coalesced)\n"
    "CPU 1/KVM-12 [002] 1.000006: kvm_entry: vcpu 1\n"
    /* KVM's hrtimer of some vCPU's deadline fired here, and nothing was accepted on this thread:
    ** another vCPU's timer, not this one's */
    "CPU 1/KVM-12 [002] 1.000006: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 800000ec\n"
    "CPU 1/KVM-12 [002] 1.000006: hrtimer_expire_entry: hrtimer=0xffff3 function=apic_timer_fn now=1000006\n"
    "CPU 1/KVM-12 [002] 1.000006: kvm_entry: vcpu 1\n"
    /* another vector, with an interrupt accepted: a device's, not the timer's */
    "CPU 1/KVM-12 [002] 1.000007: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 80000022\n"
    "CPU 1/KVM-12 [002] 1.000007: kvm_apic_accept_irq: apicid 1 vec 34 (Fixed|edge)\n"
    "CPU 1/KVM-12 [002] 1.000008: kvm_entry: vcpu 1\n";
  assert_int_equal(import_text(KVM, t, false), 0);
  assert_str(actions(), "virq v0 3 0xec 0x0; intr v0 0 0xec 0x0; virq v1 3 0xec 0x0; intr v1 0 0xec 0x0; "
                        "intr v1 0 0x22 0x0");
  assert_str(meta_member("guest_timer_exits"), "2");
  assert_str(meta_member("exits_undecided"), "(absent)");   /* the recording tells every one */
  assert_str(measured(), "1 4800; 1 2400; 1 2400; 1 1; 1 2400");     /* each measured, none alone */
}

/* Where the recording cannot tell, the exit stays the host interrupt it
** surely was, and the metadata says how many and why: no vector recorded
** (kvm_exit's first format, "reason NAME rip ADDR"), or the timer's vector
** in a recording that holds no record telling the guest's timer. */
static void host_timer_exits_the_recording_cannot_tell_are_named_undecided(void **state) {
  (void)state;
  const char *t =
    "q-1 [000] 1.000000: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1\n"
    "q-1 [000] 1.000001: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000002: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 800000ec\n"
    "q-1 [000] 1.000003: kvm_inj_virq: irq 236\n"
    "q-1 [000] 1.000004: kvm_entry: vcpu 0\n"
    "q-1 [000] 1.000005: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 800000ec\n"
    "q-1 [000] 1.000006: kvm_entry: vcpu 0\n";
  assert_int_equal(import_text(KVM, t, false), 0);
  assert_str(actions(), "intr v0 0 0x0 0x0; intr v0 0 0xec 0x0; intr v0 0 0xec 0x0");
  assert_str(meta_member("guest_timer_exits"), "0");
  const char *u = meta_member("exits_undecided");
  assert_contains(u, "{\"reason\":\"EXTERNAL_INTERRUPT\",\"count\":1,\"why\":\"no vector recorded:");
  assert_contains(u, "{\"reason\":\"EXTERNAL_INTERRUPT\",\"count\":2,\"why\":\"at the host's timer vector, and "
                     "no kvm_apic_accept_irq");
  import_free(&im);
  /* a malformed accept record explaining a timer exit is bad input, named */
  const char *bad =
    "q-1 [000] 1.000000: kvm_exit: reason EXTERNAL_INTERRUPT rip 0x1 info 0 800000ec\n"
    "q-1 [000] 1.000001: kvm_apic_accept_irq: apicid 0 vec 999 (Fixed|edge)\n";
  assert_int_equal(import_text(KVM, bad, false), EXIT_BADINPUT);
  assert_contains(im.err, "in.txt:2: kvm_apic_accept_irq: expected 'apicid N vec V' (V to 255)");
}

/* ---- helpers ---- */

static void parse_secs_takes_any_fraction_to_nanoseconds(void **state) {
  (void)state;
  uint64_t ns;
  assert_true(import_parse_secs("1404.389366", 11, &ns));
  assert_int_equal(ns, 1404389366000ull);
  assert_true(import_parse_secs("7.123456789", 11, &ns));
  assert_int_equal(ns, 7123456789ull);
  assert_true(import_parse_secs("12", 2, &ns));
  assert_int_equal(ns, 12000000000ull);
  assert_false(import_parse_secs("12.", 3, &ns));
  assert_false(import_parse_secs("1x", 2, &ns));
  const char *max = "18446744073.709551615", *over = "18446744073.709551616", *far = "18446744073.999999999";
  assert_true(import_parse_secs(max, strlen(max), &ns));
  assert_true(ns == UINT64_MAX);
  assert_false(import_parse_secs(over, strlen(over), &ns));   /* 2^64 ns: does not wrap */
  assert_false(import_parse_secs(far, strlen(far), &ns));
}

static void ns_to_cycles_saturates_instead_of_overflowing(void **state) {
  (void)state;
  struct import_opts o = { .cpu_ghz = 999, .paging = PAGING_64 };
  import_init(&im, &o, collect, &got);
  assert_int_equal(import_ns_to_cycles(&im, 1000), 999000);
  assert_true(import_ns_to_cycles(&im, UINT64_MAX) == UINT64_MAX);
  assert_true(import_ns_to_cycles(&im, UINT64_MAX / 100) == UINT64_MAX);
}

static void field_lookup_needs_a_field_boundary(void **state) {
  (void)state;
  const char *s = "comm=a pid=3 child_pid=4";
  assert_ptr_equal(import_field(s, strlen(s), "pid="), s + 11);
  assert_ptr_equal(import_field(s, strlen(s), "child_pid="), s + 23);
  assert_null(import_field(s, strlen(s), "id="));
}

/* ---- xentrace: a summary's lean pass over a file (import.h, opt.notes) ---- */

struct lean_tally { uint64_t exits, cycles; struct exit_note block[IMPORT_NOTES_BLOCK]; };

static struct exit_note *lean_count(void *ctx, struct exit_note *full, size_t n) {
  struct lean_tally *t = ctx;
  for (size_t i = 0; i < n; i++)
    if (full[i].kind == EXIT_NOTE_EXIT) { t->exits++; t->cycles += full[i].cycles; }
  return t->block;
}

static void put_le32(unsigned char **p, uint32_t v) {
  for (int i = 0; i < 4; i++) *(*p)++ = (unsigned char)(v >> (8 * i));
}

/* `exits` HLT exits on two pCPUs, in windows of 1000; returns the recording's length. */
static size_t hlt_exits(unsigned char *rec, unsigned exits, uint64_t *cycles) {
  unsigned char *p = rec;
  uint64_t tsc = 1000;
  *cycles = 0;
  for (unsigned i = 0; i < exits; i++) {
    if (i % 1000 == 0) { put_le32(&p, 0x0001f003u | 2u << 28); put_le32(&p, (i / 1000) % 2); put_le32(&p, 0); }
    put_le32(&p, 0x00081102u | 3u << 28 | 1u << 31);             /* VMEXIT64 {HLT, rip} */
    put_le32(&p, (uint32_t)tsc); put_le32(&p, (uint32_t)(tsc >> 32));
    put_le32(&p, 12); put_le32(&p, 0); put_le32(&p, 0);
    put_le32(&p, 0x00082013u | 1u << 28); put_le32(&p, 0);       /* the HLT handler's record */
    tsc += 100 + i % 7;
    *cycles += 100 + i % 7;
    put_le32(&p, 0x00081001u | 1u << 31);                         /* VMENTRY */
    put_le32(&p, (uint32_t)tsc); put_le32(&p, (uint32_t)(tsc >> 32));
    tsc += 1000;
  }
  return (size_t)(p - rec);
}

/* A recording of exits alone longer than the lean pass's reads (256 KiB): each
** read's end cuts an exit, which the next read must complete, or the one pass
** would give up (IMPORT_NOT_LEAN) and the summary read the file twice. */
static void xen_lean_pass_reads_a_file_longer_than_its_reads_in_one_pass(void **state) {
  (void)state;
  enum { EXITS = 20000 };
  unsigned char *rec = xmalloc(EXITS * 44 + (EXITS / 1000 + 1) * 12);   /* exits, CPU changes */
  uint64_t want;
  size_t len = hlt_exits(rec, EXITS, &want);
  assert_true(len > 3 * (256u << 10));
  FILE *f = tmpfile();
  assert_non_null(f);
  assert_int_equal(fwrite(rec, 1, len, f), len);
  assert_int_equal(fflush(f), 0);
  struct lean_tally *t = xcalloc(1, sizeof *t);
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .input = "x.bin", .notes = lean_count, .notes_ctx = t };
  import_init(&im, &o, collect, &got);
  im.map_base = (const char *)rec;               /* read through the file, as a mapped one is */
  im.map_len = len;
  im.map_fd = fileno(f);
  assert_int_equal(import_xentrace(&im, rec, len), 0);
  im.map_base = NULL;
  assert_int_equal(t->exits, EXITS);
  assert_int_equal(t->cycles, want);
  fclose(f);
  free(t);
  free(rec);
}

/* The metadata of an import of x (unformatted; the caller frees): the full
** import's, or the lean pass's, in one pass or after the headers (scan). */
static char *xen_meta_of(const struct xbuf *x, bool lean, bool scan, int *rc) {
  struct lean_tally *t = xcalloc(1, sizeof *t);
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .input = "x.bin" };
  if (lean) { o.notes = lean_count; o.notes_ctx = t; o.note_scan = scan; }
  memset(&got, 0, sizeof got);
  import_init(&im, &o, collect, &got);
  *rc = import_xentrace(&im, x->b, x->n);
  if (lean) assert_int_equal(got.n, 0);          /* the lean pass emits no record */
  char *meta = cJSON_PrintUnformatted(im.meta);
  import_free(&im);
  free(t);
  return meta;
}

/* The lean pass ends a recording as the full import does: each vCPU's exit
** still pending there (its VMENTRY never came: the recording stops inside it,
** or the vCPU was taken off its pCPU as blocked) is settled from its reason,
** here into exits_unmapped, whether the lean pass read the recording in one
** pass or after its headers (as it reads one with scheduler records). */
static void xen_lean_pass_settles_each_vcpus_pending_exit_at_the_end(void **state) {
  (void)state;
  struct xbuf sched = { .n = 0 }, flat = { .n = 0 };
  xrec(&sched, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });              /* pCPU 0 */
  xrec(&sched, 0x00021002, true, 100, 1, (uint32_t[]){ 1u << 16 | 0 });     /* d1v0 runs */
  xrec(&sched, 0x00081001, true, 200, 0, NULL);
  xrec(&sched, 0x00081102, true, 1000, 3, (uint32_t[]){ 49, 0, 0 });        /* EPT_MISCONFIG, no entry */
  xrec(&sched, 0x0001f003, false, 0, 2, (uint32_t[]){ 1, 0 });              /* pCPU 1 */
  xrec(&sched, 0x00021002, true, 150, 1, (uint32_t[]){ 1u << 16 | 1 });     /* d1v1 runs */
  xrec(&sched, 0x00081001, true, 250, 0, NULL);
  xrec(&sched, 0x00081102, true, 500, 3, (uint32_t[]){ 1, 0, 0 });          /* EXTERNAL_INTERRUPT, no INTR */
  xrec(&sched, 0x00021021, true, 600, 1, (uint32_t[]){ 1u << 16 | 1 });     /* d1v1 running -> blocked */
  xrec(&flat, 0x0001f003, false, 0, 2, (uint32_t[]){ 0, 0 });
  xrec(&flat, 0x00081001, true, 200, 0, NULL);
  xrec(&flat, 0x00081102, true, 1000, 3, (uint32_t[]){ 49, 0, 0 });
  const struct xbuf *recs[] = { &sched, &flat };
  const char *unmapped[] = { "\"exits_unmapped\":{\"EPT_MISCONFIG\":1,\"EXTERNAL_INTERRUPT\":1}",
                             "\"exits_unmapped\":{\"EPT_MISCONFIG\":1}" };
  for (unsigned i = 0; i < 2; i++) {
    int rc;
    char *full = xen_meta_of(recs[i], false, false, &rc);
    assert_int_equal(rc, 0);
    assert_contains(full, unmapped[i]);
    char *scanned = xen_meta_of(recs[i], true, true, &rc);
    assert_int_equal(rc, 0);
    assert_str(scanned, full);
    char *one = xen_meta_of(recs[i], true, false, &rc);
    if (i == 0) assert_int_equal(rc, IMPORT_NOT_LEAN);   /* scheduler records: only after the headers */
    else assert_str(one, full);
    free(full);
    free(scanned);
    free(one);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(perf_switch_between_processes_writes_the_next_process_cr3, teardown),
    cmocka_unit_test(perf_a_last_line_of_blanks_is_not_read_past),
    cmocka_unit_test_teardown(perf_idle_and_kernel_threads_keep_the_previous_address_space, teardown),
    cmocka_unit_test_teardown(perf_threads_of_one_process_share_its_cr3, teardown),
    cmocka_unit_test_teardown(perf_syscalls_and_faults_become_syscall_sysret_and_touches, teardown),
    cmocka_unit_test_teardown(perf_time_between_events_becomes_run_cycles, teardown),
    cmocka_unit_test_teardown(perf_switch_flush_is_the_switch_cr3_write_other_flushes_reload_cr3, teardown),
    cmocka_unit_test_teardown(perf_a_line_of_a_task_not_loaded_means_an_unrecorded_switch, teardown),
    cmocka_unit_test_teardown(perf_cpus_become_dense_vcpus_in_order_of_appearance, teardown),
    cmocka_unit_test_teardown(perf_comm_with_blanks_and_old_switch_format_parse, teardown),
    cmocka_unit_test_teardown(perf_malformed_line_is_reported_with_number_and_text, teardown),
    cmocka_unit_test_teardown(perf_fault_fields_at_the_end_of_the_input_are_not_read_past, teardown),
    cmocka_unit_test_teardown(perf_task_and_cpu_numbers_too_large_are_reported, teardown),
    cmocka_unit_test_teardown(perf_timestamp_jump_beyond_the_gap_limit_is_reported, teardown),
    cmocka_unit_test_teardown(kvm_cr_exit_with_kvm_cr_becomes_a_cr_write_and_guest_time_a_run, teardown),
    cmocka_unit_test_teardown(kvm_details_and_qualifications_become_guest_actions, teardown),
    cmocka_unit_test_teardown(kvm_malformed_line_is_reported_with_number_and_text, teardown),
    cmocka_unit_test_teardown(kvm_timestamp_jump_beyond_the_gap_limit_is_reported, teardown),
    cmocka_unit_test_teardown(xen_lean_pass_reads_a_file_longer_than_its_reads_in_one_pass, teardown),
    cmocka_unit_test(xen_lean_pass_settles_each_vcpus_pending_exit_at_the_end),
    cmocka_unit_test_teardown(xen_exit_with_cr_write_becomes_cr_write_and_tsc_delta_a_run, teardown),
    cmocka_unit_test_teardown(xen_handler_records_become_guest_actions, teardown),
    cmocka_unit_test_teardown(xen_initial_cr3_is_only_what_precedes_the_first_record, teardown),
    cmocka_unit_test_teardown(inits_inline_come_before_each_vcpus_first_record, teardown),
    cmocka_unit_test_teardown(xen_truncated_record_is_reported_with_its_byte_offset, teardown),
    cmocka_unit_test_teardown(xen_tsc_jump_beyond_the_gap_limit_is_reported_with_its_byte_offset, teardown),
    cmocka_unit_test_teardown(exits_alone_map_alike_in_both_host_formats, teardown),
    cmocka_unit_test_teardown(interrupt_windows_and_rare_exits_map_to_events_in_both_host_formats, teardown),
    cmocka_unit_test_teardown(host_timer_exit_with_an_accepted_interrupt_is_the_guests_timer, teardown),
    cmocka_unit_test_teardown(host_timer_exits_the_recording_cannot_tell_are_named_undecided, teardown),
    cmocka_unit_test(parse_secs_takes_any_fraction_to_nanoseconds),
    cmocka_unit_test_teardown(ns_to_cycles_saturates_instead_of_overflowing, teardown),
    cmocka_unit_test(field_lookup_needs_a_field_boundary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
