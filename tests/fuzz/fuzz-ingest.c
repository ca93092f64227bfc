/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary packets to the recorder's end of the span channel, over
 * its socket, from a process of the recording, as a hostile target would.
 * The input is a sequence of packets, each a 16-bit length (host order)
 * and that many bytes; a length of 0 closes the connection and opens
 * another. A HELLO with pid 0 is sent with this process's pid, so that
 * inputs hold across runs. Whatever arrives, the recorder must not crash,
 * and the recording it writes must read back whole, its spans on its lanes.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "contract/wire.h"
#include "tests/unit/recorder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int connect_to(const struct recorder *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	strcpy(sa.sun_path, ingest_socket_path(r->in));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	return fd;
}

/* Sends one packet, the recorder reading meanwhile when the socket is full. */
static void send_packet(struct recorder *r, int fd, uint8_t *packet, size_t len)
{
	struct wire_header h;
	struct wire_hello hello;
	uint32_t pid = (uint32_t)getpid();

	if (len == sizeof(h) + sizeof(hello)) {
		memcpy(&h, packet, sizeof(h));
		memcpy(&hello, packet + sizeof(h), sizeof(hello));
		if (h.type == WIRE_HELLO && !hello.pid)
			memcpy(packet + sizeof(h) + offsetof(struct wire_hello, pid), &pid, sizeof(pid));
	}
	while (send(fd, packet, len, MSG_NOSIGNAL) < 0) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		/* A refused connection stays refused: what is left goes nowhere. */
		if (errno != EAGAIN)
			return;
		ingest_poll(r->in, true);
		poll(&p, 1, 1);
	}
}

/* Ends the recording and reads it back: it must be whole and consistent. */
static void finish(struct recorder *r)
{
	struct tr_tables t = {0};

	recorder_drain(r->in);
	ingest_close(r->in);
	if (recorder_finish(r, &t))
		abort();
	for (size_t i = 0; i < t.spans.len; i++)
		if (!t.spans.v[i].lane || t.spans.v[i].lane > t.lanes.len)
			abort();
	tr_tables_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t packet[UINT16_MAX];
	struct recorder r;
	int fd;

	if (recorder_start(&r))
		abort();
	collector_set_cubin_max(r.c, 1 << 20);
	fd = connect_to(&r);
	while (size >= 2) {
		uint16_t len;

		memcpy(&len, data, sizeof(len));
		data += 2;
		size -= 2;
		if (len > size)
			len = (uint16_t)size;
		if (!len) {
			close(fd);
			fd = connect_to(&r);
			continue;
		}
		memcpy(packet, data, len);
		send_packet(&r, fd, packet, len);
		data += len;
		size -= len;
	}
	close(fd);
	finish(&r);
	return 0;
}
