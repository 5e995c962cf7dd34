/*
 * rec_diffleak — one program's heap work, the same every run, for
 * `alloctrace diff` (tests/e2e/trace_diff.sh) and the CI example of
 * docs/CI.md.
 *
 *   rec_diffleak [--leak]
 *
 * Three allocation sites, each reached through its own caller chain:
 * churn() (short-lived blocks of 32..144 bytes, 2000 of them), keep()
 * (200 blocks of 256 bytes, held to the end, then freed) and grow() (a
 * buffer realloc'ed from 64 bytes to 64 KiB). Everything is freed. With
 * --leak, leak_site() first allocates one more block of DIFFLEAK_BYTES and
 * never frees it: a trace of that run differs from one without by exactly
 * that call, its bytes (requested, leaked, and live at the peak, which it
 * raises by as much) and its site; lifetimes in events do not move, the
 * extra event coming before every allocation that is freed.
 *
 * No stdio, no environment lookup, nothing whose heap use depends on the
 * machine: two runs make the same calls in the same order.
 */
#include <stdlib.h>
#include <string.h>

#define DIFFLEAK_BYTES 4000

static void *volatile sink;

__attribute__((noinline)) static void churn(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(32 + (size_t)(i % 8) * 16);
		if (!p)
			abort();
		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

__attribute__((noinline)) static char **keep(int n)
{
	char **v = calloc((size_t)n, sizeof *v);
	if (!v)
		abort();
	for (int i = 0; i < n; i++)
		if (!(v[i] = malloc(256)))
			abort();
	return v;
}

__attribute__((noinline)) static void grow(void)
{
	char *b = NULL;
	for (size_t n = 64; n <= 65536; n *= 2) {
		char *q = realloc(b, n);
		if (!q)
			abort();
		b = q;
		memset(b, 1, n);
	}
	free(b);
}

__attribute__((noinline)) static void leak_site(void)
{
	char *p = malloc(DIFFLEAK_BYTES);
	if (!p)
		abort();
	p[0] = 1;
	sink = p; /* never freed */
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--leak"))
		leak_site();
	char **kept = keep(200);
	churn(2000);
	grow();
	for (int i = 0; i < 200; i++)
		free(kept[i]);
	free(kept);
	return 0;
}
