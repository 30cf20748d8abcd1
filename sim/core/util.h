/* Shared helpers: exit codes, error messages, number parsing, time, interruption, files. */
#ifndef VMXSIM_UTIL_H
#define VMXSIM_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "models/alloc.h"

/* Process exit codes (documented in `vmxsim --help`). */
enum exit_code {
  EXIT_OK = 0,
  EXIT_USAGE = 2,        /* bad option, unknown command/policy/knob */
  EXIT_BADINPUT = 3,     /* unreadable or corrupt trace, malformed JSON or text */
  EXIT_VMENTRY = 4,      /* the configuration fails VM entry (e.g. CR3_TARGET_COUNT) */
  EXIT_DB = 5,           /* results database error (the result was still printed) */
  EXIT_REGRESS = 6,      /* a regression case failed */
  EXIT_INTERNAL = 70,    /* bug or resource exhaustion */
  EXIT_INTERRUPTED = 130, /* stopped by Ctrl-C (SIGINT) or SIGTERM: 128 + SIGINT, as shells report it */
};

/* Prints "vmxsim: <message>\n" to stderr. */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


/* Strict number parsing: whole string, decimal or 0x hex; false on junk or overflow. */
bool parse_u64(const char *s, uint64_t *out);
bool parse_double(const char *s, double *out);

/* The shortest decimal text that strtod reads back as exactly v (at most 17
** significant digits: "9.92236109375", not "9.9223610937500002"; "3", "1e+20";
** "nan", "inf" and "-inf" as printf writes them).  Returns buf. */
#define NUM_TEXT_MAX 32
const char *num_shortest(char buf[NUM_TEXT_MAX], double v);

/* Seconds on a monotonic clock: differences measure elapsed time. */
double monotonic_seconds(void);

/*
** Interruption of a long command (a replay, a batch of regression cases):
** while caught, SIGINT (and SIGTERM when asked) only raise a flag, which the
** command polls to stop cleanly and report EXIT_INTERRUPTED.  The handler is
** installed without SA_RESTART, so a blocking select() or read() returns
** EINTR and the flag is seen at once.
*/
struct interrupt_catch { bool term; };
/* Clears the flag and installs the handler. */
void interrupt_catch(struct interrupt_catch *c, bool sigterm_too);
/* Gives the signals their default action back, so that a later Ctrl-C ends
** the process (storing a result, for instance), also where the shell started
** it with SIGINT ignored, as it does a background job. */
void interrupt_release(const struct interrupt_catch *c);
bool interrupt_requested(void);
void interrupt_clear(void);

/* The data files vmxsim uses at run time (the gnuplot scripts of reproduce
** --plots): "plot/bars.gp" is looked up in $VMXSIM_DATADIR, then beside the
** running program as installed (BIN/../share/vmxsim/, `make install`), then
** as in the source tree (build/../scripts/).  Writes the path of the first
** that exists into buf and returns it; NULL (and buf lists where it looked)
** when none does. */
#define DATADIR_ENV "VMXSIM_DATADIR"
const char *data_file(const char *name, char *buf, size_t n);

/* Reads a whole file into a NUL-terminated buffer (caller frees); NULL with errno set. */
char *read_file(const char *path, size_t *len);

#endif
