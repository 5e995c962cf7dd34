# analysis/report.mk: allocreport (comparison tables, recommendations, HTML
# report with SVG charts, merging of results databases) from the results
# database allocreplay writes; included at the end of analysis/module.mk.
# Everything about the database itself (opening, the comparison, the merge
# SQL) comes from the results module (results/ar_results.h).
REPORT_SRCS := analysis/allocreport.c $(wildcard analysis/report_*.c)
REPORT_OBJS := $(call objs,$(REPORT_SRCS))
$(REPORT_OBJS): CFLAGS_OUR += -Iresults

$(ALLOCREPORT): $(REPORT_OBJS) $(RESULTS_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(REPORT_OBJS) $(RESULTS_LDLIBS) $(COMMON_LIB) $(TRACE_LDLIBS)

ALL_TARGETS += $(ALLOCREPORT)
INSTALL_BINS += $(ALLOCREPORT)
MAN_NAME_allocreport := compare allocators from an allocrr results database; merge databases
DEP_FILES += $(REPORT_OBJS:.o=.d)
