/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_INGEST_INTERNAL_H
#define GTRACE_RECORD_INGEST_INTERNAL_H

/*
 * Shared by the two halves of the span channel's end: ingest.c (the
 * socket, its connections and their peers) and ingest-packets.c (what a
 * connection's packets say, made rows). Not for the rest of the recorder.
 */

#include <stdbool.h>
#include <stdint.h>

#include "contract/wire.h"
#include "format/tables.h"
#include "record/ingest.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* What one copy of the library in a process defined: ingest-packets.c's. */
struct target_proc;

enum conn_state {
	CONN_CHECKING,	/* peer not placed yet: not read */
	CONN_OPEN,	/* a process of the recording */
	CONN_REJECTED,	/* read only to count its spans as dropped_as */
};

struct conn {
	int fd;
	uint32_t pid;			/* SO_PEERCRED */
	enum conn_state state;
	enum target_counter dropped_as;	/* when rejected: wrong-pid, or limit */
	uint64_t accepted_ns;
	struct target_proc *proc;	/* once HELLO came */
};

struct ingest {
	int listen_fd;
	int epoll_fd;
	char *path;		/* the socket */
	char *dir;		/* the private directory, NULL for attach */
	bool bound;		/* the socket file is ours to remove */
	struct collector *c;
	uint32_t root;

	VEC(struct conn *) conns;
	size_t max_conns;
	bool accepting;		/* the listening socket is in the epoll set */
	uint64_t accept_again_ns;	/* when not: when it goes back */
	VEC(struct target_proc *) procs;
	struct u64map proc_index;	/* pid << 32 | instance -> index in procs */
	struct u64map pids;		/* the pids of procs -> their copies */
	/* What the limits bound, so far. */
	uint32_t definitions, string_bytes, lanes, meta;

	/* One packet, 8-byte aligned, with room for a string's NUL. */
	uint64_t packet[WIRE_MAX_PACKET / 8 + 1];
	struct tr_span rows[WIRE_SPANS_PER_PACKET];
	struct tr_pc_sample pc_rows[WIRE_PC_SAMPLES_PER_PACKET];
	struct tr_span_attr attrs[WIRE_SPANS_PER_PACKET * WIRE_ATTRS_PER_ENTRY];
};

/*
 * Handles the packet of len bytes in in->packet, read from k: made rows
 * when k is open, else (rejected, malformed, or no_run: after the run)
 * only its spans counted as dropped.
 */
void ingest_take_packet(struct ingest *in, struct conn *k, size_t len, bool no_run);

/* The GPU code image p was receiving, if any, stopped coming: its parts go. */
void ingest_cut_cubin_short(struct ingest *in, struct target_proc *p);

/* Frees what every process defined, and their index. */
void ingest_free_procs(struct ingest *in);

#endif
