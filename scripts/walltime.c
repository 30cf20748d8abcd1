/* walltime: the bench's timer (scripts/bench.sh).  Runs a command and writes
** to FILE "wall_seconds cpu_seconds maxrss_kib", the wall time taken from just
** before its fork to just after its end, so that no other process's start-up
** (a shell's, a date's, GNU time's: 5-10 ms each on a small virtual machine)
** is in it; CPU time and peak memory as getrusage gives them for the child.
**
** usage: walltime FILE COMMAND [ARG...]; exit status: the command's, 127 when
** it cannot be run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(const struct timeval *t) { return (double)t->tv_sec + (double)t->tv_usec / 1e6; }

static const char usage[] =
  "usage: walltime FILE COMMAND [ARG...]\n"
  "Runs COMMAND and writes \"wall_seconds cpu_seconds maxrss_kib\" to FILE: the wall time\n"
  "from just before its fork to its end, its user + system time and its peak memory.\n"
  "The exit status is the command's (127: it could not be run).\n";

int main(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(usage, stdout);
    return 0;
  }
  if (argc < 3) {
    fputs(usage, stderr);
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    fprintf(stderr, "walltime: %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (pid > 0 && wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
  clock_gettime(CLOCK_MONOTONIC, &t1);
  FILE *f = fopen(argv[1], "w");
  if (!f) {
    fprintf(stderr, "walltime: %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  fprintf(f, "%.6f %.6f %ld\n", wall, seconds(&ru.ru_utime) + seconds(&ru.ru_stime), ru.ru_maxrss);
  fclose(f);
  if (pid < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
