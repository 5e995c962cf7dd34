/* rec_dllib — a library loaded with dlopen that allocates on its own. */
#include <stdlib.h>

__attribute__((visibility("default"))) int dllib_work(int n);

__attribute__((noinline)) static void *dllib_alloc(void)
{
	return malloc(3333);
}

int dllib_work(int n)
{
	void *blocks[64];
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		blocks[i] = dllib_alloc();
	for (int i = 0; i < n; i++)
		free(blocks[i]);
	return n;
}
