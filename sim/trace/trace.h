/* Binary trace files: header, streaming reader and buffered writer (traces/FORMAT.md). */
#ifndef VMXSIM_TRACE_H
#define VMXSIM_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include "models/event.h"
#include "hash.h"
#include "sim/base/util.h"

#define TRACE_MAGIC        "VMXTRACE"
#define TRACE_VERSION      2           /* the newest format version this build reads */
#define TRACE_VERSION_BASE 1           /* what writers write unless the file needs version 2 */
/* Event types each version knows: version 1 ends before EV_MEASURED. */
#define TRACE_V1_TYPES     EV_MEASURED
#define TRACE_FLAG_COUNT_UNKNOWN 0x01  /* version 2: the records run to the end of the input */
#define TRACE_COUNT_UNKNOWN UINT64_MAX /* trace_create_stdout: the count is not known up front */
#define TRACE_HEADER_SIZE  64
#define TRACE_WORKLOAD_MAX 32          /* bytes, NUL padded, not necessarily terminated */
#define TRACE_METADATA_MAX (16u << 20) /* refuse absurd metadata lengths */
#define TRACE_VCPU_MAX     256


/* Parsed header.  The caller owns metadata (malloc'd, NUL terminated). */
struct trace_header {
  uint16_t version;
  uint16_t record_size;
  uint16_t vcpu_count;
  uint8_t  paging;                 /* enum paging_mode */
  uint8_t  flags;                  /* TRACE_FLAG_* (version 2 on) */
  uint64_t event_count;            /* 0 in a count-unknown stream until its end is read */
  char     workload[TRACE_WORKLOAD_MAX + 1];
  char    *metadata;               /* JSON text, "" when none */
  uint32_t metadata_len;
  uint32_t pad;                    /* version 2: zero bytes between the metadata and the records */
};

/*
** Errors (docs/architecture.md, "Errors"): the functions that can fail return 0
** or an enum exit_code: EXIT_BADINPUT for a file that cannot be read or
** written, is not a trace or is corrupt; EXIT_INTERNAL when out of memory.
** The reader and the writer live across calls (a record can be bad long
** after the open), so each keeps the message in its own err: "FILE: byte N:
** what" for the reader.
*/

/*
** Reader.  Records are read a chunk at a time into a small ring of buffers
** (memory does not grow with the trace's length) and validated there; handing
** out a record is then a pointer bump (trace_next, inline), or a whole block
** at once (trace_next_block: the engine walks it).  On a machine with more
** than one processor a read-ahead thread reads and validates the next chunks
** while the caller replays the current one (the caller, rather than wait for
** a chunk, validates some of it itself).  A bad record ends the block
** before it, so every record before it is still handed out and the failure
** comes where the record is.  A regular uncompressed file is read with pread
** (the fast path); standard input ("-"), pipes and gzip, xz or zstd files are
** streams (sim/trace/zin.h), read once from start to end: the checks against
** the file size happen when the end is reached, byte offsets in messages count
** the uncompressed content, and the content is hashed on the way.
*/
struct zin;
struct trace_pipe;
struct trace_reader {
  /* validated records not handed out yet: [cur, end); the one at end has index end_index */
  const struct trace_event *cur, *end;
  uint64_t end_index;
  const char *path;                /* as given; "<stdin>" for "-" */
  struct trace_header hdr;
  int fd;
  size_t file_len;
  size_t data_off;                 /* byte offset of record 0 */
  unsigned types;                  /* event types the file's version knows */
  bool count_known;                /* hdr.event_count is the count (not yet for a count-unknown stream) */
  struct zin *z;                   /* a stream; NULL for a plain regular file */
  bool from_stdin;                 /* path "-" */
  bool piped;                      /* standard input or a pipe (not a regular file) */
  bool read_once;                  /* a descriptor given to trace_open_fd: cannot be rewound */
  int stream_fd;                   /* that descriptor until the stream takes it, else -1 */
  const char *compression;         /* "gzip", "xz", "zstd" or "" */
  struct xxh64 hash;               /* a stream's content so far */
  bool hash_off;                   /* trace_hash_skip: a stream's hash is not wanted, nor computed */
  bool read_ahead;                 /* may use a read-ahead thread (default true; set before reading) */
  struct trace_pipe *pipe;         /* the chunks, their buffers and threads */
  char err[512];                   /* message of the last failure */
};

int  trace_open(struct trace_reader *r, const char *path);      /* 0 or EXIT_BADINPUT, r->err */
/* trace_open, the file opened as flags say (enum input_flags, util.h): with
** INPUT_REGULAR_ONLY anything but a regular file is refused, "-" included.
** The messages quote no bytes of a trace in any case (before its magic
** number is checked they name only the byte). */
int  trace_open_flags(struct trace_reader *r, const char *path, unsigned flags);
void trace_close(struct trace_reader *r);
/* The same for a trace arriving on an open descriptor (a pipe from an
** importer: sim/import/import.h, import_stream_start): read once, as a stream,
** hashed as it is read.  The reader owns fd from the call on, and closes it
** even when the open fails; name is used in messages and must outlive r. */
int  trace_open_fd(struct trace_reader *r, int fd, const char *name);
/* Makes the next block current; NULL at the end or on a bad record (trace_failed). */
const struct trace_event *trace_next_slow(struct trace_reader *r);
/* Next record, or NULL at the end.  Validates type, vCPU and operands; on a
** bad record returns NULL and sets r->err (check trace_failed()). */
static inline const struct trace_event *trace_next(struct trace_reader *r) {
  if (r->cur != r->end) return r->cur++;
  return trace_next_slow(r);
}
/* The next validated records, at most max of them, consumed: their number,
** with *evs pointing at them (valid until the next call); 0 at the end or on
** a bad record. */
size_t trace_next_block(struct trace_reader *r, const struct trace_event **evs, size_t max);
/* Index of the record the next trace_next returns. */
static inline uint64_t trace_position(const struct trace_reader *r) {
  return r->end_index - (uint64_t)(r->end - r->cur);
}
int  trace_failed(const struct trace_reader *r);
/* Byte offset of record i in the (uncompressed) trace, for messages. */
size_t trace_record_offset(const struct trace_reader *r, uint64_t i);
/* Every record has been read without error. */
bool trace_done(const struct trace_reader *r);
/* Back to record 0: 0, or EXIT_BADINPUT (standard input cannot be read twice). */
int  trace_rewind(struct trace_reader *r);

/* The content hash (XXH64, as hash_file gives for the file), once every
** record has been read: a stream is hashed as it is read; a regular file when
** trace_hash_start was called after trace_open, on the chunks the reader
** reads (by whichever reading thread would wait, or a hasher thread when
** there is no read-ahead thread), so a stored run needs no second pass.
** trace_hash_hex gives it in hex; false before the end, after a rewind of a
** regular file, or when a regular file's hashing was not started. */
void trace_hash_start(struct trace_reader *r);
/* A caller that will not ask for the hash (a run not stored): a stream's
** content is then not hashed from here on; trace_hash_hex is false. */
void trace_hash_skip(struct trace_reader *r);
bool trace_hash_hex(struct trace_reader *r, char hex[HASH_HEX_LEN + 1]);

/* Writer: buffered; the header is rewritten with the final count on close. */
struct trace_writer {
  FILE *f;
  char *path;
  const char *label;               /* trace_set_label: the name in messages, when not path */
  struct trace_header hdr;
  struct trace_event *buf;
  size_t nbuf;
  size_t reserve;                  /* trace_create_reserved: bytes kept free before the records */
  bool stream;                     /* standard output: the header went out first */
  uint64_t declared, written;      /* stream: the count in its header, records written */
  char err[512];
};

/* workload and metadata (JSON text, may be NULL) are copied into the header. */
int  trace_create(struct trace_writer *w, const char *path, const char *workload,
                  unsigned vcpu_count, unsigned paging, const char *metadata);
/* Messages name label (the caller's, kept while w is open) instead of the
** file written: the output the user named, when path is its temporary file. */
void trace_set_label(struct trace_writer *w, const char *label);
/* A writer to standard output (`-o -`): the header goes out first and is not
** rewound.  count is the number of records the caller will write, or
** TRACE_COUNT_UNKNOWN: the header then says so (format version 2) and readers
** take the records up to the end of the input; when standard output is a
** regular file the header is rewritten with the count at the end.  A record's
** vCPU cannot grow the header's count.  A terminal is refused (EXIT_USAGE). */
int  trace_create_stdout(struct trace_writer *w, const char *workload, unsigned vcpu_count, unsigned paging,
                         const char *metadata, uint64_t count);
int  trace_write(struct trace_writer *w, const struct trace_event *ev);
/* Flushes and finalises; on failure the partial file is removed. */
int  trace_finish(struct trace_writer *w);

/*
** Writing records before the header is known (an importer learns the vCPUs,
** their initial registers and its metadata only at the end, and writes its
** output once): trace_create_reserved leaves `reserve` bytes free at the start
** and trace_write appends records after them; trace_finish_reserved then
** writes the header, the metadata and `nhead` records that go before all the
** others (the @init records) into that space, the rest of it becoming the
** header's pad (version 2).  EXIT_INTERNAL when they do not fit.  label (or
** NULL) is the name messages give, as with trace_set_label.
*/
int  trace_create_reserved(struct trace_writer *w, const char *path, const char *label, size_t reserve);
int  trace_finish_reserved(struct trace_writer *w, const char *workload, unsigned vcpu_count, unsigned paging,
                           const char *metadata, const struct trace_event *head, size_t nhead);
void trace_abort(struct trace_writer *w);   /* close and remove the file */
/*
** The same trace without the file (an import streamed into a replay): the
** header a reserved trace starts from (trace_header_reserved), each record
** counted into it as trace_write counts it (0, or EXIT_BADINPUT with the
** message in err), then the `reserve` bytes trace_finish_reserved would put
** before the records, in *out (malloc'd; the caller frees): a stream of these
** bytes and then the records is byte for byte the file.
*/
void trace_header_reserved(struct trace_header *h);
int  trace_header_count(struct trace_header *h, const struct trace_event *ev, char *err);
int  trace_reserved_prefix(const struct trace_header *counted, size_t reserve, const char *workload,
                           unsigned vcpu_count, unsigned paging, const char *metadata,
                           const struct trace_event *head, size_t nhead, unsigned char **out, char *err);

const char *event_mnemonic(unsigned type);          /* "?" when unknown */
/* Why a record's operands are impossible (a CR other than 0/3/4/8, DR > 7,
** level outside 1..4, I/O size not 1/2/4, touch of 0 or too many pages), or
** NULL when it is valid.  The type must already be known. */
const char *event_invalid(const struct trace_event *ev);
/* The event types whose operands event_invalid checks (for the others it
** always says valid), as a bit set: the reader checks only these. */
#define EVENT_OPERANDS_CHECKED                                                   \
  (1ull << EV_APIC | 1ull << EV_INIT | 1ull << EV_CR_WRITE | 1ull << EV_CR_READ | \
   1ull << EV_DR_WRITE | 1ull << EV_DR_READ | 1ull << EV_PTWRITE | 1ull << EV_IO | 1ull << EV_TOUCH |         \
   1ull << EV_MEASURED | 1ull << EV_STI | 1ull << EV_IRET | 1ull << EV_VIRQ | 1ull << EV_INVPCID |               \
   1ull << EV_TASK_SWITCH | 1ull << EV_VMX | 1ull << EV_PAUSE | 1ull << EV_WAIT)
int event_type_from_mnemonic(const char *m);         /* -1 when unknown */
const char *paging_name(unsigned paging);   /* "32", "pae", "64" or NULL */
int paging_from_name(const char *s);        /* -1 when unknown */

#endif
