# tests/progs/: programs with known heap behaviour for the recorder's
# end-to-end tests (tests/e2e/rec_*.sh), a trace checker built on the
# ar_reader API, and an independent call-counting preload shim. Included from
# recorder/module.mk. Built without sanitizers (they run under the shim) and
# with -fno-builtin so the compiler cannot elide a malloc/free pair.
REC_PROGS_DIR := $(BUILD)/tests/progs
REC_PROG_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wno-alloc-size-larger-than -Wno-use-after-free -O1 -g -fno-builtin -D_GNU_SOURCE -Itrace-format -Ianalysis
REC_PROG_NAMES := rec_seq rec_aligned rec_realloc rec_threads rec_fork rec_dlopen rec_signal rec_exit rec_daemon rec_paced rec_server rec_phases rec_diffleak rec_sites
REC_PROGS := $(addprefix $(REC_PROGS_DIR)/,$(REC_PROG_NAMES))
REC_CXX := $(REC_PROGS_DIR)/rec_cxx
REC_DLLIB := $(REC_PROGS_DIR)/librec_dllib.so
REC_COUNT := $(REC_PROGS_DIR)/librec_count.so
# The recorder torture programs (tests/e2e/torture_rec_*.sh) and their checker.
TORTURE_PROG_NAMES := torture_threads torture_fork torture_exit torture_kill torture_dl
TORTURE_PROGS := $(addprefix $(REC_PROGS_DIR)/,$(TORTURE_PROG_NAMES))
TORTURE_CHECK := $(REC_PROGS_DIR)/torture_check

$(REC_PROGS_DIR)/rec_%: tests/progs/rec_%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -o $@ $< -lpthread -ldl

# A statically linked build of it: a program the recorder cannot enter.
REC_STATIC := $(REC_PROGS_DIR)/rec_daemon_static
$(REC_STATIC): tests/progs/rec_daemon.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -static -o $@ $<
# A running program allocrec -p must refuse (tests/e2e/rec_attach.sh).
REC_SERVER_STATIC := $(REC_PROGS_DIR)/rec_server_static
$(REC_SERVER_STATIC): tests/progs/rec_server.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -static -o $@ $< -lpthread
# Without PIE, and taking &malloc and &free: their canonical addresses
# are its own PLT stubs (as in Debian's python3).
REC_SERVER_NOPIE := $(REC_PROGS_DIR)/rec_server_nopie
$(REC_SERVER_NOPIE): tests/progs/rec_server.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -fno-pie -no-pie -o $@ $< -lpthread -ldl

$(TORTURE_PROGS): $(REC_PROGS_DIR)/torture_%: tests/progs/torture_%.c tests/progs/torture.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -o $@ $< -lpthread -ldl -lrt

$(TORTURE_CHECK): tests/progs/torture_check.c tests/progs/torture.h tests/progs/rec_open.h $(TRACE_LIB) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -O2 -o $@ $< $(TRACE_LDLIBS)

$(REC_CXX): tests/progs/rec_cxx.cc | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $@")
	$(Q)g++ -std=c++17 -Wall -Wextra -Werror -O0 -g -o $@ $<

$(REC_DLLIB): tests/progs/rec_dllib.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -fPIC -shared -o $@ $<

$(REC_COUNT): tests/progs/rec_countshim.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -O2 -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

$(REC_TRACECHECK): tests/progs/rec_tracecheck.c tests/progs/rec_open.h $(TRACE_LIB) $(SYM_LIB) $(COMMON_LIB) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(REC_PROG_CFLAGS) -o $@ $< $(SYM_LDLIBS) $(COMMON_LIB) $(TRACE_LDLIBS)

ALL_TARGETS += $(REC_PROGS) $(REC_STATIC) $(REC_SERVER_STATIC) $(REC_SERVER_NOPIE) $(REC_CXX) $(REC_DLLIB) $(REC_COUNT) $(REC_TRACECHECK) $(TORTURE_PROGS) $(TORTURE_CHECK)
