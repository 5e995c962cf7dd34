/*
 * allocrec_settings.h — the recording settings both launchers take,
 * allocrec PROG (allocrec.c) and allocrec -p PID (allocrec_attach.c), and
 * hand the shim in its environment: one parser, one set of defaults
 * (rec_defaults.h, which the shim falls back to).
 *
 *   --stacks[=N]    call stacks N frames deep (32 when N is not given)
 *   --level=N       zstd level, 1..19
 *   --time-every=N  clock readings of a lone, dense thread (rec_stamp.h)
 *   --time-unit=NS  the trace's time unit (ar_time_unit_ok)
 *   --duration=S    seconds: the recording's bound (allocrec PROG) or the
 *                   window's length (allocrec -p)
 */
#ifndef AR_ALLOCREC_SETTINGS_H
#define AR_ALLOCREC_SETTINGS_H

#include <getopt.h>

typedef struct allocrec_settings {
	int stacks;                     /* frames, 0 = no stacks */
	int level, time_every, time_unit;
	unsigned long long duration_ns; /* 0 = none */
} allocrec_settings_t;

/* The defaults: no stacks, level 3, REC_TIME_EVERY_DEFAULT,
 * REC_TIME_UNIT_DEFAULT_NS, no duration. */
allocrec_settings_t allocrec_settings_default(void);
/* 1 when no option changed s from the defaults. */
int allocrec_settings_are_default(const allocrec_settings_t *s);

/* getopt_long's codes for them; each command puts ALLOCREC_SETTINGS_OPTIONS
 * in its option table and hands every code it does not know to
 * allocrec_settings_option. */
enum { ALLOCREC_OPT_STACKS = 400, ALLOCREC_OPT_LEVEL, ALLOCREC_OPT_TIME_EVERY, ALLOCREC_OPT_TIME_UNIT,
       ALLOCREC_OPT_DURATION };
#define ALLOCREC_SETTINGS_OPTIONS                                                                       \
	{"stacks", optional_argument, NULL, ALLOCREC_OPT_STACKS},                                      \
	    {"level", required_argument, NULL, ALLOCREC_OPT_LEVEL},                                    \
	    {"time-every", required_argument, NULL, ALLOCREC_OPT_TIME_EVERY},                          \
	    {"time-unit", required_argument, NULL, ALLOCREC_OPT_TIME_UNIT},                            \
	    {"duration", required_argument, NULL, ALLOCREC_OPT_DURATION}

/* Option code c with its argument arg (NULL when none) into s: 0 when
 * parsed, -1 when c is not one of these, else the usage error's exit
 * status with the message printed. */
int allocrec_settings_option(int c, const char *arg, allocrec_settings_t *s);

#endif /* AR_ALLOCREC_SETTINGS_H */
