# replayer/: allocreplay (the command: compile, run workers, SQLite, tables),
# allocreplay-worker (one replay under one allocator, started with
# LD_PRELOAD by allocreplay), their unit tests and test programs, and the
# compile benchmark. docs/RESULTS.md documents the database.

# ---- shared pieces --------------------------------------------------------------
# The workload format and compiler: used by allocreplay, the unit tests and the bench.
REPLAY_WL_OBJS := $(call objs,$(REPLAY_WL_SRCS))
REPLAY_HIST_OBJS := $(call objs,replayer/hist.c)

# ---- the worker -------------------------------------------------------------------
# Runs under LD_PRELOAD of arbitrary allocators, so never under a sanitizer
# (its runtime is a malloc of its own); -fno-builtin-* keeps the compiler
# from rewriting or eliding the heap calls it replays.
REPLAY_WORKER_SRCS := replayer/worker_main.c replayer/worker_replay.c replayer/worker_probe.c \
	replayer/worker_access.c replayer/worker_route.c \
	replayer/worker_proto.c replayer/worker_clock.c replayer/hist.c replayer/wl_file.c replayer/wl_codec.c common/cpu.c
REPLAY_WORKER_OBJS := $(patsubst %.c,$(BUILD)/obj-worker/%.o,$(REPLAY_WORKER_SRCS))
REPLAY_WORKER_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS_OUR)) \
	-Iallocators -fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc \
	-fno-builtin-free -fno-builtin-memset
# The registry is linked from its sources so a SAN build's archive never ends up here.
REPLAY_WORKER_REG := allocators/registry.c allocators/registry_probe.c

$(BUILD)/obj-worker/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (worker)")
	$(Q)$(CC) $(REPLAY_WORKER_CFLAGS) -MMD -MP -c $< -o $@

$(REPLAY_WORKER): $(REPLAY_WORKER_OBJS) $(REPLAY_WORKER_REG) allocators/ar_alloc.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(REPLAY_WORKER_CFLAGS) -Wno-missing-prototypes -o $@ $(REPLAY_WORKER_OBJS) \
	  $(REPLAY_WORKER_REG) -lpthread -ldl

# ---- allocreplay ------------------------------------------------------------------
ALLOCREPLAY_SRCS := replayer/allocreplay.c replayer/runner.c replayer/db.c \
	replayer/table.c replayer/wl_cache.c replayer/hist.c replayer/machine.c replayer/sim_callgrind.c \
	replayer/progress.c replayer/plan.c replayer/recorded.c replayer/route.c replayer/sites_child.c \
	replayer/plan_jobs.c
ALLOCREPLAY_OBJS := $(call objs,$(ALLOCREPLAY_SRCS))
$(ALLOCREPLAY_OBJS): CFLAGS_OUR += -Iallocators -Iresults

$(ALLOCREPLAY): $(ALLOCREPLAY_OBJS) $(REPLAY_WL_OBJS) $(ALLOC_REG_LIB) $(RESULTS_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(ALLOCREPLAY_OBJS) $(REPLAY_WL_OBJS) $(ALLOC_REG_LIB) \
	  $(RESULTS_LDLIBS) $(COMMON_LIB) $(TRACE_ID_LDLIBS) $(TRACE_LDLIBS) $(REPLAY_WL_LDLIBS)

# ---- unit tests (no preload; also run under ASan+UBSan) -------------------------------
REPLAY_UNIT_NAMES := test_replay_hist test_replay_compile test_replay_route test_replay_codec test_replay_wlfile \
	test_replay_recorded
REPLAY_UNIT_BINS := $(patsubst %,$(BUILD)/tests/%,$(REPLAY_UNIT_NAMES))
REPLAY_UNIT_OBJS := $(call objs,$(patsubst %,replayer/tests/%.c,$(REPLAY_UNIT_NAMES)))
$(REPLAY_UNIT_OBJS): CFLAGS_OUR += -Ireplayer -Itests/unit

$(BUILD)/tests/test_replay_hist: $(BUILD)/obj/replayer/tests/test_replay_hist.o $(REPLAY_HIST_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $^

$(BUILD)/tests/test_replay_compile: $(BUILD)/obj/replayer/tests/test_replay_compile.o \
		$(REPLAY_WL_OBJS) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $< $(REPLAY_WL_OBJS) $(TRACE_LDLIBS) $(REPLAY_WL_LDLIBS)

# The segment encoding alone (wl_codec.c); the workload file (wl_file.c) with the compiler.
$(BUILD)/tests/test_replay_codec: $(BUILD)/obj/replayer/tests/test_replay_codec.o $(call objs,replayer/wl_codec.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $^

$(BUILD)/tests/test_replay_wlfile: $(BUILD)/obj/replayer/tests/test_replay_wlfile.o \
		$(REPLAY_WL_OBJS) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $< $(REPLAY_WL_OBJS) $(TRACE_LDLIBS) $(REPLAY_WL_LDLIBS)

# --route's rules and map (replayer/route.c): linked with the compiler to make workloads.
$(BUILD)/obj/replayer/tests/test_replay_route.o: CFLAGS_OUR += -Iallocators
$(BUILD)/tests/test_replay_route: $(BUILD)/obj/replayer/tests/test_replay_route.o \
		$(call objs,replayer/route.c replayer/sites_child.c) $(REPLAY_WL_OBJS) $(ALLOC_REG_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $< $(call objs,replayer/route.c replayer/sites_child.c) $(REPLAY_WL_OBJS) $(ALLOC_REG_LIB) \
	  $(COMMON_LIB) $(TRACE_LDLIBS) $(REPLAY_WL_LDLIBS)

# What replay takes from the trace about the recorded process (replayer/recorded.c).
$(BUILD)/obj/replayer/tests/test_replay_recorded.o: CFLAGS_OUR += -Iallocators -Iresults
$(BUILD)/tests/test_replay_recorded: $(BUILD)/obj/replayer/tests/test_replay_recorded.o \
		$(call objs,replayer/recorded.c) $(ALLOC_REG_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $< $(call objs,replayer/recorded.c) $(ALLOC_REG_LIB) $(COMMON_LIB) \
	  $(TRACE_LDLIBS)

# ---- programs and libraries for the e2e tests (tests/e2e/replay_*.sh) ------------------
# xthread: producer/consumer with cross-thread frees, recorded by allocrec.
# libfake.so: defines no malloc (a "wrong LD_PRELOAD"); libcrash.so: a malloc
# that crashes after N calls (a crashing allocator); libnull.so: returns NULL
# after N calls, always or with a probability (an allocator out of memory);
# libhang.so: never returns from call N (a deadlocked allocator). The fault
# libraries read their parameters from ALLOCRR_TEST_* (see each file).
REPLAY_TEST_DIR := $(BUILD)/tests/replay
REPLAY_TEST_PROG_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O1 -g -fno-builtin -D_GNU_SOURCE
REPLAY_TEST_BINS := $(REPLAY_TEST_DIR)/xthread $(REPLAY_TEST_DIR)/libfake.so $(REPLAY_TEST_DIR)/libcrash.so \
	$(REPLAY_TEST_DIR)/libnull.so $(REPLAY_TEST_DIR)/libhang.so

$(REPLAY_TEST_DIR)/xthread: replayer/tests/xthread.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REPLAY_TEST_PROG_CFLAGS) -o $@ $< -lpthread

$(REPLAY_TEST_DIR)/lib%.so: replayer/tests/%lib.c replayer/tests/libc_forward.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REPLAY_TEST_PROG_CFLAGS) -fPIC -shared -o $@ $< -ldl

# ---- benchmark: compile speed ------------------------------------------------------------
REPLAY_BENCH := $(BUILD)/bin/bench_replay_compile
REPLAY_BENCH_OBJS := $(call objs,replayer/bench_compile.c)
$(REPLAY_BENCH_OBJS): CFLAGS_OUR += -Itraces/gen

$(REPLAY_BENCH): $(REPLAY_BENCH_OBJS) $(REPLAY_WL_OBJS) $(SYNTH_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(REPLAY_BENCH_OBJS) $(REPLAY_WL_OBJS) $(SYNTH_LIB) $(TRACE_LDLIBS) $(REPLAY_WL_LDLIBS)

.PHONY: bench-replay-compile
bench-replay-compile: $(REPLAY_BENCH) $(BENCH_FORMAT)
	$(Q)t=$$(mktemp -d) && $(BENCH_FORMAT) 10000000 1 1 $$t/1t.zst >/dev/null && \
	  $(BENCH_FORMAT) 10000000 4 1 $$t/4t.zst >/dev/null && \
	  $(REPLAY_BENCH) $$t/1t.zst $$t/4t.zst; rc=$$?; rm -rf $$t; exit $$rc

ALL_TARGETS += $(REPLAY_WORKER) $(ALLOCREPLAY) $(REPLAY_TEST_BINS) $(REPLAY_BENCH)
UNIT_TESTS += $(REPLAY_UNIT_BINS)
TSAN_TESTS += $(BUILD)/tests/test_replay_compile # the decoding thread (wl_decode.c)
INSTALL_BINS += $(ALLOCREPLAY)
MAN_NAME_allocreplay := replay heap traces against allocators and store what each cost in SQLite
INSTALL_LIBEXEC += $(REPLAY_WORKER) # not a user command
BENCHES += bench-replay-compile
DEP_FILES += $(ALLOCREPLAY_OBJS:.o=.d) $(REPLAY_WL_OBJS:.o=.d) $(REPLAY_WORKER_OBJS:.o=.d) \
	$(REPLAY_UNIT_OBJS:.o=.d) $(REPLAY_BENCH_OBJS:.o=.d)
