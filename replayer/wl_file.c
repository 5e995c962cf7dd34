/*
 * wl_file.c — opening a compiled workload and reading its streams. The file
 * is mapped read-only for its header, segment index and thread table; the
 * segments are read with pread into the reader's buffer, so a workload
 * larger than RAM is read through the page cache and never becomes part of
 * the reader's RSS (the worker's figures are the allocator's).
 *
 * Invariant: after ar_wl_open() succeeds, the index and the thread table
 * lie inside the file, every stream's segments are entries of the index,
 * each inside the data between the header and the index, of at most
 * seg_ops ops and max_seg_bytes bytes, adding up to the stream's nops, and
 * the streams' op_base are the running sums of their nops. nslots and
 * nsamples bound every slot and sample index the ops use (checked lazily by
 * the worker against the header, which is cheaper than a scan).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_fullio.h"
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
	w->fd = -1;
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
	if (m == MAP_FAILED) {
		close(fd);
		snprintf(err, errcap, "%s: mmap: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	w->fd = fd;
	w->map = m;
	w->map_bytes = (size_t)st.st_size;
	const ar_wl_header_t *h = m;
	w->hdr = h;
	if (h->magic != AR_WL_MAGIC || h->version != AR_WL_VERSION) {
		ar_wl_close(w);
		return fail(err, errcap, path, "not a workload of this version");
	}
	uint64_t fb = h->file_bytes;
	if (fb != (uint64_t)st.st_size || h->nthreads == 0 || h->nthreads > AR_WL_MAX_THREADS ||
	    h->seg_ops == 0 || h->seg_ops > AR_WL_SEG_OPS || h->max_seg_bytes == 0 ||
	    h->max_seg_bytes > (uint64_t)h->seg_ops * AR_WL_OP_MAX_BYTES ||
	    h->index_offset < sizeof *h || h->index_offset % 8 || h->index_offset > fb ||
	    h->nsegs > (fb - h->index_offset) / sizeof(ar_wl_seg_t) ||
	    h->threads_offset != h->index_offset + h->nsegs * sizeof(ar_wl_seg_t) ||
	    (uint64_t)h->nthreads * sizeof(ar_wl_thread_t) != fb - h->threads_offset) {
		ar_wl_close(w);
		return fail(err, errcap, path, "header sizes disagree with the file");
	}
	w->segs = (const ar_wl_seg_t *)((const char *)m + h->index_offset);
	w->threads = (const ar_wl_thread_t *)((const char *)m + h->threads_offset);
	uint64_t base = 0;
	for (uint32_t i = 0; i < h->nthreads; i++) {
		const ar_wl_thread_t *t = &w->threads[i];
		uint64_t ops = 0;
		if (t->prelude_ops > t->nops || t->op_base != base) {
			ar_wl_close(w);
			return fail(err, errcap, path, "a stream's op counts disagree with the streams before it");
		}
		if (t->seg_first > h->nsegs || t->nsegs > h->nsegs - t->seg_first) {
			ar_wl_close(w);
			return fail(err, errcap, path, "a stream's segments lie outside the index");
		}
		for (uint64_t k = t->seg_first; k < t->seg_first + t->nsegs; k++) {
			const ar_wl_seg_t *sg = &w->segs[k];
			if (sg->nops == 0 || sg->nops > h->seg_ops || sg->bytes > h->max_seg_bytes ||
			    sg->offset < sizeof *h || sg->offset > h->index_offset ||
			    sg->bytes > h->index_offset - sg->offset) {
				char what[160];
				snprintf(what, sizeof what, "segment %llu (index entry at offset %llu) lies "
					 "outside the data", (unsigned long long)k,
					 (unsigned long long)(h->index_offset + k * sizeof *sg));
				ar_wl_close(w);
				return fail(err, errcap, path, what);
			}
			ops += sg->nops;
		}
		if (ops != t->nops) {
			ar_wl_close(w);
			return fail(err, errcap, path, "a stream's segments do not add up to its ops");
		}
		base += t->nops;
	}
	if (base != h->total_ops) {
		ar_wl_close(w);
		return fail(err, errcap, path, "the streams' ops do not add up to the header's");
	}
	return 0;
}

void ar_wl_close(ar_workload_t *w)
{
	if (w->map && w->map != MAP_FAILED)
		munmap(w->map, w->map_bytes);
	if (w->fd >= 0)
		close(w->fd);
	memset(w, 0, sizeof *w);
	w->fd = -1;
}

uint64_t ar_wl_decoded_bytes(const ar_workload_t *w)
{
	return w->hdr->total_ops * sizeof(ar_wl_op_t);
}

/* Read and decode segment k into ops. 0, or -1 with a message. */
static int read_segment(const ar_workload_t *w, uint64_t k, ar_wl_op_t *ops, void *raw, char *err,
			size_t errcap)
{
	const ar_wl_seg_t *sg = &w->segs[k];
	size_t got = 0;
	ssize_t r = ar_pread_full(w->fd, raw, sg->bytes, sg->offset, &got);
	if (r < 0 || got < sg->bytes) {
		snprintf(err, errcap, "workload segment %llu at offset %llu: %s", (unsigned long long)k,
			 (unsigned long long)(sg->offset + got), r < 0 ? strerror(errno) : "the file ends early");
		return -1;
	}
	if (ar_wl_decode(raw, sg->bytes, ops, sg->nops) != 0) {
		snprintf(err, errcap, "workload segment %llu at offset %llu (%u bytes) does not decode to "
			 "its %u ops: the file is damaged (delete it and retry)", (unsigned long long)k,
			 (unsigned long long)sg->offset, sg->bytes, sg->nops);
		return -1;
	}
	return 0;
}

int ar_wl_load(ar_workload_t *w, void *mem, void *raw, char *err, size_t errcap)
{
	ar_wl_op_t *out = mem;
	for (uint32_t i = 0; i < w->hdr->nthreads; i++) {
		const ar_wl_thread_t *t = &w->threads[i];
		ar_wl_op_t *o = out + t->op_base;
		for (uint64_t k = t->seg_first; k < t->seg_first + t->nsegs; k++) {
			if (read_segment(w, k, o, raw, err, errcap) != 0)
				return -1;
			o += w->segs[k].nops;
		}
	}
	w->decoded = out;
	return 0;
}

int ar_wl_cursor_next(ar_wl_cursor_t *c, int readahead, char *err, size_t errcap)
{
	const ar_wl_thread_t *t = &c->w->threads[c->thread];
	c->first += c->n;
	c->n = 0;
	if (c->seg >= t->nsegs)
		return 0;
	uint64_t k = t->seg_first + c->seg++;
	if (read_segment(c->w, k, c->ops, c->raw, err, errcap) != 0)
		return -1;
	c->n = c->w->segs[k].nops;
	if (readahead && c->seg < t->nsegs) {
		const ar_wl_seg_t *nx = &c->w->segs[k + 1];
		(void)posix_fadvise(c->w->fd, (off_t)nx->offset, (off_t)nx->bytes, POSIX_FADV_WILLNEED);
	}
	return 1;
}
