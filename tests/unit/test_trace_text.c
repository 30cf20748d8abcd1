/* Unit tests for the text form of traces: parse, format and print (sim/trace/trace_text*.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/trace/trace.h"
#include "sim/base/util.h"
#include "sim/trace/trace_text.h"
#include "trace_helpers.h"


/* ---- helpers: parse text into records ---- */

#define MAX_RECS 64

struct recs {
  struct trace_event ev[MAX_RECS];
  int n;
};

static int collect(void *ctx, const struct trace_event *ev) {
  struct recs *r = ctx;
  if (r->n < MAX_RECS) r->ev[r->n] = *ev;
  r->n++;
  return 0;
}

/* Parses a multi-line text; returns the parser's result for the first failing line. */
static int parse_text(struct trace_text_parser *p, const char *text, struct recs *out) {
  char *copy = strdup(text), *save = NULL;
  int rc = 0;
  out->n = 0;
  for (char *line = strtok_r(copy, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save))
    rc = trace_text_parse_line(p, line, collect, out);
  if (rc == 0) rc = trace_text_parse_end(p);
  free(copy);
  return rc;
}

/* The error message for a one-line text (empty when it parses). */
static const char *error_of(const char *line) {
  static char err[256];
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  int rc = parse_text(&p, line, &r);
  snprintf(err, sizeof err, "%s", rc ? p.err : "");
  trace_text_parser_free(&p);
  return err;
}

static void assert_event_equal(const struct trace_event *want, const struct trace_event *got) {
  assert_int_equal(want->type, got->type);
  assert_int_equal(want->aux, got->aux);
  assert_int_equal(want->vcpu, got->vcpu);
  assert_int_equal(want->cycles, got->cycles);
  assert_int_equal(want->a, got->a);
  assert_int_equal(want->b, got->b);
}

/* ---- every mnemonic: parse to the expected record, format back to the same line ---- */

struct canonical {
  const char *line;
  struct trace_event ev;
};


static const struct canonical canonical_lines[] = {
  { "run 2400",                       { EV_RUN, 0, 0, 2400, 0, 0 } },
  { "@init cr3=0x1000",               { EV_INIT, 3, 0, 0, 0x1000, 0 } },
  { "cr0w 0x80050033",                { EV_CR_WRITE, 0, 0, 0, 0x80050033, 0 } },
  { "cr3w 0x1000 %rbx +20",           { EV_CR_WRITE, 3, 0, 20, 0x1000, 3 } },
  { "cr4w 0x6f0 %r15",                { EV_CR_WRITE, 4, 0, 0, 0x6f0, 15 } },
  { "cr8w 0xf",                       { EV_CR_WRITE, 8, 0, 0, 0xf, 0 } },
  { "cr0r",                           { EV_CR_READ, 0, 0, 0, 0, 0 } },
  { "cr3r %rsi",                      { EV_CR_READ, 3, 0, 0, 0, 6 } },
  { "cr4r +3",                        { EV_CR_READ, 4, 0, 3, 0, 0 } },
  { "cr8r %r8",                       { EV_CR_READ, 8, 0, 0, 0, 8 } },
  { "clts",                           { EV_CLTS, 0, 0, 0, 0, 0 } },
  { "lmsw 0x1",                       { EV_LMSW, 0, 0, 0, 0x1, 0 } },
  { "lmsw 0xffff mem",                { EV_LMSW, 1, 0, 0, 0xffff, 0 } },
  { "drw 7 0x401",                    { EV_DR_WRITE, 7, 0, 0, 0x401, 0 } },
  { "drw 0 0x401000 %rcx +9",         { EV_DR_WRITE, 0, 0, 9, 0x401000, 1 } },
  { "drr 6",                          { EV_DR_READ, 6, 0, 0, 0, 0 } },
  { "drr 7 %rdi",                     { EV_DR_READ, 7, 0, 0, 0, 7 } },
  { "cpuid 0x1",                      { EV_CPUID, 0, 0, 0, 0x1, 0 } },
  { "cpuid 0x7 0x1",                  { EV_CPUID, 0, 0, 0, 0x7, 0x1 } },
  { "rdmsr 0x10",                     { EV_RDMSR, 0, 0, 0, 0x10, 0 } },
  { "wrmsr 0x6e0 0x1234",             { EV_WRMSR, 0, 0, 0, 0x6e0, 0x1234 } },
  { "hlt",                            { EV_HLT, 0, 0, 0, 0, 0 } },
  { "invlpg 0x7f0000001000",          { EV_INVLPG, 0, 0, 0, 0x7f0000001000, 0 } },
  { "io out 0x3f8 1",                 { EV_IO, 1 | 1 << 1, 0, 0, 0x3f8, 0 } },
  { "io in 0xcfc 4",                  { EV_IO, 4 << 1, 0, 0, 0xcfc, 0 } },
  { "io in 0x60 2 +100",              { EV_IO, 2 << 1, 0, 100, 0x60, 0 } },
  { "vmcall 0",                       { EV_VMCALL, 0, 0, 0, 0, 0 } },
  { "touch 0x400000 4 w",             { EV_TOUCH, 1, 0, 0, 0x400000, 4 } },
  { "touch 0x7ffc0000 2",             { EV_TOUCH, 0, 0, 0, 0x7ffc0000, 2 } },
  { "ptwrite 0x400000 1",             { EV_PTWRITE, 1, 0, 0, 0x400000, 0 } },
  { "ptwrite 0xffff888000000000 4",   { EV_PTWRITE, 4, 0, 0, 0xffff888000000000ull, 0 } },
  { "syscall 1",                      { EV_SYSCALL, 0, 0, 0, 1, 0 } },
  { "sysret",                         { EV_SYSRET, 0, 0, 0, 0, 0 } },
  { "mark iteration",                 { EV_MARK, 0, 0, 0, LE8("iteratio"), 'n' } },
  { "mark 0123456789abcdef",          { EV_MARK, 0, 0, 0, LE8("01234567"), LE8("89abcdef") } },
  { "rdtsc",                          { EV_RDTSC, 0, 0, 0, 0, 0 } },
  { "rdpmc 0x40000001",               { EV_RDPMC, 0, 0, 0, 0x40000001, 0 } },
  { "pause +1",                       { EV_PAUSE, 0, 0, 1, 0, 0 } },
  { "pause 400 40 +16000",            { EV_PAUSE, 0, 0, 16000, 400, 40 } },
  { "pause 7",                        { EV_PAUSE, 0, 0, 0, 7, 0 } },
  { "wbinvd",                         { EV_WBINVD, 0, 0, 0, 0, 0 } },
  { "intr 236",                       { EV_INTR, 0, 0, 0, 236, 0 } },
  { "exc 14 0x6",                     { EV_EXC, 0, 0, 0, 14, 6 } },
  { "exc 6",                          { EV_EXC, 0, 0, 0, 6, 0 } },
  { "xsetbv 0 0x7",                   { EV_XSETBV, 0, 0, 0, 0, 7 } },
  { "apic w 0x300 0x1000000000000fd", { EV_APIC, APIC_AUX_WRITE, 0, 0, APIC_ICR, 0x01000000000000fdull } },
  { "apic r 0x300",                   { EV_APIC, 0, 0, 0, APIC_ICR, 0 } },
  { "sti",                            { EV_STI, 0, 0, 0, 0, 0 } },
  { "sti popf",                       { EV_STI, STI_AUX_POPF, 0, 0, 0, 0 } },
  { "cli",                            { EV_CLI, 0, 0, 0, 0, 0 } },
  { "iret",                           { EV_IRET, 0, 0, 0, 0, 0 } },
  { "iret if0",                       { EV_IRET, IRET_AUX_IF0, 0, 0, 0, 0 } },
  { "virq 236",                       { EV_VIRQ, 0, 0, 0, 236, 0 } },
  { "virq-device 33",                 { EV_VIRQ, VIRQ_SRC_DEVICE, 0, 0, 33, 0 } },
  { "virq-device 33 level",           { EV_VIRQ, VIRQ_SRC_DEVICE, 0, 0, 33, VIRQ_DEVICE_LEVEL } },
  { "virq-ipi 251 3",                 { EV_VIRQ, VIRQ_SRC_IPI, 0, 0, 251, 3 } },
  { "virq-timer 236",                 { EV_VIRQ, VIRQ_SRC_TIMER, 0, 0, 236, 0 } },
  { "vnmi",                           { EV_VNMI, 0, 0, 0, 0, 0 } },
  { "rdtscp",                         { EV_RDTSCP, 0, 0, 0, 0, 0 } },
  { "mwait",                          { EV_MWAIT, 0, 0, 0, 0, 0 } },
  { "monitor",                        { EV_MONITOR, 0, 0, 0, 0, 0 } },
  { "invpcid 0 0x400000 0x1",         { EV_INVPCID, 0, 0, 0, 0x400000, 1 } },
  { "invpcid 2",                      { EV_INVPCID, 2, 0, 0, 0, 0 } },
  { "taskswitch 3 0x28",              { EV_TASK_SWITCH, 3, 0, 0, 0x28, 0 } },
  { "triplefault",                    { EV_TRIPLE_FAULT, 0, 0, 0, 0, 0 } },
  { "vmx VMREAD",                     { EV_VMX, 0, 0, 0, 23, 0 } },
  { "wait 1 2",                       { EV_WAIT, 0, 0, 0, 1, 2 } },
  { "measured CR_ACCESS 2735",        { EV_MEASURED, 0, 0, 0, 2735, 28 } },
  { "measured EXCEPTION_NMI 900 0x6", { EV_MEASURED, 0, 0, 0, 900, 0x600000000ull } },
  { "measured-only EXTERNAL_INTERRUPT 5000", { EV_MEASURED, MEASURED_ALONE, 0, 0, 5000, 1 } },
  { "measured 70 99",                 { EV_MEASURED, 0, 0, 0, 99, 70 } },
  { "raw hlt 0x0 0x5 0x0",            { EV_HLT, 0, 0, 0, 5, 0 } },
};
#define N_CANONICAL (sizeof canonical_lines / sizeof canonical_lines[0])

static void every_mnemonic_parses_to_its_record_and_formats_back(void **state) {
  (void)state;
  for (size_t i = 0; i < N_CANONICAL; i++) {
    const struct canonical *c = &canonical_lines[i];
    struct trace_text_parser p;
    struct recs r;
    char buf[128];
    print_message("  %s\n", c->line);
    trace_text_parser_init(&p);
    assert_int_equal(parse_text(&p, c->line, &r), 0);
    assert_int_equal(r.n, 1);
    assert_event_equal(&c->ev, &r.ev[0]);
    trace_text_format(&r.ev[0], buf, sizeof buf);
    assert_string_equal(c->line, buf);
    trace_text_parser_free(&p);
  }
}

static void canonical_table_covers_every_event_type(void **state) {
  (void)state;
  for (unsigned t = 0; t < EV_COUNT; t++) {
    bool found = false;
    for (size_t i = 0; i < N_CANONICAL; i++) found |= canonical_lines[i].ev.type == t;
    if (!found) fail_msg("no canonical line for event type %u (%s)", t, event_mnemonic(t));
  }
}

/* Accepted spellings that are not canonical format to the canonical one. */
static void alternative_spellings_format_canonically(void **state) {
  (void)state;
  static const char *const pairs[][2] = {
    { "cr3w 4096 %rax", "cr3w 0x1000" },
    { "cpuid 0x7 0x0", "cpuid 0x7" },
    { "touch 0x1000 1 r", "touch 0x1000 1" },
    { "run 010", "run 10" },                       /* leading zero: decimal, not octal */
    { "exc 0xe 0", "exc 14" },
    { "  hlt   +0x10   # comment", "hlt +16" },
    { "io OUT 0x3f8 1", NULL },                    /* words are case-sensitive */
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    struct trace_text_parser p;
    struct recs r;
    char buf[128];
    trace_text_parser_init(&p);
    int rc = parse_text(&p, pairs[i][0], &r);
    if (!pairs[i][1]) {
      assert_int_equal(rc, EXIT_BADINPUT);
    } else {
      assert_int_equal(rc, 0);
      assert_int_equal(r.n, 1);
      trace_text_format(&r.ev[0], buf, sizeof buf);
      assert_string_equal(pairs[i][1], buf);
    }
    trace_text_parser_free(&p);
  }
}

static void init_line_yields_one_record_per_register_in_order(void **state) {
  (void)state;
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  assert_int_equal(parse_text(&p, "vcpu 2\n@init cr4=0x6f0 cr0=0x80050033 vcpu=1 cr3=0x1000 cr8=0x2\nhlt", &r), 0);
  assert_int_equal(r.n, 5);
  unsigned crs[4] = { 4, 0, 3, 8 };
  for (int i = 0; i < 4; i++) {
    assert_int_equal(r.ev[i].type, EV_INIT);
    assert_int_equal(r.ev[i].aux, crs[i]);
    assert_int_equal(r.ev[i].vcpu, 1);
  }
  assert_int_equal(r.ev[1].a, 0x80050033);
  assert_int_equal(r.ev[4].vcpu, 2);                /* vcpu= applies to its own line only */
  trace_text_parser_free(&p);
}

static void run_longer_than_a_record_splits_into_several(void **state) {
  (void)state;
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  assert_int_equal(parse_text(&p, "run 8589934591\nrun 4294967295\nrun 0", &r), 0);
  assert_int_equal(r.n, 5);
  assert_int_equal(r.ev[0].cycles, 0xffffffffu);
  assert_int_equal(r.ev[1].cycles, 0xffffffffu);
  assert_int_equal(r.ev[2].cycles, 1);
  assert_int_equal(r.ev[3].cycles, 0xffffffffu);
  assert_int_equal(r.ev[4].cycles, 0);
  trace_text_parser_free(&p);
}

static void vcpu_line_sets_the_vcpu_of_following_records(void **state) {
  (void)state;
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  assert_int_equal(parse_text(&p, "hlt\nvcpu 255\nhlt\nraw hlt 0 0 0\nvcpu 0\nhlt", &r), 0);
  assert_int_equal(r.n, 4);
  assert_int_equal(r.ev[0].vcpu, 0);
  assert_int_equal(r.ev[1].vcpu, 255);
  assert_int_equal(r.ev[2].vcpu, 255);
  assert_int_equal(r.ev[3].vcpu, 0);
  trace_text_parser_free(&p);
}

static void header_directives_fill_the_parser_header(void **state) {
  (void)state;
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  assert_int_equal(p.paging, PAGING_64);
  assert_int_equal(parse_text(&p, "# c\n@workload lat ctx   # name with a space\n@paging pae\n@vcpus 4\n"
                                  "@meta {\"a\": \"#not a comment\"}\nrun 1", &r), 0);
  assert_string_equal(p.workload, "lat ctx");
  assert_int_equal(p.paging, PAGING_PAE);
  assert_int_equal(p.vcpus, 4);
  assert_string_equal(p.metadata, "{\"a\": \"#not a comment\"}");
  trace_text_parser_free(&p);
}

/* ---- parse errors: exact messages ---- */

static void malformed_lines_give_precise_messages(void **state) {
  (void)state;
  static const char *const cases[][2] = {
    { "cr5w 0x1", "unknown event 'cr5w' (control registers: cr0, cr3, cr4, cr8)" },
    { "frob", "unknown event 'frob'" },
    { "drw 9 0x1", "drw: debug register 9 out of range 0..7" },
    { "drr 8", "drr: debug register 8 out of range 0..7" },
    { "drw 7", "drw: missing VALUE (usage: drw N VALUE [%GPR] [+CYCLES])" },
    { "drw 7 0x1 %rbx extra", "drw: unexpected 'extra' (usage: drw N VALUE [%GPR] [+CYCLES])" },
    { "cr3w 0x1 %rzz", "cr3w: register '%rzz' is not one of %rax..%r15" },
    { "cr3w 0x10000000000000000", "cr3w: value 0x10000000000000000 does not fit in 64 bits" },
    { "cr3w 18446744073709551616", "cr3w: value 18446744073709551616 does not fit in 64 bits" },
    { "cr3w 12ab", "cr3w: value '12ab' is not a number (decimal or 0x hex)" },
    { "cr3w -1", "cr3w: value '-1' is not a number (decimal or 0x hex)" },
    { "cr8w 0x10", "cr8w: value 0x10 out of range 0x0..0xf" },
    { "lmsw 0x10000", "lmsw: source operand 0x10000 out of range 0x0..0xffff" },
    { "io out 0x3f8 3", "io: size '3' is not 1, 2 or 4" },
    { "io up 0x3f8 1", "io: direction 'up' is not 'in' or 'out'" },
    { "io out 0x10000 1", "io: port 0x10000 out of range 0x0..0xffff" },
    { "touch 0x1000 0", "touch: page count 0 out of range 1..1048576" },
    { "touch 0x1000 1048577", "touch: page count 1048577 out of range 1..1048576" },
    { "run 281474976710657", "run: cycle count 281474976710657 out of range 0..281474976710656" },
    { "touch 0x1000 1 x", "touch: access 'x' is not 'r' or 'w'" },
    { "ptwrite 0x1000 5", "ptwrite: level 5 out of range 1..4" },
    { "ptwrite 0x1000 0", "ptwrite: level 0 out of range 1..4" },
    { "vcpu 256", "vcpu: vCPU 256 out of range 0..255" },
    { "vcpu", "vcpu: missing N (usage: vcpu N)" },
    { "run", "run: missing CYCLES (usage: run CYCLES)" },
    { "run 5 +1", "run: takes no +CYCLES; its operand is the cycle count (usage: run CYCLES)" },
    { "hlt 1", "hlt: unexpected '1' (usage: hlt [+CYCLES])" },
    { "hlt +4294967296", "hlt: cycles 4294967296 out of range 0..4294967295" },
    { "cr3w 0x1 +5 %rbx", "cr3w: '+5' must come last" },
    { "mark", "mark: missing LABEL (usage: mark LABEL [+CYCLES])" },
    { "mark 0123456789abcdefg", "mark: label '0123456789abcdefg' is 17 bytes, at most 16" },
    { "intr 256", "intr: vector 256 out of range 0..255" },
    { "pause 1048577 40", "pause: PAUSEs in the spin 1048577 out of range 0..1048576" },
    { "pause 400 4294967296", "pause: cycles between PAUSEs 4294967296 out of range 0..4294967295" },
    { "pause 400 40 7", "pause: unexpected '7' (usage: pause [COUNT] [GAP] [+CYCLES])" },
    { "virq 256", "virq: vector 256 out of range 0..255" },
    { "sti cli", "sti: how 'cli' is not 'popf'" },
    { "virq-device 33 edge", "virq-device: trigger mode 'edge' is not 'level'" },
    { "iret if1", "iret: RFLAGS.IF restored 'if1' is not 'if0'" },
    { "invpcid 4", "invpcid: INVPCID type 4 out of range 0..3" },
    { "taskswitch 0 0x10000", "taskswitch: TSS selector 0x10000 out of range 0x0..0xffff" },
    { "vmx CPUID", "vmx: exit reason 'CPUID' is not a VMX instruction's (VMCLEAR..VMXON, INVEPT, INVVPID)" },
    { "rdmsr 0x100000000", "rdmsr: MSR index 0x100000000 out of range 0x0..0xffffffff" },
    { "@init", "@init: no registers (usage: @init [vcpu=N] crN=VALUE...)" },
    { "@init cr2=0x1", "@init: control register 'cr2' is not one of cr0, cr3, cr4, cr8" },
    { "@init cr3=1 cr3=2", "@init: cr3 given twice" },
    { "@init vcpu=256 cr3=1", "@init: vCPU 256 out of range 0..255" },
    { "@init cr3", "@init: expected crN=VALUE or vcpu=N, got 'cr3'" },
    { "@paging 48", "@paging: unknown mode '48' (32, pae, 64)" },
    { "@vcpus 0", "@vcpus: vCPU count 0 out of range 1..256" },
    { "@workload 0123456789abcdef0123456789abcdef0", "@workload: name of 33 bytes exceeds the 32-byte limit" },
    { "@paging 32\n@paging 64", "@paging given twice" },
    { "hlt\n@paging 32", "@paging: header directives must come before the first event" },
    { "@init cr3=1\n@meta {}", "@meta: header directives must come before the first event" },
    { "@bogus", "unknown directive '@bogus' (@paging, @workload, @vcpus, @meta, @init)" },
    { "@meta [1]", "@meta: metadata must be a JSON object {...}" },
    { "@meta {\"a\": 1", "@meta: invalid JSON: the text ends before the value is complete" },
    { "@meta {\"a\": 1} # c", "@meta: invalid JSON at column 16: '# c' (@meta lines take no comments)" },
    { "measured HLT 5 +3", "measured: takes no +CYCLES (a measured exit is no guest time)" },
    { "measured FROB 5", "measured: exit reason 'FROB' is neither a name (CR_ACCESS, ...) nor a number 0..65535" },
    { "raw frob 0 0 0", "raw: unknown event type 'frob' (a type mnemonic such as crw, or 0..41)" },
    { "raw hlt 0 0", "raw: expects 4 operands, got 3 (usage: raw TYPE AUX A B [+CYCLES])" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    assert_string_equal(cases[i][1], error_of(cases[i][0]));
}

/* The error message for a one-line text whose words are not to be shown. */
static const char *hidden_error_of(const char *line) {
  static char err[256];
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  p.hide_content = true;
  int rc = parse_text(&p, line, &r);
  snprintf(err, sizeof err, "%s", rc ? p.err : "");
  trace_text_parser_free(&p);
  return err;
}

/* A text that is not the user's own (a regression case's trace) is never
** quoted: each line holds "zq9k" (or a number) where it is wrong, and the
** message names its column instead. */
static void hidden_text_is_named_by_column_never_quoted(void **state) {
  (void)state;
  static const char *const cases[][2] = {
    { "zq9k", "unknown event at column 1" },
    { "crzq9kw 1", "unknown event at column 1 (control registers: cr0, cr3, cr4, cr8)" },
    { "cr3w zq9k", "cr3w: value at column 6 is not a number (decimal or 0x hex)" },
    { "cr3w 0x10000000000000000", "cr3w: value at column 6 does not fit in 64 bits" },
    { "cr8w 0x10", "cr8w: value at column 6 out of range 0x0..0xf" },
    { "cr3w 0x1 %zq9k", "cr3w: register at column 10 is not one of %rax..%r15" },
    { "hlt zq9k", "hlt: unexpected word at column 5 (usage: hlt [+CYCLES])" },
    { "hlt +zq9k", "hlt: the word at column 5 is not a cycle count (+N)" },
    { "hlt +4294967296", "hlt: cycles at column 6 out of range 0..4294967295" },
    { "cr3w 0x1 +zq9k %rbx", "cr3w: the word at column 10 must come last" },
    { "io zq9k 0x3f8 1", "io: direction at column 4 is not 'in' or 'out'" },
    { "io out 0x3f8 9", "io: size at column 14 is not 1, 2 or 4" },
    { "mark zq9kzq9kzq9kzq9k0", "mark: label at column 6 is 17 bytes, at most 16" },
    { "mark zq9k\x7f", "mark: label at column 6: its byte 5 is not allowed (printable, no '#')" },
    { "vcpu 256", "vcpu: vCPU at column 6 out of range 0..255" },
    { "vcpu 1 zq9k", "vcpu: unexpected word at column 8 (usage: vcpu N)" },
    { "run 5 zq9k", "run: unexpected word at column 7 (usage: run CYCLES)" },
    { "@init zq9k", "@init: expected crN=VALUE or vcpu=N, got the word at column 7" },
    { "@init zq9k=1", "@init: expected crN=VALUE or vcpu=N, got the word at column 7" },
    { "@init crzq9k=1", "@init: control register at column 7 is not one of cr0, cr3, cr4, cr8" },
    { "@init cr3=zq9k", "@init: cr3 value at column 11 is not a number (decimal or 0x hex)" },
    { "@init vcpu=256 cr3=1", "@init: vCPU at column 12 out of range 0..255" },
    { "@paging zq9k", "@paging: unknown mode at column 9 (32, pae, 64)" },
    { "@vcpus 0", "@vcpus: vCPU count at column 8 out of range 1..256" },
    { "@zq9k", "unknown directive at column 1 (@paging, @workload, @vcpus, @meta, @init)" },
    { "@meta {\"a\": zq9k}", "@meta: invalid JSON at column 13" },
    { "@meta {\"a\": 1} # zq9k", "@meta: invalid JSON at column 16" },
    { "measured zq9k 5", "measured: exit reason at column 10 is neither a name (CR_ACCESS, ...) nor a number 0..65535" },
    { "raw zq9k 0 0 0", "raw: unknown event type at column 5 (a type mnemonic such as crw, or 0..41)" },
    { "raw hlt zq9k 0 0", "raw: aux at column 9 is not a number (decimal or 0x hex)" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_string_equal(cases[i][1], hidden_error_of(cases[i][0]));
    assert_string_not_equal(error_of(cases[i][0]), hidden_error_of(cases[i][0]));   /* which quotes */
  }
}

static void errors_report_the_line_they_belong_to(void **state) {
  (void)state;
  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  assert_int_equal(parse_text(&p, "# one\nrun 1\nhlt\ncr9w 1\nhlt", &r), EXIT_BADINPUT);
  assert_int_equal(p.err_line, 4);
  assert_int_equal(r.n, 2);                        /* records before the error were emitted */
  trace_text_parser_free(&p);

  /* A JSON error in multi-line metadata points at the @meta line holding it. */
  trace_text_parser_init(&p);
  assert_int_equal(parse_text(&p, "@meta {\n# c\n@meta   \"a\": x,\n@meta }\nrun 1", &r), EXIT_BADINPUT);
  assert_int_equal(p.err_line, 3);
  assert_string_equal("@meta: invalid JSON at column 14: 'x,'", p.err);
  assert_int_equal(r.n, 0);                        /* the header is checked before any record */
  trace_text_parser_free(&p);
}

static int refuse(void *ctx, const struct trace_event *ev) {
  (void)ctx; (void)ev;
  return 42;
}

static void emit_failure_stops_the_parse_with_its_code(void **state) {
  (void)state;
  struct trace_text_parser p;
  trace_text_parser_init(&p);
  assert_int_equal(trace_text_parse_line(&p, "hlt", refuse, NULL), 42);
  trace_text_parser_free(&p);
}

/* ---- raw fallback and the dump/asm round trip ---- */

static void records_without_a_canonical_form_format_as_raw(void **state) {
  (void)state;
  static const struct { struct trace_event ev; const char *line; } cases[] = {
    { { EV_HLT, 0, 0, 0, 5, 0 },           "raw hlt 0x0 0x5 0x0" },
    { { EV_CR_WRITE, 5, 0, 7, 0x1, 0 },    "raw crw 0x5 0x1 0x0 +7" },
    { { EV_CR_WRITE, 3, 0, 0, 0x1, 16 },   "raw crw 0x3 0x1 0x10" },      /* GPR beyond r15 */
    { { EV_DR_READ, 9, 0, 0, 0, 0 },       "raw drr 0x9 0x0 0x0" },
    { { EV_IO, 1, 0, 0, 0x3f8, 0 },        "raw io 0x1 0x3f8 0x0" },       /* size 0 */
    { { EV_INIT, 3, 0, 5, 0x1000, 0 },     "raw @init 0x3 0x1000 0x0 +5" },
    { { EV_RUN, 1, 0, 10, 0, 0 },          "raw run 0x1 0x0 0x0 +10" },
    { { EV_MARK, 0, 0, 0, 0x4100, 0 },     "raw mark 0x0 0x4100 0x0" },      /* NUL then 'A' */
    { { EV_MARK, 0, 0, 0, 0x20, 0 },       "raw mark 0x0 0x20 0x0" },      /* a space */
    { { EV_MARK, 0, 0, 0, 0, 0 },          "raw mark 0x0 0x0 0x0" },       /* empty label */
    { { EV_TOUCH, 0, 0, 0, 0x1000, 0 },    "raw touch 0x0 0x1000 0x0" },   /* zero pages */
    { { EV_LMSW, 2, 0, 0, 0x1, 0 },        "raw lmsw 0x2 0x1 0x0" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[128];
    struct trace_text_parser p;
    struct recs r;
    trace_text_format(&cases[i].ev, buf, sizeof buf);
    assert_string_equal(cases[i].line, buf);
    trace_text_parser_init(&p);
    assert_int_equal(parse_text(&p, buf, &r), 0);
    assert_int_equal(r.n, 1);
    assert_event_equal(&cases[i].ev, &r.ev[0]);
    trace_text_parser_free(&p);
  }
}

/* Prints records with the printer and returns the text (caller frees). */
static char *print_records(const struct trace_event *evs, int n) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  struct trace_text_printer pr;
  trace_text_printer_init(&pr, f);
  for (int i = 0; i < n; i++) trace_text_print(&pr, &evs[i]);
  trace_text_print_end(&pr);
  fclose(f);
  return text;
}

static struct trace_event on(unsigned vcpu, struct trace_event ev) {
  ev.vcpu = (uint16_t)vcpu;
  return ev;
}

static void printer_groups_init_records_and_marks_vcpu_changes(void **state) {
  (void)state;
  struct trace_event evs[] = {
    on(0, rec(EV_INIT, 0, 0x11, 0, 0)), on(0, rec(EV_INIT, 3, 0x1000, 0, 0)),
    on(1, rec(EV_INIT, 0, 0x11, 0, 0)), on(1, rec(EV_INIT, 3, 0x2000, 0, 0)),
    on(0, rec(EV_RUN, 0, 0, 0, 10)),
    on(1, rec(EV_CR_WRITE, 3, 0x3000, 0, 0)),
    on(1, rec(EV_INIT, 3, 0x4000, 0, 0)), on(1, rec(EV_INIT, 3, 0x4001, 0, 0)),   /* same CR twice */
    on(1, rec(EV_HLT, 0, 0, 0, 0)),
    on(0, rec(EV_INIT, 3, 0x5000, 0, 0)),
    on(1, rec(EV_HLT, 0, 0, 0, 0)),
  };
  const char *want =
    "@init cr0=0x11 cr3=0x1000\n"
    "@init vcpu=1 cr0=0x11 cr3=0x2000\n"
    "run 10\n"
    "vcpu 1\n"
    "cr3w 0x3000\n"
    "@init cr3=0x4000\n"
    "@init cr3=0x4001\n"
    "hlt\n"
    "@init vcpu=0 cr3=0x5000\n"
    "hlt\n";
  int n = (int)(sizeof evs / sizeof evs[0]);
  char *text = print_records(evs, n);
  assert_string_equal(want, text);

  struct trace_text_parser p;
  struct recs r;
  trace_text_parser_init(&p);
  assert_int_equal(parse_text(&p, text, &r), 0);
  assert_int_equal(r.n, n);
  for (int i = 0; i < n; i++) assert_event_equal(&evs[i], &r.ev[i]);
  trace_text_parser_free(&p);
  free(text);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {                       /* xorshift64: deterministic across runs */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
/* Mostly boundary values, sometimes anything. */
static uint64_t interesting(void) {
  static const uint64_t v[] = { 0, 1, 2, 3, 4, 6, 7, 8, 9, 15, 16, 255, 256, 0xffff, 0x10000,
                                0xffffffff, 0x100000000ull, UINT64_MAX, 0x6e6f697461726574ull };
  return rnd() % 4 ? v[rnd() % (sizeof v / sizeof v[0])] : rnd();
}

/* The guarantee behind `trace dump`: any valid record stream prints to text
** that parses back to exactly the same records. */
static void random_records_survive_print_and_parse(void **state) {
  (void)state;
  enum { N = MAX_RECS };
  for (int round = 0; round < 200; round++) {
    struct trace_event evs[N];
    for (int i = 0; i < N; i++) {
      evs[i] = rec((unsigned)(rnd() % EV_COUNT), (unsigned)interesting() & 0xff, interesting(),
                   interesting(), (uint32_t)interesting());
      evs[i].vcpu = (uint16_t)(rnd() % 3 ? rnd() % 2 : rnd() % 256);
    }
    char *text = print_records(evs, N);
    struct trace_text_parser p;
    struct recs r;
    trace_text_parser_init(&p);
    int rc = parse_text(&p, text, &r);
    if (rc) fail_msg("line %lu: %s\n%s", p.err_line, p.err, text);
    assert_int_equal(r.n, N);
    for (int i = 0; i < N; i++) assert_memory_equal(&evs[i], &r.ev[i], sizeof evs[i]);
    trace_text_parser_free(&p);
    free(text);
  }
}

static void header_with_multiline_metadata_round_trips(void **state) {
  (void)state;
  static const char *const metas[] = {
    "{\"a\": 1}", "{\n\t\"a\":\t1,\n\t\"b\":\t\"x # y\"\n}", "{\n}\n", "\n{}", "{\n\n}",
  };
  for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
    struct trace_header h = { .version = 1, .vcpu_count = 3, .paging = PAGING_32 };
    snprintf(h.workload, sizeof h.workload, "lat_ctx");
    h.metadata = (char *)metas[i];
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct trace_text_printer pr;
    trace_text_printer_init(&pr, f);
    trace_text_print_header(&pr, &h);
    fclose(f);

    struct trace_text_parser p;
    trace_text_parser_init(&p);
    for (char *line = text, *nl; *line; line = nl + 1) {   /* line by line: keep empty @meta lines */
      nl = strchr(line, '\n');
      *nl = 0;
      assert_int_equal(trace_text_parse_line(&p, line, collect, NULL), 0);
    }
    assert_int_equal(trace_text_parse_end(&p), 0);
    assert_string_equal(metas[i], p.metadata);
    assert_string_equal("lat_ctx", p.workload);
    assert_int_equal(p.vcpus, 3);
    assert_int_equal(p.paging, PAGING_32);
    trace_text_parser_free(&p);
    free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_mnemonic_parses_to_its_record_and_formats_back),
    cmocka_unit_test(canonical_table_covers_every_event_type),
    cmocka_unit_test(alternative_spellings_format_canonically),
    cmocka_unit_test(init_line_yields_one_record_per_register_in_order),
    cmocka_unit_test(run_longer_than_a_record_splits_into_several),
    cmocka_unit_test(vcpu_line_sets_the_vcpu_of_following_records),
    cmocka_unit_test(header_directives_fill_the_parser_header),
    cmocka_unit_test(malformed_lines_give_precise_messages),
    cmocka_unit_test(hidden_text_is_named_by_column_never_quoted),
    cmocka_unit_test(errors_report_the_line_they_belong_to),
    cmocka_unit_test(emit_failure_stops_the_parse_with_its_code),
    cmocka_unit_test(records_without_a_canonical_form_format_as_raw),
    cmocka_unit_test(printer_groups_init_records_and_marks_vcpu_changes),
    cmocka_unit_test(random_records_survive_print_and_parse),
    cmocka_unit_test(header_with_multiline_metadata_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
