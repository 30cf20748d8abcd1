/* The views fed on a thread of its own (sim/replay/feeder.h) are those the
** replay's thread makes feeding them itself: every row, percentile and
** interval of a recording's measured exits, and of simulated exits noted a
** block ahead. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/replay/feeder.h"
#include "sim/trace/trace.h"
#include "sim/replay/views.h"
#include "sim/import/import.h"
#include "sim/present/views_print.h"

static char *views_text(const struct views *w) {
  struct views_print p = { .ghz = 2.4, .total_cycles = 1 };
  cJSON *j = views_json(w, &p);
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

static void fed_on_a_thread_the_views_are_those_fed_in_place(void **state) {
  (void)state;
  char dir[] = "/tmp/vmxsim-test-feeder-XXXXXX", path[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/t.bin", dir);
  struct import_job job = { .format = import_format_find("xentrace"), .input = "tests/data/xentrace-sample/sample.xentrace",
                            .output = path, .command = "test", .opt = { .cpu_ghz = 2.4, .paging = PAGING_64 } };
  struct import im;
  char err[1024];
  int rc = import_file(&job, &im, err, sizeof err);
  import_free(&im);
  if (rc) fail_msg("%s", err);
  struct views a[2], b[2], *fed[2] = { &b[0], &b[1] };
  views_init(&a[0], -1, 0, false);
  views_init(&b[0], -1, 0, false);
  views_init(&a[1], 0, 100000, false);         /* one vCPU's, over time: another row set */
  views_init(&b[1], 0, 100000, false);
  struct feeder *f = feeder_start(fed, 2);
  if (!f) skip();                               /* one processor: the replay's thread feeds them */
  struct trace_reader r;
  assert_int_equal(trace_open(&r, path), EXIT_OK);
  const struct trace_event *evs;
  size_t n, blocks = 0;
  while ((n = trace_next_block(&r, &evs, 777)) > 0) {   /* blocks of an odd size, as the runner's vary */
    feeder_give(f, evs, n);
    for (size_t i = 0; i < n; i++) { views_feed(&a[0], &evs[i]); views_feed(&a[1], &evs[i]); }
    feeder_wait(f);
    blocks++;
  }
  feeder_stop(f);
  assert_false(trace_failed(&r));
  trace_close(&r);
  unlink(path);
  rmdir(dir);
  for (int k = 0; k < 2; k++) {
    char *x = views_text(&a[k]), *y = views_text(&b[k]);
    printf("  views %d over %zu blocks: %llu exits in place, %llu on the thread; %zu bytes of JSON each\n", k, blocks,
           (unsigned long long)a[k].exits, (unsigned long long)b[k].exits, strlen(x));
    assert_true(a[k].exits > 0);
    assert_string_equal(x, y);
    free(x);
    free(y);
    views_free(&a[k]);
    views_free(&b[k]);
  }
}

/* Exits noted during a block are fed while the next one is given: the views
** equal views_add called at once, exit by exit, including the event counts
** of a time series in events. */
static void exits_noted_for_a_sink_give_the_views_added_in_place(void **state) {
  (void)state;
  struct views a, b;
  views_init(&a, -1, 50, true);
  views_init(&b, -1, 50, true);
  struct feeder *f = feeder_start(NULL, 0);
  if (!f) skip();
  unsigned sink = feeder_add_sink(f, &b);
  uint64_t seed = 1;
  for (unsigned block = 0; block < 40; block++) {
    feeder_give(f, NULL, 0);                    /* the previous block's exits, fed now */
    for (unsigned i = 0; i < 300; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      struct trace_event cause = { .type = (seed >> 60) & 1 ? EV_WRMSR : EV_CPUID, .a = (seed >> 40) & 7 };
      unsigned reason = cause.type == EV_WRMSR ? 32 : 10, vcpu = (seed >> 50) & 1;
      uint64_t events = block * 300 + i, cr3 = 0x1000 * ((seed >> 20) & 3), clock = events * 1000;
      uint64_t cycles = (seed >> 33) % 5000;
      a.events = events;
      views_add(&a, vcpu, reason, (seed >> 10) & 1 ? &cause : NULL, cr3, clock, cycles);
      feeder_note(f, sink, events, vcpu, reason, (seed >> 10) & 1 ? &cause : NULL, cr3, clock, cycles);
    }
    feeder_wait(f);
  }
  feeder_give(f, NULL, 0);
  feeder_wait(f);
  feeder_stop(f);
  char *x = views_text(&a), *y = views_text(&b);
  printf("  %llu exits added in place, %llu fed through the feeder\n", (unsigned long long)a.exits,
         (unsigned long long)b.exits);
  assert_int_equal(a.exits, 12000);
  assert_string_equal(x, y);
  free(x);
  free(y);
  views_free(&a);
  views_free(&b);
}

/* Exit notes (a xentrace summary's lean pass, views.h) read on the feeder's
** thread give the views views_add gives in place: the breakdown from the
** cause's type, aux and operand, each vCPU's CR3 (from a note of its own or
** from a CR3 write that caused the exit), and only the exits of the domain's
** vCPU chosen. */
static void exit_notes_read_on_the_feeders_thread_give_the_views_added_in_place(void **state) {
  (void)state;
  struct views a, b;
  views_init(&a, -1, 0, false);
  views_init(&b, -1, 0, false);
  struct exit_note_reader reader;
  exit_note_reader_init(&reader, 1, 0);          /* domain 1's vCPU 0: trace vCPU 2 below */
  struct feeder *f = feeder_start(NULL, 0);
  if (!f) skip();
  feeder_set_notes(f, &b, &reader);
  uint64_t seed = 7, cr3[4] = { 0 }, clock = 0;
  struct exit_note *x = feeder_reserve_notes(f, IMPORT_NOTES_BLOCK);
  size_t n = 0;
  for (unsigned v = 0; v < 4; v++)               /* vCPU v is domain v / 2's vCPU v % 2 */
    x[n++] = (struct exit_note){ .kind = EXIT_NOTE_VCPU, .vcpu = (uint8_t)v, .clock = (uint64_t)(v / 2) << 16 | v % 2 };
  for (unsigned i = 0; i < 20000; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    unsigned v = (seed >> 50) & 3, pick = (seed >> 40) & 3;
    static const struct { uint8_t type, aux; uint16_t reason; } causes[] = {
      { EXIT_NOTE_NO_CAUSE, 0, 12 }, { EV_CR_WRITE, 3, 28 }, { EV_WRMSR, 0, 32 }, { EV_IO, IO_AUX_OUT, 30 } };
    uint64_t op = pick == 1 ? 0x1000 * ((seed >> 20) & 7) : 0x70 + ((seed >> 20) & 1);
    if (pick == 1) cr3[v] = op;
    else if ((seed >> 12 & 15) == 0) {           /* a CR3 no exit's cause set */
      cr3[v] = 0x1000 * ((seed >> 24) & 7);
      x[n++] = (struct exit_note){ .kind = EXIT_NOTE_CR3, .vcpu = (uint8_t)v, .clock = cr3[v] };
    }
    uint64_t cycles = (seed >> 33) % 5000;
    clock += cycles;
    x[n++] = (struct exit_note){ .clock = clock, .cycles = cycles, .a = op, .reason = causes[pick].reason,
                                 .kind = EXIT_NOTE_EXIT, .vcpu = (uint8_t)v, .type = causes[pick].type,
                                 .aux = causes[pick].aux };
    struct trace_event cause = { .type = causes[pick].type, .aux = causes[pick].aux, .vcpu = (uint16_t)v, .a = op };
    if (v == 2) views_add(&a, v, causes[pick].reason, pick ? &cause : NULL, cr3[v], clock, cycles);
    if (n + 2 > 501) {                           /* blocks of an odd size */
      feeder_commit_notes(f, n);
      x = feeder_reserve_notes(f, IMPORT_NOTES_BLOCK);
      n = 0;
    }
  }
  feeder_commit_notes(f, n);
  feeder_wait(f);
  feeder_stop(f);
  char *p = views_text(&a), *q = views_text(&b);
  printf("  %llu of 20000 exits kept in place, %llu read from notes\n", (unsigned long long)a.exits,
         (unsigned long long)b.exits);
  assert_true(a.exits > 4000);
  assert_string_equal(p, q);
  free(p);
  free(q);
  views_free(&a);
  views_free(&b);
}

/* Blocks given one after another without a wait, each from one buffer the
** caller overwrites as soon as feeder_give returns (as the reader reuses its
** chunks), with exits noted between them: the queue fills and the giver
** waits, and the views still equal those fed in place. */
static void blocks_given_without_a_wait_from_a_reused_buffer_give_the_same_views(void **state) {
  (void)state;
  struct views a, b, sa, sb, *fed[1] = { &b };
  views_init(&a, -1, 0, false);
  views_init(&b, -1, 0, false);
  views_init(&sa, -1, 0, false);
  views_init(&sb, -1, 0, false);
  struct feeder *f = feeder_start(fed, 1);
  if (!f) skip();
  unsigned sink = feeder_add_sink(f, &sb);
  feeder_give(f, NULL, 0);                       /* no block yet: nothing to feed, in any view */
  struct trace_event buf[64];
  uint64_t seed = 7;
  for (unsigned block = 0; block < 200; block++) {
    for (unsigned i = 0; i < 64; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      buf[i] = i % 2 ? (struct trace_event){ .type = EV_MEASURED, .vcpu = (seed >> 40) & 1, .a = (seed >> 20) % 9000,
                                              .b = (seed >> 50) & 1 ? 10 : 28 }
                     : (struct trace_event){ .type = EV_CR_WRITE, .vcpu = (seed >> 40) & 1, .aux = (seed >> 30) & 1 ? 3 : 4,
                                              .a = 0x1000 * ((seed >> 10) & 7), .cycles = 100 };
    }
    feeder_give(f, buf, 64);
    for (unsigned i = 0; i < 64; i++) {
      views_feed(&a, &buf[i]);
      if (buf[i].type != EV_CR_WRITE) continue;
      views_add(&sa, buf[i].vcpu, 28, &buf[i], buf[i].a, block, 500 + i);
      feeder_note(f, sink, 0, buf[i].vcpu, 28, &buf[i], buf[i].a, block, 500 + i);
    }
    memset(buf, 0xa5, sizeof buf);               /* the records are gone: the feeder must have copied them */
  }
  feeder_give(f, NULL, 0);
  feeder_wait(f);
  feeder_stop(f);
  char *x = views_text(&a), *y = views_text(&b), *sx = views_text(&sa), *sy = views_text(&sb);
  printf("  measured: %llu exits in place, %llu fed; simulated: %llu in place, %llu fed\n",
         (unsigned long long)a.exits, (unsigned long long)b.exits, (unsigned long long)sa.exits,
         (unsigned long long)sb.exits);
  assert_int_equal(a.exits, 200 * 32);
  assert_int_equal(sa.exits, 200 * 32);
  assert_string_equal(x, y);
  assert_string_equal(sx, sy);
  free(x); free(y); free(sx); free(sy);
  views_free(&a); views_free(&b); views_free(&sa); views_free(&sb);
}

/* One block whose record caused more exits than a sink keeps (a touch of
** 2^20 pages under EPT): past the bound the noting thread feeds them itself,
** after the blocks still queued, and each view is still the one fed in place. */
static void a_block_of_more_exits_than_a_sink_keeps_gives_the_same_views(void **state) {
  (void)state;
  struct views a[2], b[2];
  for (unsigned k = 0; k < 2; k++) {
    views_init(&a[k], -1, 5000, true);
    views_init(&b[k], -1, 5000, true);
  }
  struct feeder *f = feeder_start(NULL, 0);
  if (!f) skip();
  unsigned sink[2] = { feeder_add_sink(f, &b[0]), feeder_add_sink(f, &b[1]) };
  uint64_t seed = 5, events = 0;
  for (unsigned block = 0; block < 6; block++) {
    feeder_give(f, NULL, 0);                    /* no wait: earlier blocks may still be queued */
    unsigned n = block % 2 ? 300 : 300000 + block * 7000;   /* over twice the bound a sink, in turns */
    for (unsigned i = 0; i < n; i++, events++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      unsigned k = (seed >> 62) & 1, reason = (seed >> 61) & 1 ? 48 : 10;
      struct trace_event cause = { .type = reason == 48 ? EV_TOUCH : EV_CPUID, .a = (seed >> 40) & 3 };
      uint64_t cycles = 3000 + (seed >> 33) % 900;
      a[k].events = events;
      views_add(&a[k], 0, reason, &cause, 0x1000, events * 10, cycles);
      feeder_note(f, sink[k], events, 0, reason, &cause, 0x1000, events * 10, cycles);
    }
  }
  feeder_give(f, NULL, 0);
  feeder_wait(f);
  feeder_stop(f);
  for (unsigned k = 0; k < 2; k++) {
    char *x = views_text(&a[k]), *y = views_text(&b[k]);
    printf("  sink %u: %llu exits added in place, %llu fed through the feeder\n", k,
           (unsigned long long)a[k].exits, (unsigned long long)b[k].exits);
    assert_true(a[k].exits > 400000);
    assert_string_equal(x, y);
    free(x);
    free(y);
    views_free(&a[k]);
    views_free(&b[k]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(fed_on_a_thread_the_views_are_those_fed_in_place),
    cmocka_unit_test(exits_noted_for_a_sink_give_the_views_added_in_place),
    cmocka_unit_test(exit_notes_read_on_the_feeders_thread_give_the_views_added_in_place),
    cmocka_unit_test(blocks_given_without_a_wait_from_a_reused_buffer_give_the_same_views),
    cmocka_unit_test(a_block_of_more_exits_than_a_sink_keeps_gives_the_same_views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
