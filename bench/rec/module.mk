# bench/rec/: the recorder benchmark (make bench-rec), included from
# recorder/module.mk. Figures and method: docs/RECORDER.md.
$(BENCH_REC): bench/rec/workload.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -fno-builtin -o $@ $< -lpthread

.PHONY: bench-rec
bench-rec: $(BENCH_REC) $(ALLOCREC) $(REC_SHIM) $(REC_TRACECHECK)
	$(Q)ALLOCRR_BUILD=$(BUILD) bash bench/rec/run.sh

ALL_TARGETS += $(BENCH_REC)
BENCHES += bench-rec
