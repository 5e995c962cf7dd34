# trace-format/: the static library every tool and the recorder shim link.
TRACE_SRCS := $(wildcard trace-format/*.c)
TRACE_OBJS := $(call objs,$(TRACE_SRCS))

$(TRACE_LIB): $(TRACE_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(TRACE_LIB)
INSTALL_DEVLIBS += $(TRACE_LIB)
INSTALL_HEADERS += trace-format/ar_trace.h
DEP_FILES += $(TRACE_OBJS:.o=.d)
