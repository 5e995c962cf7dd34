# traces/: generators of synthetic traces (gen/) and checked-in sample traces.
SYNTH_SRCS := traces/gen/synth.c
SYNTH_OBJS := $(call objs,$(SYNTH_SRCS))
SYNTH_LIB := $(BUILD)/lib/liballocrr-synth.a

$(SYNTH_LIB): $(SYNTH_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(SYNTH_LIB)
DEP_FILES += $(SYNTH_OBJS:.o=.d)
