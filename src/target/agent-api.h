/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TARGET_AGENT_API_H
#define GTRACE_TARGET_AGENT_API_H

/*
 * libgtrace-target's side for an agent linked into the same library
 * (the CUDA agent, src/cuda/), beyond the public API of gtrace/target.h:
 * names interned to the ids the span channel's messages carry, and whole
 * messages of contract/wire.h posted to the recorder. The rest of the
 * library is its own (target/internal.h).
 */

#include <stddef.h>
#include <stdint.h>

#include "contract/wire.h"

/* An interned string: ids are dense from 1 in order of first use. */
struct tgt_string {
	uint32_t id;
	uint32_t len;
	char str[];			/* len bytes and a NUL */
};

/* The interned copy of s, whose id messages name it by; NULL when out of memory. */
const struct tgt_string *tgt_intern(const char *s);

/*
 * The entries a thread's queue holds (GTRACE_TARGET_QUEUE): what a
 * thread may report between two gtrace_flush calls without a drop.
 */
uint32_t tgt_queue_capacity(void);

#define TGT_POST_MAX (128u << 20)	/* bytes posted and not sent yet */

/*
 * Queues a copy of a message of count entries (WIRE_CUBIN, WIRE_PC_SAMPLES)
 * for the io thread, which sends it whole, in posting order, after the
 * definitions of the strings it names. Returns 0; -ENOTCONN when not
 * reporting, -ENOBUFS when TGT_POST_MAX bytes wait already, -ENOMEM.
 */
int tgt_post(uint16_t type, uint32_t count, const void *body, size_t len);

#endif
