/* Views (sim/replay/views.c, views_print.c): per-row figures as xenalyze computes them, above its sample size too,
** breakdown keys and vCPU filtering. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/replay/views.h"
#include <cJSON.h>
#include "models/vmx/exit_reason.h"
#include "sim/present/views_print.h"

/* xenalyze's update_summary and percentile(), written out again (tools/xentrace/xenalyze.c):
** an even sample of at most S values, then the element N * p / 100 of the sorted sample. */
#define S VIEW_SAMPLE
struct xsum { int count, cycles_count; unsigned long long cycles; long long sample[S]; };   /* cycles unsigned: no overflow in the tests' sums of huge costs */
static void x_update(struct xsum *s, long long c) {
  if (c) {
    int lap = s->cycles_count / S + 1, index = s->cycles_count % S;
    if ((index - (lap / 3)) % lap == 0) s->sample[index] = c;
    s->cycles_count++;
    s->cycles += c;
  }
  s->count++;
}
static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}
static long long x_pct(const struct xsum *s, int p) {
  int n = s->cycles_count < S ? s->cycles_count : S;
  long long *v = malloc((size_t)n * sizeof *v);
  memcpy(v, s->sample, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_ll);
  long long r = v[n * p / 100];
  free(v);
  return r;
}

/* The views hold one row, whose percentiles are those of x's sample. */
static void assert_one_row_has_the_percentiles_of(const struct views *w, const struct xsum *x, const char *whose) {
  struct view_stat *s;
  assert_int_equal(views_stats(w, VD_REASON, false, SORT_REASON, &s), 1);
  printf("p5/p50/p95: %llu/%llu/%llu, %s %lld/%lld/%lld\n", (unsigned long long)s[0].p5,
         (unsigned long long)s[0].p50, (unsigned long long)s[0].p95, whose, x_pct(x, 5), x_pct(x, 50), x_pct(x, 95));
  assert_int_equal(s[0].p5, (uint64_t)x_pct(x, 5));
  assert_int_equal(s[0].p50, (uint64_t)x_pct(x, 50));
  assert_int_equal(s[0].p95, (uint64_t)x_pct(x, 95));
  free(s);
}

static const struct view_stat *row(const struct view_stat *s, unsigned n, unsigned dim, uint64_t key) {
  for (unsigned i = 0; i < n; i++)
    if (s[i].dim == dim && s[i].key == key) return &s[i];
  return NULL;
}

static void figures_match_xenalyze_above_its_sample_size(void **state) {
  (void)state;
  static struct xsum x;
  struct views *w = calloc(1, sizeof *w);
  views_init(w, -1, 0, false);
  uint64_t seed = 7;
  struct trace_event cpuid = { .type = EV_CPUID, .a = 0x7 };
  for (int i = 0; i < 3 * S + 123; i++) {         /* three laps and some */
    seed = seed * 6364136223846793005ull + 1;
    long long c = (i % 97 == 0) ? 0 : 500 + (long long)(seed >> 40) % 5000;   /* a few zero costs */
    x_update(&x, c);
    views_add(w, 0, EXIT_REASON_CPUID, &cpuid, 0x1000, (uint64_t)i * 10000, (uint64_t)c);
  }
  struct view_stat *s;
  unsigned n = views_stats(w, VD_REASON, true, SORT_REASON, &s);
  const struct view_stat *r = row(s, n, VD_REASON, EXIT_REASON_CPUID), *leaf = row(s, n, VD_LEAF, 0x7);
  assert_non_null(r);
  assert_non_null(leaf);
  assert_int_equal(r->count, (uint64_t)x.count);
  assert_int_equal(r->avg, (uint64_t)(x.cycles / x.cycles_count));
  assert_int_equal(r->p5, (uint64_t)x_pct(&x, 5));
  assert_int_equal(r->p50, (uint64_t)x_pct(&x, 50));
  assert_int_equal(r->p95, (uint64_t)x_pct(&x, 95));
  assert_int_equal(leaf->count, r->count);
  free(s);
  views_free(w);
  free(w);
}

/* Forty laps: the sample's later laps keep every L-th slot from L/3 on, and a
** sample of few distinct costs (long runs of equal values) still gives
** xenalyze's percentiles. */
static void figures_match_xenalyze_after_many_laps_of_few_costs(void **state) {
  (void)state;
  static struct xsum x;
  memset(&x, 0, sizeof x);
  struct views *w = calloc(1, sizeof *w);
  views_init(w, -1, 0, false);
  uint64_t seed = 11;
  for (int i = 0; i < 40 * S + 5; i++) {
    seed = seed * 6364136223846793005ull + 1;
    long long c = 1000 + 100 * (long long)((seed >> 33) % 4) + (i > 20 * S ? 7 : 0);
    x_update(&x, c);
    views_add(w, 0, EXIT_REASON_HLT, NULL, 0x1000, 0, (uint64_t)c);
  }
  assert_one_row_has_the_percentiles_of(w, &x, "xenalyze's");
  views_free(w);
  free(w);
}

/* Percentiles are selected by bucket of the sample's values: samples whose
** values fall in one bucket, in two far apart, at the ends of the 64-bit range,
** or spread over many, each give the elements of the sorted sample. */
static void percentiles_of_awkward_samples_are_those_of_the_sorted_sample(void **state) {
  (void)state;
  static struct xsum x;
  for (unsigned shape = 0; shape < 7; shape++) {
    memset(&x, 0, sizeof x);
    struct views *w = calloc(1, sizeof *w);
    views_init(w, -1, 0, false);
    uint64_t seed = 3 + shape;
    int n = shape == 5 ? 1 : shape == 6 ? 200 : 2 * S + 77;   /* 5, 6: samples small enough to be copied whole */
    for (int i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ull + 1;
      uint64_t r = seed >> 11, c;
      switch (shape) {
      case 0: c = 4242; break;                                       /* all equal */
      case 1: c = r % 10 ? 1000 : 1000000000000ull; break;           /* two values, far apart */
      case 2: c = r % 2 ? 1 : (1ull << 62) + (r % 3); break;         /* the ends of the range */
      case 3: c = 1 + r % 3000000; break;                            /* many buckets, many values */
      case 4: c = 5000 + (r % 4) + (i > S ? 9 : 0); break;           /* a few neighbours */
      case 5: c = 77; break;                                         /* one exit */
      default: c = 1 + r % 1000; break;                              /* a few hundred */
      }
      x_update(&x, (long long)c);
      views_add(w, 0, EXIT_REASON_HLT, NULL, 0x1000, 0, c);
    }
    printf("shape %u: ", shape);
    assert_one_row_has_the_percentiles_of(w, &x, "of the sorted sample");
    views_free(w);
    free(w);
  }
}

/* The standard deviation is that of a long double sum of the squares, also
** once the sum no longer fits in 64 bits and for costs of 2^32 and more. */
static void stddev_of_a_long_double_sum_of_squares(void **state) {
  (void)state;
  /* the first two: squares that fit in 64 bits, whose sum does not */
  static const uint64_t costs[] = { UINT32_MAX, UINT32_MAX, 3, 4000000000ull, 5000000000ull, 17, 1ull << 40,
                                    4242, 999999999999ull };
  enum { N = sizeof costs / sizeof *costs };
  for (unsigned start = 0; start < N; start++) {
    struct views *w = calloc(1, sizeof *w);
    views_init(w, -1, 0, false);
    long double sumsq = 0, sum = 0;
    unsigned n = 0;
    for (unsigned k = 0; k < 3; k++)
      for (unsigned i = start; i < N; i++, n++) {
        views_add(w, 0, EXIT_REASON_HLT, NULL, 0x1000, 0, costs[i]);
        sumsq += (long double)costs[i] * (long double)costs[i];
        sum += (long double)costs[i];
      }
    long double mean = sum / n, var = sumsq / n - mean * mean;
    double want = var > 0 ? (double)sqrtl(var) : 0;
    struct view_stat *s;
    views_stats(w, VD_REASON, false, SORT_REASON, &s);
    printf("costs from %u: stddev %.17g, expected %.17g\n", start, s[0].stddev, want);
    assert_true(s[0].stddev == want);
    free(s);
    views_free(w);
    free(w);
  }
}

/* Rows are found the same through the shortcuts (a reason's row, a vCPU's,
** its last CR3 and a reason's two last breakdown rows) as through the index:
** three keys taking turns, CR3 changing per vCPU, a reason past the direct ones. */
static void rows_count_the_same_whichever_way_they_are_found(void **state) {
  (void)state;
  struct views *w = calloc(1, sizeof *w);
  views_init(w, -1, 0, false);
  struct trace_event msr[3] = { { .type = EV_WRMSR, .a = 0x10 }, { .type = EV_WRMSR, .a = 0x6e0 },
                                { .type = EV_WRMSR, .a = 0x830 } };
  for (unsigned i = 0; i < 300; i++) {
    unsigned vcpu = i % 3;
    uint64_t cr3 = 0x1000 * (1 + (i / 7) % 4);
    views_add(w, vcpu, EXIT_REASON_MSR_WRITE, &msr[(i / (1 + i % 2)) % 3], cr3, 0, 10);
    views_add(w, vcpu, 0xfff0, NULL, cr3, 0, 1);
  }
  unsigned want[3] = { 0 }, cr3s[4] = { 0 };
  for (unsigned i = 0; i < 300; i++) {
    want[(i / (1 + i % 2)) % 3]++;
    cr3s[(i / 7) % 4] += 2;
  }
  struct view_stat *s;
  unsigned n = views_stats(w, VD_REASON, true, SORT_REASON, &s);
  assert_int_equal(n, 5);                          /* 2 reasons, 3 MSRs */
  for (unsigned k = 0; k < 3; k++) {
    const struct view_stat *r = row(s, n, VD_MSR, msr[k].a);
    printf("msr 0x%llx: %llu exits, expected %u\n", (unsigned long long)msr[k].a, (unsigned long long)r->count, want[k]);
    assert_int_equal(r->count, want[k]);
  }
  assert_int_equal(row(s, n, VD_REASON, 0xfff0)->count, 300);
  free(s);
  n = views_stats(w, VD_CR3, false, SORT_REASON, &s);
  assert_int_equal(n, 4);
  for (unsigned k = 0; k < 4; k++) assert_int_equal(row(s, n, VD_CR3, 0x1000 * (k + 1))->count, cr3s[k]);
  free(s);
  n = views_stats(w, VD_VCPU, false, SORT_REASON, &s);
  assert_int_equal(n, 3);
  for (unsigned k = 0; k < 3; k++) assert_int_equal(row(s, n, VD_VCPU, k)->count, 200);
  free(s);
  views_free(w);
  free(w);
}

static void breakdowns_by_register_port_and_vector(void **state) {
  (void)state;
  struct views *w = calloc(1, sizeof *w);
  views_init(w, 1, 0, false);                      /* vCPU 1 only */
  struct trace_event cr3 = { .type = EV_CR_WRITE, .aux = 3 }, io = { .type = EV_IO, .aux = IO_AUX_OUT | 1 << 1, .a = 0x3f8 },
                     pf = { .type = EV_TOUCH, .b = 1 };
  views_add(w, 1, EXIT_REASON_CR_ACCESS, &cr3, 0x2000, 0, 100);
  views_add(w, 1, EXIT_REASON_IO_INSTRUCTION, &io, 0x2000, 0, 300);
  views_add(w, 1, EXIT_REASON_EXCEPTION_NMI, &pf, 0x3000, 0, 700);
  views_add(w, 0, EXIT_REASON_CR_ACCESS, &cr3, 0x2000, 0, 100);   /* filtered out */
  views_add(w, 1, EXIT_REASON_HLT, NULL, 0x3000, 0, 50);          /* no cause: the reason only */
  struct view_stat *s;
  unsigned n = views_stats(w, VD_REASON, true, SORT_REASON, &s);
  assert_string_equal(row(s, n, VD_CR, 7)->name, "cr3 write");
  assert_string_equal(row(s, n, VD_CR, 7)->parent, "CR_ACCESS");
  assert_string_equal(row(s, n, VD_PORT, 0x103f8)->name, "port 0x3f8 out");
  assert_string_equal(row(s, n, VD_VECTOR, 14)->name, "vector 14");
  assert_int_equal(row(s, n, VD_REASON, EXIT_REASON_CR_ACCESS)->count, 1);
  assert_int_equal(n, 7);                          /* 4 reasons, 3 breakdown rows */
  free(s);
  n = views_stats(w, VD_CR3, false, SORT_TIME, &s);
  assert_int_equal(n, 2);
  assert_string_equal(s[0].name, "cr3 0x3000");    /* most time first */
  assert_int_equal(s[0].cycles, 750);
  free(s);
  views_free(w);
  free(w);
}

static char *json_text(const struct views *w) {
  struct views_print p = { .ghz = 2.4, .total_cycles = 1 };
  struct cJSON *j = views_json(w, &p);
  char *t = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return t;
}

/* A copy prints as the original (rows past the sample size, breakdowns,
** intervals), and grows on its own: the original is unchanged by it. */
static void a_copy_is_the_views_and_owns_its_memory(void **state) {
  (void)state;
  struct views a, b;
  views_init(&a, -1, 1000, true);
  for (unsigned i = 0; i < 30000; i++) {
    struct trace_event cause = { .type = EV_WRMSR, .a = 0x6e0 + i % 3 };
    a.events = i;
    views_add(&a, i % 2, 32, &cause, 0x1000 * (i % 5), i * 100, 1000 + i % 977);
  }
  views_copy(&b, &a);
  char *x = json_text(&a), *y = json_text(&b);
  printf("  %u rows, %zu bytes of JSON, copied alike: %s\n", a.nrows, strlen(x), strcmp(x, y) ? "no" : "yes");
  assert_string_equal(x, y);
  for (unsigned i = 0; i < 5000; i++) views_add(&b, 3, 10, NULL, 0x9000, 1, 5);
  char *z = json_text(&a);
  assert_string_equal(x, z);
  assert_int_not_equal(a.exits, b.exits);
  free(x);
  free(y);
  free(z);
  views_free(&a);
  views_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(figures_match_xenalyze_above_its_sample_size),
    cmocka_unit_test(figures_match_xenalyze_after_many_laps_of_few_costs),
    cmocka_unit_test(percentiles_of_awkward_samples_are_those_of_the_sorted_sample),
    cmocka_unit_test(stddev_of_a_long_double_sum_of_squares),
    cmocka_unit_test(rows_count_the_same_whichever_way_they_are_found),
    cmocka_unit_test(breakdowns_by_register_port_and_vector),
    cmocka_unit_test(a_copy_is_the_views_and_owns_its_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
