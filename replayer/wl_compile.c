/*
 * wl_compile.c — trace -> workload compiler (see workload.h for the format
 * and the invariants it promises).
 *
 * One pass over the events in global sequence order (ar_reader_next_merged,
 * run on a second thread by wl_decode.c so decoding and compiling overlap).
 * State is proportional to what is live, never to the address space:
 *   - the trace library's live set (ar_liveset_t, ar_trace.h), each live
 *     block tagged with its slot: it applies SPEC 4 (realloc releases its
 *     input at seq and owns its result only at seq2, and an event of another
 *     thread may sit in between — it may even free the address the realloc
 *     will return — so the result is acquired when the merge passes seq2)
 *     and counts the live bytes; the same model alloctrace's statistics use;
 *   - one record per slot (its last op, for dependencies); freed slots queue
 *     in release order and are reused first-in first-out;
 *   - blocks whose free the trace lost (their address was handed out again):
 *     the set forgets them, but the replay never frees them, so their bytes
 *     and count stay in the workload's live figures (the set counts them
 *     as displaced; the header's lost_blocks).
 * One stream per trace thread with events, at most AR_WL_MAX_THREADS (a
 * trace with more is refused, AR_ELIMIT); thread indices may be sparse.
 * Each stream encodes its ops (wl_codec.h) into a buffer of one segment as
 * it emits them; a full buffer is appended to the file, and hashed as it
 * is written. Nothing written is ever changed (a dependency is a SYNC before
 * the op that has it, workload.h), so nothing grows with the trace in
 * memory but the segment index (16 bytes per segment). The index, the
 * thread table and the header come last; the header carries the content
 * digest (ar_wl_digest), so a file cut or changed afterwards no longer
 * matches it. The output is never opened
 * through a symbolic link (O_NOFOLLOW); a cache's temporary file is
 * created new (O_EXCL), mode 0600 (wl_cache.h says why).
 *
 * The schedule (workload.h): the current run (thread, length) and each
 * stream's last event time and usual spacing decide, at each switch of
 * thread in sequence order, whether the resuming stream waits for the one
 * that ran (a hand-off) or keeps the loose window; O(threads) state.
 *
 * A window trace (SPEC 6.11) is read twice: a first pass finds, per
 * stream, the pre-existing blocks it frees or reallocs (ar_liveset_t's
 * window rule, as alloctrace stats applies it), so each stream's prelude
 * (workload.h) can be laid out before the ops that follow it; the second
 * pass fills each prelude op when it meets the release, with a new slot.
 *
 * Per SPEC 5.5: free(0) is replayed as the no-op call it was; a free of a
 * pointer the trace never returned is counted and skipped; a realloc of
 * such a pointer is replayed as realloc(NULL, n) so its result still has a
 * slot; a NULL result with a non-zero request leaves the input live; a
 * realloc to 0 returning NULL freed its input.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ar_fullio.h"
#include "wl_cache.h"
#include "wl_codec.h"
#include "wl_decode.h"
#include "workload.h"

#define NONE32 0xffffffffu

/* ---- compiler state ----------------------------------------------------- */
/* A free slot sits in two FIFO lists at once: its releasing thread's (reused
 * by that thread without any wait) and the global one in release order
 * (stolen by another thread once it is old enough). Both are doubly linked
 * so taking a slot out of either is O(1). */
typedef struct cslot {
	uint64_t last_op;      /* index of the last op on it in last_thread's stream */
	uint64_t released_seq; /* seq of the release that queued it */
	uint32_t last_thread;  /* stream of that op, NONE32 before the first */
	uint32_t live;
	uint32_t tl[2]; /* per-thread free list: prev, next */
	uint32_t gl[2]; /* global free list: prev, next */
} cslot_t;

typedef struct flist {
	uint32_t head, tail;
} flist_t;

/* One stream's segments so far, in stream order. */
typedef struct seglist {
	ar_wl_seg_t *v;
	uint64_t n, cap;
} seglist_t;

/* What a stream's events and ops touch, in one record: its segment being
 * filled, encoded as its ops are emitted (n of hdr->seg_ops ops in `bytes`
 * bytes at buf, the encoder's state st); g_last, the global op count after
 * its last op; and its part of the schedule. */
typedef struct strm {
	uint8_t *buf;
	uint32_t n, bytes;
	ar_wl_enc_t st;
	uint64_t g_last;
	uint64_t last_ns;    /* time of its last event + 1, 0 before its first */
	uint64_t spacing_ns; /* running mean of the time between two of its events
			      * adjacent in sequence order; 0 before the first */
	uint64_t pad;        /* to 64 bytes: an index is a shift */
} strm_t;
_Static_assert(sizeof(strm_t) == 64, "strm_t is indexed with a shift");

typedef struct comp {
	ar_wl_header_t *hdr;
	ar_wl_header_t hdr_mem;
	ar_wl_thread_t *thr;
	/* Output: per stream the segment being filled (strm_t), its segments
	 * written, its prelude (held whole: one op per pre-existing block,
	 * written at the end); the file, where the next segment goes, the
	 * digest so far, an encoding buffer for the preludes. */
	strm_t *strm;
	seglist_t *segs;
	ar_wl_op_t **pre_ops;
	int fd;
	uint64_t woff;
	EVP_MD_CTX *md;
	uint8_t *enc;
	int io_failed;
	uint32_t *tmap; /* trace thread index -> stream, NONE32 if absent (dense indices) */
	uint32_t tmap_len;
	uint64_t *tsorted; /* else: (index << 32 | stream), sorted, nthr entries */
	ar_liveset_t live; /* tags are slots */
	/* Window traces: per stream, prelude ops reserved (first pass) and
	 * filled; all pre-existing bytes (first pass); the slot the last
	 * pre-existing release got, NONE32 when none is waiting. */
	uint64_t *pre_count, *pre_fill;
	unsigned __int128 pre_total;
	uint64_t pre_blocks;
	uint32_t pre_slot;
	int pre_overflow;
	int window; /* the trace's header has AR_HDR_WINDOW */
	cslot_t *slots;
	uint32_t nslots, slots_cap;
	flist_t gfree;   /* all free slots, oldest release first; kept only with
			  * more than one stream (with one it would be tfree[0]) */
	flist_t *tfree;  /* per stream */
	uint64_t gops;     /* ops emitted, all streams */
	uint64_t *sync_budget; /* per stream: SYNC ops it may still hold */
	uint64_t *handoff_budget; /* per stream: exact hand-off SYNCs it may still hold */
	uint32_t nthr;
	/* The schedule (workload.h). */
	ar_wl_schedule_t schedule;
	uint64_t eps_ns;       /* clock granularity: closer times are not ordered */
	uint32_t run_thread;   /* stream of the current run, NONE32 before the first event */
	uint64_t run_len;      /* its events so far */
	ar_error_t *err;
	const char *path;
	int exclusive;   /* ar_wl_compile_opts_t.exclusive */
	int created;     /* out_path is ours: remove it if the compile fails */
} comp_t;

/* Live bytes of the replay: the trace's live set plus the blocks it
 * displaced (their free was lost: the replay never frees them). 128 bits:
 * a hostile trace may claim blocks of 2^64-1 bytes (SPEC 5.5 sets no
 * bound); the header gets the sum saturated (live64). */
static unsigned __int128 live_bytes(const comp_t *c)
{
	/* pre-existing blocks not yet released are live since the start */
	return c->live.live_exact + c->live.displaced_exact + (c->pre_total - c->live.preexisting_exact);
}

static uint64_t live64(const comp_t *c)
{
	unsigned __int128 v = live_bytes(c);
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static uint32_t stream_sorted(const comp_t *c, uint32_t index);

/* The stream of trace thread `index`, or NONE32. Once per event: inline. */
static inline __attribute__((always_inline)) uint32_t stream_of(const comp_t *c, uint32_t index)
{
	if (c->tmap)
		return index < c->tmap_len ? c->tmap[index] : NONE32;
	return stream_sorted(c, index);
}

/* stream_of without a direct table: binary search of the sorted array. */
static uint32_t stream_sorted(const comp_t *c, uint32_t index)
{
	size_t lo = 0, hi = c->nthr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t k = (uint32_t)(c->tsorted[mid] >> 32);
		if (k == index)
			return (uint32_t)c->tsorted[mid];
		if (k < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NONE32;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int errf(comp_t *c, int code, const char *what)
{
	c->err->code = code;
	snprintf(c->err->msg, sizeof c->err->msg, "%s: %s", c->path, what);
	return code;
}

/* Write n bytes at the end of the output and into the digest. 0, or -1
 * (c->io_failed, the error in c->err). */
static int out_write(comp_t *c, const void *buf, size_t n)
{
	const char *p = buf;
	if (c->io_failed)
		return -1;
	if (EVP_DigestUpdate(c->md, buf, n) != 1) {
		c->io_failed = 1;
		return errf(c, AR_ENOMEM, "out of memory computing the workload's digest"), -1;
	}
	size_t done = 0;
	if (ar_pwrite_full(c->fd, p, n, c->woff, &done) != 0) {
		c->err->sys_errno = errno;
		c->io_failed = 1;
		snprintf(c->err->msg, sizeof c->err->msg, "writing workload for %s at offset %llu: %s",
			 c->path, (unsigned long long)(c->woff + done), strerror(c->err->sys_errno));
		c->err->code = AR_EIO;
		return -1;
	}
	c->woff += n;
	return 0;
}

/* Append n ops encoded in bytes[0..nbytes) as a segment at the end of the
 * output, listed in l. */
static int write_encoded(comp_t *c, seglist_t *l, const uint8_t *bytes, size_t nbytes, uint32_t n)
{
	if (l->n == l->cap) {
		uint64_t cap = l->cap ? l->cap * 2 : 16;
		ar_wl_seg_t *v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			c->io_failed = 1;
			return errf(c, AR_ENOMEM, "out of memory for the segment index"), -1;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (ar_wl_seg_t){ .offset = c->woff, .bytes = (uint32_t)nbytes, .nops = n };
	if (nbytes > c->hdr->max_seg_bytes)
		c->hdr->max_seg_bytes = (uint32_t)nbytes;
	return out_write(c, bytes, nbytes);
}

/* Encode ops[0..n) as a segment at the end of the output, listed in l. */
static int write_segment(comp_t *c, seglist_t *l, const ar_wl_op_t *ops, uint32_t n)
{
	return write_encoded(c, l, c->enc, ar_wl_encode(ops, n, c->enc), n);
}

/* Write stream t's pending segment, if it has ops, and start a new one.
 * Once per segment: out of line, so emit() stays small. */
static __attribute__((noinline)) int flush_pending(comp_t *c, uint32_t t)
{
	strm_t *p = &c->strm[t];
	if (p->n && write_encoded(c, &c->segs[t], p->buf, p->bytes, p->n) != 0)
		return -1;
	p->n = p->bytes = 0;
	p->st = (ar_wl_enc_t){ 0, 0 };
	return 0;
}

/* Append an op to stream t; returns its index in the stream, or -1 when
 * the output cannot be written (c->err says why). A block's dependency
 * (AR_WL_F_DEP) is not a step of the schedule: it leaves the counts the
 * window SYNCs go by alone. The header's per-kind and call counts are the
 * streams' summed at the end (count_ops), not kept per op. Once or twice
 * per event: inline. */
static inline __attribute__((always_inline)) int64_t emit(comp_t *c, uint32_t t, unsigned kind, unsigned flags,
							  uint32_t slot, uint64_t size, uint64_t arg)
{
	ar_wl_thread_t *th = &c->thr[t];
	strm_t *p = &c->strm[t];
	if (__builtin_expect(p->n == c->hdr->seg_ops, 0) && flush_pending(c, t) != 0)
		return -1;
	p->bytes = (uint32_t)(ar_wl_encode_op(&p->st, kind, flags, slot, size, arg, p->buf + p->bytes) - p->buf);
	p->n++;
	th->ops_by_kind[kind]++;
	if (!(flags & AR_WL_F_DEP))
		p->g_last = ++c->gops;
	return (int64_t)th->nops++;
}

/* The header's op counts: every op emit() wrote is counted in its stream's
 * ops_by_kind, and the heap calls are the kinds below AR_WL_NCALLS. */
static void count_ops(comp_t *c)
{
	for (uint32_t t = 0; t < c->nthr; t++)
		for (unsigned k = 0; k < AR_WL_NKINDS; k++) {
			c->hdr->ops_by_kind[k] += c->thr[t].ops_by_kind[k];
			if (k < AR_WL_NCALLS)
				c->hdr->calls += c->thr[t].ops_by_kind[k];
		}
}

static int dep_emit(comp_t *c, uint32_t t, const cslot_t *sl);

/* Stream t is about to work on slot s. When the previous op on s ran on
 * another stream, t first waits until that stream has done it (a SYNC
 * flagged AR_WL_F_DEP). 0, or -1 when the output cannot be written. Once
 * per op, and mostly nothing to do: the test inline, the rest not. */
static inline __attribute__((always_inline)) int dep_before(comp_t *c, uint32_t t, uint32_t s)
{
	const cslot_t *sl = &c->slots[s];
	if (sl->last_thread == NONE32 || sl->last_thread == t)
		return 0;
	return dep_emit(c, t, sl);
}

static int dep_emit(comp_t *c, uint32_t t, const cslot_t *sl)
{
	if (sl->live)
		c->hdr->cross_thread_deps++;
	else
		c->hdr->reuse_deps++;
	return emit(c, t, AR_WL_SYNC, AR_WL_F_DEP, sl->last_thread, sl->last_op + 1, 0) < 0 ? -1 : 0;
}

/* Record that op idx of stream t works on slot s. */
static inline void link_op(comp_t *c, uint32_t t, uint32_t s, uint64_t idx)
{
	cslot_t *sl = &c->slots[s];
	sl->last_thread = t;
	sl->last_op = idx;
}

/* Doubly linked FIFO helpers over the slot array; g selects which pair of
 * links (per-thread or global) a list uses. Nothing is ever inserted
 * before a list's head (pushes go to the tail), so a head leaves its list
 * as its head, and its prev link is never read: removing the head leaves
 * the next slot's prev link stale instead of writing it. That spares a
 * store into the next-oldest free slot's record, which is rarely in the
 * cache, on every reuse. Every slot but the head has a valid prev link. */
#define LINKS(c, s, g) ((g) ? (c)->slots[s].gl : (c)->slots[s].tl) /* [0]=prev [1]=next */

static inline void fl_push(comp_t *c, flist_t *l, uint32_t s, int g)
{
	uint32_t *k = LINKS(c, s, g);
	k[0] = l->tail;
	k[1] = NONE32;
	if (l->tail == NONE32)
		l->head = s;
	else
		LINKS(c, l->tail, g)[1] = s;
	l->tail = s;
}

static inline void fl_remove(comp_t *c, flist_t *l, uint32_t s, int g)
{
	uint32_t *k = LINKS(c, s, g);
	if (l->head == s) {
		l->head = k[1];
		if (k[1] == NONE32)
			l->tail = NONE32;
		return;
	}
	LINKS(c, k[0], g)[1] = k[1];
	if (k[1] == NONE32)
		l->tail = k[0];
	else
		LINKS(c, k[1], g)[0] = k[0];
}

static uint32_t slot_new(comp_t *c);

/* A slot for a new block of thread t at sequence seq: the oldest slot t
 * itself released (no dependency), else the oldest released by anyone if
 * that was at least AR_WL_REUSE_DISTANCE events ago (a dependency that is
 * almost always already satisfied in replay), else a new slot. Returns
 * NONE32 when memory is short. */
static inline __attribute__((always_inline)) uint32_t slot_get(comp_t *c, uint32_t t, uint64_t seq)
{
	uint32_t h = c->tfree[t].head;
	if (h == NONE32 && c->gfree.head != NONE32 &&
	    seq - c->slots[c->gfree.head].released_seq >= AR_WL_REUSE_DISTANCE)
		h = c->gfree.head;
	if (h != NONE32) {
		fl_remove(c, &c->tfree[c->slots[h].last_thread], h, 0);
		if (c->nthr > 1)
			fl_remove(c, &c->gfree, h, 1);
		return h;
	}
	return slot_new(c);
}

/* A slot never used before, or NONE32 when memory is short. Once per slot:
 * out of line. */
static __attribute__((noinline)) uint32_t slot_new(comp_t *c)
{
	if (c->nslots == NONE32 - 1)
		return NONE32;
	if (c->nslots == c->slots_cap) {
		uint32_t cap = c->slots_cap ? c->slots_cap * 2 : 1024;
		cslot_t *n = realloc(c->slots, (size_t)cap * sizeof *n);
		if (!n)
			return NONE32;
		c->slots = n;
		c->slots_cap = cap;
	}
	cslot_t *sl = &c->slots[c->nslots];
	memset(sl, 0, sizeof *sl);
	sl->last_thread = NONE32;
	return c->nslots++;
}

/* Slot s was released by its last op (which ran on stream last_thread);
 * the live set no longer has its block. */
static inline __attribute__((always_inline)) void slot_release(comp_t *c, uint32_t s, uint64_t seq)
{
	cslot_t *sl = &c->slots[s];
	sl->live = 0;
	sl->released_seq = seq;
	fl_push(c, &c->tfree[sl->last_thread], s, 0);
	if (c->nthr > 1)
		fl_push(c, &c->gfree, s, 1);
}

/* The live set's callback: block b now lives in slot b->tag. (A block
 * the set displaced, its free lost, keeps its slot and stays live.) */
static void on_acquired(void *ctx, const ar_live_t *b)
{
	comp_t *c = ctx;
	cslot_t *sl = &c->slots[b->tag];
	sl->live = 1;
	c->hdr->trace_allocs++;
	if (live_bytes(c) > c->hdr->peak_live_bytes) {
		/* A new peak, reached by the op that link_op recorded last on the
		 * slot (also for a realloc acquired late, at its seq2):
		 * --access-pass walks the live blocks right after it (workload.h). */
		c->hdr->peak_live_bytes = live64(c);
		c->hdr->peak_thread = sl->last_thread;
		c->hdr->peak_op = sl->last_op + 1;
	}
	uint64_t blocks = c->live.len + c->live.displaced + (c->pre_blocks - c->live.preexisting_blocks);
	if (blocks > c->hdr->peak_live_blocks)
		c->hdr->peak_live_blocks = blocks;
}

/* The live set's callback for a pre-existing block (SPEC 6.11) that event
 * `by` releases: a new slot, allocated (b->bytes, its old_size) in the
 * prelude of by's stream; process() takes the slot from c->pre_slot. */
static void on_preexisting(void *ctx, const ar_live_t *b, const ar_event_t *by)
{
	comp_t *c = ctx;
	uint32_t t = stream_of(c, by->thread), s;
	c->pre_slot = NONE32;
	if (t == NONE32 || c->pre_fill[t] >= c->pre_count[t] || (s = slot_new(c)) == NONE32) {
		c->pre_overflow = 1; /* the two passes disagree, or memory is short */
		return;
	}
	uint64_t idx = c->pre_fill[t]++;
	/* arg holds the block's recorded address until finish_output sorts
	 * the prelude by it (a MALLOC has no arg of its own) */
	c->pre_ops[t][idx] = (ar_wl_op_t){ .kind = AR_WL_MALLOC, .slot = s, .size = b->bytes, .arg = by->ptr };
	link_op(c, t, s, idx);
	c->slots[s].live = 1;
	c->pre_slot = s;
}

/* The slot of a release that ar_liveset_release did not find: a
 * pre-existing block's (on_preexisting ran), else NONE32. */
static uint32_t take_preexisting(comp_t *c, const ar_event_t *e)
{
	uint32_t s = c->live.window && e->old_size ? c->pre_slot : NONE32;
	c->pre_slot = NONE32;
	return s;
}

/* e->result lives in slot s: now, or from e->seq2 on (SPEC 4). */
static int acquire(comp_t *c, const ar_event_t *e, uint32_t s)
{
	if (ar_liveset_acquire(&c->live, e, s) != 0)
		return errf(c, AR_ENOMEM, "out of memory for the address table");
	return 0;
}

/* The workload kind of a trace op plus one; 0 for an op replay does not
 * know (a code the header's op table names). A table: one load per event. */
static const uint8_t kinds1[256] = {
	[AR_OP_MALLOC] = AR_WL_MALLOC + 1,
	[AR_OP_CALLOC] = AR_WL_CALLOC + 1,
	[AR_OP_REALLOC] = AR_WL_REALLOC + 1,
	[AR_OP_REALLOCARRAY] = AR_WL_REALLOCARRAY + 1,
	[AR_OP_FREE] = AR_WL_FREE + 1,
	[AR_OP_POSIX_MEMALIGN] = AR_WL_POSIX_MEMALIGN + 1,
	[AR_OP_ALIGNED_ALLOC] = AR_WL_ALIGNED_ALLOC + 1,
	[AR_OP_MEMALIGN] = AR_WL_MEMALIGN + 1,
	[AR_OP_VALLOC] = AR_WL_VALLOC + 1,
	[AR_OP_PVALLOC] = AR_WL_PVALLOC + 1,
};

/* The workload kind of a trace op, or -1 when replay does not know it. */
static inline int kind_of(uint8_t op)
{
	return (int)kinds1[op] - 1;
}

#define FULL() (c->err->code ? c->err->code : errf(c, AR_EIO, "the workload cannot be written"))
#define NOSLOTS() errf(c, AR_ENOMEM, "out of slots (memory)")

/* Stream t is about to resume. If other streams did at least
 * AR_WL_SYNC_WINDOW ops since its last one, the recorded thread was held
 * back by something the trace cannot show (workload.h): make it wait until
 * each stream that moved meanwhile is within the window of where the trace
 * had it — except the stream `handed` that t already waits for exactly (a
 * hand-off), or NONE32. */
static void sync_before(comp_t *c, uint32_t t, uint32_t handed)
{
	uint64_t mine = c->strm[t].g_last;
	if (c->gops - mine < AR_WL_SYNC_WINDOW || mine == 0)
		return;
	for (uint32_t u = 0; u < c->nthr; u++) {
		uint64_t done = c->thr[u].nops;
		if (u == t || u == handed || c->strm[u].g_last <= mine ||
		    done <= AR_WL_SYNC_WINDOW)
			continue;
		if (c->sync_budget[t] == 0) {
			c->hdr->sync_dropped++;
			continue;
		}
		if (emit(c, t, AR_WL_SYNC, 0, u, done - AR_WL_SYNC_WINDOW, 0) >= 0) {
			c->sync_budget[t]--;
			c->hdr->sync_ops++;
		}
	}
}

/* The resuming stream t was idle while the run ran: the run has at least
 * AR_WL_HANDOFF_IDLE_RUN events and t's pause (from its previous event to
 * e) exceeds AR_WL_HANDOFF_IDLE_FACTOR times its usual spacing and the
 * clock's granularity. */
static int resumer_was_idle(const comp_t *c, uint32_t t, const ar_event_t *e)
{
	uint64_t prev = c->strm[t].last_ns, sp = c->strm[t].spacing_ns;
	if (c->run_len < AR_WL_HANDOFF_IDLE_RUN || !prev || !sp || e->time_ns < prev - 1)
		return 0;
	uint64_t pause = e->time_ns - (prev - 1);
	return pause > c->eps_ns && pause / AR_WL_HANDOFF_IDLE_FACTOR > sp;
}

/* Emit the SYNC of a hand-off from stream a (its run just ended) to stream
 * t: wait until a has done every op it has now. It comes from t's hand-off
 * budget, else from its SYNC budget. Returns 0, or -1 when neither budget
 * nor the stream has room for it. */
static int emit_handoff(comp_t *c, uint32_t t, uint32_t a)
{
	uint64_t *budget = c->handoff_budget[t] ? &c->handoff_budget[t] : &c->sync_budget[t];
	if (*budget == 0 || emit(c, t, AR_WL_SYNC, 0, a, c->thr[a].nops, 0) < 0)
		return -1;
	(*budget)--;
	c->hdr->sync_ops++;
	return 0;
}

/* Event e of stream t arrives. On a switch of thread in sequence order,
 * decide what it is (workload.h, the schedule) and, for a hand-off, make t
 * wait until the stream that ran has done every op it had. Returns the
 * stream t must no longer wait for loosely (the hand-off's), or NONE32. */
static uint32_t schedule_event(comp_t *c, uint32_t t, const ar_event_t *e)
{
	uint32_t handed = NONE32;
	if (c->run_thread != t) {
		uint32_t a = c->run_thread;
		if (a == NONE32) {
			/* the first event: no switch */
		} else if (c->schedule == AR_WL_SCHEDULE_FREE ||
			   (c->run_len < AR_WL_HANDOFF_MIN_RUN && !resumer_was_idle(c, t, e))) {
			c->hdr->switches_interleaved++;
		} else if (c->thr[a].nops == 0) {
			/* its events were all skipped: nothing to wait for */
			c->hdr->handoffs++;
		} else if (emit_handoff(c, t, a) != 0) {
			/* (a full stream fails the event's own emit() right after) */
			c->hdr->handoffs_dropped++;
		} else {
			c->hdr->handoffs++;
			handed = a;
		}
		if (a != NONE32) {
			c->hdr->switches++;
			/* A time is read after the seq is taken (SPEC 4), so it may be
			 * late (the thread was preempted in between), never early: the
			 * next event's time bounds the run's last one too. */
			if (e->time_ns < c->strm[a].last_ns - 1)
				c->strm[a].last_ns = e->time_ns + 1;
		}
		c->run_thread = t;
		c->run_len = 0;
	} else if (c->strm[t].last_ns && e->time_ns >= c->strm[t].last_ns - 1) {
		/* t's usual spacing: a running mean (1/8 weight), in ns; the +1
		 * keeps it above 0, which means "not known yet" */
		uint64_t g = e->time_ns - (c->strm[t].last_ns - 1), sp = c->strm[t].spacing_ns;
		c->strm[t].spacing_ns = sp ? sp - sp / 8 + g / 8 + 1 : g + 1;
	}
	c->run_len++;
	c->strm[t].last_ns = e->time_ns + 1;
	return handed;
}

static int process(comp_t *c, uint32_t t, const ar_event_t *e)
{
	int kind = kind_of(e->op);
	if (kind < 0) {
		c->hdr->skipped_unknown_ops++;
		return 0;
	}
	int64_t idx;
	uint32_t s;
	ar_live_t b;
	switch (kind) {
	case AR_WL_FREE:
		if (!e->ptr) /* free(0): a real, cheap call; replay it as is */
			return emit(c, t, kind, 0, AR_WL_NOSLOT, 0, 0) < 0 ? FULL() : 0;
		if (ar_liveset_release(&c->live, e->ptr, e, &b)) {
			s = (uint32_t)b.tag;
		} else if ((s = take_preexisting(c, e)) == NONE32) {
			c->hdr->skipped_unknown_frees++;
			return 0;
		}
		if (dep_before(c, t, s) != 0 || (idx = emit(c, t, kind, 0, s, 0, 0)) < 0)
			return FULL();
		link_op(c, t, s, (uint64_t)idx);
		slot_release(c, s, e->seq);
		return 0;
	case AR_WL_REALLOC:
	case AR_WL_REALLOCARRAY: {
		uint64_t count = kind == AR_WL_REALLOCARRAY ? e->count : 0;
		uint64_t request = ar_event_request_bytes(e);
		/* SPEC 5.5: a realloc that succeeded, or realloc(p, 0) returning
		 * NULL, ends p's life at seq; a failed one leaves p live. */
		int known = ar_event_releases_input(e) ? ar_liveset_release(&c->live, e->ptr, e, &b)
						       : ar_liveset_find(&c->live, e->ptr, &b);
		s = known ? (uint32_t)b.tag : ar_event_releases_input(e) ? take_preexisting(c, e) : NONE32;
		if (s == NONE32) { /* realloc(NULL, n), or of an unknown pointer */
			if (e->ptr)
				c->hdr->unknown_reallocs++;
			if (!e->result) {
				if (request)
					c->hdr->trace_null_results++;
				return emit(c, t, kind, AR_WL_F_NOSRC | AR_WL_F_TRACE_NULL, AR_WL_NOSLOT,
					    e->size, count) < 0 ? FULL() : 0;
			}
			if ((s = slot_get(c, t, e->seq)) == NONE32)
				return NOSLOTS();
			if (dep_before(c, t, s) != 0 ||
			    (idx = emit(c, t, kind, AR_WL_F_NOSRC, s, e->size, count)) < 0)
				return FULL();
			link_op(c, t, s, (uint64_t)idx);
			c->slots[s].live = 1;
			return acquire(c, e, s);
		}
		unsigned flags = e->result ? 0 : AR_WL_F_TRACE_NULL;
		if (dep_before(c, t, s) != 0 || (idx = emit(c, t, kind, flags, s, e->size, count)) < 0)
			return FULL();
		link_op(c, t, s, (uint64_t)idx);
		if (e->result) /* released at seq (above), result owned at seq2 */
			return acquire(c, e, s);
		if (request == 0) { /* realloc(p, 0) -> NULL freed p (released above) */
			slot_release(c, s, e->seq);
		} else {
			c->hdr->trace_null_results++; /* failed: p stays live */
		}
		return 0;
	}
	default: { /* the allocation calls */
		uint64_t arg = kind == AR_WL_CALLOC ? e->count : e->align;
		if (!e->result) {
			c->hdr->trace_null_results++;
			return emit(c, t, kind, AR_WL_F_TRACE_NULL, AR_WL_NOSLOT, e->size, arg) < 0 ? FULL() : 0;
		}
		if ((s = slot_get(c, t, e->seq)) == NONE32)
			return NOSLOTS();
		if (dep_before(c, t, s) != 0 || (idx = emit(c, t, kind, 0, s, e->size, arg)) < 0)
			return FULL();
		link_op(c, t, s, (uint64_t)idx);
		return acquire(c, e, s);
	}
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* SYNC ops one stream may hold (workload.h): a few per window of the trace. */
static uint64_t sync_budget(uint64_t events, uint32_t nthreads)
{
	return nthreads > 1 ? (events / AR_WL_SYNC_WINDOW + 1) * AR_WL_SYNC_PER_WINDOW : 0;
}

/* Exact hand-off SYNCs a stream with `mine` of the trace's `events` may
 * hold (workload.h): one per run it resumes, so at most its own events,
 * and each ends a run of at least AR_WL_HANDOFF_IDLE_RUN events of the
 * others. In all, at most one per AR_WL_HANDOFF_IDLE_RUN events are used. */
static uint64_t handoff_budget(uint64_t events, uint64_t mine, uint32_t nthreads)
{
	uint64_t others = (events > mine ? events - mine : 0) / AR_WL_HANDOFF_IDLE_RUN;
	return nthreads > 1 ? (mine < others ? mine : others) : 0;
}

/* Streams of the threads tis[0..n) (tis[0] may be NULL: an empty trace).
 * Thread indices are the writer's choice (SPEC 6.4: not necessarily dense,
 * up to 2^32-1): a direct table when they are small, else a sorted array
 * searched per event. */
static int map_streams(comp_t *c, const ar_thread_info_t **tis, uint32_t n)
{
	uint32_t maxidx = 0;
	for (uint32_t i = 0; tis[0] && i < n; i++)
		if (tis[i]->index > maxidx)
			maxidx = tis[i]->index;
	if (maxidx < 65536) {
		c->tmap_len = maxidx + 1;
		if (!(c->tmap = malloc((size_t)c->tmap_len * sizeof *c->tmap)))
			return errf(c, AR_ENOMEM, "out of memory");
		memset(c->tmap, 0xff, (size_t)c->tmap_len * sizeof *c->tmap);
	} else if (!(c->tsorted = malloc((size_t)n * sizeof *c->tsorted))) {
		return errf(c, AR_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < n; i++) {
		const ar_thread_info_t *ti = tis[i];
		if (ti && c->tmap)
			c->tmap[ti->index] = i;
		else if (c->tsorted)
			c->tsorted[i] = (uint64_t)(ti ? ti->index : 0) << 32 | i;
	}
	if (c->tsorted)
		qsort(c->tsorted, n, sizeof *c->tsorted, cmp_u64);
	c->nthr = n;
	return 0;
}

/* First pass of a window trace: count each stream's pre-existing blocks. */
static void count_preexisting(void *ctx, const ar_live_t *b, const ar_event_t *by)
{
	comp_t *c = ctx;
	uint32_t t = stream_of(c, by->thread);
	if (t != NONE32)
		c->pre_count[t]++;
	c->pre_blocks++;
	c->pre_total += b->bytes;
}

static int find_preexisting(comp_t *c, ar_reader_t *r, uint32_t n)
{
	c->pre_count = calloc(n, sizeof *c->pre_count);
	c->pre_fill = calloc(n, sizeof *c->pre_fill);
	if (!c->pre_count || !c->pre_fill)
		return errf(c, AR_ENOMEM, "out of memory");
	if (!c->window)
		return 0;
	ar_liveset_t ls;
	ar_liveset_init(&ls, NULL, NULL, c);
	ls.window = 1;
	ls.preexisting = count_preexisting;
	ar_event_t e;
	int more, rc = 0;
	while (rc == 0 && (more = ar_reader_next_merged(r, &e)) == 1)
		rc = ar_liveset_apply(&ls, &e, 0);
	ar_liveset_free(&ls);
	ar_reader_rewind(r); /* a corrupt tail stops the second pass at the same event */
	return rc ? errf(c, AR_ENOMEM, "out of memory for the address table") : 0;
}

/* Plan the streams of reader r and create the output file. */
static int open_output(comp_t *c, ar_reader_t *r, const char *out_path)
{
	/* One stream per thread with events: threads the metadata declares
	 * but that made no heap call have nothing to replay (SPEC 6.2). */
	uint32_t nall = ar_reader_thread_count(r), n = 0;
	for (uint32_t i = 0; i < nall; i++)
		n += ar_reader_thread_at(r, i)->events != 0;
	if (n > AR_WL_MAX_THREADS) {
		snprintf(c->err->msg, sizeof c->err->msg,
			 "%s: %u threads make heap calls; a replay runs one thread per traced thread and "
			 "supports at most %u (docs/RESULTS.md)", c->path, n, AR_WL_MAX_THREADS);
		return c->err->code = AR_ELIMIT;
	}
	const ar_thread_info_t **tis = calloc(n ? n : 1, sizeof *tis);
	if (!tis)
		return errf(c, AR_ENOMEM, "out of memory");
	for (uint32_t i = 0, k = 0; i < nall; i++)
		if (ar_reader_thread_at(r, i)->events)
			tis[k++] = ar_reader_thread_at(r, i);
	if (n == 0)
		n = 1; /* an empty trace still replays: one thread, no ops */
	int rc0 = map_streams(c, tis, n);
	if (rc0 == 0)
		rc0 = find_preexisting(c, r, n);
	if (rc0 != 0) {
		free(tis);
		return rc0;
	}
	uint64_t events = ar_reader_event_count(r);
	c->handoff_budget = calloc(n, sizeof *c->handoff_budget);
	if (!c->handoff_budget) {
		free(tis);
		return errf(c, AR_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < n; i++)
		c->handoff_budget[i] = handoff_budget(events, tis[i] ? tis[i]->events : 0, n);
	/* Never through a symbolic link; a cache's temporary file is created
	 * new and private (workload.h, ar_wl_compile_opts_t.exclusive). */
	int fd = c->exclusive ? open(out_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
			      : open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	c->created = fd >= 0;
	if (fd < 0) {
		int e = errno;
		free(tis);
		c->err->sys_errno = e;
		snprintf(c->err->msg, sizeof c->err->msg, "cannot create workload %s: %s", out_path,
			 strerror(e));
		return c->err->code = AR_EIO;
	}
	c->fd = fd;
	c->woff = sizeof(ar_wl_header_t); /* the header is written last */
	c->hdr = &c->hdr_mem;
	c->hdr->magic = AR_WL_MAGIC;
	c->hdr->version = AR_WL_VERSION;
	c->hdr->nthreads = n;
	c->hdr->schedule = (uint32_t)c->schedule;
	c->hdr->trace_file_bytes = ar_reader_file_size(r);
	c->hdr->trace_indexed_events = events;
	/* one segment's buffer per stream, within AR_WL_SEG_MEMORY */
	uint32_t seg_ops = AR_WL_SEG_OPS;
	while (seg_ops > AR_WL_SEG_OPS_MIN && (uint64_t)n * seg_ops * sizeof(ar_wl_op_t) > AR_WL_SEG_MEMORY)
		seg_ops /= 2;
	c->hdr->seg_ops = seg_ops;
	c->thr = calloc(n, sizeof *c->thr);
	c->strm = calloc(n, sizeof *c->strm);
	c->segs = calloc(n, sizeof *c->segs);
	c->pre_ops = calloc(n, sizeof *c->pre_ops);
	c->enc = malloc((size_t)seg_ops * AR_WL_OP_MAX_BYTES);
	c->md = EVP_MD_CTX_new();
	c->tfree = malloc(n * sizeof *c->tfree);
	if (c->tfree)
		memset(c->tfree, 0xff, n * sizeof *c->tfree);
	int rc = 0;
	if (!c->thr || !c->strm || !c->segs || !c->pre_ops || !c->enc || !c->md || !c->tfree ||
	    EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
		rc = errf(c, AR_ENOMEM, "out of memory");
	} else {
		for (uint32_t i = 0; rc == 0 && i < n; i++) {
			const ar_thread_info_t *ti = tis[i];
			c->thr[i].trace_index = ti ? ti->index : 0;
			/* the prelude comes first, filled by the second pass */
			c->thr[i].prelude_ops = c->thr[i].nops = c->pre_count[i];
			c->strm[i].buf = malloc((size_t)seg_ops * AR_WL_OP_MAX_BYTES);
			if (c->pre_count[i])
				c->pre_ops[i] = calloc(c->pre_count[i], sizeof(ar_wl_op_t));
			if (!c->strm[i].buf || (c->pre_count[i] && !c->pre_ops[i]))
				rc = errf(c, AR_ENOMEM, "out of memory");
		}
	}
	free(tis);
	c->sync_budget = malloc(n * sizeof *c->sync_budget);
	if (!c->sync_budget)
		rc = errf(c, AR_ENOMEM, "out of memory");
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		c->sync_budget[i] = sync_budget(events, n);
	return rc;
}

static int by_recorded_address(const void *a, const void *b)
{
	const ar_wl_op_t *x = a, *y = b;
	return x->arg < y->arg ? -1 : x->arg > y->arg;
}

/* A stream's prelude in the order of its blocks' recorded addresses (each
 * live at the window's start, so each address once), not the order the
 * window releases them: the recorded allocator laid the blocks out as the
 * program allocated them, more or less, and allocating them in that order
 * gives every allocator a heap laid out like the one the program had. In
 * release order, blocks the window frees together were packed together,
 * and the redis window of docs/FIDELITY.md replayed under jemalloc in 123
 * MiB of heap instead of 85. Prelude ops are run before any op of the
 * window and are no other stream's dependency, so their order is free. */
static void order_prelude(ar_wl_op_t *ops, uint64_t n)
{
	qsort(ops, n, sizeof *ops, by_recorded_address);
	for (uint64_t k = 0; k < n; k++)
		ops[k].arg = 0;
}

/* The end of the output: the streams' last segments, the preludes, the
 * index (each stream's prelude segments, then the rest), the thread table,
 * then the header with the digest of all of it. 0, or an AR_E* code. */
static int finish_output(comp_t *c)
{
	ar_wl_header_t *h = c->hdr;
	for (uint32_t t = 0; t < c->nthr; t++)
		if (c->pre_count[t])
			order_prelude(c->pre_ops[t], c->pre_count[t]);
	seglist_t *pre = calloc(c->nthr, sizeof *pre);
	int rc = pre ? 0 : errf(c, AR_ENOMEM, "out of memory");
	for (uint32_t t = 0; rc == 0 && t < c->nthr; t++) {
		if (flush_pending(c, t) != 0)
			rc = FULL();
		for (uint64_t k = 0; rc == 0 && k < c->pre_count[t]; k += h->seg_ops) {
			uint64_t m = c->pre_count[t] - k < h->seg_ops ? c->pre_count[t] - k : h->seg_ops;
			if (write_segment(c, &pre[t], c->pre_ops[t] + k, (uint32_t)m) != 0)
				rc = FULL();
		}
	}
	static const uint8_t zeros[8];
	if (rc == 0 && c->woff % 8 && out_write(c, zeros, 8 - c->woff % 8) != 0)
		rc = FULL();
	h->index_offset = c->woff;
	uint64_t base = 0;
	for (uint32_t t = 0; rc == 0 && t < c->nthr; t++) {
		c->thr[t].seg_first = h->nsegs;
		c->thr[t].nsegs = pre[t].n + c->segs[t].n;
		c->thr[t].op_base = base;
		base += c->thr[t].nops;
		h->nsegs += c->thr[t].nsegs;
		if ((pre[t].n && out_write(c, pre[t].v, pre[t].n * sizeof *pre[t].v) != 0) ||
		    (c->segs[t].n && out_write(c, c->segs[t].v, c->segs[t].n * sizeof *c->segs[t].v) != 0))
			rc = FULL();
	}
	h->total_ops = base;
	h->threads_offset = c->woff;
	if (rc == 0 && out_write(c, c->thr, (size_t)c->nthr * sizeof *c->thr) != 0)
		rc = FULL();
	h->file_bytes = c->woff;
	if (h->max_seg_bytes == 0)
		h->max_seg_bytes = 1; /* no segment at all: a reader's buffer is still non-empty */
	unsigned mdlen = 0;
	if (rc == 0 && (EVP_DigestUpdate(c->md, h, sizeof *h) != 1 ||
			EVP_DigestFinal_ex(c->md, h->content_sha256, &mdlen) != 1 || mdlen != 32))
		rc = errf(c, AR_ENOMEM, "out of memory computing the workload's digest");
	/* the header, at the start; not hashed twice */
	if (rc == 0 && ar_pwrite_full(c->fd, h, sizeof *h, 0, NULL) != 0) {
		c->err->sys_errno = errno;
		rc = errf(c, AR_EIO, "cannot write the workload's header");
	}
	for (uint32_t t = 0; pre && t < c->nthr; t++)
		free(pre[t].v);
	free(pre);
	return rc;
}

/* Clock granularity of the trace (workload.h, the schedule): a few time
 * units, or the recorded clock resolution if coarser; saturating, since a
 * hostile header may claim any unit. */
static uint64_t clock_eps(const ar_header_t *h)
{
	uint64_t eps;
	if (__builtin_mul_overflow(h->time_unit_ns, (uint64_t)AR_WL_HANDOFF_EPS_UNITS, &eps))
		eps = UINT64_MAX / 2;
	if (h->clock_resolution_ns > eps)
		eps = h->clock_resolution_ns;
	return eps > UINT64_MAX / 2 ? UINT64_MAX / 2 : eps;
}

/* A window trace (SPEC 6.11): what the header says about it, and the
 * pre-existing blocks live from the start, which is where the live bytes
 * begin (the peak is there until the window allocates more than it frees
 * of them: peak_op is then the first op after stream 0's prelude). */
static void start_window(comp_t *c, const ar_reader_t *r)
{
	c->live.window = c->window;
	c->live.preexisting = on_preexisting;
	if (!c->window)
		return;
	const ar_window_info_t *w = ar_reader_window(r);
	c->hdr->window = 1;
	c->hdr->window_index = w ? w->index : 0;
	c->hdr->window_reason = w ? w->reason : 0;
	c->hdr->heap_at_start_bytes = w ? w->heap_in_use_bytes : 0;
	c->hdr->preexisting_blocks = c->pre_blocks;
	c->hdr->preexisting_bytes = c->pre_total > UINT64_MAX ? UINT64_MAX : (uint64_t)c->pre_total;
	c->hdr->peak_live_bytes = live64(c);
	c->hdr->peak_live_blocks = c->pre_blocks;
	c->hdr->peak_thread = 0;
	c->hdr->peak_op = c->pre_count[0];
}

int ar_wl_digest(const ar_workload_t *w, uint8_t out[32])
{
	ar_wl_header_t h = *w->hdr;
	memset(h.content_sha256, 0, sizeof h.content_sha256);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t cap = 1u << 20;
	char *buf = malloc(cap);
	unsigned n = 0;
	int ok = ctx && buf && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (uint64_t off = sizeof h; ok && off < h.file_bytes;) {
		size_t want = h.file_bytes - off < cap ? (size_t)(h.file_bytes - off) : cap;
		ok = ar_pread_full(w->fd, buf, want, off, NULL) == (ssize_t)want && EVP_DigestUpdate(ctx, buf, want);
		off += want;
	}
	ok = ok && EVP_DigestUpdate(ctx, &h, sizeof h) && EVP_DigestFinal_ex(ctx, out, &n) && n == 32;
	EVP_MD_CTX_free(ctx);
	free(buf);
	return ok ? 0 : -1;
}

int ar_wl_compile(const char *trace_path, const char *out_path, const char *sha256, ar_error_t *err)
{
	return ar_wl_compile_opts(trace_path, out_path, sha256, NULL, err);
}

int ar_wl_compile_progress(const char *trace_path, const char *out_path, const char *sha256,
			   ar_wl_progress_fn *progress, void *ctx, ar_error_t *err)
{
	ar_wl_compile_opts_t o = { .progress = progress, .progress_ctx = ctx };
	return ar_wl_compile_opts(trace_path, out_path, sha256, &o, err);
}

int ar_wl_compile_opts(const char *trace_path, const char *out_path, const char *sha256,
		       const ar_wl_compile_opts_t *opts, ar_error_t *err)
{
	static const ar_wl_compile_opts_t defaults = { .schedule = AR_WL_SCHEDULE_RECORDED };
	if (!opts)
		opts = &defaults;
	ar_wl_progress_fn *progress = opts->progress;
	void *ctx = opts->progress_ctx;
	uint64_t t0 = now_ns();
	memset(err, 0, sizeof *err);
	ar_reader_t *r = NULL;
	int rc = ar_reader_open(&r, trace_path, err);
	if (rc)
		return rc;
	if (opts->schedule != AR_WL_SCHEDULE_RECORDED && opts->schedule != AR_WL_SCHEDULE_FREE) {
		ar_reader_close(r);
		err->code = AR_EINVAL;
		snprintf(err->msg, sizeof err->msg, "%s: unknown schedule %d (recorded or free)",
			 trace_path, (int)opts->schedule);
		return AR_EINVAL;
	}
	comp_t c = { .err = err, .path = trace_path, .gfree = { NONE32, NONE32 },
		     .schedule = opts->schedule, .run_thread = NONE32, .exclusive = opts->exclusive,
		     .eps_ns = clock_eps(ar_reader_header(r)), .pre_slot = NONE32,
		     .window = (ar_reader_header(r)->flags & AR_HDR_WINDOW) != 0 };
	ar_wl_decoder_t dec = { 0 };
	c.fd = -1;
	if ((rc = open_output(&c, r, out_path)) != 0)
		goto out;
	ar_liveset_init(&c.live, NULL, on_acquired, &c);
	start_window(&c, r);
	uint64_t events = ar_reader_event_count(r);
	uint64_t interval = (events + AR_WL_SAMPLES - 1) / AR_WL_SAMPLES;
	if (interval < AR_WL_SAMPLE_MIN_EVENTS)
		interval = AR_WL_SAMPLE_MIN_EVENTS;
	uint64_t k = 0, sample_in = interval;
	const ar_event_t *e;
	int more;
	if (ar_wld_start(&dec, r) != 0) {
		rc = errf(&c, AR_ENOMEM, "cannot start the decoding thread");
		goto out;
	}
	while ((more = ar_wld_next(&dec, &e)) == 1) {
		uint32_t t = stream_of(&c, e->thread);
		if (t == NONE32) {
			rc = errf(&c, AR_EFORMAT, "an event names a thread the trace does not describe");
			goto out;
		}
		if (c.live.npending && ar_liveset_advance(&c.live, e->seq) != 0) {
			rc = errf(&c, AR_ENOMEM, "out of memory for the address table");
			goto out;
		}
		/* One stream never switches: the schedule's state is read only at
		 * a switch, and there is no other stream to wait for. */
		if (c.nthr > 1)
			sync_before(&c, t, schedule_event(&c, t, e));
		if ((rc = process(&c, t, e)) != 0 || (c.io_failed && (rc = c.err->code ? c.err->code : AR_EIO)))
			goto out;
		k++;
		/* every interval-th event (a countdown: no division per event) */
		if (--sample_in == 0) {
			sample_in = interval;
			if (c.hdr->nsamples < AR_WL_SAMPLES &&
			    emit(&c, t, AR_WL_SAMPLE, 0, c.hdr->nsamples, k, live64(&c)) >= 0)
				c.hdr->nsamples++;
		}
		/* A test per event, a call per AR_WL_PROGRESS_EVERY: the hook
		 * reads a clock, which per event would slow the loop down. */
		if (progress && k % AR_WL_PROGRESS_EVERY == 0)
			progress(ctx, k, events);
	}
	if (progress)
		progress(ctx, k, events);
	ar_wld_finish(&dec); /* the reader is ours again */
	if (ar_liveset_advance(&c.live, UINT64_MAX) != 0) {
		rc = errf(&c, AR_ENOMEM, "out of memory for the address table");
		goto out;
	}
	/* A decode error mid-way keeps the valid prefix (DESIGN: nothing lost
	 * silently): the status says so and the caller reports it. */
	for (uint32_t t = 0; !c.pre_overflow && t < c.nthr; t++)
		c.pre_overflow = c.pre_fill[t] != c.pre_count[t];
	if (c.pre_overflow) { /* both passes apply the same rule to the same events */
		rc = errf(&c, AR_EFORMAT, "the pre-existing blocks of the window differ between the two passes "
				       "(a compiler bug, or out of slots)");
		goto out;
	}
	count_ops(&c);
	c.hdr->trace_status = more < 0 ? AR_STATUS_CORRUPT : (uint32_t)ar_reader_status(r);
	c.hdr->events = k;
	c.hdr->lost_blocks = c.live.displaced;
	c.hdr->nslots = c.nslots;
	c.hdr->final_live_bytes = live64(&c);
	if (sha256)
		snprintf(c.hdr->trace_sha256, sizeof c.hdr->trace_sha256, "%s", sha256);
	c.hdr->compile_ns = now_ns() - t0;
	if ((rc = finish_output(&c)) != 0)
		goto out;
	if (close(c.fd) != 0) {
		c.fd = -1;
		rc = errf(&c, AR_EIO, "closing the workload failed (disk full?)");
		goto out;
	}
	c.fd = -1;
	rc = 0;
out:
	ar_wld_finish(&dec);
	if (c.fd >= 0)
		close(c.fd);
	if (rc && c.created)
		unlink(out_path);
	for (uint32_t t = 0; t < c.nthr; t++) {
		if (c.strm)
			free(c.strm[t].buf);
		if (c.segs)
			free(c.segs[t].v);
		if (c.pre_ops)
			free(c.pre_ops[t]);
	}
	free(c.strm);
	free(c.segs);
	free(c.pre_ops);
	free(c.thr);
	free(c.enc);
	EVP_MD_CTX_free(c.md);
	ar_liveset_free(&c.live);
	free(c.slots);
	free(c.tmap);
	free(c.tsorted);
	free(c.tfree);
	free(c.sync_budget);
	free(c.handoff_budget);
	free(c.pre_count);
	free(c.pre_fill);
	ar_reader_close(r);
	return rc;
}
