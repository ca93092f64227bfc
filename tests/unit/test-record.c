/* SPDX-License-Identifier: MIT */
/*
 * The recorder below perf_event_open: record parsing, the time-ordering
 * queue, and records turned into a trace file by the collector and writer;
 * the settings of --gpu-pc-sampling.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/file.h"
#include "format/tables.h"
#include "record/collect.h"
#include "record/queue.h"
#include "record/records.h"
#include "record/program.h"
#include "record/sampler.h"
#include "record/writer.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "contract/pcopts.h"
#include "readback.h"
#include "test.h"

#define DWARF_TYPE                                                             \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* A record under construction: a header, then u64 words. */
struct rec {
	uint64_t words[64];
	size_t n;
};

static void rec_start(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header *h = (struct perf_event_header *)r->words;

	memset(r, 0, sizeof(*r));
	h->type = type;
	h->misc = misc;
	r->n = 1;
}

static void rec_put(struct rec *r, uint64_t v)
{
	r->words[r->n++] = v;
}

static const struct perf_event_header *rec_end(struct rec *r)
{
	struct perf_event_header *h = (struct perf_event_header *)r->words;

	h->size = (uint16_t)(r->n * 8);
	return h;
}

/* The sample_id_all trailer for TID | TIME | CPU. */
static void put_id(struct rec *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	rec_put(r, (uint64_t)tid << 32 | pid);
	rec_put(r, time);
	rec_put(r, cpu);
}

static const struct perf_event_header *dwarf_sample(struct rec *r, uint64_t stack_bytes,
						    uint64_t dyn)
{
	rec_start(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rec_put(r, 0x401000);			/* ip */
	rec_put(r, (uint64_t)12 << 32 | 11);	/* pid 11, tid 12 */
	rec_put(r, 123456789);			/* time */
	rec_put(r, 1);				/* cpu 1 */
	rec_put(r, 1000);			/* period */
	rec_put(r, PERF_SAMPLE_REGS_ABI_64);
	rec_put(r, 0xaa);			/* regs of mask 0x181 */
	rec_put(r, 0xbb);
	rec_put(r, 0xcc);
	rec_put(r, stack_bytes);
	for (uint64_t i = 0; i < stack_bytes / 8; i++)
		rec_put(r, 0x1111 * (i + 1));
	rec_put(r, dyn);
	return rec_end(r);
}

static void test_parse_dwarf_sample(void)
{
	struct rec_layout l = { .sample_type = DWARF_TYPE, .regs_mask = 0x181 };
	const struct perf_event_header *h;
	struct rec_sample s;
	struct rec r;

	h = dwarf_sample(&r, 32, 24);
	CHECK(rec_parse_sample(&l, h, &s) == 0);
	CHECK_EQ_U64(s.ip, 0x401000);
	CHECK_EQ_U64(s.pid, 11);
	CHECK_EQ_U64(s.tid, 12);
	CHECK_EQ_U64(s.time, 123456789);
	CHECK_EQ_U64(s.cpu, 1);
	CHECK_EQ_U64(s.period, 1000);
	CHECK_EQ_U64(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	CHECK(s.regs && s.regs[0] == 0xaa && s.regs[2] == 0xcc);
	CHECK_EQ_U64(s.stack_len, 24);
	CHECK(s.stack && ((const uint64_t *)s.stack)[3] == 0x4444);
	CHECK(s.callchain == NULL);
	CHECK_EQ_U64(rec_time(&l, h), 123456789);
}

/* The unused end of a stack copy is left behind, in place or copied. */
static void test_copy_sample_trims_stack(void)
{
	struct rec_layout l = { .sample_type = DWARF_TYPE, .regs_mask = 0x181 };
	const struct perf_event_header *h;
	struct rec_sample s, back;
	uint64_t out[64];
	struct rec r;
	size_t len;

	h = dwarf_sample(&r, 256, 20);
	CHECK(rec_parse_sample(&l, h, &s) == 0);
	CHECK_EQ_U64(rec_sample_reg(&l, &s, 7), 0xbb);
	CHECK_EQ_U64(rec_sample_reg(&l, &s, 3), 0);
	len = rec_copy_sample(&l, h, &s, SIZE_MAX, out);
	CHECK_EQ_U64(len, h->size - 256 + 24);
	CHECK(rec_parse_sample(&l, (const void *)out, &back) == 0);
	CHECK_EQ_U64(back.stack_len, 20);
	CHECK(back.stack && ((const uint64_t *)back.stack)[2] == 0x3333);
	CHECK_EQ_U64(back.time, 123456789);
	CHECK(back.regs && back.regs[2] == 0xcc);

	/* What unwinding needs, less than what is live: cut there. */
	len = rec_copy_sample(&l, h, &s, 12, out);
	CHECK_EQ_U64(len, h->size - 256 + 16);
	CHECK(rec_parse_sample(&l, (const void *)out, &back) == 0);
	CHECK_EQ_U64(back.stack_len, 12);

	/* In place, with nothing live: the stack's size word says 0 bytes. */
	h = dwarf_sample(&r, 64, 0);
	CHECK(rec_parse_sample(&l, h, &s) == 0);
	len = rec_copy_sample(&l, h, &s, SIZE_MAX, r.words);
	CHECK_EQ_U64(len, 8 * 11);
	CHECK_EQ_U64(h->size, 8 * 11);
	CHECK(rec_parse_sample(&l, h, &back) == 0);
	CHECK(back.stack == NULL && back.stack_len == 0);
}

static void test_parse_rejects_short_records(void)
{
	struct rec_layout l = { .sample_type = DWARF_TYPE, .regs_mask = 0x181 };
	struct perf_event_header *h;
	struct rec_sample s;
	struct rec_head hd;
	struct rec r;

	/* Cut inside the stack copy: malformed, but its leading fields are whole. */
	h = (struct perf_event_header *)dwarf_sample(&r, 32, 24);
	h->size -= 16;
	CHECK(rec_parse_sample(&l, h, &s) == -EINVAL);
	CHECK_EQ_U64(rec_time(&l, h), 123456789);
	CHECK(rec_parse_head(&l, h, &hd) == 0);
	CHECK(hd.pid == 11 && hd.tid == 12 && hd.ip == 0x401000 && hd.time == 123456789);

	/* Cut inside its time: no time. */
	h->size = sizeof(*h) + 2 * 8 + 4;
	CHECK(rec_parse_head(&l, h, &hd) == -EINVAL);
	CHECK(hd.pid == 0 && hd.time == 0);
	CHECK_EQ_U64(rec_time(&l, h), 0);

	/* A dynamic size larger than the copy. */
	h = (struct perf_event_header *)dwarf_sample(&r, 16, 24);
	CHECK(rec_parse_sample(&l, h, &s) == -EINVAL);

	/* A callchain claiming more entries than the record has. */
	l.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	rec_start(&r, PERF_RECORD_SAMPLE, 0);
	rec_put(&r, 1);
	rec_put(&r, 1000);
	rec_put(&r, 2);
	CHECK(rec_parse_sample(&l, rec_end(&r), &s) == -EINVAL);

	/* A layout the parser does not know. */
	l.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_RAW;
	CHECK(rec_parse_sample(&l, rec_end(&r), &s) == -EINVAL);
}

static void test_parse_callchain_sample(void)
{
	struct rec_layout l = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CALLCHAIN,
	};
	struct rec_sample s;
	struct rec r;

	rec_start(&r, PERF_RECORD_SAMPLE, 0);
	rec_put(&r, 0x1234);
	rec_put(&r, (uint64_t)5 << 32 | 5);
	rec_put(&r, 77);
	rec_put(&r, 3);
	rec_put(&r, PERF_CONTEXT_USER);
	rec_put(&r, 0x1234);
	rec_put(&r, 0x5678);
	CHECK(rec_parse_sample(&l, rec_end(&r), &s) == 0);
	CHECK_EQ_U64(s.callchain_nr, 3);
	CHECK(s.callchain && s.callchain[2] == 0x5678);
	CHECK_EQ_U64(s.time, 77);
}

static void test_parse_id_trailer(void)
{
	struct rec_layout l = { .sample_type = DWARF_TYPE, .regs_mask = 0x181 };
	struct rec_id id;
	struct rec r;

	/* A FORK record: pid, ppid, tid, ptid, time, then the trailer. */
	rec_start(&r, PERF_RECORD_FORK, 0);
	rec_put(&r, (uint64_t)10 << 32 | 20);
	rec_put(&r, (uint64_t)10 << 32 | 20);
	rec_put(&r, 999);
	put_id(&r, 20, 20, 1000, 1);
	CHECK(rec_parse_id(&l, rec_end(&r), &id) == 0);
	CHECK_EQ_U64(id.pid, 20);
	CHECK_EQ_U64(id.tid, 20);
	CHECK_EQ_U64(id.time, 1000);
	CHECK_EQ_U64(id.cpu, 1);
	CHECK_EQ_U64(rec_time(&l, rec_end(&r)), 1000);

	/* A record too short for its trailer. */
	rec_start(&r, PERF_RECORD_SWITCH, 0);
	rec_put(&r, 1);
	CHECK(rec_parse_id(&l, rec_end(&r), &id) == -EINVAL);
}

struct seen {
	uint64_t times[16];
	uint32_t types[16];
	size_t n;
};

static void collect_seen_one(void *arg, const struct perf_event_header *h, uint64_t time)
{
	struct seen *s = arg;

	if (s->n < 16) {
		s->times[s->n] = time;
		s->types[s->n] = h->type;
	}
	s->n++;
}

static void collect_seen(void *arg, const struct perf_event_header *const *hs,
			 const uint64_t *times, size_t n)
{
	for (size_t i = 0; i < n; i++)
		collect_seen_one(arg, hs[i], times[i]);
}

static void queue_push(struct rec_queue *q, uint32_t type, uint64_t time, size_t words)
{
	const struct perf_event_header *h;
	struct rec r;

	rec_start(&r, type, 0);
	for (size_t i = 0; i < words; i++)
		rec_put(&r, time);
	h = rec_end(&r);
	memcpy(rec_queue_reserve(q, h->size), h, h->size);
	rec_queue_commit(q, h->size, time);
}

static void test_queue_orders_and_holds_back(void)
{
	struct rec_queue q = {0};
	struct seen seen = {0};

	/* Two rings read one after the other: each in order, together not. */
	queue_push(&q, 1, 30, 3);
	queue_push(&q, 2, 50, 1);
	queue_push(&q, 3, 10, 7);
	queue_push(&q, 4, 40, 2);
	queue_push(&q, 5, 30, 1);	/* same time as the first: stays after it */

	rec_queue_flush(&q, 35, collect_seen, &seen);
	CHECK_EQ_U64(seen.n, 3);
	CHECK_EQ_U64(seen.types[0], 3);
	CHECK_EQ_U64(seen.types[1], 1);
	CHECK_EQ_U64(seen.types[2], 5);
	CHECK_EQ_U64(rec_queue_len(&q), 2);

	/* An older record arriving later still goes out before newer ones. */
	queue_push(&q, 6, 36, 5);
	rec_queue_flush(&q, UINT64_MAX, collect_seen, &seen);
	CHECK_EQ_U64(seen.n, 6);
	CHECK_EQ_U64(seen.types[3], 6);
	CHECK_EQ_U64(seen.types[4], 4);
	CHECK_EQ_U64(seen.types[5], 2);
	CHECK_EQ_U64(seen.times[5], 50);
	CHECK_EQ_U64(rec_queue_len(&q), 0);
	rec_queue_free(&q);
}

struct order_check {
	uint64_t last_time;
	uint32_t last_type;	/* the arrival index */
	size_t n, bad;
};

static void check_order(void *arg, const struct perf_event_header *const *hs,
			const uint64_t *times, size_t n)
{
	struct order_check *o = arg;

	for (size_t i = 0; i < n; i++, o->n++) {
		if (o->n && (times[i] < o->last_time ||
			     (times[i] == o->last_time && hs[i]->type <= o->last_type)))
			o->bad++;
		o->last_time = times[i];
		o->last_type = hs[i]->type;
	}
}

static void test_queue_merges_any_order(void)
{
	struct rec_queue q = {0};
	struct order_check o = {0};
	uint64_t x = 12345;
	uint32_t arrival = 1;

	/* Seven ordered runs of different lengths, then times in no order, with ties. */
	for (uint64_t run = 0; run < 7; run++)
		for (uint64_t i = 0; i < 3 + run * 5; i++)
			queue_push(&q, arrival++, run * 3 + i * 2, 1);
	for (int i = 0; i < 301; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		queue_push(&q, arrival++, (x >> 33) % 50, 1);
	}
	rec_queue_flush(&q, 40, check_order, &o);
	rec_queue_flush(&q, UINT64_MAX, check_order, &o);
	CHECK_EQ_U64(o.n, arrival - 1);
	CHECK_EQ_U64(o.bad, 0);
	rec_queue_free(&q);
}

static void check_payload(void *arg, const struct perf_event_header *const *hs,
			  const uint64_t *times, size_t n)
{
	int *bad = arg;

	/* Each record's words all hold its time: compaction kept them whole. */
	for (size_t r = 0; r < n; r++) {
		const uint64_t *w = (const uint64_t *)(hs[r] + 1);

		for (size_t i = 0; i < (hs[r]->size - sizeof(*hs[r])) / 8; i++)
			*bad += w[i] != times[r];
	}
}

static void test_queue_compaction_keeps_records(void)
{
	struct rec_queue q = {0};
	int bad = 0;

	for (int round = 0; round < 50; round++) {
		for (uint64_t i = 0; i < 20; i++)
			queue_push(&q, 1, (uint64_t)round * 10 + (i * 7) % 20, 1 + i % 9);
		rec_queue_flush(&q, (uint64_t)round * 10, check_payload, &bad);
	}
	rec_queue_flush(&q, UINT64_MAX, check_payload, &bad);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(rec_queue_len(&q), 0);
	rec_queue_free(&q);
}

/*
 * Records left in their ring go out in time order with the copied ones;
 * one settled into the queue no longer reads its ring, which may be reused.
 */
static void test_queue_records_left_in_ring(void)
{
	struct rec ring[4];
	struct rec_queue q = {0};
	int bad = 0;

	for (int round = 0; round < 30; round++) {
		for (uint32_t i = 0; i < 4; i++) {
			uint64_t time = (uint64_t)round * 10 + (i * 3) % 4;

			rec_start(&ring[i], 1, 0);
			for (uint32_t w = 0; w <= i; w++)
				rec_put(&ring[i], time);
			rec_queue_add(&q, rec_end(&ring[i]), time, 0, i);
			queue_push(&q, 2, time + 5, 2);
		}
		/* The last two, still queued after the flush, are copied out. */
		rec_queue_flush(&q, (uint64_t)round * 10 + 1, check_payload, &bad);
		for (size_t i = 0; i < q.refs.len; i++) {
			const struct perf_event_header *h = q.refs.v[i].in_ring;

			if (!h)
				continue;
			memcpy(rec_queue_reserve(&q, h->size), h, h->size);
			rec_queue_settle(&q, i, h->size);
		}
		memset(ring, 0xab, sizeof(ring));
	}
	rec_queue_flush(&q, UINT64_MAX, check_payload, &bad);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(rec_queue_len(&q), 0);
	rec_queue_free(&q);
}

#define FP_TYPE                                                                \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* Copies a string into the record's words, NUL-padded to 8 bytes. */
static void put_str(struct rec *r, const char *str)
{
	size_t len = strlen(str) + 1, words = (len + 7) / 8;

	memcpy(&r->words[r->n], str, len);
	r->n += words;
}

static void feed(struct collector *c, struct rec *r, uint64_t time)
{
	collector_record(c, rec_end(r), time);
}

static void feed_sample_of(struct collector *c, uint32_t pid, uint32_t tid, uint64_t time,
			   const uint64_t *ips, size_t n)
{
	struct rec r;

	rec_start(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rec_put(&r, ips[0]);
	rec_put(&r, (uint64_t)tid << 32 | pid);
	rec_put(&r, time);
	rec_put(&r, 0);
	rec_put(&r, 1000);
	rec_put(&r, n + 1);
	rec_put(&r, PERF_CONTEXT_USER);
	for (size_t i = 0; i < n; i++)
		rec_put(&r, ips[i]);
	feed(c, &r, time);
}

static void feed_sample(struct collector *c, uint32_t tid, uint64_t time,
			const uint64_t *ips, size_t n)
{
	feed_sample_of(c, 100, tid, time, ips, n);
}

static void feed_task(struct collector *c, uint32_t type, uint32_t tid, uint64_t time)
{
	struct rec r;

	rec_start(&r, type, 0);
	rec_put(&r, (uint64_t)100 << 32 | 100);	/* pid 100, ppid 100 */
	rec_put(&r, (uint64_t)100 << 32 | tid);	/* tid, ptid 100 */
	rec_put(&r, time);
	put_id(&r, 100, tid, time, 0);
	feed(c, &r, time);
}

/* misc: 0 for a switch in, PERF_RECORD_MISC_SWITCH_OUT (| _PREEMPT) for one out. */
static void feed_switch(struct collector *c, uint32_t tid, uint64_t time, uint16_t misc)
{
	struct rec r;

	rec_start(&r, PERF_RECORD_SWITCH, misc);
	put_id(&r, 100, tid, time, 0);
	feed(c, &r, time);
}

/* Process 100 maps the code of file path at 0x400000, 4 KiB of it. */
static void feed_map(struct collector *c, const char *path, uint64_t time)
{
	struct rec r;

	rec_start(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rec_put(&r, (uint64_t)100 << 32 | 100);
	rec_put(&r, 0x400000);		/* addr */
	rec_put(&r, 0x1000);		/* len */
	rec_put(&r, 0);			/* pgoff */
	rec_put(&r, 0);			/* maj, min */
	rec_put(&r, 0);			/* ino */
	rec_put(&r, 0);			/* ino_generation */
	rec_put(&r, (uint64_t)MAP_PRIVATE << 32 | (PROT_READ | PROT_EXEC));
	put_str(&r, path);
	put_id(&r, 100, 100, time, 0);
	feed(c, &r, time);
}

/* Everything a short run of a two-thread process produces. */
static void feed_run(struct collector *c)
{
	const uint64_t stack[] = { 0x400100, 0x400200 }, stray[] = { 0x900000 };
	struct rec r;

	collector_add_process(c, 100, "gtrace", 1000);
	/* Found asleep at the start, as an attach may find a thread: off the CPU until 1050. */
	collector_thread_off_cpu(c, 100, 1000);
	feed_switch(c, 100, 1050, 0);
	rec_start(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rec_put(&r, (uint64_t)100 << 32 | 100);
	put_str(&r, "app");
	put_id(&r, 100, 100, 1100, 0);
	feed(c, &r, 1100);

	feed_map(c, "/nonexistent/gtrace-test/app", 1200);

	feed_sample(c, 100, 2000, stack, 2);
	feed_sample(c, 100, 3000, stack, 2);
	feed_sample(c, 100, 3500, stray, 1);
	feed_task(c, PERF_RECORD_FORK, 101, 3600);
	feed_switch(c, 101, 4000,
		    PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	feed_switch(c, 101, 4500, 0);

	rec_start(&r, PERF_RECORD_LOST, 0);
	rec_put(&r, 1);			/* id */
	rec_put(&r, 5);			/* lost */
	put_id(&r, 100, 100, 4600, 0);
	feed(c, &r, 4600);
	feed_task(c, PERF_RECORD_EXIT, 101, 5000);
	/* Asleep when the recording ends at 6000 (collector_end_offcpu). */
	feed_switch(c, 100, 5500, PERF_RECORD_MISC_SWITCH_OUT);
}

static bool has_task(const struct tr_tables *t, uint32_t tid, uint32_t kind, uint32_t arg)
{
	for (size_t i = 0; i < t->tasks.len; i++)
		if (t->tasks.v[i].tid == tid && t->tasks.v[i].kind == kind &&
		    t->tasks.v[i].arg == arg)
			return true;
	return false;
}

/* Writes feed_run's records through a collector and reads the file back. */
static int record_feed_load(struct tr_tables *t, bool *ended, void (*feed_fn)(struct collector *),
			    const struct rec_layout *with)
{
	struct rec_layout layout = with ? *with : (struct rec_layout){ .sample_type = FP_TYPE };
	char path[] = "/tmp/gtrace-test-record.XXXXXX";
	struct chunk_writer *cw;
	struct tr_writer *w;
	struct collector *c;
	int fd = mkstemp(path), got;

	if (fd < 0 || tr_writer_open(&w, path, TR_FEAT_CPU_SAMPLES))
		return -1;
	close(fd);
	if (chunk_writer_start(&cw, w) || collector_new(&c, UNWIND_FP, &layout, cw))
		return -1;
	collector_meta(c, "command", "app");
	feed_fn(c);
	collector_end_offcpu(c, 6000);
	collector_finish(c);
	collector_flush(c, true);
	if (chunk_writer_stop(cw, true) || tr_writer_close(w))
		return -1;
	collector_free(c);

	got = readback_tables(path, t, ended);
	unlink(path);
	return got;
}

static int record_and_load(struct tr_tables *t, bool *ended)
{
	return record_feed_load(t, ended, feed_run, NULL);
}

static bool is_offcpu(const struct tr_offcpu *o, uint32_t tid, uint64_t start, uint64_t end)
{
	return o->tid == tid && o->start == start && o->end == end;
}

/* The ids of the timer's event and of the context-switch event, in switch_layout. */
#define TIMER_ID 7
#define SWITCH_ID 9
static const uint64_t switch_ids[] = { SWITCH_ID };
static const struct rec_layout switch_layout = {
	.sample_type = FP_TYPE | PERF_SAMPLE_IDENTIFIER,
	.switch_ids = switch_ids,
	.nswitch_ids = 1,
};

/* A sample of event id with the kernel's chain kips[0 .. nk) and the user's ip. */
static void feed_id_sample(struct collector *c, uint64_t id, uint64_t time, const uint64_t *kips,
			   size_t nk, uint64_t ip)
{
	struct rec r;

	rec_start(&r, PERF_RECORD_SAMPLE, nk ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	rec_put(&r, id);
	rec_put(&r, nk ? kips[0] : ip);
	rec_put(&r, (uint64_t)100 << 32 | 100);
	rec_put(&r, time);
	rec_put(&r, 0);
	rec_put(&r, nk ? 1 : 1000);
	rec_put(&r, nk + 3);
	rec_put(&r, PERF_CONTEXT_KERNEL);
	for (size_t i = 0; i < nk; i++)
		rec_put(&r, kips[i]);
	rec_put(&r, PERF_CONTEXT_USER);
	rec_put(&r, ip);
	feed(c, &r, time);
}

static void feed_id_switch(struct collector *c, uint64_t time, uint16_t misc)
{
	struct rec r;

	rec_start(&r, PERF_RECORD_SWITCH, misc);
	put_id(&r, 100, 100, time, 0);
	rec_put(&r, TIMER_ID);
	feed(c, &r, time);
}

/*
 * A timer's sample, then a switch out sampled in the kernel's sleep: the
 * off-CPU interval's stack is the switch's; the next switch out, not
 * sampled, falls back to the last timer sample's stack.
 */
static void feed_switch_stacks(struct collector *c)
{
	static const uint64_t sleep[] = { 0xffffffff81000100, 0xffffffff81000200 };

	collector_add_process(c, 100, "app", 1000);
	feed_id_sample(c, TIMER_ID, 2000, NULL, 0, 0x400100);
	feed_id_sample(c, SWITCH_ID, 3000, sleep, 2, 0x400200);
	feed_id_switch(c, 3000, PERF_RECORD_MISC_SWITCH_OUT);
	feed_id_switch(c, 4000, 0);
	feed_id_switch(c, 4500, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	feed_id_switch(c, 5000, 0);
}

static void test_collect_switch_stacks(void)
{
	struct tr_tables t = {0};
	const struct tr_node *leaf;
	bool ended;

	CHECK(record_feed_load(&t, &ended, feed_switch_stacks, &switch_layout) == 0);
	/* The switch's sample is no sample of time. */
	CHECK_EQ_U64(t.samples.len, 1);
	CHECK_EQ_U64(readback_counter(&t, "samples"), 1);
	CHECK_EQ_U64(readback_counter(&t, "switch-stacks"), 1);
	CHECK_EQ_U64(t.offcpu.len, 2);
	if (t.offcpu.len != 2 || t.samples.len != 1)
		goto out;
	CHECK(is_offcpu(&t.offcpu.v[0], 100, 3000, 4000));
	CHECK_EQ_U64(t.offcpu.v[0].reason, TR_OFFCPU_BLOCKED);
	CHECK(t.offcpu.v[0].node != 0 && t.offcpu.v[0].node <= t.nodes.len);
	if (!t.offcpu.v[0].node || t.offcpu.v[0].node > t.nodes.len)
		goto out;
	leaf = &t.nodes.v[t.offcpu.v[0].node - 1];
	CHECK_EQ_U64(t.locs.v[leaf->loc - 1].addr, 0xffffffff81000100);
	CHECK(is_offcpu(&t.offcpu.v[1], 100, 4500, 5000));
	CHECK_EQ_U64(t.offcpu.v[1].reason, TR_OFFCPU_PREEMPTED);
	CHECK_EQ_U64(t.offcpu.v[1].node, t.samples.v[0].node);
out:
	tr_tables_free(&t);
}

/* A sample taken in a system call: the kernel's chain, then the user's. */
static void feed_kernel_sample(struct collector *c)
{
	static const uint64_t chain[] = {
		PERF_CONTEXT_KERNEL, 0xffffffff81000100, 0xffffffff81000200,
		PERF_CONTEXT_USER, 0x400100, 0x400200,
	};
	struct rec r;

	collector_add_process(c, 100, "app", 1000);
	rec_start(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rec_put(&r, chain[1]);
	rec_put(&r, (uint64_t)100 << 32 | 100);
	rec_put(&r, 2000);
	rec_put(&r, 0);
	rec_put(&r, 1000);
	rec_put(&r, sizeof(chain) / sizeof(chain[0]));
	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++)
		rec_put(&r, chain[i]);
	feed(c, &r, 2000);
}

/* The kernel's frames go inside the user stack, under the kernel's dso, callers less one. */
static void test_collect_kernel_frames(void)
{
	struct tr_tables t = {0};
	uint32_t node, dsos[4], k = 0;
	uint64_t addrs[4];
	bool ended;

	CHECK(record_feed_load(&t, &ended, feed_kernel_sample, NULL) == 0);
	CHECK_EQ_U64(t.samples.len, 1);
	if (t.samples.len != 1)
		goto out;
	for (node = t.samples.v[0].node; node && k < 4; node = t.nodes.v[node - 1].parent) {
		const struct tr_loc *loc = &t.locs.v[t.nodes.v[node - 1].loc - 1];

		dsos[k] = loc->dso;
		addrs[k++] = loc->addr;
	}
	/* The user part goes as far as the unwinder gets without maps: its first frame. */
	CHECK(k >= 3);
	CHECK(node == 0);
	if (k < 3)
		goto out;
	CHECK_EQ_U64(addrs[0], 0xffffffff81000100);
	CHECK_EQ_U64(addrs[1], 0xffffffff81000200 - 1);
	CHECK(dsos[0] == dsos[1] && dsos[0] != 0 && dsos[0] <= t.dsos.len);
	CHECK(dsos[0] && (t.dsos.v[dsos[0] - 1].flags & TR_DSO_KERNEL));
	CHECK_STREQ(t.strings.v[t.dsos.v[dsos[0] - 1].path - 1], "[kernel.kallsyms]");
	/* The user part, outside any map here: absolute addresses under dso 0. */
	CHECK_EQ_U64(dsos[2], 0);
	CHECK_EQ_U64(addrs[2], 0x400100);
	CHECK_EQ_U64(readback_counter(&t, "kernel.frames"), 2);
out:
	tr_tables_free(&t);
}

/* A context's part of a callchain: after its marker, up to the next marker. */
static void test_callchain_kernel(void)
{
	static const uint64_t both[] = {
		PERF_CONTEXT_KERNEL, 0xffffffff81000100, 0xffffffff81000200, PERF_CONTEXT_USER, 0x400100,
	};
	static const uint64_t user[] = { PERF_CONTEXT_USER, 0x400100, 0x400200 };
	static const uint64_t kernel_only[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000100 };
	static const uint64_t marker_last[] = { 0x1, PERF_CONTEXT_KERNEL };
	static const uint64_t guest[] = {
		PERF_CONTEXT_KERNEL, 0xffffffff81000100, PERF_CONTEXT_GUEST_KERNEL, 0xffffffff81000300,
	};
	const uint64_t *k;

	CHECK_EQ_U64(callchain_context(both, 5, PERF_CONTEXT_KERNEL, &k), 2);
	CHECK(k == both + 1);
	CHECK_EQ_U64(callchain_context(user, 3, PERF_CONTEXT_KERNEL, &k), 0);
	CHECK(k == NULL);
	CHECK_EQ_U64(callchain_context(kernel_only, 2, PERF_CONTEXT_KERNEL, &k), 1);
	CHECK_EQ_U64(callchain_context(marker_last, 2, PERF_CONTEXT_KERNEL, &k), 0);
	CHECK_EQ_U64(callchain_context(guest, 4, PERF_CONTEXT_KERNEL, &k), 1);
	/* A count past the chain's end is the caller's to bound: 0 entries read none. */
	CHECK_EQ_U64(callchain_context(both, 0, PERF_CONTEXT_KERNEL, &k), 0);
	CHECK_EQ_U64(callchain_context(NULL, 4, PERF_CONTEXT_KERNEL, &k), 0);
	CHECK_EQ_U64(callchain_context(both, 5, PERF_CONTEXT_USER, &k), 1);
	CHECK(k == both + 4 && k[0] == 0x400100);
	CHECK_EQ_U64(callchain_context(user, 3, PERF_CONTEXT_USER, &k), 2);
}

static void test_collect_rows(void)
{
	struct tr_tables t = {0};
	const struct tr_sample *s;
	const struct tr_node *leaf, *caller;
	bool ended = false;

	CHECK(record_and_load(&t, &ended) == 0);
	CHECK(ended);
	CHECK_EQ_U64(t.meta.len, 1);
	CHECK_EQ_U64(t.samples.len, 3);
	if (t.samples.len != 3)
		goto out;
	s = t.samples.v;
	/* The same stack twice is one leaf node: two frames, outermost at the root. */
	CHECK_EQ_U64(s[0].node, s[1].node);
	CHECK_EQ_U64(s[0].tid, 100);
	CHECK_EQ_U64(s[1].ts, 3000);
	leaf = &t.nodes.v[s[0].node - 1];
	CHECK(leaf->parent != 0);
	caller = &t.nodes.v[leaf->parent - 1];
	CHECK_EQ_U64(caller->parent, 0);
	CHECK(t.locs.v[leaf->loc - 1].dso != 0);
	CHECK(t.locs.v[leaf->loc - 1].addr != t.locs.v[caller->loc - 1].addr);
	/* An address outside every map is kept, absolute, under dso 0. */
	CHECK_EQ_U64(t.locs.v[t.nodes.v[s[2].node - 1].loc - 1].dso, 0);
	CHECK_EQ_U64(t.locs.v[t.nodes.v[s[2].node - 1].loc - 1].addr, 0x900000);
	CHECK_EQ_U64(t.dsos.len, 1);

	CHECK_EQ_U64(t.offcpu.len, 3);
	if (t.offcpu.len == 3) {
		CHECK(is_offcpu(&t.offcpu.v[0], 100, 1000, 1050));
		CHECK(is_offcpu(&t.offcpu.v[1], 101, 4000, 4500));
		CHECK(is_offcpu(&t.offcpu.v[2], 100, 5500, 6000));
		/* Found asleep: no switch-out said why, nor where. */
		CHECK_EQ_U64(t.offcpu.v[0].reason, TR_OFFCPU_UNKNOWN);
		CHECK_EQ_U64(t.offcpu.v[0].node, 0);
		/* 101 was never sampled: preempted, in no known stack. */
		CHECK_EQ_U64(t.offcpu.v[1].reason, TR_OFFCPU_PREEMPTED);
		CHECK_EQ_U64(t.offcpu.v[1].node, 0);
		/* 100 blocked after its last sample, in the stray stack. */
		CHECK_EQ_U64(t.offcpu.v[2].reason, TR_OFFCPU_BLOCKED);
		CHECK_EQ_U64(t.offcpu.v[2].node, s[2].node);
	}
	CHECK(has_task(&t, 100, TR_TASK_NEW, 0));
	CHECK(has_task(&t, 101, TR_TASK_NEW, 100));
	CHECK(has_task(&t, 101, TR_TASK_EXIT, 0));
	CHECK(t.tasks.len > 2 && t.tasks.v[2].kind == TR_TASK_EXEC &&
	      !strcmp(t.strings.v[t.tasks.v[2].arg - 1], "app"));

	CHECK_EQ_U64(readback_counter(&t, "samples"), 3);
	CHECK_EQ_U64(readback_counter(&t, "lost"), 5);
	CHECK_EQ_U64(readback_counter(&t, "threads"), 2);
	CHECK_EQ_U64(readback_counter(&t, "processes"), 1);
	CHECK_EQ_U64(readback_counter(&t, "chunks"), 1);
	CHECK_EQ_U64(readback_counter(&t, "symbols.unresolved"), 1);
	CHECK_EQ_U64(readback_counter(&t, "symbols.missing-dso"), 2);
out:
	tr_tables_free(&t);
}

/*
 * One thread's stacks that share their outer frames in several ways, then
 * another thread's, then the first's once another file is mapped where
 * they ran: each stack interned whole, whatever the last one was.
 */
static void feed_shared_frames(struct collector *c)
{
	static const uint64_t cba[] = { 0x400300, 0x400200, 0x400100 },
			      dba[] = { 0x400400, 0x400200, 0x400100 }, ba[] = { 0x400200, 0x400100 },
			      cbax[] = { 0x400300, 0x400200, 0x400100, 0x400500 };

	collector_add_process(c, 100, "app", 1000);
	feed_map(c, "/nonexistent/gtrace-test/app", 1200);
	feed_sample(c, 100, 2000, cba, 3);
	feed_sample(c, 100, 2100, dba, 3);
	feed_sample(c, 100, 2200, ba, 2);
	feed_sample(c, 100, 2300, cbax, 4);
	feed_sample(c, 100, 2400, cba, 3);
	feed_sample(c, 101, 2500, cba, 3);
	feed_map(c, "/nonexistent/gtrace-test/other", 2600);
	feed_sample(c, 100, 2700, cba, 3);
}

static size_t node_depth(const struct tr_tables *t, uint32_t node)
{
	size_t depth = 0;

	for (; node && node <= t->nodes.len && depth <= t->nodes.len; depth++)
		node = t->nodes.v[node - 1].parent;
	return depth;
}

static uint32_t node_parent(const struct tr_tables *t, uint32_t node)
{
	return node && node <= t->nodes.len ? t->nodes.v[node - 1].parent : 0;
}

static void test_collect_shared_frames(void)
{
	struct tr_tables t = {0};
	const struct tr_sample *s;
	bool ended = false;

	CHECK(record_feed_load(&t, &ended, feed_shared_frames, NULL) == 0);
	CHECK_EQ_U64(t.samples.len, 7);
	if (t.samples.len != 7)
		goto out;
	s = t.samples.v;
	CHECK_EQ_U64(node_depth(&t, s[0].node), 3);
	CHECK_EQ_U64(node_depth(&t, s[1].node), 3);
	CHECK_EQ_U64(node_depth(&t, s[2].node), 2);
	CHECK_EQ_U64(node_depth(&t, s[3].node), 4);
	/*
	 * A caller's frame is its return address less one, the sampled one
	 * exact: A, A>B, A>B>C, A>B>D, A>B exact; X, X>A, X>A>B, X>A>B>C;
	 * then A>B>C in the other file.
	 */
	CHECK_EQ_U64(t.nodes.len, 12);
	CHECK(s[0].node != s[1].node);
	CHECK_EQ_U64(node_parent(&t, s[0].node), node_parent(&t, s[1].node));
	CHECK_EQ_U64(node_parent(&t, node_parent(&t, s[0].node)), node_parent(&t, s[2].node));
	CHECK(s[2].node != node_parent(&t, s[0].node));
	CHECK(s[3].node != s[0].node);
	CHECK_EQ_U64(s[4].node, s[0].node);
	CHECK_EQ_U64(s[5].node, s[0].node);
	CHECK_EQ_U64(t.nodes.v[s[3].node - 1].loc, t.nodes.v[s[0].node - 1].loc);
	/* The same addresses in the other file are other locs. */
	CHECK(s[6].node != s[0].node);
	CHECK(t.locs.v[t.nodes.v[s[6].node - 1].loc - 1].dso !=
	      t.locs.v[t.nodes.v[s[0].node - 1].loc - 1].dso);
out:
	tr_tables_free(&t);
}

/*
 * Samples of processes no record announced: one that /proc has is read
 * from it at its first sample (its maps name the sample's address); one
 * gone, or whose pid a process started after the sample holds, is
 * counted once, however many samples it has.
 */
static void test_unannounced_processes(void)
{
	struct rec_layout layout = { .sample_type = FP_TYPE };
	char path[] = "/tmp/gtrace-test-unannounced.XXXXXX";
	const uint64_t here[] = { (uintptr_t)test_unannounced_processes };
	uint64_t before = now_ns(CLOCK_MONOTONIC) - 200 * NSEC_PER_MSEC;
	uint32_t self = (uint32_t)getpid(), gone = (1u << 22) + self, late;
	struct tr_tables t = {0};
	struct chunk_writer *cw;
	struct tr_writer *w;
	struct collector *c;
	int fd = mkstemp(path);
	bool ended = false;
	pid_t child;

	CHECK(fd >= 0);
	if (fd < 0 || tr_writer_open(&w, path, TR_FEAT_CPU_SAMPLES))
		return;
	close(fd);
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	late = (uint32_t)child;
	CHECK(chunk_writer_start(&cw, w) == 0 && collector_new(&c, UNWIND_FP, &layout, cw) == 0);
	for (int i = 0; i < 3; i++) {
		feed_sample_of(c, gone, gone, now_ns(CLOCK_MONOTONIC), here, 1);
		feed_sample_of(c, late, late, before, here, 1);
		feed_sample_of(c, self, (uint32_t)gettid(), now_ns(CLOCK_MONOTONIC), here, 1);
	}
	collector_finish(c);
	collector_flush(c, true);
	CHECK(chunk_writer_stop(cw, true) == 0 && tr_writer_close(w) == 0);
	collector_free(c);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	CHECK(readback_tables(path, &t, &ended) == 0 && ended);
	unlink(path);
	CHECK_EQ_U64(readback_counter(&t, "processes.recovered"), 1);
	CHECK_EQ_U64(readback_counter(&t, "processes.unrecovered"), 2);
	CHECK_EQ_U64(readback_counter(&t, "processes"), 1);
	CHECK_EQ_U64(readback_counter(&t, "threads"), 1);
	CHECK(has_task(&t, (uint32_t)gettid(), TR_TASK_NEW, 0));
	/* Our own samples were named through the maps /proc gave. */
	CHECK_EQ_U64(readback_counter(&t, "symbols.resolved"), 1);
	CHECK_EQ_U64(t.samples.len, 9);
	tr_tables_free(&t);
}

/* Every event name the sampler gives parses back to its event, ":u" too. */
static void test_event_names(void)
{
	enum sampler_event e = SAMPLER_EVENT_AUTO;
	bool user_only = true;
	char name[32];

	CHECK_STREQ(sampler_event_label(SAMPLER_EVENT_AUTO), "cycles");
	for (int i = SAMPLER_EVENT_CYCLES; i <= SAMPLER_EVENT_TASK_CLOCK; i++) {
		CHECK(!sampler_event_parse(sampler_event_label((enum sampler_event)i), &e,
					   &user_only));
		CHECK_EQ_U64(e, i);
		CHECK(!user_only);
		snprintf(name, sizeof(name), "%s:u", sampler_event_label((enum sampler_event)i));
		e = SAMPLER_EVENT_AUTO;
		CHECK(!sampler_event_parse(name, &e, &user_only));
		CHECK_EQ_U64(e, i);
		CHECK(user_only);
	}
	CHECK(sampler_event_parse("instructions", &e, &user_only) == -EINVAL);
	CHECK(sampler_event_parse("cpu-clock:k", &e, &user_only) == -EINVAL);
	CHECK(sampler_event_parse("", &e, &user_only) == -EINVAL);
}

/*
 * Wakeups as rare as the rings allow: half a ring where 16 ms of samples
 * fit besides (switches out counted as often as the timer's), a quarter
 * where they do not, and in between the room they leave.
 */
static void test_wakeup_bytes(void)
{
	const size_t ring = 4u << 20;
	struct sampler_opts o = { .freq = 999, .method = UNWIND_DWARF, .stack_size = 16384 };
	uint64_t headroom;

	CHECK_EQ_U64(sampler_wakeup_bytes(&o, false, ring), ring / 2);
	CHECK_EQ_U64(sampler_wakeup_bytes(&o, true, ring), ring / 2);
	o.freq = 10000;
	CHECK_EQ_U64(sampler_wakeup_bytes(&o, false, ring), ring / 4);
	o.freq = 4999;
	headroom = 4999ull * (16384 + 1280) * 16 / 1000;
	CHECK_EQ_U64(sampler_wakeup_bytes(&o, false, ring), ring - ring / 4 - headroom);
	CHECK_EQ_U64(sampler_wakeup_bytes(&o, true, ring), ring / 4);
	/* Small samples: frame pointers at 20 kHz leave room for half a ring. */
	o.method = UNWIND_FP;
	o.freq = 20000;
	CHECK_EQ_U64(sampler_wakeup_bytes(&o, true, ring), ring / 2);
	/* The smallest ring, at a rate no kernel allows: no overflow. */
	o.method = UNWIND_DWARF;
	o.stack_size = 65528;
	o.freq = UINT32_MAX;
	CHECK_EQ_U64(sampler_wakeup_bytes(&o, true, 64u << 10), 16u << 10);
}

/* Whether a command runs CPython: by its name, or its "#!" line (env's too). */
static void test_program_runs_python(void)
{
	static const struct {
		const char *line;
		bool python;
	} scripts[] = {
		{ "#!/usr/bin/python3.11\n", true },
		{ "#! /usr/bin/python3 -u\n", true },
		{ "#!/usr/bin/env python3\n", true },
		{ "#!/usr/bin/env -S python3 -X dev\n", true },
		{ "#!/usr/bin/env -u HOME LANG=C python3\n", true },
		{ "#!/usr/bin/env -C /tmp sh\n", false },
		{ "#!/bin/sh\nexec python3 \"$@\"\n", false },
		{ "#!/usr/bin/env\n", false },
		{ "#!\n", false },
		{ "print('no line')\n", false },
	};
	char path[64];

	snprintf(path, sizeof(path), "/tmp/gtrace-test-script-%d", (int)getpid());
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		FILE *f = fopen(path, "w");

		CHECK(f && fputs(scripts[i].line, f) >= 0 && !fclose(f) && !chmod(path, 0755));
		if (program_runs_python(path) != scripts[i].python)
			printf("  %s: %s\n", scripts[i].line, scripts[i].python ? "not python" : "python");
		CHECK(program_runs_python(path) == scripts[i].python);
	}
	unlink(path);
	CHECK(!program_runs_python("/nonexistent/python3"));
	CHECK(!program_runs_python("sh"));
	CHECK(!process_runs_python(getpid()));
}

/* What --gpu-pc-sampling takes, and the form the agent reads back. */
static void test_pc_opts(void)
{
	static const struct {
		const char *in;
		const char *why;	/* NULL: accepted */
	} bad[] = {
		{ "period=4", "invalid period '4': expected 5 to 31 (2^N cycles)" },
		{ "period=32", "invalid period '32': expected 5 to 31 (2^N cycles)" },
		{ "period=", "invalid period '': expected 5 to 31 (2^N cycles)" },
		{ "rate=-1", "invalid rate '-1': expected samples a second, 0 for always on" },
		{ "mode=fast", "invalid mode 'fast': expected serialized or continuous" },
		{ "cubin-max=1k", "invalid cubin-max '1k': expected a number of bytes" },
		{ "speed=1", "unknown key 'speed': expected period, mode, rate or cubin-max" },
		{ "period", "invalid period '': expected 5 to 31 (2^N cycles)" },
	};
	struct pc_opts o = PC_OPTS_DEFAULT, back = PC_OPTS_DEFAULT;
	char why[160], text[128];

	CHECK_EQ_U64(pc_opts_parse(&o, "", why, sizeof(why)), 0);
	CHECK_EQ_U64(o.period, 20);
	CHECK(!o.continuous);
	CHECK_EQ_U64(o.rate, 100);
	CHECK_EQ_U64(o.cubin_max, 64u << 20);
	CHECK_EQ_U64(pc_opts_parse(&o, "period=5,mode=continuous,rate=0,cubin-max=4096", why,
				   sizeof(why)), 0);
	CHECK_EQ_U64(o.period, 5);
	CHECK(o.continuous);
	CHECK_EQ_U64(o.rate, 0);
	CHECK_EQ_U64(o.cubin_max, 4096);
	pc_opts_format(&o, text, sizeof(text));
	CHECK_STREQ(text, "period=5,mode=continuous,rate=0,cubin-max=4096");
	CHECK_EQ_U64(pc_opts_parse(&back, text, why, sizeof(why)), 0);
	/* Field by field: the padding after continuous holds whatever the stack did. */
	CHECK(back.period == o.period && back.continuous == o.continuous && back.rate == o.rate &&
	      back.cubin_max == o.cubin_max);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = (struct pc_opts)PC_OPTS_DEFAULT;
		CHECK_EQ_U64(pc_opts_parse(&o, bad[i].in, why, sizeof(why)), (uint64_t)-EINVAL);
		CHECK_STREQ(why, bad[i].why);
	}
}

int main(void)
{
	RUN(test_parse_dwarf_sample);
	RUN(test_copy_sample_trims_stack);
	RUN(test_parse_rejects_short_records);
	RUN(test_parse_callchain_sample);
	RUN(test_callchain_kernel);
	RUN(test_collect_kernel_frames);
	RUN(test_collect_switch_stacks);
	RUN(test_collect_shared_frames);
	RUN(test_parse_id_trailer);
	RUN(test_queue_orders_and_holds_back);
	RUN(test_queue_merges_any_order);
	RUN(test_queue_compaction_keeps_records);
	RUN(test_queue_records_left_in_ring);
	RUN(test_collect_rows);
	RUN(test_unannounced_processes);
	RUN(test_event_names);
	RUN(test_wakeup_bytes);
	RUN(test_program_runs_python);
	RUN(test_pc_opts);
	return test_summary();
}
