/* Option values several commands share (summary, run, calibrate): each parser
** prints its message and returns EXIT_USAGE on a bad value, 0 otherwise. */
#ifndef VMXSIM_OPTIONS_H
#define VMXSIM_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/core/views.h"

/* --interval N[us|ms|s|ev]: a width in microseconds or in events. */
struct interval_opt { double us; uint64_t n; bool events; };

int option_vcpu(const char *s, int *vcpu);
int option_interval(const char *s, struct interval_opt *o);
int option_sort(const char *s, enum view_sort *sort);
int option_unsigned(const char *name, const char *s, unsigned *v);
int option_ghz(const char *s, double *ghz);
int option_format(const char *s, int *format);

/* --input-format: auto, vmxsim or an import format name. */
int option_input_format(const char *s);

/*
** A recording given where a trace is expected (run, summary, calibrate): the
** format from --input-format or, for auto (or NULL), from the file's content
** (sim/import/import.h: import_detect).  A recording is imported into a
** scratch directory: *trace is the trace to read, *dir the directory; both
** NULL when path is a trace already.  Returns 0 or the import's exit code
** (printed).  recording_remove deletes them afterwards.
**
** This is an import then a replay, not one streaming pass: the engine needs
** the vCPU count and each vCPU's @init registers before the first event,
** which an importer knows only at its end.
*/
int recording_import(const char *path, const char *input_format, char **trace, char **dir);
void recording_remove(char *trace, char *dir);

#endif
