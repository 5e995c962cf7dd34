/*
 * worker_route.c — allocreplay --route in the worker (worker_route.h):
 * start-up (load and prove the routed libraries, map and check the route
 * map) and the proof after the replay. Everything here runs before or
 * after the replay window; the hot loop only reads ar_route
 * (worker_replay.c). Memory of its own comes from mmap, never from the
 * allocators under test (worker.h).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "route_map.h"
#include "worker_proto.h"
#include "worker_route.h"

ar_route_t ar_route;

static const char *lib_arg[AR_ROUTE_MAX + 1]; /* "NAME=PATH" */
static int nlib_args;
static const char *map_arg;

int ar_route_option(const char *opt, const char *v)
{
	if (!strcmp(opt, "--route-map")) {
		map_arg = v;
		return 1;
	}
	if (strcmp(opt, "--route"))
		return 0;
	if (nlib_args <= AR_ROUTE_MAX)
		lib_arg[nlib_args] = v;
	nlib_args++;
	return 1;
}

#define FAIL(st, ...)                                  \
	do {                                           \
		*status = st;                          \
		snprintf(msg, cap, __VA_ARGS__);       \
		return -1;                             \
	} while (0)

/* dlopen "NAME=PATH" into api, every function of the prefixed API found
 * and proven to come from PATH. 0, or -1 (FAIL). */
static int load_lib(const char *arg, ar_route_api_t *api, const char **status, char *msg, size_t cap)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof api->name || !eq[1])
		FAIL("error", "--route needs NAME=PATH (a prefixed allocator library), not '%s'", arg);
	memcpy(api->name, arg, (size_t)(eq - arg));
	api->name[eq - arg] = '\0';
	const char *path = eq + 1;
	/* RTLD_LOCAL: its symbols never interpose on anything; RTLD_NOW:
	 * every relocation resolved here, not inside the replay window. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		FAIL("error", "cannot load the routed allocator %s: %s", api->name, dlerror());
	static const char *const fn[] = { "malloc", "calloc", "realloc", "reallocarray", "free",
					  "posix_memalign", "aligned_alloc", "memalign", "valloc",
					  "pvalloc", "allocator_stats" };
	void *sym[sizeof fn / sizeof *fn];
	char want[PATH_MAX], got[PATH_MAX];
	if (!realpath(path, want))
		FAIL("error", "cannot resolve %s", path);
	for (size_t i = 0; i < sizeof fn / sizeof *fn; i++) {
		char name[96];
		Dl_info di;
		snprintf(name, sizeof name, "allocrr_%s_%s", api->name, fn[i]);
		sym[i] = dlsym(h, name);
		if (!sym[i])
			FAIL("error", "%s does not define %s: not the prefixed build of %s (make builds "
			     "liballocrr-%s-prefixed.so)", path, name, api->name, api->name);
		if (!dladdr(sym[i], &di) || !di.dli_fname || !realpath(di.dli_fname, got) || strcmp(got, want))
			FAIL("wrong_allocator", "%s resolves to %s, not to %s", name,
			     di.dli_fname ? di.dli_fname : "nothing", want);
	}
	/* Function pointers from dlsym's void * (POSIX guarantees the cast). */
	memcpy(&api->malloc, &sym[0], sizeof sym[0]);
	memcpy(&api->calloc, &sym[1], sizeof sym[1]);
	memcpy(&api->realloc, &sym[2], sizeof sym[2]);
	memcpy(&api->reallocarray, &sym[3], sizeof sym[3]);
	memcpy(&api->free, &sym[4], sizeof sym[4]);
	memcpy(&api->posix_memalign, &sym[5], sizeof sym[5]);
	memcpy(&api->aligned_alloc, &sym[6], sizeof sym[6]);
	memcpy(&api->memalign, &sym[7], sizeof sym[7]);
	memcpy(&api->valloc, &sym[8], sizeof sym[8]);
	memcpy(&api->pvalloc, &sym[9], sizeof sym[9]);
	memcpy(&api->stats, &sym[10], sizeof sym[10]);
	/* Initialise it now (its first call may set up state), not in the window. */
	api->free(api->malloc(1));
	return 0;
}

/* Map the route map and check it against the workload: point
 * ar_route.owners at each stream's bytes. 0, or -1 (FAIL). */
static int load_map(const ar_workload_t *w, const char **status, char *msg, size_t cap)
{
	int fd = open(map_arg, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		FAIL("error", "cannot open the route map %s", map_arg);
	}
	size_t bytes = (size_t)st.st_size;
	const uint8_t *m = bytes >= sizeof(ar_route_map_header_t)
				   ? mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0)
				   : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		FAIL("error", "%s: not a route map (too short, or cannot be mapped)", map_arg);
	const ar_route_map_header_t *h = (const void *)m;
	uint32_t n = w->hdr->nthreads;
	if (h->magic != AR_ROUTE_MAP_MAGIC || h->file_bytes != bytes || h->nstreams != n ||
	    h->nroutes != (uint32_t)ar_route.n ||
	    bytes < sizeof *h + (uint64_t)n * sizeof(ar_route_map_stream_t))
		FAIL("error", "%s: not a route map of this workload with %d routes (offset 0: magic, "
		     "size, %u streams expected)", map_arg, ar_route.n, n);
	const ar_route_map_stream_t *ms = (const void *)(m + sizeof *h);
	for (uint32_t i = 0; i < n; i++) {
		const ar_wl_thread_t *t = &w->threads[i];
		uint64_t nallocs = ar_route_map_allocs(t);
		if (ms[i].trace_index != t->trace_index || ms[i].nallocs != nallocs ||
		    ms[i].offset > bytes || bytes - ms[i].offset < nallocs)
			FAIL("error", "%s: stream %u (offset %zu) has %llu allocations for thread %u; the "
			     "workload has %llu for thread %u: the map is of another trace", map_arg, i,
			     sizeof *h + i * sizeof *ms, (unsigned long long)ms[i].nallocs,
			     ms[i].trace_index, (unsigned long long)nallocs, t->trace_index);
		const uint8_t *o = m + ms[i].offset;
		for (uint64_t k = 0; k < nallocs; k++)
			if (o[k] > ar_route.n)
				FAIL("error", "%s: offset %llu: owner %u, but only %d routes", map_arg,
				     (unsigned long long)(ms[i].offset + k), o[k], ar_route.n);
		ar_route.owners[i] = o;
	}
	return 0;
}

int ar_route_open(const ar_workload_t *w, const char **status, char *msg, size_t cap)
{
	if (!nlib_args && !map_arg)
		return 0;
	if (!nlib_args || !map_arg)
		FAIL("error", "--route and --route-map go together");
	if (nlib_args > AR_ROUTE_MAX)
		FAIL("error", "at most %d routed allocators, not %d", AR_ROUTE_MAX, nlib_args);
	ar_route.n = nlib_args;
	for (int k = 1; k <= ar_route.n; k++)
		if (load_lib(lib_arg[k - 1], &ar_route.api[k], status, msg, cap) != 0)
			return -1;
	snprintf(ar_route.api[0].name, sizeof ar_route.api[0].name, "base");
	/* The harness's own arrays: one mapping, touched, in the baseline. */
	uint32_t n = w->hdr->nthreads;
	size_t off_cnt = ((size_t)w->hdr->nslots + 63) / 64 * 64;
	size_t off_own = off_cnt + ((size_t)n * sizeof(ar_route_count_t) + 63) / 64 * 64;
	size_t total = off_own + (size_t)n * sizeof(uint8_t *) + 64;
	char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		FAIL("error", "mmap of %zu bytes for the route's slot owners failed", total);
	memset(m, 0, total);
	ar_route.slot_owner = (uint8_t *)m;
	ar_route.count = (ar_route_count_t *)(m + off_cnt);
	ar_route.owners = (const uint8_t **)(m + off_own);
	ar_route.nstreams = n;
	return load_map(w, status, msg, cap);
}

/* Allocations and frees api's allocator counted itself so far. */
static void own_counts(ar_route_api_t *api, uint64_t *allocs, uint64_t *frees)
{
	static ar_alloc_stats_t s; /* 3 KB, off the stack */
	*allocs = *frees = 0;
	if (api->stats(&s) == 0 && s.version == AR_ALLOC_STATS_VERSION) {
		*allocs = s.allocs_total;
		*frees = s.frees_total;
	}
}

void ar_route_baseline(void)
{
	for (int k = 1; k <= ar_route.n; k++)
		own_counts(&ar_route.api[k], &ar_route.api[k].base_allocs, &ar_route.api[k].base_frees);
}

void ar_route_final(void)
{
	for (int k = 1; k <= ar_route.n; k++)
		own_counts(&ar_route.api[k], &ar_route.api[k].end_allocs, &ar_route.api[k].end_frees);
}

/* "route.NAME.what" */
static void route_kv(ar_wproto_t *r, const char *name, const char *what, uint64_t v)
{
	char key[64];
	snprintf(key, sizeof key, "route.%s.%s", name, what);
	ar_wproto_kv(r, 'T', key, v);
}

void ar_route_report(ar_wproto_t *r)
{
	if (!ar_route.n)
		return;
	for (int k = 0; k <= ar_route.n; k++) {
		uint64_t calls = 0, allocs = 0;
		for (uint32_t i = 0; ar_route.count && i < ar_route.nstreams; i++) {
			calls += ar_route.count[i].calls[k];
			allocs += ar_route.count[i].allocs[k];
		}
		route_kv(r, ar_route.api[k].name, "calls", calls);
		route_kv(r, ar_route.api[k].name, "allocs", allocs);
		if (!k)
			continue;
		ar_route_api_t *api = &ar_route.api[k];
		static ar_alloc_stats_t s;
		route_kv(r, api->name, "allocs_total", api->end_allocs - api->base_allocs);
		route_kv(r, api->name, "frees_total", api->end_frees - api->base_frees);
		if (api->stats(&s) == 0 && s.version == AR_ALLOC_STATS_VERSION) {
			route_kv(r, api->name, "bytes_in_use", s.bytes_in_use);
			route_kv(r, api->name, "bytes_mapped_peak", s.bytes_mapped_peak);
		}
	}
}
