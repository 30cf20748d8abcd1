/* The binary trace reader's pipe (its design: trace_int.h): the ring of chunks
** the records are read into, the read-ahead and hasher threads, and the
** replay's side, which takes the chunks in order and hands their records out a
** block at a time.  Apart from trace.c, which opens the trace, parses its
** header and says which records are valid, so that the threads and their
** locking are read in one file and the format in another. */
#include "trace.h"
#include "trace_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_AHEAD_MIN_CHUNKS 4          /* smaller files are read by the replay's thread */

void trace_pipe_lock(struct trace_pipe *p) { if (p->sync) pthread_mutex_lock(&p->mu); }
void trace_pipe_unlock(struct trace_pipe *p) { if (p->sync) pthread_mutex_unlock(&p->mu); }
static void wake(struct trace_pipe *p) { if (p->sync) pthread_cond_broadcast(&p->cv); }
void trace_pipe_wait_cv(struct trace_pipe *p) { pthread_cond_wait(&p->cv, &p->mu); }

/* Chunk k of a regular file, with pread. */
static void read_file_chunk(struct trace_pipe *p, struct chunk *c, uint64_t k) {
  const struct trace_reader *r = p->r;
  uint64_t first = k * CHUNK_RECORDS, left = r->hdr.event_count - first;
  c->n = left < CHUNK_RECORDS ? (size_t)left : CHUNK_RECORDS;
  c->last = k + 1 == p->nchunks;
  c->count = r->hdr.event_count;
  errno = 0;
  if (trace_read_at(r->fd, c->buf, c->n * sizeof *c->buf, trace_record_offset(r, first))) return;
  trace_fail(c->err, EXIT_BADINPUT, "%s: byte %zu: read failed: %s", r->path, trace_record_offset(r, first),
       errno ? strerror(errno) : "file shrank");
  c->n = 0;
  c->fail = c->last = true;
}

/* Chunk k of a stream: its records in order; at its end the checks of the
** record count against the header's (or the count, when it said unknown). */
static void read_stream_chunk(struct trace_pipe *p, struct chunk *c, uint64_t k) {
  struct trace_reader *r = p->r;
  uint64_t first = k * CHUNK_RECORDS;
  size_t want = CHUNK_RECORDS;
  if (r->count_known && r->hdr.event_count - first < want) want = (size_t)(r->hdr.event_count - first);
  ssize_t got = want ? trace_stream_read(r, c->buf, want * sizeof *c->buf, c->err) : 0;
  if (got < 0) {
    c->fail = c->last = true;
    return;
  }
  size_t whole = (size_t)got / sizeof *c->buf, part = (size_t)got % sizeof *c->buf;
  c->n = whole;
  uint64_t total = first + whole;
  c->count = total;
  if (part) {
    trace_fail(c->err, EXIT_BADINPUT, "%s: byte %zu: truncated record (the input ends %zu bytes into record %llu)",
         r->path, trace_record_offset(r, total), part, (unsigned long long)total);
    c->fail = c->last = true;
    return;
  }
  if ((size_t)got == want * sizeof *c->buf && (!r->count_known || total < r->hdr.event_count)) return;
  c->last = true;                     /* the end of the input, or of the records the header announced */
  if (!r->count_known) return;
  if (total < r->hdr.event_count) {
    trace_fail(c->err, EXIT_BADINPUT, "%s: byte %d: header says %llu records but the input holds %llu (truncated or "
         "unfinished trace)", r->path, H_COUNT, (unsigned long long)r->hdr.event_count, (unsigned long long)total);
    c->fail = true;
    return;
  }
  unsigned char extra;                /* nothing may follow the announced records */
  got = trace_stream_read(r, &extra, 1, c->err);
  if (got > 0)
    trace_fail(c->err, EXIT_BADINPUT, "%s: byte %zu: data after the %llu records the header announces", r->path,
         trace_record_offset(r, r->hdr.event_count), (unsigned long long)r->hdr.event_count);
  c->fail = got != 0;
}

/* Reads chunk k into its buffer (outside the lock); its records are checked
** afterwards, a piece at a time (check_pieces). */
#define CHECK_PIECE 1024                 /* records: 24 KiB, still in the cache after the read */
static void read_chunk(struct trace_pipe *p, uint64_t k) {
  const struct trace_reader *r = p->r;
  struct chunk *c = &p->ring[k % RING];
  c->n = c->valid = 0;
  c->fail = c->last = false;
  if (r->z) read_stream_chunk(p, c, k);
  else read_file_chunk(p, c, k);
  c->read_fail = c->fail;
  c->pieces = (c->n + CHECK_PIECE - 1) / CHECK_PIECE;
  c->claimed = c->checked = 0;
  c->first_bad = c->n;
}

/* With the lock held, once chunk k's records are all checked: a bad record
** comes before any failure after it. */
static void finish_chunk(struct trace_pipe *p, struct chunk *c, uint64_t k) {
  c->valid = c->first_bad;
  if (c->valid < c->n) {
    trace_bad_record(p->r, &c->buf[c->valid], k * CHUNK_RECORDS + c->valid, c->err);
    c->fail = c->last = true;
  }
  wake(p);
}

/* With the lock held (released while checking): checks the pieces of chunk
** k that no thread has claimed yet; true if it checked any.  The read-ahead
** thread checks what it read, and the replay, rather than wait for it,
** takes pieces too, so the two share the check when the replay is the
** faster (an EPT replay of system calls) and the replay checks nothing when
** it is the slower. */
static bool check_pieces(struct trace_pipe *p, struct chunk *c, uint64_t k) {
  const struct trace_reader *r = p->r;
  bool did = false;
  while (c->claimed < c->pieces) {
    size_t from = c->claimed++ * CHECK_PIECE, n = c->n - from < CHECK_PIECE ? c->n - from : CHECK_PIECE;
    trace_pipe_unlock(p);
    size_t v = trace_valid_prefix(c->buf + from, n, r->hdr.vcpu_count, r->types);
    trace_pipe_lock(p);
    if (v < n && from + v < c->first_bad) c->first_bad = from + v;
    if (++c->checked == c->pieces) finish_chunk(p, c, k);
    did = true;
  }
  return did;
}

/* With the lock held: chunk k has been read; its check begins. */
static void publish(struct trace_pipe *p, uint64_t k) {
  p->produced = k + 1;
  if (!p->ring[k % RING].pieces) finish_chunk(p, &p->ring[k % RING], k);
  wake(p);
}

/* Whether chunk k's buffer is free: its previous chunk released and hashed. */
static bool slot_free(const struct trace_pipe *p, uint64_t k) {
  return k < RING || (p->consumed > k - RING && (!p->hashing || p->hashed > k - RING));
}

/* With the lock held: claims the next chunk to read when its buffer is
** free; its index, or UINT64_MAX.  Only the read-ahead thread reads a stream
** (in order); both threads read a regular file's chunks, so that a replay
** faster than the reading shares it (two preads from the page cache move
** more than one). */
static bool all_claimed(const struct trace_pipe *p) { return !p->r->z && p->claimed >= p->nchunks; }

static uint64_t claim_chunk(struct trace_pipe *p) {
  uint64_t k = p->claimed;
  if (all_claimed(p) || !slot_free(p, k)) return UINT64_MAX;
  p->claimed = k + 1;
  p->ring[k % RING].read_done = false;
  return k;
}

/* With the lock held: chunk k has been read; the chunks read in a row from
** `produced` on are published. */
static void read_done(struct trace_pipe *p, uint64_t k) {
  p->ring[k % RING].read_done = true;
  while (p->produced < p->claimed && p->ring[p->produced % RING].read_done) publish(p, p->produced);
}

static void *read_ahead_main(void *arg) {
  struct trace_pipe *p = arg;
  for (;;) {
    trace_pipe_lock(p);
    uint64_t k = UINT64_MAX;
    while (!p->quit && !all_claimed(p) && (k = claim_chunk(p)) == UINT64_MAX)
      if (!trace_pipe_help_hash(p)) trace_pipe_wait_cv(p);
    trace_pipe_unlock(p);
    if (k == UINT64_MAX) break;           /* told to stop, or every chunk is being read */
    read_chunk(p, k);
    struct chunk *c = &p->ring[k % RING];
    trace_pipe_lock(p);
    read_done(p, k);
    check_pieces(p, c, k);
    bool last = c->last;                  /* the buffer is not reused before this thread reads again */
    trace_pipe_unlock(p);
    if (last) break;
  }
  return NULL;
}

/* With the lock held, by the replay when it would wait: reads the next
** chunk of a regular file itself; true if it did. */
static bool help_read(struct trace_pipe *p) {
  if (p->r->z) return false;
  uint64_t k = claim_chunk(p);
  if (k == UINT64_MAX) return false;
  trace_pipe_unlock(p);
  read_chunk(p, k);
  trace_pipe_lock(p);
  read_done(p, k);
  wake(p);
  return true;
}

/* A regular file's chunk into its hash. */
static void hash_chunk(struct trace_pipe *p, uint64_t k) {
  const struct chunk *c = &p->ring[k % RING];
  if (c->read_fail && !c->n) p->hash_broken = true;
  else if (!p->hash_broken) xxh64_update(&p->state, c->buf, c->n * sizeof *c->buf);
}

/* With the lock held, by a thread that would otherwise wait: hashes the
** next chunk read, if no thread is hashing and there is one; true if it did.
** On two processors this beats a third thread, which would take its time
** from the replay or the read-ahead thread, however idle the other is. */
bool trace_pipe_help_hash(struct trace_pipe *p) {
  if (!p->hashing || p->hasher_runs || p->hash_busy || p->hashed >= p->produced) return false;
  uint64_t k = p->hashed;
  p->hash_busy = true;
  trace_pipe_unlock(p);
  hash_chunk(p, k);
  trace_pipe_lock(p);
  p->hashed = k + 1;
  p->hash_busy = false;
  wake(p);
  return true;
}

static void *hasher_main(void *arg) {
  struct trace_pipe *p = arg;
  for (uint64_t k = 0; k < p->nchunks; k++) {
    trace_pipe_lock(p);
    while (!p->quit && p->produced <= k) trace_pipe_wait_cv(p);
    bool quit = p->quit;
    trace_pipe_unlock(p);
    if (quit) break;
    hash_chunk(p, k);
    bool last = p->ring[k % RING].last;   /* before the buffer is released to the next chunk */
    trace_pipe_lock(p);
    p->hashed = k + 1;
    wake(p);
    trace_pipe_unlock(p);
    if (last) break;
  }
  return NULL;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* Starts the threads the first chunk needs: the read-ahead thread for a
** stream or a file of several chunks on a multiprocessor (it and the replay
** then share the hashing), else the hasher when hashing. */
static void start_threads(struct trace_reader *r, struct trace_pipe *p) {
  bool ahead = r->read_ahead && (r->z || p->nchunks >= READ_AHEAD_MIN_CHUNKS) && online_cpus() > 1;
  if (!ahead && !p->hashing) return;
  if (pthread_mutex_init(&p->mu, NULL) != 0) return;
  if (pthread_cond_init(&p->cv, NULL) != 0) { pthread_mutex_destroy(&p->mu); return; }
  p->sync = true;
  if (ahead) p->reader_runs = pthread_create(&p->reader, NULL, read_ahead_main, p) == 0;
  if (p->hashing && !p->reader_runs) p->hasher_runs = pthread_create(&p->hasher, NULL, hasher_main, p) == 0;
}

void trace_pipe_stop_threads(struct trace_pipe *p) {
  if (!p->sync) return;
  trace_pipe_lock(p);
  p->quit = true;
  wake(p);
  trace_pipe_unlock(p);
  if (p->reader_runs) pthread_join(p->reader, NULL);
  if (p->hasher_runs) pthread_join(p->hasher, NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  p->sync = p->reader_runs = p->hasher_runs = false;
}

/* The replay takes chunk k: waits for the read-ahead thread, or reads it. */
static struct chunk *take(struct trace_reader *r, struct trace_pipe *p, uint64_t k) {
  if (k == 0 && !p->sync) start_threads(r, p);
  trace_pipe_lock(p);
  struct chunk *c = &p->ring[k % RING];
  if (p->reader_runs) {
    while (p->produced <= k || c->checked < c->pieces)
      if (!(p->produced > k && check_pieces(p, c, k)) && !trace_pipe_help_hash(p) && !help_read(p)) trace_pipe_wait_cv(p);
    trace_pipe_unlock(p);
    return c;
  }
  while (!slot_free(p, k)) trace_pipe_wait_cv(p);
  trace_pipe_unlock(p);
  read_chunk(p, k);
  trace_pipe_lock(p);
  publish(p, k);
  check_pieces(p, c, k);
  if (p->hashing && !p->hasher_runs) {     /* no other thread: the producer hashes */
    hash_chunk(p, k);
    p->hashed = k + 1;
  }
  wake(p);
  trace_pipe_unlock(p);
  return c;
}

static void release(struct trace_pipe *p) {
  if (!p->holding) return;
  trace_pipe_lock(p);
  p->consumed = p->next;
  wake(p);
  trace_pipe_unlock(p);
  p->holding = false;
}

/* Makes the next block current (cur == end); false at the end of the trace
** or on a failure (r->err set). */
static bool next_block(struct trace_reader *r) {
  struct trace_pipe *p = r->pipe;
  if (!p || p->failed) return false;
  if (p->fail_pending) {
    memcpy(r->err, p->ring[(p->next - 1) % RING].err, sizeof r->err);
    p->failed = true;
    return false;
  }
  if (p->done) return false;
  release(p);
  struct chunk *c = take(r, p, p->next++);
  p->holding = true;
  r->cur = c->buf;
  r->end = c->buf + c->valid;
  r->end_index += c->valid;
  p->fail_pending = c->fail;
  if (c->last) {
    p->done = true;
    if (!c->fail) {                   /* a count-unknown stream knows its count now */
      r->hdr.event_count = c->count;
      r->count_known = true;
    }
  }
  return c->valid ? true : next_block(r);
}

const struct trace_event *trace_next_slow(struct trace_reader *r) {
  return next_block(r) ? r->cur++ : NULL;
}

size_t trace_next_block(struct trace_reader *r, const struct trace_event **evs, size_t max) {
  if (r->cur == r->end && !next_block(r)) return 0;
  size_t n = (size_t)(r->end - r->cur);
  if (n > max) n = max;
  *evs = r->cur;
  r->cur += n;
  return n;
}

int trace_failed(const struct trace_reader *r) { return r->err[0] != 0; }

bool trace_done(const struct trace_reader *r) {
  const struct trace_pipe *p = r->pipe;
  return p && p->done && !p->fail_pending && !p->failed && r->cur == r->end && !trace_failed(r);
}
