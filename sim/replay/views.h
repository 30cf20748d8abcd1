/* Views of a run's exits, the way xenalyze --summary and perf kvm stat show them:
** per exit reason with breakdowns by control register, debug register, MSR, I/O
** port, vector and CPUID leaf, and by address space (CR3) and vCPU, with
** percentiles, maximum and standard deviation, optionally as a time series.
** One module serves both sides: the exits a recording measured (fed the trace's
** records: views_feed) and the exits a replay simulated (fed by the engine's
** observer: views_add). */
#ifndef VMXSIM_VIEWS_H
#define VMXSIM_VIEWS_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "models/event.h"
#include "sim/trace/trace.h"
#include "sim/base/hugemem.h"

/* What a row is keyed by.  A breakdown row (CR..LEAF) sits under its reason. */
#define VIEW_DIMS(X)                                              \
  X(REASON, "reason") X(CR, "cr") X(DR, "dr") X(MSR, "msr")      \
  X(PORT, "port") X(VECTOR, "vector") X(LEAF, "leaf")            \
  X(CR3, "cr3") X(VCPU, "vcpu")
enum view_dim {
#define X(e, n) VD_##e,
  VIEW_DIMS(X)
#undef X
  VD_COUNT
};
const char *view_dim_name(unsigned dim);

/* A control-register row's key: crN * 2 + write, then CLTS and LMSW. */
#define CRKEY_CLTS 0x100u
#define CRKEY_LMSW 0x101u

/* Percentiles come from an even sample of at most this many exits per row,
** taken as xenalyze takes it (tools/xentrace/xenalyze.c, update_summary):
** exact below it, and the same figures xenalyze prints above it. */
#define VIEW_SAMPLE 10240

struct view_row {
  uint8_t dim;
  uint16_t reason;           /* the reason (of the parent, for a breakdown row) */
  uint64_t key;              /* reason, CR key, MSR index, port | out << 16, vector, leaf, CR3, vCPU */
  uint64_t count;            /* exits */
  uint64_t timed;            /* exits with a nonzero cost (the average's denominator, as xenalyze's) */
  uint64_t cycles, min, max;  /* min: UINT64_MAX while timed is 0 */
  /* The sum of the squares, for the standard deviation: kept as an integer
  ** while it fits in 64 bits (there a long double sum is exact, so the two
  ** agree), then in long double from the exit that would not fit on (the
  ** integer then stays at UINT64_MAX). */
  uint64_t sumsq_int;
  bool sumsq_wide;
  long double sumsq;
  uint64_t next_sample;      /* the value of timed at which the next exit is sampled */
  uint64_t *sample;          /* [nsample], grown up to VIEW_SAMPLE */
  uint32_t nsample, cap;
  bool sample_arena;         /* sample is a piece of the views' arena (else malloc's, or NULL) */
  /* p5, p50, p95 as views_percentiles found them when the row had pct_at - 1
  ** timed exits; 0: not found (views_stats finds them itself) */
  uint64_t pct[3], pct_at;
};

/* Rows found without the index: a reason's by its number, a vCPU's by its
** index, and breakdown and CR3 rows in a small table by hash. */
#define VIEW_DIRECT_REASONS 128
#define VIEW_HOT 256

/* A row as printed: the statistics a report, the database and compare use. */
enum view_source { VS_SIMULATED, VS_MEASURED };
struct view_stat {
  uint8_t source;            /* enum view_source */
  char name[40];             /* "CR_ACCESS", "cr3 write", "msr 0x6e0", "port 0x70 out", "cr3 0x1000" */
  char parent[32];           /* the reason's name for a breakdown row, "" otherwise */
  uint8_t dim;
  uint16_t reason;
  uint64_t key;
  uint64_t count, cycles, avg, min, p5, p50, p95, max;
  double stddev;
};

enum view_sort { SORT_REASON, SORT_COUNT, SORT_TIME, SORT_AVG };
int view_sort_from_name(const char *s);   /* -1 when unknown */

/* One interval of a time series: exits per reason. */
struct view_bucket { uint64_t index; uint16_t reason; uint64_t count, cycles; };

struct views {
  int vcpu;                  /* only this vCPU's exits; -1: all */
  uint64_t interval;         /* time-series width: cycles (or events when interval_events); 0: none */
  bool interval_events;
  /* rows, found by (dim, reason, key) through an open-addressing index */
  struct view_row *rows;
  uint32_t nrows, cap;
  uint32_t *index;           /* [icap] row + 1, 0 empty */
  uint32_t icap;
  uint32_t reason_row[VIEW_DIRECT_REASONS];   /* row + 1, 0 not yet */
  uint32_t vcpu_row[TRACE_VCPU_MAX];          /* row + 1, 0 not yet */
  uint32_t hot[VIEW_HOT];                     /* breakdown and CR3 rows by hash: row + 1, 0 none */
  uint32_t cr3_row[TRACE_VCPU_MAX];           /* each vCPU's row of its last CR3: row + 1, 0 not yet */
  struct view_bucket *buckets;
  uint32_t nbuckets, bcap;
  uint32_t *bindex, bicap;
  uint64_t exits, cycles;    /* totals of the kept exits */
  /* the recorded side (views_feed): per vCPU, the clock, CR3 and last guest event */
  uint64_t clock[TRACE_VCPU_MAX], cr3[TRACE_VCPU_MAX];
  struct trace_event last[TRACE_VCPU_MAX];
  uint64_t events;           /* guest events fed (measured records not counted) */
  unsigned nvcpus;
  /* the rows' samples as they grow (sim/base/hugemem.h): a summary's first
  ** touches of the pages under them cost more than its rows' arithmetic */
  struct huge_arena samples;
};

/* A time series' width of us microseconds in cycles at ghz, rounded (0: less
** than half a cycle).  The options bound us to 10^12 and the clocks to at
** most 10 GHz (CLOCK_GHZ_MAX), so it stays below 2^63. */
static inline uint64_t views_interval_cycles(double us, double ghz) { return (uint64_t)(us * ghz * 1e3 + 0.5); }
void views_init(struct views *w, int vcpu, uint64_t interval, bool interval_events);
/* Finds every row's percentiles now, on two threads when the samples are
** large, for the views_stats calls that follow (each would find them again):
** after the last exit, before the tables are printed. */
void views_percentiles(struct views *w);
void views_free(struct views *w);
/* A copy of from that owns its own memory (views_free each). */
void views_copy(struct views *to, const struct views *from);
/* One exit: reason, what caused it (NULL: nothing the trace expresses), the
** vCPU's CR3 and clock (cycles) at the exit, its cost. */
void views_add(struct views *w, unsigned vcpu, unsigned reason, const struct trace_event *cause,
               uint64_t cr3, uint64_t clock, uint64_t cycles);
/* What an exit of `reason` caused by ev (NULL: nothing the trace expresses) is
** broken down by: its row's dimension, CR..LEAF, with the key in *key; or
** VD_REASON when by nothing. */
unsigned views_breakdown(unsigned reason, const struct trace_event *ev, uint64_t *key);
/* views_add with the breakdown found (views_breakdown; dim VD_REASON: none),
** for a caller that keeps an exit for later and not its cause. */
void views_add_keyed(struct views *w, unsigned vcpu, unsigned reason, unsigned dim, uint64_t key,
                     uint64_t cr3, uint64_t clock, uint64_t cycles);
/* The recorded side: every record of a trace in order; EV_MEASURED records
** become exits, caused by their vCPU's preceding event unless alone. */
void views_feed(struct views *w, const struct trace_event *ev);
/* views_feed of each of a block's n records into each of the nw views. */
void views_feed_block(struct views *const *w, unsigned nw, const struct trace_event *evs, size_t n);
/* Is there any exit? */
static inline bool views_any(const struct views *w) { return w->exits != 0; }

/* ---- a lean import's exits (xentrace: import.h, opt.notes) ----
** An exit as the importer's thread hands it to the views' thread, a block at a
** time: 32 bytes with its cause's type, aux and operand, so that what it is
** broken down by, its vCPU's CR3 and whether the options keep its vCPU are
** found on the views' thread (views_add_notes), not on the importer's. */
enum exit_note_kind {
  EXIT_NOTE_EXIT,            /* a measured exit */
  EXIT_NOTE_CR3,             /* the vCPU's CR3 from here on is `clock` (one no exit's cause set) */
  EXIT_NOTE_VCPU,            /* the vCPU is the recording's domain clock >> 16, vCPU clock & 0xffff */
};
#define EXIT_NOTE_NO_CAUSE 0xff  /* type: nothing the trace expresses caused the exit */
struct exit_note {
  uint64_t clock;            /* EXIT: the vCPU's clock after it (its run and measured cycles) */
  uint64_t cycles;           /* EXIT: its cost */
  uint64_t a;                /* EXIT: its cause's operand (trace_event.a) */
  uint16_t reason;
  uint8_t kind, vcpu;        /* enum exit_note_kind; the trace vCPU */
  uint8_t type, aux;         /* EXIT: its cause's record type (EXIT_NOTE_NO_CAUSE: none) and aux */
  uint8_t pad[2];
};
static_assert(sizeof(struct exit_note) == 32, "an exit note is 32 bytes");
static_assert(TRACE_VCPU_MAX <= 256, "an exit note's vCPU is 8 bits");

/* What the reader of a stream of exit notes follows from one block to the next. */
struct exit_note_reader {
  int domain, vcpu;          /* the exits kept: of this domain and its vCPU (-1: any); vcpu is the
                             ** trace's vCPU when the recording names no domains */
  bool keep[TRACE_VCPU_MAX];
  uint64_t cr3[TRACE_VCPU_MAX];
};
void exit_note_reader_init(struct exit_note_reader *r, int domain, int vcpu);
/* The n notes' exits, in order, into w. */
void views_add_notes(struct views *w, struct exit_note_reader *r, const struct exit_note *notes, size_t n);

/* The rows of one dimension (VD_REASON first, then each reason's breakdown
** rows when dim == VD_REASON and breakdowns), sorted; the caller frees. */
unsigned views_stats(const struct views *w, unsigned dim, bool breakdowns, enum view_sort sort,
                     struct view_stat **out);
/* Every row of every view (reasons with their breakdowns, at most `top` CR3
** rows by time, the vCPUs), marked with source, appended to *out (grown with
** xrealloc; *n rows already there). */
void views_append_all(const struct views *w, uint8_t source, unsigned top, struct view_stat **out, unsigned *n);
/* The elapsed cycles: the busiest vCPU's clock (recorded side). */
uint64_t views_elapsed(const struct views *w);

/* The name of exit reason `reason` as rows show it: its Linux name, or "reason N". */
void view_reason_name(unsigned reason, char *buf, size_t n);
/* What a breakdown row's number is called, printed beside it: an MSR's SDM
** name (IA32_TSC_DEADLINE, x2APIC EOI) or an exception's mnemonic (#PF);
** NULL when it has none here (an external interrupt's vector is the guest
** OS's choice). */
const char *view_key_label(unsigned dim, uint64_t key);

#endif
