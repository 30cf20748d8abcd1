/* Unit tests for atomic output files (sim/base/outfile.h): the temporary file's
** name and place, rename on commit, nothing left on discard, modes, refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/outfile.h"
#include "sim/base/util.h"

static char dir[256];

static const char *in_dir(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

/* The directory's entries, sorted, joined with spaces ("" when empty). */
static const char *listing(void) {
  static char out[2048];
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort);
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
      snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "", names[i]->d_name);
    free(names[i]);
  }
  free(names);
  return out;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static const char *contents(const char *path) {
  static char buf[256];
  FILE *f = fopen(path, "r");
  buf[0] = 0;
  if (!f) return "(missing)";
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void test_tmp_name_beside_target(void **state) {
  (void)state;
  struct outfile o;
  char err[256] = "";
  assert_int_equal(outfile_begin(&o, in_dir("t.bin"), OUTFILE_REGULAR, err, sizeof err), EXIT_OK);
  const char *tmp = outfile_path(&o);
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s/.t.bin" OUTFILE_TMP_TAG "%ld.", dir, (long)getpid());
  if (strncmp(tmp, prefix, strlen(prefix)) != 0 || strlen(tmp) != strlen(prefix) + 6)
    fail_msg("temporary file: expected %sXXXXXX, actual %s", prefix, tmp);
  write_text(tmp, "new");
  assert_int_equal(outfile_commit(&o, err, sizeof err), EXIT_OK);
  assert_string_equal(contents(in_dir("t.bin")), "new");
  assert_string_equal(listing(), "t.bin");
  remove(in_dir("t.bin"));
}

static void test_discard_keeps_old_file(void **state) {
  (void)state;
  struct outfile o;
  char err[256] = "";
  write_text(in_dir("old.txt"), "old");
  assert_int_equal(outfile_begin(&o, in_dir("old.txt"), OUTFILE_ANY, err, sizeof err), EXIT_OK);
  write_text(outfile_path(&o), "partial");
  outfile_discard(&o);
  assert_string_equal(contents(in_dir("old.txt")), "old");
  assert_string_equal(listing(), "old.txt");
  remove(in_dir("old.txt"));
}

static void test_modes(void **state) {
  (void)state;
  char err[256] = "";
  write_text(in_dir("ro.txt"), "x");
  chmod(in_dir("ro.txt"), 0640);
  assert_int_equal(outfile_write_text(in_dir("ro.txt"), "y", err, sizeof err), EXIT_OK);
  struct stat st;
  assert_int_equal(stat(in_dir("ro.txt"), &st), 0);
  assert_int_equal(st.st_mode & 07777, 0640);              /* an existing file keeps its mode */
  mode_t old = umask(027);
  assert_int_equal(outfile_write_text(in_dir("new.txt"), "z", err, sizeof err), EXIT_OK);
  umask(old);
  assert_int_equal(stat(in_dir("new.txt"), &st), 0);
  assert_int_equal(st.st_mode & 07777, 0640);              /* a new one: 0666 & ~umask */
  assert_string_equal(contents(in_dir("ro.txt")), "y");
  remove(in_dir("ro.txt"));
  remove(in_dir("new.txt"));
}

static void test_symlink_followed(void **state) {
  (void)state;
  char err[256] = "";
  write_text(in_dir("real.txt"), "a");
  assert_int_equal(symlink("real.txt", in_dir("link.txt")), 0);
  assert_int_equal(outfile_write_text(in_dir("link.txt"), "b", err, sizeof err), EXIT_OK);
  struct stat st;
  assert_int_equal(lstat(in_dir("link.txt"), &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_string_equal(contents(in_dir("real.txt")), "b");
  assert_string_equal(listing(), "link.txt real.txt");
  remove(in_dir("link.txt"));
  remove(in_dir("real.txt"));
}

static void test_refusals(void **state) {
  (void)state;
  struct outfile o;
  char err[256] = "";
  assert_int_equal(outfile_begin(&o, "-", OUTFILE_REGULAR, err, sizeof err), EXIT_USAGE);
  assert_string_equal(err, "-: not a regular file (a binary trace cannot go to standard output, a device or a FIFO)");
  assert_int_equal(outfile_begin(&o, "/dev/null", OUTFILE_REGULAR, err, sizeof err), EXIT_USAGE);
  assert_non_null(strstr(err, "/dev/null: not a regular file"));
  assert_int_equal(outfile_begin(&o, "/dev/null", OUTFILE_ANY, err, sizeof err), EXIT_OK);
  assert_string_equal(outfile_path(&o), "/dev/null");        /* a device is written in place */
  assert_int_equal(outfile_commit(&o, err, sizeof err), EXIT_OK);
  assert_int_equal(outfile_begin(&o, in_dir("no/such/dir/x"), OUTFILE_ANY, err, sizeof err), EXIT_IO);
  assert_non_null(strstr(err, "no/such/dir/x: cannot create: No such file or directory"));
  assert_string_equal(listing(), "");
}

/* outfile_commit_new links the new file into place, but keeps a file another
** process made at the target meanwhile (a results database: it may hold runs). */
static void test_commit_new_keeps_other(void **state) {
  (void)state;
  struct outfile o;
  char err[256] = "";
  assert_int_equal(outfile_begin(&o, in_dir("n.db"), OUTFILE_REGULAR, err, sizeof err), EXIT_OK);
  write_text(outfile_path(&o), "ours");
  assert_int_equal(outfile_commit_new(&o, err, sizeof err), EXIT_OK);
  assert_string_equal(contents(in_dir("n.db")), "ours");
  assert_string_equal(listing(), "n.db");
  assert_int_equal(outfile_begin(&o, in_dir("n.db"), OUTFILE_REGULAR, err, sizeof err), EXIT_OK);
  write_text(outfile_path(&o), "second");
  assert_int_equal(outfile_commit_new(&o, err, sizeof err), EXIT_OK);
  assert_string_equal(contents(in_dir("n.db")), "ours");          /* the first stays */
  assert_string_equal(listing(), "n.db");                         /* no temporary file left */
  remove(in_dir("n.db"));
}

static void test_tmpdir_under_TMPDIR(void **state) {
  (void)state;
  char *d = NULL, err[256] = "", prefix[512];
  const char *old = getenv("TMPDIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("TMPDIR", dir, 1);
  int rc = outfile_tmpdir("vmxsim-x", &d, err, sizeof err);
  if (saved) setenv("TMPDIR", saved, 1); else unsetenv("TMPDIR");
  free(saved);
  assert_int_equal(rc, EXIT_OK);
  snprintf(prefix, sizeof prefix, "%s/.vmxsim-x" OUTFILE_TMP_TAG "%ld.", dir, (long)getpid());
  if (strncmp(d, prefix, strlen(prefix)) != 0 || strlen(d) != strlen(prefix) + 6)
    fail_msg("scratch directory: expected %sXXXXXX, actual %s", prefix, d);
  struct stat st;
  assert_int_equal(stat(d, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  char inside[600];
  snprintf(inside, sizeof inside, "%s/a.bin", d);
  write_text(inside, "scratch");
  outfile_tmpdir_remove(d);                                 /* with its files */
  assert_int_not_equal(stat(d, &st), 0);
  free(d);
}

static int setup(void **state) {
  (void)state;
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/vmxsim-outfile-XXXXXX", t && *t ? t : "/tmp");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tmp_name_beside_target),
    cmocka_unit_test(test_discard_keeps_old_file),
    cmocka_unit_test(test_modes),
    cmocka_unit_test(test_symlink_followed),
    cmocka_unit_test(test_refusals),
    cmocka_unit_test(test_commit_new_keeps_other),
    cmocka_unit_test(test_tmpdir_under_TMPDIR),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
