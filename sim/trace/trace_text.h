/* The text form of traces: a line parser (for `trace asm`) and a canonical printer (for `trace dump`). */
#ifndef VMXSIM_TRACE_TEXT_H
#define VMXSIM_TRACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "models/event.h"
#include "trace.h"

/*
** The syntax is specified in traces/FORMAT.md.  In short: one event per line,
** `# comment`, numbers decimal or 0x hex, header directives (@workload,
** @paging, @vcpus, @meta) before the first event, `vcpu N` to switch vCPU,
** `@init crN=V ...` for initial register state, and `raw TYPE AUX A B` for
** records that have no canonical mnemonic form.
**
** Ownership: the parser owns metadata until trace_text_parser_free().
*/

#define TEXT_LINE_MAX 1024          /* bytes, for every line except @meta */

/* Receives each record the parser produces.  A nonzero return (an enum
** exit_code) stops the parse and is returned by trace_text_parse_line(). */
typedef int (*trace_text_emit_fn)(void *ctx, const struct trace_event *ev);

struct trace_text_parser {
  /* Header, from the directives; final once the first record is emitted. */
  unsigned paging;                  /* enum paging_mode; PAGING_64 unless @paging */
  unsigned vcpus;                   /* @vcpus N (minimum header vCPU count), 0 if absent */
  char workload[TRACE_WORKLOAD_MAX + 1];
  char *metadata;                   /* @meta lines joined with '\n'; NULL when none */
  size_t metadata_len;

  /* Parse position and state. */
  unsigned long line;               /* 1-based number of the line last parsed */
  unsigned vcpu;                    /* vCPU of the following records (`vcpu N`) */
  bool header_done;                 /* first record seen: directives now refused */
  unsigned seen;                    /* header directives given (bit per directive) */

  /* Where each @meta line starts in metadata, to report JSON errors by line. */
  unsigned long *meta_line;
  size_t *meta_off;
  size_t meta_count, meta_cap, metadata_cap;

  unsigned long err_line;           /* line the message in err refers to */
  char err[256];                    /* "what is wrong", without FILE:LINE */

  /* Messages name a word of the text by its column instead of quoting it,
  ** and quote nothing else of it either: for a text that is not the user's
  ** own choice (INPUT_HIDE_CONTENT, sim/base/util.h).  false after init. */
  bool hide_content;
  const char *words;                /* the line being parsed, split into words (for their columns) */
  char shown[256];                  /* a word as the message being written shows it */
};

void trace_text_parser_init(struct trace_text_parser *p);
void trace_text_parser_free(struct trace_text_parser *p);

/* Parses the next line (a trailing "\n" or "\r\n" is ignored) and hands each
** record it yields to emit(ctx, ev).  Before the first record the header is
** validated (the @meta JSON), so emit may create the output file from
** p->paging, p->vcpus, p->workload and p->metadata.
** Returns 0, EXIT_BADINPUT for a syntax error (the message in p->err, its
** line in p->err_line; the parser lives across lines, so it keeps them) or
** emit's nonzero return (p->err left empty). */
int trace_text_parse_line(struct trace_text_parser *p, const char *line,
                          trace_text_emit_fn emit, void *ctx);

/* Call at end of input: validates the header if no record did.
** Returns 0 or EXIT_BADINPUT (see p->err). */
int trace_text_parse_end(struct trace_text_parser *p);

/* Assembles the text trace `in` ("-": standard input) into the binary trace
** `out`, written atomically (sim/base/outfile.h): `vmxsim trace asm`.
** Returns 0, or EXIT_BADINPUT with "FILE:LINE: what" (or "FILE: what") in err. */
int trace_text_assemble(const char *in, const char *out, char *err, size_t errlen);
/* trace_text_assemble, the input read as flags say (enum input_flags,
** util.h): with INPUT_HIDE_CONTENT no message quotes it, with
** INPUT_REGULAR_ONLY only a regular file is read. */
int trace_text_assemble_flags(const char *in, const char *out, unsigned flags, char *err, size_t errlen);

/* Canonical text of one record, without a vCPU and without a newline: e.g.
** "cr3w 0x1000 %rbx +20", "@init cr3=0x1000".  A record that has no
** canonical form (an out-of-range operand, bits in unused fields) becomes a
** `raw` line, so every valid record survives dump and asm unchanged.
** Returns the length as snprintf() does (the line always fits in 128 bytes). */
int trace_text_format(const struct trace_event *ev, char *buf, size_t n);

/* Prints a record stream as text: consecutive @init records of one vCPU share
** one `@init` line, and `vcpu N` lines appear only where the vCPU changes.
** Write errors are left for the caller to find with ferror(out). */
struct trace_text_printer {
  FILE *out;
  unsigned vcpu;                    /* vCPU that unmarked lines run on */
  int init_vcpu;                    /* vCPU of the @init line being built, -1 when none */
  unsigned init_crs;                /* bit per CR already on that line */
  char init[160];                   /* the @init line being built */
};

void trace_text_printer_init(struct trace_text_printer *pr, FILE *out);
/* The header directives: @workload (if any), @paging, @vcpus, @meta (if any). */
void trace_text_print_header(struct trace_text_printer *pr, const struct trace_header *h);
void trace_text_print(struct trace_text_printer *pr, const struct trace_event *ev);
/* Writes the pending @init line, if any; call after the last record. */
void trace_text_print_end(struct trace_text_printer *pr);

#endif
