/* Regression cases for `vmxsim regress`: the case file (JSON), its validation,
** the comparison of expectations with results, and the canonical JSON text
** that --update writes (sorted keys, 2-space indentation).
**
** A case file is one JSON object.  Its paths are relative to the case file's
** directory (for a symbolic link, that of the file it leads to) and may lead
** anywhere the user can read, ../ and absolute paths included: a case is
** trusted as a Makefile is.  What they name is read without a word of it in
** any message (INPUT_HIDE_CONTENT, sim/base/util.h), and only when it is a
** regular file; the case file's own text may be quoted.
** The keys:
**   "trace": "t.bin" | "generate": ["lat_ctx", "--procs", "2", ...]   exactly one
**   "policy": "shadowcache+lazydr"        required (preset spec or JSON path)
**   "cpu": "core2-2007"                   optional (default PROFILE_DEFAULT)
**   "set": {"shadow_pages_max": 64}       optional knob overrides
**   "cycles_tolerance": 0.001             optional relative tolerance (default 0: exact)
**   "description": "..."                  optional free text
**   "expect": {"exits": {...}, "counters": {...}, "events": N,
**              "total_exits": N, "cycles": N}   written by --update
** Each expect section present is checked completely: an exit reason or row
** missing from "exits" (or a counter missing from "counters") is expected to
** be 0.  Absent sections are not checked. */
#ifndef VMXSIM_REGRESS_CASE_H
#define VMXSIM_REGRESS_CASE_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/replay/report.h"
#include "sim/replay/stats.h"

/* Largest integer that a JSON number (an IEEE double) holds exactly, and every smaller one: 2^53 - 1. */
#define REGRESS_JSON_INT_MAX 9007199254740991.0

/* Expected or actual results; sections with has_* false are not checked. */
struct regress_values {
  bool has_exits, has_counters, has_events, has_total_exits, has_cycles;
  uint64_t exits[STAT_KEYS];      /* by stat key: exit reasons and breakdown rows */
  uint64_t counters[CTR_COUNT];
  uint64_t events, total_exits, cycles;
};

struct regress_case {
  char *path;                  /* the case file, as found */
  char *text;                  /* its contents as read */
  cJSON *json;                 /* the parsed document (--update replaces "expect") */
  char *trace;                 /* "trace" resolved against the case's directory, or NULL */
  char **gen;                  /* "generate" as an argv (gen[0] = workload), or NULL */
  int ngen;
  char *policy;                /* policy spec; file components resolved against the directory */
  char *cpu;                   /* profile name or resolved path; NULL for the default */
  char **sets;                 /* "KEY=VALUE" from "set" */
  int nsets;
  double cycles_tolerance;     /* relative; 0 = exact */
  bool has_expect;
  struct regress_values expect;
  char dropped[512];           /* lenient load: expectation names this vmxsim no longer knows */
};

/* Reads and validates a case file (a regular one: a FIFO or a device is
** refused, not waited on).  lenient (for --update): expectation
** entries that are unknown or malformed are dropped (named in c->dropped)
** instead of being errors.  Returns 0, or EXIT_BADINPUT with
** "FILE[:LINE[:COL]]: message" in err, one line per problem found (all of
** them, as far as err holds them); free c with regress_case_free either way. */
int regress_case_load(struct regress_case *c, const char *path, bool lenient, char *err, size_t errlen);
void regress_case_free(struct regress_case *c);

/* Results of a run, every section present. */
void regress_values_from_report(struct regress_values *v, const struct report *rep);

enum regress_diff_kind { DIFF_EXIT, DIFF_COUNTER, DIFF_EVENTS, DIFF_TOTAL_EXITS, DIFF_CYCLES };

struct regress_diff {
  enum regress_diff_kind kind;
  unsigned key;                /* stat key (DIFF_EXIT) or counter (DIFF_COUNTER) */
  bool absent;                 /* nothing was expected (section not in the case) */
  uint64_t expected, actual;
};

const char *regress_diff_section(const struct regress_diff *d);   /* "exits", "counters", ... */
const char *regress_diff_name(const struct regress_diff *d);      /* "CR_ACCESS", "cr3 write", "root_hits" */

/* Differences between exp and act in report order (each reason followed by
** its breakdown rows, then counters, events, total_exits, cycles).  Cycles
** differ when off by more than tol relative to the expectation.  changes
** (for --update): every changed value, tol ignored, and nonzero values of
** sections exp does not have (absent).  Returns the count; *out is malloc'd. */
size_t regress_compare(const struct regress_values *exp, const struct regress_values *act, double tol,
                       bool changes, struct regress_diff **out);

/* Replaces the case's "expect" with act, keeping every other field, and sets
** *text to the new file text (caller frees).  Returns 0, or EXIT_BADINPUT
** (a value JSON cannot hold exactly) with a message in err and *text NULL. */
int regress_case_update(struct regress_case *c, const struct regress_values *act, char **text, char *err,
                        size_t errlen);

/* JSON text with object keys sorted (bytewise), 2-space indentation, arrays
** of scalars on one line, and a final newline (caller frees). */
char *json_canonical(const cJSON *j);

#endif
