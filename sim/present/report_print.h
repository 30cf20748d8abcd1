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

/* What names a run in every JSON document that shows runs: a report, the
** `runs` list, `compare`. */
struct run_identity {
  const char *trace;         /* the trace file as given */
  const char *trace_hash;    /* its content hash; NULL: not shown */
  const char *workload, *policy, *cpu;
};
/* Adds "trace", "trace_hash" (unless NULL), "workload", "policy" and "cpu" to
** the JSON object obj, in that order. */
struct cJSON;
void run_identity_json(struct cJSON *obj, const struct run_identity *id);

#endif
