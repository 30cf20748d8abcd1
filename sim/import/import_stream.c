/* A recording replayed as it is imported: two conversions, the second down a
** pipe into the replay (import.h, "A recording replayed as it is imported");
** or one, to a reader that needs no header first (import_feed). */
#define _GNU_SOURCE   /* pipe2, F_SETPIPE_SZ */
#include "import.h"
#include "import_int.h"
#include "sim/trace/hash.h"
#include "sim/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEND_RECORDS 4096            /* records per write into the pipe: 96 KiB */
#define PIPE_BYTES   (1 << 20)       /* the pipe's capacity asked for (Linux caps it at pipe-max-size) */

struct import_stream {
  struct import_job job;             /* its strings are the copies below */
  char *input, *workload, *command, *name;
  int rfd, wfd;                      /* the pipe's ends; -1 once handed over or closed */
  int copy_fd;                       /* where the sent bytes are copied too (import_stream_start), else -1 */
  struct xxh64 copy_hash;            /* of the bytes copied */
  uint64_t copied;                   /* their count */
  bool copy_failed;                  /* a write of the copy failed: it is not whole */
  char *kept;                        /* a kept conversion read instead of a pipe (import_stream_of_kept) */
  unsigned char *prefix;             /* IMPORT_RESERVE bytes: header, metadata, pad, @init records */
  uint64_t records;                  /* the first conversion's records (without @init) */
  uint64_t records_hash;             /* and the XXH64 of them */
  pthread_t thread;
  bool running;
  /* the second conversion's */
  struct trace_event buf[SEND_RECORDS];
  size_t nbuf;
  uint64_t sent;
  struct xxh64 sent_hash;
  bool reader_gone;                  /* the replay stopped reading: not a failure */
  bool changed;                      /* the recording gave more records the second time */
  int rc;
  char err[1024];
};

/* ---- the first conversion: counts ---- */

/* The records are hashed too, a buffer at a time, so that the second
** conversion can tell that it gave the same records. */
struct counting {
  struct trace_header h;
  struct xxh64 hash;
  struct trace_event buf[SEND_RECORDS];
  size_t n;
  char err[512];
};

static int count_emit(void *ctx, const struct trace_event *ev) {
  struct counting *c = ctx;
  c->buf[c->n++] = *ev;
  if (c->n == SEND_RECORDS) {
    xxh64_update(&c->hash, c->buf, sizeof c->buf);
    c->n = 0;
  }
  return trace_header_count(&c->h, ev, c->err);
}

/* One conversion of the job's input, every record to emit(ctx); with head,
** also what goes before the records.  0, or an exit code with the message in err. */
static int convert_once(const struct import_job *job, import_emit_fn emit, void *ctx, const char *emit_err,
                        struct import_head *head, unsigned *nvcpus, char *err, size_t errlen) {
  struct import_opts opt = job->opt;
  opt.input = strcmp(job->input, "-") ? job->input : "<stdin>";   /* as import_file names it */
  struct import im;
  import_init(&im, &opt, emit, ctx);
  im.binary = job->format->binary;
  struct input in = { .data = NULL };
  int rc = job->format->run_path ? 0 : import_input_open(&in, job->input, err, errlen);
  if (!rc) {
    if (in.mapped) { im.map_base = in.data; im.map_len = in.len; im.map_fd = in.fd; }
    rc = import_convert(job, &im, &in);
    if (rc) snprintf(err, errlen, "%s", emit_err[0] ? emit_err : im.err);
    else if (head) rc = import_head_of(job, &im, head, err, errlen);
    if (nvcpus) *nvcpus = im.nvcpus;
    im.map_base = NULL;
    im.map_fd = -1;
  }
  import_input_close(&in);
  im.emit = NULL;
  import_free(&im);
  return rc;
}

int import_feed(const struct import_job *job, import_emit_fn emit, void *ctx, char *workload, size_t wlen,
                char **meta, unsigned *nvcpus, char *err, size_t errlen) {
  struct import_job once = *job;
  once.opt.inits_inline = true;
  struct import_head head = { .meta = NULL };
  *nvcpus = 1;
  int rc = convert_once(&once, emit, ctx, "", &head, nvcpus, err, errlen);
  if (!rc) {
    snprintf(workload, wlen, "%s", head.workload);
    *meta = head.meta;
    head.meta = NULL;
  }
  import_head_free(&head);
  return rc;
}

static int first_conversion(struct import_stream *s, char *err, size_t errlen) {
  struct counting *c = xcalloc(1, sizeof *c);
  trace_header_reserved(&c->h);
  xxh64_init(&c->hash);
  struct import_head head = { .meta = NULL };
  unsigned nvcpus = 1;
  int rc = convert_once(&s->job, count_emit, c, c->err, &head, &nvcpus, err, errlen);
  if (!rc) {
    char why[512];
    rc = trace_reserved_prefix(&c->h, IMPORT_RESERVE, head.workload, nvcpus, s->job.opt.paging, head.meta,
                               head.inits, head.ninits, &s->prefix, why);
    if (rc) snprintf(err, errlen, "%s: %s", s->job.input, why);
  }
  xxh64_update(&c->hash, c->buf, c->n * sizeof *c->buf);
  s->records = c->h.event_count;
  s->records_hash = xxh64_final(&c->hash);
  import_head_free(&head);
  free(c);
  return rc;
}

/* ---- the second conversion: down the pipe ---- */

/* The copy of what is sent: a failed write (a full disk) leaves the copy
** unfinished, never the stream. */
static void copy_sent(struct import_stream *s, const void *data, size_t n) {
  if (s->copy_fd < 0 || s->copy_failed) return;
  xxh64_update(&s->copy_hash, data, n);
  s->copied += n;
  for (const char *p = data; n;) {
    ssize_t k = write(s->copy_fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      s->copy_failed = true;
      return;
    }
    p += k;
    n -= (size_t)k;
  }
}

static int send_all(struct import_stream *s, const void *data, size_t n) {
  copy_sent(s, data, n);
  const char *p = data;
  while (n) {
    ssize_t k = write(s->wfd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      if (errno == EPIPE) s->reader_gone = true;
      else snprintf(s->err, sizeof s->err, "%s: sending the imported records to the replay: %s", s->job.input,
                    strerror(errno));
      return EXIT_BADINPUT;
    }
    p += k;
    n -= (size_t)k;
  }
  return EXIT_OK;
}

static int send_buffered(struct import_stream *s) {
  xxh64_update(&s->sent_hash, s->buf, s->nbuf * sizeof *s->buf);
  int rc = send_all(s, s->buf, s->nbuf * sizeof *s->buf);
  s->nbuf = 0;
  return rc;
}

/* "changed while it was replayed" (the records differ from the first conversion's). */
static void changed(struct import_stream *s, const char *how) {
  s->changed = true;
  snprintf(s->err, sizeof s->err, "%s: changed while it was replayed (%s); nothing of it is kept: replay it "
           "again, or import it first ('vmxsim import')", s->job.input, how);
}

static int send_emit(void *ctx, const struct trace_event *ev) {
  struct import_stream *s = ctx;
  if (s->sent == s->records) {           /* one more than the header announces: none of it is sent */
    changed(s, "it holds more records than when it was first read");
    return EXIT_BADINPUT;
  }
  s->buf[s->nbuf++] = *ev;
  s->sent++;
  return s->nbuf == SEND_RECORDS ? send_buffered(s) : EXIT_OK;
}

static void *second_conversion(void *arg) {
  struct import_stream *s = arg;
  sigset_t all;                        /* signals are the main thread's; a write to a closed pipe is EPIPE */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  char err[1024] = "";
  xxh64_init(&s->sent_hash);
  xxh64_init(&s->copy_hash);
  int rc = send_all(s, s->prefix, IMPORT_RESERVE);
  if (!rc) rc = convert_once(&s->job, send_emit, s, s->err, NULL, NULL, err, sizeof err);
  if (!rc && s->nbuf) rc = send_buffered(s);
  if (!rc && s->sent != s->records) {
    changed(s, "it holds fewer records than when it was first read");
    rc = EXIT_BADINPUT;
  } else if (!rc && xxh64_final(&s->sent_hash) != s->records_hash) {
    changed(s, "its records differ from those first read");
    rc = EXIT_BADINPUT;
  } else if (rc && !s->err[0]) {
    snprintf(s->err, sizeof s->err, "%s", err);
  }
  close(s->wfd);
  s->wfd = -1;
  s->rc = s->reader_gone && !s->changed ? EXIT_OK : rc;
  return NULL;
}

/* ---- the stream ---- */

static void stream_free(struct import_stream *s) {
  if (s->rfd >= 0) close(s->rfd);
  if (s->wfd >= 0) close(s->wfd);
  free(s->input);
  free(s->workload);
  free(s->command);
  free(s->name);
  free(s->prefix);
  free(s->kept);
  free(s);
}

size_t import_stream_prefix_size(void) { return IMPORT_RESERVE; }

void import_stream_head(const struct import_stream *s, struct import_stream_known *k) {
  *k = (struct import_stream_known){ .prefix = s->prefix, .records = s->records, .records_hash = s->records_hash };
}

char *import_stream_metadata(const struct import_stream *s) {
  const unsigned char *p = s->prefix;          /* the header's metadata length: u32 at byte 24 (traces/FORMAT.md) */
  uint32_t len = (uint32_t)p[24] | (uint32_t)p[25] << 8 | (uint32_t)p[26] << 16 | (uint32_t)p[27] << 24;
  if (len > IMPORT_RESERVE - TRACE_HEADER_SIZE) len = 0;
  char *m = xmalloc(len + 1);
  memcpy(m, p + TRACE_HEADER_SIZE, len);
  m[len] = 0;
  return m;
}

/* A first conversion remembered from an earlier replay of the same file. */
static void take_known(struct import_stream *s, const struct import_stream_known *k) {
  s->prefix = xmalloc(IMPORT_RESERVE);
  memcpy(s->prefix, k->prefix, IMPORT_RESERVE);
  s->records = k->records;
  s->records_hash = k->records_hash;
}

int import_stream_start(const struct import_job *job, const struct import_stream_known *known, int copy_fd,
                        struct import_stream **out, char *err, size_t errlen) {
  *out = NULL;
  struct stat st;
  if (strcmp(job->input, "-") && stat(job->input, &st) != 0) {
    snprintf(err, errlen, "%s: %s", job->input, strerror(errno));
    return EXIT_BADINPUT;
  }
  if (!strcmp(job->input, "-") || !S_ISREG(st.st_mode)) {   /* a pipe cannot be read twice */
    snprintf(err, errlen, "%s: not a regular file: a recording replayed as it is imported is read twice "
             "(a pipe or standard input can be read once: import it first)", job->input);
    return EXIT_USAGE;
  }
  struct import_stream *s = xcalloc(1, sizeof *s);
  s->rfd = s->wfd = -1;
  s->copy_fd = copy_fd;
  s->job = *job;
  s->job.input = s->input = xstrdup(job->input);
  s->job.workload = s->workload = job->workload ? xstrdup(job->workload) : NULL;
  s->job.command = s->command = job->command ? xstrdup(job->command) : NULL;
  s->job.output = NULL;
  size_t n = strlen(job->input) + sizeof " (as imported)";
  s->name = xmalloc(n);
  snprintf(s->name, n, "%s (as imported)", job->input);
  int rc = 0;
  if (known) take_known(s, known);
  else rc = first_conversion(s, err, errlen);
  int fds[2];
  if (!rc && pipe2(fds, O_CLOEXEC) != 0) {
    snprintf(err, errlen, "%s: cannot make a pipe to replay it through: %s", job->input, strerror(errno));
    rc = EXIT_INTERNAL;
  }
  if (!rc) {
    s->rfd = fds[0];
    s->wfd = fds[1];
    (void)fcntl(s->wfd, F_SETPIPE_SZ, PIPE_BYTES);      /* fewer switches between the threads; optional */
    s->running = pthread_create(&s->thread, NULL, second_conversion, s) == 0;
    if (!s->running) {
      snprintf(err, errlen, "%s: cannot start the thread that imports it", job->input);
      rc = EXIT_INTERNAL;
    }
  }
  if (rc) stream_free(s);
  else *out = s;
  return rc;
}

struct import_stream *import_stream_of_kept(const char *kept, const char *input, const struct import_stream_known *known) {
  struct import_stream *s = xcalloc(1, sizeof *s);
  s->rfd = s->wfd = s->copy_fd = -1;
  s->kept = xstrdup(kept);
  s->input = xstrdup(input);
  size_t n = strlen(input) + strlen(kept) + sizeof " (as imported, kept in )";
  s->name = xmalloc(n);
  snprintf(s->name, n, "%s (as imported, kept in %s)", input, kept);
  take_known(s, known);
  return s;
}

bool import_stream_copied(const struct import_stream *s, uint64_t *bytes, uint64_t *hash) {
  /* a stream that changed or sent too few records has failed (rc); one whose
  ** reader stopped early has not, but its copy is short */
  if (s->kept || s->copy_fd < 0 || s->copy_failed || s->running || s->rc || s->reader_gone) return false;
  *bytes = s->copied;
  *hash = xxh64_final(&s->copy_hash);
  return true;
}

/* A kept conversion is a regular file: read as a trace, and hashed as it is
** read, so that the caller can check it against what was kept. */
static int open_kept(struct trace_reader *r, struct import_stream *s) {
  int rc = trace_open_flags(r, s->kept, INPUT_REGULAR_ONLY);
  r->path = s->name;               /* its messages name the recording too */
  if (!rc) trace_hash_start(r);
  return rc;
}

int import_stream_open(struct trace_reader *r, void *stream) {
  struct import_stream *s = stream;
  if (s->kept) return open_kept(r, s);
  int fd = s->rfd;
  s->rfd = -1;
  if (fd < 0) {
    memset(r, 0, sizeof *r);
    r->fd = r->stream_fd = -1;
    snprintf(r->err, sizeof r->err, "%s: a recording replayed as it is imported is read once; 'vmxsim import' "
             "writes a trace that can be read again", s->name);
    return EXIT_BADINPUT;
  }
  return trace_open_fd(r, fd, s->name);
}

int import_stream_join(struct import_stream *s, char *err, size_t errlen) {
  if (!s) return EXIT_OK;
  if (s->rfd >= 0) close(s->rfd);     /* never opened: the thread's next write fails, and it ends */
  s->rfd = -1;
  if (s->running) {
    pthread_join(s->thread, NULL);
    s->running = false;
  }
  if (s->rc) snprintf(err, errlen, "%s", s->err);
  return s->rc;
}

int import_stream_finish(struct import_stream *s, char *err, size_t errlen) {
  if (!s) return EXIT_OK;
  int rc = import_stream_join(s, err, errlen);
  stream_free(s);
  return rc;
}
