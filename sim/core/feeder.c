/* The recorded side of a replay on a thread of its own (feeder.h). */
#include "feeder.h"
#include "util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct feeder {
  struct views **views;
  unsigned n;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  /* guarded by mu */
  const struct trace_event *evs;
  size_t nevs;
  uint64_t given, fed;        /* blocks */
  bool quit;
};

static void *feeder_main(void *arg) {
  struct feeder *f = arg;
  pthread_mutex_lock(&f->mu);
  for (;;) {
    while (f->fed == f->given && !f->quit) pthread_cond_wait(&f->cv, &f->mu);
    if (f->quit) break;
    const struct trace_event *evs = f->evs;
    size_t n = f->nevs;
    pthread_mutex_unlock(&f->mu);
    for (unsigned m = 0; m < f->n; m++)
      for (size_t i = 0; i < n; i++) views_feed(f->views[m], &evs[i]);
    pthread_mutex_lock(&f->mu);
    f->fed = f->given;
    pthread_cond_broadcast(&f->cv);
  }
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

struct feeder *feeder_start(struct views **views, unsigned n) {
  if (n == 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2) return NULL;
  struct feeder *f = xcalloc(1, sizeof *f);
  f->views = views;
  f->n = n;
  if (pthread_mutex_init(&f->mu, NULL) != 0) { free(f); return NULL; }
  if (pthread_cond_init(&f->cv, NULL) != 0) { pthread_mutex_destroy(&f->mu); free(f); return NULL; }
  if (pthread_create(&f->thread, NULL, feeder_main, f) != 0) {
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
    return NULL;
  }
  return f;
}

void feeder_give(struct feeder *f, const struct trace_event *evs, size_t n) {
  pthread_mutex_lock(&f->mu);
  f->evs = evs;
  f->nevs = n;
  f->given++;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}

void feeder_wait(struct feeder *f) {
  pthread_mutex_lock(&f->mu);
  while (f->fed != f->given) pthread_cond_wait(&f->cv, &f->mu);
  pthread_mutex_unlock(&f->mu);
}

void feeder_stop(struct feeder *f) {
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  f->quit = true;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  pthread_join(f->thread, NULL);
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
}
