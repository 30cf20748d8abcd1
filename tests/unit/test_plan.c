/* Unit tests for sweep plans: the format (docs/sweeps.md), the run set and its
** order, exclude rules, errors (file and JSON path named, exit codes), the
** trace cache's keys and the shard arithmetic. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/util.h"
#include "sim/sweep/plan.h"
#include "sim/sweep/sweep.h"

#define assert_contains(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!strstr(h_, n_)) fail_msg("expected to contain: %s\n  actual: %s", n_, h_); \
  } while (0)

static char err[2048];

static int parse(struct plan *p, const char *text) {
  err[0] = 0;
  return plan_parse(p, text, strlen(text), "study.json", "plans", err, sizeof err);
}

/* The plan of docs/sweeps.md, smaller. */
static const char example[] =
  "{\n"
  "  \"name\": \"cr3\",\n"
  "  \"traces\": [\n"
  "    {\"generator\": \"lat_ctx\", \"params\": {\"procs\": [2, 4, 8], \"size\": [0, 64], \"iters\": 100}},\n"
  "    \"recorded/build.bin\"\n"
  "  ],\n"
  "  \"policies\": [\"nocache\", {\"policy\": \"cr3cache\", \"knobs\": {\"cr3_target_count\": [1, 4]}}],\n"
  "  \"cpus\": [\"core2-2007\", \"nehalem-2009\"],\n"
  "  \"exclude\": [{\"generator\": \"lat_ctx\", \"procs\": 8, \"size\": 64}, {\"trace\": \"recorded/build.bin\", \"cpu\": \"core2-2007\"}]\n"
  "}\n";

static void test_example_run_set(void **state) {
  (void)state;
  struct plan p;
  assert_int_equal(parse(&p, example), 0);
  assert_string_equal(p.name, "cr3");
  assert_int_equal(p.ntraces, 2);
  assert_int_equal(p.traces[0].ncombos, 6);
  assert_int_equal(p.npolicies, 2);
  assert_int_equal(p.policies[1].ncombos, 2);
  assert_string_equal(p.traces[1].path, "plans/recorded/build.bin");   /* relative to the plan */
  /* (6 + 1) traces x 3 policies x 2 cpus = 42; procs 8 size 64: 6 runs; build.bin on core2: 3 */
  assert_int_equal(p.nruns, 42 - 6 - 3);
  assert_int_equal(p.nexcluded, 9);
  /* order: traces, then policies, then cpus; the last parameter varies fastest */
  const struct plan_run *r = &p.runs[0];
  assert_int_equal(r->trace, 0), assert_int_equal(r->tcombo, 0), assert_int_equal(r->policy, 0), assert_int_equal(r->cpu, 0);
  r = &p.runs[1];
  assert_int_equal(r->cpu, 1);
  r = &p.runs[2];
  assert_int_equal(r->policy, 1), assert_int_equal(r->pcombo, 0);
  char *label = plan_trace_label(&p.traces[0], 1);
  assert_string_equal(label, "lat_ctx procs=2 size=64 iters=100");
  free(label);
  assert_string_equal(p.policies[1].resolved[1].name, "cr3cache,cr3_target_count=4");
  assert_int_equal(strlen(p.hash), 16);
  assert_true(p.json && strchr(p.json, '\n') == NULL);   /* compact */
  for (size_t i = 0; i < p.nruns; i++)
    if (p.runs[i].trace == 1) assert_int_equal(p.runs[i].cpu, 1);
  plan_free(&p);
}

static void test_defaults_and_name(void **state) {
  (void)state;
  struct plan p;
  assert_int_equal(parse(&p, "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"]}"), 0);
  assert_string_equal(p.name, "study");          /* the file name */
  assert_int_equal(p.ncpus, 1);
  assert_string_equal(p.cpus[0].name, "core2-2007");
  assert_int_equal(p.nruns, 1);
  assert_null(p.cache);
  plan_free(&p);
  assert_int_equal(parse(&p, "{\"traces\": [{\"file\": \"/abs/a.bin\"}], \"policies\": [\"ept\"], \"cache\": \"c\"}"), 0);
  assert_string_equal(p.traces[0].path, "/abs/a.bin");
  assert_string_equal(p.cache, "plans/c");
  plan_free(&p);
}

static void test_generator_argv(void **state) {
  (void)state;
  struct plan p;
  assert_int_equal(parse(&p, "{\"traces\": [{\"generator\": \"syscalls\", \"params\": {\"count\": 10,"
                             " \"mode\": [\"hvm\", \"pv64\"], \"cpu_ghz\": 2.5}}], \"policies\": [\"ept\"]}"), 0);
  char **argv;
  int argc;
  plan_trace_argv(&p.traces[0], 1, &argv, &argc);
  const char *want[] = { "syscalls", "--count", "10", "--mode", "pv64", "--cpu-ghz", "2.5" };
  assert_int_equal(argc, 7);
  for (int i = 0; i < argc; i++) assert_string_equal(argv[i], want[i]);
  plan_argv_free(argv, argc);
  plan_free(&p);
}

/* The cache key is the parameters' content, not their order or spelling in the plan. */
static void test_cache_keys(void **state) {
  (void)state;
  struct plan a, b;
  assert_int_equal(parse(&a, "{\"traces\": [{\"generator\": \"lat_ctx\", \"params\": {\"procs\": [2, 4], \"iters\": 10}}],"
                             " \"policies\": [\"ept\"]}"), 0);
  assert_int_equal(parse(&b, "{\"traces\": [{\"generator\": \"lat_ctx\", \"params\": {\"iters\": 10.0, \"procs\": 4}}],"
                             " \"policies\": [\"ept\"]}"), 0);
  char *a0 = sweep_cache_path("c", &a.traces[0], 0), *a1 = sweep_cache_path("c", &a.traces[0], 1);
  char *b0 = sweep_cache_path("c", &b.traces[0], 0);
  assert_string_not_equal(a0, a1);
  assert_string_equal(a1, b0);
  assert_true(strncmp(a0, "c/lat_ctx-", 10) == 0);
  free(a0), free(a1), free(b0);
  plan_free(&a);
  plan_free(&b);
}

/* A knob condition holds for every policy whose knob has that value, set in the plan or not. */
static void test_exclude_by_knob_value(void **state) {
  (void)state;
  struct plan p;
  assert_int_equal(parse(&p, "{\"traces\": [\"a.bin\"], \"policies\": [\"nocache\", \"ept\","
                             " {\"policy\": \"cr3cache\", \"knobs\": {\"cr3_target_count\": [0, 2]}}],"
                             " \"exclude\": [{\"paging\": \"ept\"}, {\"cr3_target_count\": \"0\", \"policy\": \"cr3cache\"}]}"), 0);
  assert_int_equal(p.nruns, 2);
  assert_string_equal(p.policies[p.runs[0].policy].spec, "nocache");
  assert_string_equal(p.policies[p.runs[1].policy].resolved[p.runs[1].pcombo].name, "cr3cache,cr3_target_count=2");
  plan_free(&p);
}

/* ---- errors: the file and the JSON path, and the exit code ---- */

struct bad {
  const char *plan;
  int rc;
  const char *message;
};

static void test_errors(void **state) {
  (void)state;
  static const struct bad cases[] = {
    /* unknown keys */
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"], \"cpu\": [\"x\"]}", EXIT_USAGE,
      "study.json: $.cpu: unknown key (expected name, description, traces, policies, cpus, exclude, cache)" },
    { "{\"traces\": [{\"file\": \"a.bin\", \"param\": 1}], \"policies\": [\"ept\"]}", EXIT_USAGE,
      "study.json: $.traces[0].param: unknown key" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [{\"policy\": \"ept\", \"knob\": {}}]}", EXIT_USAGE,
      "study.json: $.policies[0].knob: unknown key" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"], \"exclude\": [{\"proc\": 2}]}", EXIT_USAGE,
      "study.json: $.exclude[0].proc: unknown key" },
    { "{\"traces\": [{\"generator\": \"lat_ctx\", \"params\": {\"procz\": 2}}], \"policies\": [\"ept\"]}", EXIT_USAGE,
      "study.json: $.traces[0].params.procz: generator lat_ctx has no option --procz" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [{\"policy\": \"cr3cache\", \"knobs\": {\"cr3_targets\": [1]}}]}",
      EXIT_USAGE, "study.json: $.policies[0].knobs.cr3_targets: unknown knob 'cr3_targets'" },
    /* empty products */
    { "{\"traces\": [], \"policies\": [\"ept\"]}", EXIT_USAGE, "study.json: $.traces: an empty list" },
    { "{\"traces\": [\"a.bin\"], \"policies\": []}", EXIT_USAGE, "study.json: $.policies: an empty list" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"], \"cpus\": []}", EXIT_USAGE, "study.json: $.cpus: an empty list" },
    { "{\"traces\": [{\"generator\": \"lat_ctx\", \"params\": {\"procs\": []}}], \"policies\": [\"ept\"]}", EXIT_USAGE,
      "study.json: $.traces[0].params.procs: an empty list: the product of the plan has no runs" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"], \"exclude\": [{\"cpu\": \"core2-2007\"}]}", EXIT_USAGE,
      "study.json: $.exclude: the plan's one run is excluded: the product of the plan is empty" },
    /* unknown policies, profiles, generators, values */
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\", \"shadowcache+lazyd\"]}", EXIT_USAGE,
      "study.json: $.policies[1]: unknown policy 'lazyd'" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [{\"policy\": \"nocach\"}]}", EXIT_USAGE,
      "study.json: $.policies[0].policy: unknown policy 'nocach'" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"], \"cpus\": [\"core2-2007\", \"core3\"]}", EXIT_USAGE,
      "study.json: $.cpus[1]: unknown CPU profile 'core3'" },
    { "{\"traces\": [{\"generator\": \"latctx\"}], \"policies\": [\"ept\"]}", EXIT_USAGE,
      "study.json: $.traces[0].generator: unknown generator 'latctx'" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [{\"policy\": \"cr3cache\", \"knobs\": {\"cr3_target_count\": [1, -1]}}]}",
      EXIT_USAGE, "study.json: $.policies[0].knobs.cr3_target_count[1]: knob cr3_target_count: '-1' is not" },
    /* counts are decimal: "010" was octal 8 and "0x10" 16 */
    { "{\"traces\": [\"a.bin\"], \"policies\": [{\"policy\": \"cr3cache\", \"knobs\": {\"cr3_target_count\": [1, \"010\"]}}]}",
      EXIT_USAGE, "study.json: $.policies[0].knobs.cr3_target_count[1]: knob cr3_target_count: '010' is not a whole "
      "number in 0..511 (a leading 0 is ambiguous: C would read it as octal" },
    { "{\"traces\": [\"a.bin\"], \"policies\": [\"ept\"], \"exclude\": [{\"prev_roots\": \"0x0\"}]}", EXIT_USAGE,
      "study.json: $.exclude[0].prev_roots: knob prev_roots: '0x0' is not a decimal whole number in 0..8" },
    { "{\"traces\": [{\"generator\": \"lat_ctx\", \"params\": {\"procs\": [2, [4]]}}], \"policies\": [\"ept\"]}",
      EXIT_USAGE, "study.json: $.traces[0].params.procs[1]: expected a number, a string or a boolean" },
    /* structure */
    { "{\"policies\": [\"ept\"]}", EXIT_USAGE, "study.json: $: missing \"traces\"" },
    { "{\"traces\": [\"a.bin\"]}", EXIT_USAGE, "study.json: $: missing \"policies\"" },
    { "{\"traces\": [\"a.bin\"], \"traces\": [\"b.bin\"], \"policies\": [\"ept\"]}", EXIT_USAGE,
      "study.json: $.traces: given twice" },
    { "{\"traces\": [{\"file\": \"a\", \"generator\": \"lat_ctx\"}], \"policies\": [\"ept\"]}", EXIT_USAGE,
      "study.json: $.traces[0]: either \"file\" or \"generator\", not both" },
    { "{\"traces\": [{\"generator\": \"lat_ctx\", \"params\": {\"output\": \"x\"}}], \"policies\": [\"ept\"]}",
      EXIT_USAGE, "$.traces[0].params.output: not a parameter" },
    { "[]", EXIT_USAGE, "study.json: $: expected an object" },
    { "{\"traces\": [\"a.bin\"],\n \"policies\": [\"ept\"],\n}", EXIT_BADINPUT, "study.json:3: malformed JSON" },
    { "", EXIT_BADINPUT, "study.json:1: malformed JSON" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct plan p;
    int rc = parse(&p, cases[i].plan);
    if (rc != cases[i].rc || !strstr(err, cases[i].message))
      fail_msg("case %zu: %s\n  expected: exit %d, %s\n  actual:   exit %d, %s", i, cases[i].plan, cases[i].rc,
               cases[i].message, rc, err);
    plan_free(&p);
  }
}

static void test_load_missing_file(void **state) {
  (void)state;
  struct plan p;
  assert_int_equal(plan_load(&p, "/nonexistent/plan.json", err, sizeof err), EXIT_BADINPUT);
  assert_contains(err, "/nonexistent/plan.json: cannot read the plan");
  plan_free(&p);
}

/* ---- shards ---- */

static void test_shard_parse(void **state) {
  (void)state;
  unsigned i, n;
  assert_int_equal(plan_shard_parse("0/1", &i, &n, err, sizeof err), 0);
  assert_int_equal(i, 0), assert_int_equal(n, 1);
  assert_int_equal(plan_shard_parse("3/4", &i, &n, err, sizeof err), 0);
  assert_int_equal(i, 3), assert_int_equal(n, 4);
  const char *bad[] = { "4/4", "1/0", "/4", "1/", "1", "a/4", "1/4x", "-1/4", "", "0/100001" };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    err[0] = 0;
    if (plan_shard_parse(bad[k], &i, &n, err, sizeof err) != EXIT_USAGE) fail_msg("--shard %s accepted", bad[k]);
    assert_contains(err, "expected I/N");
  }
}

/* Every run is in exactly one of N shards, and shards differ in size by at most one. */
static void test_shards_partition(void **state) {
  (void)state;
  for (size_t runs = 0; runs <= 40; runs++)
    for (unsigned n = 1; n <= 9; n++) {
      size_t total = 0, lo = (size_t)-1, hi = 0;
      for (unsigned s = 0; s < n; s++) {
        size_t size = plan_shard_size(runs, s, n), counted = 0;
        for (size_t r = 0; r < runs; r++) counted += plan_in_shard(r, s, n);
        if (counted != size) fail_msg("%zu runs, shard %u/%u: size %zu, counted %zu", runs, s, n, size, counted);
        total += size;
        lo = size < lo ? size : lo;
        hi = size > hi ? size : hi;
      }
      for (size_t r = 0; r < runs; r++) {
        unsigned owners = 0;
        for (unsigned s = 0; s < n; s++) owners += plan_in_shard(r, s, n);
        if (owners != 1) fail_msg("run %zu of %zu is in %u of %u shards", r, runs, owners, n);
      }
      assert_int_equal(total, runs);
      assert_true(hi - lo <= 1);
    }
}

static void test_axis_index(void **state) {
  (void)state;
  struct plan_axis axes[3] = { { .nvalues = 2 }, { .nvalues = 3 }, { .nvalues = 4 } };
  /* combo 23 = 1*12 + 2*4 + 3 */
  assert_int_equal(plan_axis_index(axes, 3, 23, 0), 1);
  assert_int_equal(plan_axis_index(axes, 3, 23, 1), 2);
  assert_int_equal(plan_axis_index(axes, 3, 23, 2), 3);
  assert_int_equal(plan_axis_index(axes, 3, 5, 0), 0);
  assert_int_equal(plan_axis_index(axes, 3, 5, 1), 1);
  assert_int_equal(plan_axis_index(axes, 3, 5, 2), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_example_run_set),
    cmocka_unit_test(test_defaults_and_name),
    cmocka_unit_test(test_generator_argv),
    cmocka_unit_test(test_cache_keys),
    cmocka_unit_test(test_exclude_by_knob_value),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_load_missing_file),
    cmocka_unit_test(test_shard_parse),
    cmocka_unit_test(test_shards_partition),
    cmocka_unit_test(test_axis_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
