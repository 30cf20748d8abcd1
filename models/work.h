/* Work items: what a handler or the MMU did, as counts of priced operations.
** Models fill a work record; only the engine turns it into cycles. */
#ifndef VMXSIM_WORK_H
#define VMXSIM_WORK_H

#include <stdint.h>
#include <string.h>
#include "sim/core/profile.h"

struct work {
  uint32_t n[PP_COUNT];     /* how many of each priced operation (index = enum profile_param) */
};

static inline void work_clear(struct work *w) { memset(w, 0, sizeof *w); }
static inline void work_add(struct work *w, enum profile_param p, uint32_t count) { w->n[p] += count; }

#endif
