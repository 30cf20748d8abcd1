/* The views of a replay fed on a thread of its own (feeder.h). */
#include "feeder.h"
#include "sim/base/hugemem.h"
#include "sim/base/util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Blocks given and not yet fed, at most: enough that the replay hands a block
** on and goes on while the feeder is still on the one before (a barrier per
** block left both threads idle for a thread's wake-up twice a block, a quarter
** of a recording's replay), few enough that memory stays flat. */
#define FEEDER_DEPTH 3

/* Exits a sink holds before its block is given, at most.  One record may
** cause any number of exits (a touch of 2^20 pages under EPT is 2^20
** violations): past this many, the replay's thread feeds them to the view
** itself once every block given is fed (then the feeder touches no sink
** until the next is given), rather than keep 48 bytes an exit. */
#define FEEDER_NOTES_MAX 65536

/* An exit as views_add_keyed takes it: its cause's record is gone by the time
** it is fed, so what the cause says (the breakdown) is found when it is noted,
** which also keeps the note small (a block's notes are read once, from memory). */
struct note {
  uint64_t events, cr3, clock, cycles, key;
  uint32_t vcpu;
  uint16_t reason;
  uint8_t dim;
};

struct notes { struct note *v; size_t n, cap; };

/* A block given: a copy of its records (the replay's reader reuses theirs),
** and each sink's exits noted before it was given. */
struct slot {
  struct trace_event *evs;
  size_t n, cap;
  struct exit_note *xn;        /* a lean import's exits (feeder_set_notes) */
  size_t nxn, capxn;
  struct notes *notes;         /* [nsinks] */
};

struct feeder {
  struct views **views;
  unsigned n;
  struct views **sinks;
  struct notes *filling;       /* [nsinks]: the exits noted since the last give */
  unsigned nsinks;
  struct views *notes_view;    /* feeder_set_notes */
  struct exit_note_reader *reader;
  struct slot slots[FEEDER_DEPTH];
  /* the slots' records and notes, allocated by the thread that writes them
  ** (the replay's or importer's): their pages' first touches were a third of
  ** a replay's page faults, a tenth of a summary's (sim/base/hugemem.h); a
  ** buffer outgrown stays there unused */
  struct huge_arena arena;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  /* guarded by mu: block k is in slots[k % FEEDER_DEPTH] */
  uint64_t given, fed;
  bool quit;
};

static void feed_notes(struct views *w, struct notes *b) {
  for (size_t i = 0; i < b->n; i++) {
    const struct note *x = &b->v[i];
    w->events = x->events;
    views_add_keyed(w, x->vcpu, x->reason, x->dim, x->key, x->cr3, x->clock, x->cycles);
  }
  b->n = 0;
}

static void feed(struct feeder *f, struct slot *s) {
  views_feed_block(f->views, f->n, s->evs, s->n);
  for (unsigned k = 0; k < f->nsinks; k++) feed_notes(f->sinks[k], &s->notes[k]);
  if (s->nxn) views_add_notes(f->notes_view, f->reader, s->xn, s->nxn);
}

/* Feeds the blocks in the order given; after quit, those left first. */
static void *feeder_main(void *arg) {
  struct feeder *f = arg;
  pthread_mutex_lock(&f->mu);
  for (;;) {
    while (f->fed == f->given && !f->quit) pthread_cond_wait(&f->cv, &f->mu);
    if (f->fed == f->given) break;
    struct slot *s = &f->slots[f->fed % FEEDER_DEPTH];
    pthread_mutex_unlock(&f->mu);
    feed(f, s);
    pthread_mutex_lock(&f->mu);
    f->fed++;
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

/* Before the first block (the thread reads sinks and slots only for blocks given). */
unsigned feeder_add_sink(struct feeder *f, struct views *w) {
  unsigned k = f->nsinks++;
  f->sinks = xrealloc(f->sinks, f->nsinks * sizeof *f->sinks);
  f->sinks[k] = w;
  f->filling = xrealloc(f->filling, f->nsinks * sizeof *f->filling);
  f->filling[k] = (struct notes){ 0 };
  for (unsigned d = 0; d < FEEDER_DEPTH; d++) {
    struct slot *s = &f->slots[d];
    s->notes = xrealloc(s->notes, f->nsinks * sizeof *s->notes);
    s->notes[k] = (struct notes){ 0 };
  }
  return k;
}

static void grow_notes(struct feeder *f, struct notes *b) {
  b->cap = b->cap ? 2 * b->cap : 1024;
  struct note *v = huge_alloc(&f->arena, b->cap * sizeof *v);
  if (b->n) memcpy(v, b->v, b->n * sizeof *v);
  b->v = v;
}

void feeder_note(struct feeder *f, unsigned sink, uint64_t events, unsigned vcpu, unsigned reason,
                 const struct trace_event *cause, uint64_t cr3, uint64_t clock, uint64_t cycles) {
  struct notes *b = &f->filling[sink];
  if (b->n == FEEDER_NOTES_MAX) {
    feeder_wait(f);
    feed_notes(f->sinks[sink], b);
  }
  if (b->n == b->cap) grow_notes(f, b);
  uint64_t key;
  unsigned dim = views_breakdown(reason, cause, &key);
  b->v[b->n++] = (struct note){ .events = events, .cr3 = cr3, .clock = clock, .cycles = cycles, .key = key,
                                .vcpu = vcpu, .reason = (uint16_t)reason, .dim = (uint8_t)dim };
}

/* The next slot, once it is free (fed): the thread reads none at or past
** `given`, so it is filled without the lock. */
static struct slot *next_slot(struct feeder *f) {
  pthread_mutex_lock(&f->mu);
  while (f->given - f->fed >= FEEDER_DEPTH) pthread_cond_wait(&f->cv, &f->mu);
  struct slot *s = &f->slots[f->given % FEEDER_DEPTH];
  pthread_mutex_unlock(&f->mu);
  return s;
}

struct trace_event *feeder_reserve(struct feeder *f, size_t n) {
  struct slot *s = next_slot(f);
  if (n > s->cap) s->evs = huge_alloc(&f->arena, (s->cap = n) * sizeof *s->evs);
  return s->evs;
}

/* Hands the next slot on, with the exits noted since the last. */
static void hand_on(struct feeder *f, struct slot *s) {
  for (unsigned k = 0; k < f->nsinks; k++) {   /* the slot's notes were emptied when it was fed */
    struct notes t = s->notes[k];
    s->notes[k] = f->filling[k];
    f->filling[k] = t;
  }
  pthread_mutex_lock(&f->mu);
  f->given++;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}

void feeder_commit(struct feeder *f, size_t n) {
  struct slot *s = &f->slots[f->given % FEEDER_DEPTH];
  s->n = f->n ? n : 0;                         /* no measured views: the records are not needed */
  s->nxn = 0;
  hand_on(f, s);
}

void feeder_set_notes(struct feeder *f, struct views *w, struct exit_note_reader *r) {
  f->notes_view = w;
  f->reader = r;
}

struct exit_note *feeder_reserve_notes(struct feeder *f, size_t n) {
  struct slot *s = next_slot(f);
  if (n > s->capxn) s->xn = huge_alloc(&f->arena, (s->capxn = n) * sizeof *s->xn);   /* n is one size */
  return s->xn;
}

void feeder_commit_notes(struct feeder *f, size_t n) {
  struct slot *s = &f->slots[f->given % FEEDER_DEPTH];
  s->n = 0;
  s->nxn = f->reader ? n : 0;
  hand_on(f, s);
}

void feeder_give(struct feeder *f, const struct trace_event *evs, size_t n) {
  if (!f->n) n = 0;
  struct trace_event *to = feeder_reserve(f, n);
  if (n) memcpy(to, evs, n * sizeof *evs);
  feeder_commit(f, n);
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
  for (unsigned d = 0; d < FEEDER_DEPTH; d++) free(f->slots[d].notes);
  huge_arena_free(&f->arena);
  free(f->filling);
  free(f->sinks);
  free(f);
}
