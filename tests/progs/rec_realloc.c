/*
 * rec_realloc — realloc chains: realloc(NULL, n), growth in place and moving,
 * into and out of mmap'ed sizes, realloc(p, 0) (glibc frees p and returns
 * NULL), reallocarray with and without overflow. Expected dump lines between
 * markers 777021 and 777022.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "rec_expect.h"

int main(void)
{
	void *m1 = malloc(777021);
	expect("malloc 777021 = 0x%lx", P(m1));
	void *p = realloc(NULL, 16);
	expect("realloc 0x0 16 = 0x%lx", P(p));
	size_t sizes[] = {32, 4000, 300000, 1000000, 64, 8};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		void *n = realloc(p, sizes[i]);
		expect("realloc 0x%lx %zu = 0x%lx", P(p), sizes[i], P(n));
		p = n;
	}
	void *z = realloc(p, 0);
	expect("realloc 0x%lx 0 = 0x%lx", P(p), P(z));
	void *e = realloc(NULL, 0);
	expect("realloc 0x0 0 = 0x%lx", P(e));
	void *r = reallocarray(NULL, 10, 10);
	expect("reallocarray 0x0 10 10 = 0x%lx", P(r));
	errno = 0;
	void *r2 = reallocarray(r, SIZE_MAX / 2, 4);
	expect("reallocarray 0x%lx %zu 4 = 0x%lx", P(r), SIZE_MAX / 2, P(r2));
	int err = errno;
	void *r3 = reallocarray(r, 20, 10);
	expect("reallocarray 0x%lx 20 10 = 0x%lx", P(r), P(r3));
	void *big = realloc(NULL, SIZE_MAX - 4096);
	expect("realloc 0x0 %zu = 0x%lx", SIZE_MAX - 4096, P(big));
	free(r3);
	expect("free 0x%lx", P(r3));
	free(e);
	expect("free 0x%lx", P(e));
	void *m2 = malloc(777022);
	expect("malloc 777022 = 0x%lx", P(m2));
	free(m2);
	free(m1);
	printf("overflow null=%d errno=%d\n--\n", r2 == NULL, err);
	expect_print();
	return 0;
}
