/* SPDX-License-Identifier: MIT */
#include "record/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "contract/counters.h"
#include "contract/meta.h"
#include "contract/metrics.h"
#include "record/nvml.h"
#include "record/procstat.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* What a series is before the collector has strings for it. */
struct quantity {
	const char *name;
	const char *unit;
	uint32_t decimals;
};

enum proc_quantity {
	PROC_CPU_USER, PROC_CPU_SYSTEM, PROC_RSS, PROC_THREADS, PROC_FAULTS_MINOR,
	PROC_FAULTS_MAJOR, PROC_CTXSW_VOLUNTARY, PROC_CTXSW_INVOLUNTARY, PROC_IO_READ,
	PROC_IO_WRITE, PROC_QUANTITIES
};

static const struct quantity proc_quantities[PROC_QUANTITIES] = {
	[PROC_CPU_USER] = { SERIES_PROC_CPU_USER, "%", 1 },
	[PROC_CPU_SYSTEM] = { SERIES_PROC_CPU_SYSTEM, "%", 1 },
	[PROC_RSS] = { SERIES_PROC_RSS, "KiB", 0 },
	[PROC_THREADS] = { SERIES_PROC_THREADS, "", 0 },
	[PROC_FAULTS_MINOR] = { SERIES_PROC_FAULTS_MINOR, "/s", 0 },
	[PROC_FAULTS_MAJOR] = { SERIES_PROC_FAULTS_MAJOR, "/s", 0 },
	[PROC_CTXSW_VOLUNTARY] = { SERIES_PROC_CTXSW_VOLUNTARY, "/s", 0 },
	[PROC_CTXSW_INVOLUNTARY] = { SERIES_PROC_CTXSW_INVOLUNTARY, "/s", 0 },
	[PROC_IO_READ] = { SERIES_PROC_IO_READ, "KiB/s", 0 },
	[PROC_IO_WRITE] = { SERIES_PROC_IO_WRITE, "KiB/s", 0 },
};

/* The machine's: the CPU modes first, in enum sys_cpu_mode's order. */
enum sys_quantity {
	SYS_MEM_USED = SYS_CPU_MODES, SYS_MEM_AVAILABLE, SYS_LOAD1, SYS_QUANTITIES
};

static const struct quantity sys_quantities[SYS_QUANTITIES] = {
	[SYS_CPU_USER] = { SERIES_SYS_CPU_USER, "%", 1 },
	[SYS_CPU_NICE] = { SERIES_SYS_CPU_NICE, "%", 1 },
	[SYS_CPU_SYSTEM] = { SERIES_SYS_CPU_SYSTEM, "%", 1 },
	[SYS_CPU_IDLE] = { SERIES_SYS_CPU_IDLE, "%", 1 },
	[SYS_CPU_IOWAIT] = { SERIES_SYS_CPU_IOWAIT, "%", 1 },
	[SYS_CPU_IRQ] = { SERIES_SYS_CPU_IRQ, "%", 1 },
	[SYS_CPU_SOFTIRQ] = { SERIES_SYS_CPU_SOFTIRQ, "%", 1 },
	[SYS_CPU_STEAL] = { SERIES_SYS_CPU_STEAL, "%", 1 },
	[SYS_MEM_USED] = { SERIES_SYS_MEM_USED, "KiB", 0 },
	[SYS_MEM_AVAILABLE] = { SERIES_SYS_MEM_AVAILABLE, "KiB", 0 },
	[SYS_LOAD1] = { SERIES_SYS_LOAD1, "", 2 },
};

static const struct quantity gpu_quantities[GPU_QUANTITIES] = {
	[GPU_SM_UTIL] = { SERIES_GPU_SM_UTIL, "%", 0 },
	[GPU_MEM_UTIL] = { SERIES_GPU_MEM_UTIL, "%", 0 },
	[GPU_MEM_USED] = { SERIES_GPU_MEM_USED, "KiB", 0 },
	[GPU_MEM_TOTAL] = { SERIES_GPU_MEM_TOTAL, "KiB", 0 },
	[GPU_POWER] = { SERIES_GPU_POWER, "W", 3 },
	[GPU_TEMP] = { SERIES_GPU_TEMP, "C", 0 },
	[GPU_CLOCK_SM] = { SERIES_GPU_CLOCK_SM, "MHz", 0 },
	[GPU_CLOCK_MEM] = { SERIES_GPU_CLOCK_MEM, "MHz", 0 },
	[GPU_PCIE_RX] = { SERIES_GPU_PCIE_RX, "KiB/s", 0 },
	[GPU_PCIE_TX] = { SERIES_GPU_PCIE_TX, "KiB/s", 0 },
	[GPU_THROTTLE] = { SERIES_GPU_THROTTLE, METRIC_UNIT_MASK, 0 },
};

/* A series made by the thread, waiting for the collector: its subject and quantity. */
struct series_def {
	const struct quantity *q;
	uint32_t pid;
	uint32_t gpu;
};

/* What a process has used so far, as /proc counts it. */
struct proc_counts {
	uint64_t utime, stime, minflt, majflt;
	uint64_t read_bytes, write_bytes;
	bool io;				/* /proc/PID/io could be read */
};

/*
 * The files of a process stay open: a read of an open /proc file costs
 * half of an open, read and close, and they stay this process's files
 * whatever pid is reused.
 */
struct proc {
	uint32_t pid;
	int dir;			/* /proc/PID */
	int stat, status, io;		/* its files; io is -1 when not ours to read */
	bool seen;			/* read once: the counts below are there */
	uint64_t ts;			/* of that reading */
	struct proc_counts counts;
	struct u64map ctxsw;		/* tid -> voluntary << 32 | involuntary */
	uint32_t series[PROC_QUANTITIES];	/* metric ids, 0 not made yet */
};

struct machine {
	int stat, meminfo, loadavg;	/* fds, -1 when not open */
	bool seen;
	uint64_t ticks[SYS_CPU_MODES];
	uint32_t series[SYS_QUANTITIES];
};

struct gpu {
	bool lost;
	uint32_t series[GPU_QUANTITIES];
};

/* A process's appearance or exit, in the order the recorder saw them. */
struct process_change {
	uint32_t pid;
	bool alive;
};

struct metrics {
	uint64_t interval_ns;
	pthread_t thread;
	bool started;

	/* The reading thread's own. */
	struct machine machine;
	VEC(struct proc *) procs;
	struct nvml *nvml;
	struct gpu *gpus;
	uint32_t nseries;		/* metric ids made so far */
	uint64_t start_ns;
	uint64_t last_tick;
	long clock_ticks;		/* sysconf(_SC_CLK_TCK) */
	uint64_t page_kib;
	VEC(struct series_def) new_series;	/* made during this tick */
	VEC(struct tr_metric_value) tick_values;
	char nvml_status[256];
	VEC(struct process_change) my_changes;

	/* Shared with the recorder's thread, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	VEC(struct process_change) changes;
	VEC(struct series_def) series;
	VEC(struct tr_metric_tick) ticks;
	VEC(struct tr_metric_value) values;
	uint64_t counters[METRICS_COUNTERS];
	char status[256];		/* metrics-nvml */

	/* The recorder's thread's own. */
	uint64_t counters_taken[METRICS_COUNTERS];
	char status_taken[256];
	uint32_t counter_ids[METRICS_COUNTERS];
	bool meta_written;
};

static int open_proc_file(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Reads a /proc file from its start: its length, or -1. */
static ssize_t read_at_start(int fd, char *buf, size_t size)
{
	ssize_t n = fd < 0 ? -1 : pread(fd, buf, size - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* The same for a file under a process's directory, opened for this read only. */
static ssize_t read_under(int dir, const char *name, char *buf, size_t size)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	ssize_t n = read_at_start(fd, buf, size);

	if (fd >= 0)
		close(fd);
	return n;
}

/* One value of a series, making the series at its first value. */
static void put_value(struct metrics *m, uint32_t *id, const struct quantity *q, uint32_t pid,
		      uint32_t gpu, uint64_t value)
{
	if (!*id) {
		*id = ++m->nseries;
		*VEC_PUSH(&m->new_series) = (struct series_def){ q, pid, gpu };
	}
	*VEC_PUSH(&m->tick_values) = (struct tr_metric_value){ *id, value };
}

static uint64_t since(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* How much a count grew over dt_ns, per second, times scale, rounded. */
static uint64_t rate(uint64_t now, uint64_t before, double scale, uint64_t dt_ns)
{
	return (uint64_t)((double)since(now, before) * scale * 1e9 / (double)dt_ns + 0.5);
}

static void read_machine(struct metrics *m)
{
	struct machine *ma = &m->machine;
	uint64_t ticks[SYS_CPU_MODES], total = 0, total_kib, avail_kib, load;
	char buf[4096];
	ssize_t n;

	n = read_at_start(ma->stat, buf, sizeof(buf));
	if (n > 0 && !procstat_parse_cpu(buf, (size_t)n, ticks)) {
		for (int i = 0; i < SYS_CPU_MODES; i++)
			total += since(ticks[i], ma->ticks[i]);
		for (int i = 0; ma->seen && total && i < SYS_CPU_MODES; i++)
			put_value(m, &ma->series[i], &sys_quantities[i], 0, 0,
				  (since(ticks[i], ma->ticks[i]) * 1000 + total / 2) / total);
		memcpy(ma->ticks, ticks, sizeof(ticks));
		ma->seen = true;
	} else if (ma->stat >= 0) {
		m->counters[METRICS_READ_FAILED]++;
	}
	n = read_at_start(ma->meminfo, buf, sizeof(buf));
	if (n > 0 && !procstat_parse_meminfo(buf, (size_t)n, &total_kib, &avail_kib)) {
		put_value(m, &ma->series[SYS_MEM_USED], &sys_quantities[SYS_MEM_USED], 0, 0,
			  since(total_kib, avail_kib));
		put_value(m, &ma->series[SYS_MEM_AVAILABLE], &sys_quantities[SYS_MEM_AVAILABLE],
			  0, 0, avail_kib);
	}
	n = read_at_start(ma->loadavg, buf, sizeof(buf));
	if (n > 0 && !procstat_parse_loadavg(buf, (size_t)n, &load))
		put_value(m, &ma->series[SYS_LOAD1], &sys_quantities[SYS_LOAD1], 0, 0, load);
}

/* One thread's status: its switches since p's last reading, added to the sums. */
static void count_ctxsw(const struct proc *p, uint64_t tid, const char *buf, ssize_t n,
			struct u64map *now, uint64_t *voluntary, uint64_t *involuntary)
{
	uint64_t v, iv, before = 0;

	if (n <= 0 || procstat_parse_ctxsw(buf, (size_t)n, &v, &iv))
		return;
	u64map_get(&p->ctxsw, tid, &before);
	*voluntary += since(v, before >> 32);
	*involuntary += since(iv, before & UINT32_MAX);
	u64map_put(now, tid, v << 32 | (iv & UINT32_MAX));
}

/*
 * Adds up the context switches of p's threads since its last reading,
 * thread by thread, so that a thread exiting meanwhile takes away nothing
 * but its own last switches. A process of one thread is read through its
 * own status; others through each thread's.
 */
static int read_ctxsw(struct proc *p, uint64_t threads, uint64_t *voluntary,
		      uint64_t *involuntary)
{
	char buf[4096], name[sizeof(((struct dirent *)0)->d_name) + 8];
	struct u64map now = {0};
	struct dirent *e;
	DIR *d;
	int task;

	*voluntary = *involuntary = 0;
	if (threads <= 1) {
		count_ctxsw(p, p->pid, buf, read_at_start(p->status, buf, sizeof(buf)), &now,
			    voluntary, involuntary);
	} else {
		task = openat(p->dir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		d = task >= 0 ? fdopendir(task) : NULL;
		if (!d) {
			int err = -errno;

			if (task >= 0)
				close(task);
			return err;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(name, sizeof(name), "%s/status", e->d_name);
			count_ctxsw(p, strtoull(e->d_name, NULL, 10), buf,
				    read_under(dirfd(d), name, buf, sizeof(buf)), &now, voluntary,
				    involuntary);
		}
		closedir(d);
	}
	u64map_free(&p->ctxsw);
	p->ctxsw = now;
	return 0;
}

static void put_proc(struct metrics *m, struct proc *p, enum proc_quantity q, uint64_t value)
{
	put_value(m, &p->series[q], &proc_quantities[q], p->pid, 0, value);
}

/* Reads one process; -ESRCH once it is gone. */
static int read_proc(struct metrics *m, struct proc *p, uint64_t now)
{
	struct proc_counts c = {0}, *b = &p->counts;
	struct proc_stat st;
	uint64_t dt = since(now, p->ts), vol, invol;
	/* A clock tick of CPU time a second is 100 / CLK_TCK %, stored in tenths. */
	double tenths = 1000.0 / (double)m->clock_ticks;
	char buf[4096];
	ssize_t n;

	n = read_at_start(p->stat, buf, sizeof(buf));
	if (n <= 0 || procstat_parse_stat(buf, (size_t)n, &st))
		return -ESRCH;
	if (read_ctxsw(p, st.threads, &vol, &invol))
		m->counters[METRICS_READ_FAILED]++;
	n = read_at_start(p->io, buf, sizeof(buf));
	c.io = n > 0 && !procstat_parse_io(buf, (size_t)n, &c.read_bytes, &c.write_bytes);
	c.utime = st.utime;
	c.stime = st.stime;
	c.minflt = st.minflt;
	c.majflt = st.majflt;

	/* None resident: an exiting process, its memory gone; no figure, not a 0. */
	if (st.rss_pages)
		put_proc(m, p, PROC_RSS, st.rss_pages * m->page_kib);
	put_proc(m, p, PROC_THREADS, st.threads);
	if (p->seen && dt) {
		put_proc(m, p, PROC_CPU_USER, rate(c.utime, b->utime, tenths, dt));
		put_proc(m, p, PROC_CPU_SYSTEM, rate(c.stime, b->stime, tenths, dt));
		put_proc(m, p, PROC_FAULTS_MINOR, rate(c.minflt, b->minflt, 1, dt));
		put_proc(m, p, PROC_FAULTS_MAJOR, rate(c.majflt, b->majflt, 1, dt));
		put_proc(m, p, PROC_CTXSW_VOLUNTARY, rate(vol, 0, 1, dt));
		put_proc(m, p, PROC_CTXSW_INVOLUNTARY, rate(invol, 0, 1, dt));
		if (c.io && b->io) {
			put_proc(m, p, PROC_IO_READ, rate(c.read_bytes, b->read_bytes, 1.0 / 1024, dt));
			put_proc(m, p, PROC_IO_WRITE, rate(c.write_bytes, b->write_bytes, 1.0 / 1024, dt));
		}
	}
	*b = c;
	p->ts = now;
	p->seen = true;
	return 0;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void free_proc(struct proc *p)
{
	close_fd(p->stat);
	close_fd(p->status);
	close_fd(p->io);
	close(p->dir);
	u64map_free(&p->ctxsw);
	free(p);
}

static long find_proc(const struct metrics *m, uint32_t pid)
{
	for (size_t i = 0; i < m->procs.len; i++)
		if (m->procs.v[i]->pid == pid)
			return (long)i;
	return -1;
}

static void drop_proc(struct metrics *m, size_t i)
{
	free_proc(m->procs.v[i]);
	m->procs.v[i] = m->procs.v[--m->procs.len];
}

/* The processes that appeared and exited since the last tick. */
static void apply_changes(struct metrics *m)
{
	pthread_mutex_lock(&m->lock);
	VEC_APPEND(&m->my_changes, m->changes.v, m->changes.len);
	m->changes.len = 0;
	pthread_mutex_unlock(&m->lock);
	for (size_t i = 0; i < m->my_changes.len; i++) {
		const struct process_change *ch = &m->my_changes.v[i];
		long at = find_proc(m, ch->pid);
		char path[32];
		struct proc *p;
		int dir;

		if (!ch->alive) {
			if (at >= 0)
				drop_proc(m, (size_t)at);
			continue;
		}
		if (at >= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%u", ch->pid);
		dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			continue;	/* gone already: nothing to read */
		p = xcalloc(1, sizeof(*p));
		p->pid = ch->pid;
		p->dir = dir;
		p->stat = openat(dir, "stat", O_RDONLY | O_CLOEXEC);
		p->status = openat(dir, "status", O_RDONLY | O_CLOEXEC);
		p->io = openat(dir, "io", O_RDONLY | O_CLOEXEC);
		if (p->stat < 0 || p->status < 0) {
			/* Out of files, most likely: counted, not followed. */
			m->counters[METRICS_READ_FAILED]++;
			free_proc(p);
			continue;
		}
		*VEC_PUSH(&m->procs) = p;
		m->counters[METRICS_PROCESSES]++;
	}
	m->my_changes.len = 0;
}

static void set_nvml_status(struct metrics *m, uint64_t now)
{
	unsigned gpus = nvml_gpus(m->nvml);
	size_t len;

	len = (size_t)snprintf(m->nvml_status, sizeof(m->nvml_status), STATUS_ON ": %u GPU%s", gpus,
			       gpus == 1 ? "" : "s");
	for (unsigned i = 0; i < gpus && len < sizeof(m->nvml_status); i++)
		if (m->gpus[i].lost)
			len += (size_t)snprintf(m->nvml_status + len, sizeof(m->nvml_status) - len,
						"; GPU%u lost %.1f s into the recording", i,
						(double)since(now, m->start_ns) / 1e9);
}

static void read_gpus(struct metrics *m, uint64_t now)
{
	uint64_t values[GPU_QUANTITIES];
	uint32_t have;

	for (unsigned i = 0; m->nvml && i < nvml_gpus(m->nvml); i++) {
		if (m->gpus[i].lost)
			continue;
		if (nvml_read(m->nvml, i, values, &have) == -ENODEV) {
			m->gpus[i].lost = true;
			set_nvml_status(m, now);
			continue;
		}
		for (int q = 0; q < GPU_QUANTITIES; q++)
			if (have & (1u << q))
				put_value(m, &m->gpus[i].series[q], &gpu_quantities[q], 0, i + 1,
					  values[q]);
	}
}

/* One reading of everything, handed over as one tick. */
static void tick(struct metrics *m)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	apply_changes(m);
	read_machine(m);
	for (size_t i = 0; i < m->procs.len;) {
		if (read_proc(m, m->procs.v[i], now))
			drop_proc(m, i);	/* exited: its exit may not have reached us yet */
		else
			i++;
	}
	read_gpus(m, now);
	m->last_tick = now;

	pthread_mutex_lock(&m->lock);
	VEC_APPEND(&m->series, m->new_series.v, m->new_series.len);
	VEC_APPEND(&m->values, m->tick_values.v, m->tick_values.len);
	*VEC_PUSH(&m->ticks) = (struct tr_metric_tick){ now, (uint32_t)m->tick_values.len };
	m->counters[METRICS_TICKS]++;
	m->counters[METRICS_CPU_NS] = now_ns(CLOCK_THREAD_CPUTIME_ID);
	memcpy(m->status, m->nvml_status, sizeof(m->status));
	pthread_mutex_unlock(&m->lock);
	m->new_series.len = 0;
	m->tick_values.len = 0;
}

static void start_nvml(struct metrics *m)
{
	char why[200];

	if (nvml_open(&m->nvml, why, sizeof(why))) {
		snprintf(m->nvml_status, sizeof(m->nvml_status), STATUS_OFF ": %s", why);
		return;
	}
	m->gpus = xcalloc(nvml_gpus(m->nvml), sizeof(*m->gpus));
	set_nvml_status(m, m->start_ns);
}

static struct timespec to_timespec(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC) };
}

static void *run(void *arg)
{
	struct metrics *m = arg;
	uint64_t next;

	start_nvml(m);
	next = now_ns(CLOCK_MONOTONIC);
	pthread_mutex_lock(&m->lock);
	while (!m->stopping) {
		struct timespec until;
		uint64_t now;

		pthread_mutex_unlock(&m->lock);
		tick(m);
		now = now_ns(CLOCK_MONOTONIC);
		next += m->interval_ns;
		pthread_mutex_lock(&m->lock);
		if (now >= next) {
			/* Late by whole intervals: those readings are missed, not made up. */
			uint64_t late = (now - next) / m->interval_ns + 1;

			m->counters[METRICS_MISSED] += late;
			next += late * m->interval_ns;
		}
		until = to_timespec(next);
		while (!m->stopping &&
		       pthread_cond_timedwait(&m->wake, &m->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&m->lock);
	/* The last reading, unless one was just made: a short interval's rates are noise. */
	if (now_ns(CLOCK_MONOTONIC) - m->last_tick >= m->interval_ns / 2)
		tick(m);
	return NULL;
}

/* Each process followed holds four files open: as many as the hard limit allows. */
static void raise_file_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int metrics_start(struct metrics **out, uint64_t interval_ns)
{
	struct metrics *m = xcalloc(1, sizeof(*m));
	pthread_condattr_t attr;
	int err;

	m->interval_ns = interval_ns;
	m->start_ns = now_ns(CLOCK_MONOTONIC);
	m->clock_ticks = sysconf(_SC_CLK_TCK);
	m->page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	raise_file_limit();
	m->machine.stat = open_proc_file("/proc/stat");
	m->machine.meminfo = open_proc_file("/proc/meminfo");
	m->machine.loadavg = open_proc_file("/proc/loadavg");
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&m->thread, NULL, run, m);
	if (err) {
		metrics_free(m);
		*out = NULL;
		return -err;
	}
	m->started = true;
	*out = m;
	return 0;
}

void metrics_process(struct metrics *m, uint32_t pid, bool alive)
{
	pthread_mutex_lock(&m->lock);
	*VEC_PUSH(&m->changes) = (struct process_change){ pid, alive };
	pthread_mutex_unlock(&m->lock);
}

static void put_meta(struct metrics *m, struct collector *c)
{
	char interval[32];

	if (!m->meta_written) {
		snprintf(interval, sizeof(interval), "%llu", (unsigned long long)m->interval_ns);
		collector_meta(c, META_METRICS_INTERVAL, interval);
		for (int k = 0; k < METRICS_COUNTERS; k++)
			m->counter_ids[k] = collector_intern(c, metrics_counters[k].name);
		m->meta_written = true;
	}
	if (m->status[0] && strcmp(m->status, m->status_taken)) {
		collector_meta(c, META_METRICS_NVML, m->status);
		memcpy(m->status_taken, m->status, sizeof(m->status_taken));
	}
}

void metrics_take(struct metrics *m, struct collector *c)
{
	struct tr_metric *rows;

	pthread_mutex_lock(&m->lock);
	put_meta(m, c);
	rows = xcalloc(m->series.len + 1, sizeof(*rows));
	for (size_t i = 0; i < m->series.len; i++) {
		const struct series_def *d = &m->series.v[i];

		rows[i] = (struct tr_metric){
			.name = collector_intern(c, d->q->name),
			.unit = collector_intern(c, d->q->unit),
			.pid = d->pid,
			.gpu = d->gpu,
			.decimals = d->q->decimals,
		};
	}
	collector_add_metrics(c, rows, m->series.len, m->ticks.v, m->ticks.len, m->values.v,
			      m->values.len);
	for (int k = 0; k < METRICS_COUNTERS; k++) {
		collector_add_to_counter(c, m->counter_ids[k],
					 m->counters[k] - m->counters_taken[k]);
		m->counters_taken[k] = m->counters[k];
	}
	m->series.len = m->ticks.len = m->values.len = 0;
	pthread_mutex_unlock(&m->lock);
	free(rows);
}

void metrics_stop(struct metrics *m)
{
	if (!m || !m->started)
		return;
	pthread_mutex_lock(&m->lock);
	m->stopping = true;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	m->started = false;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	metrics_stop(m);
	close_fd(m->machine.stat);
	close_fd(m->machine.meminfo);
	close_fd(m->machine.loadavg);
	for (size_t i = 0; i < m->procs.len; i++)
		free_proc(m->procs.v[i]);
	VEC_FREE(&m->procs);
	nvml_close(m->nvml);
	free(m->gpus);
	VEC_FREE(&m->new_series);
	VEC_FREE(&m->tick_values);
	VEC_FREE(&m->my_changes);
	VEC_FREE(&m->changes);
	VEC_FREE(&m->series);
	VEC_FREE(&m->ticks);
	VEC_FREE(&m->values);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->wake);
	free(m);
}
