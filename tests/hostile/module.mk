# tests/hostile/: gen_hostile writes traces that are valid bytes but say
# absurd things (1 TiB mallocs, frees of unknown pointers, 100000 threads,
# undefined stack ids, ...); tests/e2e/hostile_traces.sh runs every tool on
# them. Built by `make` (like the replayer's test programs).
GEN_HOSTILE := $(BUILD)/tests/gen_hostile
GEN_HOSTILE_OBJS := $(call objs,tests/hostile/gen_hostile.c)

$(GEN_HOSTILE): $(GEN_HOSTILE_OBJS) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(GEN_HOSTILE_OBJS) $(TRACE_LDLIBS)

ALL_TARGETS += $(GEN_HOSTILE)
DEP_FILES += $(GEN_HOSTILE_OBJS:.o=.d)
