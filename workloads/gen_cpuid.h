/* A CPUID loop: the lightweight exit of the kvm-unit-tests vmexit benchmark. */
#ifndef VMXSIM_GEN_CPUID_H
#define VMXSIM_GEN_CPUID_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define CPUID_MODEL_VERSION 2

struct cpuid_opts {
  uint64_t count;        /* --count N: CPUID instructions, one mark each */
  uint64_t leaf;         /* --leaf L: EAX operand (default 0) */
  uint64_t work;         /* --work C: native guest cycles between them */
  unsigned paging;       /* --paging 32|pae|64 */
  double cpu_ghz;        /* --cpu-ghz: recorded in the metadata */
};

void cpuid_defaults(struct cpuid_opts *o);
int gen_cpuid(const struct cpuid_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen cpuid` with the options argv[1..] (usage: cpuid_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_cpuid_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char cpuid_usage[];

#endif
