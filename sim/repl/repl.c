/* `vmxsim repl`: the interactive loop, its input (GNU Readline on a terminal, plain fgets otherwise) and Ctrl-C. */
#include "repl.h"
#include "sim/store/store.h"
#include "sim/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

static const char repl_usage[] =
  "usage: vmxsim repl TRACE [--policy P] [--cpu C] [--set KEY=VALUE]... [--batch FILE]\n"
  "                         [--db FILE] [--echo]\n"
  "\n"
  "Steps through TRACE event by event under a hypervisor policy: breakpoints on exit\n"
  "reasons, event types, indices, CR3 values and marks; the VMCS, guest registers and\n"
  "shadow MMU at any point; why each event exited or not.  Type 'help' inside.\n"
  "\n"
  "  -p, --policy P      policy preset(s) joined with '+' (default " POLICY_DEFAULT ", as for 'run')\n"
  "  -c, --cpu C         CPU cost profile (default " PROFILE_DEFAULT ")\n"
  "  -s, --set K=V       override one policy knob (repeatable)\n"
  "  -b, --batch FILE    run the commands in FILE and exit ('-' for stdin)\n"
  "      --db FILE       results database for 'save' (default " STORE_DEFAULT_PATH ")\n"
  "      --echo          print each command read from a script before its output\n"
  "\n"
  "On a terminal commands are read with GNU Readline (Tab completes commands, VMCS\n"
  "fields, exit reasons, event types, policies and knobs; history in ~/.vmxsim_history).\n"
  "Otherwise they are read line by line without prompts.  A script whose commands\n"
  "reported errors exits with 3.\n"
  "\n"
  "example: vmxsim repl lat_ctx.bin --policy cr3cache\n"
  "         vmxsim repl basic.bin --batch session.cmd\n";

/* Where commands come from. */
struct input {
  FILE *f;                         /* the script or stdin (not read through f when tty) */
  bool tty;                        /* an interactive terminal: use readline */
  bool batch;                      /* --batch: blank lines are skipped, not repeats */
  size_t nul;                      /* plain input: column of a NUL byte in the last line, 0 if none */
  char hist[4096];                 /* history file, "" when $HOME is unset */
};

/* ---- readline, used only when stdin is a terminal ---- */

static char *tty_got;               /* the line tty_take received (NULL at EOF) */
static bool tty_done;

static void tty_take(char *line) {
  tty_got = line;
  tty_done = true;
  rl_callback_handler_remove();
}

/* Ctrl-C at the prompt: abandon the line being edited and prompt again. */
static void tty_drop_line(void) {
  rl_free_line_state();
  rl_crlf();
  rl_replace_line("", 0);
  rl_on_new_line();
  rl_redisplay();
}

/* Reads a line with the callback interface, so that we, not readline's own
** handler, decide what Ctrl-C does.  SIGINT stays blocked except inside
** pselect(), so a Ctrl-C can neither slip in between the check of the flag
** and the wait nor interrupt readline halfway through a key. */
static char *tty_read(void) {
  int fd = fileno(rl_instream ? rl_instream : stdin);
  sigset_t block, orig;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &orig);
  interrupt_clear();               /* a Ctrl-C during the last command is spent */
  tty_got = NULL;
  tty_done = false;
  rl_callback_handler_install(REPL_PROMPT, tty_take);
  while (!tty_done) {
    if (interrupt_requested()) { interrupt_clear(); tty_drop_line(); }
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    if (pselect(fd + 1, &fds, NULL, NULL, NULL, &orig) < 0) {
      if (errno == EINTR) continue;
      rl_callback_handler_remove();
      break;
    }
    rl_callback_read_char();
  }
  sigprocmask(SIG_SETMASK, &orig, NULL);
  return tty_got;
}

static void tty_open(struct input *in, struct repl *s) {
  rl_readline_name = "vmxsim";
  rl_catch_signals = 0;
  repl_complete_install();
  using_history();
  stifle_history(1000);
  const char *home = getenv("HOME");
  if (!home || !*home) return;     /* history for this session only */
  snprintf(in->hist, sizeof in->hist, "%s/.vmxsim_history", home);
  read_history(in->hist);          /* a missing file is the normal first run */
  for (int i = 0; i < history_length; i++) {   /* `history` numbers them as Up recalls them */
    HIST_ENTRY *h = history_get(history_base + i);
    if (h) repl_history_add(s, h->line);
  }
}

static void tty_remember(const char *line) {
  if (!line[strspn(line, " \t")]) return;
  HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
  if (!last || strcmp(last->line, line)) add_history(line);
}

static void tty_close(struct input *in) {
  int e = in->hist[0] ? write_history(in->hist) : 0;   /* returns an errno value */
  if (e) errorf("cannot write history to %s: %s", in->hist, strerror(e));
  clear_history();
}

/* ---- plain input: scripts, pipes, --batch ---- */

/* The next line without its newline (caller frees), or NULL at the end; in->nul
** is set when it holds a NUL byte.  A Ctrl-C while a script waits for input
** ends the session. */
static char *plain_read(struct input *in) {
  char *buf = NULL;
  size_t cap = 0;
  ssize_t got = getline(&buf, &cap, in->f);
  if (got < 0) {
    free(buf);
    return NULL;
  }
  size_t len = (size_t)got;
  const char *nul = memchr(buf, 0, len);
  in->nul = nul ? (size_t)(nul - buf) + 1 : 0;
  while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = 0;
  return buf;
}

static char *read_line(struct input *in) {
  return in->tty ? tty_read() : plain_read(in);
}

/* ---- the loop ---- */

static bool blank(const char *line) { return !line[strspn(line, " \t")]; }

static void banner(const struct repl *s) {
  const char *paging = paging_name(s->r.hdr.paging);
  printf("vmxsim repl: %s (%s%s%" PRIu64 " events, %u vCPU%s, %s-bit paging), policy %s, cpu %s\n",
         s->trace_path, s->r.hdr.workload, s->r.hdr.workload[0] ? ", " : "", s->r.hdr.event_count,
         s->r.hdr.vcpu_count, s->r.hdr.vcpu_count == 1 ? "" : "s", paging ? paging : "?",
         s->pol->name, s->prof.name);
  printf("Type 'help' for commands, Tab to complete, Ctrl-D to leave.\n");
}

/* Runs commands until `quit` or the end of input. */
static void loop(struct repl *s, struct input *in) {
  char *line;
  while (!s->quit && (line = read_line(in)) != NULL) {
    s->line++;
    if (in->tty) tty_remember(line);
    if (!blank(line) && line[strspn(line, " \t")] != '#' && !(!in->tty && in->nul)) repl_history_add(s, line);
    if (s->echo && !in->tty) printf(REPL_PROMPT "%s\n", line);
    if (!in->tty && in->nul) {
      repl_error(s, "NUL byte at column %zu (the line is not run)", in->nul);   /* of a binary file? */
    } else if (!blank(line)) {
      repl_execute(s, line);
    } else if (!in->batch && s->repeat[0]) {
      char again[sizeof s->repeat];
      memcpy(again, s->repeat, sizeof again);
      repl_execute(s, again);
    }
    free(line);
  }
  if (in->tty && !s->quit) printf("\n");   /* Ctrl-D: leave the shell prompt on its own line */
  fflush(stdout);
}

/* ---- options and entry point ---- */

static int parse_opts(int argc, char **argv, struct repl *s, const char **batch) {
  static const struct option longopts[] = {
    { "policy", required_argument, 0, 'p' }, { "cpu", required_argument, 0, 'c' },
    { "set", required_argument, 0, 's' },    { "batch", required_argument, 0, 'b' },
    { "db", required_argument, 0, 'D' },     { "echo", no_argument, 0, 'E' },
    { "help", no_argument, 0, 'h' },         { 0, 0, 0, 0 } };
  const char *policy = POLICY_DEFAULT;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "p:c:s:b:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'p': policy = optarg; break;
    case 'c': s->cpu = optarg; break;
    case 's':
      if (s->nsets == REPL_MAX_SETS) { errorf("too many --set options (max %d)", REPL_MAX_SETS); return EXIT_USAGE; }
      s->sets[s->nsets++] = xstrdup(optarg);
      break;
    case 'b': *batch = optarg; break;
    case 'D': s->db = optarg; break;
    case 'E': s->echo = true; break;
    case 'h': fputs(repl_usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim repl --help'", argv[optind - 1]);
      return EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    errorf(optind >= argc ? "repl: no trace given; see 'vmxsim repl --help'"
                          : "repl: one trace expected; see 'vmxsim repl --help'");
    return EXIT_USAGE;
  }
  s->trace_path = argv[optind];
  s->spec = xstrdup(policy);
  return EXIT_OK;
}

/* Opens the command source: the --batch file, or stdin (a terminal or not). */
static int open_input(struct input *in, const char *batch, struct repl *s) {
  memset(in, 0, sizeof *in);
  in->f = stdin;
  if (batch) {
    in->batch = true;
    s->src = strcmp(batch, "-") ? batch : "<stdin>";
    if (strcmp(batch, "-") && !(in->f = fopen(batch, "r"))) {
      errorf("%s: %s", batch, strerror(errno));
      return EXIT_BADINPUT;
    }
    return EXIT_OK;
  }
  in->tty = isatty(STDIN_FILENO);
  if (in->tty) tty_open(in, s);
  return EXIT_OK;
}

static void close_input(struct input *in) {
  if (in->tty) tty_close(in);
  if (in->f && in->f != stdin) fclose(in->f);
}

int cmd_repl(int argc, char **argv) {
  struct repl *s = xcalloc(1, sizeof *s);
  const char *batch = NULL;
  s->cpu = PROFILE_DEFAULT;
  s->db = STORE_DEFAULT_PATH;
  int rc = parse_opts(argc, argv, s, &batch);
  if (!rc) rc = repl_open(s);
  struct input in = { 0 };
  if (!rc) rc = open_input(&in, batch, s);
  if (!rc) {
    struct interrupt_catch ic;
    interrupt_catch(&ic, false);   /* Ctrl-C stops a replay or drops the line being edited */
    if (in.tty) banner(s);
    loop(s, &in);
    interrupt_release(&ic);
    close_input(&in);
    rc = s->errors && !in.tty ? EXIT_BADINPUT : EXIT_OK;
  }
  repl_close(s);
  free(s);
  return rc < 0 ? EXIT_OK : rc;
}
