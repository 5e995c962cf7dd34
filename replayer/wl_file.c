/*
 * wl_file.c — opening a compiled workload: map it read-only and check every
 * offset before anyone follows it. The worker maps the file after start-up
 * checks and reads it from all replay threads; a workload is never written
 * through this mapping.
 *
 * Invariant: after ar_wl_open() succeeds, every thread's op array
 * [offset, offset + nops * sizeof(ar_wl_op_t)) lies inside the mapping, and
 * nslots/nsamples bound every slot and sample index the ops use (checked
 * lazily by the worker against the header, which is cheaper than a scan).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload.h"

static const char *const kind_names[AR_WL_NKINDS] = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "sample", "sync",
};

const char *ar_wl_kind_name(unsigned kind)
{
	return kind < AR_WL_NKINDS ? kind_names[kind] : "?";
}

int ar_wl_kind_from_name(const char *name)
{
	for (int i = 0; i < AR_WL_NKINDS; i++)
		if (strcmp(kind_names[i], name) == 0)
			return i;
	return -1;
}

static int fail(char *err, size_t cap, const char *path, const char *what)
{
	snprintf(err, cap, "%s: %s", path, what);
	errno = EINVAL;
	return -1;
}

int ar_wl_open(ar_workload_t *w, const char *path, char *err, size_t errcap)
{
	memset(w, 0, sizeof *w);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errcap, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof(ar_wl_header_t)) {
		close(fd);
		return fail(err, errcap, path, "too short to be a workload");
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(err, errcap, "%s: mmap: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	w->map = m;
	w->map_bytes = (size_t)st.st_size;
	const ar_wl_header_t *h = m;
	w->hdr = h;
	if (h->magic != AR_WL_MAGIC || h->version != AR_WL_VERSION) {
		ar_wl_close(w);
		return fail(err, errcap, path, "not a workload of this version");
	}
	if (h->file_bytes != (uint64_t)st.st_size || h->nthreads == 0 ||
	    sizeof *h + (uint64_t)h->nthreads * sizeof(ar_wl_thread_t) > h->file_bytes) {
		ar_wl_close(w);
		return fail(err, errcap, path, "header sizes disagree with the file");
	}
	w->threads = (const ar_wl_thread_t *)(h + 1);
	for (uint32_t i = 0; i < h->nthreads; i++) {
		const ar_wl_thread_t *t = &w->threads[i];
		if (t->nops > t->capacity || t->prelude_ops > t->nops || t->offset % AR_WL_ALIGN != 0 ||
		    t->offset > h->file_bytes ||
		    t->capacity > (h->file_bytes - t->offset) / sizeof(ar_wl_op_t)) {
			ar_wl_close(w);
			return fail(err, errcap, path, "a thread's op array lies outside the file");
		}
	}
	return 0;
}

void ar_wl_close(ar_workload_t *w)
{
	if (w->map && w->map != MAP_FAILED)
		munmap(w->map, w->map_bytes);
	memset(w, 0, sizeof *w);
}
