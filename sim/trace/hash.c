/* XXH64 (Yann Collet's xxHash, 64-bit, seed 0): a fast, well-known hash, so a
** stored trace hash can be checked with `xxhsum -H1 FILE`. */
#include "hash.h"
#include "zin.h"
#include "sim/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static uint64_t rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

/* Little-endian loads (traces are little-endian files).  On a little-endian
** host a load is one instruction; memcpy keeps it free of alignment and
** aliasing assumptions. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
#else
static uint64_t rd64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
#endif

static uint64_t round1(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
static uint64_t merge(uint64_t acc, uint64_t v) { return (acc ^ round1(0, v)) * P1 + P4; }

static void stripe(struct xxh64 *h, const unsigned char *p) {
  for (int i = 0; i < 4; i++) h->v[i] = round1(h->v[i], rd64(p + 8 * i));
}

void xxh64_init(struct xxh64 *h) {
  memset(h, 0, sizeof *h);
  h->v[0] = P1 + P2;
  h->v[1] = P2;
  h->v[2] = 0;
  h->v[3] = -P1;
}

void xxh64_update(struct xxh64 *h, const void *data, size_t len) {
  const unsigned char *p = data;
  h->total += len;
  if (h->nbuf) {                       /* complete the pending stripe first */
    size_t take = 32 - h->nbuf < len ? 32 - h->nbuf : len;
    memcpy(h->buf + h->nbuf, p, take);
    h->nbuf += (unsigned)take;
    p += take;
    len -= take;
    if (h->nbuf < 32) return;
    stripe(h, h->buf);
    h->nbuf = 0;
  }
  if (len >= 32) {
    /* The four lanes in locals: through h they would be reloaded after every
    ** load from p, which may alias h. */
    uint64_t v0 = h->v[0], v1 = h->v[1], v2 = h->v[2], v3 = h->v[3];
    for (; len >= 32; p += 32, len -= 32) {
      v0 = round1(v0, rd64(p));
      v1 = round1(v1, rd64(p + 8));
      v2 = round1(v2, rd64(p + 16));
      v3 = round1(v3, rd64(p + 24));
    }
    h->v[0] = v0;
    h->v[1] = v1;
    h->v[2] = v2;
    h->v[3] = v3;
  }
  memcpy(h->buf, p, len);
  h->nbuf = (unsigned)len;
}

uint64_t xxh64_final(const struct xxh64 *h) {
  uint64_t acc;
  if (h->total >= 32) {
    acc = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) + rotl(h->v[3], 18);
    for (int i = 0; i < 4; i++) acc = merge(acc, h->v[i]);
  } else {
    acc = P5;                          /* seed 0 */
  }
  acc += h->total;
  const unsigned char *p = h->buf;
  unsigned n = h->nbuf;
  for (; n >= 8; p += 8, n -= 8) acc = rotl(acc ^ round1(0, rd64(p)), 27) * P1 + P4;
  if (n >= 4) {
    acc = rotl(acc ^ (uint64_t)rd32(p) * P1, 23) * P2 + P3;
    p += 4;
    n -= 4;
  }
  for (; n; p++, n--) acc = rotl(acc ^ *p * P5, 11) * P1;
  acc ^= acc >> 33;
  acc *= P2;
  acc ^= acc >> 29;
  acc *= P3;
  acc ^= acc >> 32;
  return acc;
}

uint64_t xxh64(const void *data, size_t len) {
  struct xxh64 h;
  xxh64_init(&h);
  xxh64_update(&h, data, len);
  return xxh64_final(&h);
}

int hash_file(const char *path, char hex[HASH_HEX_LEN + 1], char *err, size_t errlen) {
  enum { CHUNK = 1 << 20 };
  struct zin z;
  if (zin_open(&z, path) != EXIT_OK) {
    snprintf(err, errlen, "%s (reading it to hash it)", z.err);
    zin_close(&z);
    return EXIT_BADINPUT;
  }
  unsigned char *buf = xmalloc(CHUNK);
  struct xxh64 h;
  xxh64_init(&h);
  ssize_t got;
  while ((got = zin_read(&z, buf, CHUNK)) > 0) xxh64_update(&h, buf, (size_t)got);
  if (got < 0) snprintf(err, errlen, "%s (reading it to hash it)", z.err);
  else snprintf(hex, HASH_HEX_LEN + 1, "%016llx", (unsigned long long)xxh64_final(&h));
  free(buf);
  zin_close(&z);
  return got < 0 ? EXIT_BADINPUT : EXIT_OK;
}
