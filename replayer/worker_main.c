/*
 * worker_main.c — allocreplay-worker: replays one compiled workload under
 * whatever allocator LD_PRELOAD put in front of glibc, and reports over a
 * pipe (worker_proto.h). The parent (runner.c) starts one per allocator x
 * repetition:
 *
 *   allocreplay-worker --workload FILE --allocator NAME --library PATH
 *                      [--touch none|first|pages|all] [--fd N] [--dep-timeout-ms N]
 *                      [--timing calls|none|sample:N] [--counters perf|sim|none]
 *                      [--access-pass on|off] [--progress-fd N]
 *                      [--route NAME=PATH]... [--route-map FILE]
 *                      [--workload-memory BYTES]
 *
 * --counters perf (default) opens the hardware counters around the replay
 * window; sim means allocreplay started this worker under valgrind
 * --tool=callgrind --instr-atstart=no: the worker turns instrumentation on
 * and off around the replay window with callgrind client requests (no-ops
 * outside valgrind), replays untimed (a clock read's cost depends on the
 * value read) and skips the RSS samples, so two runs execute the same
 * instructions; none measures no counter. --access-pass on: see
 * worker_access.c (single-stream workloads). --progress-fd N: a page
 * (memfd) allocreplay shares to read the ops done for its progress line
 * (worker.h, ops_done); without it the worker counts into a page of its own.
 *
 * --timing calls (or every; the default) times every heap call. none
 * replays without timing the calls (no clock reads, no latency histograms,
 * no timed_ns in the report): wall time and ops/s of the bare harness.
 * sample:N times 1 call in N on average (worker_clock.h, "Sampling"): the
 * histograms hold the timed calls, wall time and ops/s are nearly those of
 * an untimed replay, and timed_ns is the timed calls' sum scaled to all
 * calls (calls / timed calls). N is the longest period: a trace too short
 * for AR_TIMING_MIN_SAMPLES timed calls at 1 in N is timed more often
 * (effective_period). The report says the period used (S timing_every: 0
 * none, 1 every call) and, when timed, the timer's resolution (S
 * timer_resolution_ticks). allocreplay samples by default (plan.c).
 *
 * --workload-memory BYTES (default AR_WL_RESIDENT_DEFAULT): a workload
 * whose decoded ops fit is decoded whole before the baselines, so the
 * replay reads nothing else; a larger one is streamed: each replay thread
 * holds one segment's ops and decodes the next when it reaches the end
 * (worker_replay.c), so the worker's own memory is a segment per thread
 * whatever the trace's length. Either way the buffers are written before
 * the baselines and read with pread: the workload's pages are never part
 * of the worker's RSS or page faults (docs/BENCHMARKS.md, "Traces larger
 * than RAM", measures both).
 *
 * Phases, and what each may do:
 *   1. start-up (may allocate: dlsym, dladdr, realpath, stdio for errors):
 *      prove that PATH serves malloc (ar_registry_verify) and refuse to run
 *      otherwise; check that every heap function the trace calls comes from
 *      the same library (glibc's pvalloc on a jemalloc heap would corrupt
 *      it); map the workload; calibrate the clock; map and touch all the
 *      harness's own memory; open the statm fd and the perf counters; create
 *      the replay threads, parked on a barrier (pthread_create allocates the
 *      thread's TLS vector through the allocator under test: it has to
 *      happen here). Then the baselines: RSS, rusage, allocator counters.
 *   2. replay: barrier, every thread runs its stream, barrier. The harness
 *      makes no heap call of its own from here on; with our allocators the
 *      allocs_total/frees_total deltas prove it (tests/e2e/replay_basic.sh).
 *   3. report: final counters, then the threads are released and joined.
 *
 * Test hook (tests/e2e/replay_failures.sh, documented in docs/RESULTS.md):
 * ALLOCRR_WORKER_TEST_HANG=1 makes the worker sleep forever after start-up
 * checks, so the parent's --timeout can be exercised. Nothing else reads
 * the environment except ALLOCRR_TIMER (worker_clock.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <valgrind/callgrind.h>

#include "ar_alloc.h"
#include "worker.h"
#include "worker_proto.h"
#include "worker_route.h"

ar_worker_t ar_wk;
static ar_wproto_t proto; /* the report to the parent (worker_proto.h) */

static void usage(void)
{
	fprintf(stderr, "usage: allocreplay-worker --workload FILE --allocator NAME --library PATH\n"
			"         [--touch none|first|pages|all] [--fd N] [--dep-timeout-ms N]\n"
			"         [--timing calls|none|sample:N] [--counters perf|sim|none]\n"
			"         [--access-pass on|off] [--progress-fd N]\n"
			"         [--route NAME=PATH]... [--route-map FILE]  (worker_route.h)\n"
			"         [--workload-memory BYTES]\n"
			"(--timing every = calls: time every heap call; sample:N: 1 in N, N >= 1)\n"
			"(started by allocreplay; see docs/RESULTS.md)\n");
	exit(64);
}

/* Report a failed run and exit: the parent records status and reason. */
static void die(const char *status, const char *reason)
{
	ar_wproto_str(&proto, "E ");
	ar_wproto_str(&proto, status);
	ar_wproto_str(&proto, " ");
	ar_wproto_text(&proto, reason);
	ar_wproto_str(&proto, "\nZ\n");
	ar_wproto_flush(&proto);
	exit(0);
}

static const char *const call_names[AR_WL_NCALLS] = {
	"malloc", "calloc", "realloc", NULL /* reallocarray: glibc's wraps realloc */, "free",
	"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
};

/* Every heap function the workload calls must live in the object that
 * serves malloc; otherwise two heaps would be mixed. */
static void check_symbols(const char *allocator)
{
	Dl_info mi, si;
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	if (!m || !dladdr(m, &mi))
		die("error", "cannot resolve malloc with dlsym/dladdr");
	for (int k = 0; k < AR_WL_NCALLS; k++) {
		if (!call_names[k] || (!ar_wk.wl.hdr->ops_by_kind[k] && k != AR_WL_FREE))
			continue;
		void *s = dlsym(RTLD_DEFAULT, call_names[k]);
		if (s && dladdr(s, &si) && si.dli_fbase == mi.dli_fbase)
			continue;
		char msg[1024];
		snprintf(msg, sizeof msg,
			 "the trace calls %s, which %s does not define (it resolves to %s): replaying it "
			 "would mix two heaps",
			 call_names[k], allocator, s && dladdr(s, &si) ? si.dli_fname : "nothing");
		die("unsupported", msg);
	}
}

#define ROUND64(x) (((size_t)(x) + 63) / 64 * 64)

/* The workload's ops into mem (setup_memory): every stream decoded whole,
 * or, streamed, per stream a buffer of one segment's ops and one of its
 * encoded bytes (per_stream bytes each) holding its first segment. */
static void load_ops(char *mem, size_t per_stream)
{
	const ar_wl_header_t *h = ar_wk.wl.hdr;
	char err[512];
	if (!ar_wk.streamed) {
		size_t raw = ROUND64(ar_wl_decoded_bytes(&ar_wk.wl));
		if (ar_wl_load(&ar_wk.wl, mem, mem + raw, err, sizeof err) != 0)
			die("error", err);
		for (uint32_t i = 0; i < h->nthreads; i++) {
			ar_wthread_t *t = &ar_wk.th[i];
			t->ops = ar_wl_ops(&ar_wk.wl, i);
			t->chunk_first = 0;
			t->chunk_end = t->nops;
		}
		return;
	}
	for (uint32_t i = 0; i < h->nthreads; i++) {
		ar_wthread_t *t = &ar_wk.th[i];
		char *b = mem + (size_t)i * per_stream;
		t->cur = (ar_wl_cursor_t){ .w = &ar_wk.wl, .thread = i, .ops = (ar_wl_op_t *)b,
					   .raw = b + ROUND64((size_t)h->seg_ops * sizeof(ar_wl_op_t)) };
		t->ops = t->cur.ops;
		if (ar_wl_cursor_next(&t->cur, 1, err, sizeof err) < 0)
			die("error", err);
		t->chunk_first = t->cur.first;
		t->chunk_end = t->cur.first + t->cur.n;
	}
}

/* Map and touch all the harness memory in one anonymous mapping, so it is
 * part of the RSS baseline and never comes from the allocator under test;
 * then decode the workload into it: whole, or each stream's first segment
 * when it is streamed (above, --workload-memory). */
static void setup_memory(uint64_t workload_memory)
{
	const ar_wl_header_t *h = ar_wk.wl.hdr;
	size_t nthr = h->nthreads, nh = 0;
	for (size_t i = 0; i < nthr; i++)
		for (int k = 0; k < AR_WL_NCALLS; k++)
			nh += ar_wk.wl.threads[i].ops_by_kind[k] != 0;
	ar_wk.streamed = ar_wl_decoded_bytes(&ar_wk.wl) > workload_memory;
	size_t per_stream = ROUND64((size_t)h->seg_ops * sizeof(ar_wl_op_t)) + ROUND64(h->max_seg_bytes);
	size_t ops_bytes = ar_wk.streamed ? nthr * per_stream
					  : ROUND64(ar_wl_decoded_bytes(&ar_wk.wl)) + ROUND64(h->max_seg_bytes);
	size_t off_ops = 0;
	size_t off_ptr = off_ops + ops_bytes;
	size_t off_th = off_ptr + ROUND64((size_t)h->nslots * sizeof(void *));
	size_t off_smp = off_th + (nthr * sizeof(ar_wthread_t) + 63) / 64 * 64;
	size_t off_hist = off_smp + ((size_t)h->nsamples * sizeof(ar_sample_t) + 63) / 64 * 64;
	size_t off_size = off_hist + (nh * sizeof(ar_hist_t) + 63) / 64 * 64;
	size_t total = off_size + (ar_wk.slot_size ? (size_t)h->nslots * sizeof(uint64_t) : 0) + 64;
	char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		char msg[200];
		snprintf(msg, sizeof msg, "mmap of %zu bytes of harness memory failed: %s", total,
			 strerror(errno));
		die("error", msg);
	}
	/* Every page written now, so it is in the baseline — except the
	 * decoded ops of a resident workload, which ar_wl_load writes whole
	 * (zeroing them first doubled the start-up's memory traffic). */
	size_t skip = ar_wk.streamed ? 0 : (size_t)ar_wl_decoded_bytes(&ar_wk.wl);
	memset(m + skip, 0, total - skip);
	ar_wk.slot_ptr = (void **)(m + off_ptr);
	ar_wk.th = (ar_wthread_t *)(m + off_th);
	ar_wk.samples = (ar_sample_t *)(m + off_smp);
	ar_hist_t *hist = (ar_hist_t *)(m + off_hist);
	if (ar_wk.slot_size) /* non-NULL marks "wanted" until here */
		ar_wk.slot_size = (uint64_t *)(m + off_size);
	for (size_t i = 0; i < nthr; i++) {
		ar_wthread_t *t = &ar_wk.th[i];
		t->index = (uint32_t)i;
		t->apass_at = ar_wk.slot_size && i == h->peak_thread ? h->peak_op : UINT64_MAX;
		t->nops = ar_wk.wl.threads[i].nops;
		t->first_op = ar_wk.wl.threads[i].prelude_ops;
		ar_wk.has_prelude |= t->first_op != 0;
		for (int k = 0; k < AR_WL_NCALLS; k++)
			if (ar_wk.wl.threads[i].ops_by_kind[k]) {
				t->hist[k] = hist++;
				ar_hist_reset(t->hist[k]);
			}
	}
	load_ops(m + off_ops, per_stream);
}

/* Map the ops_done counter (worker.h): the page of progress_fd when given,
 * else an anonymous shared page — also shared memory, so RSS and every
 * figure stay the same with or without a watcher. Written now, so the page
 * is in the baseline; mmap, never the allocator under test. */
static void map_progress(int progress_fd)
{
	size_t bytes = (size_t)ar_wk.page;
	void *m = MAP_FAILED;
	if (progress_fd >= 0) {
		m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, progress_fd, 0);
		close(progress_fd);
	}
	if (m == MAP_FAILED)
		m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		die("error", "cannot map the progress counter page");
	ar_wk.ops_done = m;
	atomic_store_explicit(ar_wk.ops_done, 0, memory_order_relaxed);
}

static void *thread_main(void *arg)
{
	ar_wthread_t *t = arg;
	if (ar_wk.has_prelude) {
		pthread_barrier_wait(&ar_wk.prelude_go);
		ar_replay_prelude(t);
		pthread_barrier_wait(&ar_wk.prelude_done);
	}
	pthread_barrier_wait(&ar_wk.start);
	ar_replay_stream(t);
	pthread_barrier_wait(&ar_wk.done);
	pthread_barrier_wait(&ar_wk.leave);
	return NULL;
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

/* The command line (see the top of this file); the modes go straight into
 * ar_wk, the rest is kept here for start-up. */
typedef struct options {
	const char *workload, *allocator, *library;
	uint64_t sample_every; /* --timing sample:N: N; else 0 */
	const char *apass; /* "on" or "off" */
	int fd, progress_fd;
	uint64_t dep_timeout_ms;
	uint64_t workload_memory;
} options_t;

/* What the replay window cost: baselines taken just before it and the
 * figures read just after it. */
typedef struct measures {
	struct rusage ru0, ru1;
	uint64_t base_allocs, base_frees, end_allocs, end_frees; /* have_ours */
	int have_ours;  /* our allocators count their own calls */
	int exact_peak; /* the kernel's high-water mark could be reset */
	uint64_t base_anon, base_rss, end_rss, peak;
	uint64_t wall_ns;
} measures_t;

/* The thread totals the report gives as scalars. */
typedef struct totals {
	ar_wthread_t sum;
	uint64_t checksum;
	const char *thread_error; /* the first thread's error, or NULL */
} totals_t;

/* "sample:N" with 1 <= N <= 2^32 into *n. 0, or -1. */
static int parse_sample(const char *s, uint64_t *n)
{
	if (strncmp(s, "sample:", 7) != 0 || s[7] < '0' || s[7] > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s + 7, &end, 10);
	if (*end || errno || v < 1 || v > (1ull << 32))
		return -1;
	*n = v;
	return 0;
}

/* Parse argv into o and the replay modes into ar_wk; usage() (exit 64) on
 * anything unknown, before a byte is reported. */
static void parse_options(int argc, char **argv, options_t *o)
{
	const char *touch = "pages", *timing = "calls", *counters = "perf";
	*o = (options_t){ .apass = "off", .fd = 1, .progress_fd = -1, .dep_timeout_ms = 30000,
			  .workload_memory = AR_WL_RESIDENT_DEFAULT };
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *opt = argv[i], *v = argv[++i];
		if (!strcmp(opt, "--workload"))
			o->workload = v;
		else if (!strcmp(opt, "--allocator"))
			o->allocator = v;
		else if (!strcmp(opt, "--library"))
			o->library = v;
		else if (!strcmp(opt, "--touch"))
			touch = v;
		else if (!strcmp(opt, "--fd"))
			o->fd = atoi(v);
		else if (!strcmp(opt, "--timing"))
			timing = v;
		else if (!strcmp(opt, "--counters"))
			counters = v;
		else if (!strcmp(opt, "--access-pass"))
			o->apass = v;
		else if (!strcmp(opt, "--progress-fd"))
			o->progress_fd = atoi(v);
		else if (!strcmp(opt, "--dep-timeout-ms"))
			o->dep_timeout_ms = strtoull(v, NULL, 10);
		else if (!strcmp(opt, "--workload-memory")) {
			char *end;
			errno = 0;
			o->workload_memory = strtoull(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno)
				usage();
		}
		else if (ar_route_option(opt, v))
			;
		else
			usage();
	}
	if (!o->workload || !o->allocator || !o->library)
		usage();
	static const char *const touches[] = { "none", "first", "pages", "all" };
	ar_wk.touch = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(touch, touches[i]))
			ar_wk.touch = i;
	if (ar_wk.touch < 0)
		usage();
	if (!strcmp(timing, "calls") || !strcmp(timing, "every"))
		ar_wk.timing = AR_TIMING_EVERY;
	else if (!strcmp(timing, "none"))
		ar_wk.timing = AR_TIMING_NONE;
	else if (parse_sample(timing, &o->sample_every) == 0)
		ar_wk.timing = AR_TIMING_SAMPLE;
	else
		usage();
	if (!strcmp(counters, "perf"))
		ar_wk.counters = AR_CTR_PERF;
	else if (!strcmp(counters, "sim"))
		ar_wk.counters = AR_CTR_SIM;
	else if (!strcmp(counters, "none"))
		ar_wk.counters = AR_CTR_NONE;
	else
		usage();
	if (ar_wk.counters == AR_CTR_SIM)
		ar_wk.timing = AR_TIMING_NONE;
	if (strcmp(o->apass, "on") != 0 && strcmp(o->apass, "off") != 0)
		usage();
}

/* Start the report on fd: its buffer is touched now, so it is part of the
 * baseline. */
static void open_report(int fd)
{
	memset(&proto, 0, sizeof proto);
	ar_wproto_init(&proto, fd);
	ar_wproto_str(&proto, "A allocrr-worker 1\n");
}

/* Phase 1: prove that the library named on the command line serves malloc
 * (the V line) and refuse to run otherwise (wrong_allocator). */
static void prove_allocator(const options_t *o)
{
	ar_allocator_t a;
	memset(&a, 0, sizeof a);
	a.name = o->allocator;
	a.installed = 1;
	snprintf(a.library, sizeof a.library, "%s", o->library);
	char served[PATH_MAX] = "";
	int vrc = ar_registry_verify(&a, served, sizeof served);
	ar_wproto_str(&proto, "V ");
	ar_wproto_u64(&proto, vrc < 0 ? 99 : (uint64_t)vrc);
	ar_wproto_str(&proto, " ");
	ar_wproto_text(&proto, served[0] ? served : "?");
	ar_wproto_str(&proto, "\n");
	if (vrc != 0) {
		char msg[2 * PATH_MAX + 200];
		if (vrc < 0)
			snprintf(msg, sizeof msg, "cannot tell which library serves malloc "
				 "(dlsym/dladdr failed, code %d)", vrc);
		else
			snprintf(msg, sizeof msg,
				 "malloc is served by %s, not by %s: LD_PRELOAD did not take effect, "
				 "refusing to report another allocator's numbers as %s's",
				 served, o->library, o->allocator);
		die("wrong_allocator", msg);
	}
}

/* Phase 1: map the workload and check that the allocator can replay it
 * (check_symbols); then the test hook ALLOCRR_WORKER_TEST_HANG. */
static void open_workload(const options_t *o)
{
	char err[512];
	if (ar_wl_open(&ar_wk.wl, o->workload, err, sizeof err) != 0)
		die("error", err);
	check_symbols(o->allocator);
	const char *status;
	if (ar_route_open(&ar_wk.wl, &status, err, sizeof err) != 0)
		die(status, err);
	if (getenv("ALLOCRR_WORKER_TEST_HANG"))
		for (;;)
			pause();
}

/* The period of --timing sample:N for this workload: N, or less when the
 * trace has fewer than N * AR_TIMING_MIN_SAMPLES calls — so many that the
 * sampled percentiles up to p99.9 rest on enough calls (worker.h) — down to
 * 1, which is every call. */
static uint64_t effective_period(uint64_t n)
{
	uint64_t most = ar_wk.wl.hdr->calls / AR_TIMING_MIN_SAMPLES;
	if (most < 1)
		most = 1;
	return n < most ? n : most;
}

/* The timing mode's period (ar_wk.timing_every) and every replay thread's
 * sampler, seeded by its index (worker_clock.h). */
static void set_timing(uint64_t sample_every)
{
	ar_wk.timing_every = ar_wk.timing == AR_TIMING_NONE ? 0 : 1;
	if (ar_wk.timing == AR_TIMING_SAMPLE) {
		ar_wk.timing_every = effective_period(sample_every);
		if (ar_wk.timing_every == 1)
			ar_wk.timing = AR_TIMING_EVERY;
	}
	for (uint32_t i = 0; i < ar_wk.wl.hdr->nthreads; i++)
		ar_sampler_init(&ar_wk.th[i].sampler, i, ar_wk.timing_every);
}

/* Phase 1: everything the replay needs besides its threads — the statm fd,
 * the calibrated clock, the harness memory, the progress page, the
 * allocator's statistics and the hardware counters. */
static void set_up_harness(const options_t *o)
{
	ar_wk.page = (uint64_t)sysconf(_SC_PAGESIZE);
	ar_wk.dep_timeout_ns = o->dep_timeout_ms * 1000000ull;
	ar_wk.statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (ar_wk.statm_fd < 0)
		die("error", "cannot open /proc/self/statm");
	ar_clock_init(&ar_wk.clock, 20);
	/* The pass walks blocks that only one thread can free meanwhile. */
	static uint64_t wanted;
	if (!strcmp(o->apass, "on") && ar_wk.wl.hdr->nthreads == 1)
		ar_wk.slot_size = &wanted;
	setup_memory(o->workload_memory);
	set_timing(o->sample_every);
	map_progress(o->progress_fd);
	ar_probe_stats_init(o->allocator);
	if (ar_wk.counters == AR_CTR_PERF)
		ar_probe_perf_open();
}

/* Phase 1: create replay threads 1..n-1, parked on the start barrier
 * (thread 0 is this one), then read every used page of the workload so its
 * file pages are in the baseline and the peak is the heap's alone. */
static void start_threads(void)
{
	uint32_t n = ar_wk.wl.hdr->nthreads;
	pthread_barrier_init(&ar_wk.start, NULL, n);
	pthread_barrier_init(&ar_wk.done, NULL, n);
	pthread_barrier_init(&ar_wk.leave, NULL, n);
	pthread_barrier_init(&ar_wk.prelude_go, NULL, n);
	pthread_barrier_init(&ar_wk.prelude_done, NULL, n);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1u << 20);
	for (uint32_t i = 1; i < n; i++)
		if (pthread_create(&ar_wk.th[i].tid, &attr, thread_main, &ar_wk.th[i]) != 0) {
			/* Threads already parked on the barrier cannot be released
			 * without the others: report and exit the whole process. */
			char msg[160];
			snprintf(msg, sizeof msg, "pthread_create failed for replay thread %u of %u", i, n);
			die("error", msg);
		}
}

/* Phase 1, last: the baselines (RSS, rusage, our allocators' counters). */
static void take_baselines(measures_t *m)
{
	uint64_t hwm = 0;
	*m = (measures_t){ 0 };
	m->base_anon = ar_probe_anon_rss();
	/* Peak RSS: the kernel's exact high-water mark, reset here; without
	 * clear_refs, the highest RSS sample (a lower bound). */
	m->exact_peak = ar_probe_reset_hwm() == 0 && ar_probe_rss(&m->base_rss, &hwm) == 0;
	m->have_ours = ar_probe_ours_counts(&m->base_allocs, &m->base_frees);
	ar_route_baseline();
	getrusage(RUSAGE_SELF, &m->ru0);
}

/* Phase 1, after the baselines: a window trace's pre-existing blocks, each
 * thread its own (workload.h), so the heap figures count them and the
 * timed window does not. */
static void run_preludes(void)
{
	if (!ar_wk.has_prelude)
		return;
	pthread_barrier_wait(&ar_wk.prelude_go);
	ar_replay_prelude(&ar_wk.th[0]);
	pthread_barrier_wait(&ar_wk.prelude_done);
}

/* Phase 2: the replay window — barrier, this thread's stream, barrier —
 * with the counters (perf or callgrind) on around it. */
static void replay_window(measures_t *m)
{
	ar_wk.t0_ns = ar_clock_mono_ns();
	if (ar_wk.counters == AR_CTR_PERF)
		ar_probe_perf_enable(1);
	if (ar_wk.counters == AR_CTR_SIM)
		CALLGRIND_START_INSTRUMENTATION;
	pthread_barrier_wait(&ar_wk.start);
	ar_replay_stream(&ar_wk.th[0]);
	pthread_barrier_wait(&ar_wk.done);
	if (ar_wk.counters == AR_CTR_SIM)
		CALLGRIND_STOP_INSTRUMENTATION;
	m->wall_ns = ar_clock_mono_ns() - ar_wk.t0_ns;
	if (ar_wk.counters == AR_CTR_PERF)
		ar_probe_perf_enable(0);
}

/* Phase 3, first: rusage, our allocators' counters and the peak RSS (the
 * high-water mark, or else the highest sample against the anon baseline). */
static void take_final_figures(measures_t *m)
{
	uint64_t hwm = 0;
	getrusage(RUSAGE_SELF, &m->ru1);
	if (m->have_ours)
		ar_probe_ours_counts(&m->end_allocs, &m->end_frees);
	ar_route_final();
	uint64_t final_anon = ar_probe_anon_rss();
	m->peak = final_anon;
	if (m->exact_peak && ar_probe_rss(&m->end_rss, &hwm) == 0) {
		m->peak = hwm;
	} else {
		m->exact_peak = 0;
		m->base_rss = m->base_anon;
		m->end_rss = final_anon;
		for (uint32_t i = 0; i < ar_wk.wl.hdr->nsamples; i++)
			if (ar_wk.samples[i].anon_bytes > m->peak)
				m->peak = ar_wk.samples[i].anon_bytes;
	}
}

/* Phase 3: the allocator's own statistics (T lines) while the replay
 * threads are still parked, then release and join them, then the hardware
 * counters (C lines) and the access pass. */
static void report_probes_and_join(void)
{
	uint32_t n = ar_wk.wl.hdr->nthreads;
	ar_probe_stats_report(&proto);
	ar_route_report(&proto);
	pthread_barrier_wait(&ar_wk.leave);
	for (uint32_t i = 1; i < n; i++)
		pthread_join(ar_wk.th[i].tid, NULL);
	if (ar_wk.counters == AR_CTR_PERF)
		ar_probe_perf_report(&proto);
	ar_access_report(&proto);
}

/* The replay threads' counters summed, their checksums chained in thread
 * order, and the first thread's error. */
static void sum_threads(totals_t *t)
{
	memset(t, 0, sizeof *t);
	for (uint32_t i = 0; i < ar_wk.wl.hdr->nthreads; i++) {
		const ar_wthread_t *w = &ar_wk.th[i];
		t->sum.calls += w->calls;
		t->sum.failed_allocs += w->failed_allocs;
		t->sum.unexpected_failed_allocs += w->unexpected_failed_allocs;
		t->sum.skipped_ops += w->skipped_ops;
		t->sum.leaked_blocks += w->leaked_blocks;
		t->sum.allocs_expected += w->allocs_expected;
		t->sum.frees_expected += w->frees_expected;
		t->sum.dep_waits += w->dep_waits;
		t->sum.dep_blocked += w->dep_blocked;
		t->sum.sync_waits += w->sync_waits;
		t->sum.timed_ticks += w->timed_ticks;
		t->sum.timed_calls += w->timed_calls;
		t->sum.sampling_ns += w->sampling_ns;
		t->checksum = t->checksum * 31 + w->checksum;
		/* the cause, not a thread that stopped because another failed */
		if (w->error && (!t->thread_error || !strncmp(t->thread_error, "stopped: ", 9)))
			t->thread_error = w->errmsg;
	}
}

/* One kind's latency histogram: its H line and a B line per non-empty
 * bucket. */
static void report_hist(int kind, const ar_hist_t *h)
{
	if (!h->count)
		return;
	ar_wproto_str(&proto, "H ");
	ar_wproto_str(&proto, ar_wl_kind_name((unsigned)kind));
	ar_wproto_sp_u64(&proto, h->count);
	ar_wproto_sp_u64(&proto, h->sum);
	ar_wproto_sp_u64(&proto, h->min);
	ar_wproto_sp_u64(&proto, h->max);
	ar_wproto_str(&proto, "\n");
	for (unsigned b = 0; b < AR_HIST_BUCKETS; b++) {
		if (!h->b[b])
			continue;
		ar_wproto_str(&proto, "B ");
		ar_wproto_str(&proto, ar_wl_kind_name((unsigned)kind));
		ar_wproto_sp_u64(&proto, b);
		ar_wproto_sp_u64(&proto, h->b[b]);
		ar_wproto_str(&proto, "\n");
	}
}

/* Per-kind histograms merged into thread 0's storage order (the first
 * thread that has a kind accumulates the others') and reported. */
static void report_histograms(void)
{
	uint32_t n = ar_wk.wl.hdr->nthreads;
	for (int k = 0; k < AR_WL_NCALLS; k++) {
		ar_hist_t *acc = NULL;
		for (uint32_t i = 0; i < n; i++) {
			ar_hist_t *h = ar_wk.th[i].hist[k];
			if (!h)
				continue;
			if (!acc)
				acc = h;
			else
				ar_hist_merge(acc, h);
		}
		if (acc)
			report_hist(k, acc);
	}
}

/* The RSS samples (R lines) the replay threads took at the markers. */
static void report_samples(void)
{
	for (uint32_t i = 0; i < ar_wk.wl.hdr->nsamples; i++) {
		const ar_sample_t *s = &ar_wk.samples[i];
		if (!s->anon_bytes && !s->elapsed_ns)
			continue; /* its thread stopped early */
		ar_wproto_str(&proto, "R");
		ar_wproto_sp_u64(&proto, i);
		ar_wproto_sp_u64(&proto, s->event);
		ar_wproto_sp_u64(&proto, s->elapsed_ns);
		ar_wproto_sp_u64(&proto, s->anon_bytes);
		ar_wproto_sp_u64(&proto, s->live_bytes);
		ar_wproto_str(&proto, "\n");
	}
}

/* The scalar metrics (S lines; names: runner.c, docs/RESULTS.md). */
static void report_scalars(const measures_t *m, const totals_t *t)
{
	const ar_wthread_t *sum = &t->sum;
	const struct rusage *ru0 = &m->ru0, *ru1 = &m->ru1;
	ar_wproto_kv(&proto, 'S', "threads", ar_wk.wl.hdr->nthreads);
	ar_wproto_kv(&proto, 'S', "calls", sum->calls);
	ar_wproto_kv(&proto, 'S', "wall_ns", m->wall_ns);
	ar_wproto_kv(&proto, 'S', "cpu_user_ns", tv_ns(ru1->ru_utime) - tv_ns(ru0->ru_utime));
	ar_wproto_kv(&proto, 'S', "cpu_sys_ns", tv_ns(ru1->ru_stime) - tv_ns(ru0->ru_stime));
	ar_wproto_kv(&proto, 'S', "timing_every", ar_wk.timing_every);
	if (ar_wk.timing != AR_TIMING_NONE) { /* not measured: absent, so NULL in the database */
		/* sampled: the timed calls' sum stands for all calls */
		double scale = sum->timed_calls ? (double)sum->calls / (double)sum->timed_calls : 1.0;
		ar_wproto_kv(&proto, 'S', "timed_ns",
			     (uint64_t)((double)sum->timed_ticks * scale / ar_wk.clock.ticks_per_ns));
		ar_wproto_kv(&proto, 'S', "timed_calls", sum->timed_calls);
		ar_wproto_kv(&proto, 'S', "timer_resolution_ticks", ar_wk.clock.resolution_ticks);
	}
	ar_wproto_kv(&proto, 'S', "sampling_ns", sum->sampling_ns);
	ar_wproto_kv(&proto, 'S', "timer_tsc", (uint64_t)ar_wk.clock.tsc);
	ar_wproto_kv(&proto, 'S', "ticks_per_ms", (uint64_t)(ar_wk.clock.ticks_per_ns * 1e6 + 0.5));
	ar_wproto_kv(&proto, 'S', "timer_overhead_ticks", ar_wk.clock.overhead_ticks);
	ar_wproto_kv(&proto, 'S', "timer_overhead_median_ticks", ar_wk.clock.overhead_median_ticks);
	ar_wproto_kv(&proto, 'S', "baseline_rss_bytes", m->base_rss);
	ar_wproto_kv(&proto, 'S', "peak_rss_bytes", m->peak);
	ar_wproto_kv(&proto, 'S', "final_rss_bytes", m->end_rss);
	ar_wproto_kv(&proto, 'S', "peak_rss_exact", (uint64_t)m->exact_peak);
	ar_wproto_kv(&proto, 'S', "baseline_anon_bytes", m->base_anon);
	ar_wproto_kv(&proto, 'S', "maxrss_bytes", (uint64_t)ru1->ru_maxrss * 1024);
	ar_wproto_kv(&proto, 'S', "minor_faults", (uint64_t)(ru1->ru_minflt - ru0->ru_minflt));
	ar_wproto_kv(&proto, 'S', "major_faults", (uint64_t)(ru1->ru_majflt - ru0->ru_majflt));
	ar_wproto_kv(&proto, 'S', "voluntary_ctx_switches", (uint64_t)(ru1->ru_nvcsw - ru0->ru_nvcsw));
	ar_wproto_kv(&proto, 'S', "involuntary_ctx_switches", (uint64_t)(ru1->ru_nivcsw - ru0->ru_nivcsw));
	ar_wproto_kv(&proto, 'S', "failed_allocs", sum->failed_allocs);
	ar_wproto_kv(&proto, 'S', "unexpected_failed_allocs", sum->unexpected_failed_allocs);
	ar_wproto_kv(&proto, 'S', "skipped_ops", sum->skipped_ops);
	ar_wproto_kv(&proto, 'S', "leaked_blocks", sum->leaked_blocks);
	ar_wproto_kv(&proto, 'S', "dep_waits", sum->dep_waits);
	ar_wproto_kv(&proto, 'S', "dep_blocked", sum->dep_blocked);
	ar_wproto_kv(&proto, 'S', "sync_waits", sum->sync_waits);
	ar_wproto_kv(&proto, 'S', "op_checksum", t->checksum);
	ar_wproto_kv(&proto, 'S', "allocs_expected", sum->allocs_expected);
	ar_wproto_kv(&proto, 'S', "frees_expected", sum->frees_expected);
	if (m->have_ours) {
		ar_wproto_kv(&proto, 'S', "allocator_allocs_delta", m->end_allocs - m->base_allocs);
		ar_wproto_kv(&proto, 'S', "allocator_frees_delta", m->end_frees - m->base_frees);
	}
}

/* A replay thread's error (E line), then the end of the report (Z). */
static void close_report(const totals_t *t)
{
	if (t->thread_error) {
		ar_wproto_str(&proto, "E error ");
		ar_wproto_text(&proto, t->thread_error);
		ar_wproto_str(&proto, "\n");
	}
	ar_wproto_str(&proto, "Z\n");
	ar_wproto_flush(&proto);
}

/* parse → set up (phase 1) → replay (phase 2) → report (phase 3). */
int main(int argc, char **argv)
{
	options_t o;
	measures_t m;
	totals_t t;
	parse_options(argc, argv, &o);
	open_report(o.fd);

	prove_allocator(&o);
	open_workload(&o);
	set_up_harness(&o);
	start_threads();
	take_baselines(&m);
	run_preludes();

	replay_window(&m);

	take_final_figures(&m);
	report_probes_and_join();
	sum_threads(&t);
	report_histograms();
	report_samples();
	report_scalars(&m, &t);
	close_report(&t);
	return 0;
}
