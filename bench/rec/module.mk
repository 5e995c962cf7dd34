# bench/rec/: the recorder benchmark (make bench-rec), included from
# recorder/module.mk. Figures and method: docs/RECORDER.md.
$(BENCH_REC): bench/rec/workload.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -fno-builtin -o $@ $< -lpthread

# The fidelity check of the recorder's clock sampling (recorder/rec_stamp.h).
$(BENCH_STAMP_SIM): bench/rec/stamp_sim.c recorder/rec_stamp.h $(TRACE_LIB) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_OUR) -Irecorder $(LDFLAGS_OUR) -o $@ $< $(TRACE_LDLIBS)

# What the pointer column would weigh under other reference codings
# (bench/rec/ptr_codes.c; docs/BENCHMARKS.md, "pointer codes").
$(BENCH_PTR_CODES): bench/rec/ptr_codes.c $(TRACE_LIB) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_OUR) $(LDFLAGS_OUR) -o $@ $< $(TRACE_LDLIBS)

.PHONY: bench-rec
bench-rec: $(BENCH_REC) $(BENCH_STAMP_SIM) $(BUILD)/bin/bench_replay_compile $(DEMO_SERVER) $(ALLOCREC) $(REC_SHIM) $(REC_TRACECHECK)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/rec/run.sh

# Trace size against heaptrack's on bench-fidelity's real programs.
.PHONY: bench-rec-size
bench-rec-size: $(ALLOCREC) $(REC_SHIM) $(ALLOCTRACE)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/rec/sizes.sh

ALL_TARGETS += $(BENCH_REC) $(BENCH_STAMP_SIM) $(BENCH_PTR_CODES)
BENCHES += bench-rec bench-rec-size
