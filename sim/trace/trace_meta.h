/* The members of a trace's metadata that vmxsim reads (traces/FORMAT.md,
** "metadata"): each in its documented range, so that a hand-edited or hostile
** trace cannot put a value out of it into a computation. */
#ifndef VMXSIM_TRACE_META_H
#define VMXSIM_TRACE_META_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h"

/* What a number member must be: between lo and hi, each end excluded when
** its *_open is set, whole when whole; range says so in words for the message
** ("a whole number of cycles, 0 to 2^63"). */
struct meta_range {
  double lo, hi;
  bool lo_open, hi_open, whole;
  const char *range;
};

/* Is d inside want's ends? (not whether it is whole) */
static inline bool meta_range_holds(const struct meta_range *want, double d) {
  return (want->lo_open ? d > want->lo : d >= want->lo) && (want->hi_open ? d < want->hi : d <= want->hi);
}

/* The members read, and their ranges: cpu_ghz, the clock that turns cycles
** into seconds (every clock's range: CLOCK_GHZ_MAX, util.h), and span_cycles, a
** recording's whole span (at most 2^63, so that it converts to uint64_t). */
extern const struct meta_range trace_meta_cpu_ghz, trace_meta_span_cycles;
/* A count a recording's importer wrote (exits, measured): at most 2^63. */
extern const struct meta_range trace_meta_count;

/* The member key of the metadata JSON text meta (NULL or "" or not JSON: no
** member): 0 with *out set to it, or to def when it is absent; EXIT_BADINPUT
** when it is there but not a number in range, with the message in err
** ("PATH: byte 64: metadata "cpu_ghz": -1 is not a clock ..."). */
int trace_meta_number(const char *meta, const char *path, const char *key, const struct meta_range *want,
                      double def, double *out, char *err, size_t errlen);

/* The trace's vCPUs as a xentrace recording names them (metadata "vcpus": each
** {"domain": D, "vcpu": V}, in vCPU order): "dDvV", as summary prints them.
** n = 0 when the trace does not name them. */
struct trace_vcpu_names {
  unsigned n;
  int domain[TRACE_VCPU_MAX], vcpu[TRACE_VCPU_MAX];
  char name[TRACE_VCPU_MAX][24];
  const char *names[TRACE_VCPU_MAX];   /* name[i], for views_print */
};

/* Reads m from the metadata JSON text meta (NULL, "" or not JSON: none): 0,
** or EXIT_BADINPUT when "vcpus" holds an entry out of range or too many, with
** the message in err naming path. */
int trace_meta_vcpu_names(const char *meta, const char *path, struct trace_vcpu_names *m, char *err,
                          size_t errlen);

#endif
