/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_SAMPLER_H
#define GTRACE_RECORD_SAMPLER_H

/*
 * The perf events of a recording: one per online CPU, following the target
 * and everything it starts (inherit), enabled when it execs, each with a
 * ring the kernel writes samples, maps, forks, exits and context switches to.
 *
 * Attached to a running process, there is one event per CPU for each of
 * its threads, enabled at once; each CPU's events write to that CPU's ring,
 * and threads and processes started later inherit them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/queue.h"
#include "record/records.h"
#include "unwind/unwind.h"

enum sampler_event {
	SAMPLER_EVENT_AUTO,	/* cycles where the PMU allows, else cpu-clock */
	SAMPLER_EVENT_CYCLES,
	SAMPLER_EVENT_CPU_CLOCK,
	SAMPLER_EVENT_TASK_CLOCK,
};

struct sampler_opts {
	pid_t pid;			/* the target, before its exec */
	bool attach;			/* pid is running already: follow it from now */
	enum sampler_event event;
	bool user_only;			/* leave the kernel's time out even where allowed */
	bool switch_stacks;		/* sample each switch out (where the kernel's time is) */
	uint32_t freq;			/* samples per second per thread */
	enum unwind_method method;
	uint32_t stack_size;		/* user stack bytes copied per sample (dwarf) */
	size_t ring_bytes;		/* per CPU, a power of two; less if memory is locked down */
	/*
	 * Wake the recorder as samples land (each sample up to 1000 Hz, every
	 * few above: once a millisecond of a thread's), not once a ring is a
	 * quarter to a half full: a CPython program's Python stacks are read
	 * then, before its threads move on.
	 */
	bool wake_soon;
};

/* The rings could not be mapped within the locked-memory limits. */
#define SAMPLER_ERR_RING_LIMIT 4200

struct sampler;

/*
 * Opens and maps the events. Returns 0, or a negative errno from
 * perf_event_open (-EACCES/-EPERM refused, -ENOSYS unavailable, -ENOENT or
 * -EOPNOTSUPP event unsupported, -EINVAL rejected attributes), or
 * -SAMPLER_ERR_RING_LIMIT.
 */
int sampler_open(struct sampler **s, const struct sampler_opts *o);
void sampler_close(struct sampler *s);

/*
 * "cycles", "cpu-clock" or "task-clock": what was opened, with perf's ":u"
 * when only user time is sampled.
 */
const char *sampler_event_name(const struct sampler *s);
/* True when time in the kernel is sampled too, with the kernel's frames in the callchain. */
bool sampler_samples_kernel(const struct sampler *s);
/* True when each context switch out is sampled with its stack (sampler_opts.switch_stacks). */
bool sampler_samples_switches(const struct sampler *s);
/* The name of an event (AUTO's is its first choice, cycles). */
const char *sampler_event_label(enum sampler_event e);
/*
 * The event of a name sampler_event_label gives, and whether ":u" follows
 * it (user time only): 0, or -EINVAL.
 */
int sampler_event_parse(const char *name, enum sampler_event *e, bool *user_only);
/* True when SAMPLER_EVENT_AUTO could not have cycles. */
bool sampler_fell_back(const struct sampler *s);
size_t sampler_ring_bytes(const struct sampler *s);
/* The bytes a ring holds when it wakes the recorder (sampler_wakeup_bytes); 0 with wake_soon. */
uint32_t sampler_wakeup_at(const struct sampler *s);
/* With sampler_opts.wake_soon, the samples a wakeup waits for (else 0). */
uint32_t sampler_wakeup_samples(const struct sampler *s);
/* About the bytes a sample takes in a ring, its stack copy (DWARF) included. */
size_t sampler_sample_bytes(enum unwind_method method, uint32_t stack_size);
/*
 * The bytes between wakeups of rings of ring_bytes: as many as leave a
 * ring room for 16 ms of samples at o's frequency (twice as many with
 * switch_stacks, each switch out sampled too), so that the recorder wakes
 * as rarely as it safely can (in a virtual machine each wakeup costs tens
 * of microseconds), from a quarter of the ring up to half of it (not used
 * with o->wake_soon, which counts samples instead).
 */
uint32_t sampler_wakeup_bytes(const struct sampler_opts *o, bool switch_stacks,
			      size_t ring_bytes);
const struct rec_layout *sampler_layout(const struct sampler *s);

/* With attach: the threads events were opened for. */
size_t sampler_threads(const struct sampler *s, const pid_t **tids);

size_t sampler_nfds(const struct sampler *s);
int sampler_fd(const struct sampler *s, size_t i);

/*
 * Queues every complete record in the rings into q, where it lies: each
 * keeps its ring space until sampler_release. A copy (of one that wraps
 * around the ring's end, or to free the ring) keeps, of a sample's stack,
 * only what u says unwinding it will read.
 */
void sampler_drain(struct sampler *s, struct rec_queue *q, const struct unwinder *u);
/* Hands back to the kernel the ring space of the records q no longer holds. */
void sampler_release(struct sampler *s, struct rec_queue *q, const struct unwinder *u);
/* Stops sampling; records already written stay in the rings. */
void sampler_disable(struct sampler *s);

/* Reads an integer from /proc/sys/kernel/<name>: 0 or a negative errno. */
int sampler_read_sysctl(const char *name, long *value);

#endif
