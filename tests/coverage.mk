# tests/coverage.mk: `make coverage` — line coverage of every module under
# the unit and end-to-end tests (gcov + lcov); included by tests/module.mk.
#
# A sub-make builds everything and the unit tests with --coverage -O0
# (in CC and CXX, so every compile and link rule gets it) into
# its own directory ($(COVERAGE_BUILD), never build/), removes old .gcda
# counts, runs tests/run.sh against that build, then lcov captures the counts
# (every object directory: obj, obj-shim, obj-worker, obj-debug) and prints
# one line per top-level folder (lines found, hit, %), then all-incl-tests
# (the modules plus tests/ and bench/ code), and
# genhtml writes $(COVERAGE_BUILD)/coverage-html/index.html. Preloaded .so's
# (the recorder shim, our allocators) write their .gcda when the program
# they are loaded into exits. Not part of `make test`; docs/COVERAGE.md
# holds the last figures. COVERAGE_E2E=... narrows the end-to-end scripts.
COVERAGE_BUILD ?= build/coverage
# Scripts that cannot pass against an instrumented build, left out:
#   install            links users' programs without --coverage against the
#                      installed (instrumented) trace library: undefined __gcov_*
#   rec_errors, rec_real_programs, torture_rec_programs
#                      compare the trace's counts with a counting shim's, and
#                      the gcov runtime of each .so allocates at exit
#   torture_rec_fsfull RLIMIT_FSIZE 0: writing .gcda at exit raises SIGXFSZ
#   torture_replay_faults  malloc made to fail: the gcov runtime crashes at exit
COVERAGE_E2E_BROKEN := install rec_errors rec_real_programs torture_rec_programs torture_rec_fsfull \
	torture_replay_faults
COVERAGE_E2E ?= $(filter-out $(patsubst %,tests/e2e/%.sh,$(COVERAGE_E2E_BROKEN)),$(E2E_TESTS))
COVERAGE_MODULES := common trace-format results analysis allocators recorder replayer traces
COVERAGE_INFO := $(COVERAGE_BUILD)/coverage.info

.PHONY: coverage coverage-build coverage-run
coverage: | $(DEPS_STAMP) $(RUN_DEPS_STAMP) $(TEST_DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory BUILD=$(COVERAGE_BUILD) OPT=-O0 \
	  CC="$(CC) --coverage" CXX="$(CXX) --coverage" coverage-run

# Run inside the sub-make above ($(BUILD) is the coverage build there).
# test-build, not $(UNIT_TESTS): this file is read before the modules that
# add to UNIT_TESTS after it (tests/fuzz), and test-build names them all.
coverage-run: test-build
	$(Q)find $(BUILD) -name '*.gcda' -delete
	$(Q)ALLOCRR_BUILD=$(BUILD) tests/run.sh $(UNIT_TESTS) -- $(COVERAGE_E2E) || \
	  echo "coverage: some tests failed (see $(BUILD)/test-logs); figures cover what ran"
	$(Q)lcov --quiet --capture --directory $(BUILD) --base-directory . --no-external \
	  --output-file $(COVERAGE_INFO) 2>$(BUILD)/lcov.log
	$(Q)printf '%-14s %8s %8s %7s\n' module lines hit line%
	$(Q)for m in $(COVERAGE_MODULES); do \
	  lcov --quiet --extract $(COVERAGE_INFO) "$(CURDIR)/$$m/*" --output-file $(BUILD)/cov-$$m.info \
	    2>>$(BUILD)/lcov.log || continue; \
	  lcov --summary $(BUILD)/cov-$$m.info 2>&1 | sed -n 's/^ *lines\.*: *\([0-9.]*\)% (\([0-9]*\) of \([0-9]*\) lines)/\3 \2 \1/p' | \
	    { read found hit pct && printf '%-14s %8s %8s %6s%%\n' $$m $$found $$hit $$pct; }; \
	done
	$(Q)lcov --summary $(COVERAGE_INFO) 2>&1 | sed -n 's/^ *lines\.*: *\([0-9.]*\)% (\([0-9]*\) of \([0-9]*\) lines)/\3 \2 \1/p' | \
	  { read found hit pct && printf '%-14s %8s %8s %6s%%\n' all-incl-tests $$found $$hit $$pct; }
	$(Q)genhtml --quiet --output-directory $(BUILD)/coverage-html $(COVERAGE_INFO) >>$(BUILD)/lcov.log 2>&1 && \
	  echo "coverage: $(BUILD)/coverage-html/index.html"
