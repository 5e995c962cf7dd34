# recorder/: allocrec (the command), liballocrr-rec.so (the preload shim that
# records), plus the recorder's test programs and benchmark. (The symboliser,
# liballocrr-sym.a, is built by analysis/module.mk.)
#
# The shim is built apart from everything else: it is loaded into arbitrary
# programs, so it is never built with sanitizers (a preloaded ASan runtime
# cannot work), all its symbols except the interposed libc functions are
# hidden, and it carries its own hidden copy of the trace-format objects and
# of allocators/registry_probe.c (which object serves malloc is proven by the
# same code in the recorded program and in the replay worker).

REC_SHIM_SRCS := recorder/rec_hooks.c recorder/rec_lifecycle.c recorder/rec_config.c \
	recorder/rec_thread.c recorder/rec_writer.c recorder/rec_tracefile.c recorder/rec_mem.c \
	recorder/rec_stacks.c recorder/rec_signal.c recorder/rec_fds.c recorder/rec_clock.c recorder/rec_process.c recorder/rec_ownlibs.c recorder/rec_cost.c common/cpu.c \
	recorder/rec_window.c recorder/rec_control.c recorder/rec_ctl_dir.c \
	allocators/registry_probe.c
# Attach (allocrec -p PID): the injected shim's entry points and GOT rebinding.
REC_SHIM_SRCS += recorder/rec_attach.c recorder/rec_got.c
REC_SHIM_TRACE_SRCS := $(filter-out %/reader.c %/iter.c %/decode.c %/liveset.c,$(wildcard trace-format/*.c))
REC_SHIM_OBJS := $(patsubst %.c,$(BUILD)/obj-shim/%.o,$(REC_SHIM_SRCS) $(REC_SHIM_TRACE_SRCS))
REC_SHIM_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer,$(CFLAGS_OUR)) \
	-fvisibility=hidden -ftls-model=initial-exec -Irecorder -Iallocators
REC_SHIM_LDFLAGS := $(filter-out -fsanitize=%,$(LDFLAGS_OUR))
# libzstd.a and libunwind.a on Debian are not PIC: link the shared ones.
REC_SHIM_LIBS := -lzstd -lunwind -ldl -lpthread

$(BUILD)/obj-shim/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (shim)")
	$(Q)$(CC) $(REC_SHIM_CFLAGS) -MMD -MP -c $< -o $@

$(REC_SHIM): $(REC_SHIM_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(REC_SHIM_LDFLAGS) -shared -Wl,-z,now -Wl,--no-undefined -o $@ $(REC_SHIM_OBJS) $(REC_SHIM_LIBS)

# allocrec itself is an ordinary tool.
ALLOCREC_OBJS := $(call objs,recorder/allocrec.c recorder/allocrec_attach.c recorder/allocrec_gdb.c recorder/rec_ctl_dir.c \
	recorder/allocrec_stream.c recorder/allocrec_settings.c)
$(ALLOCREC): $(ALLOCREC_OBJS) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(ALLOCREC_OBJS) $(COMMON_LIB) $(TRACE_LDLIBS)

ALL_TARGETS += $(REC_SHIM) $(ALLOCREC)
INSTALL_BINS += $(ALLOCREC)
MAN_NAME_allocrec := run a program and record every heap call it makes into a trace
INSTALL_PLUGINS += $(REC_SHIM)
DEP_FILES += $(REC_SHIM_OBJS:.o=.d) $(ALLOCREC_OBJS:.o=.d)

include tests/progs/module.mk
include bench/rec/module.mk
