/* The content hashes of trace files the results database remembers, so that a
** stored run of a file stored before need not hash it again (docs/schema.md,
** "trace_files").
**
** A file is known by its path, device, inode, size, modification and
** status-change times.  Writing to a file always moves its status-change
** time (ctime) to the present, and no user can set it back, so a file whose
** identity is unchanged has its content unchanged, with one exception that
** git's index calls "racily clean": a write within the clock's granularity of
** the moment the file was looked at leaves the times as they were.  So a hash
** is remembered only when the file's ctime is older, by FILE_SETTLED_NS, than
** the moment before the hash began to be taken (file_seen_settled), and only
** when the file looked the same after the hash as before (file_seen_same).
*/
#ifndef VMXSIM_KNOWN_H
#define VMXSIM_KNOWN_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/trace/hash.h"

/* How much older than the look a file's ctime must be for its hash to be
** remembered: well above any file system's timestamp granularity (2 s on FAT). */
#define FILE_SETTLED_NS (3 * 1000000000LL)

/* A regular file as seen at one moment. */
struct file_seen {
  bool ok;                          /* a regular file, looked at */
  char *path;                       /* its absolute path, symbolic links resolved (malloc'd) */
  int64_t dev, ino, size, mtime_ns, ctime_ns;
  int64_t at_ns;                    /* the real-time clock just before the look */
};

/* Looks at path; false (f->ok false) when it is no regular file or cannot be
** looked at.  f is freed with file_seen_free either way. */
bool file_seen_take(const char *path, struct file_seen *f);
void file_seen_free(struct file_seen *f);
/* The same file, with the same size and times. */
bool file_seen_same(const struct file_seen *a, const struct file_seen *b);
/* Whether f's ctime is older than the look by FILE_SETTLED_NS. */
bool file_seen_settled(const struct file_seen *f);

/* The hash the database at db_path remembers for the file as seen: true and
** hex set, or false when it remembers none for it (or the database, its
** table or the file is missing, or anything fails: the caller then hashes).
** Opens the database as the read-only commands do (store_open_readonly), so
** a database of another schema knows nothing, and never changes it. */
bool store_known_hash(const char *db_path, const struct file_seen *f, char hex[HASH_HEX_LEN + 1]);

/* A trace file about to be replayed and stored, as the commands that store use
** the remembered hashes (run, compare --run, sweep): the look before the
** replay, and the hash the database gave for it then, if any. */
struct trace_known {
  struct file_seen seen;
  bool known;                       /* hash holds the remembered hash */
  char hash[HASH_HEX_LEN + 1];
};

/* Looks at trace and asks the database at db_path for its hash; with db_path
** NULL only clears k.  trace_known_free(k) either way. */
void trace_known_look_up(const char *db_path, const char *trace, struct trace_known *k);
void trace_known_free(struct trace_known *k);
/* After the replay: 0 when the remembered hash still holds (trace looks as it
** did before; also when no hash was remembered: nothing to hold), else
** EXIT_BADINPUT with "TRACE: changed while it was replayed; nothing stored". */
int trace_known_check(const struct trace_known *k, const char *trace, char *err, size_t errlen);
/* What a store should remember the hash it took against: the look before the
** replay, or NULL when the database gave the hash (it has it already). */
static inline const struct file_seen *trace_known_to_remember(const struct trace_known *k) {
  return k->known ? NULL : &k->seen;
}

#endif
