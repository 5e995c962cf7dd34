#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct entry { char key[32]; int value; struct entry *next; };
static unsigned hash(const char *s) { unsigned h = 5381; while (*s) h = h * 33 + (unsigned char)*s++; return h; }
static struct entry *table[1024];
static void put(const char *k, int v) {
	struct entry *e = malloc(sizeof *e); if (!e) exit(1);
	snprintf(e->key, sizeof e->key, "%s", k); e->value = v;
	unsigned h = hash(k) % 1024; e->next = table[h]; table[h] = e;
}
static int get(const char *k) {
	for (struct entry *e = table[hash(k) % 1024]; e; e = e->next) if (!strcmp(e->key, k)) return e->value;
	return -1;
}
int main(int argc, char **argv) {
	char buf[32];
	for (int i = 0; i < 10000; i++) { snprintf(buf, sizeof buf, "k%d", i); put(buf, i * argc); }
	long sum = 0;
	for (int i = 0; i < 10000; i += 7) { snprintf(buf, sizeof buf, "k%d", i); sum += get(buf); }
	printf("%s %ld\n", argv[0], sum);
	return 0;
}
