/* Tab completion for interactive REPL sessions: command names, then each command's arguments (readline). */
#include "repl.h"
#include "sim/base/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <readline/readline.h>

/* Candidate lists are built once (names are static strings owned elsewhere). */
static const char *commands[64], *fields[VMCS_FIELD_COUNT + 1], *reasons[EXIT_REASON_MAX + 1];
static const char *events[EV_COUNT + 16], *knobs[64];
static const char *const delete_words[] = { "all", NULL };

static const char *const knob_names[] = {
#define X(name, type, def, field, lo, hi, desc) #name,
  POLICY_KNOBS(X)
#undef X
  NULL
};

static void build_lists(void) {
  unsigned n = 0;
  for (unsigned i = 0; i < repl_ncommands && n < 63; i++) commands[n++] = repl_commands[i].name;
  commands[n] = NULL;
  for (int i = 0; i < VMCS_FIELD_COUNT; i++) fields[i] = vmcs_name((enum vmcs_field)i);
  fields[VMCS_FIELD_COUNT] = NULL;
  n = 0;
  for (unsigned r = 0; r < EXIT_REASON_MAX; r++)
    if (exit_reason_name(r)) reasons[n++] = exit_reason_name(r);
  reasons[n] = NULL;
  /* Event types as the text form spells them: cr3w rather than crw. */
  static const char *const cr_forms[] = { "cr0w", "cr3w", "cr4w", "cr8w", "cr0r", "cr3r", "cr4r", "cr8r" };
  n = 0;
  for (unsigned i = 0; i < sizeof cr_forms / sizeof *cr_forms; i++) events[n++] = cr_forms[i];
  for (unsigned t = 0; t < EV_COUNT; t++)
    if (t != EV_CR_WRITE && t != EV_CR_READ && t != EV_INIT) events[n++] = event_mnemonic(t);
  events[n] = NULL;
  n = 0;
  for (const char *const *k = knob_names; *k && n < 63; k++) knobs[n++] = *k;
  knobs[n] = NULL;
}

/* The list the generator walks, chosen per completion. */
static const char *const *candidates;

static char *generate(const char *text, int state) {
  static size_t next, len;
  if (!state) {
    next = 0;
    len = strlen(text);
  }
  while (candidates[next]) {
    const char *c = candidates[next++];
    if (!strncasecmp(c, text, len)) return xstrdup(c);   /* readline frees it */
  }
  return NULL;
}

/* Splits the line before the word being completed into whole words. */
static int words_before(int start, char words[][64], int max) {
  int n = 0;
  for (int i = 0; i < start && n < max;) {
    while (i < start && isspace((unsigned char)rl_line_buffer[i])) i++;
    if (i >= start) break;
    int j = 0;
    while (i < start && !isspace((unsigned char)rl_line_buffer[i])) {
      if (j < 63) words[n][j++] = rl_line_buffer[i];
      i++;
    }
    words[n][j] = 0;
    n++;
  }
  /* "policy shadowcache+la": the part before '+' belongs to the current word. */
  if (n && start > 0 && !isspace((unsigned char)rl_line_buffer[start - 1])) n--;
  return n;
}

/* What may come in the argument after `cmd`'s first argument `first`. */
static const char *const *second_arg(const struct repl_cmd *c, const char *first) {
  if (c->arg == ARG_INFO && !strcmp(first, "vmcs")) return fields;
  if (c->arg == ARG_BREAK && !strcmp(first, "exit")) return reasons;
  if (c->arg == ARG_BREAK && !strcmp(first, "event")) return events;
  return NULL;
}

static const char *const *first_arg(const struct repl_cmd *c) {
  switch (c->arg) {
  case ARG_COMMAND: return commands;
  case ARG_INFO:    return repl_info_topics;
  case ARG_BREAK:   return repl_break_kinds;
  case ARG_POLICY:  return policy_preset_names();
  case ARG_KNOB:    return knobs;
  case ARG_DELETE:  return delete_words;
  case ARG_NONE:    break;
  }
  return NULL;
}

static const char *const *candidates_at(int start) {
  char words[8][64];
  int n = words_before(start, words, 8);
  if (n == 0) return commands;
  const struct repl_cmd *c = repl_find_command(words[0]);
  if (!c) return NULL;
  if (n == 1) return first_arg(c);
  if (n == 2) return second_arg(c, words[1]);
  return NULL;
}

static char **complete(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1;        /* never fall back to file names */
  candidates = candidates_at(start);
  return candidates ? rl_completion_matches(text, generate) : NULL;
}

void repl_complete_install(void) {
  build_lists();
  rl_attempted_completion_function = complete;
  rl_completer_word_break_characters = " \t\n+";   /* '+' joins policy presets */
  rl_variable_bind("completion-ignore-case", "on"); /* VMCS fields and reasons are upper case */
}
