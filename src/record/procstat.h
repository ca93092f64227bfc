/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_PROCSTAT_H
#define GTRACE_RECORD_PROCSTAT_H

/*
 * Parsers of the /proc files that metrics are read from, on the bytes of
 * one read: no I/O here, so that tests can feed them any text. Each
 * returns 0, or -EINVAL when a field it needs is missing or malformed.
 */

#include <stddef.h>
#include <stdint.h>

/* /proc/PID/stat: what a process has used, all its threads together. */
struct proc_stat {
	char state;		/* R running or runnable, S sleeping, D waiting on I/O, ... */
	uint64_t utime, stime;	/* clock ticks (sysconf(_SC_CLK_TCK)) */
	uint64_t minflt, majflt;
	uint64_t threads;
	uint64_t start_ticks;	/* when it started, in clock ticks after boot */
	uint64_t rss_pages;
};

int procstat_parse_stat(const char *buf, size_t len, struct proc_stat *st);

/* /proc/PID/task/TID/status: a thread's context switches. */
int procstat_parse_ctxsw(const char *buf, size_t len, uint64_t *voluntary,
			 uint64_t *involuntary);

/* /proc/PID/io: bytes the process made storage read and write. */
int procstat_parse_io(const char *buf, size_t len, uint64_t *read_bytes,
		      uint64_t *write_bytes);

/* The modes of the "cpu" line of /proc/stat, in its order. */
enum sys_cpu_mode {
	SYS_CPU_USER, SYS_CPU_NICE, SYS_CPU_SYSTEM, SYS_CPU_IDLE, SYS_CPU_IOWAIT,
	SYS_CPU_IRQ, SYS_CPU_SOFTIRQ, SYS_CPU_STEAL, SYS_CPU_MODES
};

/* /proc/stat's first line: the machine's CPU time by mode, in clock ticks. */
int procstat_parse_cpu(const char *buf, size_t len, uint64_t ticks[SYS_CPU_MODES]);

/* /proc/meminfo: MemTotal and MemAvailable, in KiB. */
int procstat_parse_meminfo(const char *buf, size_t len, uint64_t *total_kib,
			   uint64_t *available_kib);

/* /proc/loadavg: the one-minute load average, in hundredths. */
int procstat_parse_loadavg(const char *buf, size_t len, uint64_t *load1_centi);

#endif
