/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_RECORDS_H
#define GTRACE_RECORD_RECORDS_H

/*
 * Parsing of the records a perf ring holds. Their layout depends on the
 * sample_type and register mask the events were opened with, which
 * struct rec_layout carries; the parsers only read, never copy, so the
 * pointers they fill point into the record.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_layout {
	uint64_t sample_type;	/* PERF_SAMPLE_* the events were opened with */
	uint64_t regs_mask;	/* sample_regs_user */
	/*
	 * The ids (PERF_SAMPLE_IDENTIFIER) of the events that sample each
	 * context switch out, sorted; none when they are not opened.
	 */
	const uint64_t *switch_ids;
	size_t nswitch_ids;
};

/* The fields a PERF_RECORD_SAMPLE may carry; absent ones are zero. */
struct rec_sample {
	uint64_t id;		/* PERF_SAMPLE_IDENTIFIER: the event's */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	const uint64_t *callchain;	/* PERF_SAMPLE_CALLCHAIN, context markers included */
	uint64_t callchain_nr;
	uint64_t regs_abi;		/* PERF_SAMPLE_REGS_ABI_NONE: no registers */
	const uint64_t *regs;		/* packed: one per bit of regs_mask, low bit first */
	const uint8_t *stack;		/* PERF_SAMPLE_STACK_USER */
	uint64_t stack_len;		/* valid bytes (the dynamic size) */
};

/* A sample's leading fields, which come before any of variable length. */
struct rec_head {
	uint64_t id;		/* PERF_SAMPLE_IDENTIFIER: the event's */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
};

/* The sample_id_all trailer every other record ends with. */
struct rec_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

/* Both return 0, or -EINVAL when the record is shorter than its fields. */
int rec_parse_sample(const struct rec_layout *l, const struct perf_event_header *h,
		     struct rec_sample *s);
int rec_parse_id(const struct rec_layout *l, const struct perf_event_header *h,
		 struct rec_id *id);

/*
 * Only a sample's leading fields, for what orders or routes a sample
 * before it is parsed whole: 0, or -EINVAL when the record is shorter
 * than they are. What comes after them is not checked.
 */
int rec_parse_head(const struct rec_layout *l, const struct perf_event_header *h,
		   struct rec_head *hd);

/* Whether a sample of event id is a context switch's (one of l->switch_ids), not a timer's. */
bool rec_is_switch_sample(const struct rec_layout *l, uint64_t id);

/* The sample's user register reg (PERF_REG_X86_*), 0 when it has none. */
uint64_t rec_sample_reg(const struct rec_layout *l, const struct rec_sample *s, unsigned reg);

/*
 * Copies sample h, parsed into s, to dst with at most max_stack bytes of
 * its user stack copy: the kernel reserves the whole requested size in
 * every sample, fills only the stack's live bytes, and unwinding needs
 * fewer still. Returns the bytes written, a multiple of 8. dst may be h.
 */
size_t rec_copy_sample(const struct rec_layout *l, const struct perf_event_header *h,
		       const struct rec_sample *s, size_t max_stack, void *dst);

/*
 * The record's timestamp, 0 if it has none or is too short to hold it. A
 * sample is read only up to its time (rec_parse_head): the queue orders
 * samples by it, and the collector counts a malformed one when it parses
 * it whole.
 */
uint64_t rec_time(const struct rec_layout *l, const struct perf_event_header *h);

#endif
