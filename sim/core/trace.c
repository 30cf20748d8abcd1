/* Binary trace files: header, streaming reader and buffered writer (traces/FORMAT.md). */
#include "trace.h"

#include <errno.h>
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

const char *event_invalid(const struct trace_event *ev) {
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
  case EV_TOUCH: return ev->b >= 1 && ev->b <= TOUCH_PAGES_MAX ? NULL : "touch of 0 pages or more than 2^24";
  case EV_MEASURED:
    if (ev->aux & ~MEASURED_ALONE) return "aux other than 0 or 1 (alone)";
    if (ev->b & 0xffff0000u) return "b bits 31:16 not 0";
    return ev->cycles ? "cycles not 0 (a measured exit has no guest time)" : NULL;
  default: return NULL;
  }
}

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
  r->buf = malloc(TRACE_READ_RECORDS * sizeof *r->buf);
  if (!r->hdr.metadata || !r->buf) return fail(r->err, EXIT_BADINPUT, "%s: out of memory", r->path);
  if (!read_at(r->fd, r->hdr.metadata, r->hdr.metadata_len, TRACE_HEADER_SIZE))
    return fail(r->err, EXIT_BADINPUT, "%s: read: %s", r->path, strerror(errno));
  r->hdr.metadata[r->hdr.metadata_len] = 0;
  return EXIT_OK;
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
  if (rc != EXIT_OK) {
    char keep[sizeof r->err];
    memcpy(keep, r->err, sizeof keep);
    trace_close(r);
    memcpy(r->err, keep, sizeof keep);
  }
  return rc;
}

void trace_close(struct trace_reader *r) {
  if (r->fd >= 0) close(r->fd);
  free(r->hdr.metadata);
  free(r->buf);
  r->fd = -1;
  r->hdr.metadata = NULL;
  r->buf = NULL;
}

/* Byte offset of record i, for messages. */
static size_t trace_record_offset(const struct trace_reader *r, uint64_t i) {
  return r->data_off + (size_t)i * sizeof(struct trace_event);
}

/* Refills the buffer from record r->next on. */
static bool refill(struct trace_reader *r) {
  uint64_t left = r->hdr.event_count - r->next;
  size_t n = left < TRACE_READ_RECORDS ? (size_t)left : TRACE_READ_RECORDS;
  if (!read_at(r->fd, r->buf, n * sizeof *r->buf, trace_record_offset(r, r->next))) {
    fail(r->err, EXIT_BADINPUT, "%s: byte %zu: read failed: %s", r->path, trace_record_offset(r, r->next),
         errno ? strerror(errno) : "file shrank");
    return false;
  }
  r->buf_n = n;
  r->buf_i = 0;
  return true;
}

const struct trace_event *trace_next(struct trace_reader *r) {
  if (r->next >= r->hdr.event_count) return NULL;
  if (r->buf_i == r->buf_n && !refill(r)) return NULL;
  const struct trace_event *ev = &r->buf[r->buf_i];
  if (ev->type >= r->types || ev->vcpu >= r->hdr.vcpu_count) {
    bool later = ev->type >= r->types && ev->type < EV_COUNT;
    fail(r->err, EXIT_BADINPUT, "%s: byte %zu: record %llu: %s %u%s", r->path,
         trace_record_offset(r, r->next), (unsigned long long)r->next,
         ev->type >= r->types ? "unknown event type" : "vCPU beyond the header's count",
         ev->type >= r->types ? ev->type : ev->vcpu, later ? " in a version-1 file" : "");
    return NULL;
  }
  const char *why = event_invalid(ev);
  if (why) {
    fail(r->err, EXIT_BADINPUT, "%s: byte %zu: record %llu (%s): %s", r->path, trace_record_offset(r, r->next),
         (unsigned long long)r->next, event_mnemonic(ev->type), why);
    return NULL;
  }
  r->buf_i++;
  r->next++;
  return ev;
}

int trace_failed(const struct trace_reader *r) { return r->err[0] != 0; }
void trace_rewind(struct trace_reader *r) { r->next = 0; r->buf_n = r->buf_i = 0; r->err[0] = 0; }

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
