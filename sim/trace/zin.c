/* Input streams that may be compressed (see zin.h). */
#include "zin.h"
#include "sim/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define ZIN_BUF (1u << 16)         /* compressed bytes read at a time */

static const unsigned char gzip_magic[] = { 0x1f, 0x8b };
static const unsigned char xz_magic[] = { 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00 };
static const unsigned char zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

enum zin_kind zin_detect(const unsigned char *p, size_t n) {
  if (n >= sizeof gzip_magic && !memcmp(p, gzip_magic, sizeof gzip_magic)) return ZIN_GZIP;
  if (n >= sizeof xz_magic && !memcmp(p, xz_magic, sizeof xz_magic)) return ZIN_XZ;
  if (n >= sizeof zstd_magic && !memcmp(p, zstd_magic, sizeof zstd_magic)) return ZIN_ZSTD;
  return ZIN_PLAIN;
}

const char *zin_kind_name(enum zin_kind k) {
  switch (k) {
  case ZIN_GZIP: return "gzip";
  case ZIN_XZ: return "xz";
  case ZIN_ZSTD: return "zstd";
  default: return "";
  }
}

static ssize_t fail(struct zin *z, const char *fmt, const char *what) {
  snprintf(z->err, sizeof z->err, fmt, z->name, zin_kind_name(z->kind), (unsigned long long)z->in_used, what);
  return -1;
}

/* Tops up the input buffer (unused bytes moved to the front); false on a read error. */
static bool fill(struct zin *z) {
  if (z->in_eof) return true;
  if (z->in_pos) {
    memmove(z->in, z->in + z->in_pos, z->in_len - z->in_pos);
    z->in_len -= z->in_pos;
    z->in_pos = 0;
  }
  while (z->in_len < ZIN_BUF) {
    ssize_t got = read(z->fd, z->in + z->in_len, ZIN_BUF - z->in_len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      snprintf(z->err, sizeof z->err, "%s: read failed: %s", z->name, strerror(errno));
      return false;
    }
    if (got == 0) { z->in_eof = true; break; }
    z->in_len += (size_t)got;
    if (z->kind != ZIN_PLAIN) break;     /* a decoder takes what there is */
  }
  return true;
}

static int start(struct zin *z);

int zin_open(struct zin *z, const char *path) {
  memset(z, 0, sizeof *z);
  z->fd = -1;
  bool std_in = !strcmp(path, "-");
  z->name = std_in ? "<stdin>" : path;
  z->fd = std_in ? 0 : open(path, O_RDONLY);
  struct stat st;
  if (z->fd < 0 || fstat(z->fd, &st) != 0) {
    snprintf(z->err, sizeof z->err, "%s: %s", path, strerror(errno));
    return EXIT_BADINPUT;
  }
  z->own_fd = !std_in;
  if (S_ISDIR(st.st_mode)) {
    snprintf(z->err, sizeof z->err, "%s: is a directory", path);
    return EXIT_BADINPUT;
  }
  return start(z);
}

int zin_open_fd(struct zin *z, int fd, const char *name) {
  memset(z, 0, sizeof *z);
  z->fd = fd;
  z->own_fd = true;
  z->name = name;
  return start(z);
}

/* Reads the first bytes of z->fd and sets up their decoder. */
static int start(struct zin *z) {
  z->in = xmalloc(ZIN_BUF);
  while (z->in_len < ZIN_MAGIC_MAX && !z->in_eof) {   /* a pipe may deliver the magic in pieces */
    ssize_t got = read(z->fd, z->in + z->in_len, ZIN_MAGIC_MAX - z->in_len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      snprintf(z->err, sizeof z->err, "%s: read failed: %s", z->name, strerror(errno));
      return EXIT_BADINPUT;
    }
    if (got == 0) z->in_eof = true;
    z->in_len += (size_t)got;
  }
  z->kind = zin_detect(z->in, z->in_len);
  if (z->kind == ZIN_GZIP) {
    z_stream *s = xcalloc(1, sizeof *s);
    z->dec = s;
    if (inflateInit2(s, 15 + 16) != Z_OK) {          /* 15: the largest window; +16: gzip wrapper */
      snprintf(z->err, sizeof z->err, "%s: gzip: cannot set up the decoder", z->name);
      return EXIT_INTERNAL;
    }
  } else if (z->kind == ZIN_XZ) {
    lzma_stream *s = xcalloc(1, sizeof *s);
    *s = (lzma_stream)LZMA_STREAM_INIT;
    z->dec = s;
    if (lzma_stream_decoder(s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
      snprintf(z->err, sizeof z->err, "%s: xz: cannot set up the decoder", z->name);
      return EXIT_INTERNAL;
    }
  } else if (z->kind == ZIN_ZSTD) {
    z->dec = ZSTD_createDStream();
    if (!z->dec || ZSTD_isError(ZSTD_initDStream(z->dec))) {
      snprintf(z->err, sizeof z->err, "%s: zstd: cannot set up the decoder", z->name);
      return EXIT_INTERNAL;
    }
  }
  return EXIT_OK;
}

/* ---- one decoding step per format: output into buf[*done..n), input from z->in ---- */

static ssize_t gzip_step(struct zin *z, unsigned char *buf, size_t n, size_t *done) {
  z_stream *s = z->dec;
  if (z->at_end && z->in_pos < z->in_len) {          /* another member follows */
    inflateReset(s);
    z->at_end = false;
  }
  if (z->at_end) return 0;
  s->next_in = z->in + z->in_pos;
  s->avail_in = (uInt)(z->in_len - z->in_pos);
  s->next_out = buf + *done;
  s->avail_out = (uInt)(n - *done);
  int rc = inflate(s, Z_NO_FLUSH);
  size_t used = (size_t)(s->next_in - (z->in + z->in_pos));
  z->in_pos += used;
  z->in_used += used;
  *done = (size_t)(s->next_out - buf);
  if (rc == Z_STREAM_END) z->at_end = true;
  else if (rc == Z_BUF_ERROR && z->in_eof && z->in_pos == z->in_len)
    return fail(z, "%s: %s data ends early, at compressed byte %llu%s", " (truncated?)");
  else if (rc != Z_OK && rc != Z_BUF_ERROR)
    return fail(z, "%s: %s data: corrupt near compressed byte %llu (%s)", s->msg ? s->msg : "error");
  return 0;
}

static ssize_t xz_step(struct zin *z, unsigned char *buf, size_t n, size_t *done) {
  lzma_stream *s = z->dec;
  if (z->at_end) return 0;
  s->next_in = z->in + z->in_pos;
  s->avail_in = z->in_len - z->in_pos;
  s->next_out = buf + *done;
  s->avail_out = n - *done;
  lzma_ret rc = lzma_code(s, z->in_eof ? LZMA_FINISH : LZMA_RUN);
  size_t used = (size_t)(s->next_in - (z->in + z->in_pos));
  z->in_pos += used;
  z->in_used += used;
  *done = (size_t)(s->next_out - buf);
  if (rc == LZMA_STREAM_END) z->at_end = true;
  else if (rc == LZMA_BUF_ERROR && z->in_eof)
    return fail(z, "%s: %s data ends early, at compressed byte %llu%s", " (truncated?)");
  else if (rc != LZMA_OK && rc != LZMA_BUF_ERROR)
    return fail(z, "%s: %s data: corrupt near compressed byte %llu (%s)",
                rc == LZMA_FORMAT_ERROR ? "not xz" : rc == LZMA_DATA_ERROR ? "data error"
                : rc == LZMA_MEM_ERROR ? "out of memory" : "decoder error");
  return 0;
}

static ssize_t zstd_step(struct zin *z, unsigned char *buf, size_t n, size_t *done) {
  if (z->at_end && z->in_pos == z->in_len) return 0;   /* between frames: wait for the next one or the end */
  ZSTD_inBuffer in = { z->in, z->in_len, z->in_pos };
  ZSTD_outBuffer out = { buf, n, *done };
  size_t rc = ZSTD_decompressStream(z->dec, &out, &in);
  z->in_used += in.pos - z->in_pos;
  z->in_pos = in.pos;
  *done = out.pos;
  if (ZSTD_isError(rc)) return fail(z, "%s: %s data: corrupt near compressed byte %llu (%s)", ZSTD_getErrorName(rc));
  /* 0: a frame is complete and flushed; more input may start the next one */
  z->at_end = rc == 0 && z->in_pos == z->in_len;
  if (z->in_eof && z->in_pos == z->in_len && rc != 0 && out.pos < out.size)
    return fail(z, "%s: %s data ends early, at compressed byte %llu%s", " (truncated?)");
  return 0;
}

ssize_t zin_read(struct zin *z, void *buf, size_t n) {
  unsigned char *b = buf;
  size_t done = 0;
  while (done < n) {
    if (z->in_pos == z->in_len && !z->in_eof && !fill(z)) return -1;
    if (z->kind != ZIN_PLAIN && z->at_end && z->in_eof && z->in_pos == z->in_len) break;
    if (z->kind == ZIN_PLAIN) {
      size_t k = z->in_len - z->in_pos < n - done ? z->in_len - z->in_pos : n - done;
      memcpy(b + done, z->in + z->in_pos, k);
      z->in_pos += k;
      done += k;
      if (z->in_pos == z->in_len && z->in_eof) break;
      continue;
    }
    size_t before = done;
    uint64_t used_before = z->in_used;
    ssize_t rc = z->kind == ZIN_GZIP ? gzip_step(z, b, n, &done)
               : z->kind == ZIN_XZ ? xz_step(z, b, n, &done) : zstd_step(z, b, n, &done);
    if (rc < 0) return -1;
    if (z->in_eof && z->in_pos == z->in_len && (z->at_end || (done == before && z->in_used == used_before))) {
      if (!z->at_end) return fail(z, "%s: %s data ends early, at compressed byte %llu%s", " (truncated?)");
      break;
    }
    if (z->at_end && z->kind == ZIN_XZ) break;       /* LZMA_CONCATENATED ends after the last stream */
  }
  z->out += done;
  return (ssize_t)done;
}

void zin_close(struct zin *z) {
  if (z->kind == ZIN_GZIP && z->dec) inflateEnd(z->dec);
  if (z->kind == ZIN_XZ && z->dec) lzma_end(z->dec);
  if (z->kind == ZIN_ZSTD) ZSTD_freeDStream(z->dec);
  else free(z->dec);
  if (z->own_fd && z->fd >= 0) close(z->fd);
  free(z->in);
  z->dec = NULL;
  z->in = NULL;
  z->fd = -1;
}
