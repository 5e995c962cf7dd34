/*
 * ar_readfile.h — read a small file (a /proc or /sys entry: status, stat,
 * comm, cmdline, cpuinfo, ptrace_scope, perf_event_paranoid) whole into a
 * caller's buffer. The one way the recorder, its shim, the replay worker and
 * common/ do it, so the loop that a short read needs is written once.
 *
 * Inline and made of open, read and close only: no allocation and no stdio,
 * so the recorder shim (inside a program's malloc or a signal handler, where
 * those calls are async-signal-safe) and the replay worker (which never calls
 * malloc) use it as the tools do.
 */
#ifndef AR_READFILE_H
#define AR_READFILE_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* Read the file at path into buf (cap >= 1 bytes): up to cap - 1 bytes, until
 * its end, then a NUL after them. The number of bytes read (0 for an empty
 * file), or -1 with errno when it cannot be opened (buf untouched) or the
 * first read fails (buf ""). */
static inline ssize_t ar_read_small_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r = 0;
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n += (size_t)r;
	}
	int saved = errno;
	close(fd);
	errno = saved;
	buf[n] = 0;
	return r < 0 && n == 0 ? -1 : (ssize_t)n;
}

#endif
