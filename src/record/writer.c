/* SPDX-License-Identifier: MIT */
#include "record/writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "util/xalloc.h"

struct chunk_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tr_writer *out;
	struct tr_tables *pending;	/* being written; owned by the thread while busy */
	struct gbuf payload;
	bool busy;
	bool stopping;
	int err;			/* the first failure: later chunks are not written */
};

static void write_pending(struct chunk_writer *cw)
{
	int err = 0;

	if (!cw->err) {
		gbuf_reset(&cw->payload);
		tr_tables_encode(cw->pending, &cw->payload);
		err = tr_writer_put(cw->out, TR_CHUNK_TABLES, cw->payload.data,
				    cw->payload.len);
	}
	tr_tables_clear(cw->pending);
	pthread_mutex_lock(&cw->lock);
	if (err && !cw->err)
		cw->err = err;
	cw->busy = false;
	pthread_cond_broadcast(&cw->cond);
	pthread_mutex_unlock(&cw->lock);
}

static void *writer_main(void *arg)
{
	struct chunk_writer *cw = arg;

	for (;;) {
		pthread_mutex_lock(&cw->lock);
		while (!cw->busy && !cw->stopping)
			pthread_cond_wait(&cw->cond, &cw->lock);
		if (!cw->busy) {
			pthread_mutex_unlock(&cw->lock);
			return NULL;
		}
		pthread_mutex_unlock(&cw->lock);
		write_pending(cw);
	}
}

int chunk_writer_start(struct chunk_writer **out, struct tr_writer *w)
{
	struct chunk_writer *cw = xcalloc(1, sizeof(*cw));
	int err;

	cw->out = w;
	cw->pending = xcalloc(1, sizeof(*cw->pending));
	pthread_mutex_init(&cw->lock, NULL);
	pthread_cond_init(&cw->cond, NULL);
	err = pthread_create(&cw->thread, NULL, writer_main, cw);
	if (err) {
		pthread_mutex_destroy(&cw->lock);
		pthread_cond_destroy(&cw->cond);
		free(cw->pending);
		free(cw);
		return -err;
	}
	*out = cw;
	return 0;
}

bool chunk_writer_hand(struct chunk_writer *cw, struct tr_tables **t, bool wait)
{
	struct tr_tables *empty;

	pthread_mutex_lock(&cw->lock);
	while (wait && cw->busy)
		pthread_cond_wait(&cw->cond, &cw->lock);
	if (cw->busy) {
		pthread_mutex_unlock(&cw->lock);
		return false;
	}
	empty = cw->pending;
	cw->pending = *t;
	*t = empty;
	cw->busy = true;
	pthread_cond_broadcast(&cw->cond);
	pthread_mutex_unlock(&cw->lock);
	return true;
}

int chunk_writer_stop(struct chunk_writer *cw, bool end)
{
	int err;

	pthread_mutex_lock(&cw->lock);
	cw->stopping = true;
	pthread_cond_broadcast(&cw->cond);
	pthread_mutex_unlock(&cw->lock);
	pthread_join(cw->thread, NULL);

	err = cw->err;
	if (!err && end)
		err = tr_writer_put(cw->out, TR_CHUNK_END, NULL, 0);
	tr_tables_free(cw->pending);
	free(cw->pending);
	gbuf_free(&cw->payload);
	pthread_mutex_destroy(&cw->lock);
	pthread_cond_destroy(&cw->cond);
	free(cw);
	return err;
}
