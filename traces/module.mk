# traces/: generators of synthetic traces (gen/) and checked-in sample traces.
SYNTH_SRCS := traces/gen/synth.c
SYNTH_OBJS := $(call objs,$(SYNTH_SRCS))
SYNTH_LIB := $(BUILD)/lib/liballocrr-synth.a

$(SYNTH_LIB): $(SYNTH_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(SYNTH_LIB)
DEP_FILES += $(SYNTH_OBJS:.o=.d)

# traces/programs/: small real programs with a known heap pattern, recorded
# by `make demo` and by tests (built with the flags of our code).
DEMO_SERVER := $(BUILD)/traces/demo_server
DEMO_SERVER_OBJS := $(call objs,traces/programs/demo_server.c)
$(DEMO_SERVER): $(DEMO_SERVER_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $^ -lpthread

ALL_TARGETS += $(DEMO_SERVER)
DEP_FILES += $(DEMO_SERVER_OBJS:.o=.d)
