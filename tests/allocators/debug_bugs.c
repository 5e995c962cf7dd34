/*
 * debug_bugs.c — deliberate heap bugs for the debug build of our allocators
 * (liballocrr-NAME-debug.so); tests/e2e/torture_alloc_debug.sh runs each
 * case under each debug variant and expects the debug layer to abort with
 * the right message. Only ever run under a debug variant: under any other
 * malloc these cases are undefined behaviour, not a test.
 *
 *   debug_bugs CASE [SIZE]
 *
 * Cases that must be caught (the program prints "NOT CAUGHT" and exits 3
 * when it survives the bug):
 *   overflow-malloc|overflow-calloc|overflow-memalign|overflow-realloc-grow
 *       write one byte just past SIZE requested bytes, then free (realloc:
 *       grow it first, write past the new size), caught on free();
 *   overflow-realloc  write one byte past SIZE, then realloc: caught in realloc();
 *   double-free       free twice;
 *   double-free-realloc  free, then realloc the freed pointer;
 *   write-after-free  free, write one byte in the middle, then allocate and
 *       free SIZE-byte blocks until the block leaves the quarantine;
 *   write-after-free-exit  free, write its first byte, exit normally
 *       (caught by the check at exit);
 *   free-interior     free(p + 16) of a live block;
 *   free-static       free a pointer into a static array;
 *   free-stack        free a pointer to a local array;
 *   realloc-foreign   realloc a pointer into a static array.
 * Case that must pass (exit 0, prints "patterns ok"):
 *   patterns  new blocks read 0xa5, calloc'd ones 0, realloc's new bytes 0xa5
 *       with the old ones kept, malloc_usable_size is the requested size, and
 *       a freed block reads 0x5a (it sits in the quarantine).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hide where a pointer came from, so the compiler neither warns about the
 * deliberate bug nor optimises it away. */
static void *launder(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static void poke(void *p, size_t off)
{
	volatile unsigned char *c = launder(p);
	c[off] = 'x';
}

static unsigned char static_buf[256];

static int not_caught(const char *what)
{
	printf("NOT CAUGHT: %s\n", what);
	return 3;
}

/* Every byte of [p, p+n) equals b. */
static int all(const void *p, size_t n, unsigned char b)
{
	const volatile unsigned char *c = launder((void *)(uintptr_t)p);
	for (size_t i = 0; i < n; i++)
		if (c[i] != b) {
			printf("byte %zu of %zu is 0x%02x, expected 0x%02x\n", i, n, c[i], b);
			return 0;
		}
	return 1;
}

static int patterns(size_t n)
{
	int ok = 1;
	unsigned char *p = malloc(n);
	ok &= p != NULL && all(p, n, 0xa5);
	ok &= malloc_usable_size(p) == n;
	memset(p, 'k', n);
	unsigned char *q = realloc(p, 2 * n + 100);
	ok &= q != NULL && all(q, n, 'k') && all(q + n, n + 100, 0xa5);
	ok &= malloc_usable_size(q) == 2 * n + 100;
	unsigned char *z = calloc(1, n);
	ok &= z != NULL && all(z, n, 0);
	void *a = aligned_alloc(256, n);
	ok &= a != NULL && ((uintptr_t)a & 255) == 0 && all(a, n, 0xa5);
	free(z);
	free(a);
	free(q);
	/* Reading a freed block is the bug the fill makes visible. */
	ok &= all(q, 2 * n + 100 < (1u << 20) ? 2 * n + 100 : 0, 0x5a);
	if (!ok)
		return 1;
	printf("patterns ok (%zu bytes)\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: debug_bugs CASE [SIZE]\n");
		return 1;
	}
	const char *c = argv[1];
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 0) : 24;
	if (n == 0)
		n = 24;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(c, "patterns") == 0)
		return patterns(n);

	if (strcmp(c, "overflow-malloc") == 0 || strcmp(c, "overflow-calloc") == 0 ||
	    strcmp(c, "overflow-memalign") == 0) {
		void *p = strcmp(c, "overflow-malloc") == 0	? malloc(n)
			  : strcmp(c, "overflow-calloc") == 0 ? calloc(n, 1)
							      : aligned_alloc(64, n);
		if (!p)
			return 2;
		poke(p, n);
		free(launder(p));
		return not_caught(c);
	}
	if (strcmp(c, "overflow-realloc-grow") == 0) {
		void *p = realloc(malloc(n), 2 * n);
		if (!p)
			return 2;
		poke(p, 2 * n);
		free(launder(p));
		return not_caught(c);
	}
	if (strcmp(c, "overflow-realloc") == 0) {
		void *p = malloc(n);
		poke(p, n);
		p = realloc(launder(p), 2 * n);
		free(p);
		return not_caught(c);
	}
	if (strcmp(c, "double-free") == 0 || strcmp(c, "double-free-realloc") == 0) {
		void *p = malloc(n);
		free(p);
		if (strcmp(c, "double-free-realloc") == 0)
			p = realloc(launder(p), n + 1);
		else
			free(launder(p));
		return not_caught(c);
	}
	if (strcmp(c, "write-after-free") == 0) {
		void *p = malloc(n);
		free(p);
		poke(p, n / 2);
		for (int i = 0; i < 10000; i++)
			free(launder(malloc(n)));
		return not_caught(c);
	}
	if (strcmp(c, "write-after-free-exit") == 0) {
		void *p = malloc(n);
		free(p);
		poke(p, 0);
		printf("exiting normally\n");
		return 0; /* the exit check must turn this into an abort */
	}
	if (strcmp(c, "free-interior") == 0) {
		static char *live; /* the block whose interior is freed stays live */
		live = malloc(n + 32);
		free(launder(live + 16));
		return not_caught(c);
	}
	if (strcmp(c, "free-static") == 0) {
		free(launder(static_buf + 16));
		return not_caught(c);
	}
	if (strcmp(c, "free-stack") == 0) {
		unsigned char local[64];
		memset(local, 1, sizeof local);
		free(launder(local));
		return not_caught(c);
	}
	if (strcmp(c, "realloc-foreign") == 0) {
		void *p = realloc(launder(static_buf), n);
		free(p);
		return not_caught(c);
	}
	fprintf(stderr, "debug_bugs: unknown case %s\n", c);
	return 1;
}
