/* What the REPL's command files share and nothing outside sim/repl needs: the
** handlers the command table in repl_cmds.c points to, and the helpers more
** than one of those files calls.  repl.h stays what the rest of vmxsim
** includes, so these names do not leak into the command dispatcher. */
#ifndef VMXSIM_REPL_INT_H
#define VMXSIM_REPL_INT_H

#include "repl.h"

struct report;

/* repl_cmds.c */
/* The exit reason's name, or "?" for a number with none. */
const char *repl_reason_name(unsigned r);
/* Index of the event replayed last; only meaningful when e->index > 0. */
uint64_t repl_last_index(const struct repl *s);

/* repl_break.c */
/* Checks every breakpoint against the event just replayed; prints the hits. */
bool repl_check_breakpoints(struct repl *s);

/* repl_show.c */
/* The report so far (caller frees): the same identity lines as a batch run. */
struct report *repl_make_report(const struct repl *s);

/* The handlers of repl_commands[]: argc and argv are the words after the
** command's name, already within its min_args and max_args; each returns 0,
** or -1 after repl_error(). */
/* repl_step.c */
int repl_do_step(struct repl *s, int argc, char **argv);
int repl_do_next_exit(struct repl *s, int argc, char **argv);
int repl_do_continue(struct repl *s, int argc, char **argv);
int repl_do_until(struct repl *s, int argc, char **argv);
/* repl_break.c */
int repl_do_break(struct repl *s, int argc, char **argv);
int repl_do_delete(struct repl *s, int argc, char **argv);
int repl_do_breakpoints(struct repl *s, int argc, char **argv);
/* repl_show.c */
int repl_do_info(struct repl *s, int argc, char **argv);
int repl_do_event(struct repl *s, int argc, char **argv);
int repl_do_stats(struct repl *s, int argc, char **argv);
/* repl_session.c */
int repl_do_policy(struct repl *s, int argc, char **argv);
int repl_do_set(struct repl *s, int argc, char **argv);
int repl_do_reset(struct repl *s, int argc, char **argv);
int repl_do_save(struct repl *s, int argc, char **argv);
int repl_do_history(struct repl *s, int argc, char **argv);

#endif
