/*
 * debug.c — the checks of the debug build (debug.h says what each is for);
 * compiled only into liballocrr-NAME-debug.so, with -DAR_ALLOC_DEBUG.
 *
 * Layout of a block as the program sees it, inside the core's block of
 * U = ar_core_usable_size(p) bytes (the core is always asked for
 * size + AR_DBG_GUARD, so U - size >= 16):
 *
 *     p                      p + size                      p + U
 *     [ program's bytes      )[ guard: 0xfd ...            )
 *
 * Invariants:
 *   - the live table holds exactly the blocks the program owns, each with
 *     its requested size; a block is removed before the core may reuse it
 *     and inserted only after the core returned it;
 *   - a block in the quarantine is owned by the core but will not be given
 *     to it until it leaves: its U bytes are all 0x5a unless the program
 *     wrote to it after free;
 *   - no lock is held while another is taken, or across a call into the
 *     core: the fork handlers may take them in any order.
 * Nothing here calls malloc: tables come from os.c, messages are formatted
 * by hand and written with write(2).
 */
#include "debug.h"

#ifndef AR_ALLOC_DEBUG
#error "debug.c belongs to the debug build only: compile it with -DAR_ALLOC_DEBUG"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_hash.h"
#include "lock.h"
#include "os.h"
#include "tunables.h"
#include "util.h"

/* ---- reporting ------------------------------------------------------------- */

typedef struct msg {
	char buf[512];
	size_t n;
} msg_t;

static void m_str(msg_t *m, const char *s)
{
	while (*s && m->n < sizeof m->buf - 1)
		m->buf[m->n++] = *s++;
}

static void m_dec(msg_t *m, uint64_t v)
{
	char d[24];
	int k = 0;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (k > 0 && m->n < sizeof m->buf - 1)
		m->buf[m->n++] = d[--k];
}

static void m_hex(msg_t *m, uint64_t v, int min_digits)
{
	char d[20];
	int k = 0;
	do
		d[k++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4) != 0 || k < min_digits);
	m_str(m, "0x");
	while (k > 0 && m->n < sizeof m->buf - 1)
		m->buf[m->n++] = d[--k];
}

/* "allocrr: NAME-debug: CHECK in CALL: block ADDR" */
static void m_start(msg_t *m, const char *check, const char *call, const void *p)
{
	m->n = 0;
	m_str(m, "allocrr: ");
	m_str(m, ar_core_name);
	m_str(m, "-debug: ");
	m_str(m, check);
	m_str(m, " in ");
	m_str(m, call);
	m_str(m, ": block ");
	m_hex(m, (uintptr_t)p, 1);
}

static _Noreturn void m_abort(msg_t *m)
{
	m->buf[m->n++] = '\n';
	ssize_t w = write(2, m->buf, m->n);
	(void)w;
	abort();
}

/* " of SIZE bytes" */
static void m_size(msg_t *m, size_t size)
{
	m_str(m, " of ");
	m_dec(m, size);
	m_str(m, " bytes");
}

/* Offset of the first byte of [p, p+n) that is not `byte`, or n. */
static size_t mismatch(const void *p, size_t n, unsigned char byte)
{
	const unsigned char *c = p;
	const uint64_t want = 0x0101010101010101ull * byte;
	size_t i = 0;
	while (i < n && ((uintptr_t)(c + i) & 7))
		if (c[i++] != byte)
			return i - 1;
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, c + i, 8);
		if (v != want)
			break;
	}
	for (; i < n; i++)
		if (c[i] != byte)
			return i;
	return n;
}

/* ": byte at offset OFF is 0xGOT, expected 0xWANT" */
static void m_byte(msg_t *m, const char *what, size_t off, unsigned got, unsigned want)
{
	m_str(m, ": ");
	m_str(m, what);
	m_str(m, " at offset ");
	m_dec(m, off);
	m_str(m, " is ");
	m_hex(m, got, 2);
	m_str(m, ", expected ");
	m_hex(m, want, 2);
}

/* ---- the live table: address -> requested size --------------------------------- */

/* common/ar_hash.h's table (linear probing, backward-shift deletion),
 * sharded by address so threads rarely share a lock; each shard's table lives
 * in its own mapping (never malloc: this is the allocator) and doubles at
 * half load. */
#define SHARDS 64
#define TABLE_MIN ((size_t)4096) /* entries: 64 KiB */

typedef struct entry {
	uintptr_t key; /* 0 = empty */
	size_t size;
} entry_t;

typedef struct shard {
	ar_lock_t lock;
	entry_t *tab;
	uint64_t cap; /* 0 before the first insert */
	size_t count;
} __attribute__((aligned(64))) shard_t;

static shard_t shards[SHARDS];

/* The product's top 6 bits pick the shard (shard_of), the next ones the
 * position in the shard's table (ar_hash.h takes the high bits). */
static inline uint64_t hash(uintptr_t key)
{
	return ((uint64_t)key * 0x9e3779b97f4a7c15ull) << 6;
}

static inline shard_t *shard_of(uintptr_t key)
{
	return &shards[(uint64_t)key * 0x9e3779b97f4a7c15ull >> 58];
}

#define ENTRY_EMPTY(e) ((e)->key == 0)
#define ENTRY_KEY(ctx, e) ((e)->key)
#define MAP_FREE(p, bytes) ar_os_unmap((p), (bytes))
AR_HASH_DEFINE(ltab, entry_t, ENTRY_EMPTY, ENTRY_KEY, hash)
AR_HASH_DEFINE_GROW(ltab, entry_t, ar_os_map, MAP_FREE)

/* 0 inserted; 1 key is already live (the core handed out a live block);
 * -1 no memory for the table. */
static int live_insert(const void *p, size_t size)
{
	uintptr_t key = (uintptr_t)p;
	shard_t *s = shard_of(key);
	int r = 0;
	ar_lock(&s->lock);
	/* Grow at half load; if that fails, carry on while a slot is left. */
	if (ltab_reserve(&s->tab, &s->cap, s->count, TABLE_MIN, NULL) != 0 && (!s->tab || s->count + 2 > s->cap)) {
		ar_unlock(&s->lock);
		return -1;
	}
	entry_t *e = &s->tab[ltab_pos(s->tab, s->cap - 1, NULL, key)];
	if (e->key) {
		r = 1;
	} else {
		*e = (entry_t){key, size};
		s->count++;
	}
	ar_unlock(&s->lock);
	return r;
}

/* Look p up; with remove, take it out. 0 and *size, or -1 when not live. */
static int live_find(const void *p, size_t *size, int remove)
{
	uintptr_t key = (uintptr_t)p;
	shard_t *s = shard_of(key);
	int r = -1;
	ar_lock(&s->lock);
	uint64_t i = ltab_find(s->tab, s->cap - 1, NULL, key);
	if (i != AR_HASH_ABSENT) {
		r = 0;
		*size = s->tab[i].size;
		if (remove) {
			ltab_remove_at(s->tab, s->cap - 1, NULL, i);
			s->count--;
		}
	}
	ar_unlock(&s->lock);
	return r;
}

/* ---- the quarantine ---------------------------------------------------------- */

/* A FIFO of freed blocks, at most Q_BLOCKS of them and q_cap bytes (usable
 * sizes); blocks above Q_BLOCK_MAX are neither filled nor held (every core
 * gives those their own mapping, unmapped on free — the debug build's
 * map_cache.c caches none by default — so a later access faults). */
#define Q_BLOCKS 4096
#define Q_BLOCK_MAX ((size_t)1 << 20)

typedef struct qentry {
	void *p;
	size_t size, usable;
} qentry_t;

static ar_lock_t q_lock = AR_LOCK_INIT;
static qentry_t q_ring[Q_BLOCKS];
static size_t q_head, q_count, q_bytes, q_cap;

/* The requested size of the block a core realloc is moving (for messages). */
static __thread size_t retire_size __attribute__((tls_model("initial-exec")));

void ar_dbg_init(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		ar_lock_reinit(&shards[i].lock);
	q_cap = ar_tunable_size("ALLOCRR_DEBUG_QUARANTINE", (size_t)4 << 20, 0, (size_t)1 << 30);
}

/* e left the quarantine: its fill must be intact; then the core gets it. */
static void release(const qentry_t *e, const char *when)
{
	size_t off = mismatch(e->p, e->usable, AR_DBG_FREE_BYTE);
	if (AR_UNLIKELY(off != e->usable)) {
		msg_t m;
		m_start(&m, "write after free", when, e->p);
		m_size(&m, e->size);
		m_byte(&m, "byte", off, ((const unsigned char *)e->p)[off], AR_DBG_FREE_BYTE);
		m_abort(&m);
	}
	ar_core_free(e->p);
}

/* Fill the freed block p and hold it back; release the oldest blocks to the
 * core as the quarantine overflows. */
static void quarantine(void *p, size_t size, size_t usable)
{
	if (usable > Q_BLOCK_MAX) {
		ar_core_free(p);
		return;
	}
	memset(p, AR_DBG_FREE_BYTE, usable);
	qentry_t mine = { p, size, usable };
	for (;;) {
		qentry_t old;
		ar_lock(&q_lock);
		if (q_count < Q_BLOCKS && q_bytes + usable <= q_cap) {
			q_ring[(q_head + q_count) % Q_BLOCKS] = mine;
			q_count++;
			q_bytes += usable;
			ar_unlock(&q_lock);
			return;
		}
		if (q_count == 0) { /* bigger than the whole quarantine */
			ar_unlock(&q_lock);
			release(&mine, "free() (verified at once)");
			return;
		}
		old = q_ring[q_head];
		q_head = (q_head + 1) % Q_BLOCKS;
		q_count--;
		q_bytes -= old.usable;
		ar_unlock(&q_lock);
		release(&old, "free() (the block was about to be reused)");
	}
}

/* At exit, verify what is still held: a write after free at the end of a
 * run is caught too. */
__attribute__((destructor)) static void verify_at_exit(void)
{
	ar_lock(&q_lock);
	for (size_t k = 0; k < q_count; k++) {
		const qentry_t *e = &q_ring[(q_head + k) % Q_BLOCKS];
		size_t off = mismatch(e->p, e->usable, AR_DBG_FREE_BYTE);
		if (off != e->usable) {
			msg_t m;
			m_start(&m, "write after free", "exit (quarantine check)", e->p);
			m_size(&m, e->size);
			m_byte(&m, "byte", off, ((const unsigned char *)e->p)[off], AR_DBG_FREE_BYTE);
			m_abort(&m);
		}
	}
	ar_unlock(&q_lock);
}

/* ---- the checks ------------------------------------------------------------------- */

/* p is not a live block: a double free if it is in the quarantine,
 * otherwise a pointer we never returned (or freed long ago). */
static _Noreturn void not_live(const void *p, const char *call)
{
	msg_t m;
	size_t size = 0;
	int found = 0;
	ar_lock(&q_lock);
	for (size_t k = 0; k < q_count && !found; k++)
		if (q_ring[(q_head + k) % Q_BLOCKS].p == p) {
			size = q_ring[(q_head + k) % Q_BLOCKS].size;
			found = 1;
		}
	ar_unlock(&q_lock);
	if (found) {
		m_start(&m, "double free", call, p);
		m_size(&m, size);
		m_str(&m, ": it was already freed");
	} else {
		m_start(&m, "invalid pointer", call, p);
		m_str(&m, " of unknown size: not a block this allocator returned (or freed long ago)");
	}
	m_abort(&m);
}

static void check_guard(const void *p, size_t size, size_t usable, const char *call)
{
	const unsigned char *g = (const unsigned char *)p + size;
	size_t off = mismatch(g, usable - size, AR_DBG_GUARD_BYTE);
	if (AR_UNLIKELY(off != usable - size)) {
		msg_t m;
		m_start(&m, "heap-buffer-overflow", call, p);
		m_size(&m, size);
		m_byte(&m, "guard byte", size + off, g[off], AR_DBG_GUARD_BYTE);
		m_abort(&m);
	}
}

/* The core returned p (or NULL) for a request of size bytes: fill, guard,
 * register. */
static void *born(void *p, size_t size, int fill, const char *call)
{
	if (!p)
		return NULL;
	size_t usable = ar_core_usable_size(p);
	if (fill)
		memset(p, AR_DBG_ALLOC_BYTE, size);
	memset((char *)p + size, AR_DBG_GUARD_BYTE, usable - size);
	int r = live_insert(p, size);
	if (AR_UNLIKELY(r == 1)) {
		msg_t m;
		m_start(&m, "allocator returned a live block", call, p);
		m_size(&m, size);
		m_abort(&m);
	}
	if (r < 0) {
		ar_core_free(p);
		return NULL;
	}
	return p;
}

void *ar_dbg_malloc(size_t size)
{
	return born(ar_core_malloc(size + AR_DBG_GUARD), size, 1, "malloc()");
}

void *ar_dbg_calloc(size_t size)
{
	return born(ar_core_calloc(size + AR_DBG_GUARD), size, 0, "calloc()");
}

void *ar_dbg_memalign(size_t align, size_t size)
{
	return born(ar_core_memalign(align, size + AR_DBG_GUARD), size, 1, "memalign()");
}

void ar_dbg_free(void *p)
{
	size_t size;
	if (live_find(p, &size, 1) != 0)
		not_live(p, "free()");
	size_t usable = ar_core_usable_size(p);
	check_guard(p, size, usable, "free()");
	quarantine(p, size, usable);
}

void *ar_dbg_realloc(void *p, size_t size)
{
	size_t old;
	/* Out of the table before the core may free p (a moved large block's
	 * address can be mapped again by another thread at once). */
	if (live_find(p, &old, 1) != 0)
		not_live(p, "realloc()");
	check_guard(p, old, ar_core_usable_size(p), "realloc()");
	retire_size = old;
	void *q = ar_core_realloc(p, size + AR_DBG_GUARD);
	if (!q) {
		live_insert(p, old); /* the slot it left is still there */
		return NULL;
	}
	size_t usable = ar_core_usable_size(q);
	if (size > old)
		memset((char *)q + old, AR_DBG_ALLOC_BYTE, size - old);
	memset((char *)q + size, AR_DBG_GUARD_BYTE, usable - size);
	int r = live_insert(q, size);
	if (AR_UNLIKELY(r != 0)) {
		/* p is gone and q cannot be tracked: nothing sound is left to do. */
		msg_t m;
		m_start(&m, r > 0 ? "allocator returned a live block" : "no memory for the debug table",
			"realloc()", q);
		m_size(&m, size);
		m_abort(&m);
	}
	return q;
}

void ar_dbg_retire(void *p)
{
	quarantine(p, retire_size, ar_core_usable_size(p));
}

size_t ar_dbg_usable_size(const void *p)
{
	size_t size;
	if (live_find(p, &size, 0) != 0)
		not_live(p, "malloc_usable_size()");
	return size;
}

void ar_dbg_fork_prepare(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		ar_lock(&shards[i].lock);
	ar_lock(&q_lock);
}

void ar_dbg_fork_parent(void)
{
	ar_unlock(&q_lock);
	for (unsigned i = 0; i < SHARDS; i++)
		ar_unlock(&shards[i].lock);
}

void ar_dbg_fork_child(void)
{
	ar_lock_reinit(&q_lock);
	for (unsigned i = 0; i < SHARDS; i++)
		ar_lock_reinit(&shards[i].lock);
}
