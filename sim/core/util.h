/* Shared helpers: exit codes, error messages, number parsing, allocation. */
#ifndef VMXSIM_UTIL_H
#define VMXSIM_UTIL_H

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
};

/* Prints "vmxsim: <message>\n" to stderr. */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


/* Strict number parsing: whole string, decimal or 0x hex; false on junk or overflow. */
bool parse_u64(const char *s, uint64_t *out);
bool parse_double(const char *s, double *out);

/* Reads a whole file into a NUL-terminated buffer (caller frees); NULL with errno set. */
char *read_file(const char *path, size_t *len);

#endif
