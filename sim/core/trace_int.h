/*
** What the binary trace's reader (trace.c) and writer (trace_write.c) share:
** the header's layout and its little-endian fields (traces/FORMAT.md).
** Private to those two files.
*/
#ifndef VMXSIM_TRACE_INT_H
#define VMXSIM_TRACE_INT_H

#include <stdint.h>

/* Header layout (offsets in bytes), see traces/FORMAT.md. */
enum {
  H_MAGIC = 0, H_VERSION = 8, H_RECSIZE = 10, H_VCPUS = 12, H_PAGING = 14,
  H_FLAGS = 15, H_COUNT = 16, H_METALEN = 24, H_PAD = 28, H_WORKLOAD = 32
};

static inline uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t get32(const unsigned char *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static inline uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }
static inline void put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void put32(unsigned char *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static inline void put64(unsigned char *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

/* Formats a message into err (the 512 bytes of a reader's or writer's err)
** and returns rc. */
int trace_fail(char *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
