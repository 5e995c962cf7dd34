/*
 * rec_exit MODE — ending without the usual exit path, after 500
 * allocations of 7777 bytes:
 *   _exit   _exit(5): no atexit handlers, no destructors
 *   thread  a second thread calls exit(4) while main waits in pthread_join
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *quitter(void *arg)
{
	(void)arg;
	free(malloc(99));
	exit(4);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 500; i++)
		malloc(7777);
	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, quitter, NULL);
		pthread_join(t, NULL);
		return 1;
	}
	_exit(5);
}
