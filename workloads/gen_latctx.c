/* lmbench lat_ctx: a ring of processes passing a token through pipes (also the ring the debug generator reuses). */
#include "gen_latctx.h"
#include "kpages.h"

#include <stdio.h>
#include <string.h>
#include "sim/base/util.h"

/*
** Native lat_ctx on the 2007 Core 2 (kvm-devel thread "mmu optimizations
** branch", January 2007; docs/sources.md, "Workload facts"), microseconds per
** switch at 2, 20 and 50 processes, with -s 0 and -s 1000.
*/
static const double anchor_procs[3] = { 2, 20, 50 };
static const double anchor_us_s0[3] = { 2.02, 4.04, 4.30 };
static const double anchor_us_s1000[3] = { 150.5, 216.6, 218.1 };

static const char *const latctx_sources[] = {
  "lmbench lat_ctx native, 2007 Core 2 (kvm-devel 'mmu optimizations branch', 2007-01): "
  "2/20/50 procs 2.02/4.04/4.30 us with -s 0, 150.5/216.6/218.1 us with -s 1000",
  "lmbench lat_ctx loop: read token, bread(KB buffer), write to the next pipe "
  "(lmbench 3.0-a9 src/lat_ctx.c)",
  "Linux context switch: switch_mm to a different mm does 1 CR3 write "
  "(Linux arch/x86/mm/tlb.c switch_mm_irqs_off)",
  NULL,
};

static const char tick_source[] =
  "the guest's PIT tick, IRQ 0 through the 8259 handled as a level interrupt (Linux 2.6.18 "
  "kernel/irq/chip.c handle_level_irq): mask_and_ack_8259A() reads the master IMR and writes it and a "
  "specific EOI, enable_8259A_irq() writes the IMR again (arch/i386/kernel/i8259.c); the tick's native "
  "handler time is left in the anchors, since the native lat_ctx ran with the host's own tick";

/* Percent of the fixed (-s 0) part of a pass given to each run; the rest goes
** to the read() return.  An estimate: no source splits lat_ctx's time. */
enum { SHARE_BREAD = 5, SHARE_WRITE = 35, SHARE_SWITCH = 40 };

double latctx_native_us(uint64_t procs, uint64_t size_kb) {
  double t0 = gen_interp(anchor_procs, anchor_us_s0, 3, (double)procs);
  double t1 = gen_interp(anchor_procs, anchor_us_s1000, 3, (double)procs);
  return t0 + (t1 - t0) * (double)size_kb / 1000.0;
}

void latctx_defaults(struct latctx_opts *o) {
  memset(o, 0, sizeof *o);
  o->vcpus = 1;
  o->seed = 1;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
  o->native_scale = 1.0;
  o->tick_stretch = 1.0;
}

/* ---- the ring ---- */

void ring_init(struct ring *r, struct gen *g, unsigned paging, unsigned procs, uint64_t size_kb,
               double native_us, double size_us, double ghz) {
  memset(r, 0, sizeof *r);
  r->g = g;
  gen_layout_init(&r->layout, paging);
  r->procs = procs;
  /* lmbench's bread() sums KB x 1024 bytes of a malloc'd buffer: the pages
  ** that range spans after malloc's header (251 for -s 1000 on i386). */
  uint64_t bytes = size_kb * 1024;
  r->buf_addr = gen_buffer_addr(&r->layout, bytes);
  r->buf_pages = bytes ? ((r->buf_addr + bytes - 1) >> 12) - (r->buf_addr >> 12) + 1 : 0;
  uint64_t total = gen_us_to_cycles(native_us, ghz);
  uint64_t bread = gen_us_to_cycles(size_us, ghz);
  uint64_t fixed = total > bread ? total - bread : 0;
  r->run[0] = fixed * SHARE_BREAD / 100 + (total - fixed);
  r->run[1] = fixed * SHARE_WRITE / 100;
  r->run[2] = fixed * SHARE_SWITCH / 100;
  r->run[3] = fixed - fixed * SHARE_BREAD / 100 - r->run[1] - r->run[2];
  r->label = gen_label_make("switch");
  r->vcpus = 1;
  r->mm[0] = gen_cr3(0);
}

/* One timer tick of a 2.6.18 i386 guest without an I/O APIC: IRQ 0 arrives
** from the PIT (the hypervisor's timer), do_IRQ runs handle_level_irq, which
** masks and acknowledges the line at the 8259 (an IMR read the code calls a
** dummy, the IMR written, a specific EOI), runs timer_interrupt and unmasks
** the line; IRET.  Its native time is in the anchors, so it adds none. */
static void tick(struct ring *r, unsigned c) {
  struct gen *g = r->g;
  const unsigned byte = 1u << 1, out = IO_AUX_OUT | byte;
  gen_ev(g, c, EV_VIRQ, VIRQ_SRC_TIMER, TICK_VECTOR, 0, 0);
  gen_ev(g, c, EV_IO, byte, PIC_MASTER_IMR, 0, 0);
  gen_ev(g, c, EV_IO, out, PIC_MASTER_IMR, 0, 0);
  gen_ev(g, c, EV_IO, out, PIC_MASTER_CMD, 0, 0);
  gen_ev(g, c, EV_IO, out, PIC_MASTER_IMR, 0, 0);
  gen_ev(g, c, EV_IRET, 0, 0, 0, 0);
  r->ticks++;
}

/* The guest runs natively for `cycles`, taking the ticks that fall in that
** time where they fall. */
static void ring_run(struct ring *r, unsigned c, uint64_t cycles) {
  while (r->tick_period && r->now + cycles >= r->next_tick) {
    uint64_t before = r->next_tick - r->now;
    gen_run(r->g, c, before);
    tick(r, c);
    r->now += before;
    cycles -= before;
    r->next_tick += r->tick_period;
  }
  gen_run(r->g, c, cycles);
  r->now += cycles;
}

/* Scales the pass's runs by a factor drawn uniformly from [1-j%, 1+j%]. */
static void jittered(struct ring *r, uint64_t out[4]) {
  int64_t span = (int64_t)r->jitter * 10000;                 /* parts per million */
  int64_t ppm = (int64_t)(gen_random(&r->rng) % (uint64_t)(2 * span + 1)) - span;
  for (int k = 0; k < 4; k++) out[k] = (uint64_t)((int64_t)r->run[k] + (int64_t)r->run[k] * ppm / 1000000);
}

/* switch_mm() on vCPU c to process p: one CR3 write unless c still has p's
** address space loaded (after an idle period the vCPU keeps the last one). */
static void switch_to(struct ring *r, unsigned c, unsigned p) {
  if (r->mm[c] == gen_cr3(p)) return;
  gen_cr3w(r->g, c, gen_cr3(p));
  r->mm[c] = gen_cr3(p);
}

/* try_to_wake_up() of a task whose CPU is another vCPU: the reschedule IPI
** (2.6.24 x86-64: apic_wait_icr_idle() reads the ICR, then ICR2 and ICR are
** written), sent through the local APIC. */
static void send_ipi(struct gen *g, unsigned from, unsigned to) {
  gen_ev(g, from, EV_APIC, 0, APIC_ICR, 0, 0);
  gen_ev(g, from, EV_APIC, APIC_AUX_WRITE, APIC_ICR + 0x10, (uint64_t)to << 24, 0);
  gen_ev(g, from, EV_APIC, APIC_AUX_WRITE, APIC_ICR, (uint64_t)to << 56 | 0xfd, 0);
}

/* Process i, holding the token in user mode, passes it to j = i+1 and the
** pass ends with j back in user mode holding it.  Pipe j carries the token
** into process j.  The kernel pages of each step are the touch sets of
** kpages.h (workloads/README.md, "Touch sets").  When the wake-up crosses,
** j runs on the next vCPU, which was idle in HLT: i's vCPU sends an IPI and
** halts once i sleeps; j's vCPU takes the interrupt and signals its EOI. */
static void ring_pass(struct ring *r, unsigned i, const uint64_t run[4], bool cross) {
  struct gen *g = r->g;
  const struct gen_layout *l = &r->layout;
  unsigned j = i + 1 == r->procs ? 0 : i + 1, c = r->cpu, cj = cross ? (c + 1) % r->vcpus : c;
  /* the loop and bread(): sums i's buffer */
  gen_touch_user_loop(g, c, l);
  gen_touch(g, c, r->buf_addr & ~0xfffull, r->buf_pages, false);
  ring_run(r, c, run[0]);
  /* write(pipe j): pipe_write() stores the token and wakes j */
  gen_ev(g, c, EV_SYSCALL, 0, l->nr_write, 0, 0);
  kpages_touch(g, c, l, KP_SYSCALL | KP_FILE_IO, i, 0, true);
  kpages_touch(g, c, l, KP_PIPE, i, j, true);
  kpages_touch(g, c, l, KP_WAKE | KG(TASK), j, 0, true);
  ring_run(r, c, run[1]);
  gen_ev(g, c, EV_SYSRET, 0, 0, 0, 0);
  /* read(pipe i): empty, so pipe_wait() sleeps and schedule() switches away */
  gen_ev(g, c, EV_SYSCALL, 0, l->nr_read, 0, 0);
  kpages_touch(g, c, l, KP_SYSCALL | KG(VFS_TEXT) | KG(LSM_TEXT) | KG(FILES) | KG(TASK_SEC), i, 0, true);
  kpages_touch(g, c, l, KP_PIPE & ~KG(PIPE_PAGE), i, i, true);
  kpages_touch(g, c, l, KP_SLEEP, i, 0, true);
  if (cross) {
    /* The IPI goes out inside write(); it is placed after the waker's work so
    ** that the whole pass stays on the critical path, as the native anchor
    ** (a serial time per pass) assumes. */
    ring_run(r, c, run[2]);
    send_ipi(g, c, cj);
    gen_ev(g, c, EV_HLT, 0, 0, 0, 0);                   /* the idle task: nothing else to run */
    gen_ev(g, cj, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0, 0);   /* the reschedule interrupt */
    kpages_touch(g, cj, l, KP_SLEEP, j, 0, true);       /* schedule() from idle */
  }
  kpages_touch(g, cj, l, KP_NEXT_TASK, j, 0, true);
  if (!cross) ring_run(r, c, run[2]);
  switch_to(r, cj, j);
  if (r->on_switch) r->on_switch(r, i, j);
  /* j's read() returns: pipe_read() copies the token to j's stack */
  kpages_touch(g, cj, l, KP_SYSCALL | KP_FILE_IO, j, 0, true);
  kpages_touch(g, cj, l, KP_PIPE, j, j, true);
  gen_touch(g, cj, l->user_stack, 1, true);
  ring_run(r, cj, run[3]);
  gen_ev(g, cj, EV_SYSRET, 0, 0, 0, 0);
  gen_mark(g, cj, r->label);
  r->cpu = cj;
}

void ring_emit(struct ring *r, uint64_t iters) {
  uint64_t run[4];
  memcpy(run, r->run, sizeof run);
  for (unsigned c = 1; c < r->vcpus; c++) gen_ev(r->g, c, EV_HLT, 0, 0, 0, 0);   /* idle vCPUs wait */
  for (uint64_t it = 0; it < iters && r->g->rc == EXIT_OK; it++)
    for (unsigned i = 0; i < r->procs; i++) {
      if (r->jitter) jittered(r, run);
      bool cross = r->cross_ppm && gen_random(&r->rng) % 1000000 < r->cross_ppm;
      ring_pass(r, i, run, cross);
    }
}

/* ---- lat_ctx ---- */

static bool check_scale(char *err, size_t errlen, double scale) {
  if (scale > 0 && scale <= 100) return true;
  gen_errf(err, errlen, "--native-scale must be above 0 and at most 100 (got %g)", scale);
  return false;
}

static bool check_cross(char *err, size_t errlen, const struct latctx_opts *o) {
  if (!(o->cross >= 0 && o->cross <= 100)) {
    gen_errf(err, errlen, "--cross must be between 0 and 100 (got %g)", o->cross);
    return false;
  }
  if (o->cross > 0 && o->vcpus < 2) {
    gen_errf(err, errlen, "--cross needs another vCPU to wake the process on (--vcpus 2 or more)");
    return false;
  }
  return true;
}

/* Native cycles between two ticks: a tick comes every 1/HZ s of the time the
** guest takes under the hypervisor, which is tick_stretch times its native time. */
static uint64_t tick_period(const struct latctx_opts *o) {
  return (uint64_t)((double)gen_us_to_cycles(1e6 / (double)o->hz, o->cpu_ghz) / o->tick_stretch);
}

/* The ticks are those of a uniprocessor guest's PIT through the 8259: one
** vCPU, whose guest time is the ring's. */
static bool check_hz(char *err, size_t errlen, const struct latctx_opts *o) {
  if (!gen_check_range(err, errlen, "--hz", o->hz, 0, LATCTX_HZ_MAX)) return false;
  if (o->hz && o->vcpus > 1) {
    gen_errf(err, errlen, "--hz models a uniprocessor guest's tick through the 8259: it needs --vcpus 1 (got %llu)",
             (unsigned long long)o->vcpus);
    return false;
  }
  if (!(o->tick_stretch >= 1 && o->tick_stretch <= 10000)) {
    gen_errf(err, errlen, "--tick-stretch must be at least 1 and at most 10000 (got %g)", o->tick_stretch);
    return false;
  }
  if (o->hz && tick_period(o) == 0) {
    gen_errf(err, errlen, "--hz %llu at --cpu-ghz %g leaves no cycle between two ticks",
             (unsigned long long)o->hz, o->cpu_ghz);
    return false;
  }
  return true;
}

static bool latctx_valid(const struct latctx_opts *o, char *err, size_t errlen) {
  return gen_check_range(err, errlen, "--procs", o->procs, 2, GEN_TASKS_MAX) &&
         gen_check_range(err, errlen, "--size", o->size, 0, LATCTX_SIZE_MAX) &&
         gen_check_range(err, errlen, "--iters", o->iters, 1, (1ull << 40) / o->procs) &&
         gen_check_range(err, errlen, "--vcpus", o->vcpus, 1, TRACE_VCPU_MAX) &&
         gen_check_range(err, errlen, "--seed", o->seed, 0, 0xffffffffu) &&
         gen_check_range(err, errlen, "--jitter", o->jitter, 0, 50) && check_cross(err, errlen, o) &&
         gen_check_paging(err, errlen, o->paging) && gen_check_ghz(err, errlen, o->cpu_ghz) &&
         check_scale(err, errlen, o->native_scale) && check_hz(err, errlen, o);
}

static cJSON *latctx_meta(const struct latctx_opts *o, double us) {
  cJSON *m = gen_meta_new("lat_ctx", LATCTX_MODEL_VERSION);
  gen_meta_num(m, "procs", (double)o->procs);
  gen_meta_num(m, "size", (double)o->size);
  gen_meta_num(m, "iters", (double)o->iters);
  gen_meta_num(m, "vcpus", (double)o->vcpus);
  gen_meta_num(m, "seed", (double)o->seed);
  gen_meta_num(m, "jitter", (double)o->jitter);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  /* recorded only when used, so traces made without it stay byte-identical */
  if (o->native_scale != 1.0) gen_meta_num(m, "native_scale", o->native_scale);
  gen_meta_num(m, "native_us_per_switch", us);
  gen_meta_num(m, "native_cycles_per_switch", (double)gen_us_to_cycles(us, o->cpu_ghz));
  struct gen_layout l;
  gen_layout_init(&l, o->paging);
  uint64_t set = KP_SYSCALL | KP_FILE_IO | KP_PIPE | KP_WAKE | KP_SLEEP | KP_NEXT_TASK, bytes = (uint64_t)o->size * 1024;
  kpages_meta(m, &l, set, 0);
  kpages_page_tables_meta(m, &l, set, (unsigned)o->procs, (unsigned)o->procs, gen_buffer_addr(&l, bytes), bytes);
  if (o->cross > 0) gen_meta_num(m, "cross", o->cross);
  if (o->hz) {                     /* recorded only when used, as native_scale */
    gen_meta_num(m, "hz", (double)o->hz);
    gen_meta_num(m, "tick_stretch", o->tick_stretch);
    gen_meta_num(m, "native_cycles_per_tick", (double)tick_period(o));
    gen_meta_num(m, "port_accesses_per_tick", TICK_PORT_ACCESSES);
    gen_meta_str(m, "ticks_source", tick_source);
  }
  gen_meta_str(m, "placement", o->cross > 0 ? "the ring starts on vCPU 0; a crossing wake-up runs the woken process "
               "on the next vCPU (reschedule IPI, the waker's vCPU halts)" : "the whole ring on vCPU 0 (wake-affine pipe wakeups)");
  gen_meta_str(m, "interpolation", "linear in procs through 2, 20, 50 (held outside); "
               "linear in size through 0 and 1000 KB (extrapolated above)");
  gen_meta_sources(m, latctx_sources);
  return m;
}

int gen_latctx(const struct latctx_opts *o, const char *path, char *err, size_t errlen) {
  if (!latctx_valid(o, err, errlen)) return EXIT_USAGE;
  double us = latctx_native_us(o->procs, o->size) * o->native_scale;
  double us0 = latctx_native_us(o->procs, 0) * o->native_scale;
  struct gen g;
  if (gen_open(&g, path, "lat_ctx", (unsigned)o->vcpus, o->paging, latctx_meta(o, us), err, errlen))
    return g.rc;
  struct ring r;
  ring_init(&r, &g, o->paging, (unsigned)o->procs, o->size, us, us - us0, o->cpu_ghz);
  r.jitter = (unsigned)o->jitter;
  r.rng = o->seed;
  r.vcpus = (unsigned)o->vcpus;
  r.cross_ppm = (uint64_t)(o->cross * 10000 + 0.5);
  for (unsigned c = 0; c < r.vcpus; c++) r.mm[c] = gen_cr3(0);
  if (o->hz) r.tick_period = r.next_tick = tick_period(o);
  gen_init_vcpus(&g, &r.layout, (unsigned)o->vcpus, gen_cr3(0));
  ring_emit(&r, o->iters);
  return gen_close(&g);
}

const char latctx_usage[] =
  "usage: vmxsim gen lat_ctx --procs N [--size KB] --iters I [--vcpus V] [--cross PCT] [--seed S]\n"
  "                          [--jitter PCT] [--paging 32|pae|64] [--cpu-ghz GHZ]\n"
  "                          [--native-scale F] [--hz N [--tick-stretch F]] -o TRACE\n"
  "\n"
  "lmbench's lat_ctx: N processes in a ring of pipes pass a token; each pass reads\n"
  "the token, sums the process's KB buffer, writes the token to the next pipe and\n"
  "switches to the next process (one CR3 write). One 'mark switch' per pass;\n"
  "native time per pass interpolates the 2007 Core 2 anchors (workloads/README.md).\n"
  "\n"
  "  --procs N       processes in the ring (2..4096)\n"
  "  --size KB       buffer each process sums per pass (0..1048576, default 0)\n"
  "  --iters I       trips around the ring: the trace has I x N switches (1..2^40/N)\n"
  "  --vcpus V       vCPUs in the guest (1..256, default 1); the ring starts on vCPU 0\n"
  "  --cross PCT     share of wake-ups that run the woken process on the next vCPU\n"
  "                  (reschedule IPI; the waker's vCPU halts), 0..100, default 0\n"
  "  --seed S        seed for --jitter and --cross (0..0xffffffff, default 1)\n"
  "  --jitter PCT    vary each pass's native time by up to +-PCT% (0..50, default 0)\n"
  "  --paging MODE   guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ   clock converting microseconds to cycles (above 0, at most 10;\n"
  "                  default 2.4)\n"
  "  --native-scale F  multiply the 2007 native anchors by F, for a machine whose\n"
  "                  native 2-process time is known (2008: 5.2 / 2.02 = 2.574);\n"
  "                  above 0, at most 100 (default 1)\n"
  "  --hz N          the guest's timer ticks per second, 0..10000 (default 0: none):\n"
  "                  IRQ 0 through the 8259 at every 1/N s of guest time, each a\n"
  "                  timer interrupt and 4 port accesses (Linux 2.6.18 i386); --vcpus 1\n"
  "  --tick-stretch F  the replayed run's time per native time (1..10000, default 1):\n"
  "                  the ticks follow the guest's clock, so a run the hypervisor makes\n"
  "                  F times slower than native takes F times as many per switch\n"
  "  -o, --output F  the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen lat_ctx --procs 2 --size 0 --iters 1000 -o lat_ctx.bin\n";

int gen_latctx_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct latctx_opts o;
  latctx_defaults(&o);
  const struct gen_opt opts[] = {
    { "--procs", NULL, GO_UINT, &o.procs, NULL, true },
    { "--size", NULL, GO_UINT, &o.size, NULL, false },
    { "--iters", NULL, GO_UINT, &o.iters, NULL, true },
    { "--vcpus", NULL, GO_UINT, &o.vcpus, NULL, false },
    { "--seed", NULL, GO_UINT, &o.seed, NULL, false },
    { "--jitter", NULL, GO_UINT, &o.jitter, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { "--native-scale", NULL, GO_DOUBLE, &o.native_scale, NULL, false },
    { "--cross", NULL, GO_DOUBLE, &o.cross, NULL, false },
    { "--hz", NULL, GO_UINT, &o.hz, NULL, false },
    { "--tick-stretch", NULL, GO_DOUBLE, &o.tick_stretch, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_latctx(&o, out, err, errlen);
}
