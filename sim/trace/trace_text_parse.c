/* The line parser of the text form (`vmxsim trace asm`): numbers, operands
** read by the rows of the syntax table (trace_text.c), event, `run`, `raw`,
** `vcpu` and `@init` lines, and the splitting of a line into tokens.  The
** header directives are trace_text_header.c's, kept apart because they fill
** the parser's header rather than emit records. */
#include "trace_text.h"
#include "trace_text_int.h"
#include "sim/base/util.h"
#include "models/vmx/exit_reason.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 16
#define CYCLES_MAX 0xffffffffu     /* record.cycles is a u32 */

int trace_text_syntax(struct trace_text_parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err, sizeof p->err, fmt, ap);
  va_end(ap);
  return EXIT_BADINPUT;
}

const char *trace_text_word(struct trace_text_parser *p, const char *tok, bool quoted, const char *noun) {
  if (p->hide_content)
    snprintf(p->shown, sizeof p->shown, "%s%sat column %zu", noun, *noun ? " " : "", (size_t)(tok - p->words) + 1);
  else
    snprintf(p->shown, sizeof p->shown, quoted ? "'%s'" : "%s", tok);
  return p->shown;
}

/* "drw N VALUE [%GPR] [+CYCLES]", for messages about missing or extra operands. */
static const char *usage_of(const struct mnemonic *m, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "%s", m->name);
  for (int i = 0; i < trace_text_n_ops(m) && len < n; i++)
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

/* Parses tok as a number in [lo, hi]; `who` and `what` name it in messages. */
int trace_text_number_in(struct trace_text_parser *p, const char *who, const char *what, const char *tok,
                         uint64_t lo, uint64_t hi, unsigned base, uint64_t *out) {
  switch (parse_number(tok, out)) {
  case NUM_JUNK:
    return trace_text_syntax(p, "%s: %s %s is not a number (decimal or 0x hex)", who, what,
                             trace_text_word(p, tok, true, ""));
  case NUM_OVERFLOW:
    return trace_text_syntax(p, "%s: %s %s does not fit in 64 bits", who, what, trace_text_word(p, tok, false, ""));
  }
  if (*out < lo && hi == U64)
    return trace_text_syntax(p, "%s: %s %s must be at least %llu", who, what, trace_text_word(p, tok, false, ""),
                             (unsigned long long)lo);
  if (*out < lo || *out > hi) {
    char a[24], b[24];
    trace_text_fmt_num(a, sizeof a, lo, base);
    trace_text_fmt_num(b, sizeof b, hi, base);
    return trace_text_syntax(p, "%s: %s %s out of range %s..%s", who, what, trace_text_word(p, tok, false, ""), a, b);
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

static int parse_reason(struct trace_text_parser *p, const struct mnemonic *m, const struct op *o, const char *tok,
                        struct trace_event *ev) {
  const char *who = m->name;
  int r = exit_reason_by_name(tok);
  uint64_t v;
  if (r >= 0) v = (uint64_t)r;
  else if (parse_number(tok, &v) != NUM_OK || v > 0xffff)
    return trace_text_syntax(p, "%s: exit reason %s is neither a name (CR_ACCESS, ...) nor a number 0..65535",
                             who, trace_text_word(p, tok, true, ""));
  if (m->type == EV_VMX && !exit_reason_is_vmx_instruction(v))
    return trace_text_syntax(p, "%s: exit reason %s is not a VMX instruction's (VMCLEAR..VMXON, INVEPT, INVVPID)",
                             who, trace_text_word(p, tok, true, ""));
  put_slot(ev, o->slot, v);
  return 0;
}

static bool label_byte_ok(unsigned char c) { return c > 0x20 && c != 0x7f && c != '#'; }

static int parse_label(struct trace_text_parser *p, const char *tok, struct trace_event *ev) {
  size_t len = strlen(tok);
  if (len > MARK_LABEL_MAX)
    return trace_text_syntax(p, "mark: label %s is %zu bytes, at most %d", trace_text_word(p, tok, true, ""), len,
                             MARK_LABEL_MAX);
  unsigned char bytes[MARK_LABEL_MAX] = { 0 };
  memcpy(bytes, tok, len);
  for (size_t i = 0; i < len; i++) {
    if (label_byte_ok(bytes[i])) continue;
    if (p->hide_content)
      return trace_text_syntax(p, "mark: label %s: its byte %zu is not allowed (printable, no '#')",
                               trace_text_word(p, tok, false, ""), i + 1);
    return trace_text_syntax(p, "mark: label byte 0x%02x is not allowed (printable, no '#')", bytes[i]);
  }
  for (int i = 0; i < 8; i++) {
    ev->a |= (uint64_t)bytes[i] << (8 * i);
    ev->b |= (uint64_t)bytes[8 + i] << (8 * i);
  }
  return 0;
}

static int parse_gpr(struct trace_text_parser *p, const char *who, const char *tok, struct trace_event *ev) {
  for (unsigned i = 0; tok[0] == '%' && i < 16; i++)
    if (strcmp(tok + 1, trace_text_gpr_names[i]) == 0) { ev->b = i; return 0; }
  return trace_text_syntax(p, "%s: register %s is not one of %%rax..%%r15", who, trace_text_word(p, tok, true, ""));
}

static int parse_word(struct trace_text_parser *p, const char *who, const struct op *o,
                      const char *tok, struct trace_event *ev) {
  if (o->w0 && strcmp(tok, o->w0) == 0) return 0;
  if (strcmp(tok, o->w1) == 0) {
    if (o->slot == TO_B) ev->b |= 1;
    else ev->aux |= 1;
    return 0;
  }
  const char *shown = trace_text_word(p, tok, true, "");
  if (!o->w0) return trace_text_syntax(p, "%s: %s %s is not '%s'", who, o->what, shown, o->w1);
  return trace_text_syntax(p, "%s: %s %s is not '%s' or '%s'", who, o->what, shown, o->w0, o->w1);
}

static int parse_op(struct trace_text_parser *p, const struct mnemonic *m, const struct op *o,
                    const char *tok, struct trace_event *ev) {
  uint64_t v;
  switch (o->kind) {
  case OP_GPR: return parse_gpr(p, m->name, tok, ev);
  case OP_WORD: return parse_word(p, m->name, o, tok, ev);
  case OP_LABEL: return parse_label(p, tok, ev);
  case OP_REASON: return parse_reason(p, m, o, tok, ev);
  case OP_IOSIZE:
    if (parse_number(tok, &v) != NUM_OK || (v != 1 && v != 2 && v != 4))
      return trace_text_syntax(p, "%s: size %s is not 1, 2 or 4", m->name, trace_text_word(p, tok, true, ""));
    ev->aux |= (uint8_t)(v << 1);
    return 0;
  }
  if (trace_text_number_in(p, m->name, o->what, tok, o->min, o->max, o->base, &v)) return EXIT_BADINPUT;
  put_slot(ev, o->slot, v);
  return 0;
}

/* A trailing "+N": the event's own native cycles. */
static int parse_cycles(struct trace_text_parser *p, const char *who, const char *tok, uint32_t *out) {
  uint64_t v;
  int rc = parse_number(tok + 1, &v);
  if (rc == NUM_JUNK)
    return trace_text_syntax(p, "%s: %s is not a cycle count (+N)", who, trace_text_word(p, tok, true, "the word"));
  if (rc == NUM_OVERFLOW || v > CYCLES_MAX)
    return trace_text_syntax(p, "%s: cycles %s out of range 0..%u", who, trace_text_word(p, tok + 1, false, ""),
                             CYCLES_MAX);
  *out = (uint32_t)v;
  return 0;
}

/* Splits off a trailing +N; a '+' token anywhere else is an error. */
static int take_cycles(struct trace_text_parser *p, const char *who, char **tok, int *ntok, uint32_t *cycles) {
  *cycles = 0;
  for (int i = 1; i < *ntok - 1; i++)
    if (tok[i][0] == '+')
      return trace_text_syntax(p, "%s: %s must come last", who, trace_text_word(p, tok[i], true, "the word"));
  if (*ntok > 1 && tok[*ntok - 1][0] == '+') {
    (*ntok)--;
    return parse_cycles(p, who, tok[*ntok], cycles);
  }
  return 0;
}

/* ---- records ---- */

static int emit_record(struct trace_text_parser *p, struct trace_event *ev, trace_text_emit_fn emit, void *ctx) {
  if (!p->header_done) {
    int rc = trace_text_header_end(p);
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
  const struct mnemonic *m = trace_text_mnemonic_by_name(tok[0]);
  if (!m) {
    size_t n = strlen(tok[0]);
    if (strncmp(tok[0], "cr", 2) == 0 && n > 2 && (tok[0][n - 1] == 'w' || tok[0][n - 1] == 'r'))
      return trace_text_syntax(p, "unknown event %s (control registers: cr0, cr3, cr4, cr8)",
                               trace_text_word(p, tok[0], true, ""));
    return trace_text_syntax(p, "unknown event %s", trace_text_word(p, tok[0], true, ""));
  }
  struct trace_event ev = blank_event(m->type);
  if (m->aux >= 0) ev.aux = (uint8_t)m->aux;
  if (take_cycles(p, m->name, tok, &ntok, &ev.cycles)) return EXIT_BADINPUT;
  if (m->type == EV_MEASURED && ev.cycles)
    return trace_text_syntax(p, "%s: takes no +CYCLES (a measured exit is no guest time)", m->name);
  char usage[96];
  int nops = trace_text_n_ops(m), i;
  for (i = 0; i < nops; i++) {
    if (i + 1 >= ntok) {
      if (m->ops[i].optional) break;
      return trace_text_syntax(p, "%s: missing %s (usage: %s)", m->name, m->ops[i].syntax,
                               usage_of(m, usage, sizeof usage));
    }
    if (parse_op(p, m, &m->ops[i], tok[i + 1], &ev)) return EXIT_BADINPUT;
  }
  if (ntok > nops + 1)
    return trace_text_syntax(p, "%s: unexpected %s (usage: %s)", m->name,
                             trace_text_word(p, tok[nops + 1], true, "word"), usage_of(m, usage, sizeof usage));
  return emit_record(p, &ev, emit, ctx);
}

/* run N: N cycles of native execution, split into records of at most 2^32-1.
** N is bounded (2^48 cycles, over a day at 3 GHz) so that a typo cannot make
** billions of records. */
#define RUN_CYCLES_MAX (1ull << 48)
static int parse_run(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx) {
  uint64_t n;
  if (ntok < 2) return trace_text_syntax(p, "run: missing CYCLES (usage: run CYCLES)");
  if (tok[1][0] == '+' || (ntok > 2 && tok[2][0] == '+'))
    return trace_text_syntax(p, "run: takes no +CYCLES; its operand is the cycle count (usage: run CYCLES)");
  if (ntok > 2)
    return trace_text_syntax(p, "run: unexpected %s (usage: run CYCLES)", trace_text_word(p, tok[2], true, "word"));
  if (trace_text_number_in(p, "run", "cycle count", tok[1], 0, RUN_CYCLES_MAX, 10, &n)) return EXIT_BADINPUT;
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
    return trace_text_syntax(p, "raw: expects 4 operands, got %d (usage: raw TYPE AUX A B [+CYCLES])", ntok - 1);
  int t = event_type_from_mnemonic(tok[1]);
  if (t >= 0) type = (uint64_t)t;
  else if (parse_number(tok[1], &type) != NUM_OK || type >= EV_COUNT)
    return trace_text_syntax(p, "raw: unknown event type %s (a type mnemonic such as crw, or 0..%d)",
                             trace_text_word(p, tok[1], true, ""), EV_COUNT - 1);
  if (trace_text_number_in(p, "raw", "aux", tok[2], 0, 255, 16, &aux) ||
      trace_text_number_in(p, "raw", "operand a", tok[3], 0, U64, 16, &ev.a) ||
      trace_text_number_in(p, "raw", "operand b", tok[4], 0, U64, 16, &ev.b))
    return EXIT_BADINPUT;
  ev.type = (uint8_t)type;
  ev.aux = (uint8_t)aux;
  return emit_record(p, &ev, emit, ctx);
}

/* vcpu N: the following records run on vCPU N. */
static int parse_vcpu(struct trace_text_parser *p, char **tok, int ntok) {
  uint64_t v;
  if (ntok < 2) return trace_text_syntax(p, "vcpu: missing N (usage: vcpu N)");
  if (ntok > 2)
    return trace_text_syntax(p, "vcpu: unexpected %s (usage: vcpu N)", trace_text_word(p, tok[2], true, "word"));
  if (trace_text_number_in(p, "vcpu", "vCPU", tok[1], 0, TRACE_VCPU_MAX - 1, 10, &v)) return EXIT_BADINPUT;
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
    return trace_text_syntax(p, "@init: expected crN=VALUE or vcpu=N, got %s",
                             trace_text_word(p, key, true, "the word"));
  if (strlen(key) != 3 || !cr_number_ok(cr = (unsigned)(key[2] - '0')))
    return trace_text_syntax(p, "@init: control register %s is not one of cr0, cr3, cr4, cr8",
                             trace_text_word(p, key, true, ""));
  if (*crs & (1u << cr)) return trace_text_syntax(p, "@init: %s given twice", key);
  *crs |= 1u << cr;
  char what[16];
  snprintf(what, sizeof what, "%s value", key);
  *ev = blank_event(EV_INIT);
  ev->aux = (uint8_t)cr;
  return trace_text_number_in(p, "@init", what, val, 0, cr == 8 ? 0xf : U64, 16, &ev->a) ? EXIT_BADINPUT : 0;
}

/* @init [vcpu=N] crN=VALUE...: one EV_INIT record per register, in line order. */
int trace_text_parse_init(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx) {
  struct trace_event regs[4];
  unsigned crs = 0, vcpu = p->vcpu;
  int n = 0;
  bool have_vcpu = false;
  for (int i = 1; i < ntok; i++) {
    char *eq = strchr(tok[i], '=');
    if (!eq)
      return trace_text_syntax(p, "@init: expected crN=VALUE or vcpu=N, got %s",
                               trace_text_word(p, tok[i], true, "the word"));
    *eq = 0;
    if (strcmp(tok[i], "vcpu") == 0) {
      uint64_t v;
      if (have_vcpu) return trace_text_syntax(p, "@init: vcpu given twice");
      if (trace_text_number_in(p, "@init", "vCPU", eq + 1, 0, TRACE_VCPU_MAX - 1, 10, &v)) return EXIT_BADINPUT;
      vcpu = (unsigned)v;
      have_vcpu = true;
    } else if (n == 4) {
      return trace_text_syntax(p, "@init: more than 4 registers");   /* unreachable: duplicates are refused */
    } else if (parse_init_reg(p, tok[i], eq + 1, &crs, &regs[n++])) {
      return EXIT_BADINPUT;
    }
  }
  if (n == 0) return trace_text_syntax(p, "@init: no registers (usage: @init [vcpu=N] crN=VALUE...)");
  for (int i = 0; i < n; i++) {
    regs[i].vcpu = (uint16_t)vcpu;
    int rc = emit_record(p, &regs[i], emit, ctx);
    if (rc) return rc;
  }
  return 0;
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

/* A line split into words (the words of text, a copy of the line without
** its comment): a directive, `vcpu`, `run`, `raw` or an event. */
static int parse_words(struct trace_text_parser *p, const char *text, const char *words, char **tok, int ntok,
                       trace_text_emit_fn emit, void *ctx) {
  if (tok[0][0] == '@') {
    const char *rest = ntok > 1 ? text + (tok[1] - words) : "";
    return trace_text_parse_directive(p, tok, ntok, rest, emit, ctx);
  }
  if (strcmp(tok[0], "vcpu") == 0) return parse_vcpu(p, tok, ntok);
  if (strcmp(tok[0], "run") == 0) return parse_run(p, tok, ntok, emit, ctx);
  if (strcmp(tok[0], "raw") == 0) return parse_raw(p, tok, ntok, emit, ctx);
  return parse_event(p, tok, ntok, emit, ctx);
}

int trace_text_parse_line(struct trace_text_parser *p, const char *line, trace_text_emit_fn emit, void *ctx) {
  p->line++;
  p->err_line = p->line;
  p->err[0] = 0;
  size_t len = strlen(line);
  if (len && line[len - 1] == '\n') len--;
  if (len && line[len - 1] == '\r') len--;
  const char *meta = meta_text(line);
  if (meta) return trace_text_parse_meta(p, meta, len - (size_t)(meta - line));
  if (len > TEXT_LINE_MAX)
    return trace_text_syntax(p, "line of %zu bytes exceeds the %d-byte limit", len, TEXT_LINE_MAX);

  char text[TEXT_LINE_MAX + 1], words[TEXT_LINE_MAX + 1], *tok[MAX_TOKENS];
  memcpy(text, line, len);
  text[len] = 0;
  text[strcspn(text, "#")] = 0;                 /* comment */
  len = strlen(text);
  while (len && is_space(text[len - 1])) text[--len] = 0;
  memcpy(words, text, len + 1);
  int ntok = tokenize(words, tok);
  if (ntok < 0) return trace_text_syntax(p, "too many tokens (at most %d)", MAX_TOKENS);
  if (ntok == 0) return 0;
  p->words = words;                             /* for trace_text_word, while the line is parsed */
  int rc = parse_words(p, text, words, tok, ntok, emit, ctx);
  p->words = NULL;
  return rc;
}

int trace_text_parse_end(struct trace_text_parser *p) {
  p->err[0] = 0;
  p->err_line = p->line;
  return p->header_done ? 0 : trace_text_header_end(p);
}
