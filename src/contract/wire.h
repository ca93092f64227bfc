/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_WIRE_H
#define GTRACE_CONTRACT_WIRE_H

/*
 * The private protocol between libgtrace-target (inside the application)
 * and gtrace record. Both ends run on one machine and are built from one
 * tree, so messages are host-endian packed structures over a SOCK_SEQPACKET
 * Unix socket: one message per packet, never split or merged.
 *
 * A connection starts with HELLO. Strings and lanes are defined before the
 * first span that names them; their ids are per process and dense from 1.
 * The recorder checks the sender's pid with SO_PEERCRED, and bounds what
 * the senders of one recording make it keep (src/record/ingest.c and
 * ingest-packets.c, the LIMITS of gtrace-target(3)): past a limit it
 * refuses and counts.
 *
 * Where the socket is:
 *  - gtrace record -- cmd: the path in $GTRACE_TARGET_SOCKET, inherited by
 *    every process of the command;
 *  - gtrace record -p PID: <rendezvous dir>/<PID>.sock, where the
 *    rendezvous dir is $XDG_RUNTIME_DIR/gtrace if XDG_RUNTIME_DIR is set,
 *    else /tmp/gtrace-<uid>; it must be owned by the user and mode 0700.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WIRE_VERSION 1
#define WIRE_SOCKET_ENV "GTRACE_TARGET_SOCKET"
#define WIRE_MAX_PACKET (64 * 1024)
/* Bytes of a string, a meta key or a meta value: the library cuts longer names. */
#define WIRE_MAX_STRING 1024

enum wire_type {
	WIRE_HELLO = 1,		/* struct wire_hello */
	WIRE_STRING = 2,	/* struct wire_string, then len bytes (no NUL) */
	WIRE_LANE = 3,		/* struct wire_lane */
	WIRE_SPANS = 4,		/* count struct wire_span */
	WIRE_DROPS = 5,		/* struct wire_drops */
	WIRE_SPANS_ATTRS = 6,	/* count entries: spans, each followed by
				 * wire_attr_entries(nattrs) struct wire_attrs */
	WIRE_COUNTERS = 7,	/* count struct wire_counter */
	WIRE_META = 8,		/* struct wire_meta, then the key's and the value's bytes */
	WIRE_CUBIN = 9,		/* struct wire_cubin, then a part of the image */
	WIRE_PC_SAMPLES = 10,	/* count struct wire_pc_sample */
};

struct wire_header {
	uint16_t type;		/* enum wire_type */
	uint16_t version;	/* WIRE_VERSION */
	uint32_t count;		/* entries that follow (WIRE_SPANS, WIRE_SPANS_ATTRS,
				 * WIRE_COUNTERS), else 1 */
};

/*
 * instance tells apart the copies of the library in one process (a program
 * linked with it, and the CUDA agent with its own): each has its own ids.
 */
struct wire_hello {
	uint32_t pid;
	uint32_t instance;	/* 0 from libraries before it */
};

struct wire_string {
	uint32_t id;
	uint32_t len;
};

struct wire_lane {
	uint32_t id;
	uint32_t kind;		/* string id */
	uint32_t name;		/* string id */
	uint32_t reserved;
};

struct wire_span {
	uint32_t lane;		/* lane id */
	uint32_t name;		/* string id */
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint32_t origin_tid;	/* see origin_ns */
	uint32_t nattrs;	/* WIRE_SPANS_ATTRS: attributes that follow; else 0 */
	uint64_t origin_ns;	/* with origin_tid 0: nonzero for an origin
				 * given with tid 0 (a bad tid), 0 for none */
};

/*
 * The attributes of the span before, three to an entry of a span's size so
 * that spans and attributes share one queue. Keys are string ids; the keys
 * past the span's nattrs in its last entry are 0.
 */
#define WIRE_ATTRS_PER_ENTRY 3
#define WIRE_MAX_ATTRS 24	/* GTRACE_MAX_ATTRS */

struct wire_attrs {
	uint32_t key[WIRE_ATTRS_PER_ENTRY];
	uint32_t reserved;
	uint64_t value[WIRE_ATTRS_PER_ENTRY];
};

_Static_assert(sizeof(struct wire_attrs) == sizeof(struct wire_span),
	       "attribute entries take a span's place in queues and packets");

/* The entries after a span that hold its nattrs attributes. */
static inline uint32_t wire_attr_entries(uint32_t nattrs)
{
	return (nattrs + WIRE_ATTRS_PER_ENTRY - 1) / WIRE_ATTRS_PER_ENTRY;
}

/* A cumulative count of the process, by name (a string id). */
struct wire_counter {
	uint32_t name;
	uint32_t reserved;
	uint64_t value;
};

/* A fact about the process: key_len bytes of key, then value_len of value. */
struct wire_meta {
	uint32_t key_len;
	uint32_t value_len;
};

/* Cumulative counts of spans the application side dropped, by reason. */
struct wire_drops {
	uint64_t queue_full;	/* drop-newest in the bounded queue */
	uint64_t unsent;	/* queued, then lost with a broken connection */
};

/*
 * A part of a GPU code image (the CUDA agent's): the parts of one image
 * come in order, one after the other, offset 0 first.
 */
struct wire_cubin {
	uint64_t crc;		/* CUPTI's CRC of the whole image */
	uint64_t size;		/* of the whole image */
	uint64_t offset;	/* of this part */
};

#define WIRE_CUBIN_PART (WIRE_MAX_PACKET - sizeof(struct wire_header) - sizeof(struct wire_cubin))

/* A bucket of GPU PC samples (struct tr_pc_sample, with wire string ids). */
struct wire_pc_sample {
	uint64_t cubin_crc;
	uint64_t pc;
	uint32_t correlation;
	uint32_t function;	/* string id */
	uint32_t stall;		/* string id */
	uint32_t count;
};

#define WIRE_PC_SAMPLES_PER_PACKET \
	((WIRE_MAX_PACKET - sizeof(struct wire_header)) / sizeof(struct wire_pc_sample))

/*
 * The rendezvous directory's path, for both ends (neither makes nor checks
 * it here). A relative $XDG_RUNTIME_DIR is ignored, as the XDG rules say.
 */
/* $XDG_RUNTIME_DIR when it is usable (absolute), else NULL. */
static inline const char *wire_runtime_dir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	return xdg && *xdg == '/' ? xdg : NULL;
}

static inline int wire_rendezvous_dir(char *buf, size_t size)
{
	const char *xdg = wire_runtime_dir();
	int n = xdg ? snprintf(buf, size, "%s/gtrace", xdg)
		    : snprintf(buf, size, "/tmp/gtrace-%u", (unsigned)geteuid());

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

#define WIRE_SPANS_PER_PACKET \
	((WIRE_MAX_PACKET - sizeof(struct wire_header)) / sizeof(struct wire_span))

#endif
