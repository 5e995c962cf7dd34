# allocrr — one non-recursive Makefile; each folder adds its part in module.mk.
#
#   make            build everything into build/ (tools in build/bin, .so in build/lib)
#   make test       build, run every test (plus unit tests under ASan+UBSan), print
#                   one line per test and end with "N passed, N failed"
#   make demo       record/replay/analyse a bundled sample and print the result
#   make bench      every benchmark (side by side, ratios)
#   make install PREFIX=/usr/local     make clean     V=1 (show commands)
#   SAN=address,undefined | thread     sanitizer build into build/san-<name>/
#
# Dependencies are Debian packages; `make deps` (run by make and make test)
# installs the missing ones with apt-get when root, or prints the command.

.DEFAULT_GOAL := all
SHELL := /bin/bash
comma := ,

V ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif

SAN ?=
ifeq ($(SAN),)
BUILD ?= build
else
BUILD ?= build/san-$(subst $(comma),-,$(SAN))
endif
PREFIX ?= /usr/local

CC ?= cc
OPT ?= -O2
# Our code: strict C11, every warning an error; GNU extensions come from the
# feature macro only (pthread, mmap flags, dladdr).
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS_OUR := -std=c11 $(WARN) $(OPT) -g -fPIC -D_GNU_SOURCE -fno-strict-aliasing \
	-Itrace-format $(EXTRA_CFLAGS)
LDFLAGS_OUR := $(EXTRA_LDFLAGS)
ifneq ($(SAN),)
CFLAGS_OUR += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_OUR += -fsanitize=$(SAN)
endif

# ---- dependencies -----------------------------------------------------------
# Building needs DEB_PACKAGES; `make test` also needs TEST_DEB_PACKAGES (a
# real browser for the HTML report test, the perl and sqlite3 programs the
# recorder and allocator tests run, GNU time for allocreplay's peak RSS under
# a flooding allocator). Each set is checked once per change of
# this Makefile (a stamp file).
DEB_PACKAGES := build-essential pkg-config libzstd-dev zstd libunwind-dev libdw-dev \
	libsqlite3-dev sqlite3 libssl-dev libjemalloc-dev libjemalloc2 \
	libgoogle-perftools-dev libmimalloc-dev clang libclang-rt-14-dev \
	python3-zstandard hyperfine
TEST_DEB_PACKAGES := chromium perl xz-utils time
DEPS_STAMP := build/.deps-ok
TEST_DEPS_STAMP := build/.test-deps-ok

# install_debs PACKAGES: apt-get install the missing ones when root, else
# print the exact command and fail.
define install_debs
	$(Q)missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null || \
	      { echo "deps: apt-get install failed for:$$missing" >&2; exit 1; }; \
	  else \
	    echo "allocrr needs these Debian packages:$$missing" >&2; \
	    echo "install them with:  sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi; mkdir -p build && touch $@
endef

.PHONY: deps test-deps
deps: $(DEPS_STAMP)
test-deps: $(TEST_DEPS_STAMP)
$(DEPS_STAMP): Makefile
	$(call install_debs,$(DEB_PACKAGES))
$(TEST_DEPS_STAMP): Makefile
	$(call install_debs,$(TEST_DEB_PACKAGES))

# ---- generic rules ------------------------------------------------------------
# Keep intermediate objects: no rebuilds, and no "rm" after make test's summary.
.SECONDARY:

# objs: source list -> object list under $(BUILD)/obj
objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_OUR) -MMD -MP -c $< -o $@

ALL_TARGETS :=
UNIT_TESTS :=      # C test binaries, each runs alone and exits 0 on success
TSAN_TESTS :=      # those of them with threads worth running under ThreadSanitizer too
E2E_TESTS :=       # shell scripts in tests/, run with the build dir in ALLOCRR_BUILD
BENCHES :=         # phony bench targets
INSTALL_BINS :=
INSTALL_LIBS :=
DEP_FILES :=

# Order matters where a module names another's targets as prerequisites
# (expanded when read): libraries before the tools that link them.
include trace-format/module.mk
include analysis/module.mk
include allocators/module.mk
include recorder/module.mk
include replayer/module.mk
include traces/module.mk
include tests/module.mk
include tests/hostile/module.mk
include tests/fuzz/module.mk
include bench/module.mk

.PHONY: all
all: $(ALL_TARGETS)

# ---- test -----------------------------------------------------------------------
# The ASan+UBSan build of the unit tests runs in a sub-make so its objects
# live apart (build/san-address-undefined) from the normal ones.
.PHONY: test test-build test-san-build test-tsan-build
test-build: all $(UNIT_TESTS)
test-san-build: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SAN=address,undefined unit-tests
test-tsan-build: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SAN=thread tsan-tests

.PHONY: unit-tests tsan-tests
unit-tests: $(UNIT_TESTS)
tsan-tests: $(TSAN_TESTS)

test: test-build test-san-build test-tsan-build $(TEST_DEPS_STAMP)
	$(Q)ALLOCRR_BUILD=$(BUILD) ALLOCRR_SAN_BUILD=build/san-address-undefined \
	  ALLOCRR_TSAN_BUILD=build/san-thread ALLOCRR_TSAN_TESTS="$(notdir $(TSAN_TESTS))" \
	  tests/run.sh $(UNIT_TESTS) -- $(E2E_TESTS)

# The torture and fault-injection scripts (tests/e2e/torture_*.sh) run in
# `make test` at scale 1 (seconds each); `make torture TORTURE_SCALE=N` runs
# only them with N times the iterations and prints each script's "tally"
# lines, the counts docs/RELIABILITY.md reports.
TORTURE_SCALE ?= 20
.PHONY: torture
torture: test-build $(TEST_DEPS_STAMP)
	$(Q)ALLOCRR_BUILD=$(BUILD) ALLOCRR_TORTURE_SCALE=$(TORTURE_SCALE) \
	  tests/run.sh -- $(filter tests/e2e/torture_%,$(E2E_TESTS)); rc=$$?; \
	  grep -h '^tally ' $(BUILD)/test-logs/e2e_torture_*.log; exit $$rc

# ---- demo, bench, install, clean ------------------------------------------------------
.PHONY: demo
demo: all
	$(Q)ALLOCRR_BUILD=$(BUILD) ./tests/demo.sh

.PHONY: bench
bench: $(BENCHES)

.PHONY: install
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/allocrr $(DESTDIR)$(PREFIX)/include/allocrr
	$(if $(INSTALL_BINS),install -m 755 $(INSTALL_BINS) $(DESTDIR)$(PREFIX)/bin)
	$(if $(INSTALL_LIBS),install -m 644 $(INSTALL_LIBS) $(DESTDIR)$(PREFIX)/lib/allocrr)
	install -m 644 trace-format/ar_trace.h allocators/ar_alloc.h $(DESTDIR)$(PREFIX)/include/allocrr

.PHONY: clean
clean:
	rm -rf build

-include $(DEP_FILES)
