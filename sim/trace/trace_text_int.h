/*
** What the files of the text form's syntax share: the operand descriptions
** the syntax table (trace_text.c) is made of, which the parser
** (trace_text_parse.c) reads operands by and the formatter prints them by, and
** the helpers that cross trace_text.c, trace_text_parse.c and
** trace_text_header.c.  Private to those three; the printer and the assembler
** use only trace_text.h.
*/
#ifndef VMXSIM_TRACE_TEXT_INT_H
#define VMXSIM_TRACE_TEXT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace_text.h"

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

/* The table's (trace_text.c). */
const struct mnemonic *trace_text_mnemonic_by_name(const char *name);   /* NULL when unknown */
int trace_text_n_ops(const struct mnemonic *m);
extern const char *const trace_text_gpr_names[16];
/* In the base an operand is written in, so range messages read like the input. */
void trace_text_fmt_num(char *buf, size_t n, uint64_t v, unsigned base);

/* The line parser's (trace_text_parse.c). */
/* Sets p->err and returns EXIT_BADINPUT, so that a refusal is one return. */
int trace_text_syntax(struct trace_text_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int trace_text_number_in(struct trace_text_parser *p, const char *who, const char *what, const char *tok,
                         uint64_t lo, uint64_t hi, unsigned base, uint64_t *out);
/* A word of the line being parsed (tok points into p->words) as a message
** shows it: 'tok' (quoted) or tok, or, when the text is not to be shown
** (p->hide_content), "NOUN at column N" ("at column N" for noun "").  Valid
** until the next call: one word per message. */
const char *trace_text_word(struct trace_text_parser *p, const char *tok, bool quoted, const char *noun);
/* @init emits records, so it lives with the record lines, though a directive names it. */
int trace_text_parse_init(struct trace_text_parser *p, char **tok, int ntok, trace_text_emit_fn emit, void *ctx);

/* The header's (trace_text_header.c). */
int trace_text_parse_meta(struct trace_text_parser *p, const char *rest, size_t len);
/* The first record ends the header, so the metadata is checked first. */
int trace_text_header_end(struct trace_text_parser *p);
/* Every @ line but @meta, which the line parser hands over untokenized. */
int trace_text_parse_directive(struct trace_text_parser *p, char **tok, int ntok, const char *rest,
                               trace_text_emit_fn emit, void *ctx);

#endif
