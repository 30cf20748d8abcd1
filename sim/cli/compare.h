/* `vmxsim compare` output: stored runs side by side, as a before/after table
** for a patch description, or as CSV or JSON. */
#ifndef VMXSIM_COMPARE_H
#define VMXSIM_COMPARE_H

#include <stdint.h>
#include <stdio.h>
#include "sim/base/format.h"
#include "sim/replay/report.h"

#define COMPARE_MAX_RUNS 8

struct compare_run {
  int64_t id;                  /* run id in the database */
  struct report rep;
};

/* Prints runs[1..n-1] against runs[0] (the baseline): per exit reason (and
** breakdown row) the exits and cycles of each, the ratio to the baseline and
** the difference, per operation (mark) when every run has marks. */
void compare_print(FILE *f, const struct compare_run *runs, unsigned n, enum report_format fmt);

#endif
