/* SPDX-License-Identifier: MIT */
/*
 * report --ranks on synthetic recordings merged as the ranks of one job:
 * each rank's times, the collective calls its stacks show, its kernels
 * matched across ranks, and the straggler found either way.
 */
#include <stdlib.h>

#include "analysis/passes/passes.h"
#include "analysis/views/ranks.h"
#include "symbols/demangle.h"
#include "synth.h"
#include "test.h"
#include "views.h"

#define MS 1000000ull
#define PID 100
#define NCCL_KERNEL "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
#define C10D_ALLREDUCE \
	"_ZN4c10d16ProcessGroupNCCL9allreduceERSt6vectorIN2at6TensorESaIS3_EERKNS_16AllreduceOptionsE"

/* A rank's recording: its rank, host, a sampling rate of 1 kHz, 2 s from start to end. */
static void rank_facts(struct synth *s, int rank, const char *host)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", rank);
	synth_meta(s, "rank", buf);
	synth_meta(s, "world-size", "4");
	synth_meta(s, "hostname", host);
	synth_meta(s, "frequency", "1000");
	snprintf(buf, sizeof(buf), "%llu", SYNTH_T0);
	synth_meta(s, "start-ns", buf);
	snprintf(buf, sizeof(buf), "%llu", SYNTH_T0 + 2000 * MS);
	synth_meta(s, "end-ns", buf);
	synth_comm(s, PID, PID, "mpi-app");
}

/* An MPI rank: compute samples in compute_step, then waiting ones in MPI_Allreduce. */
static void mpi_rank(struct model *m, int rank, unsigned compute, unsigned waiting)
{
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/bin/mpi-app"), mpi = synth_dso(&s, "/lib/libmpi.so.40");
	uint32_t main_loc = synth_loc(&s, app, 0x1000, "main");
	uint32_t compute_stack[] = { main_loc, synth_loc(&s, app, 0x1100, "compute_step") };
	/* PMPI_ is the same call by the name the library's profiling interface gives it. */
	uint32_t wait_stack[] = { main_loc, synth_loc(&s, mpi, 0x2000, "PMPI_Allreduce"),
				  synth_loc(&s, mpi, 0x3000, "opal_progress") };

	rank_facts(&s, rank, rank < 2 ? "node-a" : "node-b");
	synth_samples(&s, PID, PID, synth_stack(&s, compute_stack, 2), compute);
	synth_samples(&s, PID, PID, synth_stack(&s, wait_stack, 3), waiting);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES);
}

/* Rank 2 computes three times longer; the others wait for it, on a CPU. */
static const unsigned spin_compute[] = { 10, 10, 30, 10 }, spin_waiting[] = { 22, 22, 2, 22 };

/* The ranks of order[] (n of them), merged in that order, with their samples by rank. */
static void mpi_job(struct model *m, const int *order, size_t n, const unsigned *compute,
		    const unsigned *waiting)
{
	for (size_t i = 0; i < n; i++) {
		struct model other;

		mpi_rank(i ? &other : m, order[i], compute[order[i]], waiting[order[i]]);
		if (i)
			model_merge(m, &other);
	}
	model_merge_end(m);
}

static const struct rank_row *row_of(const struct rank_report *r, const struct model *m,
				     int64_t rank)
{
	for (size_t i = 0; i < r->rows.len; i++)
		if (m->ranks.v[r->rows.v[i].index].rank == rank)
			return &r->rows.v[i];
	return NULL;
}

static void build(struct rank_report *r, struct funcs *f, const struct model *m)
{
	struct sample_filter all = {0};

	funcs_init(f, m, 0);
	rank_report_build(r, f, &all);
}

static void test_mpi_straggler(void)
{
	static const int order[] = { 3, 1, 0, 2 };
	struct model m;
	struct funcs f;
	struct rank_report r;
	struct capture cap;
	const char *text;

	mpi_job(&m, order, 4, spin_compute, spin_waiting);
	build(&r, &f, &m);
	CHECK_EQ_U64(r.rows.len, 4);
	CHECK_EQ_U64(r.hosts, 2);
	/* Rows by rank number, whatever the order merged. */
	for (size_t i = 0; i < r.rows.len; i++)
		CHECK_EQ_U64(m.ranks.v[r.rows.v[i].index].rank, i);
	CHECK_EQ_U64(row_of(&r, &m, 0)->samples, 32);
	CHECK_EQ_U64(row_of(&r, &m, 0)->coll_samples, 22);
	CHECK_EQ_U64(row_of(&r, &m, 0)->coll_cpu_ns, 22 * MS);
	CHECK_EQ_U64(row_of(&r, &m, 0)->compute_ns, 10 * MS);
	CHECK_EQ_U64(row_of(&r, &m, 2)->coll_samples, 2);
	/* Without context switches, on-CPU time is samples times the period. */
	CHECK_EQ_U64(row_of(&r, &m, 3)->cpu_ns, 32 * MS);
	CHECK_EQ_U64(row_of(&r, &m, 1)->wall_ns, 2000 * MS);
	CHECK_EQ_U64(row_of(&r, &m, 1)->gpu_ns, 0);
	CHECK_EQ_U64(r.matched, 0);
	CHECK(r.basis == STRAGGLER_CPU);
	CHECK_EQ_U64(m.ranks.v[r.rows.v[r.straggler].index].rank, 2);

	rank_report_print(capture_start(&cap), &r, &m, "run", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# Ranks: 4 recordings on 2 hosts"));
	CHECK(has_line(text, "     2  node-b     2.000     0.032     0.030      0.002     0.000"
			     "      0.000      0.000       -  straggler"));
	CHECK(has_line(text, "# Straggler: rank 2, 0.030 s on a CPU outside collective calls "
			     "against 0.010 s for the other ranks on average"));
	CHECK_EQ_U64(count_of(text, "straggler\n"), 1);
	free(cap.text);

	rank_report_print_json(capture_start(&cap), &r, &m, "run", 0);
	text = capture_end(&cap);
	CHECK(strstr(text, "\"straggler\": {\"rank\": 2, \"basis\": \"cpu\"}"));
	CHECK(strstr(text, "{\"rank\": 0, \"host\": \"node-a\", \"path\": null, "
			   "\"local_rank\": null, \"world_size\": 4, \"wall_s\": 2.000000"));
	CHECK_EQ_U64(count_of(text, "\"straggler\": true"), 1);
	free(cap.text);

	rank_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/*
 * Ranks that wait asleep (more ranks than CPUs) have few samples in the
 * collective, or none: rank 1 as few as the slow rank 2.
 */
static void test_mpi_asleep(void)
{
	static const int order[] = { 0, 1, 2, 3 };
	static const unsigned compute[] = { 10, 11, 30, 9 }, waiting[] = { 3, 0, 0, 2 };
	struct model m;
	struct funcs f;
	struct rank_report r;

	mpi_job(&m, order, 4, compute, waiting);
	build(&r, &f, &m);
	CHECK(r.basis == STRAGGLER_CPU);
	CHECK_EQ_U64(m.ranks.v[r.rows.v[r.straggler].index].rank, 2);
	rank_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* --rank: the rows of those ranks, the straggler among them. */
static void test_rank_filter(void)
{
	static const int order[] = { 0, 1, 2, 3 };
	struct sample_filter flt = {0};
	struct model m;
	struct funcs f;
	struct rank_report r;

	mpi_job(&m, order, 4, spin_compute, spin_waiting);
	funcs_init(&f, &m, 0);
	CHECK(!filter_add(&flt, FILTER_RANK, "0,1"));
	rank_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.rows.len, 2);
	CHECK_EQ_U64(r.hosts, 1);
	CHECK(r.basis == STRAGGLER_CPU);
	CHECK(!row_of(&r, &m, 2));
	rank_report_free(&r);
	filter_free(&flt);
	funcs_free(&f);
	model_free(&m);
}

/* One recording: one row, and no straggler to name. */
static void test_one_rank(void)
{
	static const int order[] = { 0 };
	struct model m;
	struct funcs f;
	struct rank_report r;
	struct capture cap;

	mpi_job(&m, order, 1, spin_compute, spin_waiting);
	build(&r, &f, &m);
	CHECK_EQ_U64(r.rows.len, 1);
	CHECK(r.basis == STRAGGLER_NONE);
	rank_report_print(capture_start(&cap), &r, &m, NULL, 0);
	CHECK(has_line(capture_end(&cap), "# Straggler: none: one rank"));
	free(cap.text);
	rank_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* The collective calls of MPI, NCCL and torch.distributed, and calls that are not. */
static void test_collective_calls(void)
{
	struct synth s = {0};
	struct model m;
	struct funcs f;
	struct rank_report r;
	struct demangler d = {0};
	uint32_t app = synth_dso(&s, "/bin/app");
	uint32_t py = synth_python_file(&s, "/t/distributed_c10d.py");
	uint32_t main_loc = synth_loc(&s, app, 0x100, "main");
	static const char *const yes[] = { "MPI_Barrier", "MPI_Waitall", "ncclAllReduce",
					   "pncclBroadcast", C10D_ALLREDUCE };
	static const char *const no[] = { "MPI_Init", "MPI_Allreducex", "ncclCommInitRank",
					  "allreduce", "MPI_Isend" };
	uint32_t stack[2] = { main_loc, 0 };
	bool c10d = demangler_available(&d);

	rank_facts(&s, 0, "node-a");
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		stack[1] = synth_loc(&s, app, 0x200 + i, yes[i]);
		synth_samples(&s, PID, PID, synth_stack(&s, stack, 2), 1);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
		stack[1] = synth_loc(&s, app, 0x300 + i, no[i]);
		synth_samples(&s, PID, PID, synth_stack(&s, stack, 2), 10);
	}
	/* A Python caller of torch.distributed, and a function of that file that is not one. */
	stack[1] = synth_python_loc(&s, py, "all_reduce", 2500);
	synth_samples(&s, PID, PID, synth_stack(&s, stack, 2), 100);
	stack[1] = synth_python_loc(&s, py, "init_process_group", 1400);
	synth_samples(&s, PID, PID, synth_stack(&s, stack, 2), 1000);
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES);
	build(&r, &f, &m);
	/* The C++ name counts only where it can be demangled. */
	CHECK_EQ_U64(r.rows.v[0].coll_samples, 100 + 4 + c10d);
	CHECK_EQ_U64(r.rows.v[0].samples, 1155);
	rank_report_free(&r);
	funcs_free(&f);
	model_free(&m);
	demangler_free(&d);
}

/*
 * A GPU rank: per step, a gemm on stream 7 and an NCCL allreduce on stream
 * 8 that starts after late_ns; a copy (no kernel) and a wait on the GPU.
 */
static void gpu_rank(struct model *m, int rank, const uint64_t *late_ns, size_t steps,
		     size_t extra)
{
	struct synth s = {0};
	uint32_t compute, comm, wait;

	rank_facts(&s, rank, "gpu-node");
	synth_samples(&s, PID, PID, 0, 10);
	compute = synth_lane(&s, PID, "GPU0 stream 7");
	comm = synth_lane(&s, PID, "GPU0 stream 8");
	wait = synth_lane_kind(&s, PID, "cuda-wait", "CPU waits");
	for (size_t i = 0; i < steps + extra; i++) {
		uint64_t t = SYNTH_T0 + i * 100 * MS, late = i < steps ? late_ns[i] : 0;

		synth_span(&s, compute, "_Z4gemmPf", t, 10 * MS);
		/* 5 ms into the gemm, the collective: the two overlap 5 ms. */
		synth_span(&s, comm, NCCL_KERNEL, t + 5 * MS + late, 7 * MS);
	}
	synth_span(&s, compute, "[CUDA memcpy HtoD]", SYNTH_T0 + 50 * MS, 20 * MS);
	synth_span(&s, wait, "cudaStreamSynchronize", SYNTH_T0, 4 * MS);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
}

static void test_gpu_straggler(void)
{
	/* Rank 1 is the last to start collectives 0, 1, 3 and 4; rank 2 collective 2. */
	static const uint64_t late[3][5] = {
		{ 0, 0, 0, 0, 0 },
		{ 3 * MS, 2 * MS, 0, 1 * MS, 3 * MS },
		{ 1 * MS, 1 * MS, 4 * MS, 0, 1 * MS },
	};
	struct demangler d = {0};
	struct model m, other;
	struct funcs f;
	struct rank_report r;
	struct capture cap;
	const struct rank_row *row;

	if (!demangler_available(&d)) {
		printf("  (no C++ demangler: the NCCL kernel's mangled name is not recognized)\n");
		return;
	}
	demangler_free(&d);
	/* Rank 0 has one more collective than the others: matched with none. */
	gpu_rank(&m, 0, late[0], 5, 1);
	for (int rank = 1; rank < 3; rank++) {
		gpu_rank(&other, rank, late[rank], 5, 0);
		model_merge(&m, &other);
	}
	model_merge_end(&m);
	build(&r, &f, &m);
	CHECK_EQ_U64(r.matched, 5);
	CHECK(r.basis == STRAGGLER_GPU);
	CHECK_EQ_U64(m.ranks.v[r.rows.v[r.straggler].index].rank, 1);
	CHECK_EQ_U64(row_of(&r, &m, 1)->started_last, 4);
	CHECK_EQ_U64(row_of(&r, &m, 2)->started_last, 1);
	row = row_of(&r, &m, 0);
	CHECK_EQ_U64(row->started_last, 0);
	CHECK_EQ_U64(row->coll_kernels, 6);
	/* Per step, the union of [0, 10) and [5, 12) ms: 12 ms; the copy is no kernel. */
	CHECK_EQ_U64(row->gpu_ns, 6 * 12 * MS);
	CHECK_EQ_U64(row->coll_gpu_ns, 6 * 7 * MS);
	CHECK_EQ_U64(row->gpu_wait_ns, 4 * MS);
	CHECK_EQ_U64(row->coll_samples, 0);

	rank_report_print(capture_start(&cap), &r, &m, NULL, 0);
	CHECK(has_line(capture_end(&cap), "# Straggler: rank 1, the last to start 4 of the 5 "
					  "collective kernels run by several ranks"));
	free(cap.text);
	rank_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

int main(void)
{
	RUN(test_mpi_straggler);
	RUN(test_mpi_asleep);
	RUN(test_rank_filter);
	RUN(test_one_rank);
	RUN(test_collective_calls);
	RUN(test_gpu_straggler);
	return test_summary();
}
