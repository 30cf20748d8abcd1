/* Run reports as data: the statistics of a finished engine in rows (report.h). */
#include "report.h"
#include "models/vmx/exit_reason.h"

#include <cJSON.h>

#include <stdlib.h>
#include <string.h>

void report_free(struct report *rep) {
  free(rep->vrows);
  rep->vrows = NULL;
  rep->nvrows = 0;
}

bool report_has_measured(const struct report *rep) {
  for (unsigned i = 0; i < rep->nvrows; i++)
    if (rep->vrows[i].source == VS_MEASURED) return true;
  return false;
}

static void fill_row(struct report_row *row, const struct stats *st, unsigned key, const char *name,
                     const char *parent, unsigned reason) {
  const struct stat_row *r = &st->row[key];
  snprintf(row->name, sizeof row->name, "%s", name);
  snprintf(row->parent, sizeof row->parent, "%s", parent);
  row->reason = reason;
  row->count = r->count;
  row->cycles = r->cycles;
  row->min = r->min;
  row->max = r->max;
  row->p5 = stats_percentile(st, key, 5);
  row->p50 = stats_percentile(st, key, 50);
  row->p95 = stats_percentile(st, key, 95);
}

void report_from_stats(struct report *rep, const struct stats *st) {
  rep->events = st->events;
  rep->total_exits = st->total_exits;
  rep->guest_cycles = st->guest_cycles;
  rep->vmm_cycles = st->vmm_cycles;
  rep->marks = st->counter[CTR_MARKS];
  rep->nrows = 0;
  for (unsigned reason = 0; reason < EXIT_REASON_MAX; reason++) {
    if (!st->row[reason].count) continue;
    fill_row(&rep->rows[rep->nrows++], st, reason, exit_reason_name(reason), "", reason);
    if (reason != EXIT_REASON_CR_ACCESS && reason != EXIT_REASON_DR_ACCESS) continue;
    unsigned lo = reason == EXIT_REASON_CR_ACCESS ? STAT_CR_BASE : STAT_DR_BASE;
    unsigned hi = reason == EXIT_REASON_CR_ACCESS ? STAT_DR_BASE : STAT_KEYS;
    for (unsigned k = lo; k < hi; k++)
      if (st->row[k].count)
        fill_row(&rep->rows[rep->nrows++], st, k, stat_key_name(k), exit_reason_name(reason), reason);
  }
  rep->ncounters = 0;
  for (unsigned c = 0; c < CTR_COUNT; c++)
    rep->counters[rep->ncounters++] = (struct report_counter){ counter_name(c), st->counter[c] };
}

void report_undecided_from_meta(struct report *rep, const char *metadata) {
  rep->nundecided = 0;
  cJSON *m = metadata && *metadata ? cJSON_Parse(metadata) : NULL;
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(m, "exits_undecided")) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "reason"), *n = cJSON_GetObjectItemCaseSensitive(e, "count");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "why");
    int reason = cJSON_IsString(r) ? exit_reason_by_name(r->valuestring) : -1;
    if (reason < 0 || !cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > 1e18 || !cJSON_IsString(why) ||
        rep->nundecided == REPORT_UNDECIDED_MAX)
      continue;
    struct report_undecided *u = &rep->undecided[rep->nundecided++];
    u->reason = (unsigned)reason;
    u->count = (uint64_t)n->valuedouble;
    snprintf(u->why, sizeof u->why, "%s", why->valuestring);
  }
  cJSON_Delete(m);
}
