/*
 * rec_stacks.c — call stacks (--stacks) and the module map.
 *
 * Stacks are captured with libunwind (unw_backtrace, per-thread unwind
 * cache) and interned in a lock-free open-addressing table, so each distinct
 * stack is written to the trace once (SPEC: ar_meta_stack) by the thread that
 * first saw it; events then carry only the small id. The module map (path,
 * address range, GNU build-id of every loaded object) is what lets
 * alloctrace symbolise the raw return addresses offline; it is emitted at
 * start and again after every dlopen for the objects not reported yet.
 *
 * Invariants: a slot's key is claimed by CAS before its frames are written
 * and its id is published last (release), so a reader that sees an id sees
 * the frames; the shim's own frames are cut from the top of every stack; the
 * table never grows: when full, events go without a stack id (counted in
 * stacks_lost) rather than taking a lock.
 */
#define UNW_LOCAL_ONLY
#include <elf.h>
#include <libunwind.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rec_internal.h"

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
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&rec_stacks_init);
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
	/* libunwind's local unwinder makes no heap calls (its caches are
	 * mmap'ed), so in_shim stays REC_SHIM_HOOK: a signal handler's call
	 * arriving now is the program's and is counted as dropped. */
	int n = unw_backtrace(raw, (int)rec_cfg.stack_depth + 8);
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
	if (!rec_cfg.stack_depth || !t)
		return;
	while (atomic_exchange(&mod_lock, 1))
		sched_yield();
	struct scan_ctx c = {t};
	dl_iterate_phdr(scan_one, &c);
	atomic_store(&mod_lock, 0);
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
