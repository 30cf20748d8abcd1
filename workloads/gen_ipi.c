/* An IPI round trip between two vCPUs: the kvm-unit-tests vmexit 'ipi' test
** (workloads/README.md, "ipi"). */
#include "gen_ipi.h"

#include <string.h>
#include "gen_interrupts.h"
#include "sim/base/util.h"

/* kvm-unit-tests' IPI_VECTOR (lib/x86/smp.c). */
#define IPI_TEST_VECTOR 0x20u
#define SOURCE 0u
#define TARGET 1u

static const char *const apic_choices[] = { "x2apic", "xapic", NULL };

static const char *const ipi_sources[] = {
  "kvm-unit-tests x86/vmexit.c 'ipi' test: on_cpu(1, nop, 0); lib/x86/smp.c __on_cpu: the ICR write "
  "(fixed, physical, vector 0x20), then a spin until the target's handler sets ipi_done; ipi(): the "
  "function, ipi_done = 1, EOI, IRET; the spin is a wait record: it ends when the handler's store to ipi_done "
  "is seen, two cache lines taken from the source before it (ipi_function/ipi_data/ipi_wait, ipi_done's ownership)",
  "lib/x86/apic.c: xAPIC ICR write = wait while the ICR is busy (a read), ICR2, ICR; x2APIC = one WRMSR 0x830",
  "the target runs (no HLT) between round trips, unlike x86/cstart64.S, whose APs idle in hlt: an assumption; "
  "--handler and --work defaults: estimates",
  NULL,
};

void ipi_defaults(struct ipi_opts *o) {
  memset(o, 0, sizeof *o);
  o->apic = IRQ_APIC_X2APIC;
  o->handler = 200;
  o->work = 20;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

static cJSON *ipi_meta(const struct ipi_opts *o) {
  cJSON *m = gen_meta_new("ipi", IPI_MODEL_VERSION);
  gen_meta_num(m, "count", (double)o->count);
  gen_meta_str(m, "apic", apic_choices[o->apic]);
  gen_meta_num(m, "handler", (double)o->handler);
  gen_meta_num(m, "work", (double)o->work);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  gen_meta_sources(m, ipi_sources);
  return m;
}

/* The source's ICR write, as kvm-unit-tests' apic_icr_write does it. */
static void send(struct gen *g, int apic) {
  if (apic == IRQ_APIC_X2APIC) {
    gen_ev(g, SOURCE, EV_WRMSR, 0, MSR_X2APIC_ICR, (uint64_t)TARGET << 32 | IPI_TEST_VECTOR, 0);
    return;
  }
  gen_ev(g, SOURCE, EV_APIC, 0, APIC_ICR, 0, 0);
  gen_ev(g, SOURCE, EV_APIC, APIC_AUX_WRITE, APIC_ICR_HIGH, (uint64_t)TARGET << 24, 0);
  gen_ev(g, SOURCE, EV_APIC, APIC_AUX_WRITE, APIC_ICR, (uint64_t)TARGET << 56 | IPI_TEST_VECTOR, 0);
}

/* The cache lines the target's handler takes from the source before its store
** to ipi_done: its first read of ipi_function, ipi_data and ipi_wait, which
** the source wrote just before the ICR write, and the ownership of ipi_done's
** line, which the source's spin holds shared (lib/x86/smp.c: ipi(), __on_cpu). */
#define HANDLER_LINES 2u

/* The target's ipi(): the interrupt, the function and ipi_done = 1 (which
** ends the source's spin), the EOI, IRET. */
static void handle(struct gen *g, const struct ipi_opts *o) {
  gen_ev(g, TARGET, EV_VIRQ, VIRQ_SRC_IPI, IPI_TEST_VECTOR, SOURCE, 0);
  gen_run(g, TARGET, o->handler);
  gen_ev(g, SOURCE, EV_WAIT, 0, TARGET, HANDLER_LINES, 0);
  if (o->apic == IRQ_APIC_X2APIC) gen_ev(g, TARGET, EV_WRMSR, 0, MSR_X2APIC_EOI, 0, 0);
  else gen_ev(g, TARGET, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0, 0);
  gen_ev(g, TARGET, EV_IRET, 0, 0, 0, 0);
}

int gen_ipi(const struct ipi_opts *o, const char *path, char *err, size_t errlen) {
  if (!gen_check_range(err, errlen, "--count", o->count, 1, 1ull << 40) ||
      !gen_check_range(err, errlen, "--handler", o->handler, 0, UINT32_MAX) ||
      !gen_check_range(err, errlen, "--work", o->work, 0, UINT32_MAX) ||
      !gen_check_paging(err, errlen, o->paging) || !gen_check_ghz(err, errlen, o->cpu_ghz))
    return EXIT_USAGE;
  struct gen_layout l;
  gen_layout_init(&l, o->paging);
  struct gen g;
  if (gen_open(&g, path, "ipi", 2, o->paging, ipi_meta(o), err, errlen)) return g.rc;
  gen_init_vcpus(&g, &l, 2, gen_cr3(0));
  struct gen_label label = gen_label_make("ipi");
  for (uint64_t i = 0; i < o->count && g.rc == EXIT_OK; i++) {
    gen_run(&g, SOURCE, o->work);
    send(&g, o->apic);
    handle(&g, o);
    gen_mark(&g, SOURCE, label);   /* one round trip */
  }
  return gen_close(&g);
}

const char ipi_usage[] =
  "usage: vmxsim gen ipi --count N [--apic x2apic|xapic] [--handler C] [--work C]\n"
  "                      [--paging 32|pae|64] [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "IPI round trips between two vCPUs, as the kvm-unit-tests vmexit 'ipi' test runs\n"
  "them: vCPU 0 writes the ICR (fixed, physical, vector 0x20, to vCPU 1) and spins\n"
  "until vCPU 1's handler has run, which EOIs and returns. vCPU 1 runs between round\n"
  "trips (no HLT). The spin is a 'wait 1 2' record on vCPU 0 after the handler:\n"
  "the replay times it. One 'mark ipi' per round trip, on vCPU 0.\n"
  "\n"
  "  --count N        round trips (1..2^40)\n"
  "  --apic MODE      x2apic (WRMSR 0x830, 0x80b) or xapic (the APIC page: ICR read,\n"
  "                   ICR2 and ICR writes, EOI write) (default x2apic)\n"
  "  --handler C      vCPU 1's native cycles from the interrupt to its EOI (0..0xffffffff, default 200)\n"
  "  --work C         vCPU 0's native cycles between round trips (0..0xffffffff, default 20)\n"
  "  --paging MODE    guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ    recorded in the metadata (above 0, at most 10; default 2.4)\n"
  "  -o, --output F   the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen ipi --count 10000 --apic xapic -o ipi.bin\n";

int gen_ipi_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct ipi_opts o;
  ipi_defaults(&o);
  const struct gen_opt opts[] = {
    { "--count", NULL, GO_UINT, &o.count, NULL, true },
    { "--apic", NULL, GO_CHOICE, &o.apic, apic_choices, false },
    { "--handler", NULL, GO_UINT, &o.handler, NULL, false },
    { "--work", NULL, GO_UINT, &o.work, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_ipi(&o, out, err, errlen);
}
