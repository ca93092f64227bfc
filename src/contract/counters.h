/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_COUNTERS_H
#define GTRACE_CONTRACT_COUNTERS_H

/*
 * The counters gtrace's own producers write and diagnose reads
 * (man/gtrace-format.5, COUNTERS). A group that a producer counts by index
 * is an enum with a table of its names and, where diagnose says what they
 * count in words, those words: the producer names its counters by the
 * table, diagnose loops over it. The tables are in counters.c (the
 * recorder's), cuda-counters.c and kr-counters.c, which the CUDA agent and
 * libgtrace-target build too. An application's gtrace_counter_set names
 * are its own.
 */

struct counter_name {
	const char *name;
	const char *words;	/* diagnose's words for what it counts; NULL: its name */
};

/* The recorder's own (src/record/collect.c). */
#define COUNTER_SAMPLES "samples"
#define COUNTER_LOST "lost"
#define COUNTER_THROTTLED "throttled"
#define COUNTER_THREADS "threads"
#define COUNTER_PROCESSES "processes"
#define COUNTER_CHUNKS "chunks"
#define COUNTER_RECORDS_MALFORMED "records.malformed"
#define COUNTER_PROCESSES_RECOVERED "processes.recovered"
#define COUNTER_PROCESSES_UNRECOVERED "processes.unrecovered"
/* The kernel's frames kept in sampled stacks (kernel time sampled, kernel callchains). */
#define COUNTER_KERNEL_FRAMES "kernel.frames"
/* Context switches out sampled with their stack: where off-CPU intervals start. */
#define COUNTER_SWITCH_STACKS "switch-stacks"
/* UNWIND_COUNTER_PREFIX "<outcome>": samples by how their unwinding ended. */
#define UNWIND_COUNTER_PREFIX "unwind."
#define COUNTER_SYMBOLS_RESOLVED "symbols.resolved"
#define COUNTER_SYMBOLS_UNRESOLVED "symbols.unresolved"
#define COUNTER_SYMBOLS_MISSING_DSO "symbols.missing-dso"
#define COUNTER_SYMBOLS_REFUSED "symbols.refused"
#define COUNTER_SYMBOLS_JIT_MAPS_CUT "symbols.jit-maps-cut"
/* ELF files read for naming: one per build-id, however many paths and processes map it. */
#define COUNTER_SYMBOLS_FILES_READ "symbols.files-read"
/* The code kept of sampled functions (table codes): functions, bytes, and functions cut or left out. */
#define COUNTER_SYMBOLS_CODE_KEPT "symbols.code-kept"
#define COUNTER_SYMBOLS_CODE_BYTES "symbols.code-bytes"
#define COUNTER_SYMBOLS_CODE_CUT "symbols.code-cut"
/* Kernel addresses left unnamed: /proc/kallsyms gave zero addresses (kptr_restrict). */
#define COUNTER_SYMBOLS_KERNEL_HIDDEN "symbols.kernel-hidden"

/* The span channel's, counted by the recorder (src/record/ingest.c, ingest-packets.c). */
#define TARGET_COUNTER_PREFIX "target."
#define TARGET_DROPPED_PREFIX "target.dropped."
enum target_counter {
	TARGET_BATCHES,			/* WIRE_SPANS packets */
	TARGET_SPANS,
	TARGET_SPAN_ATTRS,		/* attribute rows of the spans */
	TARGET_LANES,
	TARGET_PROCESSES,		/* distinct pids that said HELLO */
	TARGET_DROPPED_QUEUE_FULL,	/* by the application's queue */
	TARGET_DROPPED_UNSENT,		/* lost by the application with its connection */
	TARGET_DROPPED_NO_RUN,		/* arrived after the run */
	TARGET_DROPPED_WRONG_PID,	/* from a process not in the recording */
	TARGET_DROPPED_BAD_MESSAGE,	/* malformed, or naming an unknown lane or string */
	TARGET_DROPPED_LIMIT,		/* their lane, names or copy of the library refused */
	/* What the recorder refused past its limits. */
	TARGET_REFUSED_CONNECTIONS,	/* closed at once: too many open */
	TARGET_REFUSED_INSTANCES,	/* HELLOs: too many copies in one process */
	TARGET_REFUSED_STRINGS,		/* string definitions */
	TARGET_REFUSED_LANES,		/* lane definitions, and lanes */
	TARGET_REFUSED_META,		/* meta changes */
	TARGET_COUNTERS
};
extern const struct counter_name target_counters[TARGET_COUNTERS];

/*
 * The Python reader's (src/record/python.c, counted by collect.c), in the
 * order diagnose lists them: the samples of CPython processes by what
 * became of reading their Python stack, then the frames read and the
 * bounds the reader hit.
 */
#define PYTHON_COUNTER_PREFIX "python."
enum python_counter {
	PYTHON_MATCHED,
	PYTHON_MISMATCH,
	PYTHON_NO_THREAD_STATE,
	PYTHON_READ_FAILED,
	PYTHON_EXITED,
	PYTHON_UNSUPPORTED,
	PYTHON_OVER_BUDGET,
	PYTHON_OUTCOMES,		/* the outcomes above */
	PYTHON_FRAMES = PYTHON_OUTCOMES,
	PYTHON_CODES_EVICTED,
	PYTHON_NAMES_CUT,
	PYTHON_LINETABLES_TOO_LONG,
	PYTHON_NAMES_OVER_BUDGET,
	PYTHON_COUNTERS
};
extern const struct counter_name python_counters[PYTHON_COUNTERS];

/* The metrics thread's (src/record/metrics.c). */
enum metrics_counter {
	METRICS_TICKS,
	METRICS_MISSED,
	METRICS_PROCESSES,
	METRICS_READ_FAILED,
	METRICS_CPU_NS,
	METRICS_COUNTERS
};
extern const struct counter_name metrics_counters[METRICS_COUNTERS];

/*
 * The CUDA agent's (src/cuda/), cumulative per process; the recorder
 * counts cubins over its cap too, and alone those cut short.
 */
#define CUDA_COUNTER_PREFIX "cuda."
enum cuda_counter {
	/* CUPTI's records by kind, and what became of them, as diagnose lists them */
	CUDA_CNT_KERNEL,
	CUDA_CNT_MEMCPY,
	CUDA_CNT_MEMSET,
	CUDA_CNT_SYNC,
	CUDA_CNT_OVERHEAD,
	CUDA_CNT_DEVICE,
	CUDA_CNT_CONTEXT,
	CUDA_CNT_OTHER,
	CUDA_CNT_DROPPED,
	CUDA_CNT_NO_TIMESTAMP,
	CUDA_CNT_INCOMPLETE,
	CUDA_CNT_CAUSALITY,
	CUDA_CNT_NO_ORIGIN,
	CUDA_CNT_BUFFERS,
	CUDA_CNT_FLUSHES,
	CUDA_CNT_NULL_BUFFERS,
	/* how late records came */
	CUDA_CNT_DELAY_MAX_US,
	CUDA_CNT_DELAY_SUM_US,
	CUDA_CNT_DELAY_RECORDS,
	/* GPU PC sampling */
	CUDA_CNT_PC_PAIRS,
	CUDA_CNT_PC_SAMPLES,
	CUDA_CNT_PC_DROPPED,
	CUDA_CNT_PC_BUFFER_FULL,
	CUDA_CNT_PC_UNSENT,
	CUDA_CNT_PC_WINDOWS,
	CUDA_CNT_PC_WINDOWS_FAILED,
	CUDA_CNT_PC_GETDATA,
	CUDA_CNT_PC_GETDATA_NS,
	CUDA_CNT_PC_REFUSED,
	CUDA_CNT_PC_CUBINS,
	CUDA_CNT_PC_CUBINS_UNSENT,
	CUDA_CNT_PC_CUBINS_OVER_CAP,
	CUDA_CNT_PC_CUBINS_CUT_SHORT,	/* the recorder's alone */
	CUDA_COUNTERS
};
extern const struct counter_name cuda_counters[CUDA_COUNTERS];

/* Kernel regions' (libgtrace-target's gtrace_kr_submit): sums over the buffers collected. */
#define KR_COUNTER_PREFIX "kr."
enum kr_counter {
	KR_BUFFERS,
	KR_EVENTS,
	KR_OVERFLOWED,
	KR_EVENTS_LOST,
	KR_UNMATCHED,
	KR_COLLISIONS,
	KR_LANES_CAPPED,
	KR_BAD_EVENTS,
	KR_BAD_BUFFERS,
	KR_COUNTERS
};
extern const struct counter_name kr_counters[KR_COUNTERS];

#endif
