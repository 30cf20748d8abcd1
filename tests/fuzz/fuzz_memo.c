/* libFuzzer harness: the entries of remembered first conversions of
** recordings (sim/cli/stream_memo.c, read from the user's cache directory by
** every replay of a recording).  The input is read as an entry, exactly its
** bytes: it is refused unless it is whole, for the identity asked, with its
** checksum, and an accepted one builds back to the same bytes.  Then an entry
** is built from the input (its first bytes as the prefix, the count and hashes
** and the kept copy's size from the input) and must read back as built, and with any one byte changed
** (the one the input's last byte picks) must be refused. */
#include "fuzz.h"
#include "sim/cli/stream_memo.h"

#define IDENTITY    "vmxsim (fuzz), format xentrace\nrecording /fuzz\n"
#define PREFIX_SIZE 64

static void check_as_read(const uint8_t *data, size_t size) {
  struct import_stream_known k;
  if (!stream_memo_parse(data, size, IDENTITY, PREFIX_SIZE, &k)) return;
  size_t n;
  unsigned char *b = stream_memo_build(IDENTITY, &k, PREFIX_SIZE, &n);
  if (n != size || memcmp(b, data, n)) { fprintf(stderr, "an accepted entry does not build back to itself\n"); abort(); }
  free(b);
}

static void check_as_built(const uint8_t *data, size_t size) {
  unsigned char prefix[PREFIX_SIZE] = { 0 };
  memcpy(prefix, data, size < PREFIX_SIZE ? size : PREFIX_SIZE);
  uint64_t a = 0, b = 0;
  for (size_t i = 0; i < size; i++) {
    uint64_t *h = i & 1 ? &a : &b;
    *h = *h * 131 + data[i];
  }
  struct import_stream_known k = { .prefix = prefix, .records = a, .records_hash = b, .kept_bytes = a ^ b,
                                   .kept_hash = a + b }, got;
  size_t n;
  unsigned char *e = stream_memo_build(IDENTITY, &k, PREFIX_SIZE, &n);
  if (!stream_memo_parse(e, n, IDENTITY, PREFIX_SIZE, &got) || got.records != a || got.records_hash != b ||
      got.kept_bytes != (a ^ b) || got.kept_hash != a + b ||
      memcmp(got.prefix, prefix, PREFIX_SIZE)) {
    fprintf(stderr, "a built entry does not read back as built\n");
    abort();
  }
  size_t at = size ? (size_t)data[size - 1] * 977 % n : 0;
  e[at] ^= (unsigned char)(size > 1 ? data[size - 2] | 1 : 1);
  if (stream_memo_parse(e, n, IDENTITY, PREFIX_SIZE, &got)) {
    fprintf(stderr, "an entry with byte %zu changed is accepted\n", at);
    abort();
  }
  free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);     /* exactly size bytes readable: over-reads are caught */
  if (size) memcpy(copy, data, size);
  check_as_read(copy, size);
  check_as_built(copy, size);
  free(copy);
  return 0;
}
