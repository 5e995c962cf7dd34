/*
 * rec_server — a long-running multi-threaded program for attach tests
 * (tests/e2e/rec_attach.sh): allocrec -p attaches to it and detaches while
 * it works.
 *
 *   rec_server STATUS [THREADS] [DLLIB]
 *
 * THREADS workers (default 4) allocate with every heap function, fill each
 * block with a pattern derived from its own address and size, and check
 * the pattern before freeing it: a block the recorder disturbed (or an
 * allocator mix-up after a rebinding) is counted as an error. Each round
 * also calls strdup on a 777-byte string: glibc's own call to malloc
 * (malloc 778 in a trace) shows whether libc's bindings were rebound too.
 *
 * Every 50 ms the main thread rewrites STATUS (a rename, so readers never
 * see half a file):
 *   rounds N          work done so far (grows while the program is alive)
 *   errors E          corrupted blocks found
 *   malloc_in NAME    the object that &malloc, read through this
 *                     executable's GOT now, belongs to (libc.so.6, or
 *                     liballocrr-rec.so while attached; rec_server_nopie
 *                     itself when built without PIE)
 *   free_in NAME      the same for &free
 *   dllib N           calls made into DLLIB so far
 * When the file STATUS.dlopen appears, the main thread dlopens DLLIB and
 * from then on calls its dllib_work (malloc 3333) each tick. On SIGTERM or
 * SIGINT it stops, prints "rec_server: rounds N errors E" and exits 0 when
 * E is 0, 1 otherwise.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 256

static atomic_int stop;
static atomic_ulong rounds, errors;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static unsigned char pattern(const void *p, size_t size, size_t i)
{
	return (unsigned char)(((uintptr_t)p >> 4) ^ size ^ (i * 131));
}

static void fill(unsigned char *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		p[i] = pattern(p, size, i);
}

/* The pattern of a block that moved (realloc) is that of its old address:
 * checked against the address it had when filled. */
static void check(const unsigned char *p, const void *filled_at, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] != pattern(filled_at, size, i)) {
			atomic_fetch_add(&errors, 1);
			return;
		}
}

typedef struct slot {
	unsigned char *p;
	size_t size;
} slot_t;

static unsigned char *allocate(unsigned *seed, size_t size)
{
	void *p = NULL;
	switch (rand_r(seed) % 6) {
	case 0:
		return malloc(size);
	case 1:
		return calloc(1, size);
	case 2:
		return posix_memalign(&p, 64, size) == 0 ? p : NULL;
	case 3:
		return aligned_alloc(32, (size + 31) & ~(size_t)31);
	case 4:
		return reallocarray(NULL, size, 1);
	default:
		return realloc(NULL, size);
	}
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
	slot_t slots[SLOTS] = {{0}};
	static const char text[778] = {[0 ... 776] = 'x'};
	while (!atomic_load(&stop)) {
		for (int k = 0; k < 64; k++) {
			slot_t *s = &slots[rand_r(&seed) % SLOTS];
			if (s->p) {
				check(s->p, s->p, s->size);
				if (rand_r(&seed) % 4 == 0) {
					size_t n = 1 + rand_r(&seed) % 2000;
					unsigned char *q = realloc(s->p, n);
					if (q) {
						size_t keep = n < s->size ? n : s->size;
						/* the kept bytes still carry the old address's pattern */
						for (size_t i = 0; i < keep; i++)
							if (q[i] != pattern(s->p, s->size, i)) {
								atomic_fetch_add(&errors, 1);
								break;
							}
						fill(q, n);
						s->p = q;
						s->size = n;
					}
					continue;
				}
				free(s->p);
				s->p = NULL;
			} else {
				size_t n = 1 + rand_r(&seed) % 4000;
				s->p = allocate(&seed, n);
				s->size = s->p ? n : 0;
				if (s->p)
					fill(s->p, n);
			}
		}
		char *d = strdup(text); /* libc's own malloc call */
		if (!d || strlen(d) != 777)
			atomic_fetch_add(&errors, 1);
		free(d);
		atomic_fetch_add(&rounds, 1);
		struct timespec ts = {0, 200000}; /* 0.2 ms: leave the machine to the test */
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].p) {
			check(slots[i].p, slots[i].p, slots[i].size);
			free(slots[i].p);
		}
	return NULL;
}

/* The object a function address points into. */
static const char *object_of(void *fn)
{
	Dl_info info;
	if (!dladdr(fn, &info) || !info.dli_fname)
		return "?";
	const char *b = strrchr(info.dli_fname, '/');
	return b ? b + 1 : info.dli_fname;
}

/* &malloc and &free as this executable's GOT says now. Built without PIE
 * (rec_server_nopie), taking their addresses makes the executable's own
 * PLT stubs their canonical addresses, everywhere (as Debian's python3
 * does for free): the case where the recorder must not forward to them. */
static void *(*volatile malloc_ptr)(size_t);
static void (*volatile free_ptr)(void *);

static void write_status(const char *path, unsigned long dllib)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	malloc_ptr = malloc;
	free_ptr = free;
	fprintf(f, "rounds %lu\nerrors %lu\nmalloc_in %s\nfree_in %s\ndllib %lu\n", atomic_load(&rounds),
		atomic_load(&errors), object_of((void *)malloc_ptr), object_of((void *)free_ptr), dllib);
	fclose(f);
	rename(tmp, path);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rec_server STATUS [THREADS] [DLLIB]\n");
		return 2;
	}
	int nthreads = argc > 2 ? atoi(argv[2]) : 4;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 4;
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	pthread_t th[64];
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	char trigger[4096];
	snprintf(trigger, sizeof trigger, "%s.dlopen", argv[1]);
	int (*work)(int) = NULL;
	int tried = 0;
	unsigned long dllib = 0;
	while (!atomic_load(&stop)) {
		if (!tried && argc > 3 && access(trigger, F_OK) == 0) {
			tried = 1;
			void *h = dlopen(argv[3], RTLD_NOW);
			if (h)
				*(void **)&work = dlsym(h, "dllib_work");
			if (!work)
				fprintf(stderr, "rec_server: dlopen %s: %s\n", argv[3], dlerror());
		}
		if (work)
			dllib += work(4) > 0;
		write_status(argv[1], dllib);
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	write_status(argv[1], dllib);
	printf("rec_server: rounds %lu errors %lu\n", atomic_load(&rounds), atomic_load(&errors));
	return atomic_load(&errors) ? 1 : 0;
}
