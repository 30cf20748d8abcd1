/* Internals shared by the REPL's files: the session state (repl.c owns the
** loop, input and signals; repl_cmds.c the command table and the running of
** a command line; repl_session.c, repl_step.c, repl_break.c and repl_show.c
** the commands, by job, with repl_int.h between them; repl_complete.c
** readline completion).
**
** Ownership: a struct repl owns everything its pointers point to, except
** trace_path, cpu and db, which point into argv.
*/
#ifndef VMXSIM_REPL_H
#define VMXSIM_REPL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "sim/replay/engine.h"

#define REPL_MAX_SETS 64           /* --set / `set` overrides */
#define REPL_MAX_BP   64           /* breakpoints alive at once */
#define REPL_PROMPT   "vmxsim> "
#define REPL_HISTORY_SHOWN 20     /* `history` without N lists this many */

/* What a breakpoint matches; it is checked after each replayed event. */
enum repl_bp_kind {
  BP_EXIT,                         /* value = exit reason the event caused */
  BP_EVENT,                        /* value = event type, aux = CR number or -1 */
  BP_AT,                           /* value = event index */
  BP_CR3,                          /* value = guest CR3 written */
  BP_MARK,                         /* label = mark label, "" for any */
};

struct repl_bp {
  unsigned id;                     /* shown to the user, never reused */
  enum repl_bp_kind kind;
  uint64_t value;
  int aux;
  char label[MARK_LABEL_MAX + 1];
  uint64_t hits;
};

struct repl {
  /* Configuration. */
  const char *trace_path;          /* as given on the command line */
  const char *cpu;                 /* CPU profile name */
  const char *db;                  /* results database for `save` */
  char *spec;                      /* policy presets, e.g. "shadowcache+lazydr" */
  char *sets[REPL_MAX_SETS];       /* KEY=VALUE overrides, in the order given */
  int nsets;
  bool echo;                       /* --echo: print each command read from a script */

  /* Replay state.  The engine keeps pointers into itself and to the policy,
  ** so both live on the heap and are replaced whole on a restart. */
  struct policy *pol;
  struct profile prof;
  struct trace_reader r;
  struct engine *e;
  struct trace_event ev;           /* the event replayed last (valid if e->index > 0) */
  uint64_t ctr_before[CTR_COUNT];  /* engine counters before that event */
  double wall;                     /* seconds spent replaying since the last restart */
  bool failure_said;               /* engine_failure was said since the last restart */

  /* Breakpoints. */
  struct repl_bp bp[REPL_MAX_BP];
  unsigned nbp;
  unsigned next_bp_id;

  /* Session. */
  char repeat[128];                /* the last command if it repeats on Enter, else "" */
  char **history;                  /* command lines in the order given (a terminal's
                                      also those of earlier sessions) */
  unsigned nhistory, caphistory;
  bool quit;                       /* `quit` was given */
  unsigned errors;                 /* commands that failed */
  const char *src;                 /* --batch file for error messages, or NULL */
  unsigned long line;              /* its line number */
};

/* One command: the table in repl_cmds.c generates `help` and feeds completion. */
enum repl_arg {                    /* what the first argument is, for completion */
  ARG_NONE, ARG_COMMAND, ARG_INFO, ARG_BREAK, ARG_POLICY, ARG_KNOB, ARG_DELETE,
};
struct repl_cmd {
  const char *name;
  const char *alias[3];            /* short names; NULL after the last */
  const char *args;                /* argument synopsis, NULL if none */
  const char *help;                /* one line */
  const char *detail;              /* more lines for `help NAME`, or NULL */
  int min_args, max_args;
  int (*fn)(struct repl *s, int argc, char **argv);
  enum repl_arg arg;
  bool repeat;                     /* Enter on an empty line repeats it (gdb's habit: the
                                      commands that show or go on repeat, those that change
                                      the session do not) */
};

extern const struct repl_cmd repl_commands[];
extern const unsigned repl_ncommands;

/* repl.c: the command; argv[0] is "repl"; returns an enum exit_code. */
int cmd_repl(int argc, char **argv);

/* repl_session.c */
/* Appends a command line to the session's history (`history` lists it). */
void repl_history_add(struct repl *s, const char *line);
/* Loads the policy, profile and trace and builds the engine; returns 0 or an
** enum exit_code with the message already printed. */
int repl_open(struct repl *s);
void repl_close(struct repl *s);

/* repl_cmds.c */
/* Runs one command line (modified in place); returns 0, or -1 after printing
** one error line. */
int repl_execute(struct repl *s, char *line);
/* The command named `word` (a name or an alias), or NULL. */
const struct repl_cmd *repl_find_command(const char *word);
/* Sub-words of `info` and `break`, NULL-terminated, for completion. */
extern const char *const repl_info_topics[];
extern const char *const repl_break_kinds[];
/* Prints "FILE:LINE: " (batch files only), the message and a newline to
** stderr, after flushing stdout so the two streams stay in order. */
void repl_error(struct repl *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* repl_complete.c */
/* Installs the completion function for interactive (readline) sessions. */
void repl_complete_install(void);

#endif
