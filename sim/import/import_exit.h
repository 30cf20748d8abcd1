/* VM exits recorded on the host (KVM ftrace, xentrace) -> the guest actions
** that caused them: the per-vCPU exit state machine and the exit-reason table
** shared by the importers of host recordings. */
#ifndef VMXSIM_IMPORT_EXIT_H
#define VMXSIM_IMPORT_EXIT_H

#include <stdbool.h>
#include <stdint.h>
#include "import.h"

/*
** The state machine, per vCPU: an exit record opens an exit (pending) and
** ends the guest's run since the last entry, which becomes `run` cycles; a
** detail record of the host's handler (a CR write, an MSR access, ...)
** explains the pending exit and emits its event (the importer does that, then
** calls import_exit_explained); an entry record, the next exit or the end of
** the input settles an exit left unexplained, from its reason and, when
** recorded, its qualification.  Reasons that say too
** little are counted in the metadata ("exits_unmapped").  An entry with a
** time also ends the exit's measurement: an EV_MEASURED record of the exit's
** cycles follows its event (or stands alone when no event could express it).
*/

/* One exit as the host recorded it. */
struct import_exit {
  int reason;                /* VMX basic exit reason, -1 unknown */
  char name[40];             /* as recorded, for the metadata's counts */
  bool qualified;            /* the fields below were recorded (KVM), not only the reason (xentrace) */
  uint64_t info1, info2;     /* info1: exit qualification (SVM: exit_info_1/2) */
  uint32_t intr_info, error_code;
  bool svm;                  /* an SVM host's exit, mapped onto a VMX reason */
};

/* The vector of an EXTERNAL_INTERRUPT exit's VM-exit interruption information
** (SDM 27.2.2: valid in bit 31, with "acknowledge interrupt on exit"), -1 when
** none was recorded. */
static inline int import_exit_vector(const struct import_exit *x) {
  return x->intr_info & 0x80000000u ? (int)(x->intr_info & 0xff) : -1;
}

struct import_exit_vcpu {
  bool in_guest;             /* an entry with a time was seen, no exit since */
  uint64_t entry_time;
  bool pending;              /* an exit not yet explained */
  bool open;                 /* an exit with a time whose entry has not come: measurable */
  bool caused;               /* an event stands for the open exit */
  uint64_t exit_time;
  uint32_t info;             /* the open exit's recorded detail (error code) */
  struct import_exit x;
};

struct import_exits {
  struct import *im;
  bool time_ns;              /* times are nanoseconds (at opt.cpu_ghz), else cycles (TSC) */
  struct import_exit_vcpu v[TRACE_VCPU_MAX];
  uint64_t exits, entries, measured;
  bool timed;                /* a record with a time was seen: first_time..last_time hold */
  uint64_t first_time, last_time;
  struct import_tally reasons, unmapped;   /* keys: reason; reason * 16 + why (import_exit.c) */
  /* EXTERNAL_INTERRUPT exits left host interrupts: with no vector recorded
  ** (an SVM host, a kernel whose kvm_exit printed no interruption information),
  ** and at the host's timer vector (LOCAL_TIMER_VECTOR) with no record that
  ** made them the guest's timer; import_exits_add_timer says what they are. */
  uint64_t intr_no_vector, intr_timer_vector;
};

void import_exits_init(struct import_exits *X, struct import *im, bool time_ns);

/* Control registers the trace records: CR0, CR3, CR4, CR8. */
bool import_exit_cr_ok(uint64_t cr);
/* A CR3 value seen in a handler record: the first one of a vCPU stands for its
** initial address space (its @init CR3). */
void import_exit_cr3_seen(struct import_exits *X, unsigned v, uint64_t cr3);

/* Would an exit of vCPU v at `time` end a run longer than IMPORT_GAP_MAX cycles? */
bool import_exit_gap_too_long(const struct import_exits *X, unsigned v, uint64_t time);
/* An exit record: settles the vCPU's pending exit, emits the run since the
** entry (timed: the record has a time), opens x.  0 or emit's failure. */
int import_exit_begins(struct import_exits *X, unsigned v, bool timed, uint64_t time, const struct import_exit *x);
/* An entry record: settles the pending exit; the guest runs from `time`. */
int import_exit_entry(struct import_exits *X, unsigned v, bool timed, uint64_t time);
/* The exit ends without an entry (a hypervisor's scheduler took the vCPU off
** its pCPU as runnable: xentrace): settles the pending exit and measures the
** open one up to `time`; the guest does not run from there. */
int import_exit_close(struct import_exits *X, unsigned v, uint64_t time);
/* The open exit's end may not be recorded (records were lost): it is not
** measured, and no guest time runs until the next entry. */
void import_exit_forget(struct import_exits *X, unsigned v);
/* A detail record explained the pending exit; emitted: the importer emitted
** its event (false: understood, but nothing vmxsim can replay). */
void import_exit_explained(struct import_exits *X, unsigned v, bool emitted);
/* A detail the host recorded for the open exit (a page fault's error code),
** kept in its measured record. */
void import_exit_detail(struct import_exits *X, unsigned v, uint32_t info);
/* What an exit no detail record explained makes by itself (the event its
** reason implies, emitted, or an unmapped exit, counted): for an importer that
** keeps its own state machine (xentrace's lean pass). */
int import_exit_alone(struct import_exits *X, unsigned v, const struct import_exit *x);
/* Settles every vCPU's pending exit (at the end of the input). */
int import_exits_finish(struct import_exits *X);

/* A record of the recording at `time` (any record: the span is the recording's). */
static inline void import_exits_saw_time(struct import_exits *X, uint64_t time) {
  if (!X->timed || time < X->first_time) X->first_time = time;
  if (!X->timed || time > X->last_time) X->last_time = time;
  X->timed = true;
}
/* Metadata members: "exits", "entries", "measured" and "span_cycles" (first to last
** recorded time, the denominator of xenalyze's shares); "exit_reasons" and "exits_unmapped". */
void import_exits_add_counts(const struct import_exits *X);
void import_exits_add_reasons(const struct import_exits *X);
/* Metadata "guest_timer_exits" (EXTERNAL_INTERRUPT exits the importer made the
** guest's timer arriving: guest_timer) and "exits_undecided": the exits whose
** source the recording cannot tell, [{"reason", "count", "why"}], which the
** measured-beside-simulated table prints beside the reason.  timer_marks: the
** recording holds records that tell the guest's timer (the host's timer
** interrupts none of them marked were the host's own). */
void import_exits_add_timer(const struct import_exits *X, uint64_t guest_timer, bool timer_marks);

#endif
