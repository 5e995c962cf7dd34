# tests/fuzz/: libFuzzer targets. In `make test` each target is linked with
# fuzz_driver.c and replays its committed corpus (tests/fuzz/corpus/NAME);
# `make fuzz FUZZ_SECONDS=N` runs the real fuzzer (clang, ASan+UBSan) and
# adds what it finds to the corpus.
FUZZ_DRIVER_OBJ := $(call objs,tests/fuzz/fuzz_driver.c)
FUZZ_TARGETS := reader blocks alloctrace compile import

# What a target fuzzes beyond the trace library: FUZZ_SRCS_NAME (sources of
# other folders), FUZZ_INC_NAME, FUZZ_LIBS_NAME (system libraries).
# alloctrace: the subcommands that read a trace (alloctrace.h), not main()
# nor gen and corpus, which write files; the symboliser is linked but off.
FUZZ_SRCS_alloctrace := $(addprefix analysis/,cmd_common.c cmd_info.c cmd_verify.c cmd_dump.c \
	cmd_stats.c cmd_stacks.c sites.c route_candidates.c livemap.c heapstats.c symbolize.c) common/cli.c common/escape.c common/trace_id.c common/numfmt.c
FUZZ_INC_alloctrace := -Ianalysis
FUZZ_LIBS_alloctrace := -ldw -lelf -lstdc++ -lcrypto
# import: the importers' parsers and sink (alloctrace import), not the command.
FUZZ_SRCS_import := $(addprefix analysis/,import_input.c import_sink.c import_memreplay.c import_mtrace.c)
FUZZ_INC_import := -Ianalysis
# compile: the workload compiler and the worker's way of opening its output.
FUZZ_SRCS_compile := $(REPLAY_WL_SRCS)
FUZZ_INC_compile := -Ireplayer
FUZZ_LIBS_compile := -lpthread $(REPLAY_WL_LDLIBS)
# The libFuzzer builds of the targets that take a whole trace also mutate
# the decoded content of its blocks (block_mutator.c: past zstd's checksum).
FUZZ_MUTATOR_alloctrace := tests/fuzz/block_mutator.c
FUZZ_MUTATOR_compile := tests/fuzz/block_mutator.c

# fuzz_NAME_replay: the target plus the corpus-replaying driver; it replays
# tests/fuzz/corpus/NAME when run without arguments.
$(BUILD)/tests/fuzz_%_replay: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DRIVER_OBJ) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $< $(call objs,$(FUZZ_SRCS_$*)) $(FUZZ_DRIVER_OBJ) $(TRACE_LDLIBS) \
	  $(FUZZ_LIBS_$*)
$(BUILD)/obj/tests/fuzz/fuzz_driver.o: CFLAGS_OUR += -DFUZZ_DEFAULT_CORPUS=\"tests/fuzz/corpus\"
$(foreach t,$(FUZZ_TARGETS),$(eval $(BUILD)/tests/fuzz_$(t)_replay: $(call objs,$(FUZZ_SRCS_$(t)))))
$(foreach t,$(FUZZ_TARGETS),$(eval $(BUILD)/obj/tests/fuzz/fuzz_$(t).o: CFLAGS_OUR += $(FUZZ_INC_$(t))))

UNIT_TESTS += $(patsubst %,$(BUILD)/tests/fuzz_%_replay,$(FUZZ_TARGETS))
DEP_FILES += $(patsubst %,$(BUILD)/obj/tests/fuzz/fuzz_%.d,$(FUZZ_TARGETS) driver)

# The fuzzer build: clang, its own object dir, instrumented library sources.
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -Itrace-format -Icommon -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(TRACE_SRCS) | $(DEPS_STAMP) $(TEST_DEPS_STAMP)
	@mkdir -p $(@D)
	$(Q)clang $(FUZZ_CFLAGS) $(FUZZ_INC_$*) -o $@ $< $(TRACE_SRCS) $(FUZZ_SRCS_$*) $(FUZZ_MUTATOR_$*) \
	  -lzstd $(FUZZ_LIBS_$*)
$(foreach t,$(FUZZ_TARGETS),$(eval $(FUZZ_BUILD)/fuzz_$(t): $(FUZZ_SRCS_$(t)) $(FUZZ_MUTATOR_$(t)) \
	$(wildcard $(dir $(FUZZ_SRCS_$(t)))*.h) tests/fuzz/fuzz_input.h))

# Each target fuzzes FUZZ_SECONDS; new inputs are merged into the corpus;
# a crash leaves build/fuzz/crash-* (copy it into the corpus as a regression).
.PHONY: fuzz
fuzz: $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_TARGETS))
	$(Q)for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/new-$$t && \
	  $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 \
	    -timeout=10 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ \
	    $(FUZZ_BUILD)/new-$$t tests/fuzz/corpus/$$t 2>&1 | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|crash-' ; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || exit 1; \
	  $(FUZZ_BUILD)/fuzz_$$t -merge=1 -use_counters=0 -artifact_prefix=$(FUZZ_BUILD)/ tests/fuzz/corpus/$$t $(FUZZ_BUILD)/new-$$t 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new' ; \
	done
