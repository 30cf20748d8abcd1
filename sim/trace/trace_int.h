/*
** What the binary trace's files share: the header's layout and its
** little-endian fields (traces/FORMAT.md), for the reader (trace.c,
** trace_pipe.c) and the writer (trace_write.c); and the reader's pipe, which
** trace.c opens, hashes and rewinds and trace_pipe.c runs.  Private to those
** three files.
*/
#ifndef VMXSIM_TRACE_INT_H
#define VMXSIM_TRACE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace.h"
#include "sim/base/hugemem.h"

/* Header layout (offsets in bytes), see traces/FORMAT.md. */
enum {
  H_MAGIC = 0, H_VERSION = 8, H_RECSIZE = 10, H_VCPUS = 12, H_PAGING = 14,
  H_FLAGS = 15, H_COUNT = 16, H_METALEN = 24, H_PAD = 28, H_WORKLOAD = 32
};

static inline uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t get32(const unsigned char *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static inline uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }
static inline void put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void put32(unsigned char *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static inline void put64(unsigned char *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

/* Formats a message into err (the 512 bytes of a reader's or writer's err)
** and returns rc. */
int trace_fail(char *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- the reader's pipe: trace.c and trace_pipe.c ---- */

/*
** The pipeline.  Chunk k holds records [k * CHUNK_RECORDS, ...) in buffer
** k % RING.  A producer reads a chunk: the read-ahead thread, or the replay's
** own thread when it needs the chunk; the producer validates it, a piece at a
** time, and the replay takes pieces too rather than wait.  A regular file is read
** with pread (and, for trace_hash_start, its chunks are hashed in order by
** whichever thread would otherwise wait, or by a hasher thread when the
** replay reads for itself); a stream is read in order and hashed as it is
** read.  A buffer is reused once its chunk is released and hashed, so the
** file is read once whoever uses it.  A failure (a bad record, a read error,
** a truncated stream) ends its chunk's valid records: the replay gets every
** record before it, then the message.
*/
#define CHUNK_RECORDS 16384              /* 384 KiB */
#define RING 4

struct chunk {
  struct trace_event *buf;
  size_t n;                        /* records read */
  size_t valid;                    /* of which valid, from the first (once checked) */
  bool fail;                       /* after the valid records: a failure, err says it */
  bool read_fail;                  /* the read itself failed: fixed when the chunk is published, so
                                   ** the hash may read it outside the lock (fail may still change) */
  bool last;                       /* nothing follows (the end, or a failure) */
  bool read_done;                  /* with a read-ahead thread: the read of the chunk claimed last is over */
  uint64_t count;                  /* last: the trace's record count (a count-unknown stream learns it) */
  /* the check of its records, a piece at a time, by either thread (under mu);
  ** once published, checked == pieces says the replay may take it */
  size_t pieces, claimed, checked, first_bad;
  char err[512];
};

struct trace_pipe {
  struct trace_reader *r;          /* the producer uses its file, stream and stream hash */
  struct chunk ring[RING];
  bool ring_huge;                  /* the ring's buffers are ring_arena's (else malloc's) */
  struct huge_arena ring_arena;
  uint64_t nchunks;                /* a regular file's chunks (at least 1); a stream's last chunk says */
  /* guarded by mu once a thread runs */
  uint64_t produced, consumed, hashed;   /* chunks read (all before too), released by the replay, hashed */
  uint64_t claimed;                /* with a read-ahead thread: chunks a thread has begun to read */
  bool quit;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool sync;                       /* mu and cv are initialised */
  pthread_t reader, hasher;
  bool reader_runs, hasher_runs;
  /* a regular file's hash (trace_hash_start): by the hasher thread, or with
  ** a read-ahead thread by whichever of the two threads would wait */
  bool hashing, hash_broken;
  bool hash_busy;                  /* a thread is hashing chunk `hashed` */
  struct xxh64 state;
  /* the replay's side */
  uint64_t next;                   /* the next chunk to take */
  bool holding;                    /* it holds chunk next - 1 */
  bool fail_pending;               /* the held chunk's failure comes after its valid records */
  bool done;                       /* the last chunk was taken */
  bool failed;                     /* the failure has been reported: stays failed */
};

/* trace_pipe.c.  The lock is taken only once a thread runs (sync); the hash
** of a regular file waits for its last chunks as the replay would, by
** hashing them itself; a rewind and a close end the threads first. */
void trace_pipe_lock(struct trace_pipe *p);
void trace_pipe_unlock(struct trace_pipe *p);
void trace_pipe_wait_cv(struct trace_pipe *p);
bool trace_pipe_help_hash(struct trace_pipe *p);
void trace_pipe_stop_threads(struct trace_pipe *p);

/* trace.c: how the pipe reads a regular file and what a valid record is
** (trace_record_offset, in trace.h, where a record is for messages). */
bool trace_read_at(int fd, void *buf, size_t n, size_t off);
/* Up to n bytes of a stream into buf, hashed unless trace_hash_skip said not;
** the count, or -1 with the message in err (the header's reads and the pipe's). */
ssize_t trace_stream_read(struct trace_reader *r, void *buf, size_t n, char *err);
size_t trace_valid_prefix(const struct trace_event *ev, size_t n, unsigned nvcpu, unsigned types);
void trace_bad_record(const struct trace_reader *r, const struct trace_event *ev, uint64_t i, char *err);

#endif
