/* Replays from names to reports: resolve the policies and CPU profiles, open
** the trace, run the engines.  One replay (run_trace) or several of one trace
** in one pass (run_traces): the trace is read, validated and hashed once and
** every record goes to each engine.  Shared by `run`, `compare`, `regress`
** and `reproduce`. */
#ifndef VMXSIM_RUNNER_H
#define VMXSIM_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine.h"
#include "report.h"

/* One configuration to replay the trace under. */
struct run_config {
  const char *policy;         /* preset spec, e.g. "shadowcache+lazydr" */
  const char *cpu;            /* profile name or path; NULL = PROFILE_DEFAULT */
  char *const *sets;          /* KEY=VALUE overrides */
  int nsets;
};

/* Views of the exits (sim/replay/views.h): computed when `views` is set or the
** trace carries measured exits (then the measured ones too). */
struct run_views {
  bool views;
  bool one_vcpu;              /* views of vCPU `vcpu` only (default: all) */
  unsigned vcpu;
  uint64_t interval;          /* time series width in cycles of the profile's clock, or events; 0: none */
  bool interval_events;
  double interval_us;         /* the width in microseconds (converted at the profile's clock) */
};

/* One configuration of one trace (run_trace). */
struct run_spec {
  const char *trace;          /* binary trace path */
  struct run_config config;
  bool hash_trace;            /* also hash the trace as it is read (into rep.trace_hash): for storing */
  /* how the trace, policy and CPU files are read (enum input_flags, util.h):
  ** 0 for files the user named; files a regression case names are read
  ** without their text in messages and only when regular */
  unsigned input_flags;
  /* called every 2^22 events; returns false to stop (then out->interrupted);
  ** NULL: stop when interrupt_requested() (sim/base/util.h) */
  bool (*progress)(struct engine *e, const struct trace_reader *r, void *arg);
  void *progress_arg;
  struct run_views views;
};

/* Several configurations of one trace: run_spec's fields but the policy, CPU
** and overrides, which come from configs. */
struct run_set {
  const char *trace;
  /* Opens the trace instead of trace_open(trace) when set: a recording
  ** replayed as it is imported (sim/import/import.h, import_stream_open). */
  int (*open)(struct trace_reader *r, void *arg);
  void *open_arg;
  const struct run_config *configs;
  unsigned nconfigs;
  unsigned jobs;              /* threads sharing the engines (0 or 1: the caller's only) */
  bool hash_trace;
  unsigned input_flags;       /* as run_spec's, for the trace and every configuration's files */
  bool (*progress)(struct engine *e, const struct trace_reader *r, void *arg);   /* with the first engine */
  void *progress_arg;
  struct run_views views;     /* for every configuration */
};

struct run_output {
  struct report rep;          /* statistics and identity, as printed */
  char *policy_json;          /* resolved policy (malloc'd) */
  char *profile_json;         /* CPU profile as loaded (malloc'd) */
  char *metadata;             /* trace metadata JSON (malloc'd) */
  uint64_t trace_events;      /* records in the trace */
  double wall_seconds;        /* replay time (of the whole pass, for run_traces) */
  bool interrupted;           /* progress() asked to stop: rep is partial */
  struct views *measured, *simulated;   /* NULL unless computed; freed by run_output_free */
};

/* Runs spec; returns EXIT_OK or an enum exit_code with a message in err.
** The caller frees out with run_output_free whatever the result. */
int run_trace(const struct run_spec *spec, struct run_output *out, char *err, size_t errlen);
/* Runs every configuration of s in one pass over the trace, out[i] for
** configs[i].  A policy or profile that does not resolve, or a VM that fails
** entry, stops everything before the replay, with the configuration named.
** The caller frees each out[i] whatever the result. */
int run_traces(const struct run_set *s, struct run_output *out, char *err, size_t errlen);
void run_output_free(struct run_output *out);
/* After a failed VM entry (EXIT_VMENTRY from engine_init): the built-in CPU
** profiles whose processor would take the policy for a trace of vcpus vCPUs and
** that paging (VM entry on each, as engine_init checks it), appended to the
** message in err, so that it says which --cpu to give. */
void run_name_capable_profiles(const struct policy *pol, unsigned vcpus, unsigned paging, char *err, size_t errlen);
/* A report of the replay so far: the run's identity (trace name, header,
** policy, profile) and the engine's statistics. */
void run_report(struct report *rep, const char *trace, const struct trace_header *hdr, const struct policy *p,
                const struct profile *pr, const struct engine *e);

#endif
