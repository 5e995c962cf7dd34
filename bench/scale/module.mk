# bench/scale/: make bench-scale — traces larger than RAM and the matrix on
# two job slots (issue 18; docs/BENCHMARKS.md, "Traces larger than RAM" and
# "Parallel replay"): a SCALE_EVENTS-event generated trace compiled and
# replayed with allocreplay's and each worker's RSS sampled and the
# workload's bytes per event; one scenario (D) at 1x and 20x its length,
# streamed and resident; the demo matrix serial against allocreplay --plan |
# parallel -j2. About 10-20 min and 3 GB of disk at the default 500 M
# events (SCALE_DIR, default /var/tmp); SCALE_EVENTS=20000000 for a quick
# run. More knobs at the top of bench/scale/run.sh.
SCALE_EVENTS ?= 500000000
SCALE_SMALL ?= 5000000
BENCH_DEBS += parallel
$(BENCH_DEPS_STAMP): bench/scale/module.mk

.PHONY: bench-scale
bench-scale: $(ALLOCREPLAY) $(REPLAY_WORKER) $(ALLOCTRACE) $(ALLOCREC) $(ALLOCREPORT) $(DEMO_SERVER) all
	$(Q)ALLOCRR_BUILD=$(BUILD) SCALE_EVENTS=$(SCALE_EVENTS) SCALE_SMALL=$(SCALE_SMALL) bash bench/scale/run.sh

BENCHES += bench-scale
