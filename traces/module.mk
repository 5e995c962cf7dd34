# traces/: generators of synthetic traces (gen/) and checked-in sample traces.
SYNTH_SRCS := traces/gen/synth.c
SYNTH_OBJS := $(call objs,$(SYNTH_SRCS))

$(SYNTH_LIB): $(SYNTH_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(SYNTH_LIB)
DEP_FILES += $(SYNTH_OBJS:.o=.d)

# traces/programs/: small real programs with a known heap pattern, recorded
# by `make demo` and by tests (built with the flags of our code).
DEMO_SERVER_OBJS := $(call objs,traces/programs/demo_server.c)
$(DEMO_SERVER): $(DEMO_SERVER_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $^ -lpthread

ALL_TARGETS += $(DEMO_SERVER)
DEP_FILES += $(DEMO_SERVER_OBJS:.o=.d)

# traces/gen/: the scenario generators behind `alloctrace gen` (gen.h), with
# their simulated address space. alloctrace links the library (analysis/
# module.mk names it on its link line and as a prerequisite).
GEN_SRCS := traces/gen/addr_sim.c traces/gen/gen_core.c $(wildcard traces/gen/scen_*.c)
GEN_OBJS := $(call objs,$(GEN_SRCS))

$(GEN_LIB): $(GEN_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/analysis/cmd_gen.o: CFLAGS_OUR += -Itraces/gen

ALL_TARGETS += $(GEN_LIB)
DEP_FILES += $(GEN_OBJS:.o=.d)

# traces/programs/scen_*.c: each scenario family as a real program doing
# what its generator writes (same sizes, windows, lifetimes, threads), to be
# recorded with allocrec or run under LD_PRELOAD; $(BUILD)/traces/scen_NAME.
SCEN_PROG_SRCS := $(wildcard traces/programs/scen_*.c)
SCEN_PROGS := $(patsubst traces/programs/%.c,$(BUILD)/traces/%,$(SCEN_PROG_SRCS))

$(BUILD)/traces/scen_%: $(BUILD)/obj/traces/programs/scen_%.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $^ -lpthread

ALL_TARGETS += $(SCEN_PROGS)
DEP_FILES += $(patsubst %.c,$(BUILD)/obj/%.d,$(SCEN_PROG_SRCS))

# traces/corpus/: real-program traces and their MANIFEST. `make corpus`
# re-records them (record.sh says how) and verifies the manifest; tests only
# verify what is checked in (tests/e2e/traces_corpus.sh).
.PHONY: corpus
corpus: $(ALLOCTRACE) $(ALLOCREC) $(REC_SHIM)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash traces/corpus/record.sh

# tests/unit/test_gen.c exercises the generators: link their objects.
$(BUILD)/tests/test_gen: $(GEN_OBJS)

# `make scenarios`: every scenario trace and the corpus replayed under every
# installed allocator, and the write-ups' table printed from the results
# database (traces/scenarios.sh; docs/SCENARIOS.md holds a measured copy).
.PHONY: scenarios
scenarios: all
	$(Q)ALLOCRR_BUILD=$(BUILD) bash traces/scenarios.sh
