/* Run reports as data: built from a finished engine or read back from the
** database, so both print identically (sim/present/report_print.h prints
** them: the table, read like xenalyze --summary, JSON and CSV). */
#ifndef VMXSIM_REPORT_H
#define VMXSIM_REPORT_H

#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include "stats.h"
#include "views.h"

struct report_row {
  char name[32];             /* "CR_ACCESS" or a breakdown row ("cr3 write") */
  char parent[32];           /* "" for a reason, the reason for a breakdown row */
  unsigned reason;           /* SDM number of the reason (of the parent for a breakdown row) */
  uint64_t count, cycles, min, p5, p50, p95, max;
};

struct report_counter {
  const char *name;          /* static storage (counter_name) */
  uint64_t value;
};

#define REPORT_UNDECIDED_MAX 4
struct report {
  char trace[256];           /* trace file name as given */
  char workload[64];
  char trace_hash[65];       /* XXH64 of the trace file, 16 hex digits ("" if not computed) */
  char policy[256];
  char cpu[64];
  char paging[8];
  unsigned vcpus;
  double clock_ghz;
  uint64_t events, total_exits, marks;
  uint64_t guest_cycles, vmm_cycles, elapsed_cycles;
  unsigned nrows;
  struct report_row rows[STAT_KEYS];     /* reasons by SDM number, each followed by its breakdown */
  unsigned ncounters;
  struct report_counter counters[CTR_COUNT];
  /* The run's views (sim/replay/views.h), when computed: the recording's measured
  ** exits (a trace that carries them) and the simulated ones, by reason,
  ** breakdown, CR3 and vCPU.  malloc'd; report_free releases them. */
  struct view_stat *vrows;
  unsigned nvrows;
  bool show_views;           /* print the simulated views (run --views), not only beside measured */
  /* A recording's exits with no measured time (trace metadata "exits" minus
  ** "measured"): still open when the recording ended, or their VM entry lost.
  ** The replay simulates them; the measured side cannot count them. */
  uint64_t unmeasured_exits;
  /* A recording's exits whose source it cannot tell (its importer's metadata
  ** "exits_undecided", sim/import/import_exit.h): per reason, how many, why. */
  struct report_undecided {
    unsigned reason;
    uint64_t count;
    char why[256];
  } undecided[REPORT_UNDECIDED_MAX];
  unsigned nundecided;
};
void report_free(struct report *rep);      /* the view rows; the struct itself is the caller's */
bool report_has_measured(const struct report *rep);

/* Fills rep->undecided from a trace's metadata (NULL or "": none); what it
** cannot read is left out, as the importer wrote it. */
void report_undecided_from_meta(struct report *rep, const char *metadata);

/* Fills the statistics part of rep from st (identity fields are the caller's). */
void report_from_stats(struct report *rep, const struct stats *st);

#endif
