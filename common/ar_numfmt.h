/*
 * ar_numfmt.h — the one byte formatter of allocrr's human output: binary
 * units (B, KiB, MiB, GiB, TiB), so a fix to how sizes read lands in every
 * tool (alloctrace stats, allocreplay, allocreport's tables, HTML and
 * recommendations through results/format.c's ar_res_fmt_bytes).
 */
#ifndef AR_NUMFMT_H
#define AR_NUMFMT_H

#include <stddef.h>

enum {
	/* one decimal above bytes even for a whole number ("3.0 MiB", the
	 * alignment alloctrace stats's columns keep); default "3 MiB" */
	AR_FMT_ONE_DECIMAL = 1u << 0,
};

/* v bytes into buf (n bytes, cut if short) as "512 B", "1.5 KiB", "3 MiB":
 * divided by 1024 while at least 1024 (up to TiB), "%.0f" for bytes and
 * for a whole number of a larger unit (unless AR_FMT_ONE_DECIMAL), else
 * "%.1f". NAN ("not measured") is "-". Returns buf. */
const char *ar_fmt_bytes(char *buf, size_t n, double v, unsigned flags);

#endif
