# bench/import/: `make bench-import` times `alloctrace import` on generated
# memory_replay and mtrace logs (bench/import/run.sh; LINES=N, RUNS=N to
# change the size and the runs). Figures: docs/BENCHMARKS.md.
.PHONY: bench-import
bench-import: $(ALLOCTRACE)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/import/run.sh

BENCHES += bench-import
