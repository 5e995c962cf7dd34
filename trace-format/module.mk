# trace-format/: the static library every tool and the recorder shim link.
TRACE_SRCS := $(wildcard trace-format/*.c)
TRACE_OBJS := $(call objs,$(TRACE_SRCS))
TRACE_LIB := $(BUILD)/lib/liballocrr-trace.a
# Link line for anything that uses the library.
TRACE_LDLIBS := $(TRACE_LIB) -lzstd -lcrypto

$(TRACE_LIB): $(TRACE_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(TRACE_LIB)
INSTALL_LIBS += $(TRACE_LIB)
DEP_FILES += $(TRACE_OBJS:.o=.d)
