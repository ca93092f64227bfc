/* SPDX-License-Identifier: MIT */
/*
 * Recordings read together (src/model/merge.c): ids moved past the rows
 * before them, strings shared by text, pids that collide renumbered, times
 * moved by the clock pairs, counters summed; and the recorder's rank and output names
 * (src/record/jobrank.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "model/model.h"
#include "record/jobrank.h"
#include "synth.h"
#include "test.h"

/*
 * One rank's recording: a process pid with a thread in hot() for n
 * samples, a lane with one span, a counter, and the clock pair of a
 * machine whose CLOCK_MONOTONIC is real - offset.
 */
static void rank_model(struct model *m, int rank, uint32_t pid, unsigned n, int64_t offset)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/bin/app"), lane;
	uint32_t locs[1] = { synth_loc(&s, dso, 0x1000 + (uint64_t)rank, "hot") };
	char buf[64];

	snprintf(buf, sizeof(buf), "%d", rank);
	synth_meta(&s, "rank", buf);
	snprintf(buf, sizeof(buf), "%lld %lld", (long long)(SYNTH_T0 + offset), (long long)SYNTH_T0);
	synth_meta(&s, "clock-start", buf);
	synth_meta(&s, "hostname", rank ? "beta" : "alpha");
	synth_comm(&s, pid, pid, "app");
	synth_samples(&s, pid, pid, synth_stack(&s, locs, 1), n);
	lane = synth_lane(&s, pid, "GPU0 stream 7");
	synth_span(&s, lane, "kernel", SYNTH_T0, 1000);
	synth_counter(&s, "samples", n);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
}

static size_t samples_of(const struct model *m, uint32_t pid, uint64_t *first_ts)
{
	size_t n = 0;

	*first_ts = 0;
	for (size_t i = 0; i < m->t.samples.len; i++) {
		if (m->t.samples.v[i].pid != pid)
			continue;
		if (!n++)
			*first_ts = m->t.samples.v[i].ts;
	}
	return n;
}

static void test_merge(void)
{
	struct model m, other;
	uint64_t counter = 0, ts;
	uint32_t renamed;
	uint32_t n;

	/* Rank 1's machine: its monotonic clock 5 s behind, the same pid as rank 0's. */
	rank_model(&m, 0, 100, 10, 0);
	rank_model(&other, 1, 100, 20, 5000000000ll);
	model_merge(&m, &other);
	model_merge_end(&m);

	CHECK_EQ_U64(m.ranks.len, 2);
	CHECK(m.ranks.v[1].clock_pairs);
	CHECK_EQ_U64(m.ranks.v[1].shift_ns, 5000000000ll);
	CHECK_EQ_U64(m.ranks.v[1].rank, 1);
	CHECK_STREQ(model_rank_meta(&m, 1, "hostname"), "beta");
	CHECK_STREQ(model_rank_meta(&m, 0, "hostname"), "alpha");
	/* The second pid 100 is another process: renumbered, rank 1's. */
	renamed = MODEL_MERGED_PID_BASE;
	CHECK_EQ_U64(model_rank_of(&m, 100), 0);
	CHECK_EQ_U64(model_rank_of(&m, renamed), 1);
	CHECK_EQ_U64(samples_of(&m, 100, &ts), 10);
	CHECK_EQ_U64(ts, SYNTH_T0);
	CHECK_EQ_U64(samples_of(&m, renamed, &ts), 20);
	CHECK_EQ_U64(ts, SYNTH_T0 + 5000000000ull);
	CHECK(model_real_thread_index(&m, renamed) >= 0);
	/* Its frames name its own function, through its moved ids. */
	{
		const struct tr_sample *s = &m.t.samples.v[m.t.samples.len - 1];
		uint32_t loc = m.t.nodes.v[s->node - 1].loc;
		const struct tr_symbol *sym = model_loc_symbols(&m, loc, &n);

		CHECK(n == 1 && sym && !strcmp(model_str(&m, sym->func), "hot"));
		CHECK_EQ_U64(m.t.locs.v[loc - 1].addr, 0x1001);
	}
	/* Lanes: one each, the second's spans on its own lane, moved in time. */
	CHECK_EQ_U64(m.t.lanes.len, 2);
	CHECK_EQ_U64(m.t.spans.v[1].lane, 2);
	CHECK_EQ_U64(m.t.lanes.v[1].pid, renamed);
	CHECK_EQ_U64(m.t.spans.v[1].start, SYNTH_T0 + 5000000000ull);
	CHECK(model_counter(&m, "samples", &counter) && counter == 30);
	/* A text keeps one id: the views find lane kinds and names by it. */
	CHECK_EQ_U64(m.t.lanes.v[1].kind, m.t.lanes.v[0].kind);
	CHECK_EQ_U64(m.t.spans.v[1].name, m.t.spans.v[0].name);
	CHECK_EQ_U64(m.counters.len, 1);

	/* A finer alignment moves the rank's rows, and only them. */
	model_shift_ranks(&m, (int64_t[]){ 0, -1000 });
	CHECK_EQ_U64(samples_of(&m, renamed, &ts), 20);
	CHECK_EQ_U64(ts, SYNTH_T0 + 5000000000ull - 1000);
	CHECK_EQ_U64(samples_of(&m, 100, &ts), 10);
	CHECK_EQ_U64(ts, SYNTH_T0);
	CHECK_EQ_U64(m.ranks.v[1].shift_ns, 5000000000ll - 1000);
	model_free(&m);
}

/* A recording without clock pairs is merged as it is, and said to be. */
static void test_merge_without_pairs(void)
{
	struct synth s = {0};
	struct model m, other;

	rank_model(&m, 0, 100, 1, 0);
	synth_comm(&s, 200, 200, "other");
	synth_model(&s, &other, 0);
	model_merge(&m, &other);
	model_merge_end(&m);
	CHECK(!m.ranks.v[1].clock_pairs);
	CHECK_EQ_U64(m.ranks.v[1].shift_ns, 0);
	/* No rank said: its place among the recordings. */
	CHECK(!m.ranks.v[1].has_rank && m.ranks.v[1].rank == 1);
	CHECK_EQ_U64(model_rank_of(&m, 200), 1);
	model_free(&m);
}

static void test_output_name(void)
{
	struct job_rank r = { 3, 1, 8, "RANK", NULL }, none = { -1, -1, -1, NULL, NULL };
	char out[64], bad = 0;

	CHECK(!job_output_name("run/g.%r.%l.%h.%p.%%.data", &r, "node7.cluster", 42, out,
			       sizeof(out), &bad));
	CHECK_STREQ(out, "run/g.3.1.node7.42.%.data");
	CHECK(job_output_name("g.%r", &none, "h", 1, out, sizeof(out), &bad) == -ENOENT);
	CHECK(job_output_name("g.%q", &r, "h", 1, out, sizeof(out), &bad) == -EINVAL && bad == 'q');
	CHECK(job_output_name("g.%", &r, "h", 1, out, sizeof(out), &bad) == -EINVAL);
	CHECK(job_output_name("0123456789%r", &r, "h", 1, out, 8, &bad) == -ENAMETOOLONG);
}

static void test_rank_from_env(void)
{
	struct job_rank r;

	unsetenv("RANK");
	setenv("OMPI_COMM_WORLD_RANK", "2", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
	setenv("SLURM_PROCID", "9", 1);
	job_rank_from_env(&r);
	CHECK(r.rank == 2 && r.local_rank == 0 && r.world_size == 4);
	CHECK_STREQ(r.from, "OMPI_COMM_WORLD_RANK");
	/* torchrun's workers come first, even under mpirun or srun. */
	setenv("RANK", "5", 1);
	job_rank_from_env(&r);
	CHECK(r.rank == 5 && r.local_rank == -1);
	CHECK(r.malformed == NULL);
	/* A value that is no whole number is passed over, and named. */
	setenv("RANK", "x", 1);
	job_rank_from_env(&r);
	CHECK_EQ_U64(r.rank, 2);
	CHECK_STREQ(r.malformed, "RANK");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("SLURM_PROCID");
	setenv("RANK", "-1", 1);
	job_rank_from_env(&r);
	CHECK(r.rank == -1 && r.from == NULL);
	CHECK_STREQ(r.malformed, "RANK");
	setenv("RANK", "4", 1);
	setenv("LOCAL_RANK", "1x", 1);
	job_rank_from_env(&r);
	CHECK(r.rank == 4 && r.local_rank == -1);
	CHECK_STREQ(r.malformed, "LOCAL_RANK");
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
}

int main(void)
{
	RUN(test_merge);
	RUN(test_merge_without_pairs);
	RUN(test_output_name);
	RUN(test_rank_from_env);
	return test_summary();
}
