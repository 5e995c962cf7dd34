/*
 * rec_sites.c — one allocation line reached by three call paths, with
 * figures known from the arguments, for `alloctrace stacks` and its sites
 * (tests/e2e/stacks_sites.sh):
 *
 *   rec_sites NB NC NA
 *   path_b: NB blocks of 200 bytes, kept;
 *   path_c: NC blocks of 300 bytes, through an inlined helper, never freed;
 *   then every block of path_b is freed (oldest first);
 *   path_a: NA times a block of 100 bytes freed right away.
 *
 * So live bytes peak after path_c's last allocation: path_b's NB blocks and
 * path_c's NC live then; path_a's blocks are all temporary (freed with no
 * allocation in between), path_b's none (path_c allocated after them);
 * path_c's NC blocks leak. The program makes no other heap call (no stdio).
 */
#include <stdlib.h>
#include <unistd.h>

void *volatile rec_sites_sink;

/* The one allocation line. */
__attribute__((noinline, noclone)) void *make_block(size_t n)
{
	void *p = malloc(n);
	rec_sites_sink = p;
	return p;
}

static void *kept[100000];

__attribute__((noinline, noclone)) void path_a(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = make_block(100);
		free(p);
	}
	rec_sites_sink = NULL;
}

__attribute__((noinline, noclone)) void path_b(int n)
{
	for (int i = 0; i < n; i++)
		kept[i] = make_block(200);
	rec_sites_sink = NULL;
}

/* Inlined into path_c: its frame comes from the DWARF inline records. */
static inline __attribute__((always_inline)) void *leak_block(void)
{
	void *p = make_block(300);
	rec_sites_sink = p;
	return p;
}

__attribute__((noinline, noclone)) void path_c(int n)
{
	for (int i = 0; i < n; i++)
		leak_block();
	rec_sites_sink = NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 1;
	int nb = atoi(argv[1]), nc = atoi(argv[2]), na = atoi(argv[3]);
	if (nb < 0 || nb > 100000 || nc < 0 || na < 0)
		return 1;
	path_b(nb);
	path_c(nc);
	for (int i = 0; i < nb; i++)
		free(kept[i]);
	path_a(na);
	return 0;
}
