/*
 * worker_access.c — the locality pass of allocreplay --access-pass: at the
 * trace's live-bytes peak (the compiler records where: workload.h
 * peak_thread/peak_op), walk every live block and read-modify-write one
 * byte per 64-byte cache line, so the run shows how the allocator's
 * placement of the blocks affects the program's own memory accesses.
 *
 * Order: slot order (0, 1, 2, ...). The compiler numbers fresh slots in
 * allocation order and reuses freed slots oldest release first, so slot
 * order is allocation order for blocks in fresh slots; a block in a reused
 * slot is walked at its slot's earlier place (docs/RESULTS.md, "Access
 * pass").
 *
 * Invariants: runs on the thread whose op reached the peak, only for
 * single-stream workloads (no other thread can free a block under it);
 * makes no heap call; the walk itself is the leaf function
 * ar_access_walk, so callgrind (--counters sim) counts it by name; its
 * time excludes the clock reads; in perf mode the counters are read
 * around the walk (the C lines access_pass_*).
 */
#include <stdint.h>

#include "worker.h"
#include "worker_proto.h"

#define LINE 64
#define MAX_CTR 16

static uint64_t perf_begin[MAX_CTR], perf_end[MAX_CTR];

/* Read and write one byte per line of every live block; returns the
 * number of blocks walked, adds bytes and lines. A leaf on purpose
 * (callgrind's self cost of this function is the pass). */
__attribute__((noinline)) uint64_t ar_access_walk(void *const *slots, const uint64_t *sizes,
						  uint32_t nslots, uint64_t *bytes, uint64_t *lines);
__attribute__((noinline)) uint64_t ar_access_walk(void *const *slots, const uint64_t *sizes,
						  uint32_t nslots, uint64_t *bytes, uint64_t *lines)
{
	uint64_t blocks = 0, b = 0, l = 0;
	for (uint32_t s = 0; s < nslots; s++) {
		volatile unsigned char *p = slots[s];
		uint64_t n = sizes[s];
		if (!p || !n)
			continue;
		blocks++;
		b += n;
		/* one byte in each line the block spans, from its first byte */
		uintptr_t a = (uintptr_t)p, end = a + n;
		for (uintptr_t x = a; x < end; x = (x | (LINE - 1)) + 1) {
			volatile unsigned char *c = (volatile unsigned char *)x;
			*c = (unsigned char)(*c + 1);
			l++;
		}
	}
	*bytes += b;
	*lines += l;
	return blocks;
}

void ar_access_pass(void)
{
	if (!ar_wk.slot_size || ar_wk.apass_done)
		return;
	int perf = ar_wk.counters == AR_CTR_PERF && ar_probe_perf_count() <= MAX_CTR;
	if (perf)
		ar_probe_perf_read(perf_begin);
	uint64_t t0 = ar_clock_mono_ns();
	ar_wk.apass_blocks = ar_access_walk(ar_wk.slot_ptr, ar_wk.slot_size, ar_wk.wl.hdr->nslots,
					    &ar_wk.apass_bytes, &ar_wk.apass_lines);
	uint64_t t1 = ar_clock_mono_ns();
	if (perf)
		ar_probe_perf_read(perf_end);
	ar_wk.apass_ns = t1 - t0; /* not reported under --counters sim: valgrind's time */
	ar_wk.apass_done = 1;
}

void ar_access_report(ar_wproto_t *r)
{
	if (!ar_wk.apass_done)
		return;
	if (ar_wk.counters != AR_CTR_SIM)
		ar_wproto_kv(r, 'S', "access_pass_ns", ar_wk.apass_ns);
	ar_wproto_kv(r, 'S', "access_pass_blocks", ar_wk.apass_blocks);
	ar_wproto_kv(r, 'S', "access_pass_bytes", ar_wk.apass_bytes);
	ar_wproto_kv(r, 'S', "access_pass_lines", ar_wk.apass_lines);
	if (ar_wk.counters == AR_CTR_PERF && ar_probe_perf_count() <= MAX_CTR)
		ar_probe_perf_report_delta(r, "access_pass_", perf_begin, perf_end);
}
