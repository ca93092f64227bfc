/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_SPANS_H
#define GTRACE_CONTRACT_SPANS_H

/*
 * The span names gtrace's own producers make and the views read, and the
 * kinds of GPU copies they name. Kernels are named by their (mangled)
 * names, an application's spans by what it says.
 */

/* GPU work on a CUDA stream lane besides kernels (src/cuda/activity.c). */
#define CUDA_COPY_SPAN_PREFIX "[CUDA memcpy "	/* then the kind's name or number, and "]" */
#define CUDA_MEMSET_SPAN "[CUDA memset]"

/* Values of the copy.kind attribute: CUPTI's CUpti_ActivityMemcpyKind. */
enum cuda_copy_kind {
	CUDA_COPY_UNKNOWN,
	CUDA_COPY_HTOD,
	CUDA_COPY_DTOH,
	CUDA_COPY_HTOA,
	CUDA_COPY_ATOH,
	CUDA_COPY_ATOA,
	CUDA_COPY_ATOD,
	CUDA_COPY_DTOA,
	CUDA_COPY_DTOD,
	CUDA_COPY_HTOH,
	CUDA_COPY_PTOP,
	CUDA_COPY_KINDS
};

/* The span name of a copy of each kind: "[CUDA memcpy HtoD]". */
extern const char *const cuda_copy_spans[CUDA_COPY_KINDS];

/* The name of each kind in those ("HtoD"); NULL for those that go by number. */
extern const char *const cuda_copy_kind_names[CUDA_COPY_KINDS];

/*
 * The kind a copy's or memset's span name says, *len bytes: "HtoD" of
 * "[CUDA memcpy HtoD]", "memset" of CUDA_MEMSET_SPAN; another name whole.
 */
const char *cuda_copy_span_kind(const char *span, int *len);

#endif
