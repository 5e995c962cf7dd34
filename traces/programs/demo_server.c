/*
 * demo_server.c — the program `make demo` records: a small multi-threaded
 * "request server" whose heap use looks like a real one's. Each worker
 * thread takes requests from a shared queue; a request allocates a context
 * (1-4 KiB), splits its payload into small strings, grows a response buffer
 * with realloc, and stores the result in a shared cache (a chained hash map)
 * that evicts its oldest entries — so one thread frees what another
 * allocated. The calls each request makes are fixed by its number, so the
 * number of heap calls is the same every run; which thread serves which
 * request, and so the printed checksum of evicted bytes, depends on timing.
 *
 *   demo_server [REQUESTS] [THREADS]      (default 40000 2)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BUCKETS 4096
#define CACHE_MAX 20000

typedef struct entry {
	struct entry *next, *older, *newer;
	char *key;
	char *value;
	size_t value_len;
} entry_t;

static struct {
	pthread_mutex_t lock;
	entry_t *buckets[CACHE_BUCKETS];
	entry_t *oldest, *newest;
	size_t count;
	uint64_t checksum;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static long next_request, total_requests;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % CACHE_BUCKETS;
}

static void unlink_entry(entry_t *e)
{
	entry_t **pp = &cache.buckets[hash(e->key)];
	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	if (e->older)
		e->older->newer = e->newer;
	else
		cache.oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		cache.newest = e->older;
	cache.count--;
}

/* Insert or replace; evicts the oldest entries beyond CACHE_MAX. */
static void cache_put(char *key, char *value, size_t len)
{
	pthread_mutex_lock(&cache.lock);
	unsigned h = hash(key);
	for (entry_t *e = cache.buckets[h]; e; e = e->next) {
		if (strcmp(e->key, key) == 0) {
			unlink_entry(e);
			free(e->key);
			free(e->value);
			free(e);
			break;
		}
	}
	entry_t *e = malloc(sizeof *e);
	if (!e) {
		pthread_mutex_unlock(&cache.lock);
		free(key);
		free(value);
		return;
	}
	*e = (entry_t){cache.buckets[h], cache.newest, NULL, key, value, len};
	cache.buckets[h] = e;
	if (cache.newest)
		cache.newest->newer = e;
	else
		cache.oldest = e;
	cache.newest = e;
	cache.count++;
	while (cache.count > CACHE_MAX) {
		entry_t *old = cache.oldest;
		unlink_entry(old);
		cache.checksum += old->value_len;
		free(old->key);
		free(old->value);
		free(old);
	}
	pthread_mutex_unlock(&cache.lock);
}

static void handle(long id)
{
	uint64_t r = mix((uint64_t)id + 1);
	size_t ctx_len = 1024 + r % 3072;
	char *ctx = malloc(ctx_len);
	if (!ctx)
		return;
	memset(ctx, 'a' + (int)(r % 26), ctx_len);
	/* Split the payload into fields: many small, short-lived strings. */
	size_t nfields = 4 + (r >> 12) % 12;
	char **fields = calloc(nfields, sizeof *fields);
	for (size_t i = 0; fields && i < nfields; i++) {
		size_t n = 8 + mix(r + i) % 120;
		fields[i] = malloc(n + 1);
		if (fields[i]) {
			memcpy(fields[i], ctx + (i * 7) % (ctx_len - n), n);
			fields[i][n] = 0;
		}
	}
	/* Build the response by appending, growing the buffer as we go. */
	size_t cap = 64, len = 0;
	char *resp = malloc(cap);
	for (size_t i = 0; resp && fields && i < nfields; i++) {
		size_t n = fields[i] ? strlen(fields[i]) : 0;
		if (len + n + 2 > cap) {
			while (len + n + 2 > cap)
				cap *= 2;
			char *p = realloc(resp, cap);
			if (!p)
				break;
			resp = p;
		}
		memcpy(resp + len, fields[i] ? fields[i] : "", n);
		len += n;
		resp[len++] = ';';
		resp[len] = 0;
	}
	for (size_t i = 0; fields && i < nfields; i++)
		free(fields[i]);
	free(fields);
	free(ctx);
	/* Keys repeat (1 in 4 requests hits an existing key): replaced entries. */
	char *key = malloc(24);
	if (key && resp) {
		snprintf(key, 24, "k%llu", (unsigned long long)(mix(r) % (uint64_t)(total_requests * 3 / 4 + 1)));
		cache_put(key, resp, len);
	} else {
		free(key);
		free(resp);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&queue_lock);
		long id = next_request < total_requests ? next_request++ : -1;
		pthread_mutex_unlock(&queue_lock);
		if (id < 0)
			return NULL;
		handle(id);
	}
}

int main(int argc, char **argv)
{
	total_requests = argc > 1 ? atol(argv[1]) : 40000;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	if (total_requests < 1 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: demo_server [REQUESTS] [THREADS]\n");
		return 1;
	}
	pthread_t t[64];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	/* Drain the cache so the heap ends empty, as a clean shutdown does. */
	while (cache.oldest) {
		entry_t *e = cache.oldest;
		unlink_entry(e);
		cache.checksum += e->value_len;
		free(e->key);
		free(e->value);
		free(e);
	}
	printf("demo_server: %ld requests on %d threads, checksum %llu\n", total_requests, threads,
	       (unsigned long long)cache.checksum);
	return 0;
}
