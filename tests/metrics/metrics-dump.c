/* SPDX-License-Identifier: MIT */
/*
 * metrics-dump FILE: the metric series of a recording, as the model loads
 * them, for the tests to check without depending on how a command shows
 * them. One line per series, in the file's order:
 *
 *   NAME gpu=G pid=P unit=U n=N min=A max=B first=F last=L t0=T0 t1=T1
 *
 * G is the GPU's NVML index (-1 for no GPU), U the unit ("-" for a count),
 * N the number of values, A B F L values in the unit (the decimals
 * applied), T0 and T1 the times of the first and last values in ms since
 * the recording's start (all "-" for a series without values).
 * metrics-dump FILE NAME GPU: that series' values, "MS VALUE" a line.
 * Exit status 0, or 1 when the file does not load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static void print_value(uint64_t v, uint32_t decimals)
{
	uint64_t scale = 1;

	for (uint32_t i = 0; i < decimals; i++)
		scale *= 10;
	if (decimals)
		printf("%llu.%0*llu", (unsigned long long)(v / scale), (int)decimals,
		       (unsigned long long)(v % scale));
	else
		printf("%llu", (unsigned long long)v);
}

static double ms(const struct model *m, uint64_t ts)
{
	return ts >= m->start_ts ? (double)(ts - m->start_ts) / 1e6 : -(double)(m->start_ts - ts) / 1e6;
}

static void summary(const struct model *m, uint32_t id)
{
	const struct tr_metric *s = &m->t.metrics.v[id - 1];
	const char *unit = model_str(m, s->unit);
	const struct model_point *p;
	uint64_t min = UINT64_MAX, max = 0;
	size_t n;

	p = model_metric_points(m, id, &n);
	printf("%s gpu=%d pid=%u unit=%s n=%zu", model_str(m, s->name), (int)s->gpu - 1, s->pid,
	       unit && *unit ? unit : "-", n);
	if (!n) {
		printf(" min=- max=- first=- last=- t0=- t1=-\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		min = p[i].value < min ? p[i].value : min;
		max = p[i].value > max ? p[i].value : max;
	}
	printf(" min=");
	print_value(min, s->decimals);
	printf(" max=");
	print_value(max, s->decimals);
	printf(" first=");
	print_value(p[0].value, s->decimals);
	printf(" last=");
	print_value(p[n - 1].value, s->decimals);
	printf(" t0=%.3f t1=%.3f\n", ms(m, p[0].ts), ms(m, p[n - 1].ts));
}

int main(int argc, char **argv)
{
	struct model m;
	int err;

	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: metrics-dump FILE [NAME GPU]\n");
		return 2;
	}
	memset(&m, 0, sizeof(m));
	err = model_load(&m, argv[1]);
	if (err) {
		fprintf(stderr, "metrics-dump: cannot load '%s' (%d)\n", argv[1], err);
		return 1;
	}
	if (argc == 2) {
		for (uint32_t id = 1; id <= m.t.metrics.len; id++)
			summary(&m, id);
	} else {
		uint32_t id = model_metric_find(&m, argv[2], 0, (uint32_t)atoi(argv[3]) + 1);
		const struct model_point *p;
		size_t n;

		if (!id) {
			fprintf(stderr, "metrics-dump: no series '%s' of GPU %s\n", argv[2], argv[3]);
			model_free(&m);
			return 1;
		}
		p = model_metric_points(&m, id, &n);
		for (size_t i = 0; i < n; i++) {
			printf("%.3f ", ms(&m, p[i].ts));
			print_value(p[i].value, m.t.metrics.v[id - 1].decimals);
			putchar('\n');
		}
	}
	model_free(&m);
	return 0;
}
