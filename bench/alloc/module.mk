# bench/alloc/: make bench-alloc — every installed allocator on the reference
# scenarios through allocreplay (figures and reading: docs/BENCHMARKS.md).
.PHONY: bench-alloc
bench-alloc: $(ALLOCTRACE) $(ALLOCREC) $(DEMO_SERVER) all
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/alloc/run.sh

# Our allocators and the system ones run for real under bench-fidelity's
# programs (bench/alloc/real.sh).
.PHONY: bench-alloc-real
bench-alloc-real: all
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/alloc/real.sh

BENCHES += bench-alloc bench-alloc-real
