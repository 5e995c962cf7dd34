/*
 * rec_dlopen LIB — dlopen a library that allocates (10 x 3333 bytes inside
 * dllib_work) and dlclose it.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*work)(int) = (int (*)(int))dlsym(h, "dllib_work");
	int n = work ? work(10) : -1;
	printf("work %d\n", n);
	dlclose(h);
	return n == 10 ? 0 : 1;
}
