/* The views of a replay fed on a thread of its own.  The measured views
** (views_feed) depend on the trace's records only, and the simulated ones on
** the exits the engines report, not on what the engines do next; so on a
** machine with a processor to spare a thread feeds them while the engines
** replay.  Each block is handed on as it is given (a copy of its records, as
** the reader reuses theirs, and the exits noted since the block before, each
** a copy of what views_add_keyed needs) and fed in order while the engines go
** on: the replay waits only when FEEDER_DEPTH blocks are still unfed, so
** neither thread waits for the other at every block.  Each view is fed in the
** same order either way, so the views are the same. */
#ifndef VMXSIM_FEEDER_H
#define VMXSIM_FEEDER_H

#include <stddef.h>
#include <stdint.h>
#include "models/event.h"
#include "views.h"

struct feeder;
/* A feeder of the measured views[0..n) (kept by the caller), or NULL when no
** thread can be started or the machine has one processor: the caller then
** feeds every view itself. */
struct feeder *feeder_start(struct views **views, unsigned n);
/* A simulated view the feeder will feed with the exits noted for it (before
** the first block); its number for feeder_note. */
unsigned feeder_add_sink(struct feeder *f, struct views *w);
/* One exit for sink's view: views_add's arguments, and the engine's event
** count then (the view's `events`, for time series in events).  Called by the
** thread that replays the engine, one thread per sink, and before the
** feeder_give that hands it on (which takes every sink's notes).  A block's
** exits are kept up to a bound (feeder.c, FEEDER_NOTES_MAX); past it, this
** waits for the blocks given to be fed and feeds the sink's view itself. */
void feeder_note(struct feeder *f, unsigned sink, uint64_t events, unsigned vcpu, unsigned reason,
                 const struct trace_event *cause, uint64_t cr3, uint64_t clock, uint64_t cycles);
/* Hands on the block's records (copied: evs may change once it returns) for
** the measured views and the exits noted so far for the simulated ones, to
** be fed after the blocks given before; waits while FEEDER_DEPTH blocks are
** unfed.  feeder_give(f, NULL, 0) after the last block hands on the last exits. */
void feeder_give(struct feeder *f, const struct trace_event *evs, size_t n);
/* feeder_give without the copy: room for n records in the next block (after
** waiting, as feeder_give does, while FEEDER_DEPTH blocks are unfed), to fill
** in place and hand on with feeder_commit(f, k), k <= n, before any other
** call on f. */
struct trace_event *feeder_reserve(struct feeder *f, size_t n);
void feeder_commit(struct feeder *f, size_t n);
/* A lean import's exits (views.h, struct exit_note) go to view w, read with
** r, which the feeder's thread keeps: before the first block. */
void feeder_set_notes(struct feeder *f, struct views *w, struct exit_note_reader *r);
/* feeder_reserve and feeder_commit for a block of n exit notes, filled in
** place (no records in the block). */
struct exit_note *feeder_reserve_notes(struct feeder *f, size_t n);
void feeder_commit_notes(struct feeder *f, size_t n);
/* Returns once every block given is fed. */
void feeder_wait(struct feeder *f);
/* Ends the thread (after feeder_wait) and frees f; NULL does nothing. */
void feeder_stop(struct feeder *f);

#endif
