# bench/alloc/: make bench-alloc — every installed allocator on the reference
# scenarios through allocreplay (figures and reading: docs/BENCHMARKS.md).
.PHONY: bench-alloc
bench-alloc: $(ALLOCTRACE) $(ALLOCREC) $(DEMO_SERVER) all
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/alloc/run.sh

BENCHES += bench-alloc
