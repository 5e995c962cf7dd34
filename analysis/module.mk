# analysis/: alloctrace (info, dump, verify, ...) over any trace file.
ALLOCTRACE_SRCS := $(wildcard analysis/*.c)
ALLOCTRACE_OBJS := $(call objs,$(ALLOCTRACE_SRCS))
ALLOCTRACE := $(BUILD)/bin/alloctrace

$(ALLOCTRACE): $(ALLOCTRACE_OBJS) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(ALLOCTRACE_OBJS) $(TRACE_LDLIBS) -lcrypto

ALL_TARGETS += $(ALLOCTRACE)
INSTALL_BINS += $(ALLOCTRACE)
DEP_FILES += $(ALLOCTRACE_OBJS:.o=.d)
