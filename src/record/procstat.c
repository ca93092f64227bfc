/* SPDX-License-Identifier: MIT */
#include "record/procstat.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Reads a decimal at *p (spaces before it skipped), moving *p past it. */
static bool read_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		x = x * 10 + (uint64_t)(*s - '0');
	*p = s;
	*v = x;
	return true;
}

/* Skips one space-separated word. */
static bool skip_word(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return false;
	while (s < end && *s != ' ' && *s != '\n')
		s++;
	*p = s;
	return true;
}

/* The number after "key" at the start of a line, such as "MemTotal:". */
static bool line_value(const char *buf, size_t len, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *end = buf + len;

	for (const char *line = buf; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *next = nl ? nl + 1 : end;

		if ((size_t)(next - line) > klen && !memcmp(line, key, klen)) {
			const char *p = line + klen;

			return read_u64(&p, next, v);
		}
		line = next;
	}
	return false;
}

int procstat_parse_stat(const char *buf, size_t len, struct proc_stat *st)
{
	/* The command name may hold spaces and parentheses: fields follow the last ')'. */
	const char *end = buf + len, *p = memrchr(buf, ')', len);
	uint64_t field[25] = {0};

	if (!p)
		return -EINVAL;
	p++;
	/* Field 3 (state) is a letter; 4 .. 24 are numbers, none of those used negative. */
	while (p < end && *p == ' ')
		p++;
	st->state = p < end ? *p : 0;
	if (!skip_word(&p, end))
		return -EINVAL;
	for (int i = 4; i <= 24; i++) {
		while (p < end && *p == ' ')
			p++;
		if (p < end && *p == '-')
			p++;
		if (!read_u64(&p, end, &field[i]))
			return -EINVAL;
	}
	st->minflt = field[10];
	st->majflt = field[12];
	st->utime = field[14];
	st->stime = field[15];
	st->threads = field[20];
	st->start_ticks = field[22];
	st->rss_pages = field[24];
	return 0;
}

int procstat_parse_ctxsw(const char *buf, size_t len, uint64_t *voluntary,
			 uint64_t *involuntary)
{
	if (!line_value(buf, len, "voluntary_ctxt_switches:", voluntary) ||
	    !line_value(buf, len, "nonvoluntary_ctxt_switches:", involuntary))
		return -EINVAL;
	return 0;
}

int procstat_parse_io(const char *buf, size_t len, uint64_t *read_bytes,
		      uint64_t *write_bytes)
{
	if (!line_value(buf, len, "read_bytes:", read_bytes) ||
	    !line_value(buf, len, "write_bytes:", write_bytes))
		return -EINVAL;
	return 0;
}

int procstat_parse_cpu(const char *buf, size_t len, uint64_t ticks[SYS_CPU_MODES])
{
	const char *end = buf + len, *p = buf + 3;

	if (len < 4 || memcmp(buf, "cpu ", 4))
		return -EINVAL;
	for (int i = 0; i < SYS_CPU_MODES; i++)
		if (!read_u64(&p, end, &ticks[i]))
			return -EINVAL;
	return 0;
}

int procstat_parse_meminfo(const char *buf, size_t len, uint64_t *total_kib,
			   uint64_t *available_kib)
{
	if (!line_value(buf, len, "MemTotal:", total_kib) ||
	    !line_value(buf, len, "MemAvailable:", available_kib))
		return -EINVAL;
	return 0;
}

int procstat_parse_loadavg(const char *buf, size_t len, uint64_t *load1_centi)
{
	const char *end = buf + len, *p = buf;
	uint64_t whole, frac;

	if (!read_u64(&p, end, &whole) || p + 3 > end || *p != '.' ||
	    p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9')
		return -EINVAL;
	frac = (uint64_t)(p[1] - '0') * 10 + (uint64_t)(p[2] - '0');
	*load1_centi = whole * 100 + frac;
	return 0;
}
