/* A CPUID loop: the lightweight exit of the kvm-unit-tests vmexit benchmark. */
#include "gen_cpuid.h"

#include <string.h>
#include "sim/base/util.h"

static const char *const cpuid_sources[] = {
  "kvm-unit-tests x86/vmexit.c 'cpuid' test: CPUID in a tight loop, the usual lightweight-exit benchmark "
  "(as in W. Li, kvm list 2019-06-12)",
  "--work default: the loop's own instructions, an estimate",
  NULL,
};

void cpuid_defaults(struct cpuid_opts *o) {
  memset(o, 0, sizeof *o);
  o->work = 20;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

static cJSON *cpuid_meta(const struct cpuid_opts *o) {
  cJSON *m = gen_meta_new("cpuid", CPUID_MODEL_VERSION);
  gen_meta_num(m, "count", (double)o->count);
  gen_meta_num(m, "leaf", (double)o->leaf);
  gen_meta_num(m, "work", (double)o->work);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  gen_meta_sources(m, cpuid_sources);
  return m;
}

int gen_cpuid(const struct cpuid_opts *o, const char *path, char *err, size_t errlen) {
  if (!gen_check_range(err, errlen, "--count", o->count, 1, 1ull << 40) ||
      !gen_check_range(err, errlen, "--leaf", o->leaf, 0, UINT32_MAX) ||
      !gen_check_range(err, errlen, "--work", o->work, 0, UINT32_MAX) ||
      !gen_check_paging(err, errlen, o->paging) || !gen_check_ghz(err, errlen, o->cpu_ghz))
    return EXIT_USAGE;
  struct gen_layout l;
  gen_layout_init(&l, o->paging);
  struct gen g;
  if (gen_open(&g, path, "cpuid", 1, o->paging, cpuid_meta(o), err, errlen)) return g.rc;
  gen_init_vcpus(&g, &l, 1, gen_cr3(0));
  struct gen_label label = gen_label_make("cpuid");
  for (uint64_t i = 0; i < o->count && g.rc == EXIT_OK; i++) {
    gen_run(&g, 0, o->work);
    gen_ev(&g, 0, EV_CPUID, 0, o->leaf, 0, 0);
    gen_mark(&g, 0, label);
  }
  return gen_close(&g);
}

const char cpuid_usage[] =
  "usage: vmxsim gen cpuid --count N [--leaf L] [--work C] [--paging 32|pae|64] [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "CPUID in a tight loop, as the kvm-unit-tests vmexit 'cpuid' test runs it: every\n"
  "iteration is one lightweight exit. One 'mark cpuid' per instruction.\n"
  "\n"
  "  --count N        CPUID instructions (1..2^40)\n"
  "  --leaf L         EAX operand (0..0xffffffff, default 0)\n"
  "  --work C         native guest cycles between them (0..0xffffffff, default 20)\n"
  "  --paging MODE    guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ    recorded in the metadata (above 0, at most 10; default 2.4)\n"
  "  -o, --output F   the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen cpuid --count 100000 -o cpuid.bin\n";

int gen_cpuid_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct cpuid_opts o;
  cpuid_defaults(&o);
  const struct gen_opt opts[] = {
    { "--count", NULL, GO_UINT, &o.count, NULL, true },
    { "--leaf", NULL, GO_UINT, &o.leaf, NULL, false },
    { "--work", NULL, GO_UINT, &o.work, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_cpuid(&o, out, err, errlen);
}
