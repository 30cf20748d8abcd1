/* libFuzzer harness: the members of a trace's metadata that vmxsim reads
** (sim/trace/trace_meta.c, used by `vmxsim summary`).  The input is the
** metadata text, as a copy of exactly its bytes with a NUL (the reader gives
** the metadata so).  Each member is read with its own range: accepted, the
** value is the default or a number in that range (whole when it must be);
** refused, the exit code is EXIT_BADINPUT and the message names the file,
** byte 64, the member and its range.  The vCPUs' names are read too. */
#include "fuzz.h"
#include "sim/trace/trace_meta.h"
#include "sim/base/util.h"
#include <math.h>

static void read_member(const char *meta, const char *key, const struct meta_range *want) {
  const double def = 12345;
  double v = -1;
  char err[512] = "";
  int rc = trace_meta_number(meta, "t.bin", key, want, def, &v, err, sizeof err);
  if (rc == EXIT_OK) {
    bool inside = (want->lo_open ? v > want->lo : v >= want->lo) && (want->hi_open ? v < want->hi : v <= want->hi);
    if (v != def && (!inside || (want->whole && v != floor(v)))) {
      fprintf(stderr, "metadata \"%s\": %g accepted outside its range\n", key, v);
      abort();
    }
    return;
  }
  char want_start[128];
  snprintf(want_start, sizeof want_start, "t.bin: byte 64: metadata \"%s\": ", key);
  if (rc != EXIT_BADINPUT || strncmp(err, want_start, strlen(want_start)) != 0 || !strstr(err, want->range)) {
    fprintf(stderr, "metadata \"%s\": refused with %d and '%s'\n", key, rc, err);
    abort();
  }
}

/* The vCPUs' names (metadata "vcpus", read by summary and for every run's
** views): accepted, each is dDvV of 16-bit ids, at most TRACE_VCPU_MAX; refused,
** the message names the file and the entry. */
static void read_vcpu_names(const char *meta) {
  struct trace_vcpu_names *m = malloc(sizeof *m);
  char err[512] = "", name[24];
  int rc = trace_meta_vcpu_names(meta, "t.bin", m, err, sizeof err);
  if (rc == EXIT_OK) {
    for (unsigned i = 0; i < m->n; i++) {
      snprintf(name, sizeof name, "d%dv%d", m->domain[i], m->vcpu[i]);
      if (m->n > TRACE_VCPU_MAX || m->domain[i] < 0 || m->domain[i] > 65535 || m->vcpu[i] < 0 ||
          m->vcpu[i] > 65535 || strcmp(name, m->names[i]) != 0) {
        fprintf(stderr, "metadata \"vcpus\"[%u]: accepted as '%s'\n", i, m->names[i]);
        abort();
      }
    }
  } else if (rc != EXIT_BADINPUT || strncmp(err, "t.bin: metadata \"vcpus\"[", 24) != 0) {
    fprintf(stderr, "metadata \"vcpus\": refused with %d and '%s'\n", rc, err);
    abort();
  }
  free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *meta = fuzz_copy(data, size);
  read_member(meta, "cpu_ghz", &trace_meta_cpu_ghz);
  read_member(meta, "span_cycles", &trace_meta_span_cycles);
  read_vcpu_names(meta);
  free(meta);
  return 0;
}
