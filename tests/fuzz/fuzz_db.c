/* libFuzzer harness: a results database given by the user (`vmxsim report`,
** `runs`, `compare`, `merge`; sim/store/), as a file of exactly the input's
** bytes.  SQLite parses the file; what is fuzzed is vmxsim reading what it
** holds: the read-only open (schema version, tables), the last run loaded
** back into a report and printed in every format, the sweeps' gaps, and a
** merge of the file into a fresh database.  Each refuses with EXIT_DB (or, for
** the merge, EXIT_BADINPUT) and a message naming the file, or succeeds; a
** merge that succeeds leaves a database whose last run loads too. */
#include "fuzz.h"
#include "sim/replay/report.h"
#include "sim/base/util.h"
#include "sim/store/store.h"
#include "sim/present/report_print.h"
#include <sqlite3.h>

static void check_refusal(int rc, const char *err, const char *path, const char *what, int also) {
  if (rc == EXIT_DB || (also && rc == also)) {
    if (!strstr(err, path)) {
      fprintf(stderr, "%s refused (%d) without naming %s: %s\n", what, rc, path, err);
      abort();
    }
    return;
  }
  fprintf(stderr, "%s: exit code %d (%s)\n", what, rc, err);
  abort();
}

/* The last run of db, loaded and printed: 0, or the refusal checked. */
static void load_last(sqlite3 *db, const char *path, const char *what) {
  struct report rep;
  memset(&rep, 0, sizeof rep);
  int64_t id = 0;
  char err[1024] = "";
  int rc = store_load_db(db, path, -1, &rep, &id, err, sizeof err);
  if (rc == EXIT_OK) {
    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    report_print(null, &rep, FORMAT_TABLE);
    report_print(null, &rep, FORMAT_JSON);
    report_print(null, &rep, FORMAT_CSV);
    report_print_runs(null, &rep, 1, FORMAT_TABLE);
    fclose(null);
    report_free(&rep);
  } else if (rc != EXIT_USAGE) {     /* EXIT_USAGE: no run in it */
    report_free(&rep);
    check_refusal(rc, err, path, what, 0);
  }
}

static void read_only(const char *path) {
  sqlite3 *db = NULL;
  char err[1024] = "";
  int rc = store_open_readonly(path, &db, err, sizeof err);
  if (rc != EXIT_OK) {
    check_refusal(rc, err, path, "the read-only open", 0);
    return;
  }
  load_last(db, path, "loading the last run");
  struct store_gap *gaps = NULL;
  size_t ngaps = 0;
  rc = store_sweep_gaps(db, path, &gaps, &ngaps, err, sizeof err);
  if (rc != EXIT_OK) check_refusal(rc, err, path, "the sweeps' gaps", 0);
  free(gaps);
  store_close(db);
}

/* A fresh database, opened as `merge` opens its output: made once, its bytes
** kept, and written back for each input, as building the schema for each
** input took a sixth of the harness's time and does not depend on the input. */
static sqlite3 *open_output(const char *out) {
  static char *fresh;
  static size_t fresh_size;
  sqlite3 *db = NULL;
  char err[1024] = "";
  if (fresh) fuzz_file((const uint8_t *)fresh, fresh_size, "merged.db");
  else unlink(out);
  if (store_open_journal(out, true, STORE_JOURNAL_ROLLBACK, &db, err, sizeof err) != EXIT_OK) {
    fprintf(stderr, "cannot make the output database: %s\n", err);
    abort();
  }
  if (!fresh && (!(fresh = read_file(out, &fresh_size)) || !fresh_size)) {
    fprintf(stderr, "cannot read the output database back: %s\n", out);
    abort();
  }
  return db;
}

static void merge_into_fresh(const char *path) {
  const char *out = fuzz_path("merged.db");
  sqlite3 *db = open_output(out);
  char err[1024] = "";
  struct store_merge_result res;
  memset(&res, 0, sizeof res);
  int rc = store_merge(db, out, path, &res, err, sizeof err);
  if (rc != EXIT_OK) check_refusal(rc, err, path, "the merge", EXIT_BADINPUT);
  else load_last(db, out, "loading the merged last run");
  store_close(db);
  unlink(out);
}

/* A database's side files of an earlier input would be read with this one. */
static void remove_side_files(const char *path) {
  static const char *const ends[] = { "-wal", "-shm", "-journal" };
  for (int i = 0; i < 3; i++) {
    char side[600];
    snprintf(side, sizeof side, "%s%s", path, ends[i]);
    unlink(side);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_path("given.db");
  remove_side_files(path);
  remove_side_files(fuzz_path("merged.db"));
  path = fuzz_file(data, size, "given.db");
  read_only(path);
  merge_into_fresh(path);
  return 0;
}
