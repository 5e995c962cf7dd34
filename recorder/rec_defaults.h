/*
 * rec_defaults.h — the recording settings whose defaults and bounds the
 * launcher (allocrec, allocrec -p) and the shim (rec_config.c) must agree
 * on: the launcher passes what it was given in the environment, the shim
 * falls back to the same default for a value it cannot use.
 */
#ifndef AR_REC_DEFAULTS_H
#define AR_REC_DEFAULTS_H

/* --time-every (rec_stamp.h): clock readings of a lone, dense thread. */
#define REC_TIME_EVERY_DEFAULT 8
#define REC_TIME_EVERY_MAX 1024

/* --time-unit: the trace's time unit (SPEC 3.1, 5.3; ar_time_unit_ok). 64
 * ns: a dense thread reads the clock once per REC_TIME_EVERY_DEFAULT calls,
 * so its times do not resolve 64 ns anyway, and coarser units began to lose
 * the short pauses the replay's schedule tells hand-offs by (256 ns: 241 of
 * demo_server's 335; docs/BENCHMARKS.md). */
#define REC_TIME_UNIT_DEFAULT_NS 64

#endif
