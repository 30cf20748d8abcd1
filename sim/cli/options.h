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

#endif
