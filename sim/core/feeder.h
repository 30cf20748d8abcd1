/* The recorded side of a replay on a thread of its own.  The measured views
** (views_feed) depend on the trace's records only, not on any engine, so on a
** machine with a processor to spare they are fed each block while the engines
** replay it; the runner waits for both before the next block, whose records
** replace this one's.  The records are fed in the same order either way, so
** the views are the same. */
#ifndef VMXSIM_FEEDER_H
#define VMXSIM_FEEDER_H

#include <stddef.h>
#include "models/event.h"
#include "views.h"

struct feeder;
/* A feeder of views[0..n) (kept by the caller), or NULL when none is worth
** starting (n == 0, one processor, no thread): the caller feeds them itself. */
struct feeder *feeder_start(struct views **views, unsigned n);
/* Begins feeding the block; evs must stay valid until feeder_wait returns. */
void feeder_give(struct feeder *f, const struct trace_event *evs, size_t n);
/* Returns once the block given last is fed. */
void feeder_wait(struct feeder *f);
/* Ends the thread (after feeder_wait) and frees f; NULL does nothing. */
void feeder_stop(struct feeder *f);

#endif
