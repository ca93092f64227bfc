/* SPDX-License-Identifier: MIT */
#include "contract/spans.h"

#include <limits.h>
#include <string.h>

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

const char *cuda_copy_span_kind(const char *span, int *len)
{
	size_t plen = strlen(CUDA_COPY_SPAN_PREFIX), n;

	if (!span)
		span = "";
	n = strlen(span);
	if (!strcmp(span, CUDA_MEMSET_SPAN)) {
		span = "memset";
		n = strlen(span);
	} else if (n > plen && !strncmp(span, CUDA_COPY_SPAN_PREFIX, plen) && span[n - 1] == ']') {
		span += plen;
		n -= plen + 1;
	}
	*len = n < INT_MAX ? (int)n : INT_MAX;
	return span;
}
