/* Run statistics: per exit reason (and per register) counts, cycles and exact
** percentiles; named counters; guest and hypervisor cycle totals. */
#ifndef VMXSIM_STATS_H
#define VMXSIM_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "models/counters.h"

/* Exact distribution of per-exit cycles: a hash of distinct values.  A
** reason with a breakdown (CR_ACCESS, DR_ACCESS) holds in its own table only
** the exits charged without a breakdown row; its distribution is that table
** merged with its rows' (stats_percentile), so each exit is inserted once. */
struct cost_hist {
  uint64_t *val;
  uint64_t *cnt;
  uint32_t cap, used;
  uint32_t last;             /* slot + 1 of the value inserted last (0: none): a row's
                                exits mostly cost what its previous one did */
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


void stats_init(struct stats *s);
void stats_free(struct stats *s);
/* Records one exit of `cycles` for reason, charged to breakdown row key
** (key == reason: no breakdown). */
void stats_add_exit(struct stats *s, unsigned reason, unsigned key, uint64_t cycles);
/* Nearest-rank percentile (pct in 0..100) of a row's per-exit cycles; 0 when empty. */
uint64_t stats_percentile(const struct stats *s, unsigned key, unsigned pct);

#endif
