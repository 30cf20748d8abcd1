/* The text form of traces, what it is made of and how a record is printed:
** the operand syntax table (one row per mnemonic; a new event gets its row
** here, and the parser in trace_text_parse.c reads operands by the same rows)
** and the canonical formatter, which reparses each line it makes so that
** `trace dump` output always assembles back to the same record. */
#include "trace_text.h"
#include "trace_text_int.h"
#include "models/vmx/exit_reason.h"

#include <string.h>

/* ---- the operand syntax table ---- */

#define U32 0xffffffffull
#define HEX(slot, syn, what, max)      { OP_NUM, slot, 0, 16, syn, what, 0, max, NULL, NULL }
#define HEXOPT(slot, syn, what, max)   { OP_NUM, slot, 1, 16, syn, what, 0, max, NULL, NULL }
#define DEC(slot, syn, what, lo, hi)   { OP_NUM, slot, 0, 10, syn, what, lo, hi, NULL, NULL }
#define DECOPT(slot, syn, what, lo, hi) { OP_NUM, slot, 1, 10, syn, what, lo, hi, NULL, NULL }
#define GPR                            { OP_GPR, TO_B, 1, 0, "%GPR", "register", 0, 15, NULL, NULL }
#define WORD(opt, syn, what, w0, w1)   { OP_WORD, TO_AUX, opt, 0, syn, what, 0, 1, w0, w1 }
#define MEASURED_OPS { OP_REASON, TO_B_LO, 0, 10, "REASON", "exit reason", 0, 0xffff, NULL, NULL }, \
                     DEC(TO_A, "CYCLES", "measured cycles", 0, U64), HEXOPT(TO_B_HI, "INFO", "detail", U32)
#define CRW(n, max) { "cr" #n "w", EV_CR_WRITE, n, { HEX(TO_A, "VALUE", "value", max), GPR } }
#define CRR(n)      { "cr" #n "r", EV_CR_READ, n, { GPR } }

static const struct mnemonic mnemonics[] = {
  CRW(0, U64), CRW(3, U64), CRW(4, U64), CRW(8, 0xf),   /* CR8 holds the 4-bit TPR */
  CRR(0), CRR(3), CRR(4), CRR(8),
  { "clts",    EV_CLTS,    -1, { { 0 } } },
  { "lmsw",    EV_LMSW,    -1, { HEX(TO_A, "VALUE", "source operand", 0xffff),
                                 WORD(1, "mem", "operand", NULL, "mem") } },
  { "drw",     EV_DR_WRITE,-1, { DEC(TO_AUX, "N", "debug register", 0, 7),
                                 HEX(TO_A, "VALUE", "value", U64), GPR } },
  { "drr",     EV_DR_READ, -1, { DEC(TO_AUX, "N", "debug register", 0, 7), GPR } },
  { "cpuid",   EV_CPUID,   -1, { HEX(TO_A, "LEAF", "leaf", U32), HEXOPT(TO_B, "SUBLEAF", "subleaf", U32) } },
  { "rdmsr",   EV_RDMSR,   -1, { HEX(TO_A, "MSR", "MSR index", U32) } },
  { "wrmsr",   EV_WRMSR,   -1, { HEX(TO_A, "MSR", "MSR index", U32), HEX(TO_B, "VALUE", "value", U64) } },
  { "hlt",     EV_HLT,     -1, { { 0 } } },
  { "invlpg",  EV_INVLPG,  -1, { HEX(TO_A, "VA", "address", U64) } },
  { "io",      EV_IO,      -1, { WORD(0, "in|out", "direction", "in", "out"),
                                 HEX(TO_A, "PORT", "port", 0xffff),
                                 { OP_IOSIZE, TO_AUX, 0, 10, "SIZE", "size", 1, 4, NULL, NULL } } },
  { "vmcall",  EV_VMCALL,  -1, { DEC(TO_A, "NR", "hypercall number", 0, U64) } },
  { "touch",   EV_TOUCH,   -1, { HEX(TO_A, "VA", "address", U64), DEC(TO_B, "PAGES", "page count", 1, TOUCH_PAGES_MAX),
                                 WORD(1, "r|w", "access", "r", "w") } },
  { "ptwrite", EV_PTWRITE, -1, { HEX(TO_A, "VA", "address", U64), DEC(TO_AUX, "LEVEL", "level", 1, 4) } },
  { "syscall", EV_SYSCALL, -1, { DEC(TO_A, "NR", "system call number", 0, U64) } },
  { "sysret",  EV_SYSRET,  -1, { { 0 } } },
  { "mark",    EV_MARK,    -1, { { OP_LABEL, TO_A, 0, 0, "LABEL", "label", 0, 0, NULL, NULL } } },
  { "rdtsc",   EV_RDTSC,   -1, { { 0 } } },
  { "rdpmc",   EV_RDPMC,   -1, { HEX(TO_A, "N", "counter", U32) } },
  /* A spin: COUNT PAUSEs, GAP TSC cycles apart; `pause` alone is one PAUSE. */
  { "pause",   EV_PAUSE,   -1, { DECOPT(TO_A, "COUNT", "PAUSEs in the spin", 0, PAUSE_SPIN_MAX),
                                 DECOPT(TO_B, "GAP", "cycles between PAUSEs", 0, U32) } },
  { "wbinvd",  EV_WBINVD,  -1, { { 0 } } },
  { "intr",    EV_INTR,    -1, { DEC(TO_A, "VECTOR", "vector", 0, 255) } },
  { "exc",     EV_EXC,     -1, { DEC(TO_A, "VECTOR", "vector", 0, 255),
                                 HEXOPT(TO_B, "ERRCODE", "error code", U32) } },
  { "xsetbv",  EV_XSETBV,  -1, { DEC(TO_A, "XCR", "XCR index", 0, U32), HEX(TO_B, "VALUE", "value", U64) } },
  { "apic",    EV_APIC,    -1, { WORD(0, "r|w", "access", "r", "w"), HEX(TO_A, "OFFSET", "register offset", 0xff0),
                                 HEXOPT(TO_B, "VALUE", "value", U64) } },
  { "measured", EV_MEASURED, 0, { MEASURED_OPS } },
  { "measured-only", EV_MEASURED, MEASURED_ALONE, { MEASURED_OPS } },
  { "sti",     EV_STI,     -1, { WORD(1, "popf", "how", NULL, "popf") } },
  { "cli",     EV_CLI,     -1, { { 0 } } },
  { "iret",    EV_IRET,    -1, { WORD(1, "if0", "RFLAGS.IF restored", NULL, "if0") } },
  /* One row per source of the interrupt (VIRQ_SRC_*, models/event.h). */
  { "virq",    EV_VIRQ,    VIRQ_SRC_HOST,   { DEC(TO_A, "VECTOR", "vector", 0, 255) } },
  { "virq-device", EV_VIRQ, VIRQ_SRC_DEVICE, { DEC(TO_A, "VECTOR", "vector", 0, 255),
                                               { OP_WORD, TO_B, 1, 0, "level", "trigger mode", 0, 1, NULL, "level" } } },
  { "virq-ipi", EV_VIRQ,   VIRQ_SRC_IPI,    { DEC(TO_A, "VECTOR", "vector", 0, 255),
                                              DEC(TO_B, "FROM", "sending vCPU", 0, 65535) } },
  { "virq-timer", EV_VIRQ, VIRQ_SRC_TIMER,  { DEC(TO_A, "VECTOR", "vector", 0, 255) } },
  { "vnmi",    EV_VNMI,    -1, { { 0 } } },
  { "rdtscp",  EV_RDTSCP,  -1, { { 0 } } },
  { "mwait",   EV_MWAIT,   -1, { { 0 } } },
  { "monitor", EV_MONITOR, -1, { { 0 } } },
  { "invpcid", EV_INVPCID, -1, { DEC(TO_AUX, "TYPE", "INVPCID type", 0, 3), HEXOPT(TO_A, "VA", "address", U64),
                                 HEXOPT(TO_B, "PCID", "PCID", 0xfff) } },
  { "taskswitch", EV_TASK_SWITCH, -1, { DEC(TO_AUX, "SOURCE", "source (0 CALL, 1 IRET, 2 JMP, 3 IDT)", 0, 3),
                                        HEX(TO_A, "SELECTOR", "TSS selector", 0xffff) } },
  { "triplefault", EV_TRIPLE_FAULT, -1, { { 0 } } },
  { "vmx",     EV_VMX,     -1, { { OP_REASON, TO_A, 0, 10, "REASON", "VMX instruction's exit reason", 0, 0xffff, NULL, NULL } } },
  /* A spin on a flag another vCPU's interrupt handler sets (docs/experiments.md, "ipiv-2022"). */
  { "wait",    EV_WAIT,    -1, { DEC(TO_A, "VCPU", "vCPU whose handler sets the flag", 0, 65535),
                                 DECOPT(TO_B, "LINES", "cache lines it takes from the waiter first", 0, WAIT_LINES_MAX) } },
};
#define N_MNEMONICS (sizeof mnemonics / sizeof mnemonics[0])

/* General registers in the SDM's encoding order (exit qualification bits 11:8). */
const char *const trace_text_gpr_names[16] = {
  "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
  "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

const struct mnemonic *trace_text_mnemonic_by_name(const char *name) {
  for (size_t i = 0; i < N_MNEMONICS; i++)
    if (strcmp(mnemonics[i].name, name) == 0) return &mnemonics[i];
  return NULL;
}

static const struct mnemonic *mnemonic_for(const struct trace_event *ev) {
  for (size_t i = 0; i < N_MNEMONICS; i++)
    if (mnemonics[i].type == ev->type && (mnemonics[i].aux < 0 || mnemonics[i].aux == ev->aux))
      return &mnemonics[i];
  return NULL;
}

int trace_text_n_ops(const struct mnemonic *m) {
  int n = 0;
  while (n < 3 && m->ops[n].syntax) n++;
  return n;
}

void trace_text_fmt_num(char *buf, size_t n, uint64_t v, unsigned base) {
  snprintf(buf, n, base == 16 ? "0x%llx" : "%llu", (unsigned long long)v);
}

static uint64_t get_slot(const struct trace_event *ev, unsigned slot) {
  switch (slot) {
  case TO_AUX: return ev->aux;
  case TO_A: return ev->a;
  case TO_B: return ev->b;
  case TO_B_LO: return ev->b & 0xffff;
  default: return ev->b >> 32;
  }
}

/* ---- formatting ---- */

/* Appends one operand's token; false when the value has no text form. */
static bool format_op(const struct op *o, const struct trace_event *ev, char *buf, size_t n, bool *dflt) {
  uint64_t v = get_slot(ev, o->slot);
  *dflt = false;
  switch (o->kind) {
  case OP_GPR:
    if (v > 15) return false;
    *dflt = v == 0;
    snprintf(buf, n, "%%%s", trace_text_gpr_names[v]);
    return true;
  case OP_WORD:
    *dflt = !(v & 1);
    snprintf(buf, n, "%s", (v & 1) ? o->w1 : o->w0 ? o->w0 : "");
    return true;
  case OP_IOSIZE:
    snprintf(buf, n, "%u", (unsigned)IO_AUX_SIZE(v));
    return true;
  case OP_REASON: {
    const char *name = exit_reason_name((unsigned)v);
    if (name) snprintf(buf, n, "%s", name);
    else snprintf(buf, n, "%u", (unsigned)v);
    return true;
  }
  case OP_LABEL: {
    char label[MARK_LABEL_MAX + 1] = { 0 };
    for (int i = 0; i < 8; i++) {
      label[i] = (char)(ev->a >> (8 * i));
      label[8 + i] = (char)(ev->b >> (8 * i));
    }
    snprintf(buf, n, "%s", label);
    return true;
  }
  }
  *dflt = o->optional && v == 0;
  trace_text_fmt_num(buf, n, v, o->base);
  return true;
}

/* Mnemonic and operands; trailing optional operands at their defaults are left out. */
static bool format_mnemonic(const struct trace_event *ev, char *buf, size_t n) {
  const struct mnemonic *m = mnemonic_for(ev);
  if (!m) return false;
  size_t len = (size_t)snprintf(buf, n, "%s", m->name), keep = len;
  for (int i = 0; i < trace_text_n_ops(m); i++) {
    char t[40];
    bool dflt;
    if (!format_op(&m->ops[i], ev, t, sizeof t, &dflt)) return false;
    len += (size_t)snprintf(buf + len, n - len, " %s", t);
    if (!(dflt && m->ops[i].optional)) keep = len;
  }
  buf[keep] = 0;
  if (ev->cycles) snprintf(buf + keep, n - keep, " +%u", ev->cycles);
  return true;
}

static bool format_canonical(const struct trace_event *ev, char *buf, size_t n) {
  if (ev->type == EV_RUN) return snprintf(buf, n, "run %u", ev->cycles) > 0;
  if (ev->type == EV_INIT)
    return snprintf(buf, n, "@init cr%u=0x%llx", ev->aux, (unsigned long long)ev->a) > 0;
  return format_mnemonic(ev, buf, n);
}

struct collect { struct trace_event ev; int n; };

static int collect_one(void *ctx, const struct trace_event *ev) {
  struct collect *c = ctx;
  if (c->n++ == 0) c->ev = *ev;
  return 0;
}

/* True when line parses back to exactly ev: the guarantee behind dump's round trip. */
static bool reparses_to(const char *line, const struct trace_event *ev) {
  struct trace_text_parser p;
  struct collect c = { .n = 0 };
  trace_text_parser_init(&p);
  p.header_done = true;
  p.vcpu = ev->vcpu;
  int rc = trace_text_parse_line(&p, line, collect_one, &c);
  trace_text_parser_free(&p);
  return rc == 0 && c.n == 1 && memcmp(&c.ev, ev, sizeof *ev) == 0;
}

int trace_text_format(const struct trace_event *ev, char *buf, size_t n) {
  char line[128];
  if (format_canonical(ev, line, sizeof line) && reparses_to(line, ev))
    return snprintf(buf, n, "%s", line);
  const char *type = ev->type < EV_COUNT ? event_mnemonic(ev->type) : NULL;
  char tname[8];
  if (!type) { snprintf(tname, sizeof tname, "%u", ev->type); type = tname; }
  int len = snprintf(buf, n, "raw %s 0x%x 0x%llx 0x%llx", type, ev->aux,
                     (unsigned long long)ev->a, (unsigned long long)ev->b);
  if (ev->cycles) {
    size_t at = (size_t)len < n ? (size_t)len : n;
    len += snprintf(buf + at, n - at, " +%u", ev->cycles);
  }
  return len;
}
