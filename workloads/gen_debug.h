/* Processes under a debugger: the lat_ctx ring, with debug registers loaded on every switch into a debugged process. */
#ifndef VMXSIM_GEN_DEBUG_H
#define VMXSIM_GEN_DEBUG_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define DEBUG_MODEL_VERSION 3   /* 3: pids from 2816 on have their CR3 below 3 GiB (gen_cr3) */
#define DEBUG_DR7_ARMED     0x55u   /* L0-L3: four local execute breakpoints */

struct debug_opts {
  uint64_t procs;        /* --procs N: processes in the ring, 2..GEN_TASKS_MAX */
  uint64_t iters;        /* --iters I: trips around the ring (I x N switches) */
  uint64_t debugged;     /* --debugged D: processes 0..D-1 have breakpoints set (default 1) */
  unsigned paging;       /* --paging 32|pae|64 */
  double cpu_ghz;        /* --cpu-ghz */
};

void debug_defaults(struct debug_opts *o);
int gen_debug(const struct debug_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen debug` with the options argv[1..] (usage: debug_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_debug_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char debug_usage[];

#endif
