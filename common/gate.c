/*
 * gate.c — the --fail-if rules of ar_gate.h: parsing an expression against
 * the caller's metric names, the change in percent, and the threshold test.
 * The parser reads the whole expression or refuses it: a CI job with a rule
 * that does not say what its author meant must fail at once, not pass.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_gate.h"

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Is name one of names (a trailing '*' there: any name with that prefix)? */
static int known_metric(const char *name, const char *const *names)
{
	for (size_t i = 0; names[i]; i++) {
		size_t n = strlen(names[i]);
		if (n && names[i][n - 1] == '*') {
			if (!strncmp(name, names[i], n - 1) && name[n - 1])
				return 1;
		} else if (!strcmp(name, names[i]))
			return 1;
	}
	return 0;
}

/* "a, b or c" into buf. */
static void list_names(const char *const *names, char *buf, size_t n)
{
	size_t len = 0, count = 0;
	while (names[count])
		count++;
	buf[0] = '\0';
	for (size_t i = 0; i < count && len < n; i++) {
		const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
		int w = snprintf(buf + len, n - len, "%s%s", sep, names[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

/* METRIC: letters, digits, '_' and '.' (op names such as "calls_malloc"). */
static const char *parse_metric(const char *s, ar_gate_rule_t *rule)
{
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.')
		n++;
	if (n == 0 || n >= sizeof rule->metric)
		return NULL;
	memcpy(rule->metric, s, n);
	rule->metric[n] = '\0';
	return s + n;
}

static const char *parse_cmp(const char *s, ar_gate_rule_t *rule)
{
	if (*s != '>' && *s != '<')
		return NULL;
	size_t n = s[1] == '=' ? 2 : 1;
	memcpy(rule->cmp, s, n);
	rule->cmp[n] = '\0';
	return s + n;
}

/* ['+'|'-'] DIGITS ['.' DIGITS] '%': strtod alone would take "inf", "0x1p3" and "1e9". */
static const char *parse_percent(const char *s, ar_gate_rule_t *rule)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	const char *end = p;
	p = skip_blanks(p);
	if (*p != '%')
		return NULL;
	char num[64];
	if ((size_t)(end - s) >= sizeof num)
		return NULL;
	memcpy(num, s, (size_t)(end - s));
	num[end - s] = '\0';
	rule->pct = strtod(num, NULL);
	return p + 1;
}

int ar_gate_parse(const char *expr, const char *const *names, ar_gate_rule_t *rule, char *err, size_t errcap)
{
	static const char grammar[] = "write METRIC>+N% or METRIC<-N% (also >= and <=), e.g. 'p99>+10%'";
	memset(rule, 0, sizeof *rule);
	rule->text = expr;
	const char *s = parse_metric(skip_blanks(expr), rule);
	if (!s) {
		snprintf(err, errcap, "--fail-if '%s': no metric name at its start; %s", expr, grammar);
		return -1;
	}
	if (!known_metric(rule->metric, names)) {
		char list[1024];
		list_names(names, list, sizeof list);
		snprintf(err, errcap, "--fail-if '%s': unknown metric '%s' (%s)", expr, rule->metric, list);
		return -1;
	}
	if (!(s = parse_cmp(skip_blanks(s), rule))) {
		snprintf(err, errcap, "--fail-if '%s': no comparison after '%s'; %s", expr, rule->metric, grammar);
		return -1;
	}
	if (!(s = parse_percent(skip_blanks(s), rule)) || *skip_blanks(s)) {
		snprintf(err, errcap, "--fail-if '%s': the threshold must be a signed percentage ending in %%; %s", expr,
			 grammar);
		return -1;
	}
	return 0;
}

double ar_gate_change_pct(double old, double new_)
{
	if (isnan(old) || isnan(new_))
		return NAN;
	if (old == 0)
		return new_ == 0 ? 0.0 : new_ > 0 ? INFINITY : -INFINITY;
	return (new_ - old) / (old < 0 ? -old : old) * 100.0; /* no libm: alloctrace does not link it */
}

int ar_gate_trips(const ar_gate_rule_t *rule, double change_pct)
{
	if (isnan(change_pct))
		return 0;
	int ge = rule->cmp[1] == '=';
	if (rule->cmp[0] == '>')
		return ge ? change_pct >= rule->pct : change_pct > rule->pct;
	return ge ? change_pct <= rule->pct : change_pct < rule->pct;
}

const char *ar_gate_fmt_pct(char *buf, size_t n, double change_pct)
{
	if (isnan(change_pct))
		snprintf(buf, n, "-");
	else if (isinf(change_pct))
		snprintf(buf, n, change_pct > 0 ? "new" : "gone");
	else if (change_pct == 0)
		snprintf(buf, n, "0%%");
	else if (change_pct > -0.1 && change_pct < 0.1) /* +0.045%, not +0.0%: a change, however small */
		snprintf(buf, n, "%+.2g%%", change_pct);
	else
		snprintf(buf, n, "%+.1f%%", change_pct);
	return buf;
}
