/* SPDX-License-Identifier: MIT */
/*
 * What a recording says about itself in its meta rows: the command, the
 * sampling settings, the machine, the job rank, the clocks at the start and
 * the end, what recording cost and how the command exited.
 */
#include "record/session-internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "contract/meta.h"
#include "record/jobrank.h"
#include "record/secure-exec.h"
#include "util/clock.h"
#include "util/xalloc.h"

static void format_iso_time(uint64_t ns, char *buf, size_t size)
{
	time_t secs = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%06uZ", (unsigned)(ns % NSEC_PER_SEC / 1000));
}

static void meta_u64(struct collector *c, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	collector_meta(c, key, buf);
}

/* A running process's command line from /proc, arguments joined by spaces. */
static char *proc_command(pid_t pid)
{
	char path[64], *buf = xmalloc(4096);
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, 4095, f);
		fclose(f);
	}
	while (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}

static char *command_line(const struct session *se)
{
	const struct record_opts *o = se->o;
	size_t len = 0;
	char *command;

	if (o->attach)
		return proc_command(o->attach);
	for (char **a = o->argv; *a; a++)
		len += strlen(*a) + 1;
	command = xmalloc(len + 1);
	command[0] = '\0';
	for (char **a = o->argv; *a; a++) {
		if (a != o->argv)
			strcat(command, " ");
		strcat(command, *a);
	}
	return command;
}

/* Whether time in the kernel was sampled, and why not. */
static const char *kernel_time(const struct session *se)
{
	if (sampler_samples_kernel(se->sampler))
		return "sampled, the kernel's frames above the calling user stack";
	if (se->o->user_only)
		return "not sampled (':u' asked for user time only)";
	return "not sampled: refused; root, CAP_PERFMON or perf_event_paranoid <= 1 allows it";
}

/* Where this recording stands in a job its launcher started, if it does. */
static void add_rank_meta(struct collector *c)
{
	struct job_rank r;

	job_rank_from_env(&r);
	if (r.rank < 0)
		return;
	meta_u64(c, META_RANK, (uint64_t)r.rank);
	if (r.local_rank >= 0)
		meta_u64(c, META_LOCAL_RANK, (uint64_t)r.local_rank);
	if (r.world_size >= 0)
		meta_u64(c, META_WORLD_SIZE, (uint64_t)r.world_size);
	collector_meta(c, META_RANK_FROM, r.from);
}

/* What puts the recordings of several machines on one time axis. */
static void add_clock_pair(struct collector *c, const char *key)
{
	int64_t real, mono;
	char buf[64];

	job_clock_pair(&real, &mono);
	snprintf(buf, sizeof(buf), "%lld %lld", (long long)real, (long long)mono);
	collector_meta(c, key, buf);
}

void session_add_start_meta(struct session *se)
{
	const struct record_opts *o = se->o;
	struct collector *c = se->c;
	char buf[HOST_NAME_MAX + 64];
	struct utsname uts;
	char *command;
	long paranoid;

	command = command_line(se);
	collector_meta(c, META_COMMAND, command);
	free(command);

	collector_meta(c, META_EVENT, sampler_event_name(se->sampler));
	collector_meta(c, META_KERNEL_TIME, kernel_time(se));
	meta_u64(c, META_FREQUENCY, o->freq);
	collector_meta(c, META_CALL_GRAPH, o->method == UNWIND_DWARF ? "dwarf" : "fp");
	if (o->method == UNWIND_DWARF)
		meta_u64(c, META_STACK_SIZE, o->stack_size);
	meta_u64(c, META_RING_SIZE, sampler_ring_bytes(se->sampler));
	if (sampler_wakeup_samples(se->sampler) == 1)
		snprintf(buf, sizeof(buf), "each sample");
	else if (sampler_wakeup_samples(se->sampler))
		snprintf(buf, sizeof(buf), "every %" PRIu32 " samples",
			 sampler_wakeup_samples(se->sampler));
	else
		snprintf(buf, sizeof(buf), "every %" PRIu32 " bytes",
			 sampler_wakeup_at(se->sampler));
	collector_meta(c, META_WAKEUPS, buf);
	if (o->method == UNWIND_DWARF)
		meta_u64(c, META_UNWIND_THREADS, session_unwind_threads(o));
	if (!uname(&uts))
		collector_meta(c, META_KERNEL, uts.release);
	if (!gethostname(buf, sizeof(buf))) {
		buf[sizeof(buf) - 1] = '\0';
		collector_meta(c, META_HOSTNAME, buf);
	}
	/* Signed: -1 is the most permissive setting. */
	if (!sampler_read_sysctl("perf_event_paranoid", &paranoid)) {
		snprintf(buf, sizeof(buf), "%ld", paranoid);
		collector_meta(c, META_PARANOID, buf);
	}
	if (!o->attach) {
		se->res->sampling_stopped = secure_exec_why(o->argv[0]);
		if (se->res->sampling_stopped)
			collector_meta(c, META_SAMPLING_STOPPED, se->res->sampling_stopped);
	}
	add_rank_meta(c);
	add_clock_pair(c, META_CLOCK_START);
	format_iso_time(now_ns(CLOCK_REALTIME), buf, sizeof(buf));
	collector_meta(c, META_START_TIME, buf);
	meta_u64(c, META_START_NS, se->start_ns);
	meta_u64(c, META_PID, (uint64_t)se->target);
	collector_meta(c, META_GTRACE_VERSION, GTRACE_VERSION);
	cuda_inject_meta(&se->cuda, c);
}

/* The recorder's own CPU time (user and system) until now. */
static uint64_t own_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000;
}

void session_add_end_meta(struct session *se, uint64_t end_ns)
{
	char buf[64];

	/* Before the names are worked out: what recording cost, sample by sample. */
	meta_u64(se->c, META_RECORDER_CPU_NS, own_cpu_ns());
	meta_u64(se->c, META_RECORDER_NAMING_NS, collector_naming_ns(se->c));

	add_clock_pair(se->c, META_CLOCK_END);
	format_iso_time(now_ns(CLOCK_REALTIME), buf, sizeof(buf));
	collector_meta(se->c, META_END_TIME, buf);
	meta_u64(se->c, META_END_NS, end_ns);
	snprintf(buf, sizeof(buf), "%.3f", (double)(end_ns - se->start_ns) / NSEC_PER_SEC);
	collector_meta(se->c, META_DURATION, buf);
	/* An attached process goes on, or ended with a status only its parent sees. */
	if (!se->o->attach) {
		snprintf(buf, sizeof(buf), "%d", se->res->exit_status);
		collector_meta(se->c, META_EXIT_STATUS, buf);
	}
}
