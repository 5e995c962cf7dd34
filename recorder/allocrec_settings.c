/*
 * allocrec_settings.c — the recording settings both launchers take
 * (allocrec_settings.h).
 */
#include "allocrec_settings.h"

#include "ar_cli.h"
#include "ar_trace.h"
#include "rec_defaults.h"

allocrec_settings_t allocrec_settings_default(void)
{
	return (allocrec_settings_t){.level = 3, .time_every = REC_TIME_EVERY_DEFAULT,
				     .time_unit = REC_TIME_UNIT_DEFAULT_NS};
}

int allocrec_settings_are_default(const allocrec_settings_t *s)
{
	allocrec_settings_t d = allocrec_settings_default();
	return s->stacks == d.stacks && s->level == d.level && s->time_every == d.time_every &&
	       s->time_unit == d.time_unit && s->duration_ns == d.duration_ns;
}

int allocrec_settings_option(int c, const char *arg, allocrec_settings_t *s)
{
	switch (c) {
	case ALLOCREC_OPT_STACKS:
		s->stacks = 32;
		if (arg && ar_cli_parse_int(arg, 1, AR_STACK_MAX_DEPTH, &s->stacks) != 0)
			return ar_cli_usage_error("--stacks depth must be 1..%d, not '%s'", AR_STACK_MAX_DEPTH, arg);
		return 0;
	case ALLOCREC_OPT_LEVEL:
		if (ar_cli_parse_int(arg, 1, 19, &s->level) != 0)
			return ar_cli_usage_error("--level must be 1..19, not '%s'", arg);
		return 0;
	case ALLOCREC_OPT_TIME_EVERY:
		if (ar_cli_parse_int(arg, 1, REC_TIME_EVERY_MAX, &s->time_every) != 0)
			return ar_cli_usage_error("--time-every must be 1..%d, not '%s'", REC_TIME_EVERY_MAX, arg);
		return 0;
	case ALLOCREC_OPT_TIME_UNIT:
		if (ar_cli_parse_int(arg, AR_TIME_UNIT_NS, AR_TIME_UNIT_MAX_NS, &s->time_unit) != 0 ||
		    !ar_time_unit_ok((uint64_t)s->time_unit))
			return ar_cli_usage_error("--time-unit takes nanoseconds, a power of two from %u to %u (16, 32, "
						  "64, ...), not '%s'", AR_TIME_UNIT_NS, AR_TIME_UNIT_MAX_NS, arg);
		return 0;
	case ALLOCREC_OPT_DURATION:
		if (ar_cli_parse_seconds(arg, &s->duration_ns) != 0)
			return ar_cli_usage_error("--duration takes seconds above 0 as a decimal number (e.g. 0.5 or "
						  "30), not '%s'", arg);
		return 0;
	}
	return -1;
}
