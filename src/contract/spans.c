/* SPDX-License-Identifier: MIT */
#include "contract/spans.h"

#define COPY_SPAN(kind) CUDA_COPY_SPAN_PREFIX kind "]"

/* The kinds of CUDA arrays go by number, as CUPTI's other unnamed ones would. */
const char *const cuda_copy_spans[CUDA_COPY_KINDS] = {
	[CUDA_COPY_UNKNOWN] = COPY_SPAN("0"),
	[CUDA_COPY_HTOD] = COPY_SPAN("HtoD"),
	[CUDA_COPY_DTOH] = COPY_SPAN("DtoH"),
	[CUDA_COPY_HTOA] = COPY_SPAN("3"),
	[CUDA_COPY_ATOH] = COPY_SPAN("4"),
	[CUDA_COPY_ATOA] = COPY_SPAN("5"),
	[CUDA_COPY_ATOD] = COPY_SPAN("6"),
	[CUDA_COPY_DTOA] = COPY_SPAN("7"),
	[CUDA_COPY_DTOD] = COPY_SPAN("DtoD"),
	[CUDA_COPY_HTOH] = COPY_SPAN("HtoH"),
	[CUDA_COPY_PTOP] = COPY_SPAN("PtoP"),
};
