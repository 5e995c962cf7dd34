/*
 * ar_gate.h — the `--fail-if EXPR` rules of `alloctrace diff` and
 * `allocreport diff`: one grammar, one parser, one test of a change against
 * a threshold, so that both diffs gate a CI job alike (docs/CI.md).
 *
 *   EXPR   := METRIC CMP PERCENT '%'
 *   CMP    := '>' | '<' | '>=' | '<='
 *   PERCENT:= ['+' | '-'] DIGITS ['.' DIGITS]     (no sign: '+')
 *
 * e.g. 'p99>+10%' (p99 grew by more than 10 %), 'ops_s<-5%' (throughput fell
 * by more than 5 %), 'leaked>0%' (any growth). Blanks around the parts are
 * allowed. METRIC is one of the names the caller accepts (each diff has its
 * own, listed in its --help); a name ending in '*' in that list accepts any
 * name with that prefix (per-op counts: "calls_*").
 *
 * A change is (new - old) / old in percent: 0 when both are 0, +inf or
 * -inf when only old is 0, NAN when either is unknown (NAN). A rule never
 * trips on NAN: an unknown figure is reported, not judged. Nothing here
 * keeps state.
 */
#ifndef AR_GATE_H
#define AR_GATE_H

#include <stddef.h>

/* The exit status of a diff when a rule tripped: apart from 0 (passed),
 * 1 (usage error, a bad rule included), 2 (runtime error) and 3 (done on
 * part of an input) of ar_cli.h, so a CI job can tell a regression from a
 * broken job. */
#define AR_GATE_EXIT 4

enum { AR_GATE_METRIC = 48 };

typedef struct ar_gate_rule {
	char metric[AR_GATE_METRIC];
	char cmp[3];       /* ">", "<", ">=", "<=" */
	double pct;        /* the signed threshold in percent */
	const char *text;  /* the expression as given (not copied) */
} ar_gate_rule_t;

/* Parse expr into *rule, accepting the metrics of the NULL-terminated list
 * names. 0, or -1 with a sentence in err naming expr and what is wrong
 * (unknown metric: the list of names; bad comparison or percent: the
 * grammar), for the caller's usage error. */
int ar_gate_parse(const char *expr, const char *const *names, ar_gate_rule_t *rule, char *err, size_t errcap);

/* The change from old to new in percent, as above. */
double ar_gate_change_pct(double old, double new_);

/* Does a change of change_pct percent pass rule's threshold? 0 for NAN. */
int ar_gate_trips(const ar_gate_rule_t *rule, double change_pct);

/* A change as text: "+12.3%", "-5.0%", "0%", "new" (+inf: from 0),
 * "gone" (-inf cannot happen for counts; kept for symmetry), "-" (NAN). */
const char *ar_gate_fmt_pct(char *buf, size_t n, double change_pct);

#endif
