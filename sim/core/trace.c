/* Binary trace files: the header and the streaming reader, with its
** read-ahead and hashing threads (traces/FORMAT.md); the writer is
** trace_write.c. */
#include "trace.h"
#include "trace_int.h"
#include "zin.h"

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
    return ev->b >= 1 && ev->b <= TOUCH_PAGES_MAX ? NULL : "touch of 0 pages or more than " TOUCH_PAGES_MAX_TEXT;
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


int trace_fail(char *err, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, 512, fmt, ap);
  va_end(ap);
  return rc;
}

/* The header's own fields; the checks against the file's size are file_size_checks'. */
static int parse_header(struct trace_reader *r, const unsigned char *p, size_t got) {
  struct trace_header *h = &r->hdr;
  if (got < 8 || memcmp(p, TRACE_MAGIC, 8) != 0)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte 0: not a vmxsim trace (bad magic; "
                "text traces must first be assembled with 'vmxsim trace asm'%s)", r->path,
                r->piped ? "; a recording on standard input or a pipe needs --input-format" : "");
  if (got < TRACE_HEADER_SIZE)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %zu: truncated header (%d bytes needed)",
                r->path, got, TRACE_HEADER_SIZE);
  h->version = get16(p + H_VERSION);
  h->record_size = get16(p + H_RECSIZE);
  h->vcpu_count = get16(p + H_VCPUS);
  h->paging = p[H_PAGING];
  h->flags = p[H_FLAGS];
  h->event_count = get64(p + H_COUNT);
  h->metadata_len = get32(p + H_METALEN);
  memcpy(h->workload, p + H_WORKLOAD, TRACE_WORKLOAD_MAX);
  h->workload[TRACE_WORKLOAD_MAX] = 0;
  if (h->version > TRACE_VERSION)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: format version %u is newer than this "
                "vmxsim understands (%d); upgrade vmxsim", r->path, H_VERSION, h->version, TRACE_VERSION);
  if (h->version == 0)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: format version 0 is invalid", r->path, H_VERSION);
  if (h->record_size != sizeof(struct trace_event))
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: record size %u, expected %zu",
                r->path, H_RECSIZE, h->record_size, sizeof(struct trace_event));
  if (h->vcpu_count == 0 || h->vcpu_count > TRACE_VCPU_MAX)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: vCPU count %u out of range 1..%d",
                r->path, H_VCPUS, h->vcpu_count, TRACE_VCPU_MAX);
  if (!paging_name(h->paging))
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: unknown paging mode %u (32, 36=pae, 64)",
                r->path, H_PAGING, h->paging);
  if (r->z && h->metadata_len > TRACE_METADATA_MAX)     /* a file: file_size_checks says it with the size */
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: metadata length %u exceeds the %u-byte limit",
                r->path, H_METALEN, h->metadata_len, TRACE_METADATA_MAX);
  /* Flags mean something from version 2 on; version 1 wrote 0 and ignored them. */
  r->count_known = !(h->version >= 2 && (h->flags & TRACE_FLAG_COUNT_UNKNOWN));
  if (!r->count_known && h->event_count != 0)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: record count %llu in a header whose flags say the count "
                "is unknown (it must be 0)", r->path, H_COUNT, (unsigned long long)h->event_count);
  r->types = h->version == 1 ? TRACE_V1_TYPES : EV_COUNT;
  h->pad = h->version >= 2 ? get32(p + H_PAD) : 0;        /* version 1: reserved, ignored */
  r->data_off = TRACE_HEADER_SIZE + (size_t)h->metadata_len + h->pad;
  return EXIT_OK;
}

/* A regular file's size must hold the metadata and whole records, as many as
** the header says (or, when it does not know, that many become the count). */
static int file_size_checks(struct trace_reader *r) {
  struct trace_header *h = &r->hdr;
  if (h->metadata_len > TRACE_METADATA_MAX || h->metadata_len > r->file_len - TRACE_HEADER_SIZE)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: metadata length %u exceeds the file "
                "(%zu bytes) or the %u-byte limit", r->path, H_METALEN, h->metadata_len,
                r->file_len, TRACE_METADATA_MAX);
  if (h->pad > r->file_len - TRACE_HEADER_SIZE - h->metadata_len)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: pad of %u bytes after the metadata exceeds the file (%zu bytes)",
                r->path, H_PAD, h->pad, r->file_len);
  size_t body = r->file_len - r->data_off;
  if (body % sizeof(struct trace_event) != 0)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %zu: truncated record (file ends %zu bytes "
                "into record %zu)", r->path, r->data_off + body / 24 * 24,
                body % sizeof(struct trace_event), body / sizeof(struct trace_event));
  if (!r->count_known) {
    h->event_count = body / sizeof(struct trace_event);
    r->count_known = true;
  }
  if (body / sizeof(struct trace_event) != h->event_count)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: header says %llu records but the file "
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

static int alloc_buffers(struct trace_reader *r) {
  free(r->hdr.metadata);
  r->hdr.metadata = malloc(r->hdr.metadata_len + 1);
  if (!r->hdr.metadata) return trace_fail(r->err, EXIT_INTERNAL, "%s: out of memory", r->path);
  return EXIT_OK;
}

static int read_header(struct trace_reader *r) {
  unsigned char hb[TRACE_HEADER_SIZE];
  size_t got = r->file_len < sizeof hb ? r->file_len : sizeof hb;
  if (!read_at(r->fd, hb, got, 0)) return trace_fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  int rc = parse_header(r, hb, got);
  if (rc == EXIT_OK) rc = file_size_checks(r);
  if (rc == EXIT_OK) rc = alloc_buffers(r);
  if (rc != EXIT_OK) return rc;
  if (!read_at(r->fd, r->hdr.metadata, r->hdr.metadata_len, TRACE_HEADER_SIZE))
    return trace_fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  r->hdr.metadata[r->hdr.metadata_len] = 0;
  return EXIT_OK;
}

/* ---- streams: standard input, pipes, compressed files ---- */

/* Reads up to n bytes of the stream, hashing them; the count, or -1 with r->err set. */
static ssize_t stream_read(struct trace_reader *r, void *buf, size_t n) {
  ssize_t got = zin_read(r->z, buf, n);
  if (got < 0) {
    trace_fail(r->err, EXIT_BADINPUT, "%s", r->z->err);
    return -1;
  }
  xxh64_update(&r->hash, buf, (size_t)got);
  return got;
}

/* Opens the stream and reads its header and metadata. */
static int stream_start(struct trace_reader *r) {
  unsigned char hb[TRACE_HEADER_SIZE];
  int zrc = r->stream_fd >= 0 ? zin_open_fd(r->z, r->stream_fd, r->path) : zin_open(r->z, r->from_stdin ? "-" : r->path);
  r->stream_fd = -1;                                /* the stream owns it now */
  if (zrc != EXIT_OK) return trace_fail(r->err, EXIT_BADINPUT, "%s", r->z->err);
  r->compression = zin_kind_name(r->z->kind);
  xxh64_init(&r->hash);
  ssize_t got = stream_read(r, hb, sizeof hb);
  if (got < 0) return EXIT_BADINPUT;
  if (got == 0) return trace_fail(r->err, EXIT_BADINPUT, "%s: byte 0: empty input, not a vmxsim trace", r->path);
  int rc = parse_header(r, hb, (size_t)got);
  if (rc == EXIT_OK) rc = alloc_buffers(r);
  if (rc != EXIT_OK) return rc;
  got = stream_read(r, r->hdr.metadata, r->hdr.metadata_len);
  if (got < 0) return EXIT_BADINPUT;
  if ((size_t)got < r->hdr.metadata_len)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: metadata length %u exceeds the input (%zu bytes)",
                r->path, H_METALEN, r->hdr.metadata_len, TRACE_HEADER_SIZE + (size_t)got);
  r->hdr.metadata[r->hdr.metadata_len] = 0;
  unsigned char skip[4096];
  for (size_t left = r->hdr.pad; left; ) {         /* version 2: zero bytes before the records */
    size_t k = left < sizeof skip ? left : sizeof skip;
    if ((got = stream_read(r, skip, k)) < 0) return EXIT_BADINPUT;
    if ((size_t)got < k)
      return trace_fail(r->err, EXIT_BADINPUT, "%s: byte %d: pad of %u bytes after the metadata exceeds the input",
                  r->path, H_PAD, r->hdr.pad);
    left -= k;
  }
  return EXIT_OK;
}

/* Byte offset of record i, for messages (of the uncompressed content). */
static size_t trace_record_offset(const struct trace_reader *r, uint64_t i) {
  return r->data_off + (size_t)i * sizeof(struct trace_event);
}

/* Is path a regular file holding an uncompressed trace?  Those are read with
** pread through the page cache, the fast path; everything else is a stream. */
static bool plain_file(struct trace_reader *r, struct stat *st) {
  if (!S_ISREG(st->st_mode) || st->st_size == 0) return S_ISREG(st->st_mode);
  unsigned char magic[ZIN_MAGIC_MAX];
  size_t n = (size_t)st->st_size < sizeof magic ? (size_t)st->st_size : sizeof magic;
  return !read_at(r->fd, magic, n, 0) || zin_detect(magic, n) == ZIN_PLAIN;
}

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
#define READ_AHEAD_MIN_CHUNKS 4          /* smaller files are read by the replay's thread */

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

static void lock(struct trace_pipe *p) { if (p->sync) pthread_mutex_lock(&p->mu); }
static void unlock(struct trace_pipe *p) { if (p->sync) pthread_mutex_unlock(&p->mu); }
static void wake(struct trace_pipe *p) { if (p->sync) pthread_cond_broadcast(&p->cv); }
static void wait_cv(struct trace_pipe *p) { pthread_cond_wait(&p->cv, &p->mu); }

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

/* The message for bad record i. */
static void bad_record(const struct trace_reader *r, const struct trace_event *ev, uint64_t i, char *err) {
  if (ev->type >= r->types) {
    bool later = ev->type < EV_COUNT;
    trace_fail(err, EXIT_BADINPUT, "%s: byte %zu: record %llu: unknown event type %u%s", r->path,
         trace_record_offset(r, i), (unsigned long long)i, ev->type, later ? " in a version-1 file" : "");
    return;
  }
  if (ev->vcpu >= r->hdr.vcpu_count) {
    trace_fail(err, EXIT_BADINPUT, "%s: byte %zu: record %llu: vCPU %u beyond the header's count %u", r->path,
         trace_record_offset(r, i), (unsigned long long)i, ev->vcpu, (unsigned)r->hdr.vcpu_count);
    return;
  }
  trace_fail(err, EXIT_BADINPUT, "%s: byte %zu: record %llu (%s): %s", r->path, trace_record_offset(r, i),
       (unsigned long long)i, event_mnemonic(ev->type), event_invalid(ev));
}

/* Chunk k of a regular file, with pread. */
static void read_file_chunk(struct trace_pipe *p, struct chunk *c, uint64_t k) {
  const struct trace_reader *r = p->r;
  uint64_t first = k * CHUNK_RECORDS, left = r->hdr.event_count - first;
  c->n = left < CHUNK_RECORDS ? (size_t)left : CHUNK_RECORDS;
  c->last = k + 1 == p->nchunks;
  c->count = r->hdr.event_count;
  errno = 0;
  if (read_at(r->fd, c->buf, c->n * sizeof *c->buf, trace_record_offset(r, first))) return;
  trace_fail(c->err, EXIT_BADINPUT, "%s: byte %zu: read failed: %s", r->path, trace_record_offset(r, first),
       errno ? strerror(errno) : "file shrank");
  c->n = 0;
  c->fail = c->last = true;
}

/* Up to n bytes of the stream into buf, hashed; the count, or -1 with the message in err. */
static ssize_t chunk_read(struct trace_reader *r, void *buf, size_t n, char *err) {
  ssize_t got = zin_read(r->z, buf, n);
  if (got < 0) {
    trace_fail(err, EXIT_BADINPUT, "%s", r->z->err);
    return -1;
  }
  xxh64_update(&r->hash, buf, (size_t)got);
  return got;
}

/* Chunk k of a stream: its records in order; at its end the checks of the
** record count against the header's (or the count, when it said unknown). */
static void read_stream_chunk(struct trace_pipe *p, struct chunk *c, uint64_t k) {
  struct trace_reader *r = p->r;
  uint64_t first = k * CHUNK_RECORDS;
  size_t want = CHUNK_RECORDS;
  if (r->count_known && r->hdr.event_count - first < want) want = (size_t)(r->hdr.event_count - first);
  ssize_t got = want ? chunk_read(r, c->buf, want * sizeof *c->buf, c->err) : 0;
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
  got = chunk_read(r, &extra, 1, c->err);
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
    bad_record(p->r, &c->buf[c->valid], k * CHUNK_RECORDS + c->valid, c->err);
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
    unlock(p);
    size_t v = valid_prefix(c->buf + from, n, r->hdr.vcpu_count, r->types);
    lock(p);
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

static bool help_hash(struct trace_pipe *p);

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
    lock(p);
    uint64_t k = UINT64_MAX;
    while (!p->quit && !all_claimed(p) && (k = claim_chunk(p)) == UINT64_MAX)
      if (!help_hash(p)) wait_cv(p);
    unlock(p);
    if (k == UINT64_MAX) break;           /* told to stop, or every chunk is being read */
    read_chunk(p, k);
    struct chunk *c = &p->ring[k % RING];
    lock(p);
    read_done(p, k);
    check_pieces(p, c, k);
    bool last = c->last;                  /* the buffer is not reused before this thread reads again */
    unlock(p);
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
  unlock(p);
  read_chunk(p, k);
  lock(p);
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
static bool help_hash(struct trace_pipe *p) {
  if (!p->hashing || p->hasher_runs || p->hash_busy || p->hashed >= p->produced) return false;
  uint64_t k = p->hashed;
  p->hash_busy = true;
  unlock(p);
  hash_chunk(p, k);
  lock(p);
  p->hashed = k + 1;
  p->hash_busy = false;
  wake(p);
  return true;
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
    bool last = p->ring[k % RING].last;   /* before the buffer is released to the next chunk */
    lock(p);
    p->hashed = k + 1;
    wake(p);
    unlock(p);
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
  struct chunk *c = &p->ring[k % RING];
  if (p->reader_runs) {
    while (p->produced <= k || c->checked < c->pieces)
      if (!(p->produced > k && check_pieces(p, c, k)) && !help_hash(p) && !help_read(p)) wait_cv(p);
    unlock(p);
    return c;
  }
  while (!slot_free(p, k)) wait_cv(p);
  unlock(p);
  read_chunk(p, k);
  lock(p);
  publish(p, k);
  check_pieces(p, c, k);
  if (p->hashing && !p->hasher_runs) {     /* no other thread: the producer hashes */
    hash_chunk(p, k);
    p->hashed = k + 1;
  }
  wake(p);
  unlock(p);
  return c;
}

static void release(struct trace_pipe *p) {
  if (!p->holding) return;
  lock(p);
  p->consumed = p->next;
  wake(p);
  unlock(p);
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

/* Hashes the bytes before a regular file's records: the header and the metadata. */
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
  if (!p || r->z || p->hashing || p->next || p->sync) return;   /* a stream is hashed anyway */
  xxh64_init(&p->state);
  p->hash_broken = false;
  p->hashing = hash_prefix(r, &p->state);
}

bool trace_hash_hex(struct trace_reader *r, char hex[HASH_HEX_LEN + 1]) {
  struct trace_pipe *p = r->pipe;
  if (!trace_done(r)) return false;
  if (r->z) {
    snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&r->hash));
    return true;
  }
  if (!p->hashing) return false;
  lock(p);
  while (p->hashed < p->nchunks)                 /* every chunk was read: hash those left */
    if (!help_hash(p)) wait_cv(p);
  unlock(p);
  if (p->hash_broken) return false;
  snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&p->state));
  return true;
}

/* Forgets the position and the chunks: the next record is record 0. */
static void reset_pipe(struct trace_reader *r) {
  struct trace_pipe *p = r->pipe;
  stop_threads(p);
  p->produced = p->consumed = p->hashed = p->claimed = p->next = 0;
  p->quit = p->holding = p->fail_pending = p->done = p->failed = p->hash_busy = false;
  p->hashing = false;
  r->cur = r->end = NULL;
  r->end_index = 0;
  r->err[0] = 0;
}

int trace_rewind(struct trace_reader *r) {
  if (!r->pipe) return EXIT_OK;
  reset_pipe(r);
  if (!r->z) return EXIT_OK;
  if (r->from_stdin)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: standard input cannot be read twice; give a file", r->path);
  if (r->read_once)
    return trace_fail(r->err, EXIT_BADINPUT, "%s: a recording replayed as it is imported is read once; "
                "'vmxsim import' writes a trace that can be read again", r->path);
  zin_close(r->z);
  bool known = r->count_known;
  uint64_t count = r->hdr.event_count;
  int rc = stream_start(r);
  if (rc == EXIT_OK && known && !r->count_known) {   /* learnt on the first pass */
    r->hdr.event_count = count;
    r->count_known = true;
  }
  return rc;
}

static int open_pipe(struct trace_reader *r) {
  struct trace_pipe *p = calloc(1, sizeof *p);
  if (!p) return trace_fail(r->err, EXIT_INTERNAL, "%s: out of memory", r->path);
  r->pipe = p;
  p->r = r;
  uint64_t chunks = (r->hdr.event_count + CHUNK_RECORDS - 1) / CHUNK_RECORDS;
  p->nchunks = r->z ? UINT64_MAX : chunks ? chunks : 1;
  size_t n = !r->z && r->hdr.event_count < CHUNK_RECORDS ? (size_t)r->hdr.event_count : CHUNK_RECORDS;
  for (unsigned i = 0; i < RING && i < p->nchunks; i++)
    if (!(p->ring[i].buf = malloc((n ? n : 1) * sizeof *p->ring[i].buf)))
      return trace_fail(r->err, EXIT_INTERNAL, "%s: out of memory", r->path);
  return EXIT_OK;
}

/* After a failed open: the reader closed, its message kept. */
static int open_failed(struct trace_reader *r, int rc) {
  char keep[sizeof r->err];
  memcpy(keep, r->err, sizeof keep);
  trace_close(r);
  memcpy(r->err, keep, sizeof keep);
  return rc;
}

int trace_open_fd(struct trace_reader *r, int fd, const char *name) {
  memset(r, 0, sizeof *r);
  r->read_ahead = true;
  r->read_once = true;
  r->path = name;
  r->compression = "";
  r->fd = -1;
  r->stream_fd = fd;
  r->z = calloc(1, sizeof *r->z);
  int rc = r->z ? stream_start(r) : trace_fail(r->err, EXIT_INTERNAL, "%s: out of memory", name);
  if (rc == EXIT_OK) rc = open_pipe(r);
  if (r->stream_fd >= 0) close(r->stream_fd);      /* not handed to the stream (out of memory) */
  r->stream_fd = -1;
  return rc == EXIT_OK ? rc : open_failed(r, rc);
}

int trace_open(struct trace_reader *r, const char *path) {
  memset(r, 0, sizeof *r);
  r->stream_fd = -1;
  r->read_ahead = true;
  r->from_stdin = !strcmp(path, "-");
  r->path = r->from_stdin ? "<stdin>" : path;
  r->compression = "";
  r->fd = strcmp(path, "-") ? open(path, O_RDONLY) : -1;
  struct stat st = { .st_mode = 0 };
  int rc = EXIT_OK;
  if (strcmp(path, "-") && (r->fd < 0 || fstat(r->fd, &st) != 0)) {
    rc = trace_fail(r->err, EXIT_BADINPUT, "%s: %s", path, strerror(errno));
  } else if (strcmp(path, "-") && S_ISDIR(st.st_mode)) {
    rc = trace_fail(r->err, EXIT_BADINPUT, "%s: is a directory, not a trace", path);
  } else if (strcmp(path, "-") && plain_file(r, &st)) {
    if (st.st_size == 0) {
      rc = trace_fail(r->err, EXIT_BADINPUT, "%s: byte 0: empty file, not a vmxsim trace", path);
    } else {
      r->file_len = (size_t)st.st_size;
      posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      rc = read_header(r);
    }
  } else {
    r->piped = r->from_stdin || !S_ISREG(st.st_mode);   /* read once: not looked at for a recording */
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    r->z = calloc(1, sizeof *r->z);
    rc = r->z ? stream_start(r) : trace_fail(r->err, EXIT_INTERNAL, "%s: out of memory", path);
  }
  if (rc == EXIT_OK) rc = open_pipe(r);
  return rc == EXIT_OK ? rc : open_failed(r, rc);
}

void trace_close(struct trace_reader *r) {
  if (r->pipe) {
    stop_threads(r->pipe);
    for (unsigned i = 0; i < RING; i++) free(r->pipe->ring[i].buf);
    free(r->pipe);
    r->pipe = NULL;
  }
  if (r->fd >= 0) close(r->fd);
  if (r->z) zin_close(r->z);
  free(r->z);
  free(r->hdr.metadata);
  r->fd = -1;
  r->z = NULL;
  r->hdr.metadata = NULL;
  r->cur = r->end = NULL;
}
