/* SPDX-License-Identifier: MIT */
#include "record/unwind-pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/xalloc.h"

/* Fewer samples than this are not worth waking the helpers for. */
#define MIN_SHARED_RUN 32

struct helper {
	struct unwind_pool *pool;
	struct unwinder *u;
	pthread_t thread;
};

struct unwind_pool {
	pthread_mutex_t lock;
	pthread_cond_t start;		/* a run began, or the pool is ending */
	pthread_cond_t done;		/* the last helper finished its share */
	uint64_t round;			/* runs so far */
	unsigned busy;			/* helpers still in this round */
	bool stop;
	struct unwind_job *jobs;
	size_t njobs;
	size_t next;			/* the next job to take, atomically */
	struct helper *helpers;
	unsigned nhelpers;
};

/* Takes jobs until none is left. */
static void take_jobs(struct unwind_pool *p, struct unwinder *u)
{
	size_t i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->njobs) {
		struct unwind_job *job = &p->jobs[i];

		job->outcome = unwind(u, &job->s, job->ips, &job->n);
		job->stack_top = unwinder_stack_top(u, job->s.tid);
	}
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	struct unwind_pool *p = h->pool;
	uint64_t seen = 0;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (!p->stop && p->round == seen)
			pthread_cond_wait(&p->start, &p->lock);
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		seen = p->round;
		pthread_mutex_unlock(&p->lock);

		take_jobs(p, h->u);

		pthread_mutex_lock(&p->lock);
		if (!--p->busy)
			pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
}

int unwind_pool_new(struct unwind_pool **out, unsigned threads, enum unwind_method method,
		    const struct addrspaces *as)
{
	struct unwind_pool *p = xcalloc(1, sizeof(*p));
	sigset_t all, old;
	int err = 0;

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->start, NULL);
	pthread_cond_init(&p->done, NULL);
	p->helpers = xcalloc(threads, sizeof(*p->helpers));
	/* Signals are the recorder's main thread's to take (signalfd): helpers block them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (; p->nhelpers < threads; p->nhelpers++) {
		struct helper *h = &p->helpers[p->nhelpers];

		h->pool = p;
		err = unwinder_new(&h->u, method, as);
		if (err)
			break;
		err = -pthread_create(&h->thread, NULL, helper_main, h);
		if (err) {
			unwinder_free(h->u);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		unwind_pool_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void unwind_pool_free(struct unwind_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nhelpers; i++) {
		pthread_join(p->helpers[i].thread, NULL);
		unwinder_free(p->helpers[i].u);
	}
	free(p->helpers);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->start);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void unwind_pool_run(struct unwind_pool *p, struct unwinder *own, struct unwind_job *jobs,
		     size_t n)
{
	bool shared = p->nhelpers && n >= MIN_SHARED_RUN;

	p->jobs = jobs;
	p->njobs = n;
	p->next = 0;
	if (shared) {
		pthread_mutex_lock(&p->lock);
		p->busy = p->nhelpers;
		p->round++;
		pthread_cond_broadcast(&p->start);
		pthread_mutex_unlock(&p->lock);
	}
	take_jobs(p, own);
	if (shared) {
		pthread_mutex_lock(&p->lock);
		while (p->busy)
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
	/* In sample order, so that what a thread's last sample taught stands. */
	for (size_t i = 0; i < n; i++)
		if (jobs[i].outcome == UNWIND_COMPLETE || jobs[i].outcome == UNWIND_TRUNCATED_STACK)
			unwinder_set_stack_top(own, jobs[i].s.tid, jobs[i].stack_top);
}

void unwind_pool_forget_pid(struct unwind_pool *p, uint32_t pid)
{
	for (unsigned i = 0; i < p->nhelpers; i++)
		unwinder_forget_pid(p->helpers[i].u, pid);
}
