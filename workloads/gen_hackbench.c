/* hackbench (perf bench sched messaging): groups of 20 senders and 20 receivers exchanging 100-byte messages. */
#include "kpages.h"
#include "gen_hackbench.h"

#include <stdlib.h>
#include <string.h>
#include "gen_latctx.h"
#include "sim/base/util.h"

static const char *const hackbench_sources[] = {
  "hackbench: groups of 20 senders and 20 receivers, UNIX sockets by default (-p pipes), "
  "processes by default (-T threads: one address space); each sender writes loops x 20 "
  "messages of 100 bytes (rt-tests src/hackbench/hackbench.c; "
  "Linux tools/perf/bench/sched-messaging.c)",
  "per-operation native time: a third of lmbench lat_ctx -s 0 at the number of tasks per "
  "vCPU, 2007 Core 2: 2/20/50 procs 2.02/4.04/4.30 us "
  "(kvm-devel 'mmu optimizations branch', 2007-01); "
  "the split is an estimate",
  "scheduling measured on Linux 6.18 (perf record -e sched:sched_switch of perf bench sched messaging "
  "-g 1 [-p] -l 100..1000 pinned to one CPU, workloads/README.md 'hackbench'): 0.03-0.07 switches per "
  "message, a preempted sender resumes after one receiver in 42-50 % of cases, a second receiver "
  "runs in 10-13 %",
  NULL,
};

void hackbench_defaults(struct hackbench_opts *o) {
  memset(o, 0, sizeof *o);
  o->vcpus = 1;
  o->sender_run = HACKBENCH_SENDER_RUN;
  o->resume = HACKBENCH_RESUME_PCT;
  o->seed = 1;
  o->paging = PAGING_64;
  o->cpu_ghz = GEN_DEFAULT_GHZ;
}

/* One vCPU's run queue: which task runs and whose page tables are loaded. */
struct hb_cpu {
  unsigned vcpu;
  unsigned current;
  uint64_t mm;
  uint64_t op_cycles;        /* native cycles of one write, one read, one switch */
};

struct hb_group {
  unsigned id;
  struct hb_cpu *cpu;
  uint64_t received[HACKBENCH_FDS];
  uint64_t pending[HACKBENCH_FDS];      /* queued in a receiver's socket */
  uint64_t sent[HACKBENCH_FDS];         /* messages each sender has written */
  bool in_write[HACKBENCH_FDS];         /* sender preempted inside its last write() */
};

struct hb {
  struct gen *g;
  struct gen_layout l;
  const struct hackbench_opts *o;
  uint64_t per_task;                    /* messages each sender writes and each receiver reads */
  struct gen_label label;
  uint64_t rng;                         /* the scheduling draws (--seed) */
};

/* Tasks: group g's receivers are g*40 + r, its senders g*40 + 20 + s. */
static unsigned receiver_task(unsigned group, unsigned r) { return group * 2 * HACKBENCH_FDS + r; }
static unsigned sender_task(unsigned group, unsigned s) { return receiver_task(group, HACKBENCH_FDS + s); }

/* Processes: one address space each (pid 0 is the hackbench parent); threads share the parent's. */
static uint64_t task_mm(const struct hb *h, unsigned task) { return h->o->threads ? gen_cr3(0) : gen_cr3(1 + task); }
/* Threads each use their own page of the shared address space for the message. */
static uint64_t task_buffer(const struct hb *h, unsigned task) {
  return h->l.user_data + (h->o->threads ? (uint64_t)task * 0x1000 : 0);
}

/* schedule() picks next; switch_mm loads its page tables when they differ. */
static void switch_to(struct hb *h, struct hb_cpu *c, unsigned next) {
  if (c->current == next) return;
  kpages_touch(h->g, c->vcpu, &h->l, KP_SLEEP, c->current, 0, true);
  kpages_touch(h->g, c->vcpu, &h->l, KP_NEXT_TASK, next, 0, true);
  gen_run(h->g, c->vcpu, c->op_cycles);
  uint64_t mm = task_mm(h, next);
  if (mm != c->mm) gen_cr3w(h->g, c->vcpu, mm);
  c->mm = mm;
  c->current = next;
}

/* Kernel entry for system call nr by task: the system-call and file-I/O
** touch sets (kpages.h). */
static void enter(struct hb *h, struct hb_cpu *c, unsigned task, uint64_t nr) {
  gen_ev(h->g, c->vcpu, EV_SYSCALL, 0, nr, 0, 0);
  kpages_touch(h->g, c->vcpu, &h->l, KP_SYSCALL | KP_FILE_IO, task, 0, true);
}

/* The socket (or pipe) code and objects of receiver `owner`'s queue. */
static void ipc(struct hb *h, struct hb_cpu *c, unsigned task, unsigned owner) {
  kpages_touch(h->g, c->vcpu, &h->l, h->o->pipe ? KP_PIPE : KP_SOCKET, task, owner, true);
}

/* read() on an empty queue: the receiver sleeps (the switch follows). */
static void read_blocks(struct hb *h, struct hb_cpu *c, unsigned task) {
  enter(h, c, task, h->l.nr_read);
  ipc(h, c, task, task);
}

static void task_exits(struct hb *h, struct hb_cpu *c, unsigned task) {
  enter(h, c, task, h->l.nr_exit_group);
}

/* Receiver r takes its n queued messages, one read() each, then sleeps in
** the next read() or, after its last message, exits. */
static void receiver_runs(struct hb *h, struct hb_group *gr, unsigned r, uint64_t n) {
  struct hb_cpu *c = gr->cpu;
  unsigned task = receiver_task(gr->id, r);
  switch_to(h, c, task);
  for (uint64_t k = 0; k < n; k++) {
    if (k) read_blocks(h, c, task);     /* the queue is not empty: no sleep this time */
    ipc(h, c, task, task);
    gen_touch(h->g, c->vcpu, task_buffer(h, task), 1, true);
    gen_run(h->g, c->vcpu, c->op_cycles);
    gen_ev(h->g, c->vcpu, EV_SYSRET, 0, 0, 0, 0);
    gen_mark(h->g, c->vcpu, h->label);
    gen_touch_user_loop(h->g, c->vcpu, &h->l);
  }
  gr->received[r] += n;
  if (gr->received[r] == h->per_task) task_exits(h, c, task);
  else read_blocks(h, c, task);
}

/* One write() of a message to receiver r, waking it if it sleeps. */
static void send_one(struct hb *h, struct hb_group *gr, unsigned task, unsigned r) {
  struct hb_cpu *c = gr->cpu;
  enter(h, c, task, h->l.nr_write);
  ipc(h, c, task, receiver_task(gr->id, r));
  gen_touch(h->g, c->vcpu, task_buffer(h, task), 1, false);
  if (gr->pending[r]++ == 0)                     /* try_to_wake_up() of the sleeping receiver */
    kpages_touch(h->g, c->vcpu, &h->l, KP_WAKE | KG(TASK), receiver_task(gr->id, r), 0, true);
  gen_run(h->g, c->vcpu, c->op_cycles);
}

/* Sender s runs and writes up to `sender_run` messages, one to each receiver
** in turn, until a receiver it woke preempts it inside a write(). */
static void sender_runs(struct hb *h, struct hb_group *gr, unsigned s) {
  struct hb_cpu *c = gr->cpu;
  unsigned task = sender_task(gr->id, s);
  switch_to(h, c, task);
  if (gr->in_write[s]) gen_ev(h->g, c->vcpu, EV_SYSRET, 0, 0, 0, 0);
  gen_touch_user_loop(h->g, c->vcpu, &h->l);
  uint64_t n = h->per_task - gr->sent[s] < h->o->sender_run ? h->per_task - gr->sent[s] : h->o->sender_run;
  for (uint64_t k = 0; k < n; k++) {
    send_one(h, gr, task, (unsigned)(gr->sent[s] % HACKBENCH_FDS));
    gr->sent[s]++;
    if (k + 1 < n) gen_ev(h->g, c->vcpu, EV_SYSRET, 0, 0, 0, 0);
  }
  gr->in_write[s] = true;
}

/* The receiver with the longest queue (it has waited longest): -1 if none waits. */
static int fullest(const struct hb_group *gr) {
  int best = -1;
  for (unsigned r = 0; r < HACKBENCH_FDS; r++)
    if (gr->pending[r] && (best < 0 || gr->pending[r] > gr->pending[best])) best = (int)r;
  return best;
}

static void drain(struct hb *h, struct hb_group *gr, int r) {
  if (r < 0) return;
  receiver_runs(h, gr, (unsigned)r, gr->pending[r]);
  gr->pending[r] = 0;
}

/* The next sender with messages left, from s on (s itself when it resumes). */
static int next_sender(const struct hb *h, const struct hb_group *gr, unsigned s) {
  for (unsigned k = 0; k < HACKBENCH_FDS; k++) {
    unsigned t = (s + k) % HACKBENCH_FDS;
    if (gr->sent[t] < h->per_task) return (int)t;
  }
  return -1;
}

/* The measured pattern (workloads/README.md, "hackbench"): a sender writes a
** run of messages, one receiver (sometimes two) preempts it and reads all
** that is queued for it, then the same sender resumes or the next one runs. */
static void group_runs(struct hb *h, struct hb_group *gr) {
  int s = 0;
  while (s >= 0 && h->g->rc == EXIT_OK) {
    sender_runs(h, gr, (unsigned)s);
    drain(h, gr, fullest(gr));
    if (gen_random(&h->rng) % 100 < HACKBENCH_SECOND_RECEIVER_PCT) drain(h, gr, fullest(gr));
    bool resume = gen_random(&h->rng) % 100 < h->o->resume;
    s = next_sender(h, gr, resume ? (unsigned)s : (unsigned)s + 1);
  }
  for (int r; (r = fullest(gr)) >= 0;) drain(h, gr, r);   /* the last messages */
}

/* Start-up: every receiver runs first and sleeps in its first read(). */
static void prologue(struct hb *h, struct hb_group *gr) {
  for (unsigned r = 0; r < HACKBENCH_FDS; r++) {
    unsigned task = receiver_task(gr->id, r);
    switch_to(h, gr->cpu, task);
    gen_touch_user_loop(h->g, gr->cpu->vcpu, &h->l);
    read_blocks(h, gr->cpu, task);
  }
}

/* Wind-down: each sender's last write() returns and the sender exits. */
static void epilogue(struct hb *h, struct hb_group *gr) {
  for (unsigned s = 0; s < HACKBENCH_FDS; s++) {
    unsigned task = sender_task(gr->id, s);
    switch_to(h, gr->cpu, task);
    gen_ev(h->g, gr->cpu->vcpu, EV_SYSRET, 0, 0, 0, 0);
    task_exits(h, gr->cpu, task);
  }
}

static void emit(struct hb *h, struct hb_group *groups, unsigned ngroups) {
  for (unsigned g = 0; g < ngroups; g++) prologue(h, &groups[g]);
  for (unsigned g = 0; g < ngroups; g++) group_runs(h, &groups[g]);
  for (unsigned g = 0; g < ngroups; g++) epilogue(h, &groups[g]);
}

static bool hackbench_valid(const struct hackbench_opts *o, char *err, size_t errlen) {
  return gen_check_range(err, errlen, "--groups", o->groups, 1, HACKBENCH_GROUPS_MAX) &&
         gen_check_range(err, errlen, "--loops", o->loops, 1, (1ull << 32) / o->groups) &&
         gen_check_range(err, errlen, "--vcpus", o->vcpus, 1, TRACE_VCPU_MAX) &&
         gen_check_range(err, errlen, "--sender-run", o->sender_run, 1, 1u << 20) &&
         gen_check_range(err, errlen, "--resume", o->resume, 0, 100) &&
         gen_check_range(err, errlen, "--seed", o->seed, 0, 0xffffffffu) &&
         gen_check_paging(err, errlen, o->paging) && gen_check_ghz(err, errlen, o->cpu_ghz);
}

static cJSON *hackbench_meta(const struct hackbench_opts *o) {
  cJSON *m = gen_meta_new("hackbench", HACKBENCH_MODEL_VERSION);
  gen_meta_num(m, "groups", (double)o->groups);
  gen_meta_num(m, "loops", (double)o->loops);
  gen_meta_num(m, "vcpus", (double)o->vcpus);
  gen_meta_num(m, "sender_run", (double)o->sender_run);
  gen_meta_num(m, "resume", (double)o->resume);
  gen_meta_num(m, "seed", (double)o->seed);
  gen_meta_bool(m, "pipe", o->pipe);
  gen_meta_bool(m, "threads", o->threads);
  gen_meta_str(m, "paging", paging_name(o->paging));
  gen_meta_num(m, "cpu_ghz", o->cpu_ghz);
  gen_meta_num(m, "messages", (double)(o->groups * HACKBENCH_FDS * HACKBENCH_FDS * o->loops));
  gen_meta_num(m, "message_bytes", HACKBENCH_MSG_BYTES);
  gen_meta_str(m, "placement", "group g on vCPU g mod vcpus");
  struct gen_layout l;
  gen_layout_init(&l, o->paging);
  kpages_meta(m, &l, KP_SYSCALL | KP_FILE_IO | (o->pipe ? KP_PIPE : KP_SOCKET) | KP_WAKE | KP_SLEEP | KP_NEXT_TASK, 1);
  gen_meta_sources(m, hackbench_sources);
  return m;
}

/* Native cycles of one write, read or switch on a vCPU running `tasks` tasks. */
static uint64_t op_cycles(uint64_t tasks, double ghz) {
  return gen_us_to_cycles(latctx_native_us(tasks, 0) / 3, ghz);
}

int gen_hackbench(const struct hackbench_opts *o, const char *path, char *err, size_t errlen) {
  if (!hackbench_valid(o, err, errlen)) return EXIT_USAGE;
  struct hb h = { .o = o, .per_task = o->loops * HACKBENCH_FDS, .label = gen_label_make("message"), .rng = o->seed };
  gen_layout_init(&h.l, o->paging);
  unsigned ngroups = (unsigned)o->groups, ncpu = (unsigned)o->vcpus;
  struct hb_cpu *cpus = xcalloc(ncpu, sizeof *cpus);
  struct hb_group *groups = xcalloc(ngroups, sizeof *groups);
  for (unsigned v = 0; v < ncpu; v++) {
    unsigned mine = ngroups / ncpu + (v < ngroups % ncpu);
    cpus[v] = (struct hb_cpu){ v, receiver_task(v, 0), task_mm(&h, receiver_task(v, 0)),
                               op_cycles(mine * 2 * HACKBENCH_FDS, o->cpu_ghz) };
    if (!mine) cpus[v].mm = gen_cr3(0);            /* an idle vCPU: the parent's tables */
  }
  for (unsigned g = 0; g < ngroups; g++) groups[g] = (struct hb_group){ .id = g, .cpu = &cpus[g % ncpu] };
  struct gen gw;
  if (gen_open(&gw, path, "hackbench", ncpu, o->paging, hackbench_meta(o), err, errlen) == EXIT_OK) {
    h.g = &gw;
    for (unsigned v = 0; v < ncpu; v++) gen_init_vcpu(&gw, &h.l, v, cpus[v].mm);
    emit(&h, groups, ngroups);
    gen_close(&gw);
  }
  free(cpus);
  free(groups);
  return gw.rc;
}

const char hackbench_usage[] =
  "usage: vmxsim gen hackbench --groups G --loops L [--pipe] [--threads] [--vcpus V]\n"
  "                            [--sender-run M] [--resume PCT] [--seed S]\n"
  "                            [--paging 32|pae|64] [--cpu-ghz GHZ] -o TRACE\n"
  "\n"
  "hackbench: G groups of 20 senders and 20 receivers; each sender writes L x 20\n"
  "messages of 100 bytes, one to each receiver of its group in turn. Scheduling as\n"
  "measured: a sender writes M messages, a receiver preempts it and reads everything\n"
  "queued for it (a second one follows in 12% of cases), then the same sender\n"
  "resumes (PCT%) or the next one runs. One 'mark message' per message delivered\n"
  "(G x 400 x L). Processes have their own address spaces (a CR3 write per switch);\n"
  "--threads share one (none). workloads/README.md describes the model.\n"
  "\n"
  "  --groups G       groups of 40 tasks (1..100)\n"
  "  --loops L        each sender writes L x 20 messages (1..2^32/G)\n"
  "  --pipe           pipes instead of UNIX sockets\n"
  "  --threads        threads (one address space) instead of processes\n"
  "  --vcpus V        vCPUs (1..256, default 1); group g runs on vCPU g mod V\n"
  "  --sender-run M   messages a sender writes before a receiver preempts it (1..2^20)\n"
  "                   (default 53: 0.04 switches per message, as measured)\n"
  "  --resume PCT     how often the preempted sender runs next (0..100, default 45)\n"
  "  --seed S         seed of the scheduling draws (0..0xffffffff, default 1)\n"
  "  --paging MODE    guest paging: 32, pae or 64 (default 64)\n"
  "  --cpu-ghz GHZ    clock converting microseconds to cycles (above 0, at most 10;\n"
  "                   default 2.4)\n"
  "  -o, --output F   the trace to write\n"
  "\n"
  "example:\n"
  "  vmxsim gen hackbench --groups 1 --loops 100 -o hackbench.bin\n";

int gen_hackbench_args(int argc, char **argv, const char *out, char *err, size_t errlen) {
  struct hackbench_opts o;
  hackbench_defaults(&o);
  const struct gen_opt opts[] = {
    { "--groups", NULL, GO_UINT, &o.groups, NULL, true },
    { "--loops", NULL, GO_UINT, &o.loops, NULL, true },
    { "--pipe", NULL, GO_FLAG, &o.pipe, NULL, false },
    { "--threads", NULL, GO_FLAG, &o.threads, NULL, false },
    { "--vcpus", NULL, GO_UINT, &o.vcpus, NULL, false },
    { "--sender-run", NULL, GO_UINT, &o.sender_run, NULL, false },
    { "--resume", NULL, GO_UINT, &o.resume, NULL, false },
    { "--seed", NULL, GO_UINT, &o.seed, NULL, false },
    { "--paging", NULL, GO_PAGING, &o.paging, NULL, false },
    { "--cpu-ghz", NULL, GO_DOUBLE, &o.cpu_ghz, NULL, false },
    { 0 },
  };
  int rc = gen_parse_args(argc, argv, opts, &out, err, errlen);
  return rc ? rc : gen_hackbench(&o, out, err, errlen);
}
