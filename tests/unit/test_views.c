/* Views (sim/core/views.c): per-row figures as xenalyze computes them, above its sample size too,
** breakdown keys and vCPU filtering. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include "sim/core/views.h"
#include "models/vmx/exit_reason.h"

/* xenalyze's update_summary and percentile(), written out again (tools/xentrace/xenalyze.c):
** an even sample of at most S values, then the element N * p / 100 of the sorted sample. */
#define S VIEW_SAMPLE
struct xsum { int count, cycles_count; long long cycles; long long sample[S]; };
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

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(figures_match_xenalyze_above_its_sample_size),
    cmocka_unit_test(breakdowns_by_register_port_and_vector),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
