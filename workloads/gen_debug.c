/* Processes under a debugger: the lat_ctx ring, with debug registers loaded on every switch into a debugged process. */
#include "gen_debug.h"

#include <string.h>
#include "gen_latctx.h"
#include "sim/base/util.h"

static const char *const debug_sources[] = {
  "lmbench lat_ctx native, 2007 Core 2, -s 0 (kvm-devel 'mmu optimizations branch', 2007-01): "
  "2/20/50 procs 2.02/4.04/4.30 us per switch",
  "Linux __switch_to_xtra(): a task with TIF_DEBUG gets its DR0-3 and DR7 loaded "
  "when switched in (arch/x86/kernel/process.c, 2.6 era)",
  NULL,
};

void debug_defaults(struct debug_opts *o) {
  memset(o, 0, sizeof *o);
  o->debugged = 1;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

/* __switch_to_xtra(): load the next task's breakpoints, or disarm DR7 when
** leaving a debugged task for one that has none. */
static void switch_debugregs(struct ring *r, unsigned prev, unsigned next) {
  unsigned debugged = *(const unsigned *)r->ctx;
  if (next < debugged) {
    for (unsigned dr = 0; dr < 4; dr++)
      gen_ev(r->g, 0, EV_DR_WRITE, dr, r->layout.user_code + 0x100 * dr, 0, 0);
    gen_ev(r->g, 0, EV_DR_WRITE, 7, DEBUG_DR7_ARMED, 0, 0);
  } else if (prev < debugged) {
    gen_ev(r->g, 0, EV_DR_WRITE, 7, 0, 0, 0);
  }
}

static cJSON *debug_meta(const struct debug_opts *o, double us) {
  cJSON *m = gen_meta_new("debug", DEBUG_MODEL_VERSION);
  gen_meta_num(m, "procs", (double)o->procs);
  gen_meta_num(m, "iters", (double)o->iters);
  gen_meta_num(m, "debugged", (double)o->debugged);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  gen_meta_num(m, "native_us_per_switch", us);
  gen_meta_num(m, "native_cycles_per_switch", (double)gen_us_to_cycles(us, o->cpu_ghz));
  gen_meta_sources(m, debug_sources);
  return m;
}

int gen_debug(const struct debug_opts *o, const char *path, char *err, size_t errlen) {
  if (!gen_check_range(err, errlen, "--procs", o->procs, 2, GEN_TASKS_MAX) ||
      !gen_check_range(err, errlen, "--iters", o->iters, 1, (1ull << 40) / o->procs) ||
      !gen_check_range(err, errlen, "--debugged", o->debugged, 0, o->procs) ||
      !gen_check_paging(err, errlen, o->paging) || !gen_check_ghz(err, errlen, o->cpu_ghz))
    return EXIT_USAGE;
  double us = latctx_native_us(o->procs, 0);
  struct gen g;
  if (gen_open(&g, path, "debug", 1, o->paging, debug_meta(o, us), err, errlen)) return g.rc;
  struct ring r;
  unsigned debugged = (unsigned)o->debugged;
  ring_init(&r, &g, o->paging, (unsigned)o->procs, 0, us, 0, o->cpu_ghz);
  r.on_switch = switch_debugregs;
  r.ctx = &debugged;
  gen_init_vcpus(&g, &r.layout, 1, gen_cr3(0));
  /* The vCPU starts with DR7 clear (@init holds no debug registers), so a
  ** debugged process 0 first loads its breakpoints, as its switch-in just
  ** before the trace would have; these writes precede the first mark. */
  if (debugged) switch_debugregs(&r, (unsigned)o->procs, 0);
  ring_emit(&r, o->iters);
  return gen_close(&g);
}

const char debug_usage[] =
  "usage: vmxsim gen debug --procs N --iters I [--debugged D] [--paging 32|pae|64]\n"
  "                        [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "Processes under a debugger: lat_ctx's ring of N processes (-s 0), where processes\n"
  "0..D-1 have hardware breakpoints. A switch into a debugged process writes DR0-3\n"
  "and DR7; a switch from a debugged process to an undebugged one clears DR7.\n"
  "One 'mark switch' per switch.\n"
  "\n"
  "  --procs N       processes in the ring (2..4096)\n"
  "  --iters I       trips around the ring: the trace has I x N switches (1..2^40/N)\n"
  "  --debugged D    how many processes are debugged (0..N, default 1)\n"
  "  --paging MODE   guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ   clock converting microseconds to cycles (above 0, at most 10;\n"
  "                  default 2.4)\n"
  "  -o, --output F  the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen debug --procs 2 --iters 1000 -o debug.bin\n";

int gen_debug_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct debug_opts o;
  debug_defaults(&o);
  const struct gen_opt opts[] = {
    { "--procs", NULL, GO_UINT, &o.procs, NULL, true },
    { "--iters", NULL, GO_UINT, &o.iters, NULL, true },
    { "--debugged", NULL, GO_UINT, &o.debugged, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_debug(&o, out, err, errlen);
}
