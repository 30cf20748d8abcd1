/* Run statistics: per exit reason (and per register) counts, cycles and exact
** percentiles; named counters; guest and hypervisor cycle totals. */
#ifndef VMXSIM_STATS_H
#define VMXSIM_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "models/counters.h"

/* Exact distribution of one key's per-exit cycles: a hash of distinct values. */
struct cost_hist {
  uint64_t *val;
  uint64_t *cnt;
  uint32_t cap, used;
};

struct stat_row {
  uint64_t count;
  uint64_t cycles;
  uint64_t min, max;
  struct cost_hist hist;
};

struct stats {
  struct stat_row row[STAT_KEYS];
  uint64_t counter[CTR_COUNT];
  uint64_t events;
  uint64_t guest_cycles;         /* native guest execution, plus TLB effects */
  uint64_t vmm_cycles;           /* every exit: hardware round trip + handler */
  uint64_t total_exits;
};

const char *stat_key_name(unsigned key);   /* "CR_ACCESS", "cr3 write", "dr7 read"... */
int stat_key_by_name(const char *name);    /* -1 when unknown */
bool stat_key_is_sub(unsigned key);        /* a breakdown row, not a reason */
const char *counter_name(unsigned c);

void stats_init(struct stats *s);
void stats_free(struct stats *s);
/* Records one exit of `cycles` under key (the engine records a breakdown row
** and its reason row separately). */
void stats_add(struct stats *s, unsigned key, uint64_t cycles);
/* Nearest-rank percentile (pct in 0..100) of a row's per-exit cycles; 0 when empty. */
uint64_t stats_percentile(const struct stat_row *r, unsigned pct);

#endif
