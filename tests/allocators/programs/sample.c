/*
 * sample.c — a small C program for tests/e2e/alloc_programs.sh: gcc compiles
 * it under each allocator (the compiler's own allocations are what is
 * tested); the object file and the program's output must not change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *left, *right;
	long key;
	char name[24];
};

static struct node *insert(struct node *t, long key)
{
	if (!t) {
		struct node *n = calloc(1, sizeof *n);
		n->key = key;
		snprintf(n->name, sizeof n->name, "k%ld", key);
		return n;
	}
	if (key < t->key)
		t->left = insert(t->left, key);
	else if (key > t->key)
		t->right = insert(t->right, key);
	return t;
}

static long walk(const struct node *t, long depth, long *maxdepth)
{
	if (!t)
		return 0;
	if (depth > *maxdepth)
		*maxdepth = depth;
	return t->key + (long)strlen(t->name) + walk(t->left, depth + 1, maxdepth) +
	       walk(t->right, depth + 1, maxdepth);
}

static void release(struct node *t)
{
	if (!t)
		return;
	release(t->left);
	release(t->right);
	free(t);
}

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	struct node *root = NULL;
	unsigned long x = 12345;
	long keys[5000];
	for (int i = 0; i < 5000; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		keys[i] = (long)(x >> 40);
		root = insert(root, keys[i]);
	}
	long depth = 0, sum = walk(root, 0, &depth);
	qsort(keys, 5000, sizeof keys[0], cmp);
	printf("sum=%ld depth=%ld min=%ld max=%ld median=%ld\n", sum, depth, keys[0], keys[4999],
	       keys[2500]);
	release(root);
	return 0;
}
