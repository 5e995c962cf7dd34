# bench/replay/: the replayer benchmark (make bench-replay), included from
# bench/module.mk. (a) what the replay harness itself costs per op, measured
# under a null allocator (bump.c -> libbump.so, preloaded into the worker
# for this benchmark only; not in the registry); (b) how well allocreplay's
# comparison of glibc, jemalloc, tcmalloc and mimalloc predicts running the
# programs themselves under each; (c) what timing the calls costs ops/s:
# --timing none vs sample:N vs every on the reference scenarios (timing.sh,
# also alone as make bench-replay-timing). Figures and method:
# docs/BENCHMARKS.md.
BENCH_REPLAY_BUMP := $(BUILD)/bench/libbump.so
# Preloaded into the worker: never sanitized, nothing but the heap API exported.
BENCH_REPLAY_BUMP_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer,\
	$(CFLAGS_OUR)) -fvisibility=hidden

$(BENCH_REPLAY_BUMP): bench/replay/bump.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(BENCH_REPLAY_BUMP_CFLAGS) -shared -o $@ $<

.PHONY: bench-replay bench-replay-timing
bench-replay: $(BENCH_REPLAY_BUMP) $(ALLOCREPLAY) $(REPLAY_WORKER) $(ALLOCREC) $(REC_SHIM) \
		$(BENCH_REC) $(DEMO_SERVER)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/replay/run.sh

bench-replay-timing: $(ALLOCREPLAY) $(REPLAY_WORKER) $(ALLOCTRACE)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/replay/timing.sh

# The replay loop's own cost per op, untimed under libbump.so (loop.sh).
.PHONY: bench-replay-loop
bench-replay-loop: $(BENCH_REPLAY_BUMP) $(ALLOCREPLAY) $(REPLAY_WORKER) $(ALLOCTRACE)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/replay/loop.sh

ALL_TARGETS += $(BENCH_REPLAY_BUMP)
BENCHES += bench-replay bench-replay-loop
