/*
 * ar_fullio.h — pread and pwrite of a whole range, the loop that a short
 * transfer or an EINTR needs written once (the trace reader, the workload
 * compiler and the workload reader use it).
 *
 * Inline, made of pread and pwrite only: no allocation, so the replay
 * worker (which never calls malloc) uses it too.
 */
#ifndef AR_FULLIO_H
#define AR_FULLIO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* Read n bytes at off into buf: the bytes read, fewer than n when the file
 * ends first, or -1 with errno (*got, when not NULL, says how many came
 * before the error). */
static inline ssize_t ar_pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	size_t done = 0;
	ssize_t r = 0;
	while (done < n) {
		r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	if (got)
		*got = done;
	return r < 0 ? -1 : (ssize_t)done;
}

/* Write n bytes of buf at off: 0, or -1 with errno (ENOSPC when the kernel
 * took nothing without saying why); *put, when not NULL, says how many were
 * written. */
static inline int ar_pwrite_full(int fd, const void *buf, size_t n, uint64_t off, size_t *put)
{
	size_t done = 0;
	int rc = 0;
	while (done < n) {
		ssize_t w = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			rc = -1;
			break;
		}
		done += (size_t)w;
	}
	if (put)
		*put = done;
	return rc;
}

#endif
