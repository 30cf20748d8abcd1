/* The identity of a run (docs/schema.md, "Identity of a run"): the key by which
** a sweep skips a run already stored and a merge stores each run once.  The
** same functions serve C, when a run is stored or looked up, and SQL, when a
** migration backfills the keys or a merge reads another file's runs, so the
** two can never disagree. */
#include "store.h"
#include "store_int.h"
#include "sim/trace/hash.h"
#include "sim/base/util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

void store_text_hash(const char *text, char hex[HASH_HEX_LEN + 1]) {
  snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64(text, strlen(text)));
}

void store_run_key(const char *trace_hash, const char *policy_json, const char *cpu_hash, const char *version,
                   bool partial, uint64_t events, char key[HASH_HEX_LEN + 1]) {
  struct xxh64 h;
  const char *parts[] = { trace_hash, policy_json, cpu_hash, version };
  xxh64_init(&h);
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    xxh64_update(&h, parts[i] ? parts[i] : "", strlen(parts[i] ? parts[i] : "") + 1);   /* with the NUL */
  char tail[48];
  if (partial) snprintf(tail, sizeof tail, "partial %llu", (unsigned long long)events);
  else snprintf(tail, sizeof tail, "complete");
  xxh64_update(&h, tail, strlen(tail));
  snprintf(key, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&h));
}

static const char *arg_text(sqlite3_value *v) {
  const unsigned char *t = sqlite3_value_text(v);
  return t ? (const char *)t : "";
}

/* vmxsim_xxh64(TEXT): store_text_hash. */
static void sql_xxh64(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  char hex[HASH_HEX_LEN + 1];
  store_text_hash(arg_text(argv[0]), hex);
  sqlite3_result_text(cx, hex, -1, SQLITE_TRANSIENT);
}

/* vmxsim_run_key(trace_hash, policy_json, cpu_hash, vmxsim_version, partial, events): store_run_key. */
static void sql_run_key(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  char key[HASH_HEX_LEN + 1];
  store_run_key(arg_text(argv[0]), arg_text(argv[1]), arg_text(argv[2]), arg_text(argv[3]),
                sqlite3_value_int(argv[4]) != 0, (uint64_t)sqlite3_value_int64(argv[5]), key);
  sqlite3_result_text(cx, key, -1, SQLITE_TRANSIENT);
}

int store_register_functions(sqlite3 *db) {
  int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  int rc = sqlite3_create_function(db, "vmxsim_xxh64", 1, flags, NULL, sql_xxh64, NULL, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "vmxsim_run_key", 6, flags, NULL, sql_run_key, NULL, NULL);
  return rc;
}

int store_find_run(sqlite3 *db, const char *path, const char *key, int64_t *run_id, char *err, size_t errlen) {
  sqlite3_stmt *st = NULL;
  *run_id = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT min(id) FROM runs WHERE run_key = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    store_bind_text(st, 1, key);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *run_id = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? 0 : store_db_error(db, path, "cannot look up a run", err, errlen);
}
