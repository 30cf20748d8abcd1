/* The engine: replays trace events on the VM model and is the only place
** where cycles are charged (native guest time, exits, MMU work). */
#ifndef VMXSIM_ENGINE_H
#define VMXSIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "models/mmu/mmu.h"
#include "models/hv/vcpu.h"
#include "sim/config/policy.h"
#include "sim/config/profile.h"
#include "stats.h"
#include "sim/trace/trace.h"

/* What happened at the last event, for the REPL and tests. */
struct engine_last {
  struct exit_decision decision;   /* the VMX decision for the event */
  unsigned exits;                  /* exits the event caused (MMU faults included) */
  unsigned last_reason;            /* reason of the last of them */
  uint64_t cycles;                 /* hypervisor cycles the event cost */
};

/* The prices of one CPU profile.  What the model does never depends on
** prices, so one replay serves every profile: each ledger is charged the same
** work at its own prices.  Ledger 0 is the engine's own profile (its st and
** vcpu_cycles are the engine's, which also hold the counters and event
** counts); engine_add_profile adds the others. */
struct engine_ledger {
  const struct profile *prof;
  struct stats *st;                /* rows and cycle totals */
  uint64_t *vcpu_cycles;           /* [nvcpu] */
  /* [nvcpu] the clocks of the last IPI to each vCPU: its sender's when it
  ** left, the vCPU's own when it took it (a wait record reads them) */
  uint64_t *ipi_sent, *ipi_taken;
};

/*
** An observer of a replay (sim/replay/views.c keeps the per-vCPU, per-MSR, per-port...
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
  uint8_t *ipi_state;              /* [nvcpu] IPI_TAKEN, IPI_POSTED of the last IPI each vCPU took */
  uint64_t index;                  /* events replayed so far */
  uint64_t failed_record;          /* engine_failure seen: 1 + its record, or UINT64_MAX when no record
                                      made it; 0 before */
  struct engine_last last;
  struct mmu_sink sink;
  unsigned nledger;                /* profiles priced: ledger[0..nledger), 1 + engine_add_profile's
                                      (no observer with more than one) */
  struct engine_ledger *ledger;
  struct engine_observer obs;      /* zeroed by engine_init; set it afterwards */
  const struct trace_event *cur;   /* the event being replayed */
};

/* Sets up the VM for a trace header.  Returns 0, EXIT_VMENTRY with a message
** when VM entry would fail (e.g. CR3_TARGET_COUNT above the CPU's supported
** count), or EXIT_USAGE when the policy cannot run this VM (a shadow pool too
** small for the pinned roots). */
int engine_init(struct engine *e, const struct policy *p, const struct profile *pr,
                 unsigned nvcpu, unsigned paging, char *err, size_t errlen);
void engine_free(struct engine *e);
/* Prices the replay at profile pr too (before the first event), as ledger
** e->nledger.  EXIT_VMENTRY with a message when that CPU fails VM entry. */
int engine_add_profile(struct engine *e, const struct profile *pr, char *err, size_t errlen);
/* Ledger k's statistics (0: the engine's own profile), with the engine's
** counters and event counts, for a report; and its elapsed cycles. */
void engine_ledger_stats(const struct engine *e, unsigned k, struct stats *st);
uint64_t engine_ledger_elapsed(const struct engine *e, unsigned k);
/* Replays one event, keeping what the REPL shows of it (e->last). */
void engine_step(struct engine *e, const struct trace_event *ev);
/* Replays n validated events (a block of trace_next_block) without e->last;
** measured records (EV_MEASURED) are passed over.  A run does not wake a
** halted vCPU there, as the replay of traces without measured exits always
** counted it; engine_run_block_stepwise replays as engine_step does (a run
** wakes it), as the replay of traces with measured exits always did. */
void engine_run_block(struct engine *e, const struct trace_event *ev, size_t n);
/* Brings the counts and cycles up to date after blocks (mmu_settle): call it
** before reading them (engine_run does, before progress and at the end). */
void engine_settle(struct engine *e);
/* Why the replay so far cannot stand for a real guest (mmu_failure), or NULL:
** a run it is true of is refused as bad input, not reported. */
const char *engine_failure(const struct engine *e);
/* The record that made engine_failure true, when a guest event did: false when
** none did (an exit's own work) or it is not true. */
bool engine_failure_record(const struct engine *e, uint64_t *record);
/* When engine_failure says why, puts it in r->err, naming the trace, and is true. */
bool engine_refuse(const struct engine *e, struct trace_reader *r);
void engine_run_block_stepwise(struct engine *e, const struct trace_event *ev, size_t n);
/* Replays the rest of the trace; progress(e, arg) is called every
** ENGINE_PROGRESS_EVENTS events when non-NULL and returns false to stop
** early.  Returns 0, or EXIT_BADINPUT on a corrupt record or a trace that
** cannot stand for a real guest (engine_failure; message in r->err). */
int engine_run(struct engine *e, struct trace_reader *r, bool (*progress)(struct engine *, void *), void *arg);
#define ENGINE_PROGRESS_EVENTS (1u << 22)
/* Events before the next progress point, and whether the engine is at one. */
static inline size_t engine_block_limit(const struct engine *e) {
  return ENGINE_PROGRESS_EVENTS - (e->index & (ENGINE_PROGRESS_EVENTS - 1));
}
static inline bool engine_at_progress_point(const struct engine *e) {
  return (e->index & (ENGINE_PROGRESS_EVENTS - 1)) == 0;
}
/* Cycles that elapsed: the busiest vCPU's guest + hypervisor cycles. */
uint64_t engine_elapsed(const struct engine *e);
/* Cost in cycles of one exit with stat key `key` and work w (pure). */
uint64_t engine_exit_cost(const struct profile *pr, unsigned key, const struct work *w);

#endif
