/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_GPU_EXPLAIN_H
#define GTRACE_ANALYSIS_VIEWS_GPU_EXPLAIN_H

/*
 * What became of GPU collection and GPU PC sampling, in words, for
 * diagnose and the commands that find no GPU work.
 */

#include <stddef.h>

#include "model/model.h"

/*
 * One line on what became of GPU collection, from the meta the recorder
 * and the CUDA agent wrote (cuda.status, cuda.injection, cuda.driver), in
 * buf; NULL when the recording has none of them.
 */
const char *cuda_explain(const struct model *m, char *buf, size_t size);

/*
 * One line on why a recording has no GPU PC samples, from cuda.pc.status:
 * not requested, refused (with what to change), off, or on but empty.
 */
const char *pc_explain(const struct model *m, char *buf, size_t size);

#endif
