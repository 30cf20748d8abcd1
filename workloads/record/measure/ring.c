/*
 * ring: a lat_ctx-like token ring, for measuring what one pass touches and how its
 * wake-ups are scheduled (README.md beside this file).
 *
 * NPROCS processes pass a 4-byte token around a ring of NPROCS pipes, as lmbench's
 * lat_ctx does (lmbench 3.0-a9 src/lat_ctx.c): each process reads the token from its own
 * pipe, sums every word of its own buffer of KB kilobytes (malloc'd, like lat_ctx's), and
 * writes the token to the next process's pipe. At the top of every pass a process loads
 * one byte of a page that nothing else uses (the marker), so that a memory trace of the
 * process can be cut into passes: userpages.sh runs the ring under valgrind's lackey tool
 * and pagecount.py counts the distinct pages between two loads of the marker.
 *
 * usage: ring [-s KB] NPROCS PASSES
 *   PASSES is the number of token passes in all (each process makes PASSES / NPROCS).
 * Before the ring starts it prints "ring: marker 0xADDRESS" (the marker byte).
 *
 * Build: cc -O2 -o ring ring.c        (32-bit: cc -O2 -m32 -o ring32 ring.c)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_PROCS = 64 };

/* Three pages so that the middle one holds the marker byte and nothing else. */
static volatile char marker_pages[3 * 4096] __attribute__((aligned(4096)));
#define MARKER (&marker_pages[4096])

static volatile int sum_sink;   /* keeps the buffer sum from being optimised away */

static void sum_buffer(const int *buf, size_t words)
{
	int sum = 0;

	for (size_t i = 0; i < words; i++)
		sum += buf[i];
	sum_sink = sum;
}

/*
 * One member of the ring: read the token from `in`, sum the buffer, pass the token minus
 * one to `out`. A token of 0 ends the ring: the member exits without passing it on, which
 * closes its end of the next pipe, and every other member then reads end-of-file.
 */
static void ring_member(int in, int out, int *buf, size_t words)
{
	int token;

	for (;;) {
		(void)*MARKER;
		if (read(in, &token, sizeof token) != (ssize_t)sizeof token || token == 0)
			return;
		sum_buffer(buf, words);
		token--;
		if (write(out, &token, sizeof token) != (ssize_t)sizeof token)
			return;
	}
}

/* Closes every pipe end but member i's: the read end of pipe i, the write end of i+1. */
static void keep_own_ends(int pipes[][2], int n, int i)
{
	for (int j = 0; j < n; j++) {
		if (j != i)
			close(pipes[j][0]);
		if (j != (i + 1) % n)
			close(pipes[j][1]);
	}
}

static int *make_buffer(size_t bytes)
{
	int *buf = malloc(bytes ? bytes : 1);

	if (!buf) {
		perror("ring: malloc");
		exit(1);
	}
	memset(buf, 1, bytes);
	return buf;
}

static int usage(void)
{
	fprintf(stderr, "usage: ring [-s KB] NPROCS PASSES   (2 <= NPROCS <= %d, PASSES >= 1)\n",
		MAX_PROCS);
	return 2;
}

int main(int argc, char **argv)
{
	long kb = 0;
	int opt;

	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt != 's')
			return usage();
		kb = strtol(optarg, NULL, 10);
		if (kb < 0 || kb > 1048576)
			return usage();
	}
	if (argc - optind != 2)
		return usage();
	int n = atoi(argv[optind]);
	long passes = atol(argv[optind + 1]);
	if (n < 2 || n > MAX_PROCS || passes < 1 || passes > 0x7fffffff)
		return usage();

	size_t bytes = (size_t)kb * 1024;
	int pipes[MAX_PROCS][2];
	for (int i = 0; i < n; i++)
		if (pipe(pipes[i]) != 0) {
			perror("ring: pipe");
			return 1;
		}
	printf("ring: marker %p\n", (void *)MARKER);
	fflush(stdout);

	for (int i = 1; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("ring: fork");
			return 1;
		}
		if (pid == 0) {
			keep_own_ends(pipes, n, i);
			int *buf = make_buffer(bytes);
			ring_member(pipes[i][0], pipes[(i + 1) % n][1], buf, bytes / sizeof *buf);
			free(buf);
			_exit(0);
		}
	}
	/* The parent is member 0: it starts the token, then runs the same loop. */
	keep_own_ends(pipes, n, 0);
	int *buf = make_buffer(bytes);
	int token = (int)passes - 1;
	if (write(pipes[1][1], &token, sizeof token) != (ssize_t)sizeof token) {
		perror("ring: write");
		return 1;
	}
	if (token > 0)
		ring_member(pipes[0][0], pipes[1][1], buf, bytes / sizeof *buf);
	close(pipes[1][1]);
	close(pipes[0][0]);
	while (wait(NULL) > 0)
		;
	free(buf);
	return 0;
}
