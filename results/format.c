/*
 * format.c — how the results module (and allocreport's HTML, charts and
 * recommendations) writes figures: human number formats and JSON numbers
 * (text goes through common/ar_escape.h), and a machine for people. NAN
 * means "not measured" throughout and is printed as "-" or null, never as 0.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_cli.h"
#include "ar_numfmt.h"
#include "ar_results.h"

const char *ar_res_fmt_num(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (fabs(v) >= 1e9)
		snprintf(buf, n, "%.2f G", v / 1e9);
	else if (fabs(v) >= 1e6)
		snprintf(buf, n, "%.2f M", v / 1e6);
	else if (fabs(v) >= 1e4)
		snprintf(buf, n, "%.1f k", v / 1e3);
	else if (v == floor(v))
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, fabs(v) >= 100 ? "%.1f" : "%.2f", v);
	return buf;
}

const char *ar_res_fmt_bytes(char *buf, size_t n, double v)
{
	return ar_fmt_bytes(buf, n, v, 0);
}

/* A run's text field as stored: empty means NULL (replayer/db.c), shown
 * as what. */
static const char *or_unknown(const char *s, const char *what)
{
	return s && *s ? s : what;
}

char *ar_res_machine_text(const char *host, const char *cpu_model, long long cpus, const char *kernel,
			  const char *glibc_version)
{
	/* load.c's MACHINE_TEXT and the view's machine column, in C */
	return ar_res_strf("%s (%s, %lld CPUs, %s, glibc %s)", or_unknown(host, "(unknown host)"),
			   or_unknown(cpu_model, "unknown CPU"), cpus, or_unknown(kernel, "unknown kernel"),
			   or_unknown(glibc_version, "?"));
}

const char *ar_res_fmt_ns(char *buf, size_t n, double v)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	if (isnan(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	int i = 0;
	double d = v;
	while (fabs(d) >= 1000 && i < 3) {
		d /= 1000;
		i++;
	}
	/* whole numbers of the unit (axis ticks) without decimals */
	snprintf(buf, n, i == 0 || d == floor(d) ? "%.0f %s" : i == 3 ? "%.2f %s" : "%.1f %s", d, unit[i]);
	return buf;
}

static void oom(void)
{
	ar_cli_error(NULL, "out of memory");
	exit(2);
}

char *ar_res_strf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom();
	return s;
}

char *ar_res_strdup(const char *s)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		oom();
	return d;
}

void *ar_res_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *ar_res_xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);
	if (!q)
		oom();
	return q;
}

void ar_res_put_json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.15g", v);
}
