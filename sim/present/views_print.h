/* Views of a run's exits printed: a title line, then the table (xenalyze-like),
** JSON object or CSV rows (sim/replay/views.h holds the views). */
#ifndef VMXSIM_VIEWS_PRINT_H
#define VMXSIM_VIEWS_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "sim/replay/views.h"

struct cJSON;
struct views_print {
  const char *title;         /* table heading */
  double ghz;                /* cycles to seconds */
  uint64_t total_cycles;     /* pct% denominator */
  enum view_sort sort;
  unsigned top;              /* rows of the CR3 and vCPU views (0: all) */
  const char *series;        /* the time series' heading word ("measured", "simulated"), or NULL */
  /* the table in perf kvm stat report's columns: Samples, Samples%, Time%, and
  ** Min, Max and Avg time in microseconds (avg's spread as +- stddev%) */
  bool units_us;
  uint64_t total_exits;      /* Samples% denominator (views_print_table sets it) */
  const char *const *vcpu_names;   /* the vCPU rows' names by vCPU ("d1v0"), or NULL: "vcpu N" */
  unsigned nvcpu_names;
};
void views_print_table(FILE *f, const struct views *w, const struct views_print *o);
/* The time series alone (views_print_table prints it last). */
void views_print_intervals(FILE *f, const struct views *w, const struct views_print *o);
/* The time series as a JSON array of {"start_us"|"start_event", "exits": {REASON: {count, cycles}}}. */
struct cJSON *views_intervals_json(const struct views *w, const struct views_print *o);
void views_print_csv(FILE *f, const struct views *w, const struct views_print *o, const char *source);
/* {"exits": {REASON: row}, "breakdown": {REASON: {name: row}}, "cr3": {...}, "vcpu": {...}, "intervals": [...]} */
struct cJSON *views_json(const struct views *w, const struct views_print *o);

#endif
