/* Remembered content hashes of trace files (known.h). */
#include "known.h"
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int64_t ns_of(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

bool file_seen_take(const char *path, struct file_seen *f) {
  memset(f, 0, sizeof *f);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  f->at_ns = ns_of(now);
  f->path = realpath(path, NULL);
  struct stat st;
  if (!f->path || stat(f->path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  f->dev = (int64_t)st.st_dev;
  f->ino = (int64_t)st.st_ino;
  f->size = (int64_t)st.st_size;
  f->mtime_ns = ns_of(st.st_mtim);
  f->ctime_ns = ns_of(st.st_ctim);
  return f->ok = true;
}

void file_seen_free(struct file_seen *f) {
  free(f->path);
  memset(f, 0, sizeof *f);
}

bool file_seen_same(const struct file_seen *a, const struct file_seen *b) {
  return a->ok && b->ok && strcmp(a->path, b->path) == 0 && a->dev == b->dev && a->ino == b->ino &&
         a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

bool file_seen_settled(const struct file_seen *f) {
  return f->ok && f->ctime_ns < f->at_ns - FILE_SETTLED_NS;
}

/* Binds the file's identity to ?1..?6 (path, device, inode, size, mtime, ctime). */
static void bind_identity(sqlite3_stmt *st, const struct file_seen *f) {
  sqlite3_bind_text(st, 1, f->path, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, f->dev);
  sqlite3_bind_int64(st, 3, f->ino);
  sqlite3_bind_int64(st, 4, f->size);
  sqlite3_bind_int64(st, 5, f->mtime_ns);
  sqlite3_bind_int64(st, 6, f->ctime_ns);
}

/* Whatever fails here only means the hash is taken again, so every error is a
** "no": a missing database, another application's, or one of another schema
** (store_open_readonly refuses it) included. */
bool store_known_hash(const char *db_path, const struct file_seen *f, char hex[HASH_HEX_LEN + 1]) {
  char err[1024];
  sqlite3 *db = NULL;
  if (!f->ok || !db_path || store_open_readonly(db_path, &db, err, sizeof err) != 0) return false;
  bool found = false;
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(db, "SELECT hash FROM trace_files WHERE path = ?1 AND device = ?2 AND inode = ?3"
                         " AND size = ?4 AND mtime_ns = ?5 AND ctime_ns = ?6", -1, &q, NULL) == SQLITE_OK) {
    bind_identity(q, f);
    const unsigned char *h = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_text(q, 0) : NULL;
    if (h && strlen((const char *)h) == HASH_HEX_LEN) {
      memcpy(hex, h, HASH_HEX_LEN + 1);
      found = true;
    }
  }
  sqlite3_finalize(q);
  store_close(db);
  return found;
}

int store_remember_hash(sqlite3 *db, const struct file_seen *before, const char *hash) {
  struct file_seen after = { 0 };
  bool keep = before && file_seen_settled(before) && file_seen_take(before->path, &after) &&
              file_seen_same(before, &after);
  file_seen_free(&after);
  if (!keep) return SQLITE_OK;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO trace_files(path, device, inode, size, mtime_ns,"
                              " ctime_ns, hash, hashed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                              " datetime(?8, 'unixepoch'))", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    bind_identity(st, before);
    sqlite3_bind_text(st, 7, hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, before->at_ns / 1000000000LL);
    rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
  }
  sqlite3_finalize(st);
  return rc;
}

void trace_known_look_up(const char *db_path, const char *trace, struct trace_known *k) {
  memset(k, 0, sizeof *k);
  if (db_path && file_seen_take(trace, &k->seen)) k->known = store_known_hash(db_path, &k->seen, k->hash);
}

void trace_known_free(struct trace_known *k) { file_seen_free(&k->seen); }

int trace_known_check(const struct trace_known *k, const char *trace, char *err, size_t errlen) {
  if (!k->known) return EXIT_OK;
  struct file_seen after;
  bool same = file_seen_take(trace, &after) && file_seen_same(&k->seen, &after);
  file_seen_free(&after);
  if (same) return EXIT_OK;
  snprintf(err, errlen, "%s: changed while it was replayed; nothing stored", trace);
  return EXIT_BADINPUT;
}
