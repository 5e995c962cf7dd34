/*
 * bench_compile.c — how fast the workload compiler runs, next to how fast
 * the trace can merely be decoded in sequence order (its lower bound: the
 * compiler reads through ar_reader_next_merged).
 *
 *   bench_replay_compile TRACE...      (make bench-replay-compile writes
 *                                       synthetic 10 M-event traces first)
 *
 * Best of 3 for each; the workload goes to $TMPDIR and is removed. Beside
 * the wall times, the CPU time of the whole process (all its threads) per
 * event: the compile's minus the decode's is what the compiler's own part
 * costs (its thread, and the decoding thread's hand-over), which says which
 * half of the pipeline bounds it on two idle cores; and that CPU time split
 * by thread (the calling thread compiles, the other decodes), each the
 * least of the 3 runs. Also
 * prints what bounds the compiler's memory (slots, peak live blocks) and the
 * process's peak RSS, to show it follows live blocks, not trace length, and
 * what the schedule made of the thread switches (workload.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ar_trace.h"
#include "workload.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }
static double thread_cpu(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_replay_compile TRACE...\n");
		return 1;
	}
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char out[512];
	snprintf(out, sizeof out, "%s/allocrr-bench-compile.%ld.wl", tmp, (long)getpid());
	for (int a = 1; a < argc; a++) {
		double best_dec = 1e30, best_comp = 1e30, cpu_dec = 1e30, cpu_comp = 1e30, cpu_main = 1e30, cpu_side = 1e30;
		uint64_t events = 0;
		ar_error_t err;
		for (int rep = 0; rep < 3; rep++) {
			double t0 = now(), c0 = cpu();
			ar_reader_t *r;
			if (ar_reader_open(&r, argv[a], &err) != 0) {
				fprintf(stderr, "bench_replay_compile: %s\n", err.msg);
				return 2;
			}
			ar_event_t e;
			events = 0;
			while (ar_reader_next_merged(r, &e) == 1)
				events++;
			ar_reader_close(r);
			double d = now() - t0, dc = cpu() - c0;
			if (d < best_dec)
				best_dec = d;
			if (dc < cpu_dec)
				cpu_dec = dc;
			t0 = now();
			c0 = cpu();
			double m0 = thread_cpu();
			if (ar_wl_compile(argv[a], out, "", &err) != 0) {
				fprintf(stderr, "bench_replay_compile: %s\n", err.msg);
				return 2;
			}
			d = now() - t0;
			dc = cpu() - c0;
			double mc = thread_cpu() - m0;
			if (mc < cpu_main)
				cpu_main = mc;
			if (dc - mc < cpu_side)
				cpu_side = dc - mc;
			if (d < best_comp)
				best_comp = d;
			if (dc < cpu_comp)
				cpu_comp = dc;
		}
		ar_workload_t w;
		char why[512];
		if (ar_wl_open(&w, out, why, sizeof why) != 0) {
			fprintf(stderr, "bench_replay_compile: %s\n", why);
			return 2;
		}
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("compile: %s: %llu events, %u thread(s)\n", argv[a], (unsigned long long)events,
		       w.hdr->nthreads);
		printf("  decode (merged order)   %8.1f M events/s\n", (double)events / best_dec / 1e6);
		printf("  compile to workload     %8.1f M events/s (%.1f%% of decode speed)\n",
		       (double)events / best_comp / 1e6, 100.0 * best_dec / best_comp);
		printf("  CPU per event: decode %.1f ns, compile %.1f ns (both threads), of which the "
		       "compiler's own %.1f ns\n", cpu_dec / (double)events * 1e9,
		       cpu_comp / (double)events * 1e9, (cpu_comp - cpu_dec) / (double)events * 1e9);
		printf("  CPU per event by thread: compiling %.1f ns, decoding %.1f ns (the slower one "
		       "bounds the pipeline on two idle cores)\n", cpu_main / (double)events * 1e9,
		       cpu_side / (double)events * 1e9);
		printf("  slots %u for peak %llu live blocks; cross-thread deps %llu, reuse deps %llu\n",
		       w.hdr->nslots, (unsigned long long)w.hdr->peak_live_blocks,
		       (unsigned long long)w.hdr->cross_thread_deps, (unsigned long long)w.hdr->reuse_deps);
		printf("  schedule: %llu thread switches: %llu hand-offs (%llu dropped), %llu "
		       "interleaved; SYNC ops %llu (%llu dropped)\n",
		       (unsigned long long)w.hdr->switches, (unsigned long long)w.hdr->handoffs,
		       (unsigned long long)w.hdr->handoffs_dropped,
		       (unsigned long long)w.hdr->switches_interleaved, (unsigned long long)w.hdr->sync_ops,
		       (unsigned long long)w.hdr->sync_dropped);
		printf("  workload file %.1f MB; process peak RSS so far %.1f MB\n",
		       (double)w.hdr->file_bytes / 1e6, (double)ru.ru_maxrss / 1024.0);
		ar_wl_close(&w);
		unlink(out);
	}
	return 0;
}
