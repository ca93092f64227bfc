/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_METRICS_H
#define GTRACE_CONTRACT_METRICS_H

/*
 * The names of the metric series the recorder's metrics thread writes
 * (src/record/metrics.c) and the views read (man/gtrace-format.5,
 * METRICS): "<subject>.<quantity>", of a process, the machine or a GPU.
 */

#define SERIES_PROC_CPU_USER "proc.cpu.user"
#define SERIES_PROC_CPU_SYSTEM "proc.cpu.system"
#define SERIES_PROC_RSS "proc.rss"
#define SERIES_PROC_THREADS "proc.threads"
#define SERIES_PROC_FAULTS_MINOR "proc.faults.minor"
#define SERIES_PROC_FAULTS_MAJOR "proc.faults.major"
#define SERIES_PROC_CTXSW_VOLUNTARY "proc.ctxsw.voluntary"
#define SERIES_PROC_CTXSW_INVOLUNTARY "proc.ctxsw.involuntary"
#define SERIES_PROC_IO_READ "proc.io.read"
#define SERIES_PROC_IO_WRITE "proc.io.write"

#define SERIES_SYS_CPU_USER "sys.cpu.user"
#define SERIES_SYS_CPU_NICE "sys.cpu.nice"
#define SERIES_SYS_CPU_SYSTEM "sys.cpu.system"
#define SERIES_SYS_CPU_IDLE "sys.cpu.idle"
#define SERIES_SYS_CPU_IOWAIT "sys.cpu.iowait"
#define SERIES_SYS_CPU_IRQ "sys.cpu.irq"
#define SERIES_SYS_CPU_SOFTIRQ "sys.cpu.softirq"
#define SERIES_SYS_CPU_STEAL "sys.cpu.steal"
#define SERIES_SYS_MEM_USED "sys.mem.used"
#define SERIES_SYS_MEM_AVAILABLE "sys.mem.available"
#define SERIES_SYS_LOAD1 "sys.load1"

#define SERIES_GPU_SM_UTIL "gpu.sm.util"
#define SERIES_GPU_MEM_UTIL "gpu.mem.util"
#define SERIES_GPU_MEM_USED "gpu.mem.used"
#define SERIES_GPU_MEM_TOTAL "gpu.mem.total"
#define SERIES_GPU_POWER "gpu.power"
#define SERIES_GPU_TEMP "gpu.temp"
#define SERIES_GPU_CLOCK_SM "gpu.clock.sm"
#define SERIES_GPU_CLOCK_MEM "gpu.clock.mem"
#define SERIES_GPU_PCIE_RX "gpu.pcie.rx"
#define SERIES_GPU_PCIE_TX "gpu.pcie.tx"
#define SERIES_GPU_THROTTLE "gpu.throttle"	/* NVML's clock event reasons */

/* The unit of a set of reason bits (gpu.throttle): shown by reason, not by value. */
#define METRIC_UNIT_MASK "mask"

#endif
