/*
 * rec_aligned — every aligned-allocation function, including failures (bad
 * alignment, sizes no allocator can serve). Prints the expected dump lines
 * between markers 777011 and 777012, then the return codes and errno values
 * the program saw, which must be the same recorded or not.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include "rec_expect.h"

static char results[4096];
static size_t rlen;
#define RES(...) (rlen += (size_t)snprintf(results + rlen, sizeof results - rlen, __VA_ARGS__))

int main(void)
{
	void *m1 = malloc(777011);
	expect("malloc 777011 = 0x%lx", P(m1));
	void *p = NULL;
	int rc = posix_memalign(&p, 64, 100);
	expect("posix_memalign 64 100 = 0x%lx", P(rc == 0 ? p : NULL));
	RES("posix_memalign ok rc=%d aligned=%d\n", rc, ((uintptr_t)p & 63) == 0);
	void *q = (void *)0x1;
	rc = posix_memalign(&q, 3, 100);
	expect("posix_memalign 3 100 = 0x0");
	RES("posix_memalign bad-align rc=%d untouched=%d\n", rc, q == (void *)0x1);
	rc = posix_memalign(&q, 64, SIZE_MAX / 2);
	expect("posix_memalign 64 %zu = 0x0", SIZE_MAX / 2);
	RES("posix_memalign huge rc=%d\n", rc);
	void *a = aligned_alloc(4096, 8192);
	expect("aligned_alloc 4096 8192 = 0x%lx", P(a));
	errno = 0;
	void *a2 = aligned_alloc(64, SIZE_MAX - 100);
	expect("aligned_alloc 64 %zu = 0x%lx", SIZE_MAX - 100, P(a2));
	RES("aligned_alloc huge null=%d errno=%d\n", a2 == NULL, errno);
	void *m = memalign(128, 1000);
	expect("memalign 128 1000 = 0x%lx", P(m));
	errno = 0;
	void *m2 = memalign(64, SIZE_MAX - 100);
	expect("memalign 64 %zu = 0x%lx", SIZE_MAX - 100, P(m2));
	RES("memalign huge null=%d errno=%d\n", m2 == NULL, errno);
	void *v = valloc(5000);
	expect("valloc 5000 = 0x%lx", P(v));
	errno = 0;
	void *v2 = valloc(SIZE_MAX - 100);
	expect("valloc %zu = 0x%lx", SIZE_MAX - 100, P(v2));
	RES("valloc huge null=%d errno=%d\n", v2 == NULL, errno);
	void *pv = pvalloc(100);
	expect("pvalloc 100 = 0x%lx", P(pv));
	RES("usable pvalloc>=4096 %d\n", malloc_usable_size(pv) >= 4096);
	void *cal = calloc(SIZE_MAX / 2, 4);
	expect("calloc %zu 4 = 0x%lx", SIZE_MAX / 2, P(cal));
	RES("calloc overflow null=%d errno=%d\n", cal == NULL, errno);
	free(p);
	expect("free 0x%lx", P(p));
	free(a);
	expect("free 0x%lx", P(a));
	free(m);
	expect("free 0x%lx", P(m));
	free(v);
	expect("free 0x%lx", P(v));
	free(pv);
	expect("free 0x%lx", P(pv));
	void *m3 = malloc(777012);
	expect("malloc 777012 = 0x%lx", P(m3));
	free(m3);
	free(m1);
	fputs(results, stdout);
	fputs("--\n", stdout);
	expect_print();
	return 0;
}
