# results/: the results database's one owner (ar_results.h): its schema as
# forward migrations (results/sql/NNNN-*.sql, migration N takes PRAGMA
# user_version from N-1 to N) and the merge SQL (results/sql/merge.sql),
# both embedded at build time; open/migrate/version check (db.c); the
# comparison every output shares (compare.c), read from a database
# (load.c, read-only) and printed (render.c, format.c). Built as a static
# library allocreplay and allocreport link; docs/RESULTS.md documents it.
RESULTS_SRCS := $(wildcard results/*.c)
RESULTS_MIGRATIONS := $(sort $(wildcard results/sql/[0-9][0-9][0-9][0-9]-*.sql))
RESULTS_SQL_C := $(BUILD)/gen/results_sql.c
RESULTS_OBJS := $(call objs,$(RESULTS_SRCS)) $(BUILD)/obj/gen/results_sql.o
$(RESULTS_OBJS): CFLAGS_OUR += -Iresults

# sql_string FILE: FILE as the lines of a C string literal.
define results_sql_string
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/^/\t"/' -e 's/$$/\\n"/' $(1)
endef

$(RESULTS_SQL_C): $(RESULTS_MIGRATIONS) results/sql/merge.sql results/module.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  GEN     $@")
	$(Q){ echo '/* Generated from results/sql/ by results/module.mk: do not edit. */'; \
	  echo '#include "ar_results.h"'; \
	  echo 'const char *const ar_res_migrations[] = {'; \
	  for f in $(RESULTS_MIGRATIONS); do echo "/* $$f */"; $(call results_sql_string,$$f); echo ','; done; \
	  echo 'NULL };'; \
	  echo 'const char ar_res_merge_sql[] ='; $(call results_sql_string,results/sql/merge.sql); echo ';'; \
	} > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/results_sql.o: $(RESULTS_SQL_C) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_OUR) -MMD -MP -c $< -o $@

$(RESULTS_LIB): $(RESULTS_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(RESULTS_LIB)
DEP_FILES += $(RESULTS_OBJS:.o=.d)

# ---- unit test (also run under ASan+UBSan) --------------------------------------
RESULTS_TEST := $(BUILD)/tests/test_results
RESULTS_TEST_OBJ := $(call objs,results/tests/test_results.c)
$(RESULTS_TEST_OBJ): CFLAGS_OUR += -Iresults -Itests/unit

$(RESULTS_TEST): $(RESULTS_TEST_OBJ) $(RESULTS_LIB) $(COMMON_LIB) $(TRACE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $(RESULTS_TEST_OBJ) $(RESULTS_LDLIBS) $(COMMON_LIB) $(TRACE_LDLIBS)

UNIT_TESTS += $(RESULTS_TEST)
DEP_FILES += $(RESULTS_TEST_OBJ:.o=.d)
