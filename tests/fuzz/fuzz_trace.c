/* libFuzzer harness: the binary trace reader (sim/trace/trace.c and
** trace_pipe.c) and a replay of what it accepts (sim/replay/runner.c, the
** engine and the models).
**
** The input is a trace file, written as it is (a gzip, xz or zstd input goes
** through the stream reader, sim/trace/zin.c).  The reader either refuses it
** with EXIT_BADINPUT and a message naming the file, or hands out records
** that every text form survives: each record's `trace dump` line assembles
** back to the same 24 bytes.  An accepted trace is then replayed in one pass
** under three configurations that between them run every model: shadow
** paging with lazy debug registers, the CR3 cache with the narrowed CR4 mask
** on 32 entries of TLB, and EPT with its views (measured beside simulated).
**
** Touches are bounded by the format at 2^20 pages, about a second of replay
** each under EPT (traces/FORMAT.md): a trace that asks for more than 2^12
** pages in all is read and not replayed, so that a legal slow input is not
** taken for a hang. */
#include "fuzz.h"
#include "sim/replay/runner.h"
#include "sim/trace/trace.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"

#define FILE_NAME "trace.bin"
#define REPLAY_PAGES_MAX (1u << 12)
#define RECORDS_MAX      (1u << 18)  /* a small compressed input can hold millions: read so far */

struct one { unsigned n; struct trace_event ev; };

static int take_one(void *ctx, const struct trace_event *ev) {
  struct one *o = ctx;
  if (o->n++ == 0) o->ev = *ev;
  return 0;
}

/* The record's text line parses back to the record itself. */
static void check_round_trip(const struct trace_event *ev) {
  char line[256];
  trace_text_format(ev, line, sizeof line);
  struct trace_text_parser p;
  struct one o = { 0 };
  trace_text_parser_init(&p);
  p.header_done = true;
  p.vcpu = ev->vcpu;
  int rc = trace_text_parse_line(&p, line, take_one, &o);
  if (rc != 0 || o.n != 1 || memcmp(&o.ev, ev, sizeof *ev) != 0) {
    fprintf(stderr, "record type %u aux %u vcpu %u: '%s' does not assemble back (rc %d, %u records, %s)\n",
            ev->type, ev->aux, ev->vcpu, line, rc, o.n, p.err);
    abort();
  }
  trace_text_parser_free(&p);
}

/* Reads the whole trace: true when it is valid; *pages is the pages its
** touches ask for, *guest its guest events (measured exits are none). */
static bool read_all(const char *path, uint64_t *pages, uint64_t *guest) {
  struct trace_reader r;
  *pages = *guest = 0;
  int rc = trace_open(&r, path);
  if (rc != 0) {
    fuzz_check_message(rc, r.err, path, EXIT_BADINPUT, EXIT_BADINPUT);
    trace_close(&r);
    return false;
  }
  r.read_ahead = false;            /* one thread: a finding replays the same way */
  const struct trace_event *ev;
  uint64_t n = 0;
  while (n < RECORDS_MAX && (ev = trace_next(&r))) {
    if (ev->type == EV_TOUCH) *pages += ev->b;
    if (ev->type != EV_MEASURED) ++*guest;
    check_round_trip(ev);
    n++;
  }
  if (n == RECORDS_MAX) {          /* too long to replay in an execution: read this far */
    trace_close(&r);
    return false;
  }
  rc = trace_failed(&r);          /* true or false: the reader's failures are all bad input */
  if (rc) fuzz_check_message(EXIT_BADINPUT, r.err, path, EXIT_BADINPUT, EXIT_BADINPUT);
  else if (!trace_done(&r) || (r.count_known && n != r.hdr.event_count)) {
    fprintf(stderr, "reader ended after %llu records without an error, header says %llu\n",
            (unsigned long long)n, (unsigned long long)r.hdr.event_count);
    abort();
  }
  trace_close(&r);
  return rc == 0;
}

static void replay(const char *path, uint64_t guest) {
  static char *const small_tlb[] = { "tlb_entries=32" };
  static const struct run_config configs[] = {
    { .policy = "shadowcache+lazydr", .cpu = "core2-2007" },
    { .policy = "cr3cache+cr4mask", .cpu = "core2-2008", .sets = small_tlb, .nsets = 1 },
    { .policy = "ept", .cpu = "skylake-2019" },
  };
  enum { N = sizeof configs / sizeof *configs };
  struct run_set s = { .trace = path, .configs = configs, .nconfigs = N, .hash_trace = true,
                       .views = { .views = true, .interval = 100000 } };
  struct run_output out[N];
  memset(out, 0, sizeof out);
  char err[1024] = "";
  int rc = run_traces(&s, out, err, sizeof err);
  /* a VM entry that fails is the trace's initial state, refused as the SDM says; a pool too
  ** small for the pinned roots of many vCPUs (256 of them, or 64 with PAE) is refused up front */
  if (rc != 0 && rc != EXIT_VMENTRY && !(rc == EXIT_USAGE && strstr(err, "is too small for")))
    fuzz_check_message(rc, err, path, EXIT_BADINPUT, EXIT_BADINPUT);
  if (rc == 0)
    for (unsigned i = 0; i < N; i++)
      if (out[i].rep.events != guest) {
        fprintf(stderr, "configuration %u replayed %llu of %llu guest events\n", i,
                (unsigned long long)out[i].rep.events, (unsigned long long)guest);
        abort();
      }
  for (unsigned i = 0; i < N; i++) run_output_free(&out[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file(data, size, FILE_NAME);
  uint64_t pages, guest;
  if (read_all(path, &pages, &guest) && pages <= REPLAY_PAGES_MAX) replay(path, guest);
  return 0;
}
