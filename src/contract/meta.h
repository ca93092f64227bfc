/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_META_H
#define GTRACE_CONTRACT_META_H

/*
 * The keys of the meta pairs gtrace's own producers write and the views
 * read (man/gtrace-format.5, table meta). A key written several times
 * counts with its last value. An application's gtrace_meta_set keys are
 * its own.
 */

/* The recorder's, about the run (src/record/session-meta.c). */
#define META_COMMAND "command"
#define META_EVENT "event"
/* META_EVENT's values whose period is time, not a count of cycles. */
#define META_EVENT_CPU_CLOCK "cpu-clock"
#define META_EVENT_TASK_CLOCK "task-clock"
#define META_KERNEL_TIME "kernel-time"
/* Whether the kernel frames kept were named (written at the end, when there were some). */
#define META_KERNEL_FRAMES "kernel-frames"
#define META_FREQUENCY "frequency"
#define META_CALL_GRAPH "call-graph"
#define META_STACK_SIZE "stack-size"
#define META_RING_SIZE "ring-size"
/* When the rings wake the recorder: "each sample", "every N samples" or "every N bytes". */
#define META_WAKEUPS "wakeups"
#define META_UNWIND_THREADS "unwind-threads"
#define META_KERNEL "kernel"
#define META_HOSTNAME "hostname"
#define META_PARANOID "paranoid"
#define META_SAMPLING_STOPPED "sampling-stopped"
#define META_START_TIME "start-time"
#define META_START_NS "start-ns"
#define META_PID "pid"
#define META_GTRACE_VERSION "gtrace-version"
#define META_RECORDER_CPU_NS "recorder-cpu-ns"
#define META_RECORDER_NAMING_NS "recorder-naming-ns"
#define META_END_TIME "end-time"
#define META_END_NS "end-ns"
#define META_DURATION "duration"
#define META_EXIT_STATUS "exit-status"

/* Where the recording stands in a job, and its clock against the others'. */
#define META_RANK "rank"
#define META_LOCAL_RANK "local-rank"
#define META_WORLD_SIZE "world-size"
#define META_RANK_FROM "rank-from"
#define META_CLOCK_START "clock-start"
#define META_CLOCK_END "clock-end"

/* The metrics thread's (src/record/metrics.c). */
#define META_METRICS_INTERVAL "metrics-interval"
#define META_METRICS_NVML "metrics-nvml"

/* The Python reader's: META_PYTHON_PROCESS_PREFIX "<pid>" for each CPython process. */
#define META_PYTHON_PREFIX "python."
#define META_PYTHON_PROCESS_PREFIX "python.process."

/* CUDA: the recorder's injection of the agent (src/record/cuda-inject.c). */
#define META_CUDA_PREFIX "cuda."
#define META_CUDA_INJECTION "cuda.injection"
#define META_CUDA_DRIVER "cuda.driver"
#define META_CUDA_LIBCUDA "cuda.libcuda"

/* The CUDA agent's (src/cuda/). */
#define META_CUDA_STATUS "cuda.status"
#define META_CUDA_WARNINGS "cuda.warnings"
#define META_CUDA_CLOCK "cuda.clock"
#define META_CUDA_FLUSH "cuda.flush"
#define META_CUDA_CUPTI_VERSION "cuda.cupti-version"
#define META_CUDA_DRIVER_VERSION "cuda.driver-version"
/* META_CUDA_DEVICE_PREFIX "<id>", and that with META_CUDA_DEVICE_CLOCK_SUFFIX. */
#define META_CUDA_DEVICE_PREFIX "cuda.device."
#define META_CUDA_DEVICE_CLOCK_SUFFIX ".clock-khz"

/* The CUDA agent's GPU PC sampling (src/cuda/pcsampling.c). */
#define META_CUDA_PC_STATUS "cuda.pc.status"
#define META_CUDA_PC_MODE "cuda.pc.mode"
#define META_CUDA_PC_PERIOD "cuda.pc.period"
#define META_CUDA_PC_RATE "cuda.pc.rate"

/*
 * How the values of the status keys begin: an outcome, then ": " and the
 * details, which the views show after their own words for the outcome.
 */
/* cuda.status, the agent's */
#define CUDA_STATUS_ACTIVE "active"
#define CUDA_STATUS_TAKEN_OVER "taken-over"
#define CUDA_STATUS_SUBSCRIBER_CONFLICT "subscriber-conflict"
#define CUDA_STATUS_CUPTI_TOO_OLD "cupti-too-old"
#define CUDA_STATUS_CUPTI_UNAVAILABLE "cupti-unavailable"
#define CUDA_STATUS_CUPTI_ERROR "cupti-error"
/* cuda.pc.status; cuda.injection and metrics-nvml take STATUS_ON and STATUS_OFF */
#define STATUS_ON "on"
#define STATUS_OFF "off"
#define STATUS_REFUSED "refused"
/* cuda.driver with no NVIDIA driver loaded, cuda.libcuda with no libcuda.so.1 */
#define CUDA_DRIVER_NONE "none"
#define CUDA_LIBCUDA_MISSING "missing"

#endif
