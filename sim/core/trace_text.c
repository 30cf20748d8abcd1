/* The text form of traces: a table-driven line parser and a canonical formatter that round-trips through it. */
#include "trace_text.h"
#include "outfile.h"
#include "util.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 16
#define CYCLES_MAX 0xffffffffu     /* record.cycles is a u32 */

/* ---- operand descriptions ---- */

enum op_kind {
  OP_NUM,      /* a number into slot, printed in base */
  OP_GPR,      /* %rax..%r15 into b (the instruction's general register) */
  OP_WORD,     /* one of two words, setting aux bit 0 (w0 may be NULL: only w1 exists) */
  OP_IOSIZE,   /* 1, 2 or 4 into aux bits 3:1 */
  OP_LABEL,    /* mark label: up to 16 bytes into a then b, little-endian */
  OP_REASON,   /* exit reason: a name as Linux prints it, or 0..65535, into b bits 15:0 */
};
/* TO_B_LO and TO_B_HI: b bits 15:0 and 63:32 (a measured exit's reason and detail). */
enum op_slot { TO_AUX, TO_A, TO_B, TO_B_LO, TO_B_HI };

struct op {
  uint8_t kind, slot, optional, base;
  const char *syntax;        /* for usage lines: "VALUE" */
  const char *what;          /* for messages: "value", "debug register" */
  uint64_t min, max;         /* accepted range (OP_NUM) */
  const char *w0, *w1;       /* the words of an OP_WORD */
};

/* One mnemonic: event type, the aux its name implies (CR number) and operands. */
struct mnemonic {
  const char *name;
  uint8_t type;
  int16_t aux;               /* -1: aux comes from the operands */
  struct op ops[3];
};

#define U64 UINT64_MAX
#define U32 0xffffffffull
#define HEX(slot, syn, what, max)      { OP_NUM, slot, 0, 16, syn, what, 0, max, NULL, NULL }
#define HEXOPT(slot, syn, what, max)   { OP_NUM, slot, 1, 16, syn, what, 0, max, NULL, NULL }
#define DEC(slot, syn, what, lo, hi)   { OP_NUM, slot, 0, 10, syn, what, lo, hi, NULL, NULL }
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
  { "pause",   EV_PAUSE,   -1, { { 0 } } },
  { "wbinvd",  EV_WBINVD,  -1, { { 0 } } },
  { "intr",    EV_INTR,    -1, { DEC(TO_A, "VECTOR", "vector", 0, 255) } },
  { "exc",     EV_EXC,     -1, { DEC(TO_A, "VECTOR", "vector", 0, 255),
                                 HEXOPT(TO_B, "ERRCODE", "error code", U32) } },
  { "xsetbv",  EV_XSETBV,  -1, { DEC(TO_A, "XCR", "XCR index", 0, U32), HEX(TO_B, "VALUE", "value", U64) } },
  { "apic",    EV_APIC,    -1, { WORD(0, "r|w", "access", "r", "w"), HEX(TO_A, "OFFSET", "register offset", 0xff0),
                                 HEXOPT(TO_B, "VALUE", "value", U64) } },
  { "measured", EV_MEASURED, 0, { MEASURED_OPS } },
  { "measured-only", EV_MEASURED, MEASURED_ALONE, { MEASURED_OPS } },
};
#define N_MNEMONICS (sizeof mnemonics / sizeof mnemonics[0])

/* General registers in the SDM's encoding order (exit qualification bits 11:8). */
static const char *const gpr_names[16] = {
  "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
  "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/* Header directives, one bit each in parser.seen (duplicates are errors). */
enum { SEEN_PAGING = 1, SEEN_WORKLOAD = 2, SEEN_VCPUS = 4 };

static const struct mnemonic *mnemonic_by_name(const char *name) {
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

static int n_ops(const struct mnemonic *m) {
  int n = 0;
  while (n < 3 && m->ops[n].syntax) n++;
  return n;
}

static int syntax(struct trace_text_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int syntax(struct trace_text_parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err, sizeof p->err, fmt, ap);
  va_end(ap);
  return EXIT_BADINPUT;
}

/* "drw N VALUE [%GPR] [+CYCLES]", for messages about missing or extra operands. */
static const char *usage_of(const struct mnemonic *m, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "%s", m->name);
  for (int i = 0; i < n_ops(m) && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, m->ops[i].optional ? " [%s]" : " %s", m->ops[i].syntax);
  if (len < n) snprintf(buf + len, n - len, " [+CYCLES]");
  return buf;
}

/* ---- numbers ---- */

enum { NUM_OK, NUM_JUNK, NUM_OVERFLOW };

/* Decimal or 0x hex, the whole string; leading zeros are decimal, never octal. */
static int parse_number(const char *s, uint64_t *out) {
  unsigned base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { base = 16; s += 2; }
  if (!*s) return NUM_JUNK;
  uint64_t v = 0;
  for (; *s; s++) {
    unsigned d;
    if (*s >= '0' && *s <= '9') d = (unsigned)(*s - '0');
    else if (base == 16 && *s >= 'a' && *s <= 'f') d = (unsigned)(*s - 'a' + 10);
    else if (base == 16 && *s >= 'A' && *s <= 'F') d = (unsigned)(*s - 'A' + 10);
    else return NUM_JUNK;
    if (v > (UINT64_MAX - d) / base) return NUM_OVERFLOW;
    v = v * base + d;
  }
  *out = v;
  return NUM_OK;
}

static void fmt_num(char *buf, size_t n, uint64_t v, unsigned base) {
  snprintf(buf, n, base == 16 ? "0x%llx" : "%llu", (unsigned long long)v);
}

/* Parses tok as a number in [lo, hi]; `who` and `what` name it in messages. */
static int number_in(struct trace_text_parser *p, const char *who, const char *what, const char *tok,
                     uint64_t lo, uint64_t hi, unsigned base, uint64_t *out) {
  switch (parse_number(tok, out)) {
  case NUM_JUNK:
    return syntax(p, "%s: %s '%s' is not a number (decimal or 0x hex)", who, what, tok);
  case NUM_OVERFLOW:
    return syntax(p, "%s: %s %s does not fit in 64 bits", who, what, tok);
  }
  if (*out < lo && hi == U64)
    return syntax(p, "%s: %s %s must be at least %llu", who, what, tok, (unsigned long long)lo);
  if (*out < lo || *out > hi) {
    char a[24], b[24];
    fmt_num(a, sizeof a, lo, base);
    fmt_num(b, sizeof b, hi, base);
    return syntax(p, "%s: %s %s out of range %s..%s", who, what, tok, a, b);
  }
  return 0;
}

/* ---- operands ---- */

static void put_slot(struct trace_event *ev, unsigned slot, uint64_t v) {
  switch (slot) {
  case TO_AUX: ev->aux = (uint8_t)(ev->aux | v); break;
  case TO_A: ev->a = v; break;
  case TO_B: ev->b = v; break;
  case TO_B_LO: ev->b = (ev->b & ~0xffffull) | (v & 0xffff); break;
  default: ev->b = (ev->b & 0xffffffffull) | v << 32; break;
  }
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

static int parse_reason(struct trace_text_parser *p, const char *who, const char *tok, struct trace_event *ev) {
  int r = exit_reason_by_name(tok);
  uint64_t v;
  if (r >= 0) v = (uint64_t)r;
  else if (parse_number(tok, &v) != NUM_OK || v > 0xffff)
    return syntax(p, "%s: exit reason '%s' is neither a name (CR_ACCESS, ...) nor a number 0..65535", who, tok);
  put_slot(ev, TO_B_LO, v);
  return 0;
}

static bool label_byte_ok(unsigned char c) { return c > 0x20 && c != 0x7f && c != '#'; }

static int parse_label(struct trace_text_parser *p, const char *tok, struct trace_event *ev) {
  size_t len = strlen(tok);
  if (len > MARK_LABEL_MAX)
    return syntax(p, "mark: label '%s' is %zu bytes, at most %d", tok, len, MARK_LABEL_MAX);
  unsigned char bytes[MARK_LABEL_MAX] = { 0 };
  memcpy(bytes, tok, len);
  for (size_t i = 0; i < len; i++)
    if (!label_byte_ok(bytes[i]))
      return syntax(p, "mark: label byte 0x%02x is not allowed (printable, no '#')", bytes[i]);
  for (int i = 0; i < 8; i++) {
    ev->a |= (uint64_t)bytes[i] << (8 * i);
    ev->b |= (uint64_t)bytes[8 + i] << (8 * i);
  }
  return 0;
}

static int parse_gpr(struct trace_text_parser *p, const char *who, const char *tok, struct trace_event *ev) {
  for (unsigned i = 0; tok[0] == '%' && i < 16; i++)
    if (strcmp(tok + 1, gpr_names[i]) == 0) { ev->b = i; return 0; }
  return syntax(p, "%s: register '%s' is not one of %%rax..%%r15", who, tok);
}

static int parse_word(struct trace_text_parser *p, const char *who, const struct op *o,
                      const char *tok, struct trace_event *ev) {
  if (o->w0 && strcmp(tok, o->w0) == 0) return 0;
  if (strcmp(tok, o->w1) == 0) { ev->aux |= 1; return 0; }
  if (!o->w0) return syntax(p, "%s: %s '%s' is not '%s'", who, o->what, tok, o->w1);
  return syntax(p, "%s: %s '%s' is not '%s' or '%s'", who, o->what, tok, o->w0, o->w1);
}

static int parse_op(struct trace_text_parser *p, const struct mnemonic *m, const struct op *o,
                    const char *tok, struct trace_event *ev) {
  uint64_t v;
  switch (o->kind) {
  case OP_GPR: return parse_gpr(p, m->name, tok, ev);
  case OP_WORD: return parse_word(p, m->name, o, tok, ev);
  case OP_LABEL: return parse_label(p, tok, ev);
  case OP_REASON: return parse_reason(p, m->name, tok, ev);
  case OP_IOSIZE:
    if (parse_number(tok, &v) != NUM_OK || (v != 1 && v != 2 && v != 4))
      return syntax(p, "%s: size '%s' is not 1, 2 or 4", m->name, tok);
    ev->aux |= (uint8_t)(v << 1);
    return 0;
  }
  if (number_in(p, m->name, o->what, tok, o->min, o->max, o->base, &v)) return EXIT_BADINPUT;
  put_slot(ev, o->slot, v);
  return 0;
}

/* A trailing "+N": the event's own native cycles. */
static int parse_cycles(struct trace_text_parser *p, const char *who, const char *tok, uint32_t *out) {
  uint64_t v;
  int rc = parse_number(tok + 1, &v);
  if (rc == NUM_JUNK) return syntax(p, "%s: '%s' is not a cycle count (+N)", who, tok);
  if (rc == NUM_OVERFLOW || v > CYCLES_MAX)
    return syntax(p, "%s: cycles %s out of range 0..%u", who, tok + 1, CYCLES_MAX);
  *out = (uint32_t)v;
  return 0;
}

/* Splits off a trailing +N; a '+' token anywhere else is an error. */
static int take_cycles(struct trace_text_parser *p, const char *who, char **tok, int *ntok, uint32_t *cycles) {
  *cycles = 0;
  for (int i = 1; i < *ntok - 1; i++)
    if (tok[i][0] == '+') return syntax(p, "%s: '%s' must come last", who, tok[i]);
  if (*ntok > 1 && tok[*ntok - 1][0] == '+') {
    (*ntok)--;
    return parse_cycles(p, who, tok[*ntok], cycles);
  }
  return 0;
}

/* ---- records ---- */

/* The first record ends the header, so the metadata is checked first. */
static int header_end(struct trace_text_parser *p);

static int emit_record(struct trace_text_parser *p, struct trace_event *ev, trace_text_emit_fn emit, void *ctx) {
  if (!p->header_done) {
    int rc = header_end(p);
    if (rc) return rc;
  }
  ev->vcpu = (uint16_t)(ev->vcpu == UINT16_MAX ? p->vcpu : ev->vcpu);
  return emit(ctx, ev);
}

static struct trace_event blank_event(unsigned type) {
  struct trace_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = (uint8_t)type;
  ev.vcpu = UINT16_MAX;              /* filled with the current vCPU on emission */
  return ev;
}

static int parse_event(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx) {
  const struct mnemonic *m = mnemonic_by_name(tok[0]);
  if (!m) {
    size_t n = strlen(tok[0]);
    if (strncmp(tok[0], "cr", 2) == 0 && n > 2 && (tok[0][n - 1] == 'w' || tok[0][n - 1] == 'r'))
      return syntax(p, "unknown event '%s' (control registers: cr0, cr3, cr4, cr8)", tok[0]);
    return syntax(p, "unknown event '%s'", tok[0]);
  }
  struct trace_event ev = blank_event(m->type);
  if (m->aux >= 0) ev.aux = (uint8_t)m->aux;
  if (take_cycles(p, m->name, tok, &ntok, &ev.cycles)) return EXIT_BADINPUT;
  if (m->type == EV_MEASURED && ev.cycles)
    return syntax(p, "%s: takes no +CYCLES (a measured exit is no guest time)", m->name);
  char usage[96];
  int nops = n_ops(m), i;
  for (i = 0; i < nops; i++) {
    if (i + 1 >= ntok) {
      if (m->ops[i].optional) break;
      return syntax(p, "%s: missing %s (usage: %s)", m->name, m->ops[i].syntax, usage_of(m, usage, sizeof usage));
    }
    if (parse_op(p, m, &m->ops[i], tok[i + 1], &ev)) return EXIT_BADINPUT;
  }
  if (ntok > nops + 1)
    return syntax(p, "%s: unexpected '%s' (usage: %s)", m->name, tok[nops + 1], usage_of(m, usage, sizeof usage));
  return emit_record(p, &ev, emit, ctx);
}

/* run N: N cycles of native execution, split into records of at most 2^32-1.
** N is bounded (2^48 cycles, over a day at 3 GHz) so that a typo cannot make
** billions of records. */
#define RUN_CYCLES_MAX (1ull << 48)
static int parse_run(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx) {
  uint64_t n;
  if (ntok < 2) return syntax(p, "run: missing CYCLES (usage: run CYCLES)");
  if (tok[1][0] == '+' || (ntok > 2 && tok[2][0] == '+'))
    return syntax(p, "run: takes no +CYCLES; its operand is the cycle count (usage: run CYCLES)");
  if (ntok > 2) return syntax(p, "run: unexpected '%s' (usage: run CYCLES)", tok[2]);
  if (number_in(p, "run", "cycle count", tok[1], 0, RUN_CYCLES_MAX, 10, &n)) return EXIT_BADINPUT;
  do {
    struct trace_event ev = blank_event(EV_RUN);
    ev.cycles = (uint32_t)(n > CYCLES_MAX ? CYCLES_MAX : n);
    n -= ev.cycles;
    int rc = emit_record(p, &ev, emit, ctx);
    if (rc) return rc;
  } while (n > 0);
  return 0;
}

/* raw TYPE AUX A B [+CYCLES]: any record, for those with no canonical form. */
static int parse_raw(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx) {
  struct trace_event ev = blank_event(0);
  uint64_t type, aux;
  if (take_cycles(p, "raw", tok, &ntok, &ev.cycles)) return EXIT_BADINPUT;
  if (ntok != 5)
    return syntax(p, "raw: expects 4 operands, got %d (usage: raw TYPE AUX A B [+CYCLES])", ntok - 1);
  int t = event_type_from_mnemonic(tok[1]);
  if (t >= 0) type = (uint64_t)t;
  else if (parse_number(tok[1], &type) != NUM_OK || type >= EV_COUNT)
    return syntax(p, "raw: unknown event type '%s' (a type mnemonic such as crw, or 0..%d)", tok[1], EV_COUNT - 1);
  if (number_in(p, "raw", "aux", tok[2], 0, 255, 16, &aux) ||
      number_in(p, "raw", "operand a", tok[3], 0, U64, 16, &ev.a) ||
      number_in(p, "raw", "operand b", tok[4], 0, U64, 16, &ev.b))
    return EXIT_BADINPUT;
  ev.type = (uint8_t)type;
  ev.aux = (uint8_t)aux;
  return emit_record(p, &ev, emit, ctx);
}

/* vcpu N: the following records run on vCPU N. */
static int parse_vcpu(struct trace_text_parser *p, char **tok, int ntok) {
  uint64_t v;
  if (ntok < 2) return syntax(p, "vcpu: missing N (usage: vcpu N)");
  if (ntok > 2) return syntax(p, "vcpu: unexpected '%s' (usage: vcpu N)", tok[2]);
  if (number_in(p, "vcpu", "vCPU", tok[1], 0, TRACE_VCPU_MAX - 1, 10, &v)) return EXIT_BADINPUT;
  p->vcpu = (unsigned)v;
  return 0;
}

/* ---- @init ---- */

static bool cr_number_ok(unsigned cr) { return cr == 0 || cr == 3 || cr == 4 || cr == 8; }

/* One "crN=VALUE" of an @init line into ev; *crs collects the CRs seen. */
static int parse_init_reg(struct trace_text_parser *p, const char *key, const char *val,
                          unsigned *crs, struct trace_event *ev) {
  unsigned cr = 0;
  if (strncmp(key, "cr", 2) != 0)
    return syntax(p, "@init: expected crN=VALUE or vcpu=N, got '%s'", key);
  if (strlen(key) != 3 || !cr_number_ok(cr = (unsigned)(key[2] - '0')))
    return syntax(p, "@init: control register '%s' is not one of cr0, cr3, cr4, cr8", key);
  if (*crs & (1u << cr)) return syntax(p, "@init: %s given twice", key);
  *crs |= 1u << cr;
  char what[16];
  snprintf(what, sizeof what, "%s value", key);
  *ev = blank_event(EV_INIT);
  ev->aux = (uint8_t)cr;
  return number_in(p, "@init", what, val, 0, cr == 8 ? 0xf : U64, 16, &ev->a) ? EXIT_BADINPUT : 0;
}

/* @init [vcpu=N] crN=VALUE...: one EV_INIT record per register, in line order. */
static int parse_init(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx) {
  struct trace_event regs[4];
  unsigned crs = 0, vcpu = p->vcpu;
  int n = 0;
  bool have_vcpu = false;
  for (int i = 1; i < ntok; i++) {
    char *eq = strchr(tok[i], '=');
    if (!eq) return syntax(p, "@init: expected crN=VALUE or vcpu=N, got '%s'", tok[i]);
    *eq = 0;
    if (strcmp(tok[i], "vcpu") == 0) {
      uint64_t v;
      if (have_vcpu) return syntax(p, "@init: vcpu given twice");
      if (number_in(p, "@init", "vCPU", eq + 1, 0, TRACE_VCPU_MAX - 1, 10, &v)) return EXIT_BADINPUT;
      vcpu = (unsigned)v;
      have_vcpu = true;
    } else if (n == 4) {
      return syntax(p, "@init: more than 4 registers");   /* unreachable: duplicates are refused */
    } else if (parse_init_reg(p, tok[i], eq + 1, &crs, &regs[n++])) {
      return EXIT_BADINPUT;
    }
  }
  if (n == 0) return syntax(p, "@init: no registers (usage: @init [vcpu=N] crN=VALUE...)");
  for (int i = 0; i < n; i++) {
    regs[i].vcpu = (uint16_t)vcpu;
    int rc = emit_record(p, &regs[i], emit, ctx);
    if (rc) return rc;
  }
  return 0;
}

/* ---- header directives ---- */

static int directive_once(struct trace_text_parser *p, const char *name, unsigned bit) {
  if (p->header_done) return syntax(p, "%s: header directives must come before the first event", name);
  if (p->seen & bit) return syntax(p, "%s given twice", name);
  p->seen |= bit;
  return 0;
}

static int parse_paging(struct trace_text_parser *p, char **tok, int ntok) {
  if (directive_once(p, "@paging", SEEN_PAGING)) return EXIT_BADINPUT;
  if (ntok != 2) return syntax(p, "@paging: expects one of 32, pae, 64");
  int mode = paging_from_name(tok[1]);
  if (mode < 0) return syntax(p, "@paging: unknown mode '%s' (32, pae, 64)", tok[1]);
  p->paging = (unsigned)mode;
  return 0;
}

static int parse_vcpus(struct trace_text_parser *p, char **tok, int ntok) {
  uint64_t v;
  if (directive_once(p, "@vcpus", SEEN_VCPUS)) return EXIT_BADINPUT;
  if (ntok != 2) return syntax(p, "@vcpus: expects one number (usage: @vcpus N)");
  if (number_in(p, "@vcpus", "vCPU count", tok[1], 1, TRACE_VCPU_MAX, 10, &v)) return EXIT_BADINPUT;
  p->vcpus = (unsigned)v;
  return 0;
}

/* @workload NAME: the rest of the line (spaces inside are kept). */
static int parse_workload(struct trace_text_parser *p, const char *rest) {
  if (directive_once(p, "@workload", SEEN_WORKLOAD)) return EXIT_BADINPUT;
  size_t len = strlen(rest);
  if (len == 0) return syntax(p, "@workload: missing NAME");
  if (len > TRACE_WORKLOAD_MAX)
    return syntax(p, "@workload: name of %zu bytes exceeds the %d-byte limit", len, TRACE_WORKLOAD_MAX);
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)rest[i] < 0x20 || rest[i] == 0x7f)
      return syntax(p, "@workload: control character in the name");
  memcpy(p->workload, rest, len + 1);
  return 0;
}

/* @meta TEXT: the rest of the line verbatim (no comments: JSON strings may
** hold '#'); several @meta lines join with newlines so that multi-line JSON
** survives dump and asm byte for byte. */
static int parse_meta(struct trace_text_parser *p, const char *rest, size_t len) {
  if (p->header_done) return syntax(p, "@meta: header directives must come before the first event");
  size_t need = p->metadata_len + (p->meta_count ? 1 : 0) + len;
  if (need > TRACE_METADATA_MAX)
    return syntax(p, "@meta: metadata exceeds the %u-byte limit", TRACE_METADATA_MAX);
  if (need + 1 > p->metadata_cap) {
    p->metadata_cap = need + 1 > 2 * p->metadata_cap ? need + 1 : 2 * p->metadata_cap;
    p->metadata = realloc(p->metadata, p->metadata_cap);
  }
  if (p->meta_count == p->meta_cap) {
    p->meta_cap = p->meta_cap ? 2 * p->meta_cap : 8;
    p->meta_line = realloc(p->meta_line, p->meta_cap * sizeof *p->meta_line);
    p->meta_off = realloc(p->meta_off, p->meta_cap * sizeof *p->meta_off);
  }
  if (!p->metadata || !p->meta_line || !p->meta_off) return syntax(p, "@meta: out of memory");
  if (p->meta_count) p->metadata[p->metadata_len++] = '\n';
  p->meta_line[p->meta_count] = p->line;
  p->meta_off[p->meta_count++] = p->metadata_len;
  memcpy(p->metadata + p->metadata_len, rest, len);
  p->metadata_len += len;
  p->metadata[p->metadata_len] = 0;
  return 0;
}

/* Reports a JSON error at byte pos of the metadata on the @meta line holding it. */
static int meta_error(struct trace_text_parser *p, size_t pos, const char *what) {
  size_t i = p->meta_count - 1;
  while (i > 0 && p->meta_off[i] > pos) i--;
  p->err_line = p->meta_line[i];
  const char *at = p->metadata + pos;
  int n = (int)strcspn(at, "\n");
  if (n > 24) n = 24;
  return syntax(p, "@meta: %s at column %zu: '%.*s'%s", what, pos - p->meta_off[i] + 7, n, at,
                *at == '#' ? " (@meta lines take no comments)" : "");
}

static int header_end(struct trace_text_parser *p) {
  p->header_done = true;
  if (!p->metadata) return 0;
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(p->metadata, &end, 1);
  if (!j) {
    size_t pos = end ? (size_t)(end - p->metadata) : 0;
    if (pos >= p->metadata_len) {
      p->err_line = p->meta_line[p->meta_count - 1];
      return syntax(p, "@meta: invalid JSON: the text ends before the value is complete");
    }
    return meta_error(p, pos, "invalid JSON");
  }
  bool object = cJSON_IsObject(j);
  cJSON_Delete(j);
  if (!object) {
    p->err_line = p->meta_line[0];
    return syntax(p, "@meta: metadata must be a JSON object {...}");
  }
  return 0;
}

static int parse_directive(struct trace_text_parser *p, char **tok, int ntok, const char *rest,
                           trace_text_emit_fn emit, void *ctx) {
  if (strcmp(tok[0], "@init") == 0) return parse_init(p, tok, ntok, emit, ctx);
  if (strcmp(tok[0], "@paging") == 0) return parse_paging(p, tok, ntok);
  if (strcmp(tok[0], "@vcpus") == 0) return parse_vcpus(p, tok, ntok);
  if (strcmp(tok[0], "@workload") == 0) return parse_workload(p, rest);
  return syntax(p, "unknown directive '%s' (@paging, @workload, @vcpus, @meta, @init)", tok[0]);
}

/* ---- lines ---- */

void trace_text_parser_init(struct trace_text_parser *p) {
  memset(p, 0, sizeof *p);
  p->paging = PAGING_64;
}

void trace_text_parser_free(struct trace_text_parser *p) {
  free(p->metadata);
  free(p->meta_line);
  free(p->meta_off);
  p->metadata = NULL;
  p->meta_line = NULL;
  p->meta_off = NULL;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

static int tokenize(char *s, char **tok) {
  int n = 0;
  for (;;) {
    while (is_space(*s)) s++;
    if (!*s) return n;
    if (n == MAX_TOKENS) return -1;
    tok[n++] = s;
    while (*s && !is_space(*s)) s++;
    if (*s) *s++ = 0;
  }
}

/* "@meta" followed by the end of the line or a blank: returns the text after
** that one blank, or NULL when the line is not an @meta line. */
static const char *meta_text(const char *s) {
  while (is_space(*s)) s++;
  if (strncmp(s, "@meta", 5) != 0) return NULL;
  if (s[5] == 0) return s + 5;
  return s[5] == ' ' || s[5] == '\t' ? s + 6 : NULL;
}

int trace_text_parse_line(struct trace_text_parser *p, const char *line, trace_text_emit_fn emit, void *ctx) {
  p->line++;
  p->err_line = p->line;
  p->err[0] = 0;
  size_t len = strlen(line);
  if (len && line[len - 1] == '\n') len--;
  if (len && line[len - 1] == '\r') len--;
  const char *meta = meta_text(line);
  if (meta) return parse_meta(p, meta, len - (size_t)(meta - line));
  if (len > TEXT_LINE_MAX) return syntax(p, "line of %zu bytes exceeds the %d-byte limit", len, TEXT_LINE_MAX);

  char text[TEXT_LINE_MAX + 1], words[TEXT_LINE_MAX + 1], *tok[MAX_TOKENS];
  memcpy(text, line, len);
  text[len] = 0;
  text[strcspn(text, "#")] = 0;                 /* comment */
  len = strlen(text);
  while (len && is_space(text[len - 1])) text[--len] = 0;
  memcpy(words, text, len + 1);
  int ntok = tokenize(words, tok);
  if (ntok < 0) return syntax(p, "too many tokens (at most %d)", MAX_TOKENS);
  if (ntok == 0) return 0;
  if (tok[0][0] == '@') {
    const char *rest = ntok > 1 ? text + (tok[1] - words) : "";
    return parse_directive(p, tok, ntok, rest, emit, ctx);
  }
  if (strcmp(tok[0], "vcpu") == 0) return parse_vcpu(p, tok, ntok);
  if (strcmp(tok[0], "run") == 0) return parse_run(p, tok, ntok, emit, ctx);
  if (strcmp(tok[0], "raw") == 0) return parse_raw(p, tok, ntok, emit, ctx);
  return parse_event(p, tok, ntok, emit, ctx);
}

int trace_text_parse_end(struct trace_text_parser *p) {
  p->err[0] = 0;
  p->err_line = p->line;
  return p->header_done ? 0 : header_end(p);
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
    snprintf(buf, n, "%%%s", gpr_names[v]);
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
  fmt_num(buf, n, v, o->base);
  return true;
}

/* Mnemonic and operands; trailing optional operands at their defaults are left out. */
static bool format_mnemonic(const struct trace_event *ev, char *buf, size_t n) {
  const struct mnemonic *m = mnemonic_for(ev);
  if (!m) return false;
  size_t len = (size_t)snprintf(buf, n, "%s", m->name), keep = len;
  for (int i = 0; i < n_ops(m); i++) {
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

/* ---- printer ---- */

void trace_text_printer_init(struct trace_text_printer *pr, FILE *out) {
  memset(pr, 0, sizeof *pr);
  pr->out = out;
  pr->init_vcpu = -1;
}

void trace_text_print_header(struct trace_text_printer *pr, const struct trace_header *h) {
  if (h->workload[0]) fprintf(pr->out, "@workload %s\n", h->workload);
  fprintf(pr->out, "@paging %s\n", paging_name(h->paging) ? paging_name(h->paging) : "64");
  fprintf(pr->out, "@vcpus %u\n", h->vcpu_count);
  /* One @meta line per metadata line; the parser joins them back with '\n'. */
  for (const char *s = h->metadata; s && *s;) {
    size_t n = strcspn(s, "\n");
    fprintf(pr->out, n ? "@meta %.*s\n" : "@meta\n", (int)n, s);
    s += n;
    if (*s == '\n' && *++s == 0) fputs("@meta\n", pr->out);   /* keep a trailing newline */
  }
}

void trace_text_print_end(struct trace_text_printer *pr) {
  if (pr->init_vcpu < 0) return;
  fprintf(pr->out, "%s\n", pr->init);
  pr->init_vcpu = -1;
  pr->init_crs = 0;
}

/* Adds a canonical @init record to the pending @init line; false if it has no @init form. */
static bool print_init(struct trace_text_printer *pr, const struct trace_event *ev) {
  char one[64];
  trace_text_format(ev, one, sizeof one);
  if (strncmp(one, "@init ", 6) != 0) return false;
  unsigned bit = 1u << ev->aux;
  if (pr->init_vcpu >= 0 && ((unsigned)pr->init_vcpu != ev->vcpu || (pr->init_crs & bit)))
    trace_text_print_end(pr);
  if (pr->init_vcpu < 0) {
    if (ev->vcpu == pr->vcpu) snprintf(pr->init, sizeof pr->init, "@init");
    else snprintf(pr->init, sizeof pr->init, "@init vcpu=%u", ev->vcpu);
    pr->init_vcpu = ev->vcpu;
  }
  size_t len = strlen(pr->init);
  snprintf(pr->init + len, sizeof pr->init - len, "%s", one + 5);
  pr->init_crs |= bit;
  return true;
}

void trace_text_print(struct trace_text_printer *pr, const struct trace_event *ev) {
  if (ev->type == EV_INIT && print_init(pr, ev)) return;
  trace_text_print_end(pr);
  if (ev->vcpu != pr->vcpu) {
    fprintf(pr->out, "vcpu %u\n", ev->vcpu);
    pr->vcpu = ev->vcpu;
  }
  char line[128];
  trace_text_format(ev, line, sizeof line);
  fprintf(pr->out, "%s\n", line);
}

/* ---- the assembler: a text file to a binary trace ---- */

struct assembler {
  struct trace_text_parser p;
  struct outfile out;
  struct trace_writer w;
  bool open;               /* w created: at the first record, when the header is final */
  char *err;               /* the caller's buffer */
  size_t errlen;
  bool failed;             /* the writer failed: the message is in err, not in p.err */
  bool to_stdout;          /* out "-": the header goes first, its count unknown */
};

static int asm_fail(struct assembler *as, const char *msg) {
  snprintf(as->err, as->errlen, "%s", msg);
  as->failed = true;
  return EXIT_BADINPUT;
}

static int asm_open(struct assembler *as) {
  struct trace_text_parser *p = &as->p;
  int rc = as->to_stdout ? trace_create_stdout(&as->w, p->workload, p->vcpus ? p->vcpus : 1, p->paging, p->metadata,
                                               TRACE_COUNT_UNKNOWN)
                         : trace_create(&as->w, outfile_path(&as->out), p->workload, p->vcpus ? p->vcpus : 1,
                                        p->paging, p->metadata);
  if (rc != EXIT_OK) {
    asm_fail(as, as->w.err);
    return rc;
  }
  as->open = true;
  return 0;
}

static int asm_emit(void *ctx, const struct trace_event *ev) {
  struct assembler *as = ctx;
  /* `raw` lines can spell any record; the reader refuses those whose operands
  ** are impossible, so the assembler does too, at their line (a fuzz input) */
  const char *why = event_invalid(ev);
  if (why) {
    snprintf(as->p.err, sizeof as->p.err, "%s record not valid: %s (the trace reader would refuse it)",
             event_mnemonic(ev->type), why);
    as->p.err_line = as->p.line;
    return EXIT_BADINPUT;
  }
  if (!as->open) {
    int rc = asm_open(as);
    if (rc) return rc;
  }
  return trace_write(&as->w, ev) == EXIT_OK ? 0 : asm_fail(as, as->w.err);
}

/* Feeds every line of f to the parser; returns 0 or EXIT_BADINPUT with the message in as->err. */
static int asm_lines(struct assembler *as, FILE *f, const char *name) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int rc = 0;
  while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
    const char *nul = memchr(line, 0, (size_t)len);
    if (nul) {                                   /* the parser would stop there and take the rest for gone */
      snprintf(as->err, as->errlen, "%s:%lu: NUL byte at column %zu (a binary file? 'vmxsim trace dump' turns "
               "a binary trace into text)", name, as->p.line + 1, (size_t)(nul - line) + 1);
      rc = EXIT_BADINPUT;
      break;
    }
    rc = trace_text_parse_line(&as->p, line, asm_emit, as);
  }
  free(line);
  if (rc == 0 && ferror(f)) {
    snprintf(as->err, as->errlen, "%s: read failed: %s", name, strerror(errno));
    return EXIT_BADINPUT;
  }
  if (rc == 0) rc = trace_text_parse_end(&as->p);
  if (rc && !as->failed && as->p.err[0])
    snprintf(as->err, as->errlen, "%s:%lu: %s", name, as->p.err_line, as->p.err);
  if (rc == 0 && !as->open) rc = asm_open(as);      /* no records: still a valid, empty trace */
  return rc;
}

/* Parses the input into the output, then finishes or removes it. */
static int asm_file(struct assembler *as, FILE *f, const char *name) {
  int rc = asm_lines(as, f, name);
  if (as->open) {
    if (rc) trace_abort(&as->w);
    else if (trace_finish(&as->w) != EXIT_OK) rc = asm_fail(as, as->w.err);
  }
  if (as->to_stdout) return rc;
  if (rc) {
    outfile_discard(&as->out);
    return rc;
  }
  return outfile_commit(&as->out, as->err, as->errlen);
}

int trace_text_assemble(const char *in, const char *out, char *err, size_t errlen) {
  bool is_stdin = strcmp(in, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(in, "r");
  if (!f) {
    snprintf(err, errlen, "%s: %s", in, strerror(errno));
    return EXIT_BADINPUT;
  }
  struct assembler as = { .open = false, .err = err, .errlen = errlen, .to_stdout = !strcmp(out, "-") };
  trace_text_parser_init(&as.p);
  int rc = as.to_stdout ? 0 : outfile_begin(&as.out, out, OUTFILE_REGULAR, err, errlen);
  if (rc == 0) rc = asm_file(&as, f, is_stdin ? "<stdin>" : in);
  trace_text_parser_free(&as.p);
  if (!is_stdin) fclose(f);
  return rc;
}
