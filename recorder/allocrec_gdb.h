/*
 * allocrec_gdb.h — running gdb on a live process to call the recorder
 * shim's entry points in it (allocrec_gdb.c), for allocrec -p and the
 * fallback of allocrec --detach (allocrec_attach.c).
 */
#ifndef AR_ALLOCREC_GDB_H
#define AR_ALLOCREC_GDB_H

#include <stddef.h>
#include <sys/types.h>

/* One gdb job: where its files are, what it passes to the shim. */
typedef struct allocrec_gdb_job {
	pid_t pid;
	const char *gdb;      /* the gdb executable */
	const char *script;   /* written by allocrec_gdb_write_script */
	const char *out;      /* gdb's output, kept when something fails */
	const char *shim;     /* the shim's absolute path */
	const char *settings; /* allocrr_attach's argument */
} allocrec_gdb_job_t;

/* What the last gdb run said. */
typedef struct allocrec_gdb_said {
	int busy;          /* every thread was inside the allocator, the loader or a lock */
	int have_result, result; /* the called function's int result */
	int dlopen_failed; /* the process could not load the shim */
	int timed_out;     /* gdb was stopped at its deadline */
	char error[512];   /* gdb's or the script's complaint */
} allocrec_gdb_said_t;

/* The gdb on PATH into out: 0, or 2 with the message printed. */
int allocrec_gdb_find(char *out, size_t cap);

/* Write the gdb script (Python) to path, a new file: 0, or 2 with the
 * message printed. */
int allocrec_gdb_write_script(const char *path);

/* Run gdb on job->pid: pick a thread that is not inside the allocator, the
 * loader or a lock (if none, detach and retry, a little later each time),
 * then action: "attach" (dlopen the shim, allocrr_attach(settings)),
 * "detach" (allocrr_detach()), "hooked" (allocrr_attach_hooked()); then
 * detach. Bounded by ALLOCREC_GDB_TIMEOUT seconds (60) per run. */
void allocrec_gdb_run(const allocrec_gdb_job_t *job, const char *action, allocrec_gdb_said_t *said);

/* Say why a run gave no result. Returns 2. */
int allocrec_gdb_failed(const allocrec_gdb_job_t *job, const allocrec_gdb_said_t *said);

/* State letter of a process (R, S, D, T, t, Z ...), 0 when it is gone. */
char allocrec_proc_state(pid_t pid);

#endif /* AR_ALLOCREC_GDB_H */
