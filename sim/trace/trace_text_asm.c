/* The assembler of `vmxsim trace asm`: a text file, line by line through the
** parser, into a binary trace written atomically.  A driver over the public
** parser API (trace_text.h), apart from it so that the parser stays free of
** files and writers (the unit tests and fuzz harnesses feed it strings). */
#include "trace_text.h"
#include "sim/base/outfile.h"
#include "sim/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The writer failed with rc (EXIT_IO: the output, not the input): its message goes to err. */
static int asm_fail(struct assembler *as, const char *msg, int rc) {
  snprintf(as->err, as->errlen, "%s", msg);
  as->failed = true;
  return rc;
}

static int asm_open(struct assembler *as) {
  struct trace_text_parser *p = &as->p;
  int rc = as->to_stdout ? trace_create_stdout(&as->w, p->workload, p->vcpus ? p->vcpus : 1, p->paging, p->metadata,
                                               TRACE_COUNT_UNKNOWN)
                         : trace_create(&as->w, outfile_path(&as->out), p->workload, p->vcpus ? p->vcpus : 1,
                                        p->paging, p->metadata);
  if (rc != EXIT_OK) return asm_fail(as, as->w.err, rc);
  if (!as->to_stdout) trace_set_label(&as->w, as->out.target);
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
  int rc = trace_write(&as->w, ev);
  return rc == EXIT_OK ? 0 : asm_fail(as, as->w.err, rc);
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
    else if ((rc = trace_finish(&as->w)) != EXIT_OK) rc = asm_fail(as, as->w.err, rc);
  }
  if (as->to_stdout) return rc;
  if (rc) {
    outfile_discard(&as->out);
    return rc;
  }
  return outfile_commit(&as->out, as->err, as->errlen);
}

int trace_text_assemble(const char *in, const char *out, char *err, size_t errlen) {
  return trace_text_assemble_flags(in, out, 0, err, errlen);
}

/* The input as a stream: standard input for "-", else the file opened as flags say; NULL with err set. */
static FILE *open_text(const char *in, unsigned flags, char *err, size_t errlen) {
  if (strcmp(in, "-") == 0) return stdin;
  int fd = input_open(in, flags, err, errlen);
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (fd >= 0 && !f) {
    snprintf(err, errlen, "%s: %s", in, strerror(errno));
    close(fd);
  }
  return f;
}

int trace_text_assemble_flags(const char *in, const char *out, unsigned flags, char *err, size_t errlen) {
  bool is_stdin = strcmp(in, "-") == 0;
  FILE *f = open_text(in, flags, err, errlen);
  if (!f) return EXIT_BADINPUT;
  struct assembler as = { .open = false, .err = err, .errlen = errlen, .to_stdout = !strcmp(out, "-") };
  trace_text_parser_init(&as.p);
  as.p.hide_content = flags & INPUT_HIDE_CONTENT;
  int rc = as.to_stdout ? 0 : outfile_begin(&as.out, out, OUTFILE_REGULAR, err, errlen);
  if (rc == 0) rc = asm_file(&as, f, is_stdin ? "<stdin>" : in);
  trace_text_parser_free(&as.p);
  if (!is_stdin) fclose(f);
  return rc;
}
