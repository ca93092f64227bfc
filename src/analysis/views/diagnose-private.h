/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_DIAGNOSE_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_DIAGNOSE_PRIVATE_H

/*
 * Private to the diagnose view (diagnose*.c): the sections that live in
 * their own files and the line helpers they share. Callers use
 * diagnose_print and diagnose_print_json in diagnose.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/views/diagnose.h"
#include "contract/counters.h"
#include "util/json.h"

/* The line helpers every section uses (diagnose.c). */
void diag_field(FILE *out, const char *label);
void diag_value(FILE *out, const char *value);
double diag_percent(uint64_t part, uint64_t all);
bool diag_has_prefix(const char *s, const char *prefix);
double diag_recording_seconds(const struct model *m);
const char *diag_duration(char *buf, size_t size, uint64_t ns);
void diag_meta_line(FILE *out, const char *key, const char *value);
void diag_meta_keys(FILE *out, const struct model *m, const char *prefix, bool others);
const char *diag_count_text(char *buf, size_t size, const struct model *m, const char *name,
			    bool missing_is_zero);
void diag_counts_line(FILE *out, const struct model *m, const char *label,
		      const struct counter_name *const *counters, size_t n,
		      bool missing_is_zero);

/* What target libraries sent, and how span origins linked (diagnose-target.c). */
void diag_target(FILE *out, const struct model *m, const struct origin_links *l);

/* The GPU sections (diagnose-gpu.c). */
bool diag_is_cuda_meta_line(const char *key);
void diag_cuda(FILE *out, const struct model *m);
void diag_pc(FILE *out, const struct model *m);
void diag_kernel_regions(FILE *out, const struct model *m);

/* Python stacks and metrics (diagnose-python-metrics.c). */
void diag_python(FILE *out, const struct model *m);
void diag_metrics(FILE *out, const struct model *m);
void diag_json_metrics(struct json *j, const struct model *m);

#endif
