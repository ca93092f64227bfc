/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_ANALYZE_H
#define GTRACE_ANALYSIS_VIEWS_ANALYZE_H

/*
 * gtrace analyze: why each GPU waited. Per device (a process's GPU), its
 * time from its first work to its last split into compute, memory,
 * communication, their overlap and idle; each idle interval classified by
 * what the recording shows of its cause; the CPU samples of the launching
 * threads during host-caused idle, weighted by the idle time they cover;
 * per kernel name its launches' queue delays and short instances; and the
 * critical path that ends at the device's last work.
 * man/gtrace-analyze.1 defines every figure.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "util/vec.h"

/* Why a device was idle, in the order the views list the causes. */
enum idle_cause {
	IDLE_HOST,		/* nothing queued: the launching thread was busy on the CPU */
	IDLE_SYNC,		/* the device drained under a synchronizing call */
	IDLE_DEPENDENCY,	/* work queued on another stream waited */
	IDLE_LAUNCH,		/* launch calls slower than the work they queue */
	IDLE_UNKNOWN,		/* the next work has no launching call */
	IDLE_CAUSES
};

/* "host", "synchronization", ...: the names the text and JSON print. */
const char *idle_cause_name(enum idle_cause c);

/* A stack, and the idle time it is charged with. */
struct analyze_stack {
	uint32_t node;		/* leaf stack node */
	uint64_t ns;
};

/* What a stretch of a critical path was, in the order the views break ties. */
enum critpath_kind {
	CRITPATH_CPU,		/* a thread's work outside CUDA calls: id, a sample's node, 0 none */
	CRITPATH_OFFCPU,	/* a thread blocked there: id, the stack it blocked in, 0 unknown */
	CRITPATH_API,		/* a CUDA API call: id, its name's string id */
	CRITPATH_KERNEL,	/* work on a stream: id, its name's string id */
	CRITPATH_COPY,
	CRITPATH_MEMSET,
	CRITPATH_WAIT,		/* nothing ran: id, enum critpath_wait */
	CRITPATH_KINDS
};

/* Why the path waited (man/gtrace-analyze.1). */
enum critpath_wait {
	CRITWAIT_LAUNCH,	/* from the launch call to the start of its work */
	CRITWAIT_QUEUE,		/* from the end of the work before it on its stream */
	CRITWAIT_DEPENDENCY,	/* from the end of another stream's work */
	CRITWAIT_SYNC,		/* from the end of the work a synchronizing call waited for */
	CRITWAIT_UNKNOWN,	/* work with no launch call nor earlier work */
	CRITWAITS
};

/* The time on a device's critical path of what one kind and id name. */
struct critpath_item {
	uint32_t kind;		/* enum critpath_kind */
	uint32_t id;
	uint64_t ns;
};

/* A device's critical path: its items' ns add up to last - first. */
struct analyze_critpath {
	uint64_t first;		/* the process's first event */
	uint64_t last;		/* the device's last work's end */
	VEC(struct critpath_item) items;
};

struct analyze_device {
	uint32_t pid;
	uint32_t device;
	int64_t rank;		/* model_rank.rank of its recording */
	uint64_t first, last;	/* its first work's start, its last work's end */
	uint64_t wall_ns;	/* last - first */
	uint64_t compute_ns, memory_ns, comm_ns;	/* each kind's union */
	uint64_t overlap_ns;	/* two kinds or more at once */
	uint64_t busy_ns, idle_ns;	/* any work; none: wall_ns - busy_ns */
	uint64_t gaps;		/* idle intervals */
	uint64_t launches;	/* its kernels, copies and memsets: launched over wall_ns */
	uint64_t idle_causes[IDLE_CAUSES];	/* they add up to idle_ns */
	/*
	 * By ns, descending: the launching threads' sampled stacks behind host
	 * idle, and the stacks that made the synchronizing calls behind
	 * synchronization idle (their origins' samples).
	 */
	VEC(struct analyze_stack) host_stacks, sync_stacks;
	uint64_t host_unsampled_ns;	/* host idle with no sample of its thread */
	uint64_t sync_unlinked_ns;	/* sync idle of calls whose origin linked to no sample */
	struct analyze_critpath critpath;
};

/* The launches of one kernel name. */
struct analyze_kernel {
	uint32_t name;		/* string id */
	uint64_t count;
	uint64_t queued;	/* instances with a known launch call */
	uint64_t median_queue_ns;	/* of theirs: start minus the launch call's start */
	uint64_t short_count;	/* shorter than analyze.short_ns */
	uint32_t short_node;	/* the stack that launched most of them; 0 none */
};

/* A kernel shorter than this took less than its launch on the GPUs of today: --short's default. */
#define ANALYZE_DEFAULT_SHORT_NS 10000

struct analyze_opts {
	const struct sample_filter *filter;	/* --rank, --pid: which processes */
	bool device_set;	/* --device */
	uint32_t device;
	uint64_t short_ns;	/* --short */
	const struct origin_links *links;
	struct funcs *funcs;	/* names the findings' call sites and kernels; NULL: no findings */
	bool by_sample;		/* fill analyze.sample_host_ns */
	bool critical_path;	/* find each device's: the analyze command's alone */
};

/* A kernel a finding names: its instances' count and GPU time. */
struct finding_kernel {
	uint32_t name;		/* string id */
	uint64_t count, ns;
	uint32_t occupancy_permille;	/* low-occupancy's: the lowest recorded */
	uint8_t limiter;	/* low-occupancy's: enum cuda_occupancy_limiter */
};

/* A finding of analyze-findings.c: a rule that matched, in plain words, with its evidence. */
struct analyze_finding {
	const char *rule;	/* its stable name: "sync-copy", ... */
	int64_t device;		/* gpu-idle's: its index in analyze.devices; else -1 */
	uint64_t ns;		/* the time at stake (man/gtrace-analyze.1, per rule) */
	char message[320];
	VEC(struct analyze_stack) stacks;	/* by ns, descending */
	VEC(struct finding_kernel) kernels;	/* by ns, descending */
};

struct analyze {
	uint64_t short_ns;
	VEC(struct analyze_device) devices;	/* by rank, pid, device */
	VEC(struct analyze_kernel) kernels;	/* by count, descending, then name */
	VEC(struct analyze_finding) findings;	/* by ns, descending, then rule */
	/*
	 * With analyze_opts.by_sample, by sample index: the host idle charged
	 * to it, what host_stacks sum by stack (flame --weight gpu-idle); NULL
	 * otherwise.
	 */
	uint64_t *sample_host_ns;
};

void analyze_build(struct analyze *a, const struct model *m, const struct analyze_opts *o);
void analyze_free(struct analyze *a);

/* Text and JSON (man/gtrace-analyze.1); path names the input in JSON. */
void analyze_print(FILE *out, const struct analyze *a, struct funcs *f);
void analyze_print_json(FILE *out, const struct analyze *a, struct funcs *f, const char *path);

#endif
