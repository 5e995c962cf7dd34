# tests/: unit tests (one C file per module, tests/unit/test_*.c, each its own
# binary that exits 0 on success) and end-to-end shell tests (tests/e2e/*.sh).
# Other folders may add their own unit tests to UNIT_TESTS the same way.
TEST_UNIT_SRCS := $(wildcard tests/unit/test_*.c)
TEST_UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_UNIT_SRCS))

$(BUILD)/obj/tests/unit/%.o: CFLAGS_OUR += -Itraces/gen -Itests/unit

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(TRACE_LIB) $(SYNTH_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(filter %.o,$^) $(SYNTH_LIB) $(TRACE_LDLIBS) -lpthread

# Tests of common/ and analysis/ modules link the module's objects too.
$(BUILD)/tests/test_common: $(call objs,common/cli.c common/cli_size.c common/cpu.c common/escape.c common/numfmt.c)
$(BUILD)/tests/test_escape: $(call objs,common/escape.c)
$(BUILD)/tests/test_gate: $(call objs,common/gate.c)
$(BUILD)/tests/test_livemap: $(call objs,analysis/livemap.c)
$(BUILD)/tests/test_heapstats: $(call objs,analysis/heapstats.c analysis/livemap.c)
$(BUILD)/obj/tests/unit/test_livemap.o $(BUILD)/obj/tests/unit/test_heapstats.o: CFLAGS_OUR += -Ianalysis
$(BUILD)/obj/tests/unit/test_rec_stamp.o: CFLAGS_OUR += -Irecorder
# which loaded objects are the recorder's memory (recorder/rec_ownlibs.c, libc only)
$(BUILD)/tests/test_rec_ownlibs: $(call objs,recorder/rec_ownlibs.c)
$(BUILD)/obj/tests/unit/test_rec_ownlibs.o: CFLAGS_OUR += -Irecorder

UNIT_TESTS += $(TEST_UNIT_BINS)
E2E_TESTS += $(sort $(wildcard tests/e2e/*.sh))
DEP_FILES += $(patsubst %.c,$(BUILD)/obj/%.d,$(TEST_UNIT_SRCS))

# The recommendation logic of allocreport (analysis/report_recommend.c) on
# hand-built comparisons: it links that object and the results module.
RECOMMEND_TEST := $(BUILD)/tests/test_recommend
$(BUILD)/obj/tests/unit/test_recommend.o: CFLAGS_OUR += -Ianalysis -Iresults
$(RECOMMEND_TEST): $(BUILD)/obj/tests/unit/test_recommend.o $(call objs,analysis/report_recommend.c) \
		$(RESULTS_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(filter %.o,$^) $(RESULTS_LDLIBS) $(COMMON_LIB) $(TRACE_LDLIBS)

# The flame-chart layout and the sites section of allocreport
# (analysis/report_flame.c) on hand-made folded stacks.
FLAME_TEST := $(BUILD)/tests/test_flame
$(BUILD)/obj/tests/unit/test_flame.o: CFLAGS_OUR += -Ianalysis -Iresults
$(FLAME_TEST): $(BUILD)/obj/tests/unit/test_flame.o $(call objs,analysis/report_flame.c analysis/report_svg.c) \
		$(RESULTS_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(filter %.o,$^) $(RESULTS_LDLIBS) $(COMMON_LIB) $(TRACE_LDLIBS)

# The sites model (analysis/sites.c) links the symboliser and its libraries.
SITES_TEST := $(BUILD)/tests/test_sites
$(BUILD)/obj/tests/unit/test_sites.o: CFLAGS_OUR += -Ianalysis
$(SITES_TEST): $(BUILD)/obj/tests/unit/test_sites.o $(call objs,analysis/sites.c) $(SYM_LIB) $(COMMON_LIB) \
		$(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(filter %.o,$^) $(SYM_LDLIBS) $(COMMON_LIB) $(TRACE_LDLIBS)

include tests/coverage.mk
