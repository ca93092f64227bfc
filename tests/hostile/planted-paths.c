/* SPDX-License-Identifier: MIT */
/*
 * planted-paths MODE [ARG]: a recorded program that plants, where the
 * recorder will open them, the files of e2e/hostile-paths.sh, then runs
 * for 300 ms of CPU time in JIT code at JIT_ADDR (10 bytes in one page of
 * anonymous memory), or in its own executable for exe-fifo. It prints its
 * pid. /tmp/perf-PID.map, its JIT map, is made by MODE:
 *
 *   own        a map of the running user's naming the code jit_spin_code
 *   fifo       a FIFO (the recorder would wait in open for a writer)
 *   symlink    a symbolic link to ARG, a file the user may not read
 *   devzero    a symbolic link to /dev/zero (a line without end)
 *   chown      the map of own, then given to user ARG (run as root)
 *   huge       the map of own followed by NULs up to 100 MiB (sparse)
 *   exe-fifo   no map; its executable's path becomes a FIFO once running
 *              (it must be a copy in a folder of its user's)
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JIT_ADDR 0x7e0000000000ull
#define SPIN_NS 300000000ull
#define HUGE_BYTES (100ull << 20)

/* mov rax, rdi; 1: sub rax, 1; jne 1b; ret */
static const uint8_t countdown[] = {
	0x48, 0x89, 0xf8, 0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0xc3,
};

static volatile uint64_t sink;

static void die(const char *what)
{
	fprintf(stderr, "planted-paths: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void write_map(const char *path, uid_t owner, uint64_t size)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%llx %zx jit_spin_code\n", JIT_ADDR, sizeof(countdown)) < 0 ||
	    fflush(f) || (size && ftruncate(fileno(f), (off_t)size)) ||
	    (owner != (uid_t)-1 && fchown(fileno(f), owner, (gid_t)-1)) || fclose(f))
		die(path);
}

static void plant(const char *mode, const char *arg, const char *map)
{
	char exe[4096], fifo[4200];
	ssize_t n;

	if (!strcmp(mode, "own")) {
		write_map(map, (uid_t)-1, 0);
	} else if (!strcmp(mode, "fifo")) {
		if (mkfifo(map, 0600))
			die(map);
	} else if (!strcmp(mode, "symlink") && arg) {
		if (symlink(arg, map))
			die(map);
	} else if (!strcmp(mode, "devzero")) {
		if (symlink("/dev/zero", map))
			die(map);
	} else if (!strcmp(mode, "chown") && arg) {
		write_map(map, (uid_t)atoi(arg), 0);
	} else if (!strcmp(mode, "huge")) {
		write_map(map, (uid_t)-1, HUGE_BYTES);
	} else if (!strcmp(mode, "exe-fifo")) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			die("/proc/self/exe");
		exe[n] = '\0';
		snprintf(fifo, sizeof(fifo), "%s.fifo", exe);
		if (mkfifo(fifo, 0600) || rename(fifo, exe))
			die(exe);
	} else {
		fprintf(stderr, "planted-paths: unknown mode '%s'\n", mode);
		exit(2);
	}
}

static __attribute__((noinline)) uint64_t spin_own(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	return sink;
}

int main(int argc, char **argv)
{
	uint64_t (*jit)(uint64_t);
	uint64_t end = cpu_ns() + SPIN_NS;
	bool own_code;
	char map[64];
	void *code;

	if (argc < 2) {
		fprintf(stderr, "usage: planted-paths MODE [ARG]\n");
		return 2;
	}
	own_code = !strcmp(argv[1], "exe-fifo");
	code = mmap((void *)JIT_ADDR, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (code != (void *)JIT_ADDR)
		die("mmap at JIT_ADDR");
	memcpy(code, countdown, sizeof(countdown));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		die("mprotect");
	jit = (uint64_t (*)(uint64_t))code;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	plant(argv[1], argc > 2 ? argv[2] : NULL, map);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (cpu_ns() < end)
		sink += own_code ? spin_own(100000) : jit(100000);
	return 0;
}
