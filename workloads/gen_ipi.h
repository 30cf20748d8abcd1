/* An IPI round trip between two vCPUs: the kvm-unit-tests vmexit 'ipi' test. */
#ifndef VMXSIM_GEN_IPI_H
#define VMXSIM_GEN_IPI_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define IPI_MODEL_VERSION 2   /* 2: the source's spin is a wait record */

struct ipi_opts {
  uint64_t count;        /* --count N: round trips, one mark each */
  int apic;              /* --apic x2apic|xapic (enum irq_apic_mode, gen_interrupts.h) */
  uint64_t handler;      /* --handler C: the target's native cycles from the interrupt to its EOI */
  uint64_t work;         /* --work C: the source's native cycles between round trips */
  unsigned paging;       /* --paging 32|pae|64 */
  double cpu_ghz;        /* --cpu-ghz: recorded in the metadata */
};

void ipi_defaults(struct ipi_opts *o);
int gen_ipi(const struct ipi_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen ipi` with the options argv[1..] (usage: ipi_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_ipi_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char ipi_usage[];

#endif
