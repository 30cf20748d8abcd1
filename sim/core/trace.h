/* Binary trace files: header, streaming reader and buffered writer (traces/FORMAT.md). */
#ifndef VMXSIM_TRACE_H
#define VMXSIM_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include "models/event.h"
#include "util.h"

#define TRACE_MAGIC        "VMXTRACE"
#define TRACE_VERSION      2
/* Event types each version knows: version 1 ends before EV_MEASURED. */
#define TRACE_V1_TYPES     EV_MEASURED
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
  uint64_t event_count;
  char     workload[TRACE_WORKLOAD_MAX + 1];
  char    *metadata;               /* JSON text, "" when none */
  uint32_t metadata_len;
  uint32_t pad;                    /* version 2: zero bytes between the metadata and the records */
};

/*
** Errors (docs/architecture-errors.md): the functions that can fail return 0
** or an enum exit_code: EXIT_BADINPUT for a file that cannot be read or
** written, is not a trace or is corrupt; EXIT_INTERNAL when out of memory.
** The reader and the writer live across calls (a record can be bad long
** after the open), so each keeps the message in its own err: "FILE: byte N:
** what" for the reader.
*/

/* Reader: reads records through a fixed buffer, so memory use does not grow
** with trace length. */
#define TRACE_READ_RECORDS 4096
struct trace_reader {
  const char *path;
  struct trace_header hdr;
  int fd;
  size_t file_len;
  struct trace_event *buf;         /* [TRACE_READ_RECORDS] */
  size_t buf_n, buf_i;             /* records in buf, next one to return */
  size_t data_off;                 /* byte offset of record 0 */
  uint64_t next;                   /* index of the next record to return */
  unsigned types;                  /* event types the file's version knows */
  char err[512];                   /* message of the last failure */
};

int  trace_open(struct trace_reader *r, const char *path);      /* 0 or EXIT_BADINPUT, r->err */
void trace_close(struct trace_reader *r);
/* Next record, or NULL at the end.  Validates type and vCPU; on a bad record
** returns NULL and sets r->err (check trace_failed()). */
const struct trace_event *trace_next(struct trace_reader *r);
int  trace_failed(const struct trace_reader *r);
void trace_rewind(struct trace_reader *r);

/* Writer: buffered; the header is rewritten with the final count on close. */
struct trace_writer {
  FILE *f;
  char *path;
  struct trace_header hdr;
  struct trace_event *buf;
  size_t nbuf;
  size_t reserve;                  /* trace_create_reserved: bytes kept free before the records */
  char err[512];
};

/* workload and metadata (JSON text, may be NULL) are copied into the header. */
int  trace_create(struct trace_writer *w, const char *path, const char *workload,
                  unsigned vcpu_count, unsigned paging, const char *metadata);
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
** header's pad (version 2).  EXIT_INTERNAL when they do not fit.
*/
int  trace_create_reserved(struct trace_writer *w, const char *path, size_t reserve);
int  trace_finish_reserved(struct trace_writer *w, const char *workload, unsigned vcpu_count, unsigned paging,
                           const char *metadata, const struct trace_event *head, size_t nhead);
void trace_abort(struct trace_writer *w);   /* close and remove the file */

const char *event_mnemonic(unsigned type);          /* "?" when unknown */
/* Why a record's operands are impossible (a CR other than 0/3/4/8, DR > 7,
** level outside 1..4, I/O size not 1/2/4, touch of 0 or too many pages), or
** NULL when it is valid.  The type must already be known. */
const char *event_invalid(const struct trace_event *ev);
int event_type_from_mnemonic(const char *m);         /* -1 when unknown */
const char *paging_name(unsigned paging);   /* "32", "pae", "64" or NULL */
int paging_from_name(const char *s);        /* -1 when unknown */

#endif
