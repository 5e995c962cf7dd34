/*
 * wl_decode.c — see wl_decode.h. A single producer and a single consumer
 * share a ring of batches under one mutex: they meet once per batch,
 * so the lock costs nothing measurable, and the producer blocks only when
 * the consumer is AR_WLD_RING batches behind.
 */
#include <stdlib.h>

#include "wl_decode.h"

static void *produce(void *arg)
{
	ar_wl_decoder_t *d = arg;
	int rc = 1;
	while (rc == 1) {
		pthread_mutex_lock(&d->lock);
		while (!d->stop && d->produced - d->consumed >= AR_WLD_RING)
			pthread_cond_wait(&d->cond, &d->lock);
		int stop = d->stop;
		pthread_mutex_unlock(&d->lock);
		if (stop)
			break;
		/* The slot produced % RING is ours until `produced` moves past it. */
		ar_wld_batch_t *b = &d->ring[d->produced % AR_WLD_RING];
		b->n = 0;
		while (b->n < AR_WLD_BATCH && (rc = ar_reader_next_merged(d->r, &b->ev[b->n])) == 1)
			b->n++;
		pthread_mutex_lock(&d->lock);
		if (b->n)
			d->produced++;
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_lock(&d->lock);
	d->done = 1;
	d->rc = rc < 0 ? rc : 0;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int ar_wld_start(ar_wl_decoder_t *d, ar_reader_t *r)
{
	*d = (ar_wl_decoder_t){.r = r};
	d->ring = malloc(AR_WLD_RING * sizeof *d->ring);
	if (!d->ring)
		return AR_ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if (pthread_create(&d->thread, NULL, produce, d) != 0) {
		free(d->ring);
		d->ring = NULL;
		return AR_ENOMEM;
	}
	return 0;
}

int ar_wld_next_batch(ar_wl_decoder_t *d, const ar_event_t **e)
{
	pthread_mutex_lock(&d->lock);
	if (d->cur) { /* hand the batch back: its last event is no longer in use */
		d->cur = NULL;
		d->pos = d->n = 0;
		d->consumed++;
		pthread_cond_broadcast(&d->cond);
	}
	while (d->consumed == d->produced && !d->done)
		pthread_cond_wait(&d->cond, &d->lock);
	int have = d->consumed < d->produced, rc = d->rc;
	pthread_mutex_unlock(&d->lock);
	if (!have)
		return rc;
	/* batches are only published with n > 0 */
	d->cur = &d->ring[d->consumed % AR_WLD_RING];
	d->n = d->cur->n;
	d->pos = 1;
	*e = &d->cur->ev[0];
	return 1;
}

void ar_wld_finish(ar_wl_decoder_t *d)
{
	if (!d->ring)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d->ring);
	d->ring = NULL;
	d->cur = NULL;
	d->pos = d->n = 0;
}
