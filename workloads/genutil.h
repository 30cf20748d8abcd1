/* Shared machinery of the workload generators: option parsing, the guest address layout, metadata and fast event emission. */
#ifndef VMXSIM_GENUTIL_H
#define VMXSIM_GENUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cJSON.h>
#include "models/event.h"
#include "sim/base/outfile.h"
#include "sim/trace/trace.h"
#include "sim/base/util.h"

/*
** Errors (docs/architecture.md, "Errors"): every gen_* function that can fail
** returns 0 or an enum exit_code, with the message in the caller's err
** buffer: EXIT_USAGE when a parameter is out of range or an option is wrong
** (the message names the option as the command line spells it),
** EXIT_BADINPUT when the output cannot be written.  Nothing here prints.
*/

/* Every generator caps its task count so that the direct-map regions below
** never overlap and 32-bit CR3 values stay below 4 GiB. */
#define GEN_TASKS_MAX    4096u
#define GEN_DEFAULT_GHZ  2.4

/* ---- guest address layout (workloads/README.md, "Address-space conventions") ---- */

/* Kernel text pages (offsets from the kernel text base), one per code path. */
enum gen_ktext {
  KTEXT_ENTRY = 0x000000,   /* system call entry/exit (arch/x86/entry) */
  KTEXT_MM    = 0x040000,   /* TLB flushing (arch/x86/mm/tlb.c) */
  KTEXT_SCHED = 0x080000,   /* schedule(), try_to_wake_up(), context_switch() */
  KTEXT_PIPE  = 0x200000,   /* fs/pipe.c: pipe_read(), pipe_write() */
  KTEXT_UNIX  = 0x600000,   /* net/unix/af_unix.c and skb handling */
};

/* One run of pages a loop touches: its start, length and whether it is written. */
struct gen_span { uint64_t va; unsigned pages; bool write; };
#define GEN_USER_SPANS_MAX 8

struct gen_layout {
  unsigned paging;          /* enum paging_mode */
  uint64_t user_code;       /* the workload's loop */
  uint64_t user_data;       /* small buffers (malloc'd from the heap): hackbench's message */
  uint64_t user_stack;      /* the page holding the loop's locals */
  uint64_t user_pdata;      /* the program's data: GOT, globals (the pipe descriptors...) */
  uint64_t libc_text;       /* two pages of libc text: read()/write() wrappers, the PIC thunk */
  uint64_t libc_data;       /* libc's GOT and data */
  uint64_t tls;             /* the thread control block (glibc's SINGLE_THREAD_P test) */
  uint64_t vdso;            /* the system-call gate page (i386 __kernel_vsyscall); 0: none used */
  uint64_t mmap_buf;        /* a large malloc'd buffer (mmap'd, below the TLS) */
  unsigned malloc_header;   /* bytes of malloc's chunk header before a buffer */
  uint64_t ktext;           /* kernel text base */
  uint64_t entry_area;      /* PTI's cpu_entry_area: entry code mapped in the user tables too */
  uint64_t kdirect;         /* kernel direct map base */
  uint64_t nr_read, nr_write, nr_getppid, nr_exit_group;   /* system call numbers */
  uint64_t cr0, cr4;        /* initial control registers */
  /* the user pages a system-call loop touches per iteration besides its buffers, in order
  ** (gen_touch_user_loop touches them; the touch-set metadata counts them) */
  struct gen_span user_loop[GEN_USER_SPANS_MAX];
  unsigned nuser_loop;
};

struct gen;
void gen_layout_init(struct gen_layout *l, unsigned paging);
/* The user pages a system-call loop touches per iteration besides its buffers:
** program text and data, libc text and data, TLS, stack and the system-call
** gate (workloads/README.md, "Touch sets"). */
void gen_touch_user_loop(struct gen *g, unsigned vcpu, const struct gen_layout *l);
unsigned gen_user_loop_pages(const struct gen_layout *l);
/* Where a malloc'd buffer of `bytes` starts: the heap below glibc's mmap
** threshold (128 KB), else its own mapping; after malloc's header. */
uint64_t gen_buffer_addr(const struct gen_layout *l, uint64_t bytes);

/* Distinct, page-aligned, never reused: one address space per pid, its page
** directory in guest RAM below 3 GiB whatever the paging mode (a 32-bit
** guest's CR3 holds a 32-bit address, and a PC guest's PCI hole, from 3 GiB,
** holds no RAM): 1 MiB apart from 256 MiB for the first GEN_CR3_SPREAD pids,
** then 64 KiB apart from 128 MiB. */
#define GEN_CR3_SPREAD 2816u
static inline uint64_t gen_cr3(unsigned pid) {
  return pid < GEN_CR3_SPREAD ? 0x10000000ull + (uint64_t)pid * 0x100000
                              : 0x08000000ull + (uint64_t)(pid - GEN_CR3_SPREAD) * 0x10000;
}
_Static_assert(0x08000000ull + (uint64_t)(GEN_TASKS_MAX + 1 - GEN_CR3_SPREAD) * 0x10000 <= 0x10000000ull &&
               0x10000000ull + (uint64_t)GEN_CR3_SPREAD * 0x100000 <= 0xc0000000ull,
               "the two ranges of gen_cr3 are apart, and below 3 GiB");
static inline uint64_t gen_ktext(const struct gen_layout *l, enum gen_ktext t) { return l->ktext + t; }
/* ---- writing a trace ---- */

struct gen {
  struct trace_writer w;
  struct outfile out;       /* written atomically: renamed into place by gen_close */
  bool to_stdout;           /* path "-": streamed, the header (count unknown) first */
  int rc;                   /* first failure (enum exit_code); later events are dropped */
  char *err;
  size_t errlen;
};

/* Creates the output with the header and the metadata (serialised and freed
** here).  Returns 0, EXIT_USAGE (no path, or not a regular file), EXIT_IO (it cannot
** be written) or EXIT_BADINPUT, the message in err. */
int gen_open(struct gen *g, const char *path, const char *workload, unsigned vcpus,
             unsigned paging, cJSON *meta, char *err, size_t errlen);
/* Finishes the trace and renames it into place; on an earlier failure removes it. */
int gen_close(struct gen *g);

/* A record could not be written: rc and the writer's message become the generator's. */
void gen_write_failed(struct gen *g, int rc);

/* Appends one record.  Native cycles live in `run` records; every other record
** carries 0 (see workloads/README.md), so most callers leave cycles 0. */
static inline void gen_ev(struct gen *g, unsigned vcpu, unsigned type, unsigned aux,
                          uint64_t a, uint64_t b, uint32_t cycles) {
  struct trace_event ev = { (uint8_t)type, (uint8_t)aux, (uint16_t)vcpu, cycles, a, b };
  int rc;
  if (g->rc == EXIT_OK && (rc = trace_write(&g->w, &ev)) != EXIT_OK) gen_write_failed(g, rc);
}

/* `run N`, split into several records when N exceeds a record's 32 bits. */
void gen_run(struct gen *g, unsigned vcpu, uint64_t cycles);

static inline void gen_touch(struct gen *g, unsigned vcpu, uint64_t va, uint64_t pages, bool write) {
  if (pages) gen_ev(g, vcpu, EV_TOUCH, write ? TOUCH_AUX_WRITE : 0, va, pages, 0);
}
static inline void gen_cr3w(struct gen *g, unsigned vcpu, uint64_t cr3) {
  gen_ev(g, vcpu, EV_CR_WRITE, 3, cr3, 0, 0);
}

/* A mark label packed as the record stores it (bytes little-endian in a, then b). */
struct gen_label { uint64_t a, b; };
struct gen_label gen_label_make(const char *text);
static inline void gen_mark(struct gen *g, unsigned vcpu, struct gen_label l) {
  gen_ev(g, vcpu, EV_MARK, 0, l.a, l.b, 0);
}

/* @init CR0, CR3, CR4 for one vCPU, or for vCPUs 0..nvcpu-1 with the same CR3. */
void gen_init_vcpu(struct gen *g, const struct gen_layout *l, unsigned vcpu, uint64_t cr3);
void gen_init_vcpus(struct gen *g, const struct gen_layout *l, unsigned nvcpu, uint64_t cr3);

/* ---- native time ---- */

/* Microseconds at the given clock to whole cycles (round to nearest). */
uint64_t gen_us_to_cycles(double us, double ghz);
/* Piecewise-linear interpolation through (xs[i], ys[i]), xs ascending; held
** constant outside [xs[0], xs[n-1]]. */
double gen_interp(const double *xs, const double *ys, size_t n, double x);

/* Deterministic pseudo-random numbers (splitmix64) for optional jitter. */
static inline uint64_t gen_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ---- metadata ---- */

/* {"generator": name, "model_version": v, ...}; the caller adds parameters. */
cJSON *gen_meta_new(const char *generator, int model_version);
void gen_meta_num(cJSON *meta, const char *key, double value);
void gen_meta_str(cJSON *meta, const char *key, const char *value);
void gen_meta_bool(cJSON *meta, const char *key, bool value);
void gen_meta_sources(cJSON *meta, const char *const *sources);   /* NULL-terminated */

/* ---- validation helpers (messages name the option, as the CLI spells it) ---- */

bool gen_check_range(char *err, size_t errlen, const char *opt, uint64_t v, uint64_t lo, uint64_t hi);
bool gen_check_ghz(char *err, size_t errlen, double ghz);
bool gen_check_paging(char *err, size_t errlen, unsigned paging);
void gen_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- command-line options ---- */

enum gen_opt_kind {
  GO_UINT,      /* uint64_t *: whole number */
  GO_DOUBLE,    /* double *: a number (its range is checked by the generator) */
  GO_CHOICE,    /* int *: index into choices */
  GO_PAGING,    /* unsigned *: 32 | pae | 64 */
  GO_FLAG,      /* bool *: present or not */
  GO_STRING,    /* const char **: any text (the output file) */
};

struct gen_opt {
  const char *name;               /* "--procs" */
  const char *short_name;         /* "-o", or NULL */
  enum gen_opt_kind kind;
  void *dest;
  const char *const *choices;     /* GO_CHOICE: NULL-terminated */
  bool required;
};

/* Parses argv[1..] (argv[0] is the generator name) against opts (ended by a
** zero entry) and the output option, -o/--output FILE, whose value goes to
** *out; *out may hold a default, else -o is required.  Returns 0, or
** EXIT_USAGE with a message naming the option in err.  --help is the
** caller's: here it is an unknown option. */
int gen_parse_args(int argc, char **argv, const struct gen_opt *opts, const char **out, char *err, size_t errlen);

#endif
