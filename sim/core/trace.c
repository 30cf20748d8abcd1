/* Binary trace files: header, streaming reader and buffered writer (traces/FORMAT.md). */
#include "trace.h"
#include "hash.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vmxsim reads records in place and needs a little-endian host"
#endif

#define WRITE_BUF_RECORDS 8192

static const char *const event_mnemonics[] = {
#define X(e, m, d) m,
  EVENT_TYPES(X)
#undef X
};

const char *event_mnemonic(unsigned type) {
  return type < EV_COUNT ? event_mnemonics[type] : "?";
}
int event_type_from_mnemonic(const char *m) {
  for (int i = 0; i < EV_COUNT; i++)
    if (strcmp(event_mnemonics[i], m) == 0) return i;
  return -1;
}

static inline const char *operands_invalid(const struct trace_event *ev) {
  if (ev->type == EV_TOUCH)            /* the commonest by far: before the switch */
    return ev->b >= 1 && ev->b <= TOUCH_PAGES_MAX ? NULL : "touch of 0 pages or more than 2^24";
  switch (ev->type) {
  case EV_APIC:
    if (ev->a > 0xff0 || (ev->a & 0xf)) return "local-APIC register offset not a multiple of 16 below 0x1000";
    return (ev->aux & ~APIC_AUX_WRITE) || (!(ev->aux & APIC_AUX_WRITE) && ev->b) ? "APIC read with a value or bad flags" : NULL;
  case EV_INIT: case EV_CR_WRITE: case EV_CR_READ:
    return ev->aux == 0 || ev->aux == 3 || ev->aux == 4 || ev->aux == 8 ? NULL : "control register not 0, 3, 4 or 8";
  case EV_DR_WRITE: case EV_DR_READ: return ev->aux <= 7 ? NULL : "debug register above 7";
  case EV_PTWRITE: return ev->aux >= 1 && ev->aux <= 4 ? NULL : "page-table level outside 1..4";
  case EV_IO: {
    unsigned size = IO_AUX_SIZE(ev->aux);
    return size == 1 || size == 2 || size == 4 ? NULL : "I/O size not 1, 2 or 4";
  }
  case EV_MEASURED:
    if (ev->aux & ~MEASURED_ALONE) return "aux other than 0 or 1 (alone)";
    if (ev->b & 0xffff0000u) return "b bits 31:16 not 0";
    return ev->cycles ? "cycles not 0 (a measured exit has no guest time)" : NULL;
  default: return NULL;
  }
}

const char *event_invalid(const struct trace_event *ev) { return operands_invalid(ev); }

const char *paging_name(unsigned paging) {
  switch (paging) {
  case PAGING_32: return "32";
  case PAGING_PAE: return "pae";
  case PAGING_64: return "64";
  }
  return NULL;
}
int paging_from_name(const char *s) {
  if (strcmp(s, "32") == 0) return PAGING_32;
  if (strcmp(s, "pae") == 0) return PAGING_PAE;
  if (strcmp(s, "64") == 0) return PAGING_64;
  return -1;
}

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const unsigned char *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }
static void put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(unsigned char *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

static int fail(char *err, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, 512, fmt, ap);
  va_end(ap);
  return rc;
}

/* Header layout (offsets in bytes), see traces/FORMAT.md. */
enum {
  H_MAGIC = 0, H_VERSION = 8, H_RECSIZE = 10, H_VCPUS = 12, H_PAGING = 14,
  H_FLAGS = 15, H_COUNT = 16, H_METALEN = 24, H_PAD = 28, H_WORKLOAD = 32
};

static int parse_header(struct trace_reader *r, const unsigned char *p, size_t got) {
  struct trace_header *h = &r->hdr;
  if (got < 8 || memcmp(p, TRACE_MAGIC, 8) != 0)
    return fail(r->err, EXIT_BADINPUT, "%s: byte 0: not a vmxsim trace (bad magic; "
                "text traces must first be assembled with 'vmxsim trace asm')", r->path);
  if (got < TRACE_HEADER_SIZE)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %zu: truncated header (%d bytes needed)",
                r->path, got, TRACE_HEADER_SIZE);
  h->version = get16(p + H_VERSION);
  h->record_size = get16(p + H_RECSIZE);
  h->vcpu_count = get16(p + H_VCPUS);
  h->paging = p[H_PAGING];
  h->event_count = get64(p + H_COUNT);
  h->metadata_len = get32(p + H_METALEN);
  memcpy(h->workload, p + H_WORKLOAD, TRACE_WORKLOAD_MAX);
  h->workload[TRACE_WORKLOAD_MAX] = 0;
  if (h->version > TRACE_VERSION)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: format version %u is newer than this "
                "vmxsim understands (%d); upgrade vmxsim", r->path, H_VERSION, h->version, TRACE_VERSION);
  if (h->version == 0)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: format version 0 is invalid", r->path, H_VERSION);
  if (h->record_size != sizeof(struct trace_event))
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: record size %u, expected %zu",
                r->path, H_RECSIZE, h->record_size, sizeof(struct trace_event));
  if (h->vcpu_count == 0 || h->vcpu_count > TRACE_VCPU_MAX)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: vCPU count %u out of range 1..%d",
                r->path, H_VCPUS, h->vcpu_count, TRACE_VCPU_MAX);
  if (!paging_name(h->paging))
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: unknown paging mode %u (32, 36=pae, 64)",
                r->path, H_PAGING, h->paging);
  if (h->metadata_len > TRACE_METADATA_MAX || h->metadata_len > r->file_len - TRACE_HEADER_SIZE)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: metadata length %u exceeds the file "
                "(%zu bytes) or the %u-byte limit", r->path, H_METALEN, h->metadata_len,
                r->file_len, TRACE_METADATA_MAX);
  r->types = h->version == 1 ? TRACE_V1_TYPES : EV_COUNT;
  h->pad = h->version >= 2 ? get32(p + H_PAD) : 0;        /* version 1: reserved, ignored */
  if (h->pad > r->file_len - TRACE_HEADER_SIZE - h->metadata_len)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: pad of %u bytes after the metadata exceeds the file (%zu bytes)",
                r->path, H_PAD, h->pad, r->file_len);
  r->data_off = TRACE_HEADER_SIZE + h->metadata_len + h->pad;
  size_t body = r->file_len - r->data_off;
  if (body % sizeof(struct trace_event) != 0)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %zu: truncated record (file ends %zu bytes "
                "into record %zu)", r->path, r->data_off + body / 24 * 24,
                body % sizeof(struct trace_event), body / sizeof(struct trace_event));
  if (body / sizeof(struct trace_event) != h->event_count)
    return fail(r->err, EXIT_BADINPUT, "%s: byte %d: header says %llu records but the file "
                "holds %zu (truncated or unfinished trace)", r->path, H_COUNT,
                (unsigned long long)h->event_count, body / sizeof(struct trace_event));
  return EXIT_OK;
}

/* Reads exactly n bytes at offset off; false on a short read or an error. */
static bool read_at(int fd, void *buf, size_t n, size_t off) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += (size_t)got;
  }
  return true;
}

static int read_header(struct trace_reader *r) {
  unsigned char hb[TRACE_HEADER_SIZE];
  size_t got = r->file_len < sizeof hb ? r->file_len : sizeof hb;
  if (!read_at(r->fd, hb, got, 0)) return fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  int rc = parse_header(r, hb, got);
  if (rc != EXIT_OK) return rc;
  r->hdr.metadata = malloc(r->hdr.metadata_len + 1);
  if (!r->hdr.metadata) return fail(r->err, EXIT_BADINPUT, "%s: out of memory", r->path);
  if (!read_at(r->fd, r->hdr.metadata, r->hdr.metadata_len, TRACE_HEADER_SIZE))
    return fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  r->hdr.metadata[r->hdr.metadata_len] = 0;
  return EXIT_OK;
}

/*
** The pipeline.  Chunk k holds records [k * CHUNK_RECORDS, ...) in buffer
** k % RING.  A producer reads a chunk and validates it: the read-ahead thread,
** or the replay's own thread when it needs the chunk.  With hashing, the
** hasher thread (or, when none can be started, the producer) hashes each chunk
** once it was read.  A buffer is reused once both the replay and the hasher
** are done with its chunk, so the file is read once whoever uses it.
*/
#define CHUNK_RECORDS 16384              /* 384 KiB */
#define RING 4
#define READ_AHEAD_MIN_CHUNKS 4          /* smaller traces are read by the replay's thread */

struct chunk {
  struct trace_event *buf;
  size_t n;                        /* records in the chunk */
  size_t valid;                    /* of which valid, from the first */
  bool read_failed;
  char err[512];                   /* why the read failed */
};

struct trace_pipe {
  const struct trace_reader *r;    /* path, fd, header: read-only while threads run */
  struct chunk ring[RING];
  uint64_t nchunks;
  /* guarded by mu once a thread runs */
  uint64_t produced, consumed, hashed;   /* chunks read and validated, released by the replay, hashed */
  bool quit;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool sync;                       /* mu and cv are initialised */
  pthread_t reader, hasher;
  bool reader_runs, hasher_runs;
  /* hashing */
  bool hashing;                    /* trace_hash_start was called before the first chunk */
  bool hash_broken;                /* a chunk could not be read: no hash */
  struct xxh64 state;
  /* the replay's side */
  uint64_t next;                   /* the next chunk to take */
  bool holding;                    /* it holds chunk next - 1 */
  bool bad_at_end;                 /* the record at r->end is bad */
  bool failed;                     /* the failure has been reported: stays failed */
};

static void lock(struct trace_pipe *p) { if (p->sync) pthread_mutex_lock(&p->mu); }
static void unlock(struct trace_pipe *p) { if (p->sync) pthread_mutex_unlock(&p->mu); }
static void wake(struct trace_pipe *p) { if (p->sync) pthread_cond_broadcast(&p->cv); }
static void wait_cv(struct trace_pipe *p) { pthread_cond_wait(&p->cv, &p->mu); }

/* Byte offset of record i, for messages. */
static size_t trace_record_offset(const struct trace_reader *r, uint64_t i) {
  return r->data_off + (size_t)i * sizeof(struct trace_event);
}

/* How a record's type is checked: unknown types are bad, a touch's page
** count is checked here, the other listed types and every type newer than
** version 1 (which a version-1 file cannot hold) by the slow path. */
enum type_check { TYPE_BAD, TYPE_PLAIN, TYPE_TOUCH, TYPE_OTHER };
static uint8_t type_checks[256];

static void init_type_checks(void) {
  for (unsigned t = 0; t < EV_COUNT; t++)
    type_checks[t] = t == EV_TOUCH ? TYPE_TOUCH
                   : (EVENT_OPERANDS_CHECKED >> t & 1) || t >= TRACE_V1_TYPES ? TYPE_OTHER : TYPE_PLAIN;
}

/* How many of the n records at ev are valid, from the first on, in a file
** whose version knows `types` event types. */
static size_t valid_prefix(const struct trace_event *ev, size_t n, unsigned nvcpu, unsigned types) {
  static_assert(EV_COUNT <= 64, "EVENT_OPERANDS_CHECKED is a 64-bit set");
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, init_type_checks);
  const struct trace_event *p = ev, *end = ev + n;
  for (; p != end; p++) {
    unsigned check = type_checks[p->type];
    if (p->vcpu >= nvcpu) break;
    if (check == TYPE_PLAIN) continue;
    if (check == TYPE_BAD || p->type >= types ||
        (check == TYPE_TOUCH ? p->b - 1 >= TOUCH_PAGES_MAX : operands_invalid(p) != NULL)) break;
  }
  return (size_t)(p - ev);
}

/* Reads and validates chunk k into its buffer (outside the lock). */
static void produce(struct trace_pipe *p, uint64_t k) {
  const struct trace_reader *r = p->r;
  struct chunk *c = &p->ring[k % RING];
  uint64_t first = k * CHUNK_RECORDS, left = r->hdr.event_count - first;
  c->n = left < CHUNK_RECORDS ? (size_t)left : CHUNK_RECORDS;
  c->valid = 0;
  errno = 0;
  c->read_failed = !read_at(r->fd, c->buf, c->n * sizeof *c->buf, trace_record_offset(r, first));
  if (c->read_failed)
    fail(c->err, EXIT_BADINPUT, "%s: byte %zu: read failed: %s", r->path, trace_record_offset(r, first),
         errno ? strerror(errno) : "file shrank");
  else
    c->valid = valid_prefix(c->buf, c->n, r->hdr.vcpu_count, r->types);
}

/* Whether chunk k's buffer is free: its previous chunk released and hashed. */
static bool slot_free(const struct trace_pipe *p, uint64_t k) {
  return k < RING || (p->consumed > k - RING && (!p->hashing || p->hashed > k - RING));
}

static void *read_ahead_main(void *arg) {
  struct trace_pipe *p = arg;
  for (uint64_t k = 0; k < p->nchunks; k++) {
    lock(p);
    while (!p->quit && !slot_free(p, k)) wait_cv(p);
    bool quit = p->quit;
    unlock(p);
    if (quit) break;
    produce(p, k);
    lock(p);
    p->produced = k + 1;
    wake(p);
    unlock(p);
    if (p->ring[k % RING].read_failed) break;
  }
  return NULL;
}

static void hash_chunk(struct trace_pipe *p, uint64_t k) {
  const struct chunk *c = &p->ring[k % RING];
  if (c->read_failed) p->hash_broken = true;
  else if (!p->hash_broken) xxh64_update(&p->state, c->buf, c->n * sizeof *c->buf);
}

static void *hasher_main(void *arg) {
  struct trace_pipe *p = arg;
  for (uint64_t k = 0; k < p->nchunks; k++) {
    lock(p);
    while (!p->quit && p->produced <= k) wait_cv(p);
    bool quit = p->quit;
    unlock(p);
    if (quit) break;
    hash_chunk(p, k);
    lock(p);
    p->hashed = k + 1;
    wake(p);
    unlock(p);
  }
  return NULL;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* Starts the threads the first chunk needs: the hasher when hashing, the
** read-ahead thread for a trace of several chunks on a multiprocessor. */
static void start_threads(struct trace_reader *r, struct trace_pipe *p) {
  bool ahead = r->read_ahead && p->nchunks >= READ_AHEAD_MIN_CHUNKS && online_cpus() > 1;
  if (!ahead && !p->hashing) return;
  if (pthread_mutex_init(&p->mu, NULL) != 0) return;
  if (pthread_cond_init(&p->cv, NULL) != 0) { pthread_mutex_destroy(&p->mu); return; }
  p->sync = true;
  if (p->hashing) p->hasher_runs = pthread_create(&p->hasher, NULL, hasher_main, p) == 0;
  if (ahead) p->reader_runs = pthread_create(&p->reader, NULL, read_ahead_main, p) == 0;
}

static void stop_threads(struct trace_pipe *p) {
  if (!p->sync) return;
  lock(p);
  p->quit = true;
  wake(p);
  unlock(p);
  if (p->reader_runs) pthread_join(p->reader, NULL);
  if (p->hasher_runs) pthread_join(p->hasher, NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  p->sync = p->reader_runs = p->hasher_runs = false;
}

/* The replay takes chunk k: waits for the read-ahead thread, or reads it. */
static struct chunk *take(struct trace_reader *r, struct trace_pipe *p, uint64_t k) {
  if (k == 0 && !p->sync) start_threads(r, p);
  lock(p);
  if (p->reader_runs) {
    while (p->produced <= k) wait_cv(p);
    unlock(p);
    return &p->ring[k % RING];
  }
  while (!slot_free(p, k)) wait_cv(p);
  unlock(p);
  produce(p, k);
  lock(p);
  p->produced = k + 1;
  if (p->hashing && !p->hasher_runs) {     /* no hasher thread: the producer hashes */
    hash_chunk(p, k);
    p->hashed = k + 1;
  }
  wake(p);
  unlock(p);
  return &p->ring[k % RING];
}

static void release(struct trace_pipe *p) {
  if (!p->holding) return;
  lock(p);
  p->consumed = p->next;
  wake(p);
  unlock(p);
  p->holding = false;
}

/* The message for the bad record at r->end. */
static void bad_record(struct trace_reader *r) {
  const struct trace_event *ev = r->end;
  uint64_t i = r->end_index;
  if (ev->type >= r->types || ev->vcpu >= r->hdr.vcpu_count) {
    bool later = ev->type >= r->types && ev->type < EV_COUNT;
    fail(r->err, EXIT_BADINPUT, "%s: byte %zu: record %llu: %s %u%s", r->path,
         trace_record_offset(r, i), (unsigned long long)i,
         ev->type >= r->types ? "unknown event type" : "vCPU beyond the header's count",
         ev->type >= r->types ? ev->type : ev->vcpu, later ? " in a version-1 file" : "");
    return;
  }
  fail(r->err, EXIT_BADINPUT, "%s: byte %zu: record %llu (%s): %s", r->path, trace_record_offset(r, i),
       (unsigned long long)i, event_mnemonic(ev->type), event_invalid(ev));
}

/* Makes the next block current (cur == end); false at the end of the trace
** or on a failure (r->err set). */
static bool next_block(struct trace_reader *r) {
  struct trace_pipe *p = r->pipe;
  if (!p || p->failed) return false;
  if (p->bad_at_end) {
    bad_record(r);
    p->failed = true;
    return false;
  }
  release(p);
  if (p->next == p->nchunks) return false;
  struct chunk *c = take(r, p, p->next++);
  p->holding = true;
  if (c->read_failed) {
    memcpy(r->err, c->err, sizeof r->err);
    p->failed = true;
    return false;
  }
  r->cur = c->buf;
  r->end = c->buf + c->valid;
  r->end_index += c->valid;
  p->bad_at_end = c->valid < c->n;
  if (c->valid == 0) return next_block(r);       /* the bad record comes first */
  return true;
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

/* Forgets the position, the chunks and the hash: the next record is record 0. */
static void reset(struct trace_reader *r) {
  struct trace_pipe *p = r->pipe;
  stop_threads(p);
  p->produced = p->consumed = p->hashed = p->next = 0;
  p->quit = p->holding = p->bad_at_end = p->failed = false;
  p->hashing = false;
  r->cur = r->end = NULL;
  r->end_index = 0;
  r->err[0] = 0;
}

void trace_rewind(struct trace_reader *r) {
  if (r->pipe) reset(r);
}

/* Hashes the bytes before the records: the header and the metadata. */
static bool hash_prefix(struct trace_reader *r, struct xxh64 *st) {
  enum { PIECE = 1 << 16 };
  unsigned char *tmp = malloc(PIECE);
  bool ok = tmp != NULL;
  for (size_t off = 0; ok && off < r->data_off;) {
    size_t n = r->data_off - off < PIECE ? r->data_off - off : PIECE;
    ok = read_at(r->fd, tmp, n, off);
    if (ok) xxh64_update(st, tmp, n);
    off += n;
  }
  free(tmp);
  return ok;
}

void trace_hash_start(struct trace_reader *r) {
  struct trace_pipe *p = r->pipe;
  if (!p || p->hashing || p->next || p->sync) return;
  xxh64_init(&p->state);
  p->hash_broken = false;
  p->hashing = hash_prefix(r, &p->state);
}

bool trace_hash(struct trace_reader *r, char hex[17]) {
  struct trace_pipe *p = r->pipe;
  if (!p || !p->hashing || p->failed || p->bad_at_end || trace_position(r) != r->hdr.event_count) return false;
  lock(p);
  while (p->hashed < p->nchunks) wait_cv(p);     /* every chunk was read, so each is hashed or being hashed */
  unlock(p);
  if (p->hash_broken) return false;
  snprintf(hex, 17, "%016llx", (unsigned long long)xxh64_final(&p->state));
  return true;
}

static int open_pipe(struct trace_reader *r) {
  struct trace_pipe *p = calloc(1, sizeof *p);
  if (!p) return fail(r->err, EXIT_BADINPUT, "%s: out of memory", r->path);
  r->pipe = p;
  p->r = r;
  p->nchunks = (r->hdr.event_count + CHUNK_RECORDS - 1) / CHUNK_RECORDS;
  size_t n = r->hdr.event_count < CHUNK_RECORDS ? (size_t)r->hdr.event_count : CHUNK_RECORDS;
  for (unsigned i = 0; i < RING && i < p->nchunks; i++)
    if (!(p->ring[i].buf = malloc(n * sizeof *p->ring[i].buf))) return fail(r->err, EXIT_BADINPUT, "%s: out of memory", r->path);
  return EXIT_OK;
}

int trace_open(struct trace_reader *r, const char *path) {
  memset(r, 0, sizeof *r);
  r->path = path;
  r->read_ahead = true;
  r->fd = open(path, O_RDONLY);
  if (r->fd < 0) return fail(r->err, EXIT_BADINPUT, "%s: %s", path, strerror(errno));
  struct stat st;
  int rc = EXIT_OK;
  if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) rc = fail(r->err, EXIT_BADINPUT, "%s: not a regular file", path);
  else if (st.st_size == 0) rc = fail(r->err, EXIT_BADINPUT, "%s: byte 0: empty file, not a vmxsim trace", path);
  if (rc == EXIT_OK) {
    r->file_len = (size_t)st.st_size;
    posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    rc = read_header(r);
  }
  if (rc == EXIT_OK) rc = open_pipe(r);
  if (rc != EXIT_OK) {
    char keep[sizeof r->err];
    memcpy(keep, r->err, sizeof keep);
    trace_close(r);
    memcpy(r->err, keep, sizeof keep);
  }
  return rc;
}

void trace_close(struct trace_reader *r) {
  if (r->pipe) {
    stop_threads(r->pipe);
    for (unsigned i = 0; i < RING; i++) free(r->pipe->ring[i].buf);
    free(r->pipe);
    r->pipe = NULL;
  }
  if (r->fd >= 0) close(r->fd);
  free(r->hdr.metadata);
  r->fd = -1;
  r->hdr.metadata = NULL;
  r->cur = r->end = NULL;
}

/* ---- writer ---- */

/* The lowest version that can hold what was written, so that a file without
** measured exits stays readable by version-1 readers. */
static void encode_header(const struct trace_header *h, unsigned char *p) {
  memset(p, 0, TRACE_HEADER_SIZE);
  memcpy(p + H_MAGIC, TRACE_MAGIC, 8);
  put16(p + H_VERSION, h->version ? h->version : 1);
  put16(p + H_RECSIZE, sizeof(struct trace_event));
  put16(p + H_VCPUS, h->vcpu_count);
  p[H_PAGING] = h->paging;
  put64(p + H_COUNT, h->event_count);
  put32(p + H_METALEN, h->metadata_len);
  put32(p + H_PAD, h->pad);
  memcpy(p + H_WORKLOAD, h->workload, strnlen(h->workload, TRACE_WORKLOAD_MAX));
}

int trace_create(struct trace_writer *w, const char *path, const char *workload,
                 unsigned vcpu_count, unsigned paging, const char *metadata) {
  memset(w, 0, sizeof *w);
  if (vcpu_count == 0 || vcpu_count > TRACE_VCPU_MAX)
    return fail(w->err, EXIT_BADINPUT, "vCPU count %u out of range 1..%d", vcpu_count, TRACE_VCPU_MAX);
  if (!paging_name(paging))
    return fail(w->err, EXIT_BADINPUT, "unknown paging mode %u", paging);
  size_t mlen = metadata ? strlen(metadata) : 0;
  if (mlen > TRACE_METADATA_MAX)
    return fail(w->err, EXIT_BADINPUT, "metadata of %zu bytes exceeds the limit", mlen);
  w->hdr.vcpu_count = (uint16_t)vcpu_count;
  w->hdr.paging = (uint8_t)paging;
  w->hdr.metadata_len = (uint32_t)mlen;
  snprintf(w->hdr.workload, sizeof w->hdr.workload, "%s", workload ? workload : "");
  w->path = strdup(path);
  w->buf = malloc(WRITE_BUF_RECORDS * sizeof *w->buf);
  if (!w->path || !w->buf) { trace_abort(w); return fail(w->err, EXIT_INTERNAL, "out of memory"); }
  w->f = fopen(path, "wb");
  if (!w->f) {
    int e = errno;
    free(w->path); free(w->buf); w->path = NULL; w->buf = NULL;
    return fail(w->err, EXIT_BADINPUT, "%s: %s", path, strerror(e));
  }
  unsigned char hb[TRACE_HEADER_SIZE];
  encode_header(&w->hdr, hb);
  if (fwrite(hb, 1, sizeof hb, w->f) != sizeof hb || (mlen && fwrite(metadata, 1, mlen, w->f) != mlen)) {
    trace_abort(w);
    return fail(w->err, EXIT_BADINPUT, "%s: write failed: %s", path, strerror(errno));
  }
  return EXIT_OK;
}

static int flush_buf(struct trace_writer *w) {
  if (w->nbuf && fwrite(w->buf, sizeof *w->buf, w->nbuf, w->f) != w->nbuf)
    return fail(w->err, EXIT_BADINPUT, "%s: write failed: %s", w->path, strerror(errno));
  w->nbuf = 0;
  return EXIT_OK;
}

int trace_write(struct trace_writer *w, const struct trace_event *ev) {
  if (ev->vcpu >= w->hdr.vcpu_count) {
    if (ev->vcpu >= TRACE_VCPU_MAX)
      return fail(w->err, EXIT_BADINPUT, "vCPU %u beyond the limit of %d", ev->vcpu, TRACE_VCPU_MAX);
    w->hdr.vcpu_count = (uint16_t)(ev->vcpu + 1);   /* the header grows to cover it */
  }
  if (ev->type >= TRACE_V1_TYPES) w->hdr.version = TRACE_VERSION;
  w->buf[w->nbuf++] = *ev;
  w->hdr.event_count++;
  return w->nbuf == WRITE_BUF_RECORDS ? flush_buf(w) : EXIT_OK;
}

int trace_finish(struct trace_writer *w) {
  unsigned char hb[TRACE_HEADER_SIZE];
  int rc = flush_buf(w);
  if (rc == EXIT_OK) {
    encode_header(&w->hdr, hb);
    if (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(hb, 1, sizeof hb, w->f) != sizeof hb)
      rc = fail(w->err, EXIT_BADINPUT, "%s: write failed: %s", w->path, strerror(errno));
  }
  if (fclose(w->f) != 0 && rc == EXIT_OK)
    rc = fail(w->err, EXIT_BADINPUT, "%s: write failed: %s", w->path, strerror(errno));
  w->f = NULL;
  if (rc != EXIT_OK) remove(w->path);
  free(w->path); free(w->buf);
  w->path = NULL; w->buf = NULL;
  return rc;
}

int trace_create_reserved(struct trace_writer *w, const char *path, size_t reserve) {
  int rc = trace_create(w, path, NULL, 1, PAGING_64, NULL);
  if (rc == EXIT_OK && fseeko(w->f, (off_t)reserve, SEEK_SET) != 0) {
    trace_abort(w);
    return fail(w->err, EXIT_BADINPUT, "%s: seek failed: %s", path, strerror(errno));
  }
  w->reserve = reserve;
  return rc;
}

int trace_finish_reserved(struct trace_writer *w, const char *workload, unsigned vcpu_count, unsigned paging,
                          const char *metadata, const struct trace_event *head, size_t nhead) {
  size_t mlen = metadata ? strlen(metadata) : 0, used = TRACE_HEADER_SIZE + mlen + nhead * sizeof *head;
  int rc = flush_buf(w);
  if (rc == EXIT_OK && (used > w->reserve || vcpu_count == 0 || vcpu_count > TRACE_VCPU_MAX || !paging_name(paging)))
    rc = fail(w->err, EXIT_INTERNAL, "%s: %zu bytes of header, metadata and initial records do not fit the %zu "
              "reserved (or a bad vCPU count or paging mode)", w->path, used, w->reserve);
  if (rc == EXIT_OK) {
    if (vcpu_count > w->hdr.vcpu_count) w->hdr.vcpu_count = (uint16_t)vcpu_count;
    w->hdr.paging = (uint8_t)paging;
    w->hdr.metadata_len = (uint32_t)mlen;
    w->hdr.pad = (uint32_t)(w->reserve - used);
    if (w->hdr.pad) w->hdr.version = TRACE_VERSION;    /* the pad field is version 2's */
    w->hdr.event_count += nhead;
    snprintf(w->hdr.workload, sizeof w->hdr.workload, "%s", workload ? workload : "");
    if (fseeko(w->f, (off_t)(w->reserve - nhead * sizeof *head), SEEK_SET) != 0 ||
        fwrite(head, sizeof *head, nhead, w->f) != nhead ||
        fseeko(w->f, TRACE_HEADER_SIZE, SEEK_SET) != 0 || (mlen && fwrite(metadata, 1, mlen, w->f) != mlen))
      rc = fail(w->err, EXIT_BADINPUT, "%s: write failed: %s", w->path, strerror(errno));
  }
  if (rc != EXIT_OK) {
    trace_abort(w);
    return rc;
  }
  return trace_finish(w);                              /* the header, then close */
}

void trace_abort(struct trace_writer *w) {
  if (w->f) { fclose(w->f); remove(w->path); }
  free(w->path); free(w->buf);
  w->f = NULL; w->path = NULL; w->buf = NULL;
}
