/* Unit tests for shell_quote, shell_quote_always and control_char
** (sim/base/util.h): the words the Slurm scripts and the printed commands are
** made of.  tests/cli/t_sweep.sh has sh read them back; tests/slurm/run.sh sbatch. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/base/util.h"

static void check(void (*quote)(struct strbuf *, const char *), const char *s, const char *want) {
  struct strbuf b = { 0 };
  quote(&b, s);
  assert_string_equal(b.s, want);
  free(b.s);
}

static void ordinary_words_stay_as_they_are(void **state) {
  (void)state;
  check(shell_quote, "/shared/cr3/sweep.sbatch", "/shared/cr3/sweep.sbatch");
  check(shell_quote, "--account=lab", "'--account=lab'");   /* '=' would make a first word an assignment */
  check(shell_quote, "a_b-c.d,e:f@g+h%i", "a_b-c.d,e:f@g+h%i");
  check(shell_quote_always, "/shared/cr3", "'/shared/cr3'");
}

static void anything_else_is_quoted(void **state) {
  (void)state;
  check(shell_quote, "", "''");
  check(shell_quote, "a b", "'a b'");
  check(shell_quote, "~/x", "'~/x'");
  check(shell_quote, "$(touch x);`id`", "'$(touch x);`id`'");
  check(shell_quote, "#c", "'#c'");
  check(shell_quote, "\"q\"", "'\"q\"'");
  check(shell_quote_always, "", "''");
}

/* A quote ends the quotes and is escaped; a backslash too, as sbatch reads one
** as an escape even inside quotes (sh reads '\\' outside them as the same byte). */
static void quotes_and_backslashes_go_outside_the_quotes(void **state) {
  (void)state;
  check(shell_quote, "it's", "'it'\\''s'");
  check(shell_quote, "a\\b", "'a'\\\\'b'");
  check(shell_quote, "'", "''\\'''");
  check(shell_quote, "\\'", "''\\\\''\\'''");
  check(shell_quote_always, "x'y\\z", "'x'\\''y'\\\\'z'");
}

static void control_characters_are_found(void **state) {
  (void)state;
  const char *s = "ab\ncd";
  assert_ptr_equal(control_char(s), s + 2);
  s = "x\x7f";
  assert_ptr_equal(control_char(s), s + 1);
  s = "\x1b[2J";
  assert_ptr_equal(control_char(s), s);
  assert_null(control_char("plain text, even 'quoted' $(x) and \xc3\xa9"));
  assert_null(control_char(""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(ordinary_words_stay_as_they_are),
    cmocka_unit_test(anything_else_is_quoted),
    cmocka_unit_test(quotes_and_backslashes_go_outside_the_quotes),
    cmocka_unit_test(control_characters_are_found),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
