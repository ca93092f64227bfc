/* SPDX-License-Identifier: MIT */
/*
 * The recorder's span socket: packets sent the way libgtrace-target sends
 * them, good and bad, become lane and span rows and target.* counters; the
 * CUDA agent's code images and PC samples become cubin and pc_samples rows.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/file.h"
#include "format/tables.h"
#include "record/collect.h"
#include "record/ingest.h"
#include "record/writer.h"
#include "contract/wire.h"
#include "recorder.h"
#include "test.h"

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends a header of type and count, then len bytes of body. */
static void send_packet(int fd, uint16_t type, uint16_t version, uint32_t count,
			const void *body, size_t len)
{
	static uint8_t buf[WIRE_MAX_PACKET + 64];
	struct wire_header h = { .type = type, .version = version, .count = count };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	CHECK(send(fd, buf, sizeof(h) + len, 0) == (ssize_t)(sizeof(h) + len));
}

static void send_hello_instance(int fd, uint32_t pid, uint32_t instance)
{
	struct wire_hello m = { .pid = pid, .instance = instance };

	send_packet(fd, WIRE_HELLO, WIRE_VERSION, 1, &m, sizeof(m));
}

static void send_hello(int fd, uint32_t pid)
{
	struct wire_hello m = { .pid = pid };

	send_packet(fd, WIRE_HELLO, WIRE_VERSION, 1, &m, sizeof(m));
}

static void send_string(int fd, uint32_t id, const char *s)
{
	uint8_t buf[256];
	struct wire_string m = { .id = id, .len = (uint32_t)strlen(s) };

	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), s, m.len);
	send_packet(fd, WIRE_STRING, WIRE_VERSION, 1, buf, sizeof(m) + m.len);
}

static void send_lane(int fd, uint32_t id, uint32_t kind, uint32_t name)
{
	struct wire_lane m = { .id = id, .kind = kind, .name = name };

	send_packet(fd, WIRE_LANE, WIRE_VERSION, 1, &m, sizeof(m));
}

static void send_drops(int fd, uint64_t queue_full, uint64_t unsent)
{
	struct wire_drops m = { .queue_full = queue_full, .unsent = unsent };

	send_packet(fd, WIRE_DROPS, WIRE_VERSION, 1, &m, sizeof(m));
}

static struct wire_span span(uint32_t lane, uint32_t name, uint64_t start, uint64_t end)
{
	return (struct wire_span){ .lane = lane, .name = name, .start_ns = start,
				   .end_ns = end, .origin_tid = 42, .origin_ns = start - 5 };
}

/* Attribute entries for n attributes: key first_key + j, value 100 * j. */
static void put_attrs(struct wire_span *at, uint32_t first_key, uint32_t n)
{
	struct wire_attrs e;

	for (uint32_t j = 0; j < n; j++) {
		if (j % WIRE_ATTRS_PER_ENTRY == 0)
			memset(&e, 0, sizeof(e));
		e.key[j % WIRE_ATTRS_PER_ENTRY] = first_key + j;
		e.value[j % WIRE_ATTRS_PER_ENTRY] = 100 * j;
		memcpy(&at[j / WIRE_ATTRS_PER_ENTRY], &e, sizeof(e));
	}
}

static void send_counter(int fd, uint32_t name, uint64_t value)
{
	struct wire_counter m = { .name = name, .value = value };

	send_packet(fd, WIRE_COUNTERS, WIRE_VERSION, 1, &m, sizeof(m));
}

static void send_meta(int fd, const char *key, const char *value, uint32_t extra_len)
{
	uint8_t buf[256];
	struct wire_meta m = { .key_len = (uint32_t)strlen(key) + extra_len,
			       .value_len = (uint32_t)strlen(value) };

	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), key, strlen(key));
	memcpy(buf + sizeof(m) + strlen(key), value, m.value_len);
	send_packet(fd, WIRE_META, WIRE_VERSION, 1, buf, sizeof(m) + strlen(key) + m.value_len);
}

static void drain(struct ingest *in)
{
	CHECK(recorder_drain(in));
}

/*
 * Runs peer in a child process that sends while the recorder reads (more
 * than a socket holds may go), then reads the rest. The child lives on
 * until read: the recorder checks its parent. Returns the child's pid.
 */
static pid_t child_peer(struct ingest *in, void (*peer)(const char *path))
{
	int hold[2], sent[2], status;
	struct pollfd done;
	pid_t child;

	CHECK(pipe(hold) == 0 && pipe(sent) == 0);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		close(hold[1]);
		close(sent[0]);
		peer(ingest_socket_path(in));
		close(sent[1]);
		(void)!read(hold[0], &status, 1);
		_exit(0);
	}
	close(hold[0]);
	close(sent[1]);
	done = (struct pollfd){ .fd = sent[0], .events = POLLIN };
	do
		ingest_poll(in, true);
	while (poll(&done, 1, 10) == 0);
	close(sent[0]);
	drain(in);
	close(hold[1]);
	CHECK(child > 0 && waitpid(child, &status, 0) == child);
	return child;
}

/* A process of the recording that sends a bit of everything. */
static void good_peer(const char *path)
{
	struct wire_span spans[4];
	int fd = connect_to(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	/* Spans before HELLO cannot be placed. */
	spans[0] = span(1, 3, 100, 200);
	send_packet(fd, WIRE_SPANS, WIRE_VERSION, 1, spans, sizeof(spans[0]));
	send_hello(fd, (uint32_t)getpid());
	send_string(fd, 1, "queue");
	send_string(fd, 2, "queue 0");
	send_string(fd, 3, "job-a");
	send_string(fd, 4, "queue 1");
	send_lane(fd, 1, 1, 2);
	send_lane(fd, 2, 1, 4);	/* defined, never used: no lane row */
	spans[0] = span(1, 3, 1000, 1500);
	spans[1] = span(1, 3, 2000, 2100);
	spans[2] = span(7, 3, 2000, 2100);	/* unknown lane */
	spans[3] = span(1, 3, 3000, 2999);	/* ends before it starts */
	send_packet(fd, WIRE_SPANS, WIRE_VERSION, 4, spans, sizeof(spans));
	/* A count that does not match the size, a version from elsewhere. */
	send_packet(fd, WIRE_SPANS, WIRE_VERSION, 3, spans, 2 * sizeof(spans[0]));
	send_packet(fd, WIRE_SPANS, WIRE_VERSION + 1, 2, spans, 2 * sizeof(spans[0]));
	send_drops(fd, 5, 1);
	send_drops(fd, 9, 1);	/* cumulative: 9 in all */
	close(fd);
}

/* A HELLO for a pid that is not its own: nothing it sends is recorded. */
static void lying_peer(const char *path)
{
	struct wire_span spans[3] = { span(1, 1, 10, 20), span(1, 1, 30, 40), span(1, 1, 50, 60) };
	int fd = connect_to(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	send_hello(fd, (uint32_t)getpid() + 1);
	send_string(fd, 1, "x");
	send_lane(fd, 1, 1, 1);
	send_packet(fd, WIRE_SPANS, WIRE_VERSION, 3, spans, sizeof(spans));
	close(fd);
}

static void test_packets_to_rows(void)
{
	struct tr_tables t = {0};
	struct recorder s;
	char *sock;

	CHECK(recorder_start(&s) == 0);
	sock = strdup(ingest_socket_path(s.in));
	good_peer(sock);
	lying_peer(sock);
	drain(s.in);
	ingest_close(s.in);
	CHECK(access(sock, F_OK) && errno == ENOENT);
	free(sock);
	CHECK(recorder_finish(&s, &t) == 0);

	CHECK_EQ_U64(t.lanes.len, 1);
	CHECK_EQ_U64(t.spans.len, 2);
	if (t.lanes.len == 1 && t.spans.len == 2) {
		CHECK_EQ_U64(t.lanes.v[0].pid, getpid());
		CHECK_STREQ(t.strings.v[t.lanes.v[0].kind - 1], "queue");
		CHECK_STREQ(t.strings.v[t.lanes.v[0].name - 1], "queue 0");
		CHECK_EQ_U64(t.spans.v[0].lane, 1);
		CHECK_STREQ(t.strings.v[t.spans.v[0].name - 1], "job-a");
		CHECK_EQ_U64(t.spans.v[0].start, 1000);
		CHECK_EQ_U64(t.spans.v[0].dur, 500);
		CHECK_EQ_U64(t.spans.v[0].origin_tid, 42);
		CHECK_EQ_U64(t.spans.v[0].origin_ts, 995);
		CHECK_EQ_U64(t.spans.v[1].dur, 100);
	}
	CHECK_EQ_U64(readback_counter(&t, "target.spans"), 2);
	CHECK_EQ_U64(readback_counter(&t, "target.lanes"), 1);
	CHECK_EQ_U64(readback_counter(&t, "target.processes"), 1);
	CHECK_EQ_U64(readback_counter(&t, "target.batches"), 1);
	/* 1 before HELLO, 2 bad spans, 2 + 2 in the bad packets (what they hold). */
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.bad-message"), 7);
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.queue-full"), 9);
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.unsent"), 1);
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.wrong-pid"), 3);
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.no-run"), 0);
	tr_tables_free(&t);
}

/*
 * Spans with attributes, counters and meta from this process, and counters
 * from a child: the child's sum with ours.
 */
static void attrs_peer(const char *path, uint64_t kernels, bool all)
{
	struct wire_span e[12] = { 0 };
	int fd = connect_to(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	send_hello(fd, (uint32_t)getpid());
	send_string(fd, 1, "cuda");
	send_string(fd, 2, "GPU0 stream 7");
	send_string(fd, 3, "gemm");
	send_string(fd, 4, "grid.x");
	send_string(fd, 5, "grid.y");
	send_string(fd, 6, "grid.z");
	send_string(fd, 7, "block.x");
	send_string(fd, 8, "cuda.records.kernel");
	send_string(fd, 9, "nodot");
	send_string(fd, 10, "target.spans");
	send_lane(fd, 1, 1, 2);
	send_counter(fd, 8, kernels - 3);
	send_counter(fd, 8, kernels);		/* the last value counts */
	if (!all) {
		close(fd);
		return;
	}
	send_counter(fd, 9, 5);			/* not namespaced: ignored */
	send_counter(fd, 10, 1000);		/* the recorder's own: ignored */
	send_meta(fd, "cuda.status", "active", 0);
	send_meta(fd, "command", "mine", 0);	/* not namespaced: ignored */
	send_meta(fd, "cuda.bad", "x", 5);	/* lengths that do not add up */

	e[0] = span(1, 3, 1000, 1500);		/* 4 attributes in 2 entries */
	e[0].nattrs = 4;
	put_attrs(&e[1], 4, 4);
	e[3] = span(1, 3, 2000, 2100);		/* none */
	e[4] = span(1, 3, 3000, 3100);		/* an undefined key: dropped */
	e[4].nattrs = 1;
	put_attrs(&e[5], 99, 1);
	e[6] = span(1, 3, 4000, 4100);		/* 2 attributes */
	e[6].nattrs = 2;
	put_attrs(&e[7], 6, 2);
	send_packet(fd, WIRE_SPANS_ATTRS, WIRE_VERSION, 8, e, 8 * sizeof(e[0]));
	/* 2 spans, the second claiming more entries than the packet holds */
	e[0].nattrs = 0;
	e[1] = span(1, 3, 5000, 5100);
	e[1].nattrs = 4;
	send_packet(fd, WIRE_SPANS_ATTRS, WIRE_VERSION, 2, e, 2 * sizeof(e[0]));
	close(fd);
}

/* The child's part: counters only, summed with ours. */
static void counters_child(const char *path)
{
	attrs_peer(path, 7, false);
}

static void test_attrs_counters_meta(void)
{
	struct tr_tables t = {0};
	struct recorder s;
	const char *meta = NULL;

	CHECK(recorder_start(&s) == 0);
	attrs_peer(ingest_socket_path(s.in), 10, true);
	drain(s.in);
	/* a first chunk: the counters are written again in the next */
	collector_flush(s.c, true);
	child_peer(s.in, counters_child);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);

	CHECK_EQ_U64(t.spans.len, 3);
	CHECK_EQ_U64(t.span_attrs.len, 6);
	if (t.span_attrs.len == 6) {
		static const struct { uint32_t span; const char *key; uint64_t value; } want[] = {
			{ 1, "grid.x", 0 }, { 1, "grid.y", 100 }, { 1, "grid.z", 200 },
			{ 1, "block.x", 300 }, { 3, "grid.z", 0 }, { 3, "block.x", 100 },
		};

		for (size_t i = 0; i < 6; i++) {
			CHECK_EQ_U64(t.span_attrs.v[i].span, want[i].span);
			CHECK_STREQ(t.strings.v[t.span_attrs.v[i].key - 1], want[i].key);
			CHECK_EQ_U64(t.span_attrs.v[i].value, want[i].value);
		}
	}
	CHECK_EQ_U64(t.spans.len == 3 ? t.spans.v[2].start : 0, 4000);
	CHECK_EQ_U64(readback_counter(&t, "cuda.records.kernel"), 17);
	CHECK_EQ_U64(readback_counter(&t, "nodot"), UINT64_MAX);
	CHECK_EQ_U64(readback_counter(&t, "target.spans"), 3);
	/* the bad span, the 2 of the bad packet, the bad meta (no span) */
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.bad-message"), 3);
	for (size_t i = 0; i < t.meta.len; i++) {
		CHECK(strcmp(t.meta.v[i].key, "command"));
		if (!strcmp(t.meta.v[i].key, "cuda.status"))
			meta = t.meta.v[i].value;
	}
	CHECK_STREQ(meta ? meta : "(none)", "active");
	tr_tables_free(&t);
}

/* A peer still sending when the recording ends: its spans came too late. */
static void test_late_spans(void)
{
	struct wire_span spans[2] = { span(1, 1, 10, 20), span(1, 1, 30, 40) };
	struct tr_tables t = {0};
	struct recorder s;
	int peer;

	CHECK(recorder_start(&s) == 0);
	peer = connect_to(ingest_socket_path(s.in));
	CHECK(peer >= 0);
	send_hello(peer, (uint32_t)getpid());
	send_packet(peer, WIRE_SPANS, WIRE_VERSION, 2, spans, sizeof(spans));
	ingest_close(s.in);
	close(peer);
	CHECK(recorder_finish(&s, &t) == 0);
	CHECK_EQ_U64(t.spans.len, 0);
	CHECK_EQ_U64(readback_counter(&t, "target.dropped.no-run"), 2);
	tr_tables_free(&t);
}

/*
 * Two copies of the library in one process (a program's and the CUDA
 * agent's), each numbering its strings and lanes from 1: each connection's
 * ids stand for its own copy's names.
 */
static void two_copies(const char *path)
{
	struct wire_span sp = span(1, 3, 1000, 1500);
	int fd[2] = { connect_to(path), connect_to(path) };

	CHECK(fd[0] >= 0 && fd[1] >= 0);
	if (fd[0] < 0 || fd[1] < 0)
		return;
	for (uint32_t copy = 0; copy < 2; copy++) {
		send_hello_instance(fd[copy], (uint32_t)getpid(), 100 + copy);
		send_string(fd[copy], 1, copy ? "cuda" : "queue");
		send_string(fd[copy], 2, copy ? "GPU0 stream 7" : "queue 0");
		send_string(fd[copy], 3, copy ? "gemm" : "job-a");
		send_lane(fd[copy], 1, 1, 2);
	}
	for (uint32_t copy = 0; copy < 2; copy++) {
		send_packet(fd[copy], WIRE_SPANS, WIRE_VERSION, 1, &sp, sizeof(sp));
		close(fd[copy]);
	}
}

static void test_library_copies(void)
{
	struct tr_tables t = {0};
	struct recorder s;

	CHECK(recorder_start(&s) == 0);
	two_copies(ingest_socket_path(s.in));
	drain(s.in);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);
	CHECK_EQ_U64(t.lanes.len, 2);
	CHECK_EQ_U64(t.spans.len, 2);
	if (t.lanes.len == 2 && t.spans.len == 2) {
		CHECK_STREQ(t.strings.v[t.lanes.v[0].name - 1], "queue 0");
		CHECK_STREQ(t.strings.v[t.lanes.v[1].name - 1], "GPU0 stream 7");
		CHECK_STREQ(t.strings.v[t.spans.v[0].name - 1], "job-a");
		CHECK_STREQ(t.strings.v[t.spans.v[1].name - 1], "gemm");
		CHECK(t.spans.v[0].lane != t.spans.v[1].lane);
	}
	CHECK_EQ_U64(readback_counter(&t, "target.processes"), 1);
	tr_tables_free(&t);
}

#define CUBIN_A 0xa11ceull
#define CUBIN_B 0xb0bull

/* Sends the part at offset of an image of size bytes, byte i being i * mul. */
static void send_cubin_part(int fd, uint64_t crc, size_t size, uint64_t offset, uint8_t mul)
{
	static uint8_t buf[sizeof(struct wire_cubin) + WIRE_CUBIN_PART];
	struct wire_cubin m = { .crc = crc, .size = size, .offset = offset };
	size_t len = size - offset < WIRE_CUBIN_PART ? size - offset : WIRE_CUBIN_PART;

	memcpy(buf, &m, sizeof(m));
	for (size_t i = 0; i < len; i++)
		buf[sizeof(m) + i] = (uint8_t)((offset + i) * mul);
	send_packet(fd, WIRE_CUBIN, WIRE_VERSION, 1, buf, sizeof(m) + len);
}

/* Sends an image of size bytes in parts, as the agent does. */
static void send_cubin(int fd, uint64_t crc, size_t size, uint8_t mul)
{
	for (uint64_t offset = 0; offset < size; offset += WIRE_CUBIN_PART)
		send_cubin_part(fd, crc, size, offset, mul);
}

static void pc_peer(const char *path)
{
	struct wire_pc_sample pcs[3] = {
		{ .cubin_crc = CUBIN_A, .pc = 0x40, .correlation = 7, .function = 1, .stall = 2,
		  .count = 30 },
		{ .cubin_crc = CUBIN_B, .pc = 0x50, .correlation = 7, .function = 1, .stall = 3,
		  .count = 4 },
		{ .cubin_crc = 0x5eed, .pc = 0x60, .correlation = 8, .function = 1, .stall = 2,
		  .count = 1 },
	};
	struct wire_cubin stray = { .crc = CUBIN_A, .size = 100, .offset = 10 };
	int fd = connect_to(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	send_hello(fd, (uint32_t)getpid());
	send_string(fd, 1, "pc_hot");
	send_string(fd, 2, "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
	send_string(fd, 3, "smsp__pcsamp_warps_issue_stalled_wait");
	send_cubin(fd, CUBIN_A, 70000, 3);	/* two parts */
	send_cubin(fd, CUBIN_A, 70000, 3);	/* loaded again: kept once */
	send_cubin(fd, CUBIN_B, 50000, 5);	/* past the cap of 100000 bytes */
	/* A part that does not follow the one before: malformed. */
	send_packet(fd, WIRE_CUBIN, WIRE_VERSION, 1, &stray, sizeof(stray));
	send_packet(fd, WIRE_PC_SAMPLES, WIRE_VERSION, 3, pcs, sizeof(pcs));
	/* A stall reason never defined: the packet is refused whole. */
	pcs[0].stall = 9;
	send_packet(fd, WIRE_PC_SAMPLES, WIRE_VERSION, 1, pcs, sizeof(pcs[0]));
	close(fd);
}

/*
 * The images are more than a socket holds: the peer is a child that sends
 * while the recorder reads, and lives on until read.
 */
static void test_cubins_and_pc_samples(void)
{
	struct tr_tables t = {0};
	struct recorder s;
	bool image_ok = true;
	pid_t child;

	CHECK(recorder_start(&s) == 0);
	collector_set_cubin_max(s.c, 100000);
	child = child_peer(s.in, pc_peer);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);

	CHECK_EQ_U64(t.cubins.len, 1);
	if (t.cubins.len == 1) {
		CHECK_EQ_U64(t.cubins.v[0].crc, CUBIN_A);
		CHECK_EQ_U64(t.cubins.v[0].image.len, 70000);
		for (size_t i = 0; i < t.cubins.v[0].image.len; i++)
			image_ok &= t.cubins.v[0].image.data[i] == (uint8_t)(i * 3);
		CHECK(image_ok);
	}
	CHECK_EQ_U64(readback_counter(&t, "cuda.pc.cubins-over-cap"), 1);
	CHECK_EQ_U64(t.pc_samples.len, 3);
	if (t.pc_samples.len == 3) {
		const struct tr_pc_sample *p = t.pc_samples.v;

		CHECK_EQ_U64(p[0].pid, (uint32_t)child);
		CHECK_EQ_U64(p[0].correlation, 7);
		CHECK_EQ_U64(p[0].cubin, 1);
		CHECK_EQ_U64(p[0].pc, 0x40);
		CHECK_EQ_U64(p[0].count, 30);
		CHECK_STREQ(t.strings.v[p[0].function - 1], "pc_hot");
		CHECK_STREQ(t.strings.v[p[0].stall - 1],
			    "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
		CHECK_STREQ(t.strings.v[p[1].stall - 1], "smsp__pcsamp_warps_issue_stalled_wait");
		/* Over the cap, and never sent: no image to map lines with. */
		CHECK_EQ_U64(p[1].cubin, 0);
		CHECK_EQ_U64(p[2].cubin, 0);
	}
	tr_tables_free(&t);
}

/* Lets the recorder take what has arrived, new connections included. */
static void settle(struct ingest *in)
{
	for (int i = 0; i < 10; i++) {
		ingest_poll(in, true);
		poll(NULL, 0, 5);
	}
}

/*
 * Two processes load one module at once: both start its image before
 * either ends it, and the recording keeps it once. An image larger than a
 * quarter of a chunk is over the cap, however high the cap.
 */
static void test_cubins_at_once(void)
{
	struct tr_tables t = {0};
	struct recorder s;
	struct wire_cubin huge = { .crc = CUBIN_B, .size = (64u << 20) + 1 };
	int go[2], sent[2], status, fd;
	char byte = 0;
	pid_t child;

	CHECK(recorder_start(&s) == 0);
	collector_set_cubin_max(s.c, 1ull << 30);
	CHECK(pipe(go) == 0 && pipe(sent) == 0);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		close(go[1]);
		close(sent[0]);
		fd = connect_to(ingest_socket_path(s.in));
		send_hello(fd, (uint32_t)getpid());
		send_cubin_part(fd, CUBIN_A, 70000, 0, 3);
		(void)!write(sent[1], "", 1);
		(void)!read(go[0], &byte, 1);
		send_cubin_part(fd, CUBIN_A, 70000, WIRE_CUBIN_PART, 3);
		close(fd);
		_exit(0);
	}
	close(go[0]);
	close(sent[1]);
	CHECK(read(sent[0], &byte, 1) == 1);
	settle(s.in);
	/* The test is the other process: the whole image, before the child's ends. */
	fd = connect_to(ingest_socket_path(s.in));
	CHECK(fd >= 0);
	send_hello(fd, (uint32_t)getpid());
	send_cubin(fd, CUBIN_A, 70000, 3);
	send_packet(fd, WIRE_CUBIN, WIRE_VERSION, 1, &huge, sizeof(huge));
	close(fd);
	settle(s.in);
	CHECK(write(go[1], "", 1) == 1);
	CHECK(child > 0 && waitpid(child, &status, 0) == child);
	drain(s.in);
	close(go[1]);
	close(sent[0]);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);

	CHECK_EQ_U64(t.cubins.len, 1);
	CHECK_EQ_U64(readback_counter(&t, "cuda.pc.cubins-over-cap"), 1);
	tr_tables_free(&t);
}

/*
 * An image whose parts stop coming: replaced by the next image, or left
 * when its connection closes. Each is counted, never kept.
 */
static void test_cubin_cut_short(void)
{
	static uint8_t part[sizeof(struct wire_cubin) + 1000];
	struct wire_cubin m = { .crc = CUBIN_A, .size = 3000 };
	struct tr_tables t = {0};
	struct recorder s;
	int fd;

	CHECK(recorder_start(&s) == 0);
	collector_set_cubin_max(s.c, 1 << 20);
	fd = connect_to(ingest_socket_path(s.in));
	CHECK(fd >= 0);
	send_hello(fd, (uint32_t)getpid());
	memcpy(part, &m, sizeof(m));
	send_packet(fd, WIRE_CUBIN, WIRE_VERSION, 1, part, sizeof(part));
	send_cubin(fd, CUBIN_B, 2000, 5);	/* A is cut short */
	m.crc = 0xc0ffee;
	memcpy(part, &m, sizeof(m));
	send_packet(fd, WIRE_CUBIN, WIRE_VERSION, 1, part, sizeof(part));
	close(fd);				/* so is this one */
	drain(s.in);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);
	CHECK_EQ_U64(t.cubins.len, 1);
	if (t.cubins.len == 1)
		CHECK_EQ_U64(t.cubins.v[0].crc, CUBIN_B);
	CHECK_EQ_U64(readback_counter(&t, "cuda.pc.cubins-cut-short"), 2);
	tr_tables_free(&t);
}

/*
 * Images on their way count against the cap: while one is unfinished,
 * another that would pass the cap with it is over it; once the first is
 * cut short with its connection, its bytes are free for the next.
 */
static void test_cubins_on_their_way(void)
{
	struct tr_tables t = {0};
	struct recorder s;
	int first, second;

	CHECK(recorder_start(&s) == 0);
	collector_set_cubin_max(s.c, 100000);
	first = connect_to(ingest_socket_path(s.in));
	second = connect_to(ingest_socket_path(s.in));
	CHECK(first >= 0 && second >= 0);
	send_hello_instance(first, (uint32_t)getpid(), 1);
	send_hello_instance(second, (uint32_t)getpid(), 2);
	send_cubin_part(first, CUBIN_A, 70000, 0, 3);	/* its second part never comes */
	settle(s.in);
	send_cubin(second, CUBIN_B, 50000, 5);		/* 120000 with A's: over */
	settle(s.in);
	close(first);					/* A is cut short */
	settle(s.in);
	send_cubin(second, 0xc0ffee, 50000, 7);		/* room again */
	close(second);
	drain(s.in);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);
	CHECK_EQ_U64(t.cubins.len, 1);
	if (t.cubins.len == 1)
		CHECK_EQ_U64(t.cubins.v[0].crc, 0xc0ffee);
	CHECK_EQ_U64(readback_counter(&t, "cuda.pc.cubins-over-cap"), 1);
	CHECK_EQ_U64(readback_counter(&t, "cuda.pc.cubins-cut-short"), 1);
	tr_tables_free(&t);
}

/*
 * Out of descriptors, the recorder cannot take a peer that waits: its
 * socket must not poll as readable meanwhile (the event loop would spin),
 * and the peer is taken once descriptors are back.
 */
static void test_out_of_descriptors(void)
{
	struct pollfd p;
	struct rlimit old = {0}, low;
	struct tr_tables t = {0};
	struct recorder s;
	int fds[64], n = 0, peer;

	CHECK(recorder_start(&s) == 0);
	p = (struct pollfd){ .fd = ingest_fd(s.in), .events = POLLIN };
	peer = connect_to(ingest_socket_path(s.in));
	CHECK(peer >= 0 && getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = (rlim_t)peer + 8;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	ingest_poll(s.in, true);
	CHECK(ingest_idle(s.in));
	CHECK_EQ_U64(poll(&p, 1, 0), 0);
	while (n)
		close(fds[--n]);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	for (int i = 0; i < 200 && ingest_idle(s.in); i++) {
		poll(&p, 1, 10);
		ingest_poll(s.in, true);
	}
	CHECK(!ingest_idle(s.in));
	close(peer);
	drain(s.in);
	ingest_close(s.in);
	CHECK(recorder_finish(&s, &t) == 0);
	tr_tables_free(&t);
}

int main(void)
{
	RUN(test_packets_to_rows);
	RUN(test_late_spans);
	RUN(test_attrs_counters_meta);
	RUN(test_cubins_and_pc_samples);
	RUN(test_library_copies);
	RUN(test_cubin_cut_short);
	RUN(test_cubins_at_once);
	RUN(test_cubins_on_their_way);
	RUN(test_out_of_descriptors);
	return test_summary();
}
