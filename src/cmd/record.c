/* SPDX-License-Identifier: MIT */
/*
 * gtrace record: run a command, or attach to a running process, and sample
 * it into a trace file. This file parses the options and words the
 * messages; src/record/ does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "format/file.h"
#include "record/jobrank.h"
#include "record/metrics.h"
#include "record/session.h"
#include "util/duration.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/outfile.h"

#define DEFAULT_OUTPUT "gtrace.data"
#define DEFAULT_FREQ 999
#define DEFAULT_STACK_SIZE 16384
#define MAX_STACK_SIZE 65528	/* a sample record's size is 16 bits */
/* More stacks than this cut at the copy's end, and the summary says so. */
#define CUT_STACKS_PERCENT 10
#define DEFAULT_METRICS_INTERVAL_NS 100000000ull

/* What the shell answers for a command it cannot find or run. */
#define EXIT_NOT_FOUND 127
#define EXIT_NOT_EXECUTABLE 126

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gtrace record [<options>] [--] <command> [<args>...]\n"
		"   or: gtrace record [<options>] -p <pid>\n"
		"\n"
		"Runs <command> and samples the call stacks of its threads and of the\n"
		"processes it starts into one self-contained trace file, together with\n"
		"the lane work (spans) they report through libgtrace-target and, for\n"
		"CUDA programs, their GPU work, CUDA calls and NVTX ranges.\n"
		"\n"
		"options:\n"
		"  -p, --pid PID            attach to the running process PID instead of\n"
		"                           running a command, until ^C or --duration\n"
		"  -o, --output FILE        write to FILE (default " DEFAULT_OUTPUT "), never through\n"
		"                           a symbolic link; an existing FILE is renamed\n"
		"                           FILE.old; %%r, %%l, %%h, %%p in FILE:\n"
		"                           the rank and local rank its launcher gave (RANK,\n"
		"                           OMPI_COMM_WORLD_RANK, SLURM_PROCID...), the host\n"
		"                           name, gtrace's pid\n"
		"  -F, --freq HZ            samples per second per thread (default %d)\n"
		"  -e, --event EVENT[:u]    cycles, cpu-clock or task-clock (default: cycles\n"
		"                           where the CPU counts them, else cpu-clock); time\n"
		"                           in system calls counts where the kernel allows\n"
		"                           (root, CAP_PERFMON, perf_event_paranoid <= 1),\n"
		"                           with the kernel's frames above the calling\n"
		"                           stack; ':u': user time only\n"
		"      --no-switch-stacks   do not sample the context switches out (at -F)\n"
		"                           for the stack a thread went off the CPU in\n"
		"                           (taken where kernel time is; report --off-cpu\n"
		"                           shows them): off-CPU time keeps the last\n"
		"                           sample's stack\n"
		"      --call-graph MODE    dwarf[,SIZE]: unwind a copy of SIZE bytes of each\n"
		"                           stack (default dwarf,%d; at most %d);\n"
		"                           fp: follow frame pointers\n"
		"  -m, --mmap-pages PAGES   each CPU's ring: PAGES pages, or a size such as 8M,\n"
		"                           rounded down to a power of two (default: room for\n"
		"                           50 ms of samples at -F, at least 4M with dwarf, 1M\n"
		"                           with fp, at most 64M)\n"
		"      --unwind-threads N   threads unwinding beside the recorder's own with\n"
		"                           dwarf (default: none on 2 CPUs or fewer, else one\n"
		"                           for every 4 CPUs, at most 8)\n"
		"      --duration TIME      stop after TIME (seconds, or 500ms, 2.5s...) and\n"
		"                           end the command with SIGTERM\n"
		"                           (an attached process is left running)\n"
		"      --no-cuda            do not inject the CUDA agent: no GPU work, CUDA\n"
		"                           calls or NVTX ranges in the recording\n"
		"      --cuda-api MODE      filtered: leave out the frequent CUDA queries\n"
		"                           (cudaGetDevice, cuCtxGetCurrent...) (default);\n"
		"                           all: every CUDA runtime and driver call\n"
		"      --gpu-pc-sampling[=OPTIONS]\n"
		"                           sample the PCs of running kernels with the reason\n"
		"                           each warp stalled, and keep the cubins; OPTIONS,\n"
		"                           comma-separated: period=N (a sample every 2^N\n"
		"                           cycles, 5..31, default 20), mode=serialized (each\n"
		"                           sample tied to its launch; default) or continuous,\n"
		"                           rate=N (about N samples a second kept, sampling in\n"
		"                           short windows; 0: always on; default 100)\n"
		"      --gpu-cubin-max BYTES\n"
		"                           keep at most BYTES of cubins (default 64 MiB)\n"
		"      --metrics-interval TIME\n"
		"                           read the system, process and GPU metrics every\n"
		"                           TIME: 100ms, 1s, 500us (default 100ms, at least\n"
		"                           100us)\n"
		"      --no-metrics         record no metrics\n"
		"  -q, --quiet              print no summary\n"
		"  -v, --verbose            say more about the recording\n"
		"  -h, --help               show this help\n"
		"\n"
		"Exit status: the command's (128 + N when signal N ended it, 0 when\n"
		"--duration did; 0 with -p), 127 command not found, 126 command not\n"
		"executable, 1 recording failed, 2 bad options.\n",
		DEFAULT_FREQ, DEFAULT_STACK_SIZE, MAX_STACK_SIZE);
}

static int usage_error(void)
{
	fprintf(stderr, "see 'gtrace record --help'\n");
	return EXIT_USAGE;
}

/* A whole decimal number in [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_call_graph(const char *s, struct record_opts *o)
{
	if (!strcmp(s, "fp")) {
		o->method = UNWIND_FP;
		return 0;
	}
	if (strncmp(s, "dwarf", 5) || (s[5] && s[5] != ','))
		return -EINVAL;
	o->method = UNWIND_DWARF;
	if (s[5] == ',' && (parse_uint(s + 6, 8, MAX_STACK_SIZE, &o->stack_size) ||
			    o->stack_size % 8))
		return -EINVAL;
	return 0;
}

/* PAGES, or a size with B, K, M or G after it, as perf's -m takes. */
static int parse_ring_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "BKMG";
	unsigned long long v;
	const char *unit;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !v || v > 1ULL << 32)
		return -EINVAL;
	if (!*end) {
		*bytes = v * (uint64_t)sysconf(_SC_PAGESIZE);
		return 0;
	}
	unit = strchr(units, *end);
	if (!unit || end[1])
		return -EINVAL;
	*bytes = v << (10 * (unit - units));
	return 0;
}

enum {
	OPT_CALL_GRAPH = 256,
	OPT_UNWIND_THREADS,
	OPT_DURATION,
	OPT_NO_CUDA,
	OPT_CUDA_API,
	OPT_GPU_PC,
	OPT_GPU_CUBIN_MAX,
	OPT_METRICS_INTERVAL,
	OPT_NO_METRICS,
	OPT_NO_SWITCH_STACKS,
};

/* Returns -1 to go on recording, else the exit status to end with. */
static int parse_options(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "freq", required_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "unwind-threads", required_argument, NULL, OPT_UNWIND_THREADS },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "no-cuda", no_argument, NULL, OPT_NO_CUDA },
		{ "cuda-api", required_argument, NULL, OPT_CUDA_API },
		{ "gpu-pc-sampling", optional_argument, NULL, OPT_GPU_PC },
		{ "gpu-cubin-max", required_argument, NULL, OPT_GPU_CUBIN_MAX },
		{ "metrics-interval", required_argument, NULL, OPT_METRICS_INTERVAL },
		{ "no-metrics", no_argument, NULL, OPT_NO_METRICS },
		{ "no-switch-stacks", no_argument, NULL, OPT_NO_SWITCH_STACKS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char why[160], setting[64];
	uint32_t pid, threads;
	bool no_metrics = false;
	int opt;

	opterr = 0;
	optind = 1;
	/* '+': the first non-option starts the command, whose options are its own. */
	while ((opt = getopt_long(argc, argv, "+:p:o:F:e:m:qvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_uint(optarg, 1, INT32_MAX, &pid)) {
				pr_err("invalid pid '%s': expected a process id", optarg);
				return usage_error();
			}
			o->attach = (pid_t)pid;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'F':
			if (parse_uint(optarg, 1, UINT32_MAX, &o->freq)) {
				pr_err("invalid frequency '%s': expected a whole number of samples per second",
				       optarg);
				return usage_error();
			}
			break;
		case 'e':
			if (sampler_event_parse(optarg, &o->event, &o->user_only)) {
				pr_err("unknown event '%s': expected cycles, cpu-clock or task-clock, each with an optional ':u'",
				       optarg);
				return usage_error();
			}
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(optarg, o)) {
				pr_err("invalid call graph '%s': expected dwarf, dwarf,SIZE (a multiple of 8 up to %d) or fp",
				       optarg, MAX_STACK_SIZE);
				return usage_error();
			}
			break;
		case 'm':
			if (parse_ring_size(optarg, &o->ring_bytes)) {
				pr_err("invalid ring size '%s': expected a number of pages or a size such as 8M",
				       optarg);
				return usage_error();
			}
			break;
		case OPT_UNWIND_THREADS:
			if (parse_uint(optarg, 0, 64, &threads)) {
				pr_err("invalid unwinding threads '%s': expected a number from 0 to 64",
				       optarg);
				return usage_error();
			}
			o->unwind_threads = (int)threads;
			break;
		case OPT_DURATION:
			if (duration_parse(optarg, 1000000000, &o->duration_ns) || !o->duration_ns) {
				pr_err("invalid duration '%s': expected a number of seconds or a time such as 500ms, greater than 0",
				       optarg);
				return usage_error();
			}
			break;
		case OPT_NO_CUDA:
			o->no_cuda = true;
			break;
		case OPT_CUDA_API:
			if (strcmp(optarg, "filtered") && strcmp(optarg, "all")) {
				pr_err("unknown CUDA API mode '%s': expected filtered or all", optarg);
				return usage_error();
			}
			o->cuda_api_all = !strcmp(optarg, "all");
			break;
		case OPT_GPU_PC:
			o->gpu_pc = true;
			if (optarg && pc_opts_parse(&o->pc, optarg, why, sizeof(why))) {
				pr_err("%s in --gpu-pc-sampling", why);
				return usage_error();
			}
			break;
		case OPT_GPU_CUBIN_MAX:
			/* One number: a comma would splice in other settings. */
			snprintf(setting, sizeof(setting), "cubin-max=%s", optarg);
			if (strpbrk(optarg, ",=") || pc_opts_parse(&o->pc, setting, why, sizeof(why))) {
				pr_err("invalid cubin size '%s': expected a number of bytes", optarg);
				return usage_error();
			}
			break;
		case OPT_METRICS_INTERVAL:
			if (duration_parse(optarg, 1, &o->metrics_interval_ns) ||
			    o->metrics_interval_ns < METRICS_INTERVAL_MIN_NS ||
			    o->metrics_interval_ns > METRICS_INTERVAL_MAX_NS) {
				pr_err("invalid metrics interval '%s': expected a time from 100us to 1h, such as 100ms",
				       optarg);
				return usage_error();
			}
			break;
		case OPT_NO_METRICS:
			no_metrics = true;
			break;
		case OPT_NO_SWITCH_STACKS:
			o->no_switch_stacks = true;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			pr_err("option '%s' needs a value", argv[optind - 1]);
			return usage_error();
		default:
			if (optopt)
				pr_err("unknown option '-%c'", optopt);
			else
				pr_err("unknown option '%s'", argv[optind - 1]);
			return usage_error();
		}
	}
	if (no_metrics)
		o->metrics_interval_ns = 0;
	if (o->gpu_pc && o->no_cuda) {
		pr_err("--gpu-pc-sampling needs the CUDA agent that --no-cuda leaves out");
		return usage_error();
	}
	if (o->attach && optind < argc) {
		pr_err("cannot both attach to pid %d and run '%s'", (int)o->attach, argv[optind]);
		return usage_error();
	}
	if (!o->attach && optind == argc) {
		pr_err("no command to record");
		return usage_error();
	}
	if (!o->attach)
		o->argv = argv + optind;
	return -1;
}

/* -o with %r, %l, %h, %p: this rank's file name. */
static int expand_output(const struct record_opts *o, char *out, size_t size)
{
	char host[HOST_NAME_MAX + 1] = "", bad = 0;
	struct job_rank r;
	int err;

	job_rank_from_env(&r);
	gethostname(host, sizeof(host) - 1);
	err = job_output_name(o->output, &r, host, getpid(), out, size, &bad);
	if (err == -ENOENT && r.malformed)
		pr_err("no rank for the output name '%s': %s is '%s', not a whole number",
		       o->output, r.malformed, getenv(r.malformed));
	else if (err == -ENOENT)
		pr_err("no rank for the output name '%s': none of %s is set", o->output,
		       job_rank_variables);
	else if (err == -EINVAL && bad)
		pr_err("unknown '%%%c' in the output name '%s': expected %%r, %%l, %%h, %%p or %%%%",
		       bad, o->output);
	else if (err == -EINVAL)
		pr_err("a '%%' ends the output name '%s': expected %%r, %%l, %%h, %%p or %%%%",
		       o->output);
	else if (err)
		pr_err("the output name '%s' is too long", o->output);
	return err;
}

/* The refusal of perf_event_open, with the setting to change. */
static void explain_events_error(int err, const struct record_opts *o)
{
	long paranoid;

	switch (-err) {
	case EACCES:
	case EPERM:
		if (!sampler_read_sysctl("perf_event_paranoid", &paranoid) && paranoid > 2)
			pr_err("perf_event_open refused: kernel.perf_event_paranoid is %ld (needs <= 2 for an unprivileged user); run 'sysctl kernel.perf_event_paranoid=2' or grant CAP_PERFMON",
			       paranoid);
		else
			pr_err("perf_event_open refused: %s; a security policy (seccomp, SELinux, AppArmor) may block it",
			       strerror(-err));
		break;
	case ENOSYS:
		pr_err("perf_event_open is not available: blocked by a container seccomp profile or a kernel without CONFIG_PERF_EVENTS");
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		pr_err("event '%s' is not supported on this machine; try '-e cpu-clock'",
		       sampler_event_label(o->event));
		break;
	case SAMPLER_ERR_RING_LIMIT:
		pr_err("cannot map the sample buffers: locked memory is limited; raise 'ulimit -l' or kernel.perf_event_mlock_kb");
		break;
	default:
		pr_err("cannot open perf events: %s", strerror(-err));
		break;
	}
}

static void explain_attach_error(int err, pid_t pid)
{
	switch (-err) {
	case ESRCH:
	case ENOENT:
		pr_err("no process with pid '%d'", (int)pid);
		break;
	case EPERM:
	case EACCES:
		pr_err("cannot attach to pid '%d': permission denied (another user's process needs root or CAP_PERFMON and CAP_SYS_PTRACE)",
		       (int)pid);
		break;
	default:
		pr_err("cannot attach to pid '%d': %s", (int)pid, strerror(-err));
		break;
	}
}

static int explain_failure(int err, const struct record_result *res,
			   const struct record_opts *o)
{
	const char *cmd = o->argv ? o->argv[0] : NULL;

	switch (res->stage) {
	case RECORD_STAGE_OUTPUT:
		pr_err("cannot create '%s': %s", o->output, tr_strerror(err));
		return EXIT_FAIL;
	case RECORD_STAGE_START:
		if (cmd)
			pr_err("cannot start recording '%s': %s", cmd, strerror(-err));
		else
			pr_err("cannot start recording pid '%d': %s", (int)o->attach, strerror(-err));
		return EXIT_FAIL;
	case RECORD_STAGE_ATTACH:
		explain_attach_error(err, o->attach);
		return EXIT_FAIL;
	case RECORD_STAGE_EVENTS:
		/* The process may have gone between the check and the events. */
		if (o->attach && err == -ESRCH)
			explain_attach_error(err, o->attach);
		else
			explain_events_error(err, o);
		return EXIT_FAIL;
	case RECORD_STAGE_EXEC:
		if (err == -ENOENT && !strchr(cmd, '/')) {
			pr_err("command not found: '%s'", cmd);
			return EXIT_NOT_FOUND;
		}
		pr_err("cannot execute '%s': %s", cmd, strerror(-err));
		return err == -ENOENT || err == -ENOTDIR ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
	case RECORD_STAGE_WRITE:
		pr_err("cannot write '%s': %s; %s", o->output, tr_strerror(err),
		       res->file_bytes ? "it reads up to its last whole chunk"
				       : "no recording was kept");
		return EXIT_FAIL;
	}
	return EXIT_FAIL;
}

/* The -m of at least bytes, which -m does not round down below them: 8M, 512K. */
static void ring_size_above(size_t bytes, char *out, size_t size)
{
	size_t ring = 1;

	while (ring < bytes)
		ring <<= 1;
	if (ring >= 1 << 20)
		snprintf(out, size, "%zuM", ring >> 20);
	else
		snprintf(out, size, "%zuK", ring >> 10);
}

static void print_summary(const struct record_result *res, const struct record_opts *o)
{
	double kib = (double)res->file_bytes / 1024;
	char larger[32];

	if (res->event_fell_back)
		pr_debug("cycles cannot be sampled here, sampled cpu-clock instead");
	pr_debug("rings of %zu KiB per CPU", res->ring_bytes >> 10);
	pr_info("recorded %llu samples from %llu thread%s (%llu lost) in '%s' (%.1f %s)",
		(unsigned long long)res->stats.samples,
		(unsigned long long)res->stats.threads, res->stats.threads == 1 ? "" : "s",
		(unsigned long long)res->stats.lost, o->output,
		kib < 10240 ? kib : kib / 1024, kib < 10240 ? "KiB" : "MiB");
	if (res->stats.spans || res->stats.spans_dropped)
		pr_info("recorded %llu spans on %llu lane%s (%llu dropped)",
			(unsigned long long)res->stats.spans,
			(unsigned long long)res->stats.lanes, res->stats.lanes == 1 ? "" : "s",
			(unsigned long long)res->stats.spans_dropped);
	if (o->gpu_pc && res->stats.pc_buckets)
		pr_info("recorded %llu GPU PC sample buckets and %llu cubin%s",
			(unsigned long long)res->stats.pc_buckets,
			(unsigned long long)res->stats.cubins, res->stats.cubins == 1 ? "" : "s");
	else if (o->gpu_pc)
		pr_info("recorded no GPU PC samples: 'gtrace diagnose -i %s' says why", o->output);
	ring_size_above(res->rate_ring_bytes, larger, sizeof(larger));
	if (res->stats.lost && res->ring_bytes < res->rate_ring_bytes)
		pr_warn("the kernel dropped %llu records because gtrace could not keep up: rings of %zu KiB hold less than 50 ms at -F %u; try a larger -m, such as -m %s",
			(unsigned long long)res->stats.lost, res->ring_bytes >> 10, o->freq, larger);
	else if (res->stats.lost)
		pr_warn("the kernel dropped %llu records because gtrace could not keep up; try a lower -F or a smaller --call-graph dwarf,SIZE",
			(unsigned long long)res->stats.lost);
	if (res->stats.cut_stacks * 100 > res->stats.samples * CUT_STACKS_PERCENT &&
	    o->method == UNWIND_DWARF && o->stack_size < MAX_STACK_SIZE)
		pr_warn("%.0f%% of the stacks ran deeper than the %u bytes copied of each, and end early; try --call-graph dwarf,%u",
			100.0 * (double)res->stats.cut_stacks / (double)res->stats.samples,
			o->stack_size, MAX_STACK_SIZE);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {
		.output = DEFAULT_OUTPUT,
		.event = SAMPLER_EVENT_AUTO,
		.freq = DEFAULT_FREQ,
		.method = UNWIND_DWARF,
		.stack_size = DEFAULT_STACK_SIZE,
		.unwind_threads = -1,
		.metrics_interval_ns = DEFAULT_METRICS_INTERVAL_NS,
		.pc = PC_OPTS_DEFAULT,
	};
	struct record_result res;
	char output[PATH_MAX];
	long max_rate;
	int ret, err;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (strchr(o.output, '%')) {
		if (expand_output(&o, output, sizeof(output)))
			return usage_error();
		o.output = output;
		/* A name per rank: the ranks' directory, which no one launcher makes. */
		if ((err = outfile_make_dirs(o.output))) {
			pr_err("cannot create the directory of '%s': %s", o.output, strerror(-err));
			return EXIT_FAIL;
		}
	}
	if (!sampler_read_sysctl("perf_event_max_sample_rate", &max_rate) && o.freq > max_rate) {
		pr_err("frequency %u is above kernel.perf_event_max_sample_rate (%ld)",
		       o.freq, max_rate);
		return usage_error();
	}

	err = record_run(&o, &res);
	if (err)
		return explain_failure(err, &res, &o);
	if (res.spans_err)
		pr_warn("cannot open the span socket: %s; lane work was not recorded",
			res.spans_err == -EPERM ? "the rendezvous directory is not private to this user"
			: res.spans_err == -EADDRINUSE ? "another gtrace is attached to this process"
			: strerror(-res.spans_err));
	print_summary(&res, &o);
	if (res.sampling_stopped)
		pr_warn("the kernel stopped sampling '%s' %s; root can attach to it with -p",
			o.argv[0], res.sampling_stopped);
	return res.exit_status;
}
