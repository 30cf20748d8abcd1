/* The views of a replay fed on a thread of its own.  The measured views
** (views_feed) depend on the trace's records only, and the simulated ones on
** the exits the engines report, not on what the engines do next; so on a
** machine with a processor to spare a thread feeds them while the engines
** replay.  The measured views are fed each block while the engines replay it
** (the runner waits for both before the next block, whose records replace this
** one's); the exits an engine reports are noted during a block (a copy of
** what views_add needs) and fed while the engines replay the next one.  Each
** view is fed in the same order either way, so the views are the same. */
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
** thread that replays the engine; one thread per sink. */
void feeder_note(struct feeder *f, unsigned sink, uint64_t events, unsigned vcpu, unsigned reason,
                 const struct trace_event *cause, uint64_t cr3, uint64_t clock, uint64_t cycles);
/* Begins feeding the block's records to the measured views and the exits
** noted so far to the simulated ones; evs must stay valid until feeder_wait
** returns.  feeder_give(f, NULL, 0) after the last block feeds the last exits. */
void feeder_give(struct feeder *f, const struct trace_event *evs, size_t n);
/* Returns once what was given last is fed. */
void feeder_wait(struct feeder *f);
/* Ends the thread (after feeder_wait) and frees f; NULL does nothing. */
void feeder_stop(struct feeder *f);

#endif
