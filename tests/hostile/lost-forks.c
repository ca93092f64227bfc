/* SPDX-License-Identifier: MIT */
/*
 * lost-forks DIR CHILDREN: a recorded program whose children's FORK
 * records the kernel drops, driven step by step by e2e/hostile-lost-fork.sh
 * through files in DIR, with no timing:
 *
 *   1. pins itself to the CPU it runs on (one ring gets all its records),
 *      writes its pid to DIR/pid and waits for DIR/go, a FIFO, to open;
 *      the test stops the recorder (SIGSTOP) before it opens it;
 *   2. fills that ring with MMAP2 records, mapping its own executable
 *      MAPPINGS times, so that the FORK records of the CHILDREN children
 *      it then starts find the ring full; writes their pids to
 *      DIR/children, then DIR/forked, and waits for DIR/spin to open;
 *      the test resumes the recorder (SIGCONT) before it opens it;
 *   3. lets the children run child_spin for 100 ms of CPU time each, on
 *      any CPU, and exits once they all have. The children then wait in
 *      pause(), still in /proc for the recorder to read, until the test
 *      kills them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAPPINGS 20000
#define SPIN_NS 100000000ull

static volatile uint64_t sink;

static void die(const char *what)
{
	fprintf(stderr, "lost-forks: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Waits until someone opens DIR/name, a FIFO, for writing, and closes it. */
static void await(const char *dir, const char *name)
{
	char path[4096], buf[64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		die(path);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void child_spin(void)
{
	uint64_t end = thread_cpu_ns() + SPIN_NS;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i ^ (sink >> 3);
}

static void fill_ring(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("/proc/self/exe");
	for (int i = 0; i < MAPPINGS; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, 4096);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	int children = argc > 2 ? atoi(argv[2]) : 0, go[2], done[2];
	char text[4096];
	size_t len = 0;
	cpu_set_t all, one;

	if (argc != 3 || children < 1 || children > 64) {
		fprintf(stderr, "usage: lost-forks DIR CHILDREN (1 to 64)\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(all), &all))
		die("sched_getaffinity");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) || pipe(go) || pipe(done))
		die("setting up");
	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	write_file(argv[1], "pid", text);
	await(argv[1], "go");

	fill_ring();
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		char byte;

		if (pid < 0)
			die("fork");
		if (!pid) {
			close(go[1]);
			sched_setaffinity(0, sizeof(all), &all);
			if (read(go[0], &byte, 1) < 0)
				die("read");
			child_spin();
			if (write(done[1], "", 1) != 1)
				die("write");
			for (;;)
				pause();
		}
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%d\n", (int)pid);
	}
	write_file(argv[1], "children", text);
	write_file(argv[1], "forked", "1\n");
	await(argv[1], "spin");

	close(go[1]);
	for (int i = 0; i < children; i++) {
		char byte;

		if (read(done[0], &byte, 1) != 1)
			die("read");
	}
	return 0;
}
