/* Option values several commands share (summary, run, calibrate): each parser
** prints its message and returns EXIT_USAGE on a bad value, 0 otherwise. */
#ifndef VMXSIM_OPTIONS_H
#define VMXSIM_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/import/import.h"
#include "sim/replay/views.h"

/* --interval N[us|ms|s|ev]: a width in microseconds (1 us .. INTERVAL_US_MAX) or in events (1 .. 2^64 - 1). */
#define INTERVAL_US_MAX 1e12
struct interval_opt { double us; uint64_t n; bool events; };

int option_vcpu(const char *s, int *vcpu);
/* --domain D: a Xen domain id, 0..65535. */
int option_domain(const char *s, int *domain);
int option_interval(const char *s, struct interval_opt *o);
int option_sort(const char *s, enum view_sort *sort);
int option_unsigned(const char *name, const char *s, unsigned *v);
int option_ghz(const char *s, double *ghz);
int option_format(const char *s, int *format);

/* The items of a comma-separated list (--policy A,B, --cpu C,D) one at a
** time: option_list_next returns the next item, cut in place (*rest moves
** past it, NULL after the last), or NULL at the end.  option_list_empty
** refuses an empty item (",a", "a,", "a,,b", an empty list) of option opt as
** an empty preset name ("a+") is, rather than passing over it. */
char *option_list_next(char **rest);
int option_list_empty(const char *opt, const char *list, const char *item);

/* --input-format: auto, vmxsim or an import format name. */
int option_input_format(const char *s);

/*
** A recording given where a trace is expected (run, summary, calibrate,
** compare --run): the format from --input-format or, for auto (or NULL), from
** the file's content (sim/import/import.h: import_detect); with --skip-bad,
** its unparseable lines are counted and skipped (as 'vmxsim import --skip-bad'
** does), and how many and the first of them are said on stderr.
**
** recording_import is for several passes (calibrate): it imports into a
** scratch directory, *trace the trace to read, *dir the directory (both NULL
** for a trace), deleted afterwards by recording_remove.  recording_stream is
** for one pass (run, summary): a recording in a regular file is imported as
** it is replayed, through a pipe, with no file between (*s: import_stream_open
** opens it, recording_stream_finish ends it); one on standard input or a pipe,
** which can be read once while the stream reads it twice, and a trace.dat,
** whose reader is a child process better not forked while other threads run,
** go through recording_import (*trace, *dir).  All NULL when path is a trace already.
** A recording replayed before is read once: its first conversion is
** remembered in the user's cache directory, and the whole conversion is kept
** there and read instead of the recording (sim/cli/stream_memo.h).
** Both return 0 or the import's exit code, after printing its message.
*/
struct recording_opts {
  const char *input_format;       /* --input-format; NULL: auto */
  bool skip_bad;                  /* --skip-bad */
};
/* --skip-bad's line in the usage of the commands that read recordings. */
#define RECORDING_SKIP_BAD_USAGE \
  "      --skip-bad        a recording's unparseable lines (and notes after a record)\n" \
  "                        are counted, said and skipped instead of failing (exit 3)\n"
/* The Xen domain (-1: every domain) the recordings imported from here on keep; required:
** a xentrace recording of several guest domains is refused without one (a replay). */
void recording_domain(int domain, bool required);
/* A replay takes one Xen domain: a trace file imported from a xentrace recording
** of several is refused (import it again with --domain), and domain (-1: none
** given) must be the one it holds; EXIT_USAGE, said.  A recording replayed
** directly is filtered by its import instead (recording_domain), and a pipe is
** left to the replay. */
int trace_domain_check(const char *trace, int domain);
int recording_import(const char *path, const struct recording_opts *ro, char **trace, char **dir);
struct import_stream;
int recording_stream(const char *path, const struct recording_opts *ro, struct import_stream **s, char **trace,
                     char **dir);
/* Ends a stream of recording_stream (import_stream_finish): 0, or an exit
** code with the message in err.  replay_rc is the replay's own result and
** read_hash the content hash of what it read (NULL or "" when it did not
** read to the end).  A first conversion remembered from an earlier replay
** (sim/cli/stream_memo.h) that the stream found wrong is forgotten; a kept
** copy of the conversion that was read must have the hash kept with it
** (else EXIT_BADINPUT) and is dropped when the replay found a bad record in
** it; a copy written as the stream went is kept when it is whole. */
int recording_stream_finish(struct import_stream *s, int replay_rc, const char *read_hash, char *err,
                            size_t errlen);
/* A recording in a regular file read in one pass (import_feed), every record
** to emit(ctx), for a reader that needs no header first (summary): 0 when
** done, with workload, *meta (the metadata JSON; the caller frees it) and
** *nvcpus (the trace's vCPU count);
** -1 when path is no such recording (a trace, a pipe, a format read by path:
** recording_stream reads those); or an exit code, the message printed. */
int recording_feed(const char *path, const struct recording_opts *ro,
                   int (*emit)(void *ctx, const struct trace_event *ev), void *ctx, char *workload, size_t wlen,
                   char **meta, unsigned *nvcpus);
/* recording_feed's lean pass (import.h, opt.notes): a xentrace recording's
** measured exits, a block of notes at a time to notes(ctx), and no records; the same results, or
** -1 when path is no xentrace recording in a regular file.  Without scan, one
** pass that gives up with IMPORT_NOT_LEAN (nothing said) on a recording with
** the scheduler's records or anything else but exits: the caller drops the
** exits noted and calls again with scan (the headers read first: any recording). */
int recording_notes(const char *path, const struct recording_opts *ro, import_notes_fn notes, bool scan, void *ctx,
                    char *workload, size_t wlen, char **meta, unsigned *nvcpus);
void recording_remove(char *trace, char *dir);

#endif
