/* What the trace tests share (test_trace_text.c, test_trace.c): a record made
** from its fields, and eight characters as a little-endian word (a mark's text). */
#ifndef VMXSIM_TEST_TRACE_HELPERS_H
#define VMXSIM_TEST_TRACE_HELPERS_H

#include <stdint.h>
#include <string.h>
#include "sim/trace/trace.h"

#define LE8(s) ((uint64_t)(s)[0] | (uint64_t)(s)[1] << 8 | (uint64_t)(s)[2] << 16 | (uint64_t)(s)[3] << 24 | \
                (uint64_t)(s)[4] << 32 | (uint64_t)(s)[5] << 40 | (uint64_t)(s)[6] << 48 | (uint64_t)(s)[7] << 56)

static inline struct trace_event rec(unsigned type, unsigned aux, uint64_t a, uint64_t b, uint32_t cycles) {
  struct trace_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = (uint8_t)type;
  ev.aux = (uint8_t)aux;
  ev.a = a;
  ev.b = b;
  ev.cycles = cycles;
  return ev;
}

#endif
