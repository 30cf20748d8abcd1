/* The views of a replay fed on a thread of its own (feeder.h). */
#include "feeder.h"
#include "util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/* An exit as views_add takes it; the cause copied, as its record is gone by the time it is fed. */
struct note {
  uint64_t events, cr3, clock, cycles;
  struct trace_event cause;
  uint32_t vcpu;
  uint16_t reason;
  bool has_cause;
};

struct notes { struct note *v; size_t n, cap; };

/* A simulated view: the exits noted during this block, and those of the block before, being fed. */
struct sink {
  struct views *w;
  struct notes filling, feeding;
};

struct feeder {
  struct views **views;
  unsigned n;
  struct sink *sinks;
  unsigned nsinks;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  /* guarded by mu */
  const struct trace_event *evs;
  size_t nevs;
  uint64_t given, fed;        /* blocks */
  bool quit;
};

static void feed(struct feeder *f, const struct trace_event *evs, size_t n) {
  views_feed_block(f->views, f->n, evs, n);
  for (unsigned k = 0; k < f->nsinks; k++) {
    struct sink *s = &f->sinks[k];
    for (size_t i = 0; i < s->feeding.n; i++) {
      const struct note *x = &s->feeding.v[i];
      s->w->events = x->events;
      views_add(s->w, x->vcpu, x->reason, x->has_cause ? &x->cause : NULL, x->cr3, x->clock, x->cycles);
    }
    s->feeding.n = 0;
  }
}

static void *feeder_main(void *arg) {
  struct feeder *f = arg;
  pthread_mutex_lock(&f->mu);
  for (;;) {
    while (f->fed == f->given && !f->quit) pthread_cond_wait(&f->cv, &f->mu);
    if (f->quit) break;
    const struct trace_event *evs = f->evs;
    size_t n = f->nevs;
    pthread_mutex_unlock(&f->mu);
    feed(f, evs, n);
    pthread_mutex_lock(&f->mu);
    f->fed = f->given;
    pthread_cond_broadcast(&f->cv);
  }
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

struct feeder *feeder_start(struct views **views, unsigned n) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return NULL;
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

unsigned feeder_add_sink(struct feeder *f, struct views *w) {
  f->sinks = xrealloc(f->sinks, (f->nsinks + 1) * sizeof *f->sinks);
  f->sinks[f->nsinks] = (struct sink){ .w = w };
  return f->nsinks++;
}

void feeder_note(struct feeder *f, unsigned sink, uint64_t events, unsigned vcpu, unsigned reason,
                 const struct trace_event *cause, uint64_t cr3, uint64_t clock, uint64_t cycles) {
  struct notes *b = &f->sinks[sink].filling;
  if (b->n == b->cap) b->v = xrealloc(b->v, (b->cap = b->cap ? 2 * b->cap : 1024) * sizeof *b->v);
  b->v[b->n++] = (struct note){ .events = events, .cr3 = cr3, .clock = clock, .cycles = cycles,
                                .cause = cause ? *cause : (struct trace_event){ 0 }, .vcpu = vcpu,
                                .reason = (uint16_t)reason, .has_cause = cause != NULL };
}

void feeder_give(struct feeder *f, const struct trace_event *evs, size_t n) {
  pthread_mutex_lock(&f->mu);
  for (unsigned k = 0; k < f->nsinks; k++) {   /* the thread is idle: the last give was waited for */
    struct notes t = f->sinks[k].feeding;
    f->sinks[k].feeding = f->sinks[k].filling;
    f->sinks[k].filling = t;
  }
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
  for (unsigned k = 0; k < f->nsinks; k++) {
    free(f->sinks[k].filling.v);
    free(f->sinks[k].feeding.v);
  }
  free(f->sinks);
  free(f);
}
