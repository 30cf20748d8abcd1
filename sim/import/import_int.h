/* What import.c shares with import_stream.c: the input, one importer run, and
** what goes before the records of the trace it makes. */
#ifndef VMXSIM_IMPORT_INT_H
#define VMXSIM_IMPORT_INT_H

#include "import.h"

/* Room before the records for the header, the metadata and the @init records:
** the importer writes its events first and these at the end (trace_create_reserved). */
#define IMPORT_META_MAX (64u << 10)
#define IMPORT_RESERVE  (TRACE_HEADER_SIZE + IMPORT_META_MAX + 3 * TRACE_VCPU_MAX * sizeof(struct trace_event))

/* The recording: a mapped regular file, or what a stream held, in memory. */
/* An input in memory: mapped (a regular file; fd stays open until the close,
** for a reader that would rather read it than walk the mapping), or read. */
struct input { const char *data; size_t len; bool mapped; int fd; };
int import_input_open(struct input *in, const char *path, char *err, size_t errlen);
void import_input_close(struct input *in);

/* The job's importer over the input (in unused when it reads the path itself):
** 0 or an exit code with the message in im->err (or the emitter's). */
int import_convert(const struct import_job *job, struct import *im, const struct input *in);

/* After a run: the workload name, the metadata and the @init records, the
** arguments of trace_finish_reserved.  EXIT_BADINPUT (message in err) when
** the run found nothing it knows. */
struct import_head {
  char workload[TRACE_WORKLOAD_MAX + 1];
  char *meta;
  struct trace_event *inits;
  size_t ninits;
};
int import_head_of(const struct import_job *job, struct import *im, struct import_head *h, char *err, size_t errlen);
void import_head_free(struct import_head *h);

#endif
