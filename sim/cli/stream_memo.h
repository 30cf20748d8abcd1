/*
** Remembered first conversions of recordings.
**
** A recording replayed as it is imported is converted twice
** (sim/import/import.h, "A recording replayed as it is imported"): once for
** what goes before the records (header, metadata, initial registers), which
** an importer knows only at the end, and once down the pipe into the replay.
** What the first conversion finds depends only on the recording's content,
** the import job and the importer, so it is kept in a small file under the
** user's cache directory ($XDG_CACHE_HOME/vmxsim/recordings, else
** ~/.cache/vmxsim/recordings), and the next replay of the same file reads the
** recording once.
**
** An entry is named by the hash of its identity, a text naming the build of
** vmxsim (its version and its executable's size and modification time: a
** rebuilt importer never uses an older build's entries), the format, the
** input as named (the metadata records that name), the recording as a file
** (real path, device, inode, size, modification and change times:
** sim/store/known.h) and every option of the job; the entry
** holds that text in full and a checksum, and anything else (a short, long,
** damaged or foreign file) is no entry.  A recording is remembered only when
** it looked the same before and after its first conversion and had not
** changed for FILE_SETTLED_NS before (as for remembered hashes), and even a
** wrong entry cannot change a replay: the second conversion checks its
** records against the entry's count and hash, and a mismatch fails the run as
** a changed recording does (the entry is then forgotten).
**
** The converted trace itself is kept there too, beside its entry (KEY.trace,
** at most STREAM_MEMO_BUDGET_MB of such copies in all, the least recently
** replayed dropped first; VMXSIM_CACHE_MB sets the bound, 0 keeps none and
** reads none): a
** conversion is about 36 bytes an event, 1.5 times a xentrace recording, and
** reading it is what an imported trace's replay costs, about half of what
** converting costs (docs/performance.md).  A replay that finds its copy
** reads it instead of the recording, its content hashed as it is read; the
** hash must be the one the entry holds, or the run fails, nothing printed or
** stored, and the copy and entry are forgotten.  A copy is written as the
** stream sends the records, only when the recording is settled, with room for
** it several times over on the disk, and committed (renamed into place) when
** the stream ended whole and the recording looked the same before and after.
**
** The cache is an optimisation: a directory that cannot be made or written
** only means two conversions, and VMXSIM_NO_CACHE=1 turns it off.  The
** directory may be deleted at any time.
*/
#ifndef VMXSIM_STREAM_MEMO_H
#define VMXSIM_STREAM_MEMO_H

#include "sim/import/import.h"
#include "sim/store/known.h"
#include "sim/base/outfile.h"

#include <stdbool.h>
#include <stddef.h>

#define STREAM_MEMO_OFF_ENV   "VMXSIM_NO_CACHE"
#define STREAM_MEMO_MAGIC     "VXSMEMO2"
#define STREAM_MEMO_ID_MAX    8192     /* an identity longer than this is not remembered */
#define STREAM_MEMO_BUDGET_ENV "VMXSIM_CACHE_MB"
#define STREAM_MEMO_BUDGET_MB  2048    /* the kept copies' bound by default, MiB */
#define STREAM_MEMO_KEPT_SUFFIX ".trace"

struct stream_memo {
  char *path;                     /* the entry's file; NULL: nothing to remember (off, no cache directory) */
  char *identity;                 /* the text the entry must hold */
  struct file_seen seen;          /* the recording as looked at before the conversion */
  unsigned char *prefix;          /* a found entry's (import_stream_prefix_size bytes) */
  struct import_stream_known known;
  bool found;                     /* known holds a remembered first conversion */
  char *kept_path;                /* where the entry's kept copy of the conversion is */
  bool kept_found;                /* it is there, as long as the entry says */
  struct outfile copy;            /* the copy being written (stream_memo_copy_begin) */
  int copy_fd;                    /* its descriptor, or -1 */
};

/* Looks for job's entry: m->found, and m->known to give import_stream_start. */
void stream_memo_look_up(struct stream_memo *m, const struct import_job *job);
/* After a stream started with its own first conversion: remembers it, when
** the recording is settled and looked the same before and after. */
void stream_memo_keep(struct stream_memo *m, const struct import_stream *s);
/* The bound on the kept copies, in bytes ($VMXSIM_CACHE_MB MiB, else the default). */
uint64_t stream_memo_budget(void);
/* A descriptor to give import_stream_start as its copy_fd, when the
** conversion should be kept (see above), else -1. */
int stream_memo_copy_begin(struct stream_memo *m);
/* After import_stream_join of s (its result stream_rc): keeps the copy and
** names it in the entry, or drops it. */
void stream_memo_copy_end(struct stream_memo *m, const struct import_stream *s, int stream_rc);
/* A stream begun from m's entry (or its kept copy) failed: both are removed. */
void stream_memo_forget(struct stream_memo *m);
void stream_memo_free(struct stream_memo *m);

/* An entry's bytes: true when they are a whole entry for identity, with
** known->prefix pointing into buf (prefix_size bytes).  Pure; fuzzed
** (tests/fuzz/fuzz_memo.c). */
bool stream_memo_parse(const unsigned char *buf, size_t n, const char *identity, size_t prefix_size,
                       struct import_stream_known *known);
/* The bytes of an entry (malloc'd, *n long). */
unsigned char *stream_memo_build(const char *identity, const struct import_stream_known *k, size_t prefix_size,
                                 size_t *n);

#endif
