/* gen-xentrace: writes a synthetic xentrace file of a given size, for benchmarks and tests.
**
**   gen-xentrace [-n EXITS] [-c PCPUS] [-s SEED] -o OUT
**
** The layout is xentrace's (Xen's xen/include/public/trace.h, tools/xentrace/xentrace.c):
** records of a u32 header {event:28, extra words:3, TSC present:1}, the TSC as two u32 when
** present, then the extra words; each physical CPU's buffer is written as a window that
** starts with a TRC_TRACE_CPU_CHANGE record {cpu, window bytes}.  Every exit is a
** TSC-stamped TRC_HVM_VMEXIT64 {reason, rip lo, rip hi}, one handler record and a
** TSC-stamped TRC_HVM_VMENTRY, the handler records being those of a shadow-paging guest:
** CR_WRITE64 (CR3 over 8 address spaces, CR4 toggling PGE), MSR_WRITE, CPUID, HLT and
** IOPORT_WRITE.  Exit costs and guest time come from a fixed pseudo-random sequence, so the
** same arguments write the same bytes.  About 52 bytes per exit: -n 10000000 writes 520 MB.
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRC_TRACE_CPU_CHANGE 0x0001f003u
#define TRC_HVM_VMENTRY      0x00081001u
#define TRC_HVM_VMEXIT64     0x00081102u
#define TRC_HVM_CR_WRITE64   0x00082109u
#define TRC_HVM_MSR_WRITE    0x0008200du
#define TRC_HVM_CPUID        0x0008200eu
#define TRC_HVM_HLT          0x00082013u
#define TRC_HVM_IOPORT_WRITE 0x00082216u

#define WINDOW_EXITS 1024           /* exits per CPU window */
#define MAX_PCPUS 64

static uint64_t seed = 1;
static uint32_t rnd(uint32_t n) {   /* 0..n-1 */
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)((seed >> 33) % n);
}

struct window { unsigned char buf[WINDOW_EXITS * 64]; size_t n; };

static void put32(struct window *w, uint32_t v) {
  for (int i = 0; i < 4; i++) w->buf[w->n++] = (unsigned char)(v >> (8 * i));
}

static void rec(struct window *w, uint32_t event, const uint64_t *tsc, unsigned nextra, const uint32_t *extra) {
  put32(w, event | nextra << 28 | (tsc ? 1u << 31 : 0));
  if (tsc) { put32(w, (uint32_t)*tsc); put32(w, (uint32_t)(*tsc >> 32)); }
  for (unsigned i = 0; i < nextra; i++) put32(w, extra[i]);
}

/* One exit: its reason, handler record and cost in TSC cycles. */
static void exit_of(struct window *w, uint64_t *tsc, unsigned cpu) {
  static const uint32_t cr3s[8] = { 0x1234000, 0x1335000, 0x1436000, 0x1537000, 0x1638000, 0x1739000, 0x183a000, 0x193b000 };
  static const uint32_t msrs[3] = { 0x6e0, 0x830, 0xc0000080 }, leaves[4] = { 0, 1, 7, 0xb }, ports[4] = { 0x70, 0x71, 0x3f8, 0xcf8 };
  static uint32_t cr4[MAX_PCPUS];
  uint32_t k = rnd(100), reason, cost, x[5] = { 0 };
  uint64_t rip = 0xffffffff81000000ull + rnd(0x100000);
  *tsc += 2000 + rnd(30000);                                   /* guest time */
  if (k < 45)      { reason = 28; x[0] = 3; x[1] = cr3s[rnd(8)]; cost = 1500 + rnd(2500); }
  else if (k < 60) { reason = 28; x[0] = 4; x[1] = (cr4[cpu] ^= 0x80) | 0x320670; cost = 800 + rnd(700); }
  else if (k < 75) { reason = 32; x[0] = msrs[rnd(3)]; x[1] = 0x1234; cost = 1000 + rnd(1500); }
  else if (k < 85) { reason = 10; x[0] = leaves[rnd(4)]; cost = 600 + rnd(600); }
  else if (k < 93) { reason = 30; x[0] = ports[rnd(4)]; x[1] = 0x5a; cost = 3000 + rnd(6000); }
  else             { reason = 12; cost = 5000 + rnd(45000); }
  uint32_t e[3] = { reason, (uint32_t)rip, (uint32_t)(rip >> 32) };
  rec(w, TRC_HVM_VMEXIT64, tsc, 3, e);
  switch (reason) {
  case 28: rec(w, TRC_HVM_CR_WRITE64, NULL, 3, x); break;
  case 32: rec(w, TRC_HVM_MSR_WRITE, NULL, 3, x); break;
  case 10: rec(w, TRC_HVM_CPUID, NULL, 5, x); break;
  case 30: rec(w, TRC_HVM_IOPORT_WRITE, NULL, 2, x); break;
  default: rec(w, TRC_HVM_HLT, NULL, 1, x); break;
  }
  *tsc += cost;
  rec(w, TRC_HVM_VMENTRY, tsc, 0, NULL);
}

static int usage(void) {
  fprintf(stderr, "usage: gen-xentrace [-n EXITS] [-c PCPUS (1..%d)] [-s SEED] -o OUT\n", MAX_PCPUS);
  return 2;
}

int main(int argc, char **argv) {
  unsigned long long exits = 2000;
  unsigned pcpus = 1;
  const char *out = NULL;
  int c;
  while ((c = getopt(argc, argv, "n:c:s:o:")) != -1) {
    switch (c) {
    case 'n': exits = strtoull(optarg, NULL, 10); break;
    case 'c': pcpus = (unsigned)atoi(optarg); break;
    case 's': seed = strtoull(optarg, NULL, 10); break;
    case 'o': out = optarg; break;
    default: return usage();
    }
  }
  if (!out || pcpus < 1 || pcpus > MAX_PCPUS || optind != argc) return usage();
  FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
  if (!f) { fprintf(stderr, "gen-xentrace: %s: %s\n", out, strerror(errno)); return 1; }
  static struct window w;
  uint64_t tsc[MAX_PCPUS];
  for (unsigned p = 0; p < pcpus; p++) tsc[p] = 1000000 + 500 * p;
  for (unsigned long long done = 0, win = 0; done < exits; win++) {
    unsigned cpu = (unsigned)(win % pcpus);
    w.n = 0;
    for (unsigned i = 0; i < WINDOW_EXITS && done < exits; i++, done++) exit_of(&w, &tsc[cpu], cpu);
    struct window head = { .n = 0 };
    rec(&head, TRC_TRACE_CPU_CHANGE, NULL, 2, (uint32_t[]){ cpu, (uint32_t)w.n });
    if (fwrite(head.buf, 1, head.n, f) != head.n || fwrite(w.buf, 1, w.n, f) != w.n) {
      fprintf(stderr, "gen-xentrace: %s: write failed: %s\n", out, strerror(errno));
      return 1;
    }
  }
  if (f != stdout && fclose(f) != 0) { fprintf(stderr, "gen-xentrace: %s: %s\n", out, strerror(errno)); return 1; }
  return 0;
}
