/* A file read ahead by a thread of its own (import_ahead.h). */
#include "import_ahead.h"
#include "sim/base/hugemem.h"
#include "sim/base/util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Chunks being read, ready or held: the reader holds at most two (the one it
** reads in and the one before, for its cut record), so three let the thread
** read one ahead. */
#define AHEAD_SLOTS 3

struct ahead {
  int fd;
  size_t len, chunk, room, nchunks;
  unsigned char *buf[AHEAD_SLOTS];     /* room + chunk bytes each */
  ssize_t got[AHEAD_SLOTS];            /* chunk k's length in buf[k % AHEAD_SLOTS]; -1: unreadable */
  struct huge_arena arena;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  /* guarded by mu: chunks [released, read) are read; [released, taken) held by the reader */
  size_t read, taken, released;
  bool quit;
};

/* Chunk k of the file into its slot; its length, or -1. */
static ssize_t read_chunk(struct ahead *a, size_t k) {
  size_t at = k * a->chunk, want = a->len - at < a->chunk ? a->len - at : a->chunk, done = 0;
  unsigned char *to = a->buf[k % AHEAD_SLOTS] + a->room;
  while (done < want) {
    ssize_t n = pread(a->fd, to + done, want - done, (off_t)(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;                       /* the file got shorter, or cannot be read */
    done += (size_t)n;
  }
  return (ssize_t)done;
}

static void *ahead_main(void *arg) {
  struct ahead *a = arg;
  sigset_t all;                                  /* signals are the main thread's */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  pthread_mutex_lock(&a->mu);
  for (size_t k = 0; k < a->nchunks; k++) {
    while (k - a->released >= AHEAD_SLOTS && !a->quit) pthread_cond_wait(&a->cv, &a->mu);
    if (a->quit) break;
    pthread_mutex_unlock(&a->mu);
    ssize_t got = read_chunk(a, k);              /* its slot is no one else's now */
    pthread_mutex_lock(&a->mu);
    a->got[k % AHEAD_SLOTS] = got;
    a->read = k + 1;
    pthread_cond_broadcast(&a->cv);
    if (got < 0) break;
  }
  pthread_mutex_unlock(&a->mu);
  return NULL;
}

struct ahead *ahead_start(int fd, size_t len, size_t chunk, size_t room) {
  struct ahead *a = xcalloc(1, sizeof *a);
  *a = (struct ahead){ .fd = fd, .len = len, .chunk = chunk, .room = room, .nchunks = (len + chunk - 1) / chunk };
  for (unsigned i = 0; i < AHEAD_SLOTS; i++) a->buf[i] = huge_alloc(&a->arena, room + chunk);
  bool mu = pthread_mutex_init(&a->mu, NULL) == 0, cv = mu && pthread_cond_init(&a->cv, NULL) == 0;
  if (cv && pthread_create(&a->thread, NULL, ahead_main, a) == 0) return a;
  if (cv) pthread_cond_destroy(&a->cv);
  if (mu) pthread_mutex_destroy(&a->mu);
  huge_arena_free(&a->arena);
  free(a);
  return NULL;
}

ssize_t ahead_take(struct ahead *a, unsigned char **p) {
  pthread_mutex_lock(&a->mu);
  size_t k = a->taken;
  ssize_t got = 0;
  if (k < a->nchunks) {
    while (a->read <= k) pthread_cond_wait(&a->cv, &a->mu);
    got = a->got[k % AHEAD_SLOTS];
    *p = a->buf[k % AHEAD_SLOTS] + a->room;
    if (got >= 0) a->taken = k + 1;
  }
  pthread_mutex_unlock(&a->mu);
  return got;
}

void ahead_release(struct ahead *a) {
  pthread_mutex_lock(&a->mu);
  if (a->released < a->taken) a->released++;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
}

void ahead_stop(struct ahead *a) {
  if (!a) return;
  pthread_mutex_lock(&a->mu);
  a->quit = true;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
  pthread_join(a->thread, NULL);
  pthread_cond_destroy(&a->cv);
  pthread_mutex_destroy(&a->mu);
  huge_arena_free(&a->arena);
  free(a);
}
