/* A null system-call loop, natively (hvm), in a 64-bit Xen PV guest (pv64) or under page-table isolation without PCID (pti). */
#ifndef VMXSIM_GEN_SYSCALLS_H
#define VMXSIM_GEN_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define SYSCALLS_MODEL_VERSION 2
#define SYSCALLS_NR_DEFAULT    UINT64_MAX     /* getppid(), lmbench's null call */

enum syscalls_mode { SYSCALLS_HVM, SYSCALLS_PV64, SYSCALLS_PTI };

struct syscalls_opts {
  uint64_t count;          /* --count N: system calls (marks) */
  uint64_t nr;             /* --nr NR, or SYSCALLS_NR_DEFAULT */
  int mode;                /* --mode hvm|pv64|pti (enum syscalls_mode) */
  uint64_t syscall_cycles; /* --syscall-cycles C: native entry + kernel + exit (estimate) */
  uint64_t work;           /* --work C: native user cycles between calls (estimate) */
  unsigned paging;         /* --paging 32|pae|64 (pv64 needs 64) */
  double cpu_ghz;          /* --cpu-ghz: recorded; the costs are already in cycles */
};

void syscalls_defaults(struct syscalls_opts *o);
int gen_syscalls(const struct syscalls_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen syscalls` with the options argv[1..] (usage: syscalls_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_syscalls_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char syscalls_usage[];

#endif
