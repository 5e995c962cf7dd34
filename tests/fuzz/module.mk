# tests/fuzz/: libFuzzer targets. In `make test` each target is linked with
# fuzz_driver.c and replays its committed corpus (tests/fuzz/corpus/NAME);
# `make fuzz FUZZ_SECONDS=N` runs the real fuzzer (clang, ASan+UBSan) and
# adds what it finds to the corpus.
FUZZ_DRIVER_OBJ := $(call objs,tests/fuzz/fuzz_driver.c)
FUZZ_TARGETS := reader blocks

# fuzz_NAME_replay: the target plus the corpus-replaying driver; it replays
# tests/fuzz/corpus/NAME when run without arguments.
$(BUILD)/tests/fuzz_%_replay: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DRIVER_OBJ) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $< $(FUZZ_DRIVER_OBJ) $(TRACE_LDLIBS)
$(BUILD)/obj/tests/fuzz/fuzz_driver.o: CFLAGS_OUR += -DFUZZ_DEFAULT_CORPUS=\"tests/fuzz/corpus\"

UNIT_TESTS += $(patsubst %,$(BUILD)/tests/fuzz_%_replay,$(FUZZ_TARGETS))
DEP_FILES += $(patsubst %,$(BUILD)/obj/tests/fuzz/fuzz_%.d,$(FUZZ_TARGETS) driver)

# The fuzzer build: clang, its own object dir, instrumented library sources.
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -Itrace-format -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(TRACE_SRCS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $< $(TRACE_SRCS) -lzstd -lcrypto

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
	  $(FUZZ_BUILD)/fuzz_$$t -merge=1 tests/fuzz/corpus/$$t $(FUZZ_BUILD)/new-$$t 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new' ; \
	done
