/* A pool of worker processes answering tasks through pipes (see pool.h). */
#include "pool.h"
#include "sim/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Tasks handed to one worker at a time: the one it runs and the next, which
** waits in its pipe, so that the worker never waits for the parent to take an
** answer (a busy machine can take milliseconds to schedule the parent). */
#define POOL_DEPTH 2

struct worker {
  pid_t pid;
  int task_fd;          /* parent writes task numbers */
  int reply_fd;         /* parent reads answers */
  bool alive;
  bool gone;            /* its task pipe broke: it died; its answers are read to the end */
  uint32_t queue[POOL_DEPTH];   /* handed out, not answered yet, oldest first */
  unsigned nq;
};

/* One pool_run: the tasks, the next to hand out, those a dead worker left. */
struct run {
  const uint32_t *tasks;
  size_t n, next, answered;
  uint32_t *retry;      /* handed to a worker that died before starting them */
  size_t nretry;
  pool_done_fn done;
  void *ctx;
};

struct pool {
  struct worker *w;
  unsigned n;
  struct pollfd *fds;   /* [n]: the busy workers' reply pipes */
  unsigned *who;        /* [n]: their workers */
  pool_work_fn work;
  void *ctx;
};

/* An answer's header; the reply's bytes follow. */
struct reply_head {
  uint32_t task;
  uint32_t len;
};

static bool write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n, len -= (size_t)n;
  }
  return true;
}

/* 1: all read; 0: end of file before any byte; -1: error or a short read. */
static int read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, p + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return got == 0 && n == 0 ? 0 : -1;
    got += (size_t)n;
  }
  return 1;
}

/* The parent's bookkeeping, which a worker does not use. */
static void pool_free(struct pool *p) {
  free(p->w);
  free(p->fds);
  free(p->who);
  free(p);
}

static _Noreturn void worker_main(struct pool *p, int task_fd, int reply_fd) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  interrupt_clear();
  for (;;) {
    uint32_t task;
    if (read_all(task_fd, &task, sizeof task) != 1) {   /* the parent is gone or done */
      pool_free(p);
      _exit(0);
    }
    void *reply = NULL;
    size_t len = 0;
    p->work(p->ctx, task, &reply, &len);
    struct reply_head h = { task, (uint32_t)len };
    if (!write_all(reply_fd, &h, sizeof h) || !write_all(reply_fd, reply, len)) _exit(1);
    free(reply);
  }
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Forks worker i; its pipes are the only ones it keeps open. */
static int start_worker(struct pool *p, unsigned i, char *err, size_t errlen) {
  int tfd[2], rfd[2];
  if (pipe(tfd) != 0) goto fail;
  if (pipe(rfd) != 0) {
    close(tfd[0]), close(tfd[1]);
    goto fail;
  }
  fflush(NULL);   /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid < 0) {
    close(tfd[0]), close(tfd[1]), close(rfd[0]), close(rfd[1]);
    goto fail;
  }
  if (pid == 0) {
    for (unsigned j = 0; j < i; j++) close_fd(&p->w[j].task_fd), close_fd(&p->w[j].reply_fd);
    close(tfd[1]), close(rfd[0]);
    worker_main(p, tfd[0], rfd[1]);
  }
  close(tfd[0]), close(rfd[1]);
  fcntl(tfd[1], F_SETFD, FD_CLOEXEC);
  fcntl(rfd[0], F_SETFD, FD_CLOEXEC);
  p->w[i] = (struct worker){ .pid = pid, .task_fd = tfd[1], .reply_fd = rfd[0], .alive = true };
  return 0;
fail:
  snprintf(err, errlen, "cannot start worker process %u: %s", i + 1, strerror(errno));
  return EXIT_INTERNAL;
}

int pool_start(struct pool **out, unsigned workers, pool_work_fn work, void *ctx, char *err, size_t errlen) {
  struct pool *p = xcalloc(1, sizeof *p);
  p->w = xcalloc(workers ? workers : 1, sizeof *p->w);
  p->fds = xcalloc(workers ? workers : 1, sizeof *p->fds);
  p->who = xcalloc(workers ? workers : 1, sizeof *p->who);
  p->work = work;
  p->ctx = ctx;
  *out = NULL;
  for (unsigned i = 0; i < workers; i++) {
    int rc = start_worker(p, i, err, errlen);
    if (rc) {
      pool_stop(p);
      return rc;
    }
    p->n = i + 1;
  }
  *out = p;
  return 0;
}

static void reap(struct worker *w, int *status) {
  close_fd(&w->task_fd);
  close_fd(&w->reply_fd);
  while (waitpid(w->pid, status, 0) < 0 && errno == EINTR) {}
  w->alive = false;
}

/* Hands task to w; false when w died (reaped now when it holds no task; else
** its answers are still read, then its end-of-file reports it). */
static bool give(struct worker *w, uint32_t task) {
  if (!write_all(w->task_fd, &task, sizeof task)) {
    w->gone = true;
    if (!w->nq) {
      int status;
      reap(w, &status);
    }
    return false;
  }
  w->queue[w->nq++] = task;
  return true;
}

static bool pending(const struct run *r) { return r->nretry > 0 || r->next < r->n; }
static uint32_t peek(const struct run *r) { return r->nretry ? r->retry[r->nretry - 1] : r->tasks[r->next]; }
static void take(struct run *r) {
  if (r->nretry) r->nretry--;
  else r->next++;
}

/* A dead worker's tasks after the one it was running go back to the pending ones. */
static void requeue(struct run *r, struct worker *w) {
  r->retry = xrealloc(r->retry, (r->nretry + w->nq) * sizeof *r->retry);
  for (unsigned i = w->nq; i-- > 1;) r->retry[r->nretry++] = w->queue[i];
  w->nq = 0;
}

/* Tops every worker's queue up with pending tasks. */
static void hand_out(struct pool *p, struct run *r) {
  for (unsigned i = 0; i < p->n; i++) {
    struct worker *w = &p->w[i];
    while (w->alive && !w->gone && w->nq < POOL_DEPTH && pending(r) && give(w, peek(r))) take(r);
  }
}

/* The worker died: its running task is answered NULL, the rest handed out again. */
static int worker_died(struct pool *p, struct run *r, struct worker *w) {
  int status = 0;
  uint32_t task = w->queue[0];
  bool had_task = w->nq > 0;
  reap(w, &status);
  if (had_task) requeue(r, w);
  hand_out(p, r);
  if (!had_task) return 0;
  r->answered++;
  return interrupt_requested() ? EXIT_INTERRUPTED : r->done(r->ctx, task, NULL, 0, status);
}

/* Reads w's oldest answer and hands it to done(). */
static int collect(struct pool *p, struct run *r, struct worker *w) {
  struct reply_head h;
  uint32_t task = w->queue[0];
  void *data = NULL;
  int got = read_all(w->reply_fd, &h, sizeof h);
  if (got == 1 && h.task == task) {
    data = xmalloc(h.len ? h.len : 1);
    got = read_all(w->reply_fd, data, h.len) == 1 || h.len == 0 ? 1 : -1;
  } else {
    got = -1;
  }
  if (got != 1) {
    free(data);
    return worker_died(p, r, w);
  }
  memmove(w->queue, w->queue + 1, (--w->nq) * sizeof *w->queue);
  r->answered++;
  hand_out(p, r);   /* before the parent's own work on the answer */
  int rc = r->done(r->ctx, task, data, h.len, 0);
  free(data);
  return rc;
}

static int wait_round(struct pool *p, struct run *r, char *err, size_t errlen) {
  struct pollfd *fds = p->fds;
  unsigned *who = p->who, nfds = 0;
  for (unsigned i = 0; i < p->n; i++)
    if (p->w[i].alive && p->w[i].nq) {
      fds[nfds] = (struct pollfd){ .fd = p->w[i].reply_fd, .events = POLLIN };
      who[nfds++] = i;
    }
  if (nfds == 0) {
    snprintf(err, errlen, "no worker process left to run the remaining %zu tasks", r->n - r->answered);
    return EXIT_INTERNAL;
  }
  if (poll(fds, nfds, -1) < 0) {
    if (errno == EINTR) return 0;   /* a signal: the caller looks at interrupt_requested() */
    snprintf(err, errlen, "waiting for the workers: %s", strerror(errno));
    return EXIT_INTERNAL;
  }
  for (unsigned k = 0; k < nfds; k++) {
    if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    int rc = collect(p, r, &p->w[who[k]]);
    if (rc) return rc;
  }
  return 0;
}

int pool_run(struct pool *p, const uint32_t *tasks, size_t n, pool_done_fn done, void *ctx, char *err,
             size_t errlen) {
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old;
  sigaction(SIGPIPE, &ignore, &old);   /* a dead worker's pipe: EPIPE, not death */
  struct run r = { .tasks = tasks, .n = n, .done = done, .ctx = ctx };
  int rc = 0;
  hand_out(p, &r);
  while (r.answered < n && !rc) {
    if (interrupt_requested()) rc = EXIT_INTERRUPTED;
    else rc = wait_round(p, &r, err, errlen);
  }
  free(r.retry);
  sigaction(SIGPIPE, &old, NULL);
  return rc;
}

void pool_stop(struct pool *p) {
  if (!p) return;
  for (unsigned i = 0; i < p->n; i++) {
    struct worker *w = &p->w[i];
    if (!w->alive) continue;
    close_fd(&w->task_fd);             /* an idle worker reads end-of-file and exits */
    if (w->nq) kill(w->pid, SIGTERM);
    int status;
    reap(w, &status);
  }
  pool_free(p);
}
