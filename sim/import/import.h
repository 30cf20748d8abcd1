/* Importers of real recordings (perf script, KVM ftrace text, xentrace): shared state and output. */
#ifndef VMXSIM_IMPORT_H
#define VMXSIM_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "models/event.h"
#include "sim/trace/trace.h"

/*
** How an import runs.  An importer (one file per format) reads the whole
** input (a memory buffer), turns each recorded line or record into trace
** events and hands them to struct import's emit callback.  import_file (the
** library, import.c) spools them to a temporary file and, at the end,
** assembles the trace: header, metadata (counts are only known at the end),
** one @init group per vCPU, then the events.  The unit tests pass a callback
** that collects the events in memory instead.
**
** Errors follow docs/architecture.md, "Errors": 0 or an enum exit_code; an
** importer leaves its message in im->err (the import outlives the call that
** failed), import_file in the caller's buffer.
**
** Ownership: struct import owns `meta` and the maps; import_free releases them.
*/

#define IMPORT_BAD_KEEP   5      /* unparseable lines quoted in messages and metadata */
#define IMPORT_TEXT_MAX   160    /* bytes of a bad line quoted */
#define IMPORT_NAMES_MAX  24     /* distinct skipped-event names counted separately */
#define IMPORT_GHZ_DEFAULT 2.4
#define IMPORT_RECORDER_WARNINGS 4   /* the recorder's warnings about lost data kept */
/* Longest recorded time between two events of a CPU that becomes `run` records:
** 2^48 cycles (more than a day at 2.4 GHz; 65537 records).  A longer jump is a
** corrupt timestamp, reported as an unparseable line or record: converted, it
** would write up to 2^32 records (about 100 GB). */
#define IMPORT_GAP_MAX    (1ull << 48)
#define IMPORT_GAP_WHY    "timestamp more than 2^48 cycles after the CPU's previous event (corrupt?)"

/* Guest state every imported trace starts from (the generators use the same). */
#define IMPORT_CR0_INIT   0x80050033ull
#define IMPORT_CR3_BASE   0x10000000ull  /* CR3 of process n: BASE + n * STRIDE (page aligned) */
#define IMPORT_CR3_STRIDE 0x100000ull

typedef int (*import_emit_fn)(void *ctx, const struct trace_event *ev);
/* A summary's lean pass hands its measured exits on a block at a time, each a
** 32-byte note (sim/replay/views.h, struct exit_note; views_add_notes reads
** them): notes(ctx, full, n) hands on the n notes at the start of `full`, the
** block it returned last (NULL, 0 at first), and returns the next, with room
** for IMPORT_NOTES_BLOCK notes. */
struct exit_note;
typedef struct exit_note *(*import_notes_fn)(void *ctx, struct exit_note *full, size_t n);
#define IMPORT_NOTES_BLOCK 4096
/* A lean import gave up (opt.notes): the input holds what only the full import reads. */
#define IMPORT_NOT_LEAN (-2)

/* The guest a native recording is replayed as (perf-script, trace-cmd). */
enum import_guest {
  IMPORT_GUEST_HVM,          /* the recorded kernel, unchanged: one address space per process */
  IMPORT_GUEST_PV64,         /* a 64-bit Xen PV guest (Xen, or xenner on KVM): kernel and user
                             ** space on separate page tables, a CR3 write on every crossing */
};

struct import_opts {
  double cpu_ghz;            /* cycles per nanosecond of recorded time (perf, kvm) */
  unsigned paging;           /* enum paging_mode */
  unsigned guest;            /* enum import_guest */
  bool skip_bad;             /* count unparseable input instead of failing */
  bool one_domain;           /* xentrace: only domain `domain`'s vCPUs (else every domain's) */
  bool domain_required;      /* xentrace: a recording of several guest domains needs one_domain (a replay) */
  uint16_t domain;
  const char *input;         /* the input's name in messages */
  /* each vCPU's @init records go out just before its first record, not after
  ** the last: for a reader that takes the records in one pass (import_feed) */
  bool inits_inline;
  /* A summary's lean pass (xentrace; other formats ignore it): no records
  ** are emitted, each measured exit goes to notes(notes_ctx) with what the
  ** records before it make of it (views_feed's reading), the metadata is the
  ** full import's.  Every note written is handed on before the import returns,
  ** whatever its result.  Without note_scan it is one pass in file order, which
  ** stops with IMPORT_NOT_LEAN, at any point, when the input holds anything
  ** but the records of a recording without scheduler records (the caller
  ** then drops what it was given and reads it again with note_scan). */
  import_notes_fn notes;
  void *notes_ctx;
  /* with notes: the lean pass reads the headers first, as the full import does
  ** (the scheduler's records, lost records, other events and bad records are
  ** read as it reads them), and never gives up */
  bool note_scan;
};

/* One unparseable line (or xentrace record) kept for messages and metadata. */
struct import_bad {
  uint64_t where;            /* line number, or byte offset for binary input */
  char why[96];
  char text[IMPORT_TEXT_MAX + 1];
};

/*
** Counts by key, named once at the end (no formatting or string compare per
** record): a key is a number (an exit reason, a xentrace event id) that a
** namer turns into text when the metadata is written, or a name (text input:
** an event's name), kept on first sight and found again by its hash.  At most
** IMPORT_NAMES_MAX distinct keys, in order of first sight, then "(other)".
*/
struct cJSON;
#define IMPORT_TALLY_NAMED (1ull << 63)   /* keys with this bit are name hashes */
struct import_tally {
  unsigned n;                          /* distinct keys counted, at most IMPORT_NAMES_MAX */
  uint64_t key[IMPORT_NAMES_MAX];
  uint64_t count[IMPORT_NAMES_MAX + 1]; /* the last one: every other key */
  char name[IMPORT_NAMES_MAX][48];      /* named keys only */
};
typedef void (*import_namer_fn)(uint64_t key, char *buf, size_t n);
void import_tally_id(struct import_tally *t, uint64_t key);        /* key < IMPORT_TALLY_NAMED */
/* The slot import_tally_id counts key in, taken when it is new (as import_tally_name_slot). */
unsigned import_tally_id_slot(struct import_tally *t, uint64_t key);
void import_tally_name(struct import_tally *t, const char *name, size_t len);
/* The slot import_tally_name counts name in (IMPORT_NAMES_MAX: "(other)"), taken
** when it is new: an importer that counts one name on most records keeps the
** slot and adds to count[slot] itself, without hashing the name each time. */
unsigned import_tally_name_slot(struct import_tally *t, const char *name, size_t len);
/* The name `name` (len bytes) followed by suffix, without building it unless it is new. */
void import_tally_name2(struct import_tally *t, const char *name, size_t len, const char *suffix);
/* Adds {name: count, ...} as member `key` of obj; numbered keys are named by namer. */
void import_tally_json(struct cJSON *obj, const char *key, const struct import_tally *t, import_namer_fn namer);
uint64_t import_tally_total(const struct import_tally *t);

/* Open-addressing map from u32 keys to int64 values (task ids, CPUs). */
struct import_map {
  uint32_t *keys;
  int64_t *vals;
  uint8_t *used;
  size_t cap, n;
};

/* Initial control registers of one vCPU, written as its @init records. */
/* A vCPU's registers as its recording begins.  Only what comes before its
** first record may set them (a CR3 a handler record shows at the vCPU's
** first exit, a process's CR3 from the start): once that record is out they
** are fixed, so a later write is replayed as a change and never becomes the
** initial value, and a one-pass reader (import_feed) can be given them
** before the records. */
struct import_init { uint64_t cr0, cr3, cr4; bool cr3_known, fixed; };

struct import {
  struct import_opts opt;
  import_emit_fn emit;       /* where events go */
  void *emit_ctx;
  bool binary;               /* input positions are byte offsets, not line numbers */
  bool tids_only;            /* the input has no thread-group column, and says so itself (trace.dat) */

  /* Counts of input units (lines or records). */
  uint64_t units, used, skipped, bad, ignored;
  struct import_bad first_bad[IMPORT_BAD_KEEP];
  unsigned nbad_kept;
  struct import_tally skipped_names;    /* skipped units by name (text input) */
  struct import_tally skipped_ids;      /* skipped units by numeric id (binary input), named by skip_namer */
  import_namer_fn skip_namer;

  /* vCPUs: native CPUs (perf, xentrace) are renumbered densely in order of appearance. */
  unsigned nvcpus;
  struct import_init init[TRACE_VCPU_MAX];
  int64_t native_cpu[TRACE_VCPU_MAX];   /* the native CPU behind each vCPU, -1 if none */
  struct import_map cpu_map;            /* native CPU -> vCPU */

  uint64_t events;           /* records emitted (not counting @init) */
  struct cJSON *meta;        /* importer-specific metadata members */
  /* Input pages behind the cursor can be given back (a mapped file): import_release. */
  const char *map_base;
  size_t map_len;
  int map_fd;                /* the mapped file, open for reading; -1 when not known */
  size_t map_released;
  size_t map_populated;      /* pages below are mapped in ahead of the cursor (import_populate) */

  /* Coverage (import_coverage.c): what the recording holds against what the format needs. */
  struct import_tally seen;            /* events understood, by name */
  struct import_tally recorded;        /* events the recording says it recorded */
  char recorder_warnings[IMPORT_RECORDER_WARNINGS][IMPORT_TEXT_MAX + 1];
  unsigned nrecorder_warnings;
  char warnings[2048];       /* import_coverage's warnings, one per line (for the front end) */
  char err[640];             /* the failure message when an importer returns non-zero */
};

/* ---- state and output (import.c) ---- */
void import_init(struct import *im, const struct import_opts *opt, import_emit_fn emit, void *ctx);
void import_free(struct import *im);

/* vCPU for native CPU `cpu`, allocated on first sight; -1 beyond TRACE_VCPU_MAX. */
int import_vcpu_of_cpu(struct import *im, int64_t cpu);
/* Metadata member `key`: the native CPU behind each vCPU, in vCPU order. */
void import_add_native_cpus(struct import *im, const char *key);
/* Marks vCPU v (0..TRACE_VCPU_MAX-1) as used, so that the header covers it. */
void import_use_vcpu(struct import *im, unsigned v);

/* Before vCPU v's first record (import_before_record): its @init records. */
int import_first_record(struct import *im, unsigned v);
/* Every record of vCPU v is counted, and the first one fixes its initial registers. */
static inline int import_before_record(struct import *im, unsigned v) {
  if (v < TRACE_VCPU_MAX && !im->init[v].fixed) {
    int rc = import_first_record(im, v);
    if (rc) return rc;
  }
  if (v < TRACE_VCPU_MAX && v >= im->nvcpus) im->nvcpus = v + 1;   /* import_use_vcpu */
  im->events++;
  return 0;
}
/* Emit one event with no native cycles of its own; 0 or EXIT_INTERNAL-style rc from emit.
** Inline: an importer emits several records an exit. */
static inline int import_emit(struct import *im, unsigned vcpu, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  int rc = import_before_record(im, vcpu);
  if (rc) return rc;
  struct trace_event ev = { .type = (uint8_t)type, .aux = (uint8_t)aux, .vcpu = (uint16_t)vcpu,
                            .cycles = 0, .a = a, .b = b };
  return im->emit(im->emit_ctx, &ev);
}
/* `run` records for `cycles` (split at 2^32-1); nothing for 0. */
int import_run_long(struct import *im, unsigned vcpu, uint64_t cycles);
static inline int import_run(struct import *im, unsigned vcpu, uint64_t cycles) {
  if (!cycles || cycles > UINT32_MAX) return cycles ? import_run_long(im, vcpu, cycles) : 0;
  int rc = import_before_record(im, vcpu);
  if (rc) return rc;
  struct trace_event ev = { .type = EV_RUN, .vcpu = (uint16_t)vcpu, .cycles = (uint32_t)cycles };
  return im->emit(im->emit_ctx, &ev);
}
int import_mark(struct import *im, unsigned vcpu, const char *label);
/* The importer is done with input bytes [0, upto) of buf: when the input is a
** mapped file, its pages are given back every few MiB, so that an import's
** memory does not grow with the input. */
#define IMPORT_RELEASE_STEP (4u << 20)
void import_release_slow(struct import *im, const void *buf, size_t upto);
static inline void import_release(struct import *im, const void *buf, size_t upto) {
  if (im->map_base && upto >= im->map_released + IMPORT_RELEASE_STEP) import_release_slow(im, buf, upto);
}
/* The importer reads input byte `at` of buf next, going forward: when the input
** is a mapped file, its next IMPORT_POPULATE_STEP bytes are mapped in at once
** (a step small beside IMPORT_RELEASE_STEP, so that memory stays flat),
** one system call instead of a page fault every few pages (which, in a virtual
** machine, cost a tenth of a recording's summary).  A step back (a second pass)
** starts again with map_populated = 0. */
#define IMPORT_POPULATE_STEP (1u << 20)
void import_populate_slow(struct import *im, const void *buf, size_t at);
static inline void import_populate(struct import *im, const void *buf, size_t at) {
  if (im->map_base && at >= im->map_populated) import_populate_slow(im, buf, at);
}
/* Nanoseconds of recorded time as guest cycles at opt.cpu_ghz. */
uint64_t import_ns_to_cycles(const struct import *im, uint64_t ns);
/* CR3 value of imported process n. */
uint64_t import_cr3_of(unsigned n);

/*
** An unparseable unit: counted and kept; returns 0 to go on (--skip-bad) or
** EXIT_BADINPUT with im->err set to "INPUT:LINE: why: 'text'".
*/
int import_bad(struct import *im, uint64_t where, const char *text, size_t len, const char *why);
/* A unit understood but not turned into events (other tracepoints, ...). */
void import_skip(struct import *im, const char *name, size_t len);
/* import_skip of a NUL-terminated name; returns 0 (go on). */
int import_skip_why(struct import *im, const char *why);
/* A skipped unit known by a number (a xentrace event id), named by im->skip_namer at the end; returns 0. */
int import_skip_id(struct import *im, uint64_t id);

/* "IN.txt:12: why: 'text'" (text input) or "IN.bin: byte 96: why" (binary input). */
void import_format_bad(const struct import *im, const struct import_bad *b, char *out, size_t n);


/* ---- coverage (import_coverage.c) ---- */
/* An event of the recording understood (counted by name). */
void import_saw(struct import *im, const char *event, size_t len);
/* An event the recording's own header says was recorded (perf's "# event : name = ..."). */
void import_recorded(struct import *im, const char *event, size_t len);
/* The recorder's own warning that data was lost ("lost 28.91% of samples"). */
void import_recorder_warning(struct import *im, const char *text, size_t len);
/* After an import: compares the events seen with what the format's results
** need, adds "coverage" (seen, recorded, missing with what each is needed
** for, recorder_warnings) to im->meta and writes one warning per problem into
** im->warnings.  Returns the number of warnings.  Never an error: an
** incomplete recording still imports. */
struct import_format;
unsigned import_coverage(struct import *im, const struct import_format *format);

/* ---- small parsing helpers shared by the text importers ---- */
/* Next line of buf from *pos (without "\n" or "\r\n"); false at the end. */
bool import_next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n);
/* "SECS[.FRACTION]" at s (n bytes) as nanoseconds. */
bool import_parse_secs(const char *s, size_t n, uint64_t *ns);
/* The task column before the CPU: finds the first blank-preceded "[DIGITS]" in
** [s, end) whose preceding token [*ts, *te) satisfies ok(ts, te, arg); returns
** the '[' or NULL.  perf script and ftrace print the task before "[CPU]". */
typedef bool (*import_task_ok_fn)(const char *ts, const char *te, void *arg);
const char *import_find_cpu(const char *s, const char *end, import_task_ok_fn ok, void *arg,
                            const char **ts, const char **te);
/* Finds "name" (e.g. "next_pid=") in s[0..n) at a field start; returns the value's start or NULL. */
const char *import_field(const char *s, size_t n, const char *name);
/* Parses an unsigned decimal (dec) or hex number (0x optional when hex) at s, up to end. */
bool import_num(const char *s, const char *end, bool hex, uint64_t *v, const char **stop);
bool import_snum(const char *s, const char *end, int64_t *v, const char **stop);

/* ---- maps ---- */
void import_map_free(struct import_map *m);
int64_t *import_map_get(const struct import_map *m, uint32_t key);   /* NULL when absent */
int64_t *import_map_put(struct import_map *m, uint32_t key, int64_t init); /* existing or new slot */

/* ---- the importers: each returns 0, or EXIT_BADINPUT with im->err set ---- */
int import_perf_script(struct import *im, const char *buf, size_t len);   /* sim/import/import_perf.c */
int import_kvm_ftrace(struct import *im, const char *buf, size_t len);    /* sim/import/import_ftrace.c */
int import_xentrace(struct import *im, const unsigned char *buf, size_t len); /* sim/import/import_xen.c */
/* trace-cmd's trace.dat at path, through libtracecmd (sim/import/import_tracecmd.c); EXIT_BADINPUT
** with a message saying how to convert it when vmxsim was built without the library. */
int import_tracecmd(struct import *im, const char *path);
/* The same import with the file read in this process, without the reader child's
** bounds on CPU time and memory and its shelter from the libraries' crashes: for
** the in-process fuzz harness (tests/fuzz/fuzz_tracecmd_inproc.c), which enforces
** the bounds itself. */
int import_tracecmd_in_process(struct import *im, const char *path);
/* The reader child's bounds for the file at path: seconds of CPU time, and bytes of
** address space over what it has mapped when it starts. */
void import_tracecmd_bounds(const char *path, uint64_t *cpu_s, uint64_t *mem);
bool import_tracecmd_available(void);

/* ---- the formats: one row each, in the importer's own file ---- */

/* One event a format's results rely on (import_coverage compares the
** recording's events against its format's list). */
struct import_need {
  const char *event;         /* as the recording names it */
  const char *gives;         /* what it becomes in the trace */
  const char *without;       /* what a replay lacks without it; NULL: only noted in the metadata */
};

/* How sure a probe is that a file's first bytes are its format: the surest
** row wins (ties: the first in the table). */
enum import_probe_score {
  IMPORT_PROBE_NO = 0,
  IMPORT_PROBE_EVENTS,       /* event names that another format's text may also hold */
  IMPORT_PROBE_SPECIFIC,     /* events only this format records (a KVM host's kvm_exit) */
  IMPORT_PROBE_MAGIC,        /* the format's magic number */
};

/*
** An importer, as `vmxsim import`, detection and coverage see it.  Each
** importer's file defines its row; the table in import.c lists the rows, and
** everything that names the formats (the command's usage and messages,
** --input-format, detection) reads that table.
*/
struct import_format {
  const char *name;          /* as `vmxsim import` and --input-format take it */
  const char *summary;       /* its lines under "formats:" in `vmxsim import --help` ("\n" between them) */
  const char *usage;         /* `vmxsim import NAME --help` */
  const char *recording;     /* the recording in detection's messages: "xentrace", "KVM ftrace text" */
  const char *looks_for;     /* text formats: what the probe looks for, in detection's messages; NULL: binary */
  /* The file's first bytes (n of them; text: the same as a string, NULL when
  ** they hold a NUL byte): an enum import_probe_score. */
  int (*probe)(const unsigned char *head, size_t n, const char *text);
  int (*run)(struct import *im, const char *buf, size_t len);
  bool binary;               /* positions in messages are byte offsets */
  int (*run_path)(struct import *im, const char *path);   /* reads the file itself (run is NULL) */
  const struct import_need *needs;   /* what its results rely on (import_coverage) */
  size_t nneeds;
};
/* The rows, in the table's order; NULL-terminated. */
const struct import_format *const *import_formats(void);
/* The format called name, or NULL. */
const struct import_format *import_format_find(const char *name);
/* The formats' names joined by sep, the last two by last ("a, b or c"), into buf. */
void import_format_names(char *buf, size_t n, const char *sep, const char *last);
/* The recording format of the file at path, from its first bytes: the row
** whose probe is surest; NULL for a vmxsim trace or what no probe knows (err
** says which: "" for a vmxsim trace).
** Standard input ("-") and pipes can be read once, so they are not looked at:
** they are taken for vmxsim traces (--input-format names a recording's format). */
const struct import_format *import_detect(const char *path, char *err, size_t errlen);

struct import_job {
  const struct import_format *format;
  const char *input;         /* the recording; "-" for standard input */
  const char *output;        /* the trace, written atomically (sim/base/outfile.h) */
  const char *workload;      /* header workload name; NULL: the input's base name */
  const char *command;       /* the command line, recorded in the metadata */
  struct import_opts opt;    /* opt.input is set from input */
};

/* Reads job->input, converts it and writes job->output.  Returns 0, or an
** enum exit_code with the message in err: EXIT_BADINPUT (unreadable or
** unrecognised input, unwritable output), EXIT_INTERNAL (temporary file).
** Afterwards im holds the counts and the unparseable units kept (for the
** caller to report); free it with import_free whatever the result. */
int import_file(const struct import_job *job, struct import *im, char *err, size_t errlen);

/*
** A recording replayed as it is imported, with no file between the two
** (import_stream.c).  The header comes before the records, and an importer
** knows the vCPUs, their initial registers and its metadata only at its end,
** so the recording is converted twice: a first run counts, and builds the
** bytes that go before the records; a second, on a thread, sends those bytes
** and then the records down a pipe, which the replay reads as a stream
** (trace_open_fd).  What the pipe carries is byte for byte the trace that
** import_file would write for the same job, so the results and the trace
** hash are the same.
**
** import_stream_start runs the first conversion (its errors are import_file's),
** unless it is given what one found, then starts the second; import_stream_open is the replay's open (a struct
** run_set's): it hands the pipe's reading end to the reader, once.
** import_stream_finish waits for the thread and frees everything: 0, or an
** exit code with the message in err when the second conversion failed (the
** recording changed while it was read, or its output could not be sent).  A
** replay that stops reading early (interrupted, a bad record) is not the
** stream's failure.
*/
struct import_stream;
/* What the first conversion learns: the bytes before the records
** (import_stream_prefix_size of them), the records' count and their XXH64.
** Given to import_stream_start (as remembered from an earlier stream of the
** same file, job and build), it stands for the first conversion: the second
** still checks its records against the count and hash, so a wrong one makes
** the stream fail as a changed recording does, never a different replay. */
struct import_stream_known {
  const unsigned char *prefix;
  uint64_t records, records_hash;
  /* the whole converted trace, when a copy of it was kept (import_stream_copied):
  ** its size in bytes and content hash (XXH64, as trace_hash_hex gives it); 0, 0: none */
  uint64_t kept_bytes, kept_hash;
};
size_t import_stream_prefix_size(void);
/* The recording of job (a regular file; not a format read by path) converted
** once, on this thread, every record to emit(ctx) with each vCPU's @init
** records just before its first (opt.inits_inline): for a reader that needs
** no header before the records, such as a summary.  Then *meta is the
** metadata JSON (the caller frees it), workload the header's name and
** *nvcpus its vCPU count.  0, or
** an exit code with the message in err (import_file's). */
int import_feed(const struct import_job *job, import_emit_fn emit, void *ctx, char *workload, size_t wlen,
                char **meta, unsigned *nvcpus, char *err, size_t errlen);

/* copy_fd >= 0: every byte sent is also written there (a copy of the
** converted trace, to keep for the next replay; import_stream_copied). */
int import_stream_start(const struct import_job *job, const struct import_stream_known *known, int copy_fd,
                        struct import_stream **out, char *err, size_t errlen);
/* After import_stream_join: true when copy_fd holds the whole converted
** trace, with its size and content hash. */
bool import_stream_copied(const struct import_stream *s, uint64_t *bytes, uint64_t *hash);
/* A stream that reads a kept copy of the conversion (the file kept, named as
** the recording input and with known's prefix and counts) instead of
** converting: import_stream_open reads it as a trace, hashing its content as
** it is read, for the caller to check against known->kept_hash. */
struct import_stream *import_stream_of_kept(const char *kept, const char *input,
                                            const struct import_stream_known *known);
/* The stream's own (pointers valid while s is). */
void import_stream_head(const struct import_stream *s, struct import_stream_known *k);
/* The metadata (JSON text, the caller frees it) of the trace the stream sends:
** the import's counts, its unparseable lines among them. */
char *import_stream_metadata(const struct import_stream *s);
int import_stream_open(struct trace_reader *r, void *stream);
/* Waits for the second conversion's end: import_stream_finish's result,
** without freeing s. */
int import_stream_join(struct import_stream *s, char *err, size_t errlen);
int import_stream_finish(struct import_stream *s, char *err, size_t errlen);

#endif
