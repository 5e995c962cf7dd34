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

void *rec_mmap(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void rec_munmap(void *p, size_t size)
{
	if (p)
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
	munmap(base, total);
}

const ar_mem_t rec_writer_mem = {wmem_alloc, wmem_free, NULL};

/* ---- bootstrap pool ---------------------------------------------------------- */
#define BOOT_SIZE (64u * 1024u)
static _Alignas(64) uint8_t boot_pool[BOOT_SIZE];
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
	uintptr_t start = (uintptr_t)boot_pool + off + 16;
	start = (start + align - 1) & ~(uintptr_t)(align - 1);
	memcpy((void *)(start - sizeof(size_t)), &size, sizeof size);
	memset((void *)start, 0, size); /* calloc callers rely on zeroes */
	return (void *)start;
}

int rec_boot_owns(const void *p)
{
	return (const uint8_t *)p >= boot_pool && (const uint8_t *)p < boot_pool + BOOT_SIZE;
}

size_t rec_boot_size(const void *p)
{
	size_t n;
	memcpy(&n, (const uint8_t *)p - sizeof(size_t), sizeof n);
	return n;
}
