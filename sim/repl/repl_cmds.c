/* The REPL's command table, which `help` and completion are generated from, and
** what runs a command line against it: splitting, look-up, the argument count,
** the repeat on Enter.  The handlers live in one file per job (repl_step.c,
** repl_break.c, repl_show.c, repl_session.c); the table stays here so that the
** names, aliases and help lines are in one place and `help` cannot miss one.
** The small helpers those files share are here too. */
#include "repl_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const repl_info_topics[] = { "vmcs", "regs", "cr3targets", "shadow", "tlb", NULL };
const char *const repl_break_kinds[] = { "exit", "event", "at", "cr3", "mark", NULL };

void repl_error(struct repl *s, const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  if (s->src) fprintf(stderr, "%s:%lu: ", s->src, s->line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  s->errors++;
}

const char *repl_reason_name(unsigned r) {
  const char *n = exit_reason_name(r);
  return n ? n : "?";
}

/* Index of the event replayed last; only meaningful when e->index > 0. */
uint64_t repl_last_index(const struct repl *s) { return s->e->index - 1; }

/* ---- help, quit ---- */

/* "name ARGS" as the help table shows it. */
static void synopsis(const struct repl_cmd *c, char *buf, size_t n) {
  snprintf(buf, n, "%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
}

static void alias_list(const struct repl_cmd *c, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < 3 && c->alias[i] && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", c->alias[i]);
}

static int do_help(struct repl *s, int argc, char **argv) {
  char syn[96], al[32];
  if (argc) {
    const struct repl_cmd *c = repl_find_command(argv[0]);
    if (!c) { repl_error(s, "help: unknown command '%s'; 'help' lists them", argv[0]); return -1; }
    synopsis(c, syn, sizeof syn);
    alias_list(c, al, sizeof al);
    printf("%s%s%s%s\n  %s\n", syn, al[0] ? "   (aliases: " : "", al, al[0] ? ")" : "", c->help);
    if (c->detail) printf("%s", c->detail);
    return 0;
  }
  int wsyn = 0, wal = 0;
  for (unsigned i = 0; i < repl_ncommands; i++) {
    synopsis(&repl_commands[i], syn, sizeof syn);
    alias_list(&repl_commands[i], al, sizeof al);
    if ((int)strlen(syn) > wsyn) wsyn = (int)strlen(syn);
    if ((int)strlen(al) > wal) wal = (int)strlen(al);
  }
  printf("Commands (events are numbered from 0; stepping stops after the event that ends it):\n");
  for (unsigned i = 0; i < repl_ncommands; i++) {
    synopsis(&repl_commands[i], syn, sizeof syn);
    alias_list(&repl_commands[i], al, sizeof al);
    printf("  %-*s  %-*s  %s\n", wsyn, syn, wal, al, repl_commands[i].help);
  }
  printf("Enter on an empty line repeats the last command if it shows or replays (step, next-exit, continue,\n"
         "info, event, stats, breakpoints); '#' starts a comment; 'help CMD' for more.\n");
  return 0;
}

static int do_quit(struct repl *s, int argc, char **argv) {
  (void)argc, (void)argv;
  s->quit = true;
  return 0;
}

/* ---- the table ---- */

/* The order here is the order of `help`; unset fields are 0/NULL. */
const struct repl_cmd repl_commands[] = {
  { .name = "step", .alias = { "s" }, .args = "[N]", .help = "replay N events (default 1), showing each",
    .max_args = 1, .fn = repl_do_step, .repeat = true },
  { .name = "next-exit", .alias = { "n", "nx" }, .args = "[N]",
    .help = "replay up to and including the Nth next VM exit (default 1)",
    .detail = "  Counts exits, not events: one touch event can raise several shadow page faults.\n",
    .max_args = 1, .fn = repl_do_next_exit, .repeat = true },
  { .name = "continue", .alias = { "c" }, .help = "replay to the next breakpoint or the end (Ctrl-C interrupts)",
    .fn = repl_do_continue, .repeat = true },
  { .name = "until", .alias = { "u" }, .args = "INDEX", .help = "replay up to and including event INDEX",
    .min_args = 1, .max_args = 1, .fn = repl_do_until },
  { .name = "break", .alias = { "b" }, .args = "KIND [VALUE]",
    .help = "stop after an event: exit REASON, event TYPE, at INDEX, cr3 VALUE, mark [LABEL]",
    .detail = "  break exit REASON    the event caused a VM exit with that reason (break exit CR_ACCESS)\n"
              "  break event TYPE     an event of that type (break event cr3w; mnemonics as in traces/FORMAT.md)\n"
              "  break at INDEX       the event with that index (break at 1234)\n"
              "  break cr3 VALUE      a guest CR3 write of that value (break cr3 0x1000)\n"
              "  break mark [LABEL]   a mark event (with that label)\n",
    .min_args = 1, .max_args = 2, .fn = repl_do_break, .arg = ARG_BREAK },
  { .name = "delete", .alias = { "d" }, .args = "N|all", .help = "delete breakpoint N, or all of them",
    .min_args = 1, .max_args = 1, .fn = repl_do_delete, .arg = ARG_DELETE },
  { .name = "breakpoints", .alias = { "bl" }, .help = "list breakpoints with their hit counts",
    .fn = repl_do_breakpoints, .repeat = true },
  { .name = "info", .alias = { "i" }, .args = "[TOPIC [FIELD]]",
    .help = "show vCPU state: vmcs [FIELD], regs, cr3targets, shadow, tlb",
    .detail = "  info vmcs [FIELD]   every VMCS field with its encoding and value, or one (by name or encoding)\n"
              "  info regs           guest CR0/CR3/CR4/CR8, DR0-3/6/7, CR0/CR4 read shadows and guest/host masks\n"
              "  info cr3targets     CR3_TARGET_COUNT and the CR3-target values\n"
              "  info shadow         shadow page pool usage, the oldest pages, each vCPU's roots (EPT: mappings)\n"
              "  info tlb            the vCPU's TLB\n"
              "  The vCPU is the one the last event ran on (vCPU 0 before any).\n",
    .max_args = 2, .fn = repl_do_info, .arg = ARG_INFO, .repeat = true },
  { .name = "event", .alias = { "e" }, .help = "show the last event, whether it exited and why",
    .fn = repl_do_event, .repeat = true },
  { .name = "stats", .alias = { "st" }, .help = "the run's report so far (as 'vmxsim run' prints it)",
    .fn = repl_do_stats, .repeat = true },
  { .name = "policy", .args = "[P]",
    .help = "show the policy, or restart at event 0 under policy P (breakpoints kept)",
    .detail = "  P is a preset or presets joined with '+' (shadowcache+lazydr); overrides from --set and 'set' stay.\n",
    .max_args = 1, .fn = repl_do_policy, .arg = ARG_POLICY },
  { .name = "set", .args = "[KEY VALUE]", .help = "list overrides, or override a policy knob and restart at event 0",
    .max_args = 2, .fn = repl_do_set, .arg = ARG_KNOB },
  { .name = "reset", .help = "restart at event 0 under the same policy (breakpoints kept)", .fn = repl_do_reset },
  { .name = "save", .help = "store the run so far in the results database (marked partial)", .fn = repl_do_save },
  { .name = "history", .args = "[N]", .help = "the last N commands (default 20), numbered",
    .detail = "  On a terminal the list includes earlier sessions' commands (~/.vmxsim_history), as Up recalls them.\n",
    .max_args = 1, .fn = repl_do_history, .repeat = false },
  { .name = "help", .alias = { "h", "?" }, .args = "[CMD]", .help = "list commands, or describe one",
    .max_args = 1, .fn = do_help, .arg = ARG_COMMAND },
  { .name = "quit", .alias = { "q", "exit" }, .help = "leave (Ctrl-D too)", .fn = do_quit },
};
const unsigned repl_ncommands = sizeof repl_commands / sizeof *repl_commands;

const struct repl_cmd *repl_find_command(const char *word) {
  for (unsigned i = 0; i < repl_ncommands; i++) {
    const struct repl_cmd *c = &repl_commands[i];
    if (!strcmp(word, c->name)) return c;
    for (int a = 0; a < 3 && c->alias[a]; a++)
      if (!strcmp(word, c->alias[a])) return c;
  }
  return NULL;
}

/* Splits line at whitespace up to a '#' word; returns the word count, or
** max + 1 if there were more words than fit. */
static int split(char *line, char **argv, int max) {
  int argc = 0;
  for (char *p = line;;) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') return argc;
    if (argc == max) return max + 1;
    argv[argc++] = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    if (*p) *p++ = 0;
  }
}

int repl_execute(struct repl *s, char *line) {
  char copy[sizeof s->repeat];
  snprintf(copy, sizeof copy, "%s", line);
  char *argv[8];
  int argc = split(line, argv, 8);
  if (argc == 0) return 0;
  const struct repl_cmd *c = repl_find_command(argv[0]);
  s->repeat[0] = 0;                 /* Enter repeats this command or nothing, never an older one */
  if (!c) {
    repl_error(s, "Unknown command '%s'; try 'help'", argv[0]);
    return -1;
  }
  if (argc - 1 < c->min_args || argc - 1 > c->max_args) {
    char syn[96];
    synopsis(c, syn, sizeof syn);
    repl_error(s, "usage: %s", syn);
    return -1;
  }
  if (c->repeat) memcpy(s->repeat, copy, sizeof copy);
  int rc = c->fn(s, argc - 1, argv + 1);
  fflush(stdout);
  return rc;
}
