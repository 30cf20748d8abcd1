/* xentrace: the scheduler's records, who ran each record, and the first pass over the
** records' headers (import_xen_sched.c). */
#ifndef VMXSIM_IMPORT_XEN_SCHED_H
#define VMXSIM_IMPORT_XEN_SCHED_H

#include "import_xen.h"

/* Walks the records' headers: the windows of each pCPU, the byte where the
** first pCPU change is (*lead: what comes before is on no pCPU), and where a
** record the file ends inside starts (*cut, len when none).  True when
** scheduler records are there. */
bool xen_scan(struct xen *X, const unsigned char *buf, size_t len, size_t *lead, size_t *cut, bool *too_many);
/* The records of a recording with the scheduler's, in TSC order across pCPUs. */
int xen_import_sched(struct xen *X, const unsigned char *buf, size_t len, size_t lead, size_t cut, bool too_many);

#endif
