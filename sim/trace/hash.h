/* Content hashes of trace files: XXH64 (seed 0), streamed so any size of file hashes in constant memory. */
#ifndef VMXSIM_HASH_H
#define VMXSIM_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xxh64 {
  uint64_t v[4];
  uint64_t total;               /* bytes fed so far */
  unsigned char buf[32];        /* a partial 32-byte stripe */
  unsigned nbuf;
};

void xxh64_init(struct xxh64 *h);
void xxh64_update(struct xxh64 *h, const void *data, size_t len);
uint64_t xxh64_final(const struct xxh64 *h);
uint64_t xxh64(const void *data, size_t len);

#define HASH_HEX_LEN 16   /* digits of a file hash, without the NUL */

/* Hashes the whole file into hex (16 lowercase digits and a NUL): its content,
** decompressed when it is gzip, xz or zstd (sim/trace/zin.h), so that a trace
** and its compressed copy hash the same.  Returns 0, or EXIT_BADINPUT with a
** message naming the file in err when it cannot be read. */
int hash_file(const char *path, char hex[HASH_HEX_LEN + 1], char *err, size_t errlen);

#endif
