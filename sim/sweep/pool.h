/* A pool of worker processes: the parent hands out task numbers through one
** pipe per worker (two at a time, so that a worker finds its next task waiting
** when it answers), each worker runs its tasks in order and answers with bytes
** through a second pipe, and the parent handles each answer as it comes.  Workers are
** forked once, before the parent opens any database, and share nothing with
** it afterwards: a crash or a kill -9 of one side never corrupts the other,
** and the parent alone writes results (SQLite wants one writer per file).
**
** A worker whose parent dies reads end-of-file on its task pipe and exits.
** SIGINT and SIGTERM take their default action in the workers; the parent
** polls interrupt_requested() (sim/base/util.h) and stops handing out tasks. */
#ifndef VMXSIM_POOL_H
#define VMXSIM_POOL_H

#include <stddef.h>
#include <stdint.h>

/* In a worker: runs task and sets *reply (malloc'd, freed by the pool) and *len. */
typedef void (*pool_work_fn)(void *ctx, uint32_t task, void **reply, size_t *len);
/* In the parent: the answer to task (reply NULL when the worker died running
** it; status then is its wait status; the tasks it had not started go to the
** other workers).  Returns 0 to go on, or an enum
** exit_code to stop the pool (it then returns that code). */
typedef int (*pool_done_fn)(void *ctx, uint32_t task, const void *reply, size_t len, int status);

struct pool;

/* Forks `workers` processes running work(ctx, ...).  0, or EXIT_INTERNAL with
** the message in err (then *pool is NULL). */
int pool_start(struct pool **pool, unsigned workers, pool_work_fn work, void *ctx, char *err, size_t errlen);
/* Runs tasks[0..n-1] (in that order of hand-out) and calls done() for each
** answer.  Returns 0 when all were answered, EXIT_INTERRUPTED when asked to
** stop (interrupt_requested()), the code done() returned, or EXIT_INTERNAL
** when no worker is left (message in err). */
int pool_run(struct pool *pool, const uint32_t *tasks, size_t n, pool_done_fn done, void *ctx, char *err,
             size_t errlen);
/* Ends the workers (end-of-file, then SIGTERM for any still busy) and waits for them. */
void pool_stop(struct pool *pool);

#endif
