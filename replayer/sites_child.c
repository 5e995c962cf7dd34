/*
 * sites_child.c — see sites_child.h. The child runs `alloctrace stacks
 * --folded --by calls --db DB -- TRACE` (one pass for the folded lines and
 * the rows); its standard output goes to /dev/null and its standard error
 * to a memory file, shown only when it fails: its notes on success (frames
 * of a stripped library, undefined stack ids) are about labels that
 * `alloctrace stacks` shows on demand, not about the replay. The database
 * is open in this process too: the child's write waits on SQLite's busy
 * timeout while the parent is between transactions (db.c opens both in WAL
 * mode).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ar_trace.h"
#include "sites_child.h"

#define ALLOCTRACE_NAME "alloctrace"

/* Does the trace at path carry call stacks? Opening indexes it (no events read). */
static int has_stacks(const char *path)
{
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) != 0)
		return 0;
	int yes = (ar_reader_header(r)->flags & AR_HDR_STACKS) && ar_reader_stack_count(r) > 0;
	ar_reader_close(r);
	return yes;
}

/* alloctrace into out: $ALLOCRR_ALLOCTRACE, else next to this executable
 * (the build tree's bin/ and an installed bin/ alike). 0, or -1. */
static int find_alloctrace(char *out, size_t cap)
{
	const char *env = getenv("ALLOCRR_ALLOCTRACE");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, X_OK);
	}
	char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (n <= 0)
		return -1;
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(out, cap, "%s/%s", dir, ALLOCTRACE_NAME) >= cap)
		return -1;
	return access(out, X_OK);
}

int ar_sites_child_store(const char *path, const char *db_path)
{
	if (!has_stacks(path))
		return 0;
	char exe[PATH_MAX + 32];
	if (find_alloctrace(exe, sizeof exe) != 0) {
		fprintf(stderr, "allocreplay: %s: sites not stored: cannot find %s next to allocreplay (set "
				"ALLOCRR_ALLOCTRACE, or run: alloctrace stacks --db %s %s)\n",
			path, ALLOCTRACE_NAME, db_path, path);
		return -1;
	}
	int errfd = memfd_create("alloctrace-stderr", MFD_CLOEXEC);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "allocreplay: %s: sites not stored: fork: %s\n", path, strerror(errno));
		if (errfd >= 0)
			close(errfd);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		if (errfd >= 0)
			dup2(errfd, STDERR_FILENO);
		char *argv[] = {exe, "stacks", "--folded", "--by", "calls", "--db", (char *)db_path, "--", (char *)path,
				NULL};
		execv(exe, argv);
		fprintf(stderr, "alloctrace: cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* 3: stored, from a trace cut short (the runs' own messages say so) */
	int ok = WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3);
	if (!ok) {
		fprintf(stderr, "allocreplay: %s: sites not stored: %s %s (run it again: alloctrace stacks --db %s %s)\n",
			path, exe, WIFEXITED(st) ? "failed" : "was killed", db_path, path);
		char buf[2048]; /* what it said: alloctrace escapes what it quotes */
		ssize_t n = errfd >= 0 ? pread(errfd, buf, sizeof buf - 1, 0) : -1;
		if (n > 0)
			fprintf(stderr, "%.*s%s", (int)n, buf, buf[n - 1] == '\n' ? "" : "\n");
	}
	if (errfd >= 0)
		close(errfd);
	return ok ? 0 : -1;
}
