/* lmbench lat_ctx: a ring of processes passing a token through pipes (also the ring the debug generator reuses). */
#ifndef VMXSIM_GEN_LATCTX_H
#define VMXSIM_GEN_LATCTX_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define LATCTX_MODEL_VERSION 3   /* 3: pids from 2816 on have their CR3 below 3 GiB (gen_cr3) */
#define LATCTX_SIZE_MAX      (1024u * 1024u)   /* KB: 1 GiB keeps every run under 2^32 cycles */

struct latctx_opts {
  uint64_t procs;        /* --procs N: processes in the ring, 2..GEN_TASKS_MAX */
  uint64_t size;         /* --size KB: each process's buffer, summed on every pass */
  uint64_t iters;        /* --iters I: trips of the token around the ring */
  uint64_t vcpus;        /* --vcpus V: vCPUs of the guest; the ring starts on vCPU 0, the others idle */
  double cross;          /* --cross PCT: share of wake-ups that run the woken process on another vCPU */
  uint64_t seed;         /* --seed S: drives --jitter only */
  uint64_t jitter;       /* --jitter PCT: per-pass native time varies +-PCT% (mean kept) */
  unsigned paging;       /* --paging 32|pae|64 (enum paging_mode) */
  double cpu_ghz;        /* --cpu-ghz: converts the microsecond anchors to cycles */
  double native_scale;   /* --native-scale: multiplies the anchors (another machine's native time) */
  uint64_t hz;           /* --hz N: the guest's periodic timer ticks per second (0: none) */
  double tick_stretch;   /* --tick-stretch F: the replayed run's time per native time, which ticks follow */
};

void latctx_defaults(struct latctx_opts *o);
/* Writes the trace to path.  Returns 0 or an enum exit_code; the message goes to err. */
int gen_latctx(const struct latctx_opts *o, const char *path, char *err, size_t errlen);
/* Native microseconds per switch for N processes and a KB buffer (the interpolated anchors). */
double latctx_native_us(uint64_t procs, uint64_t size_kb);
/* `vmxsim gen lat_ctx` with the options argv[1..] (usage: latctx_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_latctx_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char latctx_usage[];

/*
** The ring itself, shared with the debug generator: one pass hands the token
** from process i to process i+1 (see workloads/README.md for the events).
*/
struct ring;
typedef void (*ring_switch_fn)(struct ring *r, unsigned prev, unsigned next);

struct ring {
  struct gen *g;
  struct gen_layout layout;
  unsigned procs;
  uint64_t buf_addr;         /* lat_ctx's buffer: first byte */
  uint64_t buf_pages;        /* pages it spans, summed per pass */
  uint64_t run[4];           /* native cycles: bread, write(), read()+switch, read() return */
  unsigned jitter;           /* percent */
  uint64_t rng;
  struct gen_label label;
  ring_switch_fn on_switch;  /* after switch_mm: __switch_to's extra work (debug registers) */
  void *ctx;
  unsigned vcpus;            /* the guest's vCPUs; the ring runs on `cpu` */
  unsigned cpu;
  uint64_t cross_ppm;        /* wake-ups that cross to the next vCPU, per million */
  uint64_t mm[TRACE_VCPU_MAX];   /* the address space each vCPU has loaded (lazy TLB keeps it when idle) */
  uint64_t tick_period;      /* native cycles between two timer ticks (0: no ticks) */
  uint64_t now;              /* native cycles the ring has run so far (its one vCPU's guest time) */
  uint64_t next_tick;        /* guest time of the next tick */
  uint64_t ticks;            /* ticks emitted */
};

/* Fills r for a ring of procs processes whose passes take native_us each,
** size_us of which is spent summing the buffer. */
void ring_init(struct ring *r, struct gen *g, unsigned paging, unsigned procs, uint64_t size_kb,
               double native_us, double size_us, double ghz);
/* Emits iters trips around the ring (iters * procs passes) on vCPU 0. */
void ring_emit(struct ring *r, uint64_t iters);

/* The 8259 ports a tick's handler accesses (Linux 2.6.18 include/asm-i386/i8259.h). */
#define PIC_MASTER_CMD   0x20u
#define PIC_MASTER_IMR   0x21u
#define TICK_PORT_ACCESSES 4u      /* mask_and_ack_8259A: inb, outb, outb; enable_8259A_irq: outb */
#define TICK_VECTOR      0x20u     /* IRQ 0 through the 8259: FIRST_EXTERNAL_VECTOR + 0 (i386) */
#define LATCTX_HZ_MAX    10000u

#endif
