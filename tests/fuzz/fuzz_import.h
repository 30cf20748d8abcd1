/* The body of the importer harnesses (fuzz_perf.c, fuzz_ftrace.c,
** fuzz_xentrace.c): each defines IMPORTER, the function that reads its
** format from a buffer, and includes this.
**
** The importer gets libFuzzer's own buffer, of exactly the input's length.
** It either refuses the input with EXIT_BADINPUT and a message naming the
** input (with a line or byte offset), or emits records the trace reader
** would accept: a known type with valid operands, on a vCPU the import
** counted.  A refused input is imported again with --skip-bad, as a user
** would.  An accepted one then goes the whole way `vmxsim import` goes
** (import_file: the input file, the spooled records, the header, metadata
** and @init records written last) and the trace reader must read the trace
** it writes to its end.  A harness that defines IMPORT_PV64 (perf script
** text) also imports every input as a 64-bit Xen PV guest (--guest pv64),
** whose records must pass the same checks.  A harness that defines
** IMPORT_EXTRA_CHECK(data, size) has it called first on every input. */
#include "fuzz_import_file.h"
#include "sim/trace/zin.h"

#define INPUT_NAME "recording"

struct seen { uint64_t n; unsigned max_vcpu; };

static int check_event(void *ctx, const struct trace_event *ev) {
  struct seen *s = ctx;
  const char *why = ev->type < EV_COUNT ? event_invalid(ev) : "unknown type";
  if (why || (ev->type == EV_TOUCH && (ev->b == 0 || ev->b > TOUCH_PAGES_MAX)) || ev->vcpu >= TRACE_VCPU_MAX) {
    fprintf(stderr, "importer emitted record %llu (type %u aux %u vcpu %u a 0x%llx b 0x%llx): %s\n",
            (unsigned long long)s->n, ev->type, ev->aux, ev->vcpu, (unsigned long long)ev->a,
            (unsigned long long)ev->b, why ? why : "touch pages out of range");
    abort();
  }
  if (ev->vcpu > s->max_vcpu) s->max_vcpu = ev->vcpu;
  s->n++;
  return 0;
}

/* Imports the buffer; *used: the units it understood (import_file refuses an
** input of none); *bad: the units it could not parse. */
static int import_as(const uint8_t *data, size_t size, bool skip_bad, unsigned guest, uint64_t *used, uint64_t *bad) {
  struct import_opts o = { .cpu_ghz = 2.4, .paging = PAGING_64, .guest = guest, .skip_bad = skip_bad, .input = INPUT_NAME };
  struct seen s = { 0, 0 };
  struct import im;
  import_init(&im, &o, check_event, &s);
  int rc = IMPORTER(&im, (const void *)data, size);
  if (rc == 0) {
    import_coverage(&im, import_format_find(IMPORT_FORMAT));
    if (s.n && s.max_vcpu >= im.nvcpus) {
      fprintf(stderr, "record on vCPU %u, the import counted %u vCPUs\n", s.max_vcpu, im.nvcpus);
      abort();
    }
  } else {
    fuzz_check_message(rc, im.err, INPUT_NAME, EXIT_BADINPUT, EXIT_BADINPUT);
  }
  *used = im.used;
  *bad = im.bad;
  import_free(&im);
  return rc;
}

/* As import_as, as the recorded kernel; and as a PV guest where the format has one. */
static int import_once(const uint8_t *data, size_t size, bool skip_bad, uint64_t *used, uint64_t *bad) {
#ifdef IMPORT_PV64
  uint64_t pv_used, pv_bad;
  int pv = import_as(data, size, skip_bad, IMPORT_GUEST_PV64, &pv_used, &pv_bad);
#endif
  int rc = import_as(data, size, skip_bad, IMPORT_GUEST_HVM, used, bad);
#ifdef IMPORT_PV64
  if (pv != rc || pv_used != *used || pv_bad != *bad) {
    fprintf(stderr, "the PV guest's import differs from the recorded kernel's: rc %d/%d, used %llu/%llu\n", pv, rc,
            (unsigned long long)pv_used, (unsigned long long)*used);
    abort();
  }
#endif
  return rc;
}

/* The whole import, file to file, and the trace it writes read back. */
static void import_whole(const uint8_t *data, size_t size) {
  const char *in = fuzz_file(data, size, "recording");
  char err[1024] = "";
  int rc = fuzz_import_file(IMPORT_FORMAT, in, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "the buffer import accepted what import_file refuses (%d): %s\n", rc, err);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t used, bad;
#ifdef IMPORT_EXTRA_CHECK
  IMPORT_EXTRA_CHECK(data, size);
#endif
  if (import_once(data, size, false, &used, &bad) != 0) {
    /* refused for an unparseable unit: --skip-bad counts it and goes on */
    uint64_t bad_first = bad;
    int rc = import_once(data, size, true, &used, &bad);
    if (bad_first && rc != 0) {
      fprintf(stderr, "refused for an unparseable unit, and refused again with --skip-bad (%d)\n", rc);
      abort();
    }
  }
  /* import_file reads a compressed file's content, not its bytes: another input */
  else if (used && zin_detect(data, size) == ZIN_PLAIN) import_whole(data, size);
  return 0;
}
