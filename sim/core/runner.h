/* One replay from names to a report: resolve the policy and CPU profile, open
** the trace, run the engine.  Shared by `run`, `regress` and `reproduce`. */
#ifndef VMXSIM_RUNNER_H
#define VMXSIM_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine.h"
#include "report.h"

struct run_spec {
  const char *trace;          /* binary trace path */
  const char *policy;         /* preset spec, e.g. "shadowcache+lazydr" */
  const char *cpu;            /* profile name or path; NULL = PROFILE_DEFAULT */
  char *const *sets;          /* KEY=VALUE overrides */
  int nsets;
  bool hash_trace;            /* also hash the trace as it is read (into rep.trace_hash): for storing */
  /* called every 2^22 events; returns false to stop (then out->interrupted);
  ** NULL: stop when interrupt_requested() (sim/core/util.h) */
  bool (*progress)(struct engine *e, const struct trace_reader *r, void *arg);
  void *progress_arg;
};

struct run_output {
  struct report rep;          /* statistics and identity, as printed */
  char *policy_json;          /* resolved policy (malloc'd) */
  char *profile_json;         /* CPU profile as loaded (malloc'd) */
  char *metadata;             /* trace metadata JSON (malloc'd) */
  uint64_t trace_events;      /* records in the trace */
  double wall_seconds;        /* replay time */
  bool interrupted;           /* progress() asked to stop: rep is partial */
};

/* Runs spec; returns EXIT_OK or an enum exit_code with a message in err.
** The caller frees out with run_output_free whatever the result. */
int run_trace(const struct run_spec *spec, struct run_output *out, char *err, size_t errlen);
void run_output_free(struct run_output *out);
/* A report of the replay so far: the run's identity (trace name, header,
** policy, profile) and the engine's statistics. */
void run_report(struct report *rep, const char *trace, const struct trace_header *hdr, const struct policy *p,
                const struct profile *pr, const struct engine *e);

#endif
