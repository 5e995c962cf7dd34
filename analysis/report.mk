# analysis/report.mk: allocreport (comparison tables, recommendations, HTML
# report with SVG charts, merging of results databases) from the results
# database allocreplay writes; included at the end of analysis/module.mk.
REPORT_SRCS := analysis/allocreport.c $(wildcard analysis/report_*.c)
REPORT_OBJS := $(call objs,$(REPORT_SRCS))

# `allocreport merge` runs replayer/merge.sql itself, compiled in as a C string.
REPORT_MERGE_SQL_C := $(BUILD)/gen/report_merge_sql.c
REPORT_MERGE_SQL_OBJ := $(BUILD)/obj/gen/report_merge_sql.o

$(REPORT_MERGE_SQL_C): replayer/merge.sql analysis/report.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  GEN     $@")
	$(Q){ echo '/* Generated from replayer/merge.sql by analysis/report.mk: do not edit. */'; \
	  echo '#include "report_model.h"'; echo 'const char ar_rep_merge_sql[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/^/\t"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@.tmp && mv $@.tmp $@

$(REPORT_MERGE_SQL_OBJ): $(REPORT_MERGE_SQL_C) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_OUR) -Ianalysis -MMD -MP -c $< -o $@

$(ALLOCREPORT): $(REPORT_OBJS) $(REPORT_MERGE_SQL_OBJ) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(REPORT_OBJS) $(REPORT_MERGE_SQL_OBJ) -lsqlite3 -lm $(COMMON_LIB) $(TRACE_LDLIBS)

ALL_TARGETS += $(ALLOCREPORT)
INSTALL_BINS += $(ALLOCREPORT)
MAN_NAME_allocreport := compare allocators from an allocrr results database; merge databases
DEP_FILES += $(REPORT_OBJS:.o=.d) $(REPORT_MERGE_SQL_OBJ:.o=.d)
