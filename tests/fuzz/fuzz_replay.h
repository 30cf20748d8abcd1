/* For harnesses whose input is a configuration (a policy, a CPU profile): a
** small trace that runs every kind of exit, and a replay of it under the
** configuration, so that every value the parser accepts is also priced and
** simulated (a value in range must not overflow, divide by zero or exhaust
** memory). */
#ifndef VMXSIM_FUZZ_REPLAY_H
#define VMXSIM_FUZZ_REPLAY_H

#include "fuzz.h"
#include "sim/replay/runner.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"

static const char fuzz_small_text[] =
  "@paging 64\n@vcpus 2\n"
  "@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0\n@init vcpu=1 cr0=0x80050033 cr3=0x1000 cr4=0x6f0\n"
  "run 2400\ncpuid 0x1\nrdmsr 0x10\nwrmsr 0x6e0 0x1234\nio out 0x3f8 1\nvmcall 0\nxsetbv 0 0x7\n"
  "cr0r\ncr3r\ncr4r\ncr8r\ncr0w 0x80050033\ncr4w 0x6f0\ncr4w 0x670\ncr4w 0x6f0\ncr8w 0x2\nclts\nlmsw 0x1\n"
  "drw 0 0x401000\ndrw 7 0x401\ndrr 6\ndrr 7\n"
  "syscall 1\ntouch 0x400000 8 w\ntouch 0x7ffc0000 2\nptwrite 0x400000 1\nptwrite 0x7f0000000000 4\n"
  "invlpg 0x400000\nsysret\ncr3w 0x2000\ntouch 0x400000 8\ntouch 0xffff888000000000 2\ncr3w 0x1000\n"
  "touch 0x400000 8\ncr3w 0x3000\ntouch 0x500000 4 w\ncr3w 0x2000\nmark iteration\n"
  "intr 236\nexc 14 0x6\nexc 6\npause\nwbinvd\nrdtsc\nrdpmc 0x1\napic w 0xb0 0\napic w 0x300 0x100000000000000\nhlt +50\n"
  "vcpu 1\nrun 1200\ncr3w 0x3000\ntouch 0x600000 3 w\nmark iteration\nvcpu 0\ncr3w 0x1000\nmark iteration\n";

/* The small trace, assembled once; its path. */
static inline const char *fuzz_small_trace(void) {
  static const char *bin;
  if (bin) return bin;
  char err[512];
  const char *txt = fuzz_file((const uint8_t *)fuzz_small_text, sizeof fuzz_small_text - 1, "small.txt");
  bin = fuzz_path("small.bin");
  if (trace_text_assemble(txt, bin, err, sizeof err) != 0) {
    fprintf(stderr, "the harness's own trace does not assemble: %s\n", err);
    abort();
  }
  return bin;
}

/* Replays the small trace: 0, or the exit code; a refusal other than those
** a configuration may cause (usage: a pool too small for the roots; VM entry:
** a control the CPU lacks) is a finding. */
static inline int fuzz_replay(const char *policy, const char *cpu, char *const *sets, int nsets) {
  struct run_spec spec = { .trace = fuzz_small_trace(), .config = { policy, cpu, sets, nsets },
                           .views = { .views = true } };
  struct run_output out;
  memset(&out, 0, sizeof out);
  char err[1024] = "";
  int rc = run_trace(&spec, &out, err, sizeof err);
  if (rc != 0 && rc != EXIT_VMENTRY && !(rc == EXIT_USAGE && strstr(err, "is too small for"))) {
    fprintf(stderr, "replay under policy '%s' cpu '%s' failed with %d: %s\n", policy, cpu ? cpu : "", rc, err);
    abort();
  }
  if (rc == 0 && out.rep.events != out.trace_events) {     /* the small trace has no measured exits */
    fprintf(stderr, "replayed %llu of %llu events\n", (unsigned long long)out.rep.events,
            (unsigned long long)out.trace_events);
    abort();
  }
  run_output_free(&out);
  return rc;
}

#endif
