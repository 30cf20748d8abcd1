/* The engine: replays trace events on the VM model and is the only place
** where cycles are charged (native guest time, exits, MMU work). */
#ifndef VMXSIM_ENGINE_H
#define VMXSIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "models/mmu/mmu.h"
#include "models/hv/vcpu.h"
#include "policy.h"
#include "profile.h"
#include "stats.h"
#include "trace.h"

/* What happened at the last event, for the REPL and tests. */
struct engine_last {
  struct exit_decision decision;   /* the VMX decision for the event */
  unsigned exits;                  /* exits the event caused (MMU faults included) */
  unsigned last_reason;            /* reason of the last of them */
  uint64_t cycles;                 /* hypervisor cycles the event cost */
};

/*
** An observer of a replay (sim/core/views.c keeps the per-vCPU, per-MSR, per-port...
** views with it): told of every exit the engine charges.  NULL: nobody listens.
** (Measured records, EV_MEASURED, are no guest events: engine_step passes over
** them; whoever reads the trace sees them.)
*/
struct engine;
struct engine_exit_info {
  unsigned vcpu, reason;
  unsigned key;                    /* the breakdown row charged besides the reason; == reason if none */
  uint64_t cycles;                 /* what the exit cost */
  const struct trace_event *cause; /* the event being replayed (for an MMU exit: the touch or ptwrite) */
};
struct engine_observer {
  void (*exit)(void *ctx, const struct engine *e, const struct engine_exit_info *x);
  void *ctx;
};

struct engine {
  const struct policy *pol;
  const struct profile *prof;
  unsigned nvcpu, paging;
  struct vcpu *vcpu;               /* [nvcpu] */
  struct mmu *mmu;
  struct stats st;
  uint64_t *vcpu_cycles;           /* [nvcpu] guest + hypervisor cycles per vCPU */
  uint64_t *vmcs_charged;          /* [2 * nvcpu] VMREADs, VMWRITEs of each vCPU charged so far */
  uint64_t index;                  /* events replayed so far */
  struct engine_last last;
  struct mmu_sink sink;
  struct engine_observer obs;      /* zeroed by engine_init; set it afterwards */
  const struct trace_event *cur;   /* the event engine_step is replaying */
};

/* Sets up the VM for a trace header.  Returns 0, EXIT_VMENTRY with a message
** when VM entry would fail (e.g. CR3_TARGET_COUNT above the CPU's supported
** count), or EXIT_USAGE when the policy cannot run this VM (a shadow pool too
** small for the pinned roots). */
int engine_init(struct engine *e, const struct policy *p, const struct profile *pr,
                 unsigned nvcpu, unsigned paging, char *err, size_t errlen);
void engine_free(struct engine *e);
/* Replays one event. */
void engine_step(struct engine *e, const struct trace_event *ev);
/* Replays the rest of the trace; progress(e, arg) is called every 2^22 events
** when non-NULL and returns false to stop early.  Returns 0, or EXIT_BADINPUT
** on a corrupt record (message in r->err). */
int engine_run(struct engine *e, struct trace_reader *r, bool (*progress)(struct engine *, void *), void *arg);
/* Cycles that elapsed: the busiest vCPU's guest + hypervisor cycles. */
uint64_t engine_elapsed(const struct engine *e);
/* Cost in cycles of one exit with stat key `key` and work w (pure). */
uint64_t engine_exit_cost(const struct profile *pr, unsigned key, const struct work *w);

#endif
