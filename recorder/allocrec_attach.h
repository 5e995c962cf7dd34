/*
 * allocrec_attach.h — allocrec -p PID and allocrec --detach PID
 * (allocrec_attach.c), called from allocrec's main.
 */
#ifndef AR_ALLOCREC_ATTACH_H
#define AR_ALLOCREC_ATTACH_H

#include <stddef.h>

/* What allocrec.c lends the attach commands, so that both find the shim
 * and summarise a trace the same way. */
typedef struct allocrec_attach_env {
	/* The shim's absolute path into out: 0, or 2 with the message printed. */
	int (*find_shim)(char *out, size_t cap);
	/* One summary line about a trace (none when quiet); returns 0 when it
	 * could not be read, 1 when it is complete, 2 when it is readable but
	 * truncated or corrupt. */
	int (*summarise)(const char *path, int quiet);
	/* allocrec --start/--stop's client of the control channel, for verb
	 * "detach": the exit status (messages printed). */
	int (*control)(const char *verb, const char *pid, int quiet);
} allocrec_attach_env_t;

/* Whether the command line asks for -p/--pid or --detach (looked for among
 * the options, before any PROG). */
int allocrec_attach_wanted(int argc, char **argv);

/* Run allocrec -p PID [--duration S] [-o FILE] [--stacks[=N]] [--level N]
 * [--time-every N] [--time-unit NS] [-q], or allocrec --detach PID. Returns the exit status: 0, 1 for a usage
 * error, 2 when attaching was refused or failed (a message says why and
 * what to do). */
int allocrec_attach_main(int argc, char **argv, const allocrec_attach_env_t *env);


#endif /* AR_ALLOCREC_ATTACH_H */
