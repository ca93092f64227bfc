/* SPDX-License-Identifier: MIT */
/*
 * A hostile span-channel client: speaks the wire protocol of
 * src/contract/wire.h directly to the recorder in $GTRACE_TARGET_SOCKET, the
 * way no copy of libgtrace-target would, to make it keep, spin or crash.
 *
 *   span-client instances N ID  N copies of the library in this process,
 *                               each defining string and lane ID with a
 *                               span on it
 *   span-client lanes N         N lanes, a span on each
 *   span-client strings N LEN   N strings of LEN bytes
 *   span-client meta N          N changes of a meta value of 1024 bytes
 *   span-client cubins N SIZE   N copies each sending a GPU code image of
 *                               SIZE bytes but its last part
 *   span-client conns N SECONDS N connections held for SECONDS
 *   span-client invalid         packets of nothing but invalid spans
 *
 * Prints what it sent ("span-client: ..."); exits 1 when it cannot.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "contract/wire.h"

static void die(const char *what)
{
	fprintf(stderr, "span-client: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A connection to the recorder, or -1. */
static int try_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv(WIRE_SOCKET_ENV);
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENOENT;
		die("no recorder in $" WIRE_SOCKET_ENV);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int connect_recorder(void)
{
	int fd = try_connect();

	if (fd < 0)
		die("cannot connect");
	return fd;
}

/* Sends a header and len bytes of body; false when the recorder closed the connection. */
static bool send_packet(int fd, uint16_t type, uint32_t count, const void *body, size_t len)
{
	static uint64_t buf[WIRE_MAX_PACKET / 8];
	struct wire_header h = { .type = type, .version = WIRE_VERSION, .count = count };

	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy((char *)buf + sizeof(h), body, len);
	return send(fd, buf, sizeof(h) + len, MSG_NOSIGNAL) == (ssize_t)(sizeof(h) + len);
}

static void must_send(int fd, uint16_t type, uint32_t count, const void *body, size_t len)
{
	if (!send_packet(fd, type, count, body, len))
		die("cannot send");
}

static void hello(int fd, uint32_t instance)
{
	struct wire_hello m = { .pid = (uint32_t)getpid(), .instance = instance };

	must_send(fd, WIRE_HELLO, 1, &m, sizeof(m));
}

static void string(int fd, uint32_t id, const char *text, size_t len)
{
	char buf[sizeof(struct wire_string) + WIRE_MAX_STRING];
	struct wire_string m = { .id = id, .len = (uint32_t)len };

	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), text, len);
	must_send(fd, WIRE_STRING, 1, buf, sizeof(m) + len);
}

static void lane(int fd, uint32_t id, uint32_t kind, uint32_t name)
{
	struct wire_lane m = { .id = id, .kind = kind, .name = name };

	must_send(fd, WIRE_LANE, 1, &m, sizeof(m));
}

static struct wire_span span(uint32_t lane_id, uint32_t name)
{
	return (struct wire_span){ .lane = lane_id, .name = name, .start_ns = 1000,
				   .end_ns = 2000 };
}

static void instances(uint32_t n, uint32_t id)
{
	int *fds = calloc(n, sizeof(*fds));
	struct wire_span sp = span(id, id);

	for (uint32_t i = 0; i < n; i++) {
		fds[i] = connect_recorder();
		hello(fds[i], i + 1);
		string(fds[i], id, "hostile", 7);
		lane(fds[i], id, id, id);
		must_send(fds[i], WIRE_SPANS, 1, &sp, sizeof(sp));
	}
	for (uint32_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	printf("span-client: %u copies defined id %u, a span each\n", n, id);
}

static void lanes(uint32_t n)
{
	static struct wire_span spans[WIRE_SPANS_PER_PACKET];
	int fd = connect_recorder();
	uint32_t k = 0;

	hello(fd, 0);
	string(fd, 1, "hostile", 7);
	for (uint32_t id = 1; id <= n; id++)
		lane(fd, id, 1, 1);
	for (uint32_t id = 1; id <= n; id++) {
		spans[k++] = span(id, 1);
		if (k == WIRE_SPANS_PER_PACKET || id == n) {
			must_send(fd, WIRE_SPANS, k, spans, k * sizeof(*spans));
			k = 0;
		}
	}
	close(fd);
	printf("span-client: %u lanes, a span each\n", n);
}

static void strings(uint32_t n, size_t len)
{
	char text[WIRE_MAX_STRING + 1];
	int fd = connect_recorder();

	if (len < 12 || len > WIRE_MAX_STRING) {
		fprintf(stderr, "span-client: strings of 12 to %d bytes\n", WIRE_MAX_STRING);
		exit(1);
	}
	hello(fd, 0);
	memset(text, 'x', len);
	for (uint32_t id = 1; id <= n; id++) {
		snprintf(text, sizeof(text), "%11u", id);	/* each one different */
		text[11] = 'x';
		string(fd, id, text, len);
	}
	close(fd);
	printf("span-client: %u strings of %zu bytes\n", n, len);
}

static void meta(uint32_t n)
{
	static const char key[] = "hostile.meta";
	char buf[sizeof(struct wire_meta) + sizeof(key) + WIRE_MAX_STRING];
	struct wire_meta m = { .key_len = sizeof(key) - 1, .value_len = WIRE_MAX_STRING };
	char *value = buf + sizeof(m) + m.key_len;
	int fd = connect_recorder();

	hello(fd, 0);
	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), key, m.key_len);
	memset(value, 'v', m.value_len);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(value, 12, "%11u", i);	/* each one a change */
		value[11] = 'v';
		must_send(fd, WIRE_META, 1, buf, sizeof(m) + m.key_len + m.value_len);
	}
	close(fd);
	printf("span-client: %u meta changes\n", n);
}

static void cubins(uint32_t n, uint64_t size)
{
	static uint8_t buf[sizeof(struct wire_cubin) + WIRE_CUBIN_PART];
	int *fds = calloc(n, sizeof(*fds));

	memset(buf, 0xab, sizeof(buf));
	for (uint32_t i = 0; i < n; i++) {
		fds[i] = connect_recorder();
		hello(fds[i], i + 1);
		for (uint64_t offset = 0; offset + WIRE_CUBIN_PART < size; offset += WIRE_CUBIN_PART) {
			struct wire_cubin m = { .crc = 0xc0b1 + i, .size = size, .offset = offset };

			memcpy(buf, &m, sizeof(m));
			must_send(fds[i], WIRE_CUBIN, 1, buf, sizeof(buf));
		}
	}
	for (uint32_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	printf("span-client: %u images of %llu bytes, each but its last part\n", n,
	       (unsigned long long)size);
}

static void conns(uint32_t n, unsigned seconds)
{
	struct timespec hold = { .tv_sec = seconds };
	int *fds = calloc(n, sizeof(*fds));
	uint32_t open = 0;

	while (open < n && (fds[open] = try_connect()) >= 0)
		open++;
	/* The attack is the duration: the recorder must wait, not spin, meanwhile. */
	nanosleep(&hold, NULL);
	/* Descriptors back for the exit (the sanitizers' leak check opens files). */
	for (uint32_t i = 0; i < open; i++)
		close(fds[i]);
	free(fds);
	printf("span-client: %u connections held %u s\n", open, seconds);
}

static void invalid(void)
{
	struct wire_span spans[8];
	int fd = connect_recorder();

	hello(fd, 0);
	string(fd, 1, "hostile", 7);
	for (int i = 0; i < 8; i++)
		spans[i] = span(99, 1);	/* a lane never defined */
	must_send(fd, WIRE_SPANS, 8, spans, sizeof(spans));
	must_send(fd, WIRE_SPANS, 0, NULL, 0);
	must_send(fd, WIRE_PC_SAMPLES, 0, NULL, 0);
	close(fd);
	printf("span-client: 8 invalid spans, 2 empty packets\n");
}

static uint32_t number(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*end || v > UINT32_MAX) {
		fprintf(stderr, "span-client: '%s' is not a number\n", s);
		exit(2);
	}
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	const char *attack = argc > 1 ? argv[1] : "";

	if (!strcmp(attack, "instances") && argc == 4)
		instances(number(argv[2]), number(argv[3]));
	else if (!strcmp(attack, "lanes") && argc == 3)
		lanes(number(argv[2]));
	else if (!strcmp(attack, "strings") && argc == 4)
		strings(number(argv[2]), number(argv[3]));
	else if (!strcmp(attack, "meta") && argc == 3)
		meta(number(argv[2]));
	else if (!strcmp(attack, "cubins") && argc == 4)
		cubins(number(argv[2]), number(argv[3]));
	else if (!strcmp(attack, "conns") && argc == 4)
		conns(number(argv[2]), number(argv[3]));
	else if (!strcmp(attack, "invalid") && argc == 2)
		invalid();
	else {
		fprintf(stderr, "usage: span-client instances N ID | lanes N | strings N LEN | "
				"meta N | cubins N SIZE | conns N SECONDS | invalid\n");
		return 2;
	}
	return 0;
}
