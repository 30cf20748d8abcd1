/* Run reports printed: the table (read like xenalyze --summary), JSON and CSV
** forms of a struct report (sim/replay/report.h). */
#ifndef VMXSIM_REPORT_PRINT_H
#define VMXSIM_REPORT_PRINT_H

#include <stdio.h>
#include "sim/base/format.h"
#include "sim/replay/report.h"

void report_print(FILE *f, const struct report *rep, enum report_format fmt);
/* Several runs (of one pass over a trace): tables one after the other, a
** JSON array of the objects, CSV rows under one header (each row names its
** run).  One run prints as report_print. */
void report_print_runs(FILE *f, const struct report *reps, unsigned n, enum report_format fmt);

/* What the measured-beside-simulated table says beside a recorded reason
** (measured exits of it) whose simulated count in the run would mislead:
** NOTE_NOT_REDECIDED, no replay decides it (exit_reason_not_redecided) or
** the run's policy cannot (a PLE exit under PLE: the spin's length is not
** recorded); NOTE_REMOVED, the run's policy removed them or replays them as
** another reason (none simulated); NOTE_FEWER, some simulated, the policy
** moved the rest (the guest's timer under lapic_timer=preemption). */
enum reason_note { NOTE_NONE, NOTE_NOT_REDECIDED, NOTE_REMOVED, NOTE_FEWER };
struct reason_note_text {
  const char *why;           /* NULL with NOTE_NONE; may point into buf */
  char buf[320];
};
enum reason_note report_reason_note(const struct report *rep, unsigned reason, uint64_t measured, uint64_t simulated,
                                    struct reason_note_text *out);
/* Its JSON member: "not_redecided", "removed_by" (NOTE_REMOVED and NOTE_FEWER). */
static inline const char *report_reason_note_key(enum reason_note k) {
  return k == NOTE_NOT_REDECIDED ? "not_redecided" : "removed_by";
}

/* Adds "undecided": [{"count", "why"}] to row, the recording's exits of this
** reason whose source it cannot tell (report.h); nothing when none. */
struct cJSON;
void report_undecided_json(struct cJSON *row, const struct report *rep, unsigned reason);

/* What names a run in every JSON document that shows runs: a report, the
** `runs` list, `compare`. */
struct run_identity {
  const char *trace;         /* the trace file as given */
  const char *trace_hash;    /* its content hash; NULL: not shown */
  const char *workload, *policy, *cpu;
};
/* Adds "trace", "trace_hash" (unless NULL), "workload", "policy" and "cpu" to
** the JSON object obj, in that order. */
void run_identity_json(struct cJSON *obj, const struct run_identity *id);

#endif
