/* libFuzzer harness: REPL command lines (sim/repl/repl_cmds.c and the
** command files beside it), as a `--batch` file gives them.  Each input line
** (at most 64; exactly its own bytes plus the NUL) is one command, run on a
** session over the small trace of fuzz_replay.h; a command returns 0 or -1
** after printing its error, and a `quit` ends the input.  `save` writes the
** results database, which the store's own tests cover: it is left out so
** that an execution stays cheap. */
#include "fuzz_replay.h"
#include "sim/repl/repl.h"
#include <ctype.h>

#define LINES_MAX 64

/* The line's first word is `save` (blanks as the command splitter takes them: isspace). */
static bool is_save(const char *line) {
  while (*line && isspace((unsigned char)*line)) line++;
  return !strncmp(line, "save", 4) && (!line[4] || isspace((unsigned char)line[4]));
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc; (void)argv;
  fuzz_quiet();
  fuzz_small_trace();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_names_special_files(data, size) || memchr(data, 0, size)) return 0;
  struct repl *s = xcalloc(1, sizeof *s);
  s->trace_path = fuzz_small_trace();
  s->cpu = PROFILE_DEFAULT;
  s->db = fuzz_path("repl.db");
  s->spec = xstrdup("shadowcache+lazydr");
  s->src = "fuzz";
  if (repl_open(s) != 0) { fprintf(stderr, "the session does not open\n"); abort(); }
  size_t at = 0;
  for (unsigned n = 0; n < LINES_MAX && at < size && !s->quit; n++) {
    const uint8_t *nl = memchr(data + at, '\n', size - at);
    size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
    char *line = fuzz_copy(data + at, len);
    s->line++;
    if (!is_save(line)) {
      repl_history_add(s, line);
      int rc = repl_execute(s, line);
      if (rc != 0 && rc != -1) { fprintf(stderr, "command returned %d\n", rc); abort(); }
    }
    free(line);
    at += len + (nl != NULL);
  }
  repl_close(s);
  free(s);
  return 0;
}
