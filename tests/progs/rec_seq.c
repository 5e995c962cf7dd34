/*
 * rec_seq — a fixed single-thread sequence of heap calls between two marker
 * allocations (777001 and 777002 bytes). Prints the calls it made, in
 * `alloctrace dump` format minus SEQ/TID; the trace must hold exactly these
 * lines, in this order, between the markers.
 */
#include <stdlib.h>
#include <unistd.h>
#include "rec_expect.h"

int main(void)
{
	void *m1 = malloc(777001);
	expect("malloc 777001 = 0x%lx", P(m1));
	void *a = malloc(10);
	expect("malloc 10 = 0x%lx", P(a));
	void *b = calloc(3, 8);
	expect("calloc 3 8 = 0x%lx", P(b));
	void *c = malloc(100);
	expect("malloc 100 = 0x%lx", P(c));
	void *a2 = realloc(a, 200);
	expect("realloc 0x%lx 200 = 0x%lx", P(a), P(a2));
	free(b);
	expect("free 0x%lx", P(b));
	void *d = malloc(0);
	expect("malloc 0 = 0x%lx", P(d));
	free(NULL);
	expect("free 0x0");
	void *e = calloc(0, 5);
	expect("calloc 0 5 = 0x%lx", P(e));
	free(c);
	expect("free 0x%lx", P(c));
	free(a2);
	expect("free 0x%lx", P(a2));
	free(d);
	expect("free 0x%lx", P(d));
	free(e);
	expect("free 0x%lx", P(e));
	free(m1);
	expect("free 0x%lx", P(m1));
	void *m2 = malloc(777002);
	expect("malloc 777002 = 0x%lx", P(m2));
	free(m2);
	printf("pid %d\n", (int)getpid());
	expect_print();
	return 0;
}
