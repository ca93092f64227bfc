/* SPDX-License-Identifier: MIT */
#include "contract/pcopts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE_MAX 1000000u

static bool parse_u64(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
	char buf[32], *end;
	unsigned long long v;

	if (!len || len >= sizeof(buf) || *s < '0' || *s > '9')
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* One "key=value" of len bytes. */
static int parse_one(struct pc_opts *o, const char *s, size_t len, char *why, size_t size)
{
	const char *eq = memchr(s, '=', len);
	size_t klen = eq ? (size_t)(eq - s) : len;
	const char *v = eq ? eq + 1 : s + len;
	size_t vlen = (size_t)(s + len - v);
	uint64_t n;

#define KEY(k) (klen == strlen(k) && !memcmp(s, k, klen))
	if (KEY("period")) {
		if (!parse_u64(v, vlen, 5, 31, &n))
			goto bad;
		o->period = (unsigned)n;
	} else if (KEY("rate")) {
		if (!parse_u64(v, vlen, 0, RATE_MAX, &n))
			goto bad;
		o->rate = (unsigned)n;
	} else if (KEY("cubin-max")) {
		if (!parse_u64(v, vlen, 0, UINT64_MAX / 2, &n))
			goto bad;
		o->cubin_max = n;
	} else if (KEY("mode")) {
		if (vlen == strlen("continuous") && !memcmp(v, "continuous", vlen))
			o->continuous = true;
		else if (vlen == strlen("serialized") && !memcmp(v, "serialized", vlen))
			o->continuous = false;
		else
			goto bad;
	} else {
		snprintf(why, size, "unknown key '%.*s': expected period, mode, rate or cubin-max",
			 (int)klen, s);
		return -EINVAL;
	}
#undef KEY
	return 0;
bad:
	snprintf(why, size, "invalid %.*s '%.*s': expected %s", (int)klen, s, (int)vlen, v,
		 s[0] == 'p' ? "5 to 31 (2^N cycles)" :
		 s[0] == 'r' ? "samples a second, 0 for always on" :
		 s[0] == 'c' ? "a number of bytes" : "serialized or continuous");
	return -EINVAL;
}

int pc_opts_parse(struct pc_opts *o, const char *s, char *why, size_t size)
{
	while (*s) {
		size_t len = strcspn(s, ",");
		int err = parse_one(o, s, len, why, size);

		if (err)
			return err;
		s += len + (s[len] == ',');
	}
	return 0;
}

void pc_opts_format(const struct pc_opts *o, char *buf, size_t size)
{
	snprintf(buf, size, "period=%u,mode=%s,rate=%u,cubin-max=%" PRIu64, o->period,
		 o->continuous ? "continuous" : "serialized", o->rate, o->cubin_max);
}
