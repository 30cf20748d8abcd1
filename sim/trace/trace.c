/* Binary trace files: the reader's open, header, record checks, content hash
** and rewind (traces/FORMAT.md).  The chunks it reads the records into, and the
** read-ahead and hashing threads that read, check and hash them, are
** trace_pipe.c, so that the format and the threads are read apart; the
** writer is trace_write.c. */
#include "trace.h"
#include "trace_int.h"
#include "zin.h"
#include "models/vmx/exit_reason.h"

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
  case EV_STI: return ev->aux & ~STI_AUX_POPF ? "aux other than 0 (STI) or 1 (POPF)" : NULL;
  case EV_IRET: return ev->aux & ~IRET_AUX_IF0 ? "aux other than 0 or 1 (IF restored as 0)" : NULL;
  case EV_VIRQ:
    if (ev->a > 255) return "vector above 255";
    if (ev->aux > VIRQ_SRC_MAX) return "interrupt source above 3 (timer)";
    if (ev->aux == VIRQ_SRC_DEVICE) return ev->b & ~(uint64_t)VIRQ_DEVICE_LEVEL ? "device interrupt flags other than 1 (level)" : NULL;
    return ev->aux != VIRQ_SRC_IPI && ev->b ? "a sending vCPU on an interrupt that is not an IPI" : NULL;
  case EV_INVPCID: return ev->aux > 3 ? "INVPCID type above 3" : NULL;
  case EV_PAUSE:
    if (ev->a > PAUSE_SPIN_MAX) return "spin of more than " PAUSE_SPIN_MAX_TEXT " PAUSEs";
    if (ev->b > 0xffffffffu) return "cycles between PAUSEs above 2^32-1";
    return ev->a <= 1 && ev->b ? "cycles between PAUSEs on a single PAUSE" : NULL;
  case EV_TASK_SWITCH: return ev->aux > 3 || ev->a > 0xffff ? "task-switch source above 3 or selector above 0xffff" : NULL;
  case EV_VMX: return exit_reason_is_vmx_instruction(ev->a) ? NULL : "not a VMX instruction's exit reason";
  case EV_WAIT:
    if (ev->aux || ev->a > 0xffff) return "aux other than 0 or a vCPU above 65535";
    return ev->b > WAIT_LINES_MAX ? "more than 16 cache lines before the store" : NULL;
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
bool trace_read_at(int fd, void *buf, size_t n, size_t off) {
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
  if (!trace_read_at(r->fd, hb, got, 0)) return trace_fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  int rc = parse_header(r, hb, got);
  if (rc == EXIT_OK) rc = file_size_checks(r);
  if (rc == EXIT_OK) rc = alloc_buffers(r);
  if (rc != EXIT_OK) return rc;
  if (!trace_read_at(r->fd, r->hdr.metadata, r->hdr.metadata_len, TRACE_HEADER_SIZE))
    return trace_fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  r->hdr.metadata[r->hdr.metadata_len] = 0;
  return EXIT_OK;
}

/* ---- streams: standard input, pipes, compressed files ---- */

ssize_t trace_stream_read(struct trace_reader *r, void *buf, size_t n, char *err) {
  ssize_t got = zin_read(r->z, buf, n);
  if (got < 0) {
    trace_fail(err, EXIT_BADINPUT, "%s", r->z->err);
    return -1;
  }
  if (!r->hash_off) xxh64_update(&r->hash, buf, (size_t)got);
  return got;
}

/* The header's and metadata's bytes: failures into r->err. */
static ssize_t stream_read(struct trace_reader *r, void *buf, size_t n) { return trace_stream_read(r, buf, n, r->err); }

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
size_t trace_record_offset(const struct trace_reader *r, uint64_t i) {
  return r->data_off + (size_t)i * sizeof(struct trace_event);
}

/* Is path a regular file holding an uncompressed trace?  Those are read with
** pread through the page cache, the fast path; everything else is a stream. */
static bool plain_file(struct trace_reader *r, struct stat *st) {
  if (!S_ISREG(st->st_mode) || st->st_size == 0) return S_ISREG(st->st_mode);
  unsigned char magic[ZIN_MAGIC_MAX];
  size_t n = (size_t)st->st_size < sizeof magic ? (size_t)st->st_size : sizeof magic;
  return !trace_read_at(r->fd, magic, n, 0) || zin_detect(magic, n) == ZIN_PLAIN;
}

/* ---- records: the checks the pipe runs on each piece it reads (trace_pipe.c) ---- */

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
size_t trace_valid_prefix(const struct trace_event *ev, size_t n, unsigned nvcpu, unsigned types) {
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
void trace_bad_record(const struct trace_reader *r, const struct trace_event *ev, uint64_t i, char *err) {
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

/* Hashes the bytes before a regular file's records: the header and the metadata. */
static bool hash_prefix(struct trace_reader *r, struct xxh64 *st) {
  enum { PIECE = 1 << 16 };
  unsigned char *tmp = malloc(PIECE);
  bool ok = tmp != NULL;
  for (size_t off = 0; ok && off < r->data_off;) {
    size_t n = r->data_off - off < PIECE ? r->data_off - off : PIECE;
    ok = trace_read_at(r->fd, tmp, n, off);
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

void trace_hash_skip(struct trace_reader *r) { r->hash_off = true; }

bool trace_hash_hex(struct trace_reader *r, char hex[HASH_HEX_LEN + 1]) {
  struct trace_pipe *p = r->pipe;
  if (!trace_done(r)) return false;
  if (r->z) {
    if (r->hash_off) return false;
    snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&r->hash));
    return true;
  }
  if (!p->hashing) return false;
  trace_pipe_lock(p);
  while (p->hashed < p->nchunks)                 /* every chunk was read: hash those left */
    if (!trace_pipe_help_hash(p)) trace_pipe_wait_cv(p);
  trace_pipe_unlock(p);
  if (p->hash_broken) return false;
  snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&p->state));
  return true;
}

/* Forgets the position and the chunks: the next record is record 0. */
static void reset_pipe(struct trace_reader *r) {
  struct trace_pipe *p = r->pipe;
  trace_pipe_stop_threads(p);
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
  /* a ring of whole chunks, 1.5 MiB, in huge pages (sim/base/hugemem.h): its
  ** first touches were a third of a replay's page faults */
  p->ring_huge = n == CHUNK_RECORDS;
  for (unsigned i = 0; i < RING && i < p->nchunks; i++)
    if (p->ring_huge) p->ring[i].buf = huge_alloc(&p->ring_arena, n * sizeof *p->ring[i].buf);
    else if (!(p->ring[i].buf = malloc((n ? n : 1) * sizeof *p->ring[i].buf)))
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

/* Starts the stream on r->stream_fd (standard input when it is -1), which the
** stream then owns; closed here when no stream could take it (out of memory). */
static int stream_open(struct trace_reader *r) {
  r->z = calloc(1, sizeof *r->z);
  int rc = r->z ? stream_start(r) : trace_fail(r->err, EXIT_INTERNAL, "%s: out of memory", r->path);
  if (r->stream_fd >= 0) close(r->stream_fd);
  r->stream_fd = -1;
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
  int rc = stream_open(r);
  if (rc == EXIT_OK) rc = open_pipe(r);
  return rc == EXIT_OK ? rc : open_failed(r, rc);
}

int trace_open(struct trace_reader *r, const char *path) { return trace_open_flags(r, path, 0); }

int trace_open_flags(struct trace_reader *r, const char *path, unsigned flags) {
  memset(r, 0, sizeof *r);
  bool regular_only = flags & INPUT_REGULAR_ONLY;
  r->stream_fd = -1;
  r->read_ahead = true;
  r->from_stdin = !strcmp(path, "-") && !regular_only;     /* else "-" is a file's name */
  r->path = r->from_stdin ? "<stdin>" : path;
  r->compression = "";
  r->fd = r->from_stdin ? -1 : regular_only ? input_open(path, flags, r->err, sizeof r->err) : open(path, O_RDONLY);
  if (r->fd < 0 && regular_only) return open_failed(r, EXIT_BADINPUT);
  struct stat st = { .st_mode = 0 };
  int rc = EXIT_OK;
  if (!r->from_stdin && (r->fd < 0 || fstat(r->fd, &st) != 0)) {
    rc = trace_fail(r->err, EXIT_BADINPUT, "%s: %s", path, strerror(errno));
  } else if (!r->from_stdin && S_ISDIR(st.st_mode)) {
    rc = trace_fail(r->err, EXIT_BADINPUT, "%s: is a directory, not a trace", path);
  } else if (!r->from_stdin && plain_file(r, &st)) {
    if (st.st_size == 0) {
      rc = trace_fail(r->err, EXIT_BADINPUT, "%s: byte 0: empty file, not a vmxsim trace", path);
    } else {
      r->file_len = (size_t)st.st_size;
      posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      rc = read_header(r);
    }
  } else {
    r->piped = r->from_stdin || !S_ISREG(st.st_mode);   /* read once: not looked at for a recording */
    /* The stream reads what is open, not the path again: a FIFO opened twice
    ** loses its writer when the first reader closes, if the writer has
    ** finished by then (the second open then waits for ever). */
    r->stream_fd = r->fd;
    r->fd = -1;
    rc = stream_open(r);
  }
  if (rc == EXIT_OK) rc = open_pipe(r);
  return rc == EXIT_OK ? rc : open_failed(r, rc);
}

void trace_close(struct trace_reader *r) {
  if (r->pipe) {
    trace_pipe_stop_threads(r->pipe);
    if (r->pipe->ring_huge) huge_arena_free(&r->pipe->ring_arena);
    else for (unsigned i = 0; i < RING; i++) free(r->pipe->ring[i].buf);
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
