# allocrr — one non-recursive Makefile; each folder adds its part in module.mk.
#
#   make            build everything into build/ (tools in build/bin, .so in build/lib)
#   make test       build, run every test (plus unit tests under ASan+UBSan), print
#                   one line per test and end with "N passed, N failed"
#   make demo       record/replay/analyse a bundled sample and print the result
#   make bench      every benchmark (side by side, ratios)
#   make coverage   the tests on a --coverage build, line coverage per module (docs/COVERAGE.md)
#   make install [PREFIX=/usr/local] [DESTDIR=stage]    make uninstall    make man
#   make clean      V=1 (show commands)
#   SAN=address,undefined | thread     sanitizer build into build/san-<name>/
#
# Dependencies are Debian packages in sets (see "dependencies" below): each
# target installs the sets it needs with apt-get when root, or prints the
# command; plain `make` only what building needs.

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
	-Itrace-format -Icommon $(EXTRA_CFLAGS)
LDFLAGS_OUR := $(EXTRA_LDFLAGS)
ifneq ($(SAN),)
CFLAGS_OUR += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_OUR += -fsanitize=$(SAN)
endif

# ---- dependencies -----------------------------------------------------------
# Debian packages, in four sets, each installed by the targets that need it
# (apt-get as root; otherwise the exact command is printed and make stops).
# Each set is checked once per change of this Makefile (a stamp file).
#   BUILD_DEBS  what `make` needs to build the tools (compiler, libraries).
#   RUN_DEBS    what the tools need to do their job: the allocators replay
#               compares (jemalloc, tcmalloc, mimalloc), valgrind for
#               `--counters sim`, zstd and sqlite3 for users' own questions,
#               gdb for `allocrec -p PID` (it injects the recorder).
#               `make demo` and `make test` install them.
#   TEST_DEBS   what `make test`, `make fuzz` and `make install-check` need:
#               clang and its fuzzer runtime, a real browser (HTML report),
#               perl, python3-zstandard (the spec's second reader), xz and
#               GNU time (programs the tests run), help2man and man-db (man
#               pages), lcov (make coverage), strace (a tracer attach must
#               refuse to share with), redis-server and redis-tools (a real
#               jemalloc-linked server: its allocator is identified, and
#               `make bench-attach` records it under redis-benchmark).
#   BENCH_DEBS  what `make bench*` adds (hyperfine).
BUILD_DEBS := build-essential pkg-config libzstd-dev libunwind-dev libdw-dev libsqlite3-dev libssl-dev
RUN_DEBS := libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 valgrind zstd sqlite3 gdb
TEST_DEBS := clang libclang-rt-14-dev python3-zstandard chromium perl xz-utils time help2man man-db lcov strace redis-server redis-tools parallel
BENCH_DEBS := hyperfine
DEPS_STAMP := build/.deps-ok
RUN_DEPS_STAMP := build/.run-deps-ok
TEST_DEPS_STAMP := build/.test-deps-ok
BENCH_DEPS_STAMP := build/.bench-deps-ok

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

.PHONY: deps run-deps test-deps bench-deps
deps: $(DEPS_STAMP)
run-deps: $(RUN_DEPS_STAMP)
test-deps: $(TEST_DEPS_STAMP)
bench-deps: $(BENCH_DEPS_STAMP)
$(DEPS_STAMP): Makefile
	$(call install_debs,$(BUILD_DEBS))
$(RUN_DEPS_STAMP): Makefile
	$(call install_debs,$(RUN_DEBS))
$(TEST_DEPS_STAMP): Makefile
	$(call install_debs,$(TEST_DEBS))
$(BENCH_DEPS_STAMP): Makefile
	$(call install_debs,$(BENCH_DEBS))

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
INSTALL_BINS :=     # user commands: $(bindir), each with a man page made from its --help
INSTALL_LIBEXEC :=  # programs the commands start: $(libexecdir)/allocrr
INSTALL_PLUGINS :=  # preloadable .so (the recorder shim, our allocators): $(libdir)/allocrr
INSTALL_DEVLIBS :=  # libraries for users' own programs: $(libdir), with a pkg-config file
INSTALL_HEADERS :=  # their manuals: $(includedir)/allocrr
DEP_FILES :=

# ---- names every module may use -------------------------------------------------
# A module's rule names another module's artifact as a prerequisite, and make
# expands a prerequisite list when it reads the rule: a variable defined in a
# module read later would be empty there (and only a lucky parallel build
# would notice nothing). So every artifact that crosses a module boundary is
# named here, before any module is read; modules define only their own
# internals. tests/e2e/build_order.sh reads the modules in reverse order and
# checks make's rule database is the same.
ALLOCRR_VERSION := 1.0.0
COMMON_LIB := $(BUILD)/lib/liballocrr-common.a
TRACE_LIB := $(BUILD)/lib/liballocrr-trace.a
TRACE_LDLIBS := $(TRACE_LIB) -lzstd              # link line for users of the trace library
TRACE_ID_LDLIBS := -lcrypto                       # ... of ar_trace_id.h (in COMMON_LIB), after it
SYM_LIB := $(BUILD)/lib/liballocrr-sym.a
SYM_LDLIBS := $(SYM_LIB) -ldw -lelf -lstdc++      # ... of the symboliser (analysis/)
ALLOC_REG_LIB := $(BUILD)/lib/liballocrr-registry.a
GEN_LIB := $(BUILD)/lib/liballocrr-gen.a          # scenario generators (traces/gen)
SYNTH_LIB := $(BUILD)/lib/liballocrr-synth.a      # synthetic streams (traces/gen/synth.c)
RESULTS_LIB := $(BUILD)/lib/liballocrr-results.a   # the results database and its comparison (results/)
RESULTS_LDLIBS := $(RESULTS_LIB) -lsqlite3 -lm      # link line for its users
REPLAY_WL_SRCS := replayer/wl_file.c replayer/wl_codec.c replayer/wl_compile.c replayer/wl_decode.c
REPLAY_WL_LDLIBS := -lcrypto                      # ... of the workload compiler (its content digest)
REC_SHIM := $(BUILD)/lib/liballocrr-rec.so
ALLOCREC := $(BUILD)/bin/allocrec
ALLOCTRACE := $(BUILD)/bin/alloctrace
ALLOCREPLAY := $(BUILD)/bin/allocreplay
REPLAY_WORKER := $(BUILD)/bin/allocreplay-worker
ALLOCREPORT := $(BUILD)/bin/allocreport
DEMO_SERVER := $(BUILD)/traces/demo_server
BENCH_FORMAT := $(BUILD)/bin/bench_format
BENCH_REC := $(BUILD)/bin/bench_rec_workload
BENCH_STAMP_SIM := $(BUILD)/bin/bench_stamp_sim
BENCH_PTR_CODES := $(BUILD)/bin/bench_ptr_codes
REC_TRACECHECK := $(BUILD)/tests/progs/rec_tracecheck

# Each module adds its part; the order does not matter (see above).
MODULES ?= common trace-format results analysis allocators recorder replayer traces tests tests/hostile \
	tests/fuzz bench
include $(addsuffix /module.mk,$(MODULES))

.PHONY: all
all: $(ALL_TARGETS)

# ---- test -----------------------------------------------------------------------
# The ASan+UBSan build of the unit tests runs in a sub-make so its objects
# live apart ($(BUILD)/san-address-undefined) from the normal ones; the
# sub-make is given its own BUILD, since a BUILD from the command line
# would otherwise reach it too and mix the two builds' objects.
.PHONY: test test-build test-san-build test-tsan-build
test-build: all $(UNIT_TESTS)
test-san-build: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SAN=address,undefined BUILD=$(BUILD)/san-address-undefined unit-tests
test-tsan-build: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SAN=thread BUILD=$(BUILD)/san-thread tsan-tests

.PHONY: unit-tests tsan-tests
unit-tests: $(UNIT_TESTS)
tsan-tests: $(TSAN_TESTS)

test: test-build test-san-build test-tsan-build $(RUN_DEPS_STAMP) $(TEST_DEPS_STAMP)
	$(Q)ALLOCRR_BUILD=$(BUILD) ALLOCRR_SAN_BUILD=$(BUILD)/san-address-undefined \
	  ALLOCRR_TSAN_BUILD=$(BUILD)/san-thread ALLOCRR_TSAN_TESTS="$(notdir $(TSAN_TESTS))" \
	  tests/run.sh $(UNIT_TESTS) -- $(E2E_TESTS)

# The torture and fault-injection scripts (tests/e2e/torture_*.sh) run in
# `make test` at scale 1 (seconds each); `make torture TORTURE_SCALE=N` runs
# only them with N times the iterations and prints each script's "tally"
# lines, the counts docs/RELIABILITY.md reports.
TORTURE_SCALE ?= 20
.PHONY: torture
torture: test-build $(RUN_DEPS_STAMP) $(TEST_DEPS_STAMP)
	$(Q)ALLOCRR_BUILD=$(BUILD) ALLOCRR_TORTURE_SCALE=$(TORTURE_SCALE) \
	  tests/run.sh -- $(filter tests/e2e/torture_%,$(E2E_TESTS)); rc=$$?; \
	  grep -h '^tally ' $(BUILD)/test-logs/e2e_torture_*.log; exit $$rc

# Optional, root only: a private single-node Slurm (Debian's slurmctld, slurmd,
# slurm-client; auth/none, its own slurm.conf in a temp dir) runs the job
# array of allocreplay --plan --plan-format slurm for real (docs/DISTRIBUTED.md).
# Skips (77) without root or the packages; not part of `make test`.
.PHONY: test-slurm
test-slurm: test-build $(RUN_DEPS_STAMP)
	$(Q)ALLOCRR_BUILD=$(BUILD) tests/run.sh -- tests/slurm/replay_slurm.sh

# ---- demo, bench, install, clean ------------------------------------------------------
.PHONY: demo
demo: all $(RUN_DEPS_STAMP)
	$(Q)ALLOCRR_BUILD=$(BUILD) ./tests/demo.sh

.PHONY: bench
bench: $(BENCHES)
$(BENCHES): | $(RUN_DEPS_STAMP) $(BENCH_DEPS_STAMP)

# GNU directory variables, DESTDIR staging. The tools find their worker and
# libraries relative to their own path (bin/../libexec/allocrr,
# bin/../lib/allocrr), so an installed tree can be moved as a whole.
bindir ?= $(PREFIX)/bin
libdir ?= $(PREFIX)/lib
libexecdir ?= $(PREFIX)/libexec
includedir ?= $(PREFIX)/include
mandir ?= $(PREFIX)/share/man
PC_FILE := $(BUILD)/pkgconfig/allocrr-trace.pc
MAN_PAGES := $(patsubst $(BUILD)/bin/%,$(BUILD)/man/%.1,$(INSTALL_BINS))
DOC_DEBS := help2man
DOC_DEPS_STAMP := build/.doc-deps-ok
$(DOC_DEPS_STAMP): Makefile
	$(call install_debs,$(DOC_DEBS))

# The trace library is static: its Libs line names what it links against,
# so `pkg-config --libs allocrr-trace` is the whole link line.
$(PC_FILE): FORCE # PREFIX may differ from the last install
	@mkdir -p $(@D)
	$(Q)printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(libdir)' 'includedir=$(includedir)' '' \
	  'Name: allocrr-trace' 'Description: read and write allocrr heap traces (ar_trace.h)' \
	  'Version: $(ALLOCRR_VERSION)' 'Cflags: -I$${includedir}/allocrr' \
	  'Libs: -L$${libdir} -lallocrr-trace -lzstd' >$@

# Man pages from each tool's --help and --version; the module that installs
# a tool names it in one line (MAN_NAME_tool).
$(BUILD)/man/%.1: $(BUILD)/bin/% | $(DOC_DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  MAN     $@")
	$(Q)help2man --no-info --no-discard-stderr --section=1 --source=allocrr \
	  --name="$(MAN_NAME_$*)" --output=$@ $<

.PHONY: man install uninstall FORCE
FORCE:
man: $(MAN_PAGES)
install: all $(PC_FILE) $(MAN_PAGES)
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libexecdir)/allocrr $(DESTDIR)$(libdir)/allocrr \
	  $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(includedir)/allocrr $(DESTDIR)$(mandir)/man1
	install -m 755 $(INSTALL_BINS) $(DESTDIR)$(bindir)
	install -m 755 $(INSTALL_LIBEXEC) $(DESTDIR)$(libexecdir)/allocrr
	install -m 644 $(INSTALL_PLUGINS) $(DESTDIR)$(libdir)/allocrr
	install -m 644 $(INSTALL_DEVLIBS) $(DESTDIR)$(libdir)
	install -m 644 $(PC_FILE) $(DESTDIR)$(libdir)/pkgconfig
	install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(includedir)/allocrr
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(mandir)/man1

# Removes exactly what install wrote, then the allocrr directories if empty.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(notdir $(INSTALL_BINS))) \
	  $(addprefix $(DESTDIR)$(libexecdir)/allocrr/,$(notdir $(INSTALL_LIBEXEC))) \
	  $(addprefix $(DESTDIR)$(libdir)/allocrr/,$(notdir $(INSTALL_PLUGINS))) \
	  $(addprefix $(DESTDIR)$(libdir)/,$(notdir $(INSTALL_DEVLIBS))) \
	  $(DESTDIR)$(libdir)/pkgconfig/$(notdir $(PC_FILE)) \
	  $(addprefix $(DESTDIR)$(includedir)/allocrr/,$(notdir $(INSTALL_HEADERS))) \
	  $(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(MAN_PAGES)))
	-rmdir $(DESTDIR)$(libexecdir)/allocrr $(DESTDIR)$(libdir)/allocrr $(DESTDIR)$(includedir)/allocrr 2>/dev/null

.PHONY: clean
clean:
	rm -rf build

-include $(DEP_FILES)
