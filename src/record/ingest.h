/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_INGEST_H
#define GTRACE_RECORD_INGEST_H

/*
 * The recorder's end of the span channel (src/contract/wire.h): a listening
 * SOCK_SEQPACKET socket the target's processes connect to. A connection is
 * read only once its peer (SO_PEERCRED) is known to be part of the
 * recording; then its strings, lanes and spans become rows through the
 * collector. Spans that cannot be recorded are counted by reason in the
 * collector's target.* counters. A target may be hostile: what it can make
 * the recorder keep is bounded (gtrace-target(3), LIMITS), and what is
 * refused is counted too (target.refused.*).
 *
 * All of it is polled through one descriptor from the recorder's event
 * loop, and nothing here blocks: a slow or dead peer costs nothing.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/collect.h"

struct ingest;

/*
 * Creates the socket: for attach 0, "target.sock" in a new private
 * directory (mode 0700) under $XDG_RUNTIME_DIR or /tmp, for the command's
 * environment; else "<attach>.sock" in the rendezvous directory, which is
 * created if missing. Returns 0 or a negative errno; -EPERM when the
 * rendezvous directory is not ours alone, -EADDRINUSE when another
 * recorder listens for attach already.
 */
int ingest_open(struct ingest **in, pid_t attach);

/* The socket's path, for GTRACE_TARGET_SOCKET. */
const char *ingest_socket_path(const struct ingest *in);

/* Readable when there is something for ingest_poll to do. */
int ingest_fd(const struct ingest *in);

/*
 * From now on rows go to c, and members of the recording are root, its
 * descendants and the processes c has seen.
 */
void ingest_start(struct ingest *in, struct collector *c, uint32_t root);

/*
 * Accepts connections, places their peers and reads what has arrived,
 * never waiting. A peer not yet known to be a member is given a moment for
 * its fork to be collected; with settle set (every event collected) it is
 * placed at once.
 */
void ingest_poll(struct ingest *in, bool settle);

/* No connection is open. */
bool ingest_idle(const struct ingest *in);

/*
 * Counts what is still unread as arriving with no run, closes every
 * connection and removes the socket (and the private directory). in may
 * be NULL.
 */
void ingest_close(struct ingest *in);

#endif
