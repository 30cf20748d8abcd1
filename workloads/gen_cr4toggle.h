/* A guest whose hot path toggles a CR4 bit: PGE off and on for a global TLB flush, or TSD between tasks. */
#ifndef VMXSIM_GEN_CR4TOGGLE_H
#define VMXSIM_GEN_CR4TOGGLE_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"
#include "models/x86.h"

#define CR4TOGGLE_MODEL_VERSION 2

enum cr4toggle_bit { CR4TOGGLE_PGE, CR4TOGGLE_TSD };

struct cr4toggle_opts {
  uint64_t count;        /* --count N: flushes (pge) or toggles (tsd), one mark each */
  int bit;               /* --bit pge|tsd (enum cr4toggle_bit) */
  uint64_t work;         /* --work C: native guest cycles between flushes (estimate) */
  unsigned paging;       /* --paging 32|pae|64 */
  double cpu_ghz;        /* --cpu-ghz: recorded; the costs are already in cycles */
};

void cr4toggle_defaults(struct cr4toggle_opts *o);
int gen_cr4toggle(const struct cr4toggle_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen cr4toggle` with the options argv[1..] (usage: cr4toggle_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_cr4toggle_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char cr4toggle_usage[];

#endif
