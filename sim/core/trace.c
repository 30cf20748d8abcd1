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
  H_FLAGS = 15, H_COUNT = 16, H_METALEN = 24, H_RESERVED = 28, H_WORKLOAD = 32
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
  r->data_off = TRACE_HEADER_SIZE + h->metadata_len;
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
** Chunks and the hasher.  Records are read CHUNK_RECORDS at a time into a
** ring of buffers.  Without hashing the ring has one buffer.  With hashing
** the hasher (a helper thread, or the reader itself when no thread can be
** started) hashes each chunk after it was read, and the reader reuses a
** buffer only once the hasher is done with it, so the file is read once.
*/
#define CHUNK_RECORDS 16384              /* 384 KiB */
#define HASH_RING 4

struct trace_hasher {
  pthread_t thread;
  bool threaded;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct xxh64 state;
  struct trace_event *buf[HASH_RING];
  size_t len[HASH_RING];           /* bytes of each buffer's chunk */
  uint64_t filled, hashed;         /* chunks handed to the hasher, chunks hashed */
  bool last;                       /* the last chunk has been handed over */
  bool quit;                       /* the reader gives up (closed, rewound) */
};

static void *hasher_main(void *arg) {
  struct trace_hasher *h = arg;
  pthread_mutex_lock(&h->mu);
  for (;;) {
    while (h->hashed == h->filled && !h->last && !h->quit) pthread_cond_wait(&h->cv, &h->mu);
    if (h->quit || h->hashed == h->filled) break;
    unsigned slot = (unsigned)(h->hashed % HASH_RING);
    pthread_mutex_unlock(&h->mu);
    xxh64_update(&h->state, h->buf[slot], h->len[slot]);
    pthread_mutex_lock(&h->mu);
    h->hashed++;
    pthread_cond_broadcast(&h->cv);
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

/* Waits until the hasher no longer needs the buffer of the next chunk. */
static void hasher_wait_slot(struct trace_hasher *h) {
  if (!h->threaded) return;
  pthread_mutex_lock(&h->mu);
  while (h->filled - h->hashed >= HASH_RING) pthread_cond_wait(&h->cv, &h->mu);
  pthread_mutex_unlock(&h->mu);
}

/* Hands the chunk just read (in the buffer of chunk number h->filled) over. */
static void hasher_feed(struct trace_hasher *h, size_t len, bool last) {
  unsigned slot = (unsigned)(h->filled % HASH_RING);
  if (!h->threaded) {
    xxh64_update(&h->state, h->buf[slot], len);
    h->filled++;
    h->hashed++;
    h->last = last;
    return;
  }
  pthread_mutex_lock(&h->mu);
  h->len[slot] = len;
  h->filled++;
  h->last = last;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
}

static void hasher_stop(struct trace_reader *r) {
  struct trace_hasher *h = r->hasher;
  if (!h) return;
  if (h->threaded) {
    pthread_mutex_lock(&h->mu);
    h->quit = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
  }
  for (unsigned i = 1; i < HASH_RING; i++) free(h->buf[i]);   /* buf[0] is the reader's own */
  free(h);
  r->hasher = NULL;
}

/* Hashes the bytes before the records: the header and the metadata. */
static bool hash_prefix(struct trace_reader *r, struct xxh64 *st) {
  unsigned char *tmp = (unsigned char *)r->chunk;
  for (size_t off = 0; off < r->data_off;) {
    size_t n = r->data_off - off < CHUNK_RECORDS * sizeof *r->chunk ? r->data_off - off : CHUNK_RECORDS * sizeof *r->chunk;
    if (!read_at(r->fd, tmp, n, off)) return false;
    xxh64_update(st, tmp, n);
    off += n;
  }
  return true;
}

void trace_hash_start(struct trace_reader *r) {
  if (r->hasher || r->read_next || r->fd < 0) return;
  struct trace_hasher *h = calloc(1, sizeof *h);
  if (!h) return;
  xxh64_init(&h->state);
  if (!hash_prefix(r, &h->state)) { free(h); return; }
  h->buf[0] = r->chunk;
  bool ok = true;
  for (unsigned i = 1; i < HASH_RING; i++) ok = ok && (h->buf[i] = malloc(CHUNK_RECORDS * sizeof *r->chunk));
  if (!ok) {
    for (unsigned i = 1; i < HASH_RING; i++) free(h->buf[i]);
    free(h);
    return;
  }
  h->last = r->hdr.event_count == 0;
  r->hasher = h;
  if (pthread_mutex_init(&h->mu, NULL) == 0) {
    if (pthread_cond_init(&h->cv, NULL) == 0) {
      h->threaded = pthread_create(&h->thread, NULL, hasher_main, h) == 0;
      if (!h->threaded) pthread_cond_destroy(&h->cv);
    }
    if (!h->threaded) pthread_mutex_destroy(&h->mu);
  }
}

bool trace_hash(struct trace_reader *r, char hex[17]) {
  struct trace_hasher *h = r->hasher;
  if (!h || r->read_next != r->hdr.event_count) return false;
  if (h->threaded) {
    pthread_mutex_lock(&h->mu);
    while (h->hashed != h->filled) pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
  }
  snprintf(hex, 17, "%016llx", (unsigned long long)xxh64_final(&h->state));
  return true;
}

int trace_open(struct trace_reader *r, const char *path) {
  memset(r, 0, sizeof *r);
  r->path = path;
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
  if (rc == EXIT_OK && !(r->chunk = malloc(CHUNK_RECORDS * sizeof *r->chunk)))
    rc = fail(r->err, EXIT_BADINPUT, "%s: out of memory", r->path);
  if (rc != EXIT_OK) {
    char keep[sizeof r->err];
    memcpy(keep, r->err, sizeof keep);
    trace_close(r);
    memcpy(r->err, keep, sizeof keep);
  }
  return rc;
}

void trace_close(struct trace_reader *r) {
  hasher_stop(r);
  if (r->fd >= 0) close(r->fd);
  free(r->hdr.metadata);
  free(r->chunk);
  r->fd = -1;
  r->hdr.metadata = NULL;
  r->chunk = NULL;
  r->cur = r->end = r->raw = r->raw_end = NULL;
}

/* Byte offset of record i, for messages. */
static size_t trace_record_offset(const struct trace_reader *r, uint64_t i) {
  return r->data_off + (size_t)i * sizeof(struct trace_event);
}

/* Reads the next chunk of records (cur == end and raw == raw_end). */
static bool read_chunk(struct trace_reader *r) {
  uint64_t left = r->hdr.event_count - r->read_next;
  size_t n = left < CHUNK_RECORDS ? (size_t)left : CHUNK_RECORDS;
  struct trace_event *buf = r->chunk;
  struct trace_hasher *h = r->hasher;
  if (h) {
    hasher_wait_slot(h);
    buf = h->buf[h->filled % HASH_RING];
  }
  if (!read_at(r->fd, buf, n * sizeof *buf, trace_record_offset(r, r->read_next))) {
    fail(r->err, EXIT_BADINPUT, "%s: byte %zu: read failed: %s", r->path, trace_record_offset(r, r->read_next),
         errno ? strerror(errno) : "file shrank");
    r->failed = true;
    return false;
  }
  r->raw = buf;
  r->raw_end = buf + n;
  r->read_next += n;
  if (h) hasher_feed(h, n * sizeof *buf, r->read_next == r->hdr.event_count);
  return true;
}

/* How a record's type is checked: unknown types are bad, a touch's page
** count is checked here, the other listed types by operands_invalid. */
enum type_check { TYPE_BAD, TYPE_PLAIN, TYPE_TOUCH, TYPE_OPERANDS };
static uint8_t type_checks[256];

static void init_type_checks(void) {
  for (unsigned t = 0; t < EV_COUNT; t++)
    type_checks[t] = t == EV_TOUCH ? TYPE_TOUCH : EVENT_OPERANDS_CHECKED >> t & 1 ? TYPE_OPERANDS : TYPE_PLAIN;
}

/* How many of the n records at ev are valid, from the first on. */
static size_t valid_prefix(const struct trace_event *ev, size_t n, unsigned nvcpu) {
  static_assert(EV_COUNT <= 64, "EVENT_OPERANDS_CHECKED is a 64-bit set");
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, init_type_checks);
  const struct trace_event *p = ev, *end = ev + n;
  for (; p != end; p++) {
    unsigned check = type_checks[p->type];
    if (p->vcpu >= nvcpu) break;
    if (check == TYPE_PLAIN) continue;
    if (check == TYPE_BAD || (check == TYPE_TOUCH ? p->b - 1 >= TOUCH_PAGES_MAX : operands_invalid(p) != NULL)) break;
  }
  return (size_t)(p - ev);
}

/* The message for the bad record at r->end. */
static void bad_record(struct trace_reader *r) {
  const struct trace_event *ev = r->end;
  uint64_t i = r->end_index;
  if (ev->type >= EV_COUNT || ev->vcpu >= r->hdr.vcpu_count) {
    fail(r->err, EXIT_BADINPUT, "%s: byte %zu: record %llu: %s %u", r->path,
         trace_record_offset(r, i), (unsigned long long)i,
         ev->type >= EV_COUNT ? "unknown event type" : "vCPU beyond the header's count",
         ev->type >= EV_COUNT ? ev->type : ev->vcpu);
    return;
  }
  fail(r->err, EXIT_BADINPUT, "%s: byte %zu: record %llu (%s): %s", r->path, trace_record_offset(r, i),
       (unsigned long long)i, event_mnemonic(ev->type), event_invalid(ev));
}

/* Makes the next block current (cur == end); false at the end of the trace
** or on a failure (r->err set). */
static bool next_block(struct trace_reader *r) {
  if (r->failed) {
    if (r->end && r->raw != r->raw_end) bad_record(r);
    return false;
  }
  if (r->raw == r->raw_end && (r->read_next == r->hdr.event_count || !read_chunk(r))) return false;
  size_t n = (size_t)(r->raw_end - r->raw);
  if (n > TRACE_BLOCK_RECORDS) n = TRACE_BLOCK_RECORDS;
  size_t ok = valid_prefix(r->raw, n, r->hdr.vcpu_count);
  r->cur = r->raw;
  r->end = r->raw + ok;
  r->end_index += ok;
  r->raw += ok;
  if (ok < n) r->failed = true;
  if (ok == 0) {
    bad_record(r);
    return false;
  }
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

void trace_rewind(struct trace_reader *r) {
  hasher_stop(r);
  r->cur = r->end = r->raw = r->raw_end = NULL;
  r->end_index = r->read_next = 0;
  r->failed = false;
  r->err[0] = 0;
}

/* ---- writer ---- */

static void encode_header(const struct trace_header *h, unsigned char *p) {
  memset(p, 0, TRACE_HEADER_SIZE);
  memcpy(p + H_MAGIC, TRACE_MAGIC, 8);
  put16(p + H_VERSION, TRACE_VERSION);
  put16(p + H_RECSIZE, sizeof(struct trace_event));
  put16(p + H_VCPUS, h->vcpu_count);
  p[H_PAGING] = h->paging;
  put64(p + H_COUNT, h->event_count);
  put32(p + H_METALEN, h->metadata_len);
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

void trace_abort(struct trace_writer *w) {
  if (w->f) { fclose(w->f); remove(w->path); }
  free(w->path); free(w->buf);
  w->f = NULL; w->path = NULL; w->buf = NULL;
}
