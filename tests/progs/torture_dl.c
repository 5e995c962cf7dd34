/*
 * torture_dl ITERS THREADS LIB... — dlopen/dlclose loops while other threads
 * allocate (tests/e2e/torture_rec_dl.sh).
 *
 * THREADS threads each do ITERS rounds of: dlopen the next LIB (round-robin,
 * so the same and different libraries are loaded and unloaded concurrently),
 * dllib_work(8) (8 mallocs of 3333 bytes inside the library, then 8 frees),
 * dlclose. One more thread runs tt_mix for as long as they do.
 * Output: the tt_mix counts, "dllib malloc N", "dllib free N", "info dlopen N".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "torture.h"

static tt_counts_t counts;
static _Atomic uint64_t dl_mallocs, dlopens;
static _Atomic int stop, failed;
static unsigned iters, nlibs;
static char **libs;

static void *looper(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	for (unsigned i = 0; i < iters; i++) {
		void *h = dlopen(libs[(i + t) % nlibs], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			atomic_store(&failed, 1);
			return NULL;
		}
		atomic_fetch_add(&dlopens, 1);
		int (*work)(int) = (int (*)(int))dlsym(h, "dllib_work");
		if (work)
			atomic_fetch_add(&dl_mallocs, (uint64_t)work(8));
		dlclose(h);
	}
	return NULL;
}

static void *mixer(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&stop); i++)
		tt_mix(i, &counts);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: torture_dl ITERS THREADS LIB...\n");
		return 2;
	}
	iters = (unsigned)atoi(argv[1]);
	unsigned nt = (unsigned)atoi(argv[2]);
	libs = argv + 3;
	nlibs = (unsigned)(argc - 3);
	pthread_t t[64], m;
	if (nt < 1 || nt > 64)
		return 2;
	pthread_create(&m, NULL, mixer, NULL);
	for (unsigned i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, looper, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(m, NULL);
	tt_print_counts(stdout, &counts);
	printf("dllib malloc %llu\ndllib free %llu\ninfo dlopen %llu\n", (unsigned long long)dl_mallocs,
	       (unsigned long long)dl_mallocs, (unsigned long long)dlopens);
	return atomic_load(&failed) ? 1 : 0;
}
