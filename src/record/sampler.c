/* SPDX-License-Identifier: MIT */
#include "record/sampler.h"

#include <asm/perf_regs.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "contract/meta.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* A ring smaller than this cannot hold a few samples with a 16 KiB stack. */
#define MIN_RING_BYTES (64u << 10)
/*
 * How long a ring must go on taking samples at the asked frequency while
 * the recorder is kept from draining it (a loaded machine's scheduling, a
 * chunk's naming), once a wakeup's worth of records arrived on top of the
 * quarter of it that sampler_release leaves held at most.
 */
#define RING_HEADROOM_MS 16
/* A sample's bytes besides its stack copy: header, ids, registers, callchain. */
#define SAMPLE_BYTES_BESIDES_STACK 1280

struct ring {
	int fd;
	int cpu;
	void *base;		/* the control page, then the data */
	size_t map_len;
	uint64_t read;		/* how far drains have read */
	uint64_t held;		/* from where records are still queued: data_tail */
};

struct sampler {
	VEC(struct ring) rings;
	VEC(int) followers;	/* attach: the other threads' events, output to the rings */
	VEC(pid_t) tids;	/* attach: every thread events were opened for */
	VEC(int) switch_fds;	/* each ring's context-switch event, output to it */
	VEC(uint64_t) switch_ids;	/* their ids, sorted: the layout's switch_ids */
	struct perf_event_attr attr;
	struct rec_layout layout;
	enum sampler_event event;
	bool fell_back;
	bool kernel;		/* time in the kernel is sampled too */
	size_t ring_bytes;	/* data area of each ring */
	size_t page_size;
};

static const char *const event_names[] = {
	[SAMPLER_EVENT_AUTO] = "cycles",
	[SAMPLER_EVENT_CYCLES] = "cycles",
	[SAMPLER_EVENT_CPU_CLOCK] = META_EVENT_CPU_CLOCK,
	[SAMPLER_EVENT_TASK_CLOCK] = META_EVENT_TASK_CLOCK,
};

/* The same, user time only: perf's ":u" modifier. */
static const char *const user_event_names[] = {
	[SAMPLER_EVENT_AUTO] = "cycles:u",
	[SAMPLER_EVENT_CYCLES] = "cycles:u",
	[SAMPLER_EVENT_CPU_CLOCK] = "cpu-clock:u",
	[SAMPLER_EVENT_TASK_CLOCK] = "task-clock:u",
};

int sampler_read_sysctl(const char *name, long *value)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%ld", value) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

struct cpu_list {
	VEC(int) ids;
};

/* The online CPUs, from a list like "0-3,6". */
static void online_cpus(struct cpu_list *cpus)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int lo, hi;

	if (f) {
		while (fscanf(f, "%d", &lo) == 1) {
			hi = lo;
			if (fscanf(f, "-%d", &hi) < 0)
				break;
			for (int c = lo; c <= hi; c++)
				*VEC_PUSH(&cpus->ids) = c;
			if (fgetc(f) != ',')
				break;
		}
		fclose(f);
	}
	if (!cpus->ids.len) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		for (long c = 0; c < (n > 0 ? n : 1); c++)
			*VEC_PUSH(&cpus->ids) = (int)c;
	}
}

static void set_event(struct perf_event_attr *a, enum sampler_event e)
{
	switch (e) {
	case SAMPLER_EVENT_AUTO:
	case SAMPLER_EVENT_CYCLES:
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
		break;
	case SAMPLER_EVENT_CPU_CLOCK:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
		break;
	case SAMPLER_EVENT_TASK_CLOCK:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
		break;
	}
}

/*
 * Whether each switch out is sampled with its stack: a software event
 * counting in the kernel's scheduler, so only where the kernel's time is
 * sampled; and not when attaching, whose events are opened per thread.
 */
static bool switch_stacks_wanted(const struct sampler_opts *o, bool kernel)
{
	return o->switch_stacks && kernel && !o->attach;
}

size_t sampler_sample_bytes(enum unwind_method method, uint32_t stack_size)
{
	return SAMPLE_BYTES_BESIDES_STACK + (method == UNWIND_DWARF ? stack_size : 0);
}

/* The samples of a millisecond at o's frequency, at least one. */
static uint32_t wakeup_samples(const struct sampler_opts *o)
{
	return (uint32_t)(((uint64_t)o->freq + 999) / 1000);
}

uint32_t sampler_wakeup_bytes(const struct sampler_opts *o, bool switch_stacks,
			      size_t ring_bytes)
{
	uint64_t sample = sampler_sample_bytes(o->method, o->stack_size);
	/* Switches out are sampled at the timer's frequency too, into the same rings. */
	uint64_t rate = (uint64_t)o->freq * (switch_stacks ? 2 : 1);
	uint64_t headroom = rate * sample * RING_HEADROOM_MS / 1000;
	uint64_t room = ring_bytes - ring_bytes / 4, bytes = room > headroom ? room - headroom : 0;

	if (bytes < ring_bytes / 4)
		bytes = ring_bytes / 4;
	if (bytes > ring_bytes / 2)
		bytes = ring_bytes / 2;
	return bytes < UINT32_MAX ? (uint32_t)bytes : UINT32_MAX;
}

static void fill_attr(struct perf_event_attr *a, const struct sampler_opts *o,
		      enum sampler_event e, bool kernel, bool build_id, size_t ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	set_event(a, e);
	a->freq = 1;
	a->sample_freq = o->freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	/* The context-switch events' samples share the rings: told apart by id. */
	if (switch_stacks_wanted(o, kernel))
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	/*
	 * The kernel's frame-pointer chain in either mode: with DWARF, it
	 * goes on where a stack deeper than the copy ends it. Where kernel
	 * time is sampled, the kernel's own frames come first in it: the
	 * functions a sample in a system call or fault was taken in.
	 */
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->exclude_callchain_kernel = !kernel;
	if (o->method == UNWIND_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = unwind_regs_mask(UNWIND_DWARF);
		a->sample_stack_user = o->stack_size;
	}
	/* A command is sampled from its exec on, a running process at once. */
	a->disabled = !o->attach;
	a->enable_on_exec = !o->attach;
	a->inherit = 1;
	/*
	 * Time in system calls (a driver's ioctls) is sampled in the user
	 * stack that made them, the kernel's frames above it: the registers
	 * and the stack copied are the user's either way. Where that is
	 * refused, user time only, which perf_event_paranoid 2 allows
	 * without privilege.
	 */
	a->exclude_kernel = !kernel;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->task = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = build_id;
	a->context_switch = 1;
	/*
	 * Counted in samples, which alone the kernel counts toward
	 * wakeup_events: the other records (switches, maps) do not wake it,
	 * and the ring still does at half full.
	 */
	if (o->wake_soon) {
		a->wakeup_events = wakeup_samples(o);
		return;
	}
	a->watermark = 1;
	a->wakeup_watermark = sampler_wakeup_bytes(o, switch_stacks_wanted(o, kernel), ring_bytes);
}

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	long fd = syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static bool event_unsupported(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -EINVAL;
}

static bool refused(int err)
{
	return err == -EACCES || err == -EPERM;
}

/*
 * Finds attributes the kernel takes by opening the first CPU's event: cycles
 * then cpu-clock for SAMPLER_EVENT_AUTO, each with kernel time and then, if
 * that is refused, without, as perf falls back to ":u"; each with build-ids
 * in MMAP2 records and then without for kernels that predate them.
 */
static int open_first(struct sampler *s, const struct sampler_opts *o, int cpu,
		      struct perf_event_attr *a)
{
	static const enum sampler_event auto_events[] = {
		SAMPLER_EVENT_CYCLES, SAMPLER_EVENT_CPU_CLOCK,
	};
	const enum sampler_event *events = o->event == SAMPLER_EVENT_AUTO ? auto_events : &o->event;
	size_t nevents = o->event == SAMPLER_EVENT_AUTO ? 2 : 1;
	int fd = -EINVAL;

	for (size_t i = 0; i < nevents; i++) {
		for (int kernel = !o->user_only; kernel >= 0; kernel--) {
			for (int build_id = 1; build_id >= 0; build_id--) {
				fill_attr(a, o, events[i], kernel, build_id, s->ring_bytes);
				fd = perf_event_open(a, o->pid, cpu);
				if (fd != -EINVAL)
					break;
			}
			if (!kernel || !refused(fd))
				break;
		}
		if (fd >= 0) {
			s->event = events[i];
			s->fell_back = i > 0;
			s->kernel = !a->exclude_kernel;
			return fd;
		}
		if (!event_unsupported(fd))
			break;
	}
	return fd;
}

static void unmap_rings(struct sampler *s)
{
	for (size_t i = 0; i < s->rings.len; i++) {
		if (s->rings.v[i].base)
			munmap(s->rings.v[i].base, s->rings.v[i].map_len);
		s->rings.v[i].base = NULL;
	}
}

/* Maps every ring at the wanted size, halving it while locked memory runs out. */
static int map_rings(struct sampler *s)
{
	for (; s->ring_bytes >= MIN_RING_BYTES; s->ring_bytes /= 2) {
		size_t i;

		for (i = 0; i < s->rings.len; i++) {
			struct ring *r = &s->rings.v[i];

			r->map_len = s->page_size + s->ring_bytes;
			r->base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
				       MAP_SHARED, r->fd, 0);
			if (r->base == MAP_FAILED) {
				r->base = NULL;
				break;
			}
		}
		if (i == s->rings.len)
			return 0;
		if (errno != EPERM && errno != ENOMEM)
			return -errno;
		unmap_rings(s);
	}
	return -SAMPLER_ERR_RING_LIMIT;
}

/* Rounds down to a power of two, at least MIN_RING_BYTES. */
static size_t ring_size(size_t want)
{
	size_t bytes = MIN_RING_BYTES;

	while (bytes * 2 <= want)
		bytes *= 2;
	return bytes;
}

/* One event per online CPU, with wakeups sized for rings of s->ring_bytes. */
static int open_events(struct sampler *s, const struct sampler_opts *o)
{
	struct perf_event_attr attr;
	struct cpu_list cpus = {0};
	int err = 0;

	online_cpus(&cpus);
	for (size_t i = 0; i < cpus.ids.len; i++) {
		int cpu = cpus.ids.v[i];
		int fd = i ? perf_event_open(&attr, o->pid, cpu) : open_first(s, o, cpu, &attr);

		/* A CPU that went offline since the list was read has no event. */
		if (fd == -ENODEV && i)
			continue;
		if (fd < 0) {
			err = fd;
			break;
		}
		VEC_PUSH(&s->rings)->fd = fd;
		s->rings.v[s->rings.len - 1].cpu = cpu;
	}
	VEC_FREE(&cpus.ids);
	s->attr = attr;
	s->layout.sample_type = attr.sample_type;
	s->layout.regs_mask = attr.sample_regs_user;
	return err;
}

static void close_switch_events(struct sampler *s)
{
	for (size_t i = 0; i < s->switch_fds.len; i++)
		close(s->switch_fds.v[i]);
	s->switch_fds.len = s->switch_ids.len = 0;
	s->layout.switch_ids = NULL;
	s->layout.nswitch_ids = 0;
}

static void close_events(struct sampler *s)
{
	close_switch_events(s);
	for (size_t i = 0; i < s->followers.len; i++)
		close(s->followers.v[i]);
	s->followers.len = 0;
	unmap_rings(s);
	for (size_t i = 0; i < s->rings.len; i++)
		close(s->rings.v[i].fd);
	s->rings.len = 0;
}

/* Opens tid's event on every ring's CPU, writing to that ring. */
static int follow_thread(struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->rings.len; i++) {
		int fd = perf_event_open(&s->attr, tid, s->rings.v[i].cpu);

		if (fd < 0)
			return fd;
		*VEC_PUSH(&s->followers) = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings.v[i].fd))
			return -errno;
	}
	*VEC_PUSH(&s->tids) = tid;
	return 0;
}

static bool followed(const struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->tids.len; i++)
		if (s->tids.v[i] == tid)
			return true;
	return false;
}

/*
 * Follows every thread of the process besides the one the rings belong to.
 * A thread started by one not followed yet inherits nothing, so the threads
 * are listed again until no new one turns up.
 */
static int follow_threads(struct sampler *s, pid_t pid)
{
	char path[64];
	bool found;

	*VEC_PUSH(&s->tids) = pid;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		DIR *dir = opendir(path);
		struct dirent *e;
		int err = 0;

		if (!dir)
			return -errno;
		found = false;
		while (!err && (e = readdir(dir))) {
			pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

			if (tid <= 0 || followed(s, tid))
				continue;
			err = follow_thread(s, tid);
			/* A thread that ended meanwhile needs no event. */
			if (err == -ESRCH)
				err = 0;
			else
				found = true;
		}
		closedir(dir);
		if (err)
			return err;
	} while (found);
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * On every ring's CPU, an event that samples the context switches out of
 * the target's threads, as the main event's samples are taken (the same
 * sample_type: the stack the thread went off the CPU in, the kernel's
 * part first), written to that ring. At the timer's frequency, as perf
 * samples software events: each switch of a thread that switches fewer
 * times a second, some of one that switches more, so that a program that
 * switches all the time pays what the timer costs, not a sample a switch.
 * Not opened where the kernel refuses: the off-CPU intervals then keep the
 * thread's last sample's stack.
 */
static void open_switch_events(struct sampler *s, const struct sampler_opts *o)
{
	struct perf_event_attr a = s->attr;

	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a.freq = 1;
	a.sample_freq = o->freq;
	a.task = a.comm = a.comm_exec = a.mmap = a.mmap2 = a.build_id = 0;
	a.context_switch = 0;
	/* Switches out do not wake the recorder as samples of the timer would. */
	if (!a.watermark)
		a.wakeup_events = 0;
	for (size_t i = 0; i < s->rings.len; i++) {
		int fd = perf_event_open(&a, o->pid, s->rings.v[i].cpu);
		uint64_t id;

		if (fd < 0)
			break;
		*VEC_PUSH(&s->switch_fds) = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings.v[i].fd) ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &id))
			break;
		*VEC_PUSH(&s->switch_ids) = id;
	}
	if (s->switch_ids.len != s->rings.len) {
		close_switch_events(s);
		return;
	}
	qsort(s->switch_ids.v, s->switch_ids.len, sizeof(*s->switch_ids.v), cmp_u64);
	s->layout.switch_ids = s->switch_ids.v;
	s->layout.nswitch_ids = s->switch_ids.len;
}

int sampler_open(struct sampler **out, const struct sampler_opts *o)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	size_t opened_for;
	int err;

	s->page_size = (size_t)sysconf(_SC_PAGESIZE);
	s->ring_bytes = ring_size(o->ring_bytes);
	do {
		/*
		 * Rings smaller than the events were opened for would only
		 * wake gtrace when full: open them again for the size that
		 * fits. Nothing is lost, they start at the exec.
		 */
		opened_for = s->ring_bytes;
		err = open_events(s, o);
		if (!err)
			err = map_rings(s);
		if (!err && s->ring_bytes != opened_for)
			close_events(s);
	} while (!err && s->ring_bytes != opened_for);
	/* Output can only be redirected to a ring that is mapped. */
	if (!err && o->attach)
		err = follow_threads(s, o->pid);
	if (!err && switch_stacks_wanted(o, s->kernel))
		open_switch_events(s, o);
	if (err) {
		sampler_close(s);
		return err;
	}
	*out = s;
	return 0;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	close_events(s);
	VEC_FREE(&s->rings);
	VEC_FREE(&s->followers);
	VEC_FREE(&s->tids);
	VEC_FREE(&s->switch_fds);
	VEC_FREE(&s->switch_ids);
	free(s);
}

const char *sampler_event_name(const struct sampler *s)
{
	return s->kernel ? event_names[s->event] : user_event_names[s->event];
}

bool sampler_samples_kernel(const struct sampler *s)
{
	return s->kernel;
}

bool sampler_samples_switches(const struct sampler *s)
{
	return s->switch_ids.len != 0;
}

const char *sampler_event_label(enum sampler_event e)
{
	return event_names[e];
}

int sampler_event_parse(const char *name, enum sampler_event *e, bool *user_only)
{
	size_t n = sizeof(event_names) / sizeof(event_names[0]);

	/* From CYCLES on: AUTO only borrows the name of its first choice. */
	for (size_t i = SAMPLER_EVENT_CYCLES; i < n; i++) {
		bool plain = !strcmp(name, event_names[i]);

		if (plain || !strcmp(name, user_event_names[i])) {
			*e = (enum sampler_event)i;
			*user_only = !plain;
			return 0;
		}
	}
	return -EINVAL;
}

bool sampler_fell_back(const struct sampler *s)
{
	return s->fell_back;
}

size_t sampler_ring_bytes(const struct sampler *s)
{
	return s->ring_bytes;
}

uint32_t sampler_wakeup_at(const struct sampler *s)
{
	return s->attr.watermark ? s->attr.wakeup_watermark : 0;
}

uint32_t sampler_wakeup_samples(const struct sampler *s)
{
	return s->attr.watermark ? 0 : s->attr.wakeup_events;
}

const struct rec_layout *sampler_layout(const struct sampler *s)
{
	return &s->layout;
}

size_t sampler_threads(const struct sampler *s, const pid_t **tids)
{
	*tids = s->tids.v;
	return s->tids.len;
}

size_t sampler_nfds(const struct sampler *s)
{
	return s->rings.len;
}

int sampler_fd(const struct sampler *s, size_t i)
{
	return s->rings.v[i].fd;
}

/* Copies a record from the ring (h, or dst when it was joined there) to dst; its length. */
static size_t copy_record(const struct sampler *s, const struct perf_event_header *h,
			  const struct unwinder *u, uint8_t *dst, uint64_t *time)
{
	struct rec_sample sample;
	size_t need;

	if (h->type != PERF_RECORD_SAMPLE || rec_parse_sample(&s->layout, h, &sample)) {
		memmove(dst, h, h->size);
		*time = rec_time(&s->layout, (const void *)dst);
		return h->size;
	}
	*time = sample.time;
	need = unwinder_stack_needed(u, sample.tid, rec_sample_reg(&s->layout, &sample,
								     PERF_REG_X86_SP),
				     sample.stack_len);
	return rec_copy_sample(&s->layout, h, &sample, need, dst);
}

/* Queues the ring's new records where they lie; one that wraps around its end is copied. */
static void drain_ring(struct sampler *s, uint32_t ring, struct rec_queue *q,
		       const struct unwinder *u)
{
	struct ring *r = &s->rings.v[ring];
	struct perf_event_mmap_page *meta = r->base;
	const uint8_t *data = (const uint8_t *)r->base + s->page_size;
	uint64_t mask = s->ring_bytes - 1;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->read;

	while (head - tail >= sizeof(struct perf_event_header)) {
		/* Records are 8-byte aligned, so a header never straddles the end. */
		const struct perf_event_header *h = (const void *)(data + (tail & mask));
		size_t size = h->size, off = tail & mask;
		size_t first = size < s->ring_bytes - off ? size : s->ring_bytes - off;
		uint64_t time;
		uint8_t *dst;
		size_t len;

		if (size < sizeof(*h) || size > head - tail)
			break;
		if (first < size) {
			/* Joined first, then copied onto itself. */
			dst = rec_queue_reserve(q, size);
			memcpy(dst, data + off, first);
			memcpy(dst + first, data, size - first);
			len = copy_record(s, (const void *)dst, u, dst, &time);
			rec_queue_commit(q, len, time);
		} else {
			rec_queue_add(q, h, rec_time(&s->layout, h), ring, tail);
		}
		tail += size;
	}
	r->read = tail;
}

void sampler_drain(struct sampler *s, struct rec_queue *q, const struct unwinder *u)
{
	for (size_t i = 0; i < s->rings.len; i++)
		drain_ring(s, (uint32_t)i, q, u);
}

void sampler_release(struct sampler *s, struct rec_queue *q, const struct unwinder *u)
{
	for (size_t i = 0; i < s->rings.len; i++)
		s->rings.v[i].held = s->rings.v[i].read;
	for (size_t i = 0; i < q->refs.len; i++) {
		const struct rec_ref *r = &q->refs.v[i];

		if (r->in_ring && r->ring_pos < s->rings.v[r->ring].held)
			s->rings.v[r->ring].held = r->ring_pos;
	}
	/*
	 * A ring whose queued records hold more than a quarter of it is freed
	 * by copying them out: the space left to the kernel stays at least
	 * three quarters of the ring, however late the records' times.
	 */
	for (size_t i = 0; i < q->refs.len; i++) {
		const struct rec_ref *r = &q->refs.v[i];
		const struct ring *ring = r->in_ring ? &s->rings.v[r->ring] : NULL;
		uint64_t time;
		void *dst;

		if (!ring || ring->read - ring->held <= s->ring_bytes / 4)
			continue;
		dst = rec_queue_reserve(q, r->in_ring->size);
		rec_queue_settle(q, i, copy_record(s, r->in_ring, u, dst, &time));
	}
	for (size_t i = 0; i < s->rings.len; i++) {
		struct ring *r = &s->rings.v[i];
		struct perf_event_mmap_page *meta = r->base;

		if (r->read - r->held > s->ring_bytes / 4)
			r->held = r->read;
		__atomic_store_n(&meta->data_tail, r->held, __ATOMIC_RELEASE);
	}
}

void sampler_disable(struct sampler *s)
{
	for (size_t i = 0; i < s->rings.len; i++)
		ioctl(s->rings.v[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < s->followers.len; i++)
		ioctl(s->followers.v[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < s->switch_fds.len; i++)
		ioctl(s->switch_fds.v[i], PERF_EVENT_IOC_DISABLE, 0);
}
