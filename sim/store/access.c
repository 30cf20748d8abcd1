/* What of a results database may be written, named before SQLite is asked:
** SQLite writes the file, its -wal and -shm files (WAL mode) or its -journal
** (rollback mode), and creates those in the file's directory, and when one of
** them is read-only it says only "attempt to write a readonly database".  A
** reader opens the file so that it creates none of them where they would
** outlive it with the wrong owner or mode.  docs/schema.md, "Read-only use". */
#include "store.h"
#include "store_int.h"
#include "sim/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *store_sidecar(const char *path, const char *suffix) {
  size_t n = strlen(path) + strlen(suffix) + 1;
  char *s = xmalloc(n);
  snprintf(s, n, "%s%s", path, suffix);
  return s;
}

/* The directory that holds path (malloc'd). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  if (slash == path) return xstrdup("/");
  char *dir = xstrdup(path);
  dir[slash - path] = 0;
  return dir;
}

/* "why" for a file this process may not write; errno from access(). */
static void say_readonly(const char *file, int e, char *why, size_t n) {
  if (e == EROFS) snprintf(why, n, "%s is on a read-only file system", file);
  else if (e == EACCES || e == EPERM) snprintf(why, n, "%s is read-only for this user", file);
  else snprintf(why, n, "%s cannot be written: %s", file, strerror(e));
}

/* Whether file exists and may not be written; why says so. */
static bool existing_readonly(const char *file, char *why, size_t n) {
  if (access(file, F_OK) != 0) return false;
  if (access(file, W_OK) == 0) return false;
  say_readonly(file, errno, why, n);
  return true;
}

bool store_write_problem(const char *path, char *why, size_t n) {
  static const char *const sidecars[] = { "", "-wal", "-shm", "-journal" };
  bool found = false;
  for (size_t i = 0; i < sizeof sidecars / sizeof *sidecars && !found; i++) {
    char *file = store_sidecar(path, sidecars[i]);
    found = existing_readonly(file, why, n);
    free(file);
  }
  if (found) return true;
  /* A new file, a -wal or a -journal is created in the directory. */
  char *dir = dir_of(path);
  if (access(dir, W_OK | X_OK) != 0) {
    int e = errno;
    char *what = store_sidecar("its directory ", dir);
    say_readonly(what, e, why, n);
    free(what);
    found = true;
  }
  free(dir);
  return found;
}

bool store_wal_has_changes(const char *path) {
  char *wal = store_sidecar(path, "-wal");
  struct stat st;
  bool changes = stat(wal, &st) == 0 && st.st_size > 0;
  free(wal);
  return changes;
}

/* path with URI's special characters escaped, as "file:PATH?QUERY" (malloc'd). */
static char *uri_of(const char *path, const char *query) {
  char *u = xmalloc(3 * strlen(path) + strlen(query) + sizeof "file:?"), *p = u;
  p += sprintf(p, "file:");
  for (const char *s = path; *s; s++)
    if (*s == '%' || *s == '?' || *s == '#') p += sprintf(p, "%%%02X", (unsigned char)*s);
    else *p++ = *s;
  sprintf(p, "?%s", query);
  return u;
}

char *store_read_uri(const char *path, bool immutable) {
  return uri_of(path, immutable ? "immutable=1" : "mode=ro");
}

bool store_read_as_immutable(const char *path) {
  /* Nobody can change a file this user may not write, so it is read as it
  ** stands, unless committed changes wait in its -wal: those need the WAL
  ** index (-shm), which SQLite would create read-only beside it, for ever
  ** in the way of the next writer once the file is writable again. */
  return access(path, W_OK) != 0 && !store_wal_has_changes(path);
}
