# analysis/: alloctrace (info, dump, verify, stacks) over any trace file, and
# the symboliser (libdw behind ar_symbolize.h) that alloctrace and tests use.
SYM_OBJS := $(call objs,analysis/symbolize.c)

$(SYM_LIB): $(SYM_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# alloctrace: every analysis/*.c but the symboliser and allocreport (report.mk)
ALLOCTRACE_SRCS := $(filter-out analysis/symbolize.c analysis/allocreport.c analysis/report_%.c,$(wildcard analysis/*.c))
ALLOCTRACE_OBJS := $(call objs,$(ALLOCTRACE_SRCS))

# stacks --db writes the sites table through the results module
$(call objs,analysis/cmd_stacks_db.c): CFLAGS_OUR += -Iresults

$(ALLOCTRACE): $(ALLOCTRACE_OBJS) $(GEN_LIB) $(SYM_LIB) $(RESULTS_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(ALLOCTRACE_OBJS) $(GEN_LIB) $(SYM_LDLIBS) $(RESULTS_LDLIBS) $(COMMON_LIB) $(TRACE_ID_LDLIBS) $(TRACE_LDLIBS)

ALL_TARGETS += $(ALLOCTRACE) $(SYM_LIB)
INSTALL_BINS += $(ALLOCTRACE)
MAN_NAME_alloctrace := read, check, analyse and generate allocrr heap traces
DEP_FILES += $(ALLOCTRACE_OBJS:.o=.d) $(SYM_OBJS:.o=.d)
include analysis/report.mk
