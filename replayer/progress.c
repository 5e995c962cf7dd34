/*
 * progress.c — the progress line (see progress.h). All state is one static
 * struct: allocreplay shows one line at a time, from its main thread.
 *
 * The estimate uses the rate since the first update that showed progress,
 * not since start: a replay under valgrind spends its first seconds
 * starting up with nothing done, and counting them would inflate every
 * estimate of the run.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ar_escape.h"
#include "progress.h"

static struct {
	int on, active;
	char label[256];
	const char *unit;
	uint64_t total, done;
	uint64_t t0_ms, last_draw_ms;
	uint64_t first_ms, first_done; /* first update with done > 0 */
	unsigned cols;                 /* terminal width */
	int room;                      /* label characters shown */
} pg;

static const char label_sep[] = ":";

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void ar_progress_enable(int on)
{
	pg.on = on != 0;
}

int ar_progress_enabled(void)
{
	return pg.on;
}

/* Three significant digits: "987", "1.23k", "45.6M", "789G": counts stay
 * short on the line. */
static void fmt_count(char *out, size_t cap, uint64_t v)
{
	static const char sfx[] = "kMGTPE";
	if (v < 1000) {
		snprintf(out, cap, "%llu", (unsigned long long)v);
		return;
	}
	double d = (double)v / 1000.0;
	int i = 0;
	while (d >= 999.5 && sfx[i + 1]) {
		d /= 1000.0;
		i++;
	}
	snprintf(out, cap, "%.*f%c", d < 9.995 ? 2 : d < 99.95 ? 1 : 0, d, sfx[i]);
}

/* "0:07", "12:05", "1:02:03". */
static void fmt_time(char *out, size_t cap, uint64_t s)
{
	if (s >= 3600)
		snprintf(out, cap, "%llu:%02u:%02u", (unsigned long long)(s / 3600),
			 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
	else
		snprintf(out, cap, "%u:%02u", (unsigned)(s / 60), (unsigned)(s % 60));
}

/* Everything after the label: " 45% (1.23M/2.70M ops) 0:12 elapsed ~0:15 left". */
static void fmt_suffix(char *buf, size_t cap, const char *unit, uint64_t done, uint64_t total,
		       uint64_t elapsed_ms, double rate_per_s)
{
	char d[16], t[16], el[24], left[40] = "";
	fmt_count(d, sizeof d, done);
	fmt_time(el, sizeof el, elapsed_ms / 1000);
	if (!total) {
		snprintf(buf, cap, " %s %s, %s elapsed", d, unit, el);
		return;
	}
	fmt_count(t, sizeof t, total);
	/* Floor, so 100 % means finished, never "almost". */
	unsigned pct = done >= total ? 100u : (unsigned)((double)done * 100.0 / (double)total);
	if (rate_per_s > 0 && done < total) {
		char lt[24];
		fmt_time(lt, sizeof lt, (uint64_t)((double)(total - done) / rate_per_s + 0.5));
		snprintf(left, sizeof left, " ~%s left", lt);
	}
	snprintf(buf, cap, " %3u%% (%s/%s %s) %s elapsed%s", pct, d, t, unit, el, left);
}

static unsigned term_cols(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* Rate since the first update that showed progress; 0 while unknown (under
 * half a second of data gives wild estimates). */
static double rate_now(uint64_t now)
{
	if (!pg.first_ms || pg.done <= pg.first_done || now < pg.first_ms + 500)
		return 0;
	return (double)(pg.done - pg.first_done) * 1000.0 / (double)(now - pg.first_ms);
}

/* Redraw in place. When the line would wrap (a wrapped line cannot be
 * redrawn with \r) the label is shortened, never the figures, and by the
 * same amount at every redraw (pg.room), so the line does not jitter as
 * the estimate comes and goes. */
static void draw(uint64_t now)
{
	char sfx[160], line[512];
	fmt_suffix(sfx, sizeof sfx, pg.unit, pg.done, pg.total, now - pg.t0_ms, rate_now(now));
	int fit = (int)pg.cols - 1 - (int)strlen(label_sep) - (int)strlen(sfx);
	int room = fit < pg.room ? fit : pg.room;
	if (room < 8)
		room = 8;
	snprintf(line, sizeof line, "\r\033[K%.*s%s%s", room, pg.label, label_sep, sfx);
	fputs(line, stderr);
	fflush(stderr);
	pg.last_draw_ms = now;
}

void ar_progress_start(const char *label, const char *unit, uint64_t total)
{
	if (!pg.on)
		return;
	ar_printable(label, pg.label, sizeof pg.label); /* names a trace: maybe someone else's file */
	pg.unit = unit;
	pg.total = total;
	pg.done = pg.first_done = pg.first_ms = 0;
	pg.t0_ms = mono_ms();
	pg.cols = term_cols();
	/* The label's room beside the widest figures of the first hour. */
	char widest[160];
	fmt_suffix(widest, sizeof widest, unit, total ? total - 1 : 0, total, 3599000, 1.0 / 3599);
	pg.room = (int)pg.cols - 1 - (int)strlen(label_sep) - (int)strlen(widest);
	pg.active = 1;
	draw(pg.t0_ms);
}

void ar_progress_update(uint64_t done)
{
	if (!pg.active)
		return;
	uint64_t now = mono_ms();
	pg.done = done;
	if (done && !pg.first_ms) {
		pg.first_ms = now;
		pg.first_done = done;
	}
	if (now - pg.last_draw_ms >= 1000 / AR_PROGRESS_HZ)
		draw(now);
}

void ar_progress_finish(void)
{
	if (!pg.active)
		return;
	draw(mono_ms());
	fputs("\r\033[K", stderr);
	fflush(stderr);
	pg.active = 0;
}
