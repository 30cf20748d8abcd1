/* Binary trace files: the buffered writer, to a file or a stream, and the
** header written before the records or reserved and filled in after them
** (traces/FORMAT.md; the reader is trace.c and trace_pipe.c). */
#include "trace.h"
#include "trace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WRITE_BUF_RECORDS 8192

/* The lowest version that can hold what was written, so that a file without
** measured exits stays readable by version-1 readers. */
static void encode_header(const struct trace_header *h, unsigned char *p) {
  memset(p, 0, TRACE_HEADER_SIZE);
  memcpy(p + H_MAGIC, TRACE_MAGIC, 8);
  put16(p + H_VERSION, h->version ? h->version : TRACE_VERSION_BASE);
  put16(p + H_RECSIZE, sizeof(struct trace_event));
  put16(p + H_VCPUS, h->vcpu_count);
  p[H_PAGING] = h->paging;
  p[H_FLAGS] = h->flags;
  put64(p + H_COUNT, h->flags & TRACE_FLAG_COUNT_UNKNOWN ? 0 : h->event_count);
  put32(p + H_METALEN, h->metadata_len);
  put32(p + H_PAD, h->pad);
  memcpy(p + H_WORKLOAD, h->workload, strnlen(h->workload, TRACE_WORKLOAD_MAX));
}

/* Checks and records the header fields; w->f is opened by the caller afterwards. */
/* The name messages give: the output the user named, not the temporary file written for it. */
static const char *writer_name(const struct trace_writer *w) { return w->label ? w->label : w->path; }

void trace_set_label(struct trace_writer *w, const char *label) { w->label = label; }

static int writer_init(struct trace_writer *w, const char *name, const char *workload, unsigned vcpu_count,
                       unsigned paging, const char *metadata) {
  memset(w, 0, sizeof *w);
  if (vcpu_count == 0 || vcpu_count > TRACE_VCPU_MAX)
    return trace_fail(w->err, EXIT_BADINPUT, "vCPU count %u out of range 1..%d", vcpu_count, TRACE_VCPU_MAX);
  if (!paging_name(paging))
    return trace_fail(w->err, EXIT_BADINPUT, "unknown paging mode %u", paging);
  size_t mlen = metadata ? strlen(metadata) : 0;
  if (mlen > TRACE_METADATA_MAX)
    return trace_fail(w->err, EXIT_BADINPUT, "metadata of %zu bytes exceeds the limit", mlen);
  w->hdr.version = TRACE_VERSION_BASE;
  w->hdr.vcpu_count = (uint16_t)vcpu_count;
  w->hdr.paging = (uint8_t)paging;
  w->hdr.metadata_len = (uint32_t)mlen;
  snprintf(w->hdr.workload, sizeof w->hdr.workload, "%s", workload ? workload : "");
  w->path = strdup(name);
  w->buf = malloc(WRITE_BUF_RECORDS * sizeof *w->buf);
  if (!w->path || !w->buf) {
    free(w->path); free(w->buf); w->path = NULL; w->buf = NULL;
    return trace_fail(w->err, EXIT_INTERNAL, "out of memory");
  }
  return EXIT_OK;
}

static int write_start(struct trace_writer *w, const char *metadata) {
  unsigned char hb[TRACE_HEADER_SIZE];
  size_t mlen = w->hdr.metadata_len;
  encode_header(&w->hdr, hb);
  if (fwrite(hb, 1, sizeof hb, w->f) != sizeof hb || (mlen && fwrite(metadata, 1, mlen, w->f) != mlen)) {
    int rc = trace_fail(w->err, EXIT_IO, "%s: write failed: %s", writer_name(w), strerror(errno));
    trace_abort(w);
    return rc;
  }
  return EXIT_OK;
}

int trace_create(struct trace_writer *w, const char *path, const char *workload,
                 unsigned vcpu_count, unsigned paging, const char *metadata) {
  int rc = writer_init(w, path, workload, vcpu_count, paging, metadata);
  if (rc) return rc;
  w->f = fopen(path, "wb");
  if (!w->f) {
    int e = errno;
    free(w->path); free(w->buf); w->path = NULL; w->buf = NULL;
    return trace_fail(w->err, EXIT_IO, "%s: cannot create: %s", path, strerror(e));
  }
  return write_start(w, metadata);
}

int trace_create_stdout(struct trace_writer *w, const char *workload, unsigned vcpu_count, unsigned paging,
                        const char *metadata, uint64_t count) {
  if (isatty(STDOUT_FILENO)) {
    memset(w, 0, sizeof *w);
    return trace_fail(w->err, EXIT_USAGE, "-o -: standard output is a terminal; a binary trace belongs in a file or "
                "a pipe ('| vmxsim trace dump -' shows it as text)");
  }
  int rc = writer_init(w, "<stdout>", workload, vcpu_count, paging, metadata);
  if (rc) return rc;
  w->f = stdout;
  w->stream = true;
  if (count == TRACE_COUNT_UNKNOWN) {
    /* Format version 2: the records run to the end of the input (traces/FORMAT.md). */
    w->hdr.version = 2;
    w->hdr.flags = TRACE_FLAG_COUNT_UNKNOWN;
  } else {
    w->declared = count;
    w->hdr.event_count = count;
  }
  return write_start(w, metadata);
}

static int flush_buf(struct trace_writer *w) {
  if (w->nbuf && fwrite(w->buf, sizeof *w->buf, w->nbuf, w->f) != w->nbuf)
    return trace_fail(w->err, EXIT_IO, "%s: write failed: %s", writer_name(w), strerror(errno));
  w->nbuf = 0;
  return EXIT_OK;
}

void trace_header_reserved(struct trace_header *h) {
  memset(h, 0, sizeof *h);
  h->version = TRACE_VERSION_BASE;
  h->vcpu_count = 1;
  h->paging = PAGING_64;
}

int trace_header_count(struct trace_header *h, const struct trace_event *ev, char *err) {
  if (ev->vcpu >= h->vcpu_count) {
    if (ev->vcpu >= TRACE_VCPU_MAX)
      return trace_fail(err, EXIT_BADINPUT, "vCPU %u beyond the limit of %d", ev->vcpu, TRACE_VCPU_MAX);
    h->vcpu_count = (uint16_t)(ev->vcpu + 1);       /* the header grows to cover it */
  }
  if (ev->type >= TRACE_V1_TYPES) h->version = TRACE_VERSION;
  h->event_count++;
  return EXIT_OK;
}

int trace_write(struct trace_writer *w, const struct trace_event *ev) {
  if (w->stream) {
    if (ev->vcpu >= w->hdr.vcpu_count)               /* the header is out already */
      return trace_fail(w->err, EXIT_BADINPUT, ev->vcpu >= TRACE_VCPU_MAX ? "vCPU %u beyond the limit of %d" :
                  "vCPU %u beyond the header's count %u, which went to standard output first (declare the "
                  "vCPUs up front, e.g. @vcpus in a text trace)", ev->vcpu,
                  ev->vcpu >= TRACE_VCPU_MAX ? TRACE_VCPU_MAX : w->hdr.vcpu_count);
    if (ev->type >= TRACE_V1_TYPES) w->hdr.version = TRACE_VERSION;
    w->written++;
  } else {
    int rc = trace_header_count(&w->hdr, ev, w->err);
    if (rc) return rc;
  }
  w->buf[w->nbuf++] = *ev;
  return w->nbuf == WRITE_BUF_RECORDS ? flush_buf(w) : EXIT_OK;
}

/* Standard output: the header stays as written, unless it is a regular file
** (`> file`), where a count-unknown header is rewritten with the count. */
static int finish_stream(struct trace_writer *w) {
  unsigned char hb[TRACE_HEADER_SIZE];
  int rc = flush_buf(w);
  if (rc == EXIT_OK && !(w->hdr.flags & TRACE_FLAG_COUNT_UNKNOWN) && w->written != w->declared)
    rc = trace_fail(w->err, EXIT_INTERNAL, "<stdout>: %llu records written, the header announced %llu",
              (unsigned long long)w->written, (unsigned long long)w->declared);
  struct stat st;
  long start = ftell(w->f);
  bool seekable = fstat(fileno(w->f), &st) == 0 && S_ISREG(st.st_mode) && start >= 0;
  if (rc == EXIT_OK && (w->hdr.flags & TRACE_FLAG_COUNT_UNKNOWN) && seekable) {
    off_t end = (off_t)start;
    off_t head = end - (off_t)(TRACE_HEADER_SIZE + w->hdr.metadata_len + w->written * sizeof(struct trace_event));
    w->hdr.version = TRACE_VERSION_BASE;
    w->hdr.flags = 0;
    w->hdr.event_count = w->written;
    encode_header(&w->hdr, hb);
    if (head < 0 || fflush(w->f) != 0 || pwrite(fileno(w->f), hb, sizeof hb, head) != (ssize_t)sizeof hb)
      rc = trace_fail(w->err, EXIT_IO, "<stdout>: write failed: %s", strerror(errno));
  }
  if (fflush(w->f) != 0 && rc == EXIT_OK) rc = trace_fail(w->err, EXIT_IO, "<stdout>: write failed: %s", strerror(errno));
  w->f = NULL;
  free(w->path); free(w->buf);
  w->path = NULL; w->buf = NULL;
  return rc;
}

int trace_finish(struct trace_writer *w) {
  if (w->stream) return finish_stream(w);
  unsigned char hb[TRACE_HEADER_SIZE];
  int rc = flush_buf(w);
  if (rc == EXIT_OK) {
    encode_header(&w->hdr, hb);
    if (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(hb, 1, sizeof hb, w->f) != sizeof hb)
      rc = trace_fail(w->err, EXIT_IO, "%s: write failed: %s", writer_name(w), strerror(errno));
  }
  if (fclose(w->f) != 0 && rc == EXIT_OK)
    rc = trace_fail(w->err, EXIT_IO, "%s: write failed: %s", writer_name(w), strerror(errno));
  w->f = NULL;
  if (rc != EXIT_OK) remove(w->path);
  free(w->path); free(w->buf);
  w->path = NULL; w->buf = NULL;
  return rc;
}

int trace_create_reserved(struct trace_writer *w, const char *path, const char *label, size_t reserve) {
  int rc = trace_create(w, path, NULL, 1, PAGING_64, NULL);
  if (rc == EXIT_OK) trace_set_label(w, label);
  if (rc == EXIT_OK && fseeko(w->f, (off_t)reserve, SEEK_SET) != 0) {
    rc = trace_fail(w->err, EXIT_IO, "%s: seek failed: %s", label ? label : path, strerror(errno));
    trace_abort(w);
    return rc;
  }
  w->reserve = reserve;
  return rc;
}

/* The header of a reserved trace once its records are written: h holds
** what the records made of it (trace_header_count). */
static int finish_reserved_header(struct trace_header *h, size_t reserve, const char *workload, unsigned vcpu_count,
                                  unsigned paging, size_t mlen, size_t nhead, const char *name, char *err) {
  size_t used = TRACE_HEADER_SIZE + mlen + nhead * sizeof(struct trace_event);
  if (used > reserve || vcpu_count == 0 || vcpu_count > TRACE_VCPU_MAX || !paging_name(paging))
    return trace_fail(err, EXIT_INTERNAL, "%s: %zu bytes of header, metadata and initial records do not fit the %zu "
                "reserved (or a bad vCPU count or paging mode)", name, used, reserve);
  if (vcpu_count > h->vcpu_count) h->vcpu_count = (uint16_t)vcpu_count;
  h->paging = (uint8_t)paging;
  h->metadata_len = (uint32_t)mlen;
  h->pad = (uint32_t)(reserve - used);
  if (h->pad) h->version = TRACE_VERSION;             /* the pad field is version 2's */
  h->event_count += nhead;
  snprintf(h->workload, sizeof h->workload, "%s", workload ? workload : "");
  return EXIT_OK;
}

int trace_reserved_prefix(const struct trace_header *counted, size_t reserve, const char *workload,
                          unsigned vcpu_count, unsigned paging, const char *metadata,
                          const struct trace_event *head, size_t nhead, unsigned char **out, char *err) {
  struct trace_header h = *counted;
  size_t mlen = metadata ? strlen(metadata) : 0;
  *out = NULL;
  int rc = finish_reserved_header(&h, reserve, workload, vcpu_count, paging, mlen, nhead, "trace", err);
  if (rc) return rc;
  unsigned char *p = calloc(1, reserve);              /* the pad is zeros, as a file's unwritten bytes */
  if (!p) return trace_fail(err, EXIT_INTERNAL, "out of memory");
  encode_header(&h, p);
  memcpy(p + TRACE_HEADER_SIZE, metadata, mlen);
  memcpy(p + reserve - nhead * sizeof *head, head, nhead * sizeof *head);
  *out = p;
  return EXIT_OK;
}

int trace_finish_reserved(struct trace_writer *w, const char *workload, unsigned vcpu_count, unsigned paging,
                          const char *metadata, const struct trace_event *head, size_t nhead) {
  size_t mlen = metadata ? strlen(metadata) : 0;
  int rc = flush_buf(w);
  if (rc == EXIT_OK)
    rc = finish_reserved_header(&w->hdr, w->reserve, workload, vcpu_count, paging, mlen, nhead, writer_name(w), w->err);
  if (rc == EXIT_OK) {
    if (fseeko(w->f, (off_t)(w->reserve - nhead * sizeof *head), SEEK_SET) != 0 ||
        fwrite(head, sizeof *head, nhead, w->f) != nhead ||
        fseeko(w->f, TRACE_HEADER_SIZE, SEEK_SET) != 0 || (mlen && fwrite(metadata, 1, mlen, w->f) != mlen))
      rc = trace_fail(w->err, EXIT_IO, "%s: write failed: %s", writer_name(w), strerror(errno));
  }
  if (rc != EXIT_OK) {
    trace_abort(w);
    return rc;
  }
  return trace_finish(w);                              /* the header, then close */
}

void trace_abort(struct trace_writer *w) {
  if (w->f && w->stream) fflush(w->f);               /* standard output: what went out stays out */
  else if (w->f) { fclose(w->f); remove(w->path); }
  free(w->path); free(w->buf);
  w->f = NULL; w->path = NULL; w->buf = NULL;
}
