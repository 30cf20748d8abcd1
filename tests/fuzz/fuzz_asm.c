/* libFuzzer harness: the text form of traces (sim/trace/trace_text_parse.c and
** trace_text_header.c), as `vmxsim trace asm` parses it.
**
** The input is split into lines as the assembler splits them, and each line
** goes to the parser as a string of exactly its own length.  A refused text
** must name the line (err_line within the text) and say what is wrong; an
** accepted one is written as a binary trace, which the trace reader must then
** read back record for record: what `trace asm` writes, `vmxsim` replays.
** (A record with impossible operands, which `raw` can spell, is refused at
** its line, as the assembler refuses it: tests/cli/t_trace.sh.)  The text
** is parsed again as a regression case's trace (hide_content): refused the
** same way at the same line, its message quoting no word of the line that
** the shown message quotes. */
#include "fuzz.h"
#include "sim/trace/trace.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"

#define RECORDS_MAX 4096

struct records { struct trace_event ev[RECORDS_MAX]; size_t n; struct trace_text_parser *p; };
static struct records recs;

/* Keeps a record; one that `trace asm` refuses (impossible operands, spelt
** with `raw`) is refused the way the assembler refuses it: bad input at its
** line (sim/trace/trace_text_asm.c, asm_emit). */
static int keep(void *ctx, const struct trace_event *ev) {
  struct records *r = ctx;
  if (r->n == RECORDS_MAX) return EXIT_USAGE;     /* the harness's own bound, not an error */
  const char *why = event_invalid(ev);
  if (why) {
    snprintf(r->p->err, sizeof r->p->err, "%s record not valid: %s", event_mnemonic(ev->type), why);
    r->p->err_line = r->p->line;
    return EXIT_BADINPUT;
  }
  r->ev[r->n++] = *ev;
  return 0;
}

static int parse_all(struct trace_text_parser *p, const uint8_t *data, size_t size, unsigned long *lines) {
  size_t at = 0;
  *lines = 0;
  while (at < size) {
    const uint8_t *nl = memchr(data + at, '\n', size - at);
    size_t len = nl ? (size_t)(nl - (data + at)) + 1 : size - at;
    if (memchr(data + at, 0, len)) return -1;    /* the assembler refuses NUL bytes before the parser */
    char *line = fuzz_copy(data + at, len);
    int rc = trace_text_parse_line(p, line, keep, &recs);
    free(line);
    ++*lines;
    if (rc) return rc;
    at += len;
  }
  return trace_text_parse_end(p);
}

/* What the assembler would write reads back as the same records. */
static void write_and_read(const struct trace_text_parser *p) {
  const char *path = fuzz_path("asm.bin");
  struct trace_writer w;
  if (trace_create(&w, path, p->workload, p->vcpus ? p->vcpus : 1, p->paging, p->metadata) != 0) {
    fprintf(stderr, "writer refused the parsed header: %s\n", w.err);
    abort();
  }
  for (size_t i = 0; i < recs.n; i++)
    if (trace_write(&w, &recs.ev[i]) != 0) { fprintf(stderr, "writer: %s\n", w.err); abort(); }
  if (trace_finish(&w) != 0) { fprintf(stderr, "writer: %s\n", w.err); abort(); }
  struct trace_reader r;
  if (trace_open(&r, path) != 0) { fprintf(stderr, "assembled trace refused: %s\n", r.err); abort(); }
  size_t i = 0;
  const struct trace_event *ev;
  while ((ev = trace_next(&r))) {
    if (i >= recs.n || memcmp(ev, &recs.ev[i], sizeof *ev) != 0) {
      fprintf(stderr, "record %zu reads back different\n", i);
      abort();
    }
    i++;
  }
  if (trace_failed(&r) || i != recs.n) {
    fprintf(stderr, "assembled trace: %zu of %zu records read back: %s\n", i, recs.n, r.err);
    abort();
  }
  trace_close(&r);
  unlink(path);
}

/* The same text with its words hidden: refused alike, at the same line,
** with a message of printable ASCII (all the syntax's words are; a byte
** outside it can only be the text's) that names a column where the shown
** message differs (it quoted a word there). */
static void check_hidden(const uint8_t *data, size_t size, int rc, const struct trace_text_parser *shown) {
  struct trace_text_parser p;
  unsigned long lines;
  trace_text_parser_init(&p);
  p.hide_content = true;
  recs.n = 0;
  recs.p = &p;
  int hidden_rc = parse_all(&p, data, size, &lines);
  bool ascii = true;
  for (const char *c = p.err; *c; c++) ascii &= *c >= 0x20 && *c < 0x7f;
  bool named = !strcmp(p.err, shown->err) || strstr(p.err, "column");
  if (hidden_rc != rc || p.err_line != shown->err_line || (rc == EXIT_BADINPUT && (!p.err[0] || !ascii || !named))) {
    fprintf(stderr, "hidden: exit code %d at line %lu '%s'; shown: %d at line %lu '%s'\n", hidden_rc, p.err_line,
            p.err, rc, shown->err_line, shown->err);
    abort();
  }
  trace_text_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct trace_text_parser p;
  unsigned long lines;
  trace_text_parser_init(&p);
  recs.n = 0;
  recs.p = &p;
  int rc = parse_all(&p, data, size, &lines);
  if (rc == EXIT_BADINPUT) {
    if (!p.err[0] || p.err_line == 0 || p.err_line > lines + 1) {
      fprintf(stderr, "refused at line %lu of %lu with message '%s'\n", p.err_line, lines, p.err);
      abort();
    }
  } else if (rc == 0) {
    write_and_read(&p);
  } else if (rc != -1 && !(rc == EXIT_USAGE && recs.n == RECORDS_MAX)) {
    fprintf(stderr, "parser returned %d\n", rc);
    abort();
  }
  if (rc != -1) check_hidden(data, size, rc, &p);
  trace_text_parser_free(&p);
  return 0;
}
