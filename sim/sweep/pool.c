/* A pool of worker processes answering tasks through pipes (see pool.h). */
#include "pool.h"
#include "sim/core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct worker {
  pid_t pid;
  int task_fd;          /* parent writes task numbers */
  int reply_fd;         /* parent reads answers */
  bool alive, busy;
  uint32_t task;
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
  w->alive = w->busy = false;
}

/* Hands task to w; false when w is gone (then reaped). */
static bool give(struct worker *w, uint32_t task) {
  if (!write_all(w->task_fd, &task, sizeof task)) {
    int status;
    reap(w, &status);
    return false;
  }
  w->busy = true;
  w->task = task;
  return true;
}

/* Hands out pending tasks to idle workers. */
static void hand_out(struct pool *p, const uint32_t *tasks, size_t n, size_t *next) {
  for (unsigned i = 0; i < p->n && *next < n; i++)
    if (p->w[i].alive && !p->w[i].busy && give(&p->w[i], tasks[*next])) ++*next;
}

/* Reads w's answer and hands it to done(); a worker that died answers NULL. */
static int collect(struct pool *p, struct worker *w, const uint32_t *tasks, size_t n, size_t *next,
                   pool_done_fn done, void *ctx) {
  struct reply_head h;
  uint32_t task = w->task;
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
    int status = 0;
    reap(w, &status);
    hand_out(p, tasks, n, next);
    return interrupt_requested() ? EXIT_INTERRUPTED : done(ctx, task, NULL, 0, status);
  }
  w->busy = false;
  hand_out(p, tasks, n, next);   /* before the parent's own work on the answer, so no worker waits */
  int rc = done(ctx, task, data, h.len, 0);
  free(data);
  return rc;
}

static int wait_round(struct pool *p, const uint32_t *tasks, size_t n, size_t *next, size_t *answered,
                      pool_done_fn done, void *ctx, char *err, size_t errlen) {
  struct pollfd *fds = p->fds;
  unsigned *who = p->who, nfds = 0;
  for (unsigned i = 0; i < p->n; i++)
    if (p->w[i].alive && p->w[i].busy) {
      fds[nfds] = (struct pollfd){ .fd = p->w[i].reply_fd, .events = POLLIN };
      who[nfds++] = i;
    }
  if (nfds == 0) {
    snprintf(err, errlen, "no worker process left to run the remaining %zu tasks", n - *answered);
    return EXIT_INTERNAL;
  }
  if (poll(fds, nfds, -1) < 0) {
    if (errno == EINTR) return 0;   /* a signal: the caller looks at interrupt_requested() */
    snprintf(err, errlen, "waiting for the workers: %s", strerror(errno));
    return EXIT_INTERNAL;
  }
  for (unsigned k = 0; k < nfds; k++) {
    if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ++*answered;
    int rc = collect(p, &p->w[who[k]], tasks, n, next, done, ctx);
    if (rc) return rc;
  }
  return 0;
}

int pool_run(struct pool *p, const uint32_t *tasks, size_t n, pool_done_fn done, void *ctx, char *err,
             size_t errlen) {
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old;
  sigaction(SIGPIPE, &ignore, &old);   /* a dead worker's pipe: EPIPE, not death */
  size_t next = 0, answered = 0;
  int rc = 0;
  hand_out(p, tasks, n, &next);
  while (answered < n && !rc) {
    if (interrupt_requested()) rc = EXIT_INTERRUPTED;
    else rc = wait_round(p, tasks, n, &next, &answered, done, ctx, err, errlen);
  }
  sigaction(SIGPIPE, &old, NULL);
  return rc;
}

void pool_stop(struct pool *p) {
  if (!p) return;
  for (unsigned i = 0; i < p->n; i++) {
    struct worker *w = &p->w[i];
    if (!w->alive) continue;
    close_fd(&w->task_fd);             /* an idle worker reads end-of-file and exits */
    if (w->busy) kill(w->pid, SIGTERM);
    int status;
    reap(w, &status);
  }
  pool_free(p);
}
