/*
 * freelist_heap.c — first fit over boundary-tagged chunks with immediate
 * coalescing; the invariants are listed in freelist.h.
 *
 * Finding a fit: free chunks sit on 128 doubly linked lists by size —
 * exact 16-byte steps below 1 KiB, four lists per power of two above — with
 * a bitmap of the non-empty ones. A request starts at its own list, takes the
 * first chunk there that is big enough, else the head of the next non-empty
 * list (all of whose chunks fit). That is first fit, made fast: without the
 * split by size, one long list would be walked on every malloc. The chosen
 * chunk is split and the remainder goes back to its list.
 *
 * Segments: the heap grows by mapping segments of ALLOCRR_FREELIST_SEGMENT_SIZE
 * aligned to their size, each [header][chunks...][fence]. When freeing
 * empties a whole segment it is unmapped, except for up to
 * ALLOCRR_FREELIST_KEEP_SEGMENTS kept to absorb malloc/free churn at the edge.
 */
#include "freelist.h"

#include "os.h"
#include "util.h"

typedef struct fl_segment {
	struct fl_segment *next, *prev;
} fl_segment_t;

static fl_chunk_t bins[FL_NBINS]; /* list heads: only fd/bk are used */
static uint64_t bitmap[FL_NBINS / 64];
static size_t seg_size, keep_empty, nempty, nsegments;
static fl_segment_t *segments;
static uint64_t free_per_stat_bin[FL_STAT_BINS];

static unsigned bin_index(size_t size)
{
	if (size < 1024)
		return (unsigned)(size >> 4) - 2;
	unsigned lg = 63u - (unsigned)__builtin_clzll((unsigned long long)size);
	unsigned i = 62u + (lg - 10u) * 4u + (unsigned)((size >> (lg - 2)) & 3u);
	return i < FL_NBINS ? i : FL_NBINS - 1;
}

void fl_heap_init(size_t segment_size, size_t keep)
{
	seg_size = segment_size;
	keep_empty = keep;
	for (unsigned i = 0; i < FL_NBINS; i++)
		bins[i].fd = bins[i].bk = &bins[i];
}

static void bin_insert(fl_chunk_t *c)
{
	size_t size = fl_size(c);
	unsigned i = bin_index(size);
	fl_chunk_t *h = &bins[i];
	c->fd = h->fd;
	c->bk = h;
	h->fd->bk = c;
	h->fd = c;
	bitmap[i / 64] |= (uint64_t)1 << (i % 64);
	free_per_stat_bin[fl_stat_bin(size - 8)]++;
}

static void bin_remove(fl_chunk_t *c)
{
	size_t size = fl_size(c);
	if (AR_UNLIKELY(c->fd->bk != c || c->bk->fd != c))
		ar_fatal("heap corruption: free list links broken (write after free?)");
	c->fd->bk = c->bk;
	c->bk->fd = c->fd;
	unsigned i = bin_index(size);
	if (bins[i].fd == &bins[i])
		bitmap[i / 64] &= ~((uint64_t)1 << (i % 64));
	free_per_stat_bin[fl_stat_bin(size - 8)]--;
}

static fl_segment_t *segment_of(const fl_chunk_t *c)
{
	return (fl_segment_t *)((uintptr_t)c & ~(uintptr_t)(seg_size - 1));
}

/* Does free chunk c cover its whole segment? */
static int spans_segment(const fl_chunk_t *c)
{
	return (char *)c == (char *)segment_of(c) + FL_SEG_HDR &&
	       fl_size(c) == seg_size - FL_SEG_HDR - FL_HDR;
}

/* Map a segment and bin its single free chunk. 0, or -1 when out of memory. */
static int grow(void)
{
	char *base = ar_os_map_aligned(seg_size, seg_size);
	if (!base)
		return -1;
	fl_segment_t *s = (fl_segment_t *)base;
	s->next = segments;
	s->prev = NULL;
	if (segments)
		segments->prev = s;
	segments = s;
	nsegments++;
	fl_chunk_t *c = (fl_chunk_t *)(base + FL_SEG_HDR);
	size_t size = seg_size - FL_SEG_HDR - FL_HDR;
	c->size = size | FL_PREV_INUSE;
	fl_chunk_t *fence = (fl_chunk_t *)((char *)c + size);
	fence->prev_size = size;
	fence->size = FL_INUSE; /* size 0, in use: never coalesced, never walked past */
	bin_insert(c);
	nempty++;
	return 0;
}

static void release_segment(fl_chunk_t *c)
{
	fl_segment_t *s = segment_of(c);
	if (s->prev)
		s->prev->next = s->next;
	else
		segments = s->next;
	if (s->next)
		s->next->prev = s->prev;
	nsegments--;
	ar_os_unmap(s, seg_size);
}

/* Mark c (not on a list) in use with exactly its current size, or after
 * splitting off a tail of at least FL_MIN_CHUNK bytes beyond cs. */
static void use(fl_chunk_t *c, size_t cs)
{
	size_t size = fl_size(c);
	if (size - cs >= FL_MIN_CHUNK) {
		fl_chunk_t *rest = (fl_chunk_t *)((char *)c + cs);
		rest->size = (size - cs) | FL_PREV_INUSE;
		fl_next(rest)->prev_size = size - cs; /* its successor stays !PREV_INUSE */
		c->size = cs | (c->size & FL_PREV_INUSE) | FL_INUSE;
		bin_insert(rest);
	} else {
		c->size |= FL_INUSE;
		fl_next(c)->size |= FL_PREV_INUSE;
	}
}

/* Remove and return the first free chunk of at least cs bytes, or NULL. */
static fl_chunk_t *find(size_t cs)
{
	unsigned i = bin_index(cs);
	/* The request's own list may hold smaller chunks (above 1 KiB a list
	 * spans a size range): first fit within it. */
	for (fl_chunk_t *c = bins[i].fd; c != &bins[i]; c = c->fd)
		if (fl_size(c) >= cs) {
			bin_remove(c);
			return c;
		}
	for (unsigned w = (i + 1) / 64; w < FL_NBINS / 64; w++) {
		uint64_t m = bitmap[w];
		if (w == (i + 1) / 64)
			m &= ~(uint64_t)0 << ((i + 1) % 64);
		if (m) {
			fl_chunk_t *c = bins[w * 64 + (unsigned)__builtin_ctzll(m)].fd;
			bin_remove(c);
			return c;
		}
	}
	return NULL;
}

static fl_chunk_t *take_free(size_t cs)
{
	fl_chunk_t *c = find(cs);
	if (!c) {
		if (grow() != 0)
			return NULL;
		c = find(cs);
	}
	if (spans_segment(c))
		nempty--;
	return c;
}

fl_chunk_t *fl_heap_take(size_t cs)
{
	fl_chunk_t *c = take_free(cs);
	if (c)
		use(c, cs);
	return c;
}

fl_chunk_t *fl_heap_take_aligned(size_t cs, size_t align)
{
	/* Room for the request, the worst-case misalignment, and a leading
	 * remainder big enough to be a free chunk of its own. */
	fl_chunk_t *c = take_free(cs + align + FL_MIN_CHUNK);
	if (!c)
		return NULL;
	uintptr_t mem = (uintptr_t)fl_mem(c);
	if (mem % align != 0) {
		uintptr_t m = ar_align_up_ptr(mem + FL_MIN_CHUNK, align);
		fl_chunk_t *nc = fl_of((void *)m);
		size_t lead = (size_t)((char *)nc - (char *)c), size = fl_size(c);
		/* The lead becomes a free chunk; its predecessor is in use (c was
		 * free), so it needs no coalescing. */
		c->size = lead | FL_PREV_INUSE;
		nc->prev_size = lead;
		nc->size = size - lead; /* !PREV_INUSE: the lead is free */
		bin_insert(c);
		c = nc;
	}
	use(c, cs);
	return c;
}

void fl_heap_give(fl_chunk_t *c)
{
	size_t size = fl_size(c);
	if (AR_UNLIKELY(!(c->size & FL_INUSE) || (c->size & FL_MMAPPED)))
		ar_fatal("free(): invalid pointer or double free");
	fl_chunk_t *next = (fl_chunk_t *)((char *)c + size);
	if (!(c->size & FL_PREV_INUSE)) {
		fl_chunk_t *prev = (fl_chunk_t *)((char *)c - c->prev_size);
		bin_remove(prev);
		size += fl_size(prev);
		c = prev;
	}
	if (!(next->size & FL_INUSE)) {
		bin_remove(next);
		size += fl_size(next);
	} else {
		next->size &= ~FL_PREV_INUSE;
	}
	c->size = size | FL_PREV_INUSE; /* a free chunk's predecessor is in use */
	fl_next(c)->prev_size = size;
	if (spans_segment(c)) {
		if (nempty >= keep_empty) {
			release_segment(c);
			return;
		}
		nempty++;
	}
	bin_insert(c);
}

int fl_heap_resize(fl_chunk_t *c, size_t cs)
{
	size_t size = fl_size(c);
	if (cs <= size) {
		if (size - cs >= FL_MIN_CHUNK) {
			/* Split off the tail as an in-use chunk and free it, which
			 * coalesces it with a free successor. */
			fl_chunk_t *tail = (fl_chunk_t *)((char *)c + cs);
			tail->size = (size - cs) | FL_PREV_INUSE | FL_INUSE;
			c->size = cs | (c->size & (FL_PREV_INUSE | FL_INUSE));
			fl_heap_give(tail);
		}
		return 0;
	}
	fl_chunk_t *next = fl_next(c);
	if (next->size & FL_INUSE || size + fl_size(next) < cs)
		return -1;
	bin_remove(next);
	c->size += fl_size(next); /* flags unchanged; c now ends where next ended */
	fl_chunk_t *after = fl_next(c);
	after->size |= FL_PREV_INUSE;
	if (fl_size(c) - cs >= FL_MIN_CHUNK) {
		size_t total = fl_size(c);
		fl_chunk_t *rest = (fl_chunk_t *)((char *)c + cs);
		rest->size = (total - cs) | FL_PREV_INUSE;
		after->prev_size = total - cs;
		after->size &= ~FL_PREV_INUSE;
		c->size = cs | (c->size & (FL_PREV_INUSE | FL_INUSE));
		bin_insert(rest);
	}
	return 0;
}

void fl_heap_stats(ar_alloc_stats_t *out)
{
	for (unsigned i = 0; i < FL_STAT_BINS; i++)
		out->bins[i].blocks_free = free_per_stat_bin[i];
	out->chunks_in_use = nsegments;
}
