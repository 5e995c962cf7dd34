/*
 * registry.c — the list of allocators allocrr compares, and where each one's
 * library is. The only code outside the allocators themselves that knows how
 * an allocator is loaded.
 *
 * Entries are fixed and ordered: glibc first (the baseline every ratio is
 * relative to), then the system allocators, then ours. Whether one is
 * installed, its path and its version are looked up on every call, so a
 * package installed while a tool runs is picked up and nothing is cached
 * stale.
 *
 * tcmalloc: we load libtcmalloc_minimal.so.4, not libtcmalloc.so.4. Both come
 * with libgoogle-perftools-dev; the full one adds the heap profiler and heap
 * checker hooks (and a libunwind dependency) that cost time on every
 * allocation path and are irrelevant to comparing allocators; gperftools
 * itself recommends the minimal library when only the allocator is wanted.
 */
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_alloc.h"
#include "registry_int.h"

#ifndef AR_ALLOC_LIBDIR
#define AR_ALLOC_LIBDIR "/usr/local/lib/allocrr"
#endif
#define DPKG_STATUS "/var/lib/dpkg/status"

typedef struct reg_entry {
	const char *name;
	ar_alloc_kind_t kind;
	const char *packages[3]; /* Debian package names across releases */
	const char *file;        /* library file name (system) or NULL for glibc */
	const char *description;
} reg_entry_t;

static const reg_entry_t entries[] = {
	{ "glibc", AR_ALLOC_SYSTEM, { "libc6" }, NULL,
	  "GNU libc malloc (ptmalloc2): per-thread arenas, bins, tcache; the baseline" },
	{ "jemalloc", AR_ALLOC_SYSTEM, { "libjemalloc2" }, "libjemalloc.so.2",
	  "jemalloc: size-class slabs in per-CPU arenas with thread caches" },
	{ "tcmalloc", AR_ALLOC_SYSTEM, { "libtcmalloc-minimal4", "libtcmalloc-minimal4t64" },
	  "libtcmalloc_minimal.so.4", "gperftools TCMalloc (minimal: no profiler or heap checker)" },
	{ "mimalloc", AR_ALLOC_SYSTEM, { "libmimalloc2.0", "libmimalloc2" }, "libmimalloc.so.2",
	  "mimalloc: free lists sharded per page, per-thread heaps" },
	{ "pool", AR_ALLOC_OURS, { NULL }, "liballocrr-pool.so",
	  "allocrr pool: segregated fixed-size pools, one lock per class, chunks never returned" },
	{ "arena", AR_ALLOC_OURS, { NULL }, "liballocrr-arena.so",
	  "allocrr arena: per-thread bump chunks recycled when their last object dies" },
	{ "tlscache", AR_ALLOC_OURS, { NULL }, "liballocrr-tlscache.so",
	  "allocrr tlscache: per-thread class caches over a central pool heap, batch refill/flush" },
	{ "freelist", AR_ALLOC_OURS, { NULL }, "liballocrr-freelist.so",
	  "allocrr freelist: first fit, boundary tags, immediate coalescing, one global lock" },
};
#define NENTRIES ((int)(sizeof entries / sizeof entries[0]))

int ar_registry_count(void)
{
	return NENTRIES;
}

static void copy_str(char *out, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* A library file found on disk: its canonical path, and the path it was
 * found under (for system libraries, the soname symlink). */
typedef struct found {
	char real[AR_ALLOC_PATH_MAX];
	char as[AR_ALLOC_PATH_MAX];
} found_t;

/* If dir/file exists, fill *out and return 1. */
static int probe(const char *dir, size_t dir_len, const char *file, found_t *out)
{
	char path[PATH_MAX];
	if (dir_len == 0 || dir_len + 1 + strlen(file) >= sizeof path)
		return 0;
	memcpy(path, dir, dir_len);
	path[dir_len] = '/';
	strcpy(path + dir_len + 1, file);
	char real[PATH_MAX];
	if (access(path, R_OK) != 0 || !realpath(path, real) || strlen(real) >= AR_ALLOC_PATH_MAX)
		return 0;
	strcpy(out->real, real);
	strcpy(out->as, path);
	return 1;
}

/* Each directory of a colon-separated list. */
static int probe_list(const char *list, const char *file, found_t *out)
{
	while (list && *list) {
		size_t n = strcspn(list, ":");
		if (probe(list, n, file, out))
			return 1;
		list += n;
		if (*list == ':')
			list++;
	}
	return 0;
}

static int probe_dir(const char *dir, const char *file, found_t *out)
{
	return probe(dir, strlen(dir), file, out);
}

/* out = a followed by b; -1 (out unusable) when it does not fit. */
static int join(char *out, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + lb + 1 > cap)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, b, lb + 1);
	return 0;
}

/* Our libraries: see the search order in ar_alloc.h. */
static int find_ours(const char *file, found_t *out)
{
	char exe[PATH_MAX], dir[PATH_MAX];
	if (probe_list(getenv("ALLOCRR_LIBDIR"), file, out))
		return 1;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (join(dir, sizeof dir, exe, "/../lib") == 0 && probe_dir(dir, file, out))
				return 1;
			if (join(dir, sizeof dir, exe, "/../lib/allocrr") == 0 && probe_dir(dir, file, out))
				return 1;
			/* the worker, installed in libexec/allocrr */
			if (join(dir, sizeof dir, exe, "/../../lib/allocrr") == 0 && probe_dir(dir, file, out))
				return 1;
		}
	}
	const char *build = getenv("ALLOCRR_BUILD");
	if (build && *build) {
		if (join(dir, sizeof dir, build, "/lib") == 0 && probe_dir(dir, file, out))
			return 1;
	}
	return probe_dir(AR_ALLOC_LIBDIR, file, out);
}

/* glibc's own path: the object that defines gnu_get_libc_version. */
static int libc_path(char *out, size_t cap)
{
	return ar_reg_object_of((const void *)&gnu_get_libc_version, out, cap);
}

/* System libraries: next to libc (its multiarch directory, also under /usr
 * when libc sits in /lib), then the traditional directories. */
static int find_system(const char *file, found_t *out)
{
	char libc[PATH_MAX];
	if (libc_path(libc, sizeof libc) == 0) {
		char *slash = strrchr(libc, '/');
		if (slash) {
			*slash = '\0';
			if (probe_dir(libc, file, out))
				return 1;
			char dir[PATH_MAX];
			if (strncmp(libc, "/lib", 4) == 0) {
				if (join(dir, sizeof dir, "/usr", libc) == 0 && probe_dir(dir, file, out))
					return 1;
			}
		}
	}
	static const char *const dirs[] = { "/usr/local/lib", "/usr/lib", "/usr/lib64", "/lib" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (probe_dir(dirs[i], file, out))
			return 1;
	return 0;
}

/* Debian version of the first installed package of e, into out. */
static int package_version(const reg_entry_t *e, char *out, size_t cap, const char **which)
{
	const char *status = getenv("ALLOCRR_DPKG_STATUS");
	if (!status || !*status)
		status = DPKG_STATUS;
	for (int i = 0; i < 3 && e->packages[i]; i++)
		if (ar_reg_dpkg_version(status, e->packages[i], ar_reg_native_arch(), out, cap) == 0) {
			*which = e->packages[i];
			return 0;
		}
	return -1;
}

int ar_registry_get(int index, ar_allocator_t *out)
{
	if (!out || index < 0 || index >= NENTRIES)
		return AR_EINVAL;
	const reg_entry_t *e = &entries[index];
	memset(out, 0, sizeof *out);
	out->name = e->name;
	out->kind = e->kind;
	out->description = e->description;
	out->package = e->packages[0];
	copy_str(out->version, sizeof out->version, "unknown");

	if (e->kind == AR_ALLOC_OURS) {
		out->stats_symbol = AR_ALLOC_STATS_SYMBOL;
		copy_str(out->version, sizeof out->version, AR_ALLOC_VERSION_STRING);
		found_t f;
		out->installed = find_ours(e->file, &f);
		if (out->installed) {
			strcpy(out->library, f.real);
			strcpy(out->preload, f.real);
		}
		return 0;
	}

	const char *pkg = NULL;
	if (package_version(e, out->package_version, sizeof out->package_version, &pkg) == 0) {
		out->package = pkg;
		ar_reg_upstream_version(out->package_version, out->version, sizeof out->version);
	}
	if (!e->file) { /* glibc: it is always there and nothing is preloaded */
		out->installed = libc_path(out->library, sizeof out->library) == 0;
		copy_str(out->version, sizeof out->version, gnu_get_libc_version());
		return 0;
	}
	/* Preload by the soname path (stable across package upgrades); the
	 * canonical file in library is what dladdr will report. */
	found_t f;
	out->installed = find_system(e->file, &f);
	if (out->installed) {
		strcpy(out->library, f.real);
		strcpy(out->preload, f.as);
	}
	return 0;
}

int ar_registry_find(const char *name, ar_allocator_t *out)
{
	if (!name)
		return AR_EINVAL;
	for (int i = 0; i < NENTRIES; i++)
		if (strcmp(entries[i].name, name) == 0)
			return ar_registry_get(i, out);
	return AR_EINVAL;
}
