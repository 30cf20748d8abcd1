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
**
** With -d (a host): the file is what a default Xen host records with the HVM and scheduler
** classes on, here for D guest domains of -v vCPUs each, a PVH dom0 of -0 vCPUs and the idle
** domain (32767, one vCPU per pCPU), none pinned: a small scheduler runs the vCPUs on the -c
** pCPUs, so a vCPU leaves a pCPU in the middle of an exit (preempted at a timer interrupt,
** EXTERNAL_INTERRUPT; blocked at HLT and woken later) and comes back on another, each step
** stated by a TSC-stamped TRC_SCHED_RUNSTATE_CHANGE {vcpu, domain} (old and new runstate in
** the event's bits 11:8 and 7:4) as Xen's trace_runstate_change writes it, the first of each
** pCPU a TRC_SCHED_CONTINUE_RUNNING of its idle vCPU.  Each pCPU's records go to its own
** buffer, written as windows of about -w bytes in turn, as xentrace writes them.  -l N drops
** the records of N stretches of a running vCPU's exits and writes the TRC_LOST_RECORDS marker
** {count, domain | vcpu << 16, first lost TSC} Xen writes after such a gap.  -x leaves the
** HVM records out (a recording taken with the scheduler's class only).
**
**   gen-xentrace -d GUESTS [-v VCPUS] [-0 DOM0_VCPUS] [-c PCPUS] [-l LOSSES] [-w BYTES] [-x]
**                [-n EXITS] [-s SEED] -o OUT
*/
#include <errno.h>
#include <stdbool.h>
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
#define TRC_HVM_INTR         0x0008200fu
#define TRC_LOST_RECORDS     0x0001f001u
#define TRC_SCHED_RUNSTATE_CHANGE 0x00021001u
#define TRC_SCHED_CONTINUE_RUNNING 0x00021002u

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
  fprintf(stderr, "usage: gen-xentrace [-n EXITS] [-c PCPUS (1..%d)] [-s SEED] -o OUT\n"
                  "       gen-xentrace -d GUESTS [-v VCPUS] [-0 DOM0_VCPUS] [-l LOSSES] [-w BYTES] [-x] [-c PCPUS]\n"
                  "                    [-n EXITS] [-s SEED] -o OUT\n", MAX_PCPUS);
  return 2;
}

/* ---- a host (-d): guest domains, dom0 and the idle domain under a small scheduler ---- */

#define MAX_VCPUS 64
#define IDLE_DOMAIN 32767u
enum { RS_RUNNING, RS_RUNNABLE, RS_BLOCKED };

struct host { unsigned guests, vcpus, dom0_vcpus, losses, window; bool no_hvm; };

static bool host_ok(const struct host *h) {
  return h->guests <= 16 && h->vcpus >= 1 && h->guests * h->vcpus + h->dom0_vcpus <= MAX_VCPUS &&
         h->window >= 64 && h->window <= (1u << 20);
}

/* One pCPU's buffer: its records' bytes and where each starts. */
struct pbuf { unsigned char *b; size_t n, cap, *at, nat, capat; };

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  while (*cap < need) *cap = *cap ? 2 * *cap : 4096;
  p = realloc(p, *cap * size);
  if (!p) { fprintf(stderr, "gen-xentrace: out of memory\n"); exit(1); }
  return p;
}

static void pbuf_rec(struct pbuf *w, uint32_t event, const uint64_t *tsc, unsigned nextra, const uint32_t *extra) {
  w->at = grow(w->at, &w->capat, w->nat + 1, sizeof *w->at);
  w->at[w->nat++] = w->n;
  w->b = grow(w->b, &w->cap, w->n + 4 * (3 + nextra), 1);
  uint32_t words[10], k = 0;
  words[k++] = event | nextra << 28 | (tsc ? 1u << 31 : 0);
  if (tsc) { words[k++] = (uint32_t)*tsc; words[k++] = (uint32_t)(*tsc >> 32); }
  for (unsigned i = 0; i < nextra; i++) words[k++] = extra[i];
  for (unsigned i = 0; i < k; i++)
    for (int j = 0; j < 4; j++) w->b[w->n++] = (unsigned char)(words[i] >> (8 * j));
}

struct hvcpu {
  unsigned dom, vid;
  int state;
  uint64_t ready, slice_end;   /* runnable or woken from `ready`; preempted after slice_end */
  uint32_t cr4;
};

struct hpcpu {
  struct pbuf out;
  uint64_t now;
  int cur;                     /* the vCPU running; -1 the idle vCPU */
  unsigned drop;               /* exits of a lost stretch still to drop */
  uint32_t dropped;            /* records dropped in it */
  uint64_t first_dropped;
};

struct sim {
  unsigned np, nv, losses;
  bool no_hvm;
  struct hvcpu v[MAX_VCPUS];
  struct hpcpu p[MAX_PCPUS];
};

/* A record on pCPU p at its clock (dropped inside a lost stretch). */
static void put(struct sim *S, unsigned p, uint32_t event, bool stamped, unsigned nextra, const uint32_t *extra) {
  struct hpcpu *P = &S->p[p];
  if (S->no_hvm && (event & 0x0fff0000u) == 0x00080000u) return;   /* the HVM class */
  if (P->drop) {
    if (!P->dropped++) P->first_dropped = P->now;
    return;
  }
  pbuf_rec(&P->out, event, stamped ? &P->now : NULL, nextra, extra);
}

static void runstate(struct sim *S, unsigned p, unsigned dom, unsigned vid, unsigned from, unsigned to) {
  put(S, p, TRC_SCHED_RUNSTATE_CHANGE | from << 8 | to << 4, true, 1, (uint32_t[]){ vid | dom << 16 });
  S->p[p].now += 50 + rnd(200);
}

/* The vCPU to run next: the one runnable, or woken, first. */
static int pick(const struct sim *S) {
  int best = -1;
  for (unsigned i = 0; i < S->nv; i++)
    if (S->v[i].state != RS_RUNNING && (best < 0 || S->v[i].ready < S->v[best].ready)) best = (int)i;
  return best;
}

/* The idle vCPU of pCPU p gives way to v, which re-enters its guest. */
static void schedule_in(struct sim *S, unsigned p, int i) {
  struct hpcpu *P = &S->p[p];
  struct hvcpu *v = &S->v[i];
  if (P->now <= v->ready) P->now = v->ready + 1 + rnd(500);
  if (v->state == RS_BLOCKED) runstate(S, p, v->dom, v->vid, RS_BLOCKED, RS_RUNNABLE);   /* woken here */
  runstate(S, p, IDLE_DOMAIN, p, RS_RUNNING, RS_RUNNABLE);
  runstate(S, p, v->dom, v->vid, RS_RUNNABLE, RS_RUNNING);
  v->state = RS_RUNNING;
  v->slice_end = P->now + 40000 + rnd(100000);
  P->cur = i;
  put(S, p, TRC_HVM_VMENTRY, true, 0, NULL);
}

/* v leaves pCPU p in the middle of its exit, for state `to`; the idle vCPU runs. */
static void schedule_out(struct sim *S, unsigned p, unsigned to, uint64_t away) {
  struct hpcpu *P = &S->p[p];
  struct hvcpu *v = &S->v[P->cur];
  P->now += 300 + rnd(1500);
  runstate(S, p, v->dom, v->vid, RS_RUNNING, to);
  v->state = (int)to;
  v->ready = P->now + away;
  runstate(S, p, IDLE_DOMAIN, p, RS_RUNNABLE, RS_RUNNING);
  P->cur = -1;
}

/* One exit of the vCPU running on p: a timer interrupt (which may preempt it), HLT
** (which blocks it until a wake-up) or one of exit_of's. */
static void host_exit(struct sim *S, unsigned p) {
  static const uint32_t cr3s[4] = { 0x2234000, 0x2335000, 0x2436000, 0x2537000 };
  struct hpcpu *P = &S->p[p];
  struct hvcpu *v = &S->v[P->cur];
  P->now += 2000 + rnd(30000);                                  /* guest time */
  uint32_t k = P->drop ? rnd(60) : rnd(100), reason, cost, x[5] = { 0 }, handler, words;
  uint64_t rip = 0xffffffff81000000ull + rnd(0x100000);
  if (k < 25)      { reason = 28; handler = TRC_HVM_CR_WRITE64; words = 3; x[0] = 3; x[1] = cr3s[rnd(4)]; cost = 1500 + rnd(2500); }
  else if (k < 35) { reason = 28; handler = TRC_HVM_CR_WRITE64; words = 3; x[0] = 4; x[1] = (v->cr4 ^= 0x80) | 0x320670; cost = 800 + rnd(700); }
  else if (k < 45) { reason = 32; handler = TRC_HVM_MSR_WRITE; words = 3; x[0] = 0x6e0; x[1] = 0x1234; cost = 1000 + rnd(1500); }
  else if (k < 52) { reason = 10; handler = TRC_HVM_CPUID; words = 5; x[0] = rnd(2); cost = 600 + rnd(600); }
  else if (k < 60) { reason = 30; handler = TRC_HVM_IOPORT_WRITE; words = 2; x[0] = 0x3f8; x[1] = 0x5a; cost = 3000 + rnd(6000); }
  else if (k < 88) { reason = 1; handler = TRC_HVM_INTR; words = 1; x[0] = 0xf1; cost = 2000 + rnd(8000); }
  else             { reason = 12; handler = TRC_HVM_HLT; words = 1; cost = 0; }
  put(S, p, TRC_HVM_VMEXIT64, true, 3, (uint32_t[]){ reason, (uint32_t)rip, (uint32_t)(rip >> 32) });
  put(S, p, handler, false, words, x);
  if (reason == 12) { schedule_out(S, p, RS_BLOCKED, 20000 + rnd(400000)); return; }
  if (reason == 1 && !P->drop && P->now > v->slice_end) { schedule_out(S, p, RS_RUNNABLE, 0); return; }
  P->now += cost;
  put(S, p, TRC_HVM_VMENTRY, true, 0, NULL);
}

/* A lost stretch ends: Xen writes the marker with the next record. */
static void lost_marker(struct sim *S, unsigned p) {
  struct hpcpu *P = &S->p[p];
  const struct hvcpu *v = &S->v[P->cur];
  P->now += 100 + rnd(400);
  uint32_t m[4] = { P->dropped, v->dom | v->vid << 16, (uint32_t)P->first_dropped, (uint32_t)(P->first_dropped >> 32) };
  pbuf_rec(&P->out, TRC_LOST_RECORDS, &P->now, 4, m);
  P->dropped = 0;
}

static void simulate(struct sim *S, unsigned long long exits) {
  for (unsigned long long done = 0; done < exits;) {
    unsigned p = 0;
    for (unsigned q = 1; q < S->np; q++) if (S->p[q].now < S->p[p].now) p = q;
    struct hpcpu *P = &S->p[p];
    if (P->cur < 0) {
      int i = pick(S);
      if (i < 0) P->now += 5000 + rnd(20000);
      else schedule_in(S, p, i);
      continue;
    }
    if (!P->drop && S->losses && rnd(exits) < 4 * S->losses) { S->losses--; P->drop = 3 + rnd(4); }
    bool dropping = P->drop > 0;
    host_exit(S, p);
    done += !dropping;
    if (dropping && --P->drop == 0) lost_marker(S, p);
  }
}

/* Each pCPU's buffer as windows of about `window` bytes, the pCPUs in turn. */
static int write_windows(struct sim *S, unsigned window, FILE *f, const char *out) {
  size_t next[MAX_PCPUS] = { 0 };
  for (bool more = true; more;) {
    more = false;
    for (unsigned p = 0; p < S->np; p++) {
      struct pbuf *w = &S->p[p].out;
      if (next[p] == w->nat) continue;
      size_t from = w->at[next[p]], to = from;
      while (next[p] < w->nat && (to == from || to - from < window)) to = ++next[p] < w->nat ? w->at[next[p]] : w->n;
      struct window head = { .n = 0 };
      rec(&head, TRC_TRACE_CPU_CHANGE, NULL, 2, (uint32_t[]){ p, (uint32_t)(to - from) });
      if (fwrite(head.buf, 1, head.n, f) != head.n || fwrite(w->b + from, 1, to - from, f) != to - from) {
        fprintf(stderr, "gen-xentrace: %s: write failed: %s\n", out, strerror(errno));
        return 1;
      }
      more |= next[p] < w->nat;
    }
  }
  return 0;
}

static int host_write(const struct host *h, unsigned pcpus, unsigned long long exits, FILE *f, const char *out) {
  static struct sim S;
  S.np = pcpus;
  S.losses = h->losses;
  S.no_hvm = h->no_hvm;
  for (unsigned i = 0; i < h->dom0_vcpus; i++) S.v[S.nv++] = (struct hvcpu){ .dom = 0, .vid = i, .state = RS_RUNNABLE };
  for (unsigned d = 1; d <= h->guests; d++)
    for (unsigned i = 0; i < h->vcpus; i++) S.v[S.nv++] = (struct hvcpu){ .dom = d, .vid = i, .state = RS_RUNNABLE };
  for (unsigned p = 0; p < pcpus; p++) {
    S.p[p].now = 1000000 + 37 * p;
    S.p[p].cur = -1;
    put(&S, p, TRC_SCHED_CONTINUE_RUNNING, true, 1, (uint32_t[]){ p | IDLE_DOMAIN << 16 });
    S.p[p].now += 100;
  }
  for (unsigned i = 0; i < S.nv; i++) S.v[i].ready = 1000000 + rnd(50000);
  simulate(&S, exits);
  int rc = write_windows(&S, h->window, f, out);
  for (unsigned p = 0; p < pcpus; p++) { free(S.p[p].out.b); free(S.p[p].out.at); }
  if (f != stdout && fclose(f) != 0 && !rc) { fprintf(stderr, "gen-xentrace: %s: %s\n", out, strerror(errno)); rc = 1; }
  return rc;
}

int main(int argc, char **argv) {
  unsigned long long exits = 2000;
  unsigned pcpus = 1;
  struct host host = { .vcpus = 1, .window = 4096 };
  const char *out = NULL;
  int c;
  while ((c = getopt(argc, argv, "n:c:s:o:d:v:0:l:w:x")) != -1) {
    switch (c) {
    case 'n': exits = strtoull(optarg, NULL, 10); break;
    case 'c': pcpus = (unsigned)atoi(optarg); break;
    case 's': seed = strtoull(optarg, NULL, 10); break;
    case 'o': out = optarg; break;
    case 'd': host.guests = (unsigned)atoi(optarg); break;
    case 'v': host.vcpus = (unsigned)atoi(optarg); break;
    case '0': host.dom0_vcpus = (unsigned)atoi(optarg); break;
    case 'l': host.losses = (unsigned)atoi(optarg); break;
    case 'w': host.window = (unsigned)atoi(optarg); break;
    case 'x': host.no_hvm = true; break;
    default: return usage();
    }
  }
  if (!out || pcpus < 1 || pcpus > MAX_PCPUS || optind != argc) return usage();
  if (host.guests && !host_ok(&host)) return usage();
  FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
  if (!f) { fprintf(stderr, "gen-xentrace: %s: %s\n", out, strerror(errno)); return 1; }
  if (host.guests) return host_write(&host, pcpus, exits, f, out);
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
