# bench/: benchmarks. `make bench` runs every target in BENCHES; each prints
# its figures, and docs/BENCHMARKS.md says what was measured and how.
BENCH_FORMAT_OBJS := $(call objs,bench/bench_format.c)
$(BENCH_FORMAT_OBJS): CFLAGS_OUR += -Itraces/gen

$(BENCH_FORMAT): $(BENCH_FORMAT_OBJS) $(SYNTH_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(BENCH_FORMAT_OBJS) $(SYNTH_LIB) $(TRACE_LDLIBS)

.PHONY: bench-format
bench-format: $(BENCH_FORMAT)
	$(Q)$(BENCH_FORMAT) 10000000 1 1
	$(Q)$(BENCH_FORMAT) 10000000 2 1

ALL_TARGETS += $(BENCH_FORMAT)
BENCHES += bench-format
DEP_FILES += $(BENCH_FORMAT_OBJS:.o=.d)
# make bench-attach: allocrec -p PID on redis-server under redis-benchmark,
# five windows of 10 s: throughput while recording against before, every
# window's trace verified and replayed on every allocator with its peak
# live bytes checked (bench/rec/attach_redis.sh; installs redis and gdb
# when root, else skips).
.PHONY: bench-attach
bench-attach: $(ALLOCREC) $(REC_SHIM) $(ALLOCTRACE) $(ALLOCREPLAY) $(REPLAY_WORKER) all
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/rec/attach_redis.sh
BENCHES += bench-attach
include bench/alloc/module.mk
include bench/replay/module.mk
include bench/fidelity/module.mk
include bench/import/module.mk
include bench/scale/module.mk
