/*
 * fuzz_input.h — the fuzz targets hand their input to the code under test
 * as a file, the way users do: an anonymous memfd holding the bytes, opened
 * by fd or as /proc/self/fd/N. Nothing touches the disk, so a campaign runs
 * as fast as the reader allows.
 */
#ifndef AR_FUZZ_INPUT_H
#define AR_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

/* A memfd holding size bytes of data, or -1. */
static inline int fuzz_input_fd(const char *name, const void *data, size_t size)
{
	int fd = memfd_create(name, 0);
	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif
