# bench/fidelity/: make bench-fidelity — real third-party programs (sqlite3,
# python3 single- and multi-threaded, gcc, redis-server under
# redis-benchmark; clang++, jq, perl-grow, node and a redis window recorded
# with allocrec -p on request) run for real under every installed allocator and compared
# with allocreplay of their traces (issue 14 item 7; docs/FIDELITY.md).
#   FIDELITY_REPS=5 FIDELITY_PROGRAMS="sqlite python python-mt perl gcc redis"
# (more knobs at the top of bench/fidelity/run.sh). Raw data and the report
# stay in $(BUILD)/fidelity/.
FIDELITY_REPS ?= 5
FIDELITY_PROGRAMS ?= sqlite python python-mt perl gcc redis
# The programs under test, installed by the bench sets' stamp (which is also
# remade when this file changes).
BENCH_DEBS += sqlite3 python3 gcc redis-server redis-tools time clang perl jq nodejs
$(BENCH_DEPS_STAMP): bench/fidelity/module.mk

.PHONY: bench-fidelity
bench-fidelity: $(ALLOCREPLAY) $(REPLAY_WORKER) $(ALLOCREC) $(REC_SHIM) $(ALLOCREPORT) all
	$(Q)ALLOCRR_BUILD=$(BUILD) FIDELITY_REPS=$(FIDELITY_REPS) FIDELITY_PROGRAMS="$(FIDELITY_PROGRAMS)" \
	  bash bench/fidelity/run.sh

BENCHES += bench-fidelity
