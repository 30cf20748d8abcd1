/* A file read ahead in order, a chunk at a time, by a thread of its own.
**
** A summary's importer thread is the one its views' thread waits for, and a
** sixth of its time was the kernel's copy of the file into its buffer (pread);
** the views' thread, idle a fifth of the time, has room for that copy, so a
** third thread does it, on whichever processor is free (docs/performance.md).
** Each chunk comes with `room` writable bytes before it, where the reader puts
** what it had not finished of the chunk before (a record cut by the chunk's
** end), so that records are read in place. */
#ifndef VMXSIM_IMPORT_AHEAD_H
#define VMXSIM_IMPORT_AHEAD_H

#include <stddef.h>
#include <sys/types.h>

struct ahead;
/* Starts reading fd's bytes [0, len) in chunks of `chunk` bytes; NULL when no
** thread can be started (the caller reads for itself). */
struct ahead *ahead_start(int fd, size_t len, size_t chunk, size_t room);
/* The next chunk, *p its first byte (with `room` bytes before it to write):
** its length; 0 after the last; -1 when the file could not be read (short,
** or an error).  The chunk taken before stays as it is until ahead_release. */
ssize_t ahead_take(struct ahead *a, unsigned char **p);
/* The oldest chunk taken and not released is given back, to be read into again. */
void ahead_release(struct ahead *a);
/* Stops the thread (wherever it is) and frees everything. */
void ahead_stop(struct ahead *a);

#endif
