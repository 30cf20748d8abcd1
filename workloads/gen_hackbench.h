/* hackbench (perf bench sched messaging): groups of 20 senders and 20 receivers exchanging 100-byte messages. */
#ifndef VMXSIM_GEN_HACKBENCH_H
#define VMXSIM_GEN_HACKBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define HACKBENCH_MODEL_VERSION 3   /* 3: pids from 2816 on have their CR3 below 3 GiB (gen_cr3) */
/* Measured (workloads/README.md, "hackbench"): 0.03-0.07 switches per message
** on one CPU -> a sender run of 53 messages gives 0.04 with ~2.12 switches per
** run; the preempted sender resumes in 42-50 % of cases; a second receiver
** runs between two senders in 10-13 %. */
#define HACKBENCH_SENDER_RUN    53
#define HACKBENCH_RESUME_PCT    45
#define HACKBENCH_SECOND_RECEIVER_PCT 12
#define HACKBENCH_FDS           20     /* senders, and receivers, per group */
#define HACKBENCH_MSG_BYTES     100
#define HACKBENCH_GROUPS_MAX    100    /* 40 tasks each: stays under GEN_TASKS_MAX */

struct hackbench_opts {
  uint64_t groups;       /* --groups G */
  uint64_t loops;        /* --loops L: each sender writes L x 20 messages */
  uint64_t vcpus;        /* --vcpus V: group g runs on vCPU g mod V */
  uint64_t sender_run;   /* --sender-run M: messages a sender writes before a receiver preempts it */
  uint64_t resume;       /* --resume PCT: how often the preempted sender runs next */
  uint64_t seed;         /* --seed S: the scheduling draws */
  bool pipe;             /* --pipe: pipes instead of UNIX sockets */
  bool threads;          /* --threads: one address space for every task */
  unsigned paging;       /* --paging 32|pae|64 */
  double cpu_ghz;        /* --cpu-ghz */
};

void hackbench_defaults(struct hackbench_opts *o);
int gen_hackbench(const struct hackbench_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen hackbench` with the options argv[1..] (usage: hackbench_usage): parses them
** and writes the trace to out (or -o).  0 or an enum exit_code, message in err. */
int gen_hackbench_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char hackbench_usage[];

#endif
