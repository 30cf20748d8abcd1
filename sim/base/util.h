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
  EXIT_IO = 74,          /* an output file cannot be written (full disk, I/O error, read-only
                            file system, no permission): not the input's fault (sysexits.h's EX_IOERR) */
  EXIT_INTERNAL = 70,    /* bug or resource exhaustion */
  EXIT_INTERRUPTED = 130, /* stopped by Ctrl-C (SIGINT): 128 + SIGINT, as shells report it */
  EXIT_TERMINATED = 143,  /* stopped by SIGTERM (kill, Slurm's time limit): 128 + SIGTERM */
};

/* A growing text: strbuf_add and strbuf_printf append to s (NUL-terminated;
** NULL until the first append); its owner frees s. */
struct strbuf {
  char *s;
  size_t len, cap;
};
void strbuf_add(struct strbuf *b, const char *s, size_t n);
void strbuf_puts(struct strbuf *b, const char *s);   /* the whole of s */
void strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as one word of a command (not its first) that sh reads back as s: as it
** is when every byte is a letter, a digit or one of "%+,-./:@_" (so an ordinary
** path stays readable), else in single quotes, a quote written '\'' and a
** backslash '\\' (outside the quotes: Slurm's #SBATCH lines, which read this
** form back alike, take a backslash as an escape even inside quotes).
** shell_quote_always quotes every word, so the values of a script look alike.
** A control character is copied as it is: a newline stays harmless to sh in
** quotes but not to a line-based reader such as sbatch, so what goes into a
** script is refused beforehand (control_char). */
void shell_quote(struct strbuf *b, const char *s);
void shell_quote_always(struct strbuf *b, const char *s);

/* The first control character of s (a byte below 0x20, or 0x7f), or NULL. */
const char *control_char(const char *s);

/* Prints "vmxsim: <message>\n" to stderr. */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


/* Strict number parsing: the whole string, decimal or 0x hex digits (no sign,
** no blank); false on anything else or overflow.  Never octal: a decimal of
** several digits with a leading 0 ("010") is refused, because C (strtoull with
** base 0, scanf's %i) would read it as octal 8 and a user may mean 10.
** parse_u64_hint(s) says why s was refused when the text alone does not (a
** leading 0): "" or a parenthesis, with a leading blank, to end a message.
** parse_double takes only finite numbers: "nan" and "inf" are no values any
** option means. */
bool parse_u64(const char *s, uint64_t *out);
const char *parse_u64_hint(const char *s);
bool parse_double(const char *s, double *out);

/* A clock in GHz, wherever one is given: a CPU profile's clock_ghz, the
** --cpu-ghz of the generators, the importers and summary, and a trace's
** metadata cpu_ghz.  (0, 10]: no x86 core clock or TSC runs above 6 GHz, and
** a time of up to 10^12 us (--interval's bound) stays below 2^63 cycles. */
#define CLOCK_GHZ_MAX 10.0
static inline bool clock_ghz_in_range(double ghz) { return ghz > 0 && ghz <= CLOCK_GHZ_MAX; }

/* The shortest decimal text that strtod reads back as exactly v (at most 17
** significant digits: "9.92236109375", not "9.9223610937500002"; "3", "1e+20";
** "nan", "inf" and "-inf" as printf writes them).  Returns buf. */
#define NUM_TEXT_MAX 32
const char *num_shortest(char buf[NUM_TEXT_MAX], double v);

/* Seconds on a monotonic clock: differences measure elapsed time. */
double monotonic_seconds(void);

/*
** Signals.  SIGINT and SIGTERM have one handler, installed by
** interrupt_install() (main does it first): by default it removes the
** temporary files and directories the process is writing (the hook set by
** interrupt_on_exit: outfile.c's) and ends the process with 128 + the signal's
** number (130 for SIGINT, 143 for SIGTERM), so no command leaves a partial
** file behind.
**
** A long command (a replay, a batch of regression cases) that wants to stop
** cleanly instead catches them: while caught, SIGINT (and SIGTERM when asked)
** only raise a flag, which the command polls to stop and report
** EXIT_INTERRUPTED; main turns that into interrupt_exit_status().  The handler
** is installed without SA_RESTART, so a blocking select() or read() returns
** EINTR and the flag is seen at once.  Signals the shell ignored (a
** background job's SIGINT) are handled too, as a user who sends one means it.
*/
void interrupt_install(void);
/* The function the handler calls before ending the process; it must be
** async-signal-safe. */
void interrupt_on_exit(void (*cleanup)(void));
struct interrupt_catch { bool term; };
/* Clears the flag and makes the signals raise it. */
void interrupt_catch(struct interrupt_catch *c, bool sigterm_too);
/* Back to the default: a later Ctrl-C (while storing a result, for instance)
** removes the temporary files and ends the process. */
void interrupt_release(const struct interrupt_catch *c);
bool interrupt_requested(void);
void interrupt_clear(void);
/* The exit status of a command that stopped on a caught signal: 130 after
** SIGINT, 143 after SIGTERM. */
int interrupt_exit_status(void);

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

/* How a file named by another file is read: `vmxsim regress` reads the trace,
** policy and CPU files its case files name, and a case file is not the user's
** own choice of file to look into.  0 for a file the user named. */
enum input_flags {
  /* Messages name the file, the line or byte and what was expected, but quote
  ** none of its text (a key, a value, a word, the bytes near an error): the
  ** file could be anyone's that the user can read. */
  INPUT_HIDE_CONTENT = 1,
  /* Only a regular file is read: a FIFO, a device or a directory is refused
  ** before a read could wait for ever (a FIFO without a writer, a terminal)
  ** or never end (/dev/zero). */
  INPUT_REGULAR_ONLY = 2,
};
/* Opens path for reading, as flags (enum input_flags) allow.  Returns the
** descriptor, or -1 with "PATH: why" in err. */
int input_open(const char *path, unsigned flags, char *err, size_t errlen);
/* read_file from an open descriptor, which it closes. */
char *read_fd(int fd, size_t *len);

/* vmxsim's cache directory for leaf (the XDG Base Directory rule: an absolute
** $XDG_CACHE_HOME, a relative one being ignored, else $HOME/.cache; then
** vmxsim/leaf), malloc'd; NULL when neither names a place. */
char *user_cache_dir(const char *leaf);

/* The edit distance between a and b (insertions, deletions, substitutions and
** transpositions of adjacent characters: optimal string alignment), or
** limit + 1 when it is above limit; for "did you mean" hints. */
unsigned edit_distance(const char *a, const char *b, unsigned limit);

#endif
