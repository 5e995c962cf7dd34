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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ar_cli.h"
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
	if (ar_cli_exe_dir(dir, sizeof dir) != 0)
		return -1;
	if ((size_t)snprintf(out, cap, "%s/%s", dir, ALLOCTRACE_NAME) >= cap)
		return -1;
	return access(out, X_OK);
}

/* Run exe with argv, its standard output to outfd (-1: /dev/null) and its
 * standard error to errfd (-1: ours); its wait status into *st. 0, or -1
 * (fork failed, errno set). */
static int run_child(const char *exe, char *const argv[], int outfd, int errfd, int *st)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int out = outfd >= 0 ? outfd : open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (out >= 0)
			dup2(out, STDOUT_FILENO);
		if (errfd >= 0)
			dup2(errfd, STDERR_FILENO);
		execv(exe, argv);
		fprintf(stderr, "alloctrace: cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* What the child wrote into fd (a memfd), at most cap - 1 bytes, NUL-ended;
 * its length. */
static size_t read_back(int fd, char *buf, size_t cap)
{
	ssize_t n = fd >= 0 ? pread(fd, buf, cap - 1, 0) : -1;
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? (size_t)n : 0;
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
	char *argv[] = {exe, "stacks", "--folded", "--by", "calls", "--db", (char *)db_path, "--", (char *)path, NULL};
	int st = 0;
	if (run_child(exe, argv, -1, errfd, &st) != 0) {
		fprintf(stderr, "allocreplay: %s: sites not stored: fork: %s\n", path, strerror(errno));
		if (errfd >= 0)
			close(errfd);
		return -1;
	}
	/* 3: stored, from a trace cut short (the runs' own messages say so) */
	int ok = WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3);
	if (!ok) {
		fprintf(stderr, "allocreplay: %s: sites not stored: %s %s (run it again: alloctrace stacks --db %s %s)\n",
			path, exe, WIFEXITED(st) ? "failed" : "was killed", db_path, path);
		char buf[2048]; /* what it said: alloctrace escapes what it quotes */
		size_t n = read_back(errfd, buf, sizeof buf);
		if (n)
			fprintf(stderr, "%s%s", buf, buf[n - 1] == '\n' ? "" : "\n");
	}
	if (errfd >= 0)
		close(errfd);
	return ok ? 0 : -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int ar_sites_child_ids_through(const char *path, const char *function, uint32_t **ids, size_t *n, char *err,
			       size_t cap)
{
	*ids = NULL;
	*n = 0;
	if (!has_stacks(path)) {
		snprintf(err, cap, "%s: frame=%s needs call stacks: record with allocrec --stacks", path, function);
		return -1;
	}
	char exe[PATH_MAX + 32];
	if (find_alloctrace(exe, sizeof exe) != 0) {
		snprintf(err, cap, "%s: frame=%s: cannot find %s next to allocreplay (set ALLOCRR_ALLOCTRACE, or "
			 "route by stack=ID from: alloctrace stacks --ids-through=%s %s)",
			 path, function, ALLOCTRACE_NAME, function, path);
		return -1;
	}
	char opt[512];
	if ((size_t)snprintf(opt, sizeof opt, "--ids-through=%s", function) >= sizeof opt) {
		snprintf(err, cap, "frame=%.64s...: the function name is too long", function);
		return -1;
	}
	int outfd = memfd_create("alloctrace-ids", MFD_CLOEXEC);
	int errfd = memfd_create("alloctrace-stderr", MFD_CLOEXEC);
	char *argv[] = {exe, "stacks", opt, "--", (char *)path, NULL};
	int st = 0, rc = -1;
	if (outfd < 0 || run_child(exe, argv, outfd, errfd, &st) != 0) {
		snprintf(err, cap, "%s: frame=%s: cannot run %s: %s", path, function, exe, strerror(errno));
	} else if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3)) {
		char msg[1024];
		read_back(errfd, msg, sizeof msg);
		msg[strcspn(msg, "\n")] = '\0';
		snprintf(err, cap, "%s: frame=%s: %s %s: %s", path, function, exe,
			 WIFEXITED(st) ? "failed" : "was killed", msg);
	} else {
		off_t len = lseek(outfd, 0, SEEK_END);
		char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
		size_t got = buf ? read_back(outfd, buf, (size_t)len + 1) : 0;
		uint32_t *v = buf ? malloc((got / 2 + 1) * sizeof *v) : NULL; /* "N\n" is 2 bytes at least */
		if (!v) {
			snprintf(err, cap, "%s: frame=%s: out of memory", path, function);
		} else {
			rc = 0;
			for (char *p = buf, *end; *p; p = end + (*end == '\n')) {
				unsigned long x = strtoul(p, &end, 10);
				if (end == p || x == 0 || x > UINT32_MAX || (*end != '\n' && *end)) {
					snprintf(err, cap, "%s: frame=%s: %s wrote '%.32s', not a stack id", path,
						 function, exe, p);
					rc = -1;
					break;
				}
				v[(*n)++] = (uint32_t)x;
			}
			if (rc == 0 && *n == 0) {
				snprintf(err, cap, "%s: frame=%s: no recorded stack has a frame named %s (alloctrace "
					 "stacks --folded %s shows the names)", path, function, function, path);
				rc = -1;
			}
			if (rc == 0) {
				qsort(v, *n, sizeof *v, cmp_u32);
				*ids = v;
			} else {
				free(v);
				*n = 0;
			}
		}
		free(buf);
	}
	if (outfd >= 0)
		close(outfd);
	if (errfd >= 0)
		close(errfd);
	return rc;
}
