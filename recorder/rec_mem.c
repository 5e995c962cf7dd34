/*
 * rec_mem.c — the shim's own memory: mmap, and a static bootstrap pool.
 *
 * Why: the shim must never call the traced malloc for itself (that would
 * record our allocations as the program's and recurse). Everything it keeps
 * comes from anonymous mappings; the only exception is the small static pool
 * that serves the calloc/malloc calls dlsym() makes while we are still
 * resolving the real functions (the chicken-and-egg of every malloc shim).
 *
 * Invariants: bootstrap memory is never given back (free of a pool pointer is
 * a no-op); rec_writer_mem keeps the mapping size in a header in front of
 * each block because ar_mem_t's free (zstd's custom free) gets no size.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rec_internal.h"

/* The shim's live mappings, so the writer can ask how much of them is
 * resident (rec_mem_resident_bytes): every RSS figure of the trace includes
 * the recorder's buffers, and replay must tell the program's RSS from ours.
 * A fixed table, lock-free: a slot is claimed by CAS on its address; a
 * mapping that finds no slot is simply not counted. */
#define MAX_MAPS 512
static struct {
	_Atomic uintptr_t addr;
	_Atomic size_t len;
} maps[MAX_MAPS];

static void note_map(void *p, size_t len)
{
	for (int i = 0; i < MAX_MAPS; i++) {
		uintptr_t free_slot = 0;
		if (atomic_compare_exchange_strong(&maps[i].addr, &free_slot, (uintptr_t)p)) {
			atomic_store(&maps[i].len, len);
			return;
		}
	}
}

static void note_unmap(void *p)
{
	for (int i = 0; i < MAX_MAPS; i++)
		if (atomic_load(&maps[i].addr) == (uintptr_t)p) {
			atomic_store(&maps[i].len, 0);
			atomic_store(&maps[i].addr, 0);
			return;
		}
}

size_t rec_mem_resident_bytes(void)
{
	/* A mapping unmapped under us makes mincore fail with ENOMEM and
	 * counts as nothing. */
	unsigned char vec[1024];
	size_t page = (size_t)sysconf(_SC_PAGESIZE), total = 0;
	for (int i = 0; i < MAX_MAPS; i++) {
		uintptr_t a = atomic_load(&maps[i].addr);
		size_t len = atomic_load(&maps[i].len);
		for (size_t off = 0; a && off < len; off += sizeof vec * page) {
			size_t n = len - off < sizeof vec * page ? len - off : sizeof vec * page;
			if (mincore((void *)(a + off), n, vec) != 0)
				break;
			for (size_t k = 0; k < (n + page - 1) / page; k++)
				total += (vec[k] & 1) * page;
		}
	}
	return total;
}

void *rec_mmap(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	note_map(p, size);
	return p;
}

void rec_munmap(void *p, size_t size)
{
	if (!p)
		return;
	note_unmap(p);
	munmap(p, size);
}

/* ---- ar_mem_t for the trace writer and zstd ------------------------------- */
#define HDR 64 /* keeps the payload 64-byte aligned, as zstd's workspaces like */

static void *wmem_alloc(void *opaque, size_t size)
{
	(void)opaque;
	size_t total = size + HDR;
	uint8_t *p = rec_mmap(total);
	if (!p)
		return NULL;
	memcpy(p, &total, sizeof total);
	return p + HDR;
}

static void wmem_free(void *opaque, void *p)
{
	(void)opaque;
	if (!p)
		return;
	uint8_t *base = (uint8_t *)p - HDR;
	size_t total;
	memcpy(&total, base, sizeof total);
	rec_munmap(base, total);
}

const ar_mem_t rec_writer_mem = {wmem_alloc, wmem_free, NULL};

/* ---- bootstrap pool ---------------------------------------------------------- */
#define BOOT_SIZE REC_BOOT_SIZE
_Alignas(64) uint8_t rec_boot_pool[BOOT_SIZE]; /* rec_boot_owns (rec_internal.h) tests it inline */
static _Atomic size_t boot_used;

/* Each block is preceded by its size (16 bytes, keeps 16-byte alignment). */
void *rec_boot_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	if (size > BOOT_SIZE)
		return NULL;
	size_t need = size + 16 + align;
	size_t off = atomic_fetch_add(&boot_used, need);
	if (off + need > BOOT_SIZE)
		return NULL;
	uintptr_t start = (uintptr_t)rec_boot_pool + off + 16;
	start = (start + align - 1) & ~(uintptr_t)(align - 1);
	memcpy((void *)(start - sizeof(size_t)), &size, sizeof size);
	memset((void *)start, 0, size); /* calloc callers rely on zeroes */
	return (void *)start;
}

size_t rec_boot_size(const void *p)
{
	size_t n;
	memcpy(&n, (const uint8_t *)p - sizeof(size_t), sizeof n);
	return n;
}
