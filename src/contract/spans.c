/* SPDX-License-Identifier: MIT */
#include "contract/spans.h"

#include <limits.h>
#include <string.h>

#define COPY_SPAN(kind) CUDA_COPY_SPAN_PREFIX kind "]"

/* The kinds with a name, each spelled once for both tables. */
#define NAMED_COPY_KINDS(X) \
	X(CUDA_COPY_HTOD, "HtoD") \
	X(CUDA_COPY_DTOH, "DtoH") \
	X(CUDA_COPY_DTOD, "DtoD") \
	X(CUDA_COPY_HTOH, "HtoH") \
	X(CUDA_COPY_PTOP, "PtoP")
#define KIND_NAME(kind, name) [kind] = name,
#define KIND_SPAN(kind, name) [kind] = COPY_SPAN(name),

const char *const cuda_copy_kind_names[CUDA_COPY_KINDS] = { NAMED_COPY_KINDS(KIND_NAME) };

/* The kinds of CUDA arrays go by number, as CUPTI's other unnamed ones would. */
const char *const cuda_copy_spans[CUDA_COPY_KINDS] = {
	[CUDA_COPY_UNKNOWN] = COPY_SPAN("0"),
	[CUDA_COPY_HTOA] = COPY_SPAN("3"),
	[CUDA_COPY_ATOH] = COPY_SPAN("4"),
	[CUDA_COPY_ATOA] = COPY_SPAN("5"),
	[CUDA_COPY_ATOD] = COPY_SPAN("6"),
	[CUDA_COPY_DTOA] = COPY_SPAN("7"),
	NAMED_COPY_KINDS(KIND_SPAN)
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
