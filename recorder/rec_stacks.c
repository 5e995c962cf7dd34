/*
 * rec_stacks.c — call stacks (--stacks), the module map, and keeping both
 * out of fork's way.
 *
 * Stacks are captured with libunwind (unw_backtrace) and interned in a
 * lock-free open-addressing table, so each distinct stack is written to the
 * trace once (SPEC: ar_meta_stack) by the thread that first saw it; events
 * then carry only the small id. The module map (path, address range, GNU
 * build-id of every loaded object) is what lets alloctrace symbolise the raw
 * return addresses offline; it is emitted at start and again after every
 * dlopen for the objects not reported yet.
 *
 * Fork: unwinding takes locks nobody resets in a child — libunwind's
 * (Debian's 1.6.2 is built without per-thread caches: every unw_step looks
 * up one global cache behind a mutex, and a miss calls dl_iterate_phdr under
 * it) and the loader's dl_load_write_lock (glibc 2.36's fork reinitialises
 * dl_load_lock and dl_load_tls_lock only). A child forked while another
 * thread held one blocked for ever in its first unwind
 * (tests/e2e/torture_rec_fork.sh, "stacks: children that hung"). So every
 * call the shim makes into libunwind or the loader passes a gate that fork's
 * prepare handler closes and waits to see empty; program threads inside
 * dl_iterate_phdr or dlopen/dlclose are counted (rec_loader_enter). A child
 * forked while either may have held such a lock (the wait gave up, or fork
 * was called from a signal handler that interrupted an unwind) never enters
 * libunwind or the loader: it records without stacks and says so once.
 *
 * Invariants: a slot's key is claimed by CAS before its frames are written
 * and its id is published last (release), so a reader that sees an id sees
 * the frames; the shim's own frames are cut from the top of every stack; the
 * table never grows: when full, events go without a stack id (counted in
 * stacks_lost) rather than taking a lock. No thread of ours is inside
 * libunwind or dl_iterate_phdr at the moment of a fork whose child unwinds.
 */
#define UNW_LOCAL_ONLY
#include <elf.h>
#include <libunwind.h>
#include <link.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec_internal.h"

/* The stack table is not common/ar_hash.h's: any thread, and a signal
 * handler interrupting one, inserts at once without a lock (a lock could
 * deadlock against the handler), so slots are claimed by compare-and-swap,
 * published by a release store, never moved and never removed, and the
 * table never grows (probes stop after 64). ar_hash.h's table moves entries
 * on removal and growth and needs its caller to serialise. */
#define TABLE_BITS 20
#define TABLE_SIZE (1u << TABLE_BITS)
#define ARENA_FRAMES (16u * 1024u * 1024u) /* 128 MiB of address space, touched as used */

typedef struct slot {
	_Atomic uint64_t key;  /* hash of the frames, 0 = empty */
	_Atomic uint32_t id;   /* 0 until published */
	uint32_t depth;
	uint64_t off;          /* first frame in the arena */
} slot_t;

static slot_t *table;
static uint64_t *arena;
static _Atomic uint64_t arena_used;
static _Atomic uint32_t next_stack_id;
static _Atomic uint64_t stacks_lost;
static uintptr_t self_lo, self_hi; /* the shim's own text */

/* ---- the fork gate ----------------------------------------------------------
 * Threads count themselves in (one counter per stripe of threads, so the hot
 * path does not bounce one cache line between cores) and then check
 * forks_pending; prepare raises forks_pending and then sums the counters.
 * Both sides use sequentially consistent operations, so either the thread
 * sees the fork coming and steps back before touching libunwind, or prepare
 * sees it inside and waits for it to leave. */
#define GATE_STRIPES 16
static struct {
	_Alignas(REC_CACHELINE) _Atomic int n;
} gate[GATE_STRIPES];
static _Atomic int gate_bypass;     /* inside the gate without waiting (see gate_enter) */
static _Atomic int forks_pending;   /* forks between their prepare and parent handlers */
static _Atomic int loader_users;    /* threads inside dl_iterate_phdr, dlopen or dlclose */
static __thread int gate_depth;     /* the calling thread is inside the gate */
static __thread unsigned gate_stripe;
static __thread int loader_depth;   /* the calling thread is inside the loader */
static __thread int iterate_depth;  /* ... inside dl_iterate_phdr, holding its lock throughout */
static __thread int fork_closed;    /* this thread's prepare closed the gate */
static __thread int fork_drained;   /* ... and saw nobody inside before fork went on */
static int unwind_unsafe;           /* this process must not unwind (see fork_child) */
static _Atomic int unsafe_warned;

/* Prepare waits at most this long for our unwinders to leave: they leave in
 * microseconds (a preempted one in a scheduler round or so), but one could
 * be waiting for the loader's lock held by a program thread that waits for
 * the forking thread; then the child goes without stacks instead. */
#define FORK_GATE_WAIT_NS (10ull * 1000000000ull)
/* And at most this long for program threads inside the loader, which may be
 * running arbitrary callbacks or constructors. */
#define FORK_LOADER_WAIT_NS (100ull * 1000000ull)

static void wait_for_forks(void)
{
	int v;
	while ((v = atomic_load(&forks_pending)) != 0) {
		struct timespec ts = {0, 10 * 1000000}; /* bounded: never rely on one wake-up alone */
		syscall(SYS_futex, &forks_pending, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
	}
}

#define GATE_BYPASS GATE_STRIPES

static void gate_enter(unsigned stripe)
{
	stripe %= GATE_STRIPES;
	if (gate_depth) { /* a signal handler nested in our own unwind: we are counted already */
		gate_depth++;
		return;
	}
	if (loader_depth || fork_closed) {
		/* Inside the loader (a constructor dlopen runs, a dl_iterate_phdr
		 * callback): prepare waits for loader users to finish, so waiting
		 * here for the fork would only make both wait for the bound.
		 * Never unsafe: a fork that lands now finds us a loader user.
		 * Or the forking thread itself between its prepare and parent
		 * handlers (other atfork handlers, a signal handler): the fork it
		 * would wait for is its own, and it leaves before that goes on. */
		atomic_fetch_add(&gate_bypass, 1);
		gate_stripe = GATE_BYPASS;
		gate_depth = 1;
		return;
	}
	for (;;) {
		atomic_fetch_add(&gate[stripe].n, 1);
		if (REC_LIKELY(!atomic_load(&forks_pending)))
			break;
		atomic_fetch_sub(&gate[stripe].n, 1);
		wait_for_forks();
	}
	gate_stripe = stripe;
	gate_depth = 1;
}

static void gate_leave(void)
{
	if (--gate_depth == 0)
		atomic_fetch_sub(gate_stripe == GATE_BYPASS ? &gate_bypass : &gate[gate_stripe].n, 1);
}

static int gate_count(void)
{
	int n = 0;
	for (unsigned i = 0; i < GATE_STRIPES; i++)
		n += atomic_load(&gate[i].n);
	return n;
}

void rec_loader_enter(int iterate)
{
	loader_depth++;
	iterate_depth += iterate;
	atomic_fetch_add(&loader_users, 1);
}

void rec_loader_leave(int iterate)
{
	atomic_fetch_sub(&loader_users, 1);
	iterate_depth -= iterate;
	loader_depth--;
}

static void fork_pause(unsigned round)
{
	if (round < 64) {
		sched_yield();
	} else {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
}

/* pthread_atfork prepare: close the gate and wait until no thread of ours is
 * inside libunwind or the loader, then briefly for program threads inside
 * the loader. Records in this thread's TLS (which the child inherits)
 * whether that was reached. */
void rec_stacks_fork_prepare(void)
{
	fork_closed = fork_drained = 0;
	if (!rec_cfg.stack_depth || unwind_unsafe)
		return;
	fork_closed = 1;
	atomic_fetch_add(&forks_pending, 1);
	uint64_t t0 = rec_mono_ns(), t_gate = 0;
	for (unsigned round = 0;; round++) {
		uint64_t now = rec_mono_ns();
		if (!t_gate && gate_count() <= (gate_depth > 0))
			t_gate = now;
		if (t_gate && atomic_load(&loader_users) <= loader_depth) {
			fork_drained = gate_depth == 0;
			return;
		}
		if (now - t0 > FORK_GATE_WAIT_NS || (t_gate && now - t_gate > FORK_LOADER_WAIT_NS))
			return;
		fork_pause(round);
	}
}

/* pthread_atfork parent: open the gate again. */
void rec_stacks_fork_parent(void)
{
	if (!fork_closed)
		return;
	fork_closed = 0;
	if (atomic_fetch_sub(&forks_pending, 1) == 1)
		syscall(SYS_futex, &forks_pending, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
}

/* pthread_atfork child, before anything else of ours: the only thread left
 * is the forking one. Unwinding stays allowed only when prepare saw the gate
 * empty and no other thread was inside the loader when fork copied our
 * memory (loader_users is that moment's count: a program thread that
 * entered after prepare's look is caught here), and the forking thread
 * itself was not inside dl_iterate_phdr (a callback that forks: the lock is
 * recursive, but its owner is the parent's thread id, not the child's).
 * A fork from a constructor that dlopen runs is fine: dlopen holds only
 * dl_load_lock there, which fork resets. */
void rec_stacks_fork_child(void)
{
	int safe = fork_closed && fork_drained && iterate_depth == 0 &&
		   atomic_load(&loader_users) == loader_depth;
	for (unsigned i = 0; i < GATE_STRIPES; i++)
		atomic_store(&gate[i].n, 0);
	atomic_store(&gate_bypass, 0);
	if (gate_depth) /* fork from a handler inside our unwind: it will leave its stripe */
		atomic_store(gate_stripe == GATE_BYPASS ? &gate_bypass : &gate[gate_stripe].n, 1);
	atomic_store(&loader_users, loader_depth);
	atomic_store(&forks_pending, 0);
	fork_closed = fork_drained = 0;
	if (rec_cfg.stack_depth && !safe) {
		unwind_unsafe = 1;
		atomic_store(&unsafe_warned, 0);
	}
}

/* Said once, when the child first records an allocation (a child that only
 * execs says nothing): the trace is not silently missing its stacks. */
static void warn_unsafe(void)
{
	if (atomic_exchange(&unsafe_warned, 1))
		return;
	rec_warn("process %d was forked while another thread was inside the unwinder or the dynamic loader, "
		 "whose locks a child inherits held; it is recorded without stacks", (int)rec_getpid());
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (me >= lo && me < hi) {
			self_lo = lo;
			self_hi = hi;
			return 1;
		}
	}
	return 0;
}

int rec_stacks_init(void)
{
	if (!rec_cfg.stack_depth)
		return 0;
	table = rec_mmap(TABLE_SIZE * sizeof(slot_t));
	arena = rec_mmap(ARENA_FRAMES * sizeof(uint64_t));
	if (!table || !arena) {
		rec_cfg.stack_depth = 0;
		return -1;
	}
	/* Where libunwind was built without per-thread caches (Debian's) this
	 * quietly means its global cache and mutex: see the fork gate above. */
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	gate_enter(0);
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&rec_stacks_init);
	gate_leave();
	return 0;
}

static uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (uint32_t i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

struct stack_arg {
	uint32_t id, depth;
	const uint64_t *frames;
};
static int meta_stack(ar_metabuf_t *m, const void *arg)
{
	const struct stack_arg *a = arg;
	return ar_meta_stack(m, a->id, a->frames, a->depth);
}

uint32_t rec_stack_capture(rec_thread_t *t)
{
	void *raw[AR_STACK_MAX_DEPTH + 8];
	uint64_t f[AR_STACK_MAX_DEPTH];
	if (REC_UNLIKELY(unwind_unsafe)) {
		warn_unsafe();
		return 0;
	}
	/* libunwind's local unwinder makes no heap calls (its caches are
	 * mmap'ed), so in_shim stays REC_SHIM_HOOK: a signal handler's call
	 * arriving now is the program's and is counted as dropped. */
	gate_enter(t->index);
	int n = unw_backtrace(raw, (int)rec_cfg.stack_depth + 8);
	gate_leave();
	int skip = 0;
	while (skip < n && (uintptr_t)raw[skip] >= self_lo && (uintptr_t)raw[skip] < self_hi)
		skip++;
	uint32_t depth = 0;
	for (int i = skip; i < n && depth < rec_cfg.stack_depth; i++)
		f[depth++] = (uint64_t)(uintptr_t)raw[i];
	if (depth == 0)
		return 0;
	uint64_t h = hash_frames(f, depth);
	for (uint32_t probe = 0, i = (uint32_t)h & (TABLE_SIZE - 1); probe < 64;
	     probe++, i = (i + 1) & (TABLE_SIZE - 1)) {
		slot_t *s = &table[i];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == 0) {
			uint64_t z = 0;
			if (!atomic_compare_exchange_strong(&s->key, &z, h)) {
				k = z; /* someone else took it: examine their key */
			} else {
				uint64_t off = atomic_fetch_add(&arena_used, depth);
				uint32_t id = atomic_fetch_add(&next_stack_id, 1) + 1;
				if (off + depth > ARENA_FRAMES) {
					s->depth = 0;
					atomic_store_explicit(&s->id, UINT32_MAX, memory_order_release);
					atomic_fetch_add(&stacks_lost, 1);
					return 0;
				}
				memcpy(&arena[off], f, depth * sizeof *f);
				s->off = off;
				s->depth = depth;
				atomic_store_explicit(&s->id, id, memory_order_release);
				struct stack_arg a = {id, depth, f};
				rec_record_meta(t, meta_stack, &a);
				return id;
			}
		}
		if (k != h)
			continue;
		uint32_t id;
		while ((id = atomic_load_explicit(&s->id, memory_order_acquire)) == 0)
			sched_yield(); /* the claimer is copying the frames */
		if (id == UINT32_MAX)
			continue;
		if (s->depth == depth && memcmp(&arena[s->off], f, depth * sizeof *f) == 0)
			return id;
	}
	atomic_fetch_add(&stacks_lost, 1);
	return 0;
}

/* ---- module map ------------------------------------------------------------ */
#define MAX_MODULES 4096
static uint64_t known[MAX_MODULES]; /* base addresses already reported */
static unsigned nknown;
static _Atomic int mod_lock;

static int meta_module(ar_metabuf_t *m, const void *arg)
{
	return ar_meta_module(m, arg);
}

static void build_id(const struct dl_phdr_info *info, ar_module_info_t *mod)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			const uint8_t *name = p + sizeof *nh;
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
			    nh->n_descsz <= sizeof mod->build_id) {
				memcpy(mod->build_id, desc, nh->n_descsz);
				mod->build_id_len = nh->n_descsz;
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

struct scan_ctx {
	rec_thread_t *t;
};

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct scan_ctx *c = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	for (unsigned i = 0; i < nknown; i++)
		if (known[i] == lo)
			return 0;
	if (nknown < MAX_MODULES)
		known[nknown++] = lo;
	static ar_module_info_t mod; /* 600 bytes: keep it off small thread stacks; mod_lock held */
	memset(&mod, 0, sizeof mod);
	/* SPEC: base is the lowest mapped address; the symboliser derives the
	 * load bias from it and the file's first PT_LOAD. */
	mod.base = lo;
	mod.size = hi - lo;
	const char *name = info->dlpi_name;
	if (!name || !name[0]) {
		ssize_t n = readlink("/proc/self/exe", mod.path, sizeof mod.path - 1);
		mod.path[n > 0 ? n : 0] = 0;
	} else {
		rec_strlcpy(mod.path, name, sizeof mod.path);
	}
	build_id(info, &mod);
	rec_record_meta(c->t, meta_module, &mod);
	return 0;
}

void rec_modules_scan(rec_thread_t *t)
{
	if (!rec_cfg.stack_depth || !t || unwind_unsafe)
		return;
	gate_enter(t->index); /* before mod_lock: a thread waiting at the gate holds nothing */
	while (atomic_exchange(&mod_lock, 1))
		sched_yield();
	struct scan_ctx c = {t};
	dl_iterate_phdr(scan_one, &c);
	atomic_store(&mod_lock, 0);
	gate_leave();
}

/* dl_iterate_phdr behind the fork gate, for the shim's other walks of the
 * loaded objects (rec_ownlibs.c at start-up). */
int rec_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	gate_enter(0);
	int r = dl_iterate_phdr(cb, arg);
	gate_leave();
	return r;
}

/* Fork child: a new trace needs every stack and module again. */
void rec_stacks_reset_child(void)
{
	if (!rec_cfg.stack_depth)
		return;
	mod_lock = 0;
	nknown = 0;
	table = rec_mmap(TABLE_SIZE * sizeof(slot_t));
	arena = rec_mmap(ARENA_FRAMES * sizeof(uint64_t));
	atomic_store(&arena_used, 0);
	atomic_store(&next_stack_id, 0);
	if (!table || !arena)
		rec_cfg.stack_depth = 0;
}

/* A new trace in this process (a window, a rotation's next segment; no
 * thread is inside a hook): every stack and module again, in the new
 * file. The old tables are unmapped (only the stack capture, inside a
 * hook's in_call, uses them). The caller has the module map scanned again
 * (rec_modules_due). */
void rec_stacks_new_trace(void)
{
	if (!rec_cfg.stack_depth)
		return;
	slot_t *old_table = table;
	uint64_t *old_arena = arena;
	rec_stacks_reset_child();
	if (old_table)
		rec_munmap(old_table, TABLE_SIZE * sizeof(slot_t));
	if (old_arena)
		rec_munmap(old_arena, ARENA_FRAMES * sizeof(uint64_t));
}
