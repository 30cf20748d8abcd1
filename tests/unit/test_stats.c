/* Run statistics: one histogram insert per exit, and the percentiles of a
** reason with a breakdown (its own exits and its rows' merged) equal those
** of every exit of the reason taken together; runs of one cost (a row's
** last cost is tested first) across the table's growth; and an exit's price
** of a work record cleared and filled again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "sim/replay/engine.h"
#include "sim/replay/stats.h"

/* Nearest-rank percentile of n values, computed plainly. */
static uint64_t plain_percentile(uint64_t *v, size_t n, unsigned pct) {
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      uint64_t t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  size_t rank = (pct * n + 99) / 100;
  return v[rank ? rank - 1 : 0];
}

static void a_reason_row_merges_its_breakdown_rows(void **state) {
  (void)state;
  struct stats s;
  stats_init(&s);
  enum { N = 600 };
  uint64_t all[N];
  unsigned cr3w = STAT_CR_BASE + CRSUB_CR3W, cr0w = STAT_CR_BASE + CRSUB_CR0W;
  for (unsigned i = 0; i < N; i++) {
    /* costs shared between rows (e.g. 1000 + 7 * (i % 20)) and costs of one row only */
    uint64_t c = i % 3 == 0 ? 1000 + 7 * (i % 20) : i % 3 == 1 ? 5000 + i : 1000 + 7 * (i % 11);
    unsigned key = i % 3 == 0 ? cr3w : i % 3 == 1 ? cr0w : EXIT_REASON_CR_ACCESS;
    stats_add_exit(&s, EXIT_REASON_CR_ACCESS, key, c);
    all[i] = c;
  }
  assert_int_equal(s.row[EXIT_REASON_CR_ACCESS].count, N);
  assert_int_equal(s.row[cr3w].count, N / 3);
  assert_int_equal(s.row[cr0w].count, N / 3);
  static const unsigned pcts[] = { 0, 1, 5, 33, 50, 67, 95, 99, 100 };
  for (size_t p = 0; p < sizeof pcts / sizeof *pcts; p++) {
    uint64_t want = plain_percentile(all, N, pcts[p]), got = stats_percentile(&s, EXIT_REASON_CR_ACCESS, pcts[p]);
    if (got != want) fail_msg("p%u of CR_ACCESS: %llu, expected %llu", pcts[p], (unsigned long long)got, (unsigned long long)want);
  }
  /* a breakdown row alone: the cr3 writes only */
  uint64_t cr3[N / 3];
  for (unsigned i = 0; i < N / 3; i++) cr3[i] = 1000 + 7 * ((3 * i) % 20);
  assert_int_equal(stats_percentile(&s, cr3w, 50), plain_percentile(cr3, N / 3, 50));
  assert_int_equal(stats_percentile(&s, EXIT_REASON_HLT, 50), 0);     /* empty row */
  stats_free(&s);
}

/* The cost a row took last is remembered by its slot: the table grows
** (16, 32, 64 slots) between runs of one cost, and every exit still counts. */
static void runs_of_one_cost_count_across_the_tables_growth(void **state) {
  (void)state;
  struct stats s;
  stats_init(&s);
  enum { N = 200 };
  uint64_t all[N];
  unsigned n = 0;
  for (unsigned run = 0; run < 8; run++) {
    for (unsigned i = 0; i < 10; i++) all[n++] = 777;              /* the same cost again */
    for (unsigned i = 0; i < 10; i++) all[n++] = 2000 + 10 * run + i;   /* new costs: the table grows */
  }
  while (n < N) all[n++] = 777;
  for (unsigned i = 0; i < N; i++) stats_add_exit(&s, EXIT_REASON_CPUID, EXIT_REASON_CPUID, all[i]);
  assert_int_equal(s.row[EXIT_REASON_CPUID].count, N);
  assert_int_equal(s.row[EXIT_REASON_CPUID].hist.used, 81);
  for (unsigned pct = 0; pct <= 100; pct++) {
    uint64_t want = plain_percentile(all, N, pct), got = stats_percentile(&s, EXIT_REASON_CPUID, pct);
    if (got != want) fail_msg("p%u: %llu, expected %llu", pct, (unsigned long long)got, (unsigned long long)want);
  }
  stats_free(&s);
}

/* work_clear forgets the counts added before it: only what is added after is priced. */
static void a_work_record_cleared_prices_only_what_is_added_after(void **state) {
  (void)state;
  struct profile pr = { .p = { [PP_VM_ROUNDTRIP] = 1000, [PP_VMREAD] = 100, [PP_VMWRITE] = 10, [PP_DR_READ] = 1 } };
  pr.handler[EXIT_REASON_CPUID] = 50000;
  struct work w;
  work_clear(&w);
  work_add(&w, PP_VMREAD, 5);
  work_add(&w, PP_DR_READ, 6);
  work_add(&w, PP_VMREAD, 2);
  assert_int_equal(work_count(&w, PP_VMREAD), 7);
  assert_int_equal(engine_exit_cost(&pr, EXIT_REASON_CPUID, &w), 1000 + 50000 + 700 + 6);
  work_clear(&w);
  assert_int_equal(work_count(&w, PP_VMREAD), 0);
  work_add(&w, PP_VMWRITE, 3);
  work_add(&w, PP_VMREAD, 1);
  assert_int_equal(work_count(&w, PP_VMREAD), 1);
  assert_int_equal(work_count(&w, PP_DR_READ), 0);
  assert_int_equal(engine_exit_cost(&pr, EXIT_REASON_CPUID, &w), 1000 + 50000 + 100 + 30);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(a_reason_row_merges_its_breakdown_rows),
    cmocka_unit_test(runs_of_one_cost_count_across_the_tables_growth),
    cmocka_unit_test(a_work_record_cleared_prices_only_what_is_added_after),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
