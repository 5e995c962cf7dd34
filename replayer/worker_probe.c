/*
 * worker_probe.c — what the worker measures besides latency: hardware
 * counters (perf_event_open) and the allocator's own statistics.
 *
 * Hardware counters (cycles, instructions, cache references and misses,
 * L1D and LLC read misses, dTLB read misses) are opened before the replay
 * threads exist, with inherit=1 so every thread created later counts into
 * them — the kernel sums the threads, which is the per-run total — user
 * space only (what perf_event_paranoid=2 still allows), enabled just around
 * the replay window. Each is its own event rather than one group: a group
 * must fit the PMU at once, and separate events let the kernel multiplex
 * (the report says so and scales). A counter the kernel refuses
 * is reported as "-" with the errno and the paranoid level: NULL in the
 * database, never 0 (DESIGN principle 5).
 *
 * Allocator statistics are looked up with dlsym at start-up (dlsym may
 * allocate) and only called after the replay: ours (ar_allocator_stats),
 * glibc mallinfo2, jemalloc mallctl, tcmalloc
 * MallocExtension_GetNumericProperty, mimalloc mi_process_info. Each is
 * called only if the library that serves malloc defines it, so glibc's
 * mallinfo2 is never read about a heap glibc is not managing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ar_alloc.h"
#include "ar_readfile.h"
#include "worker.h"
#include "worker_proto.h"

/* ---- resident set: exact peak through the kernel's high-water mark ---- */
/* Value in bytes of a "Name:   N kB" line of /proc/self/status, or 0. */
static uint64_t status_kb(const char *buf, const char *name)
{
	const char *p = strstr(buf, name);
	if (!p)
		return 0;
	p += strlen(name);
	while (*p == ' ' || *p == '\t' || *p == ':')
		p++;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v * 1024;
}

int ar_probe_rss(uint64_t *rss, uint64_t *hwm)
{
	static char buf[8192];
	if (ar_read_small_file("/proc/self/status", buf, sizeof buf) <= 0)
		return -1;
	*rss = status_kb(buf, "\nVmRSS");
	*hwm = status_kb(buf, "\nVmHWM");
	return *rss && *hwm ? 0 : -1;
}

int ar_probe_reset_hwm(void)
{
	/* "5" resets VmHWM to the current RSS (Linux >= 4.0, proc(5)). */
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, "5", 1);
	close(fd);
	return n == 1 ? 0 : -1;
}

/* ---- hardware counters ----------------------------------------------------- */
#define CACHE_EV(c, op, res) ((c) | ((op) << 8) | ((res) << 16))
static struct {
	const char *name;
	uint32_t type;
	uint64_t config;
	int fd;
	char why[200]; /* formatted at open time: strerror may allocate later */
} ctr[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1, "" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, -1, "" },
	{ "cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, -1, "" },
	{ "cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, -1, "" },
	{ "l1d_load_misses", PERF_TYPE_HW_CACHE,
	  CACHE_EV(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), -1, "" },
	{ "llc_load_misses", PERF_TYPE_HW_CACHE,
	  CACHE_EV(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), -1, "" },
	{ "dtlb_load_misses", PERF_TYPE_HW_CACHE,
	  CACHE_EV(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), -1, "" },
};
#define NCTR (sizeof ctr / sizeof ctr[0])
static char paranoid[16] = "?";

void ar_probe_perf_open(void)
{
	ar_read_small_file("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof paranoid); /* else "?" */
	paranoid[strcspn(paranoid, "\n")] = '\0';
	for (size_t i = 0; i < NCTR; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = ctr[i].type;
		a.config = ctr[i].config;
		a.disabled = 1;
		a.inherit = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		ctr[i].fd = fd < 0 ? -1 : (int)fd;
		if (fd < 0) {
			int e = errno;
			snprintf(ctr[i].why, sizeof ctr[i].why,
				 "perf_event_open: %s (errno %d, kernel.perf_event_paranoid=%s)", strerror(e),
				 e, paranoid);
		}
	}
}

void ar_probe_perf_enable(int on)
{
	for (size_t i = 0; i < NCTR; i++)
		if (ctr[i].fd >= 0)
			ioctl(ctr[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

void ar_probe_perf_report(ar_wproto_t *r)
{
	for (size_t i = 0; i < NCTR; i++) {
		uint64_t v[3] = { 0, 0, 0 }; /* value, time enabled, time running */
		ar_wproto_str(r, "C ");
		ar_wproto_str(r, ctr[i].name);
		if (ctr[i].fd < 0) {
			ar_wproto_str(r, " - ");
			ar_wproto_text(r, ctr[i].why);
			ar_wproto_str(r, "\n");
		} else if (read(ctr[i].fd, v, sizeof v) != (ssize_t)sizeof v) {
			ar_wproto_str(r, " - read of the counter failed\n");
		} else if (v[2] == 0) {
			ar_wproto_str(r, " - the counter never ran (no free hardware counter)\n");
		} else if (v[2] < v[1]) { /* multiplexed: scale to the enabled time */
			ar_wproto_sp_u64(r, (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]));
			ar_wproto_str(r, " scaled: counted ");
			ar_wproto_u64(r, v[2] * 100 / v[1]);
			ar_wproto_str(r, "% of the time (multiplexed)\n");
		} else {
			ar_wproto_sp_u64(r, v[0]);
			ar_wproto_str(r, " counted all the time\n");
		}
	}
}

size_t ar_probe_perf_count(void)
{
	return NCTR;
}

void ar_probe_perf_read(uint64_t *v)
{
	for (size_t i = 0; i < NCTR; i++) {
		uint64_t x[3] = { 0, 0, 0 };
		v[i] = UINT64_MAX;
		if (ctr[i].fd >= 0 && read(ctr[i].fd, x, sizeof x) == (ssize_t)sizeof x)
			v[i] = x[0];
	}
}

void ar_probe_perf_report_delta(ar_wproto_t *r, const char *prefix, const uint64_t *begin,
				const uint64_t *end)
{
	for (size_t i = 0; i < NCTR; i++) {
		ar_wproto_str(r, "C ");
		ar_wproto_str(r, prefix);
		ar_wproto_str(r, ctr[i].name);
		if (ctr[i].fd < 0) {
			ar_wproto_str(r, " - ");
			ar_wproto_text(r, ctr[i].why);
			ar_wproto_str(r, "\n");
		} else if (begin[i] == UINT64_MAX || end[i] == UINT64_MAX || end[i] < begin[i]) {
			ar_wproto_str(r, " - read of the counter failed\n");
		} else {
			ar_wproto_sp_u64(r, end[i] - begin[i]);
			ar_wproto_str(r, " raw count over the pass (not scaled for multiplexing)\n");
		}
	}
}

/* ---- allocator statistics ------------------------------------------------------ */
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef int (*tc_prop_fn)(const char *, size_t *);
typedef void (*mi_info_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
			   size_t *);

static ar_allocator_stats_fn ours;
static mallctl_fn je_mallctl;
static tc_prop_fn tc_prop;
static mi_info_fn mi_info;
static int is_glibc;

void ar_probe_stats_init(const char *allocator)
{
	ours = (ar_allocator_stats_fn)dlsym(RTLD_DEFAULT, AR_ALLOC_STATS_SYMBOL);
	je_mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	tc_prop = (tc_prop_fn)dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
	mi_info = (mi_info_fn)dlsym(RTLD_DEFAULT, "mi_process_info");
	is_glibc = strcmp(allocator, "glibc") == 0;
}

int ar_probe_ours_counts(uint64_t *allocs, uint64_t *frees)
{
	static ar_alloc_stats_t s; /* 3 KB: keep it off the stack and pre-touched */
	if (!ours || ours(&s) != 0 || s.version != AR_ALLOC_STATS_VERSION)
		return 0;
	*allocs = s.allocs_total;
	*frees = s.frees_total;
	return 1;
}

void ar_probe_stats_report(ar_wproto_t *r)
{
	if (ours) {
		static ar_alloc_stats_t s;
		if (ours(&s) == 0 && s.version == AR_ALLOC_STATS_VERSION) {
			ar_wproto_kv(r, 'T', "bytes_in_use", s.bytes_in_use);
			ar_wproto_kv(r, 'T', "blocks_in_use", s.blocks_in_use);
			ar_wproto_kv(r, 'T', "allocs_total", s.allocs_total);
			ar_wproto_kv(r, 'T', "frees_total", s.frees_total);
			ar_wproto_kv(r, 'T', "bytes_mapped", s.bytes_mapped);
			ar_wproto_kv(r, 'T', "bytes_mapped_peak", s.bytes_mapped_peak);
			ar_wproto_kv(r, 'T', "bytes_metadata", s.bytes_metadata);
			ar_wproto_kv(r, 'T', "bytes_cached", s.bytes_cached);
			ar_wproto_kv(r, 'T', "large_bytes_in_use", s.large_bytes_in_use);
			ar_wproto_kv(r, 'T', "mmap_calls", s.mmap_calls);
			ar_wproto_kv(r, 'T', "munmap_calls", s.munmap_calls);
			ar_wproto_kv(r, 'T', "mremap_calls", s.mremap_calls);
		}
	}
	if (is_glibc) {
		struct mallinfo2 mi = mallinfo2();
		ar_wproto_kv(r, 'T', "arena_bytes", mi.arena);
		ar_wproto_kv(r, 'T', "mmap_bytes", mi.hblkhd);
		ar_wproto_kv(r, 'T', "in_use_bytes", mi.uordblks);
		ar_wproto_kv(r, 'T', "free_bytes", mi.fordblks);
		ar_wproto_kv(r, 'T', "top_releasable_bytes", mi.keepcost);
	}
	if (je_mallctl) {
		uint64_t epoch = 1;
		size_t sz = sizeof epoch;
		je_mallctl("epoch", &epoch, &sz, &epoch, sz);
		static const char *const names[] = { "stats.allocated", "stats.active", "stats.resident",
						     "stats.mapped", "stats.metadata", "stats.retained" };
		for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
			size_t v = 0;
			sz = sizeof v;
			if (je_mallctl(names[i], &v, &sz, NULL, 0) == 0)
				ar_wproto_kv(r, 'T', names[i], v);
		}
	}
	if (tc_prop) {
		static const char *const names[] = { "generic.current_allocated_bytes", "generic.heap_size",
						     "tcmalloc.pageheap_free_bytes",
						     "tcmalloc.pageheap_unmapped_bytes",
						     "tcmalloc.current_total_thread_cache_bytes" };
		for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
			size_t v = 0;
			if (tc_prop(names[i], &v))
				ar_wproto_kv(r, 'T', names[i], v);
		}
	}
	if (mi_info) {
		size_t el = 0, us = 0, sy = 0, rss = 0, peak = 0, com = 0, pcom = 0, pf = 0;
		mi_info(&el, &us, &sy, &rss, &peak, &com, &pcom, &pf);
		ar_wproto_kv(r, 'T', "current_rss", rss);
		ar_wproto_kv(r, 'T', "peak_rss", peak);
		ar_wproto_kv(r, 'T', "current_commit", com);
		ar_wproto_kv(r, 'T', "peak_commit", pcom);
	}
}
