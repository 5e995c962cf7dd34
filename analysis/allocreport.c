/*
 * allocreport.c — entry point:
 *   allocreport [--db FILE] [--trace SHA|NAME] [--format table|csv|json|markdown]
 *               [--recommend] [--html FILE]
 *   allocreport merge OUT.db IN.db...
 * Reads a results database written by allocreplay (read-only; only merge
 * writes, and only OUT.db). Exit 0 on success, 1 for a usage error (bad
 * option, unknown trace), 2 for a runtime error (unreadable database,
 * unwritable output, failed merge).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_model.h"

static int usage(FILE *f, int status)
{
	fprintf(f,
		"usage: allocreport [--db FILE] [--trace SHA|NAME] [--format table|csv|json|markdown]\n"
		"                   [--recommend] [--html FILE]\n"
		"       allocreport merge OUT.db IN.db...\n"
		"Compares the allocators replayed on each trace of a results database (default allocrr.db,\n"
		"written by allocreplay): medians over repetitions with min-max, ratios to glibc, latency\n"
		"percentiles, fragmentation, faults, counters, failed runs with their reason.\n"
		"  --trace      only this trace: its file name or a prefix (4+ hex digits) of its SHA-256\n"
		"  --format     of the comparison (or of the recommendations); default table\n"
		"  --recommend  print the best allocator for speed, memory, tail latency and balance,\n"
		"               with the evidence and warnings, instead of the comparison\n"
		"  --html FILE  write a self-contained HTML report with SVG charts (prints nothing else\n"
		"               unless --format or --recommend is given too)\n"
		"  merge        fold databases from several machines into OUT.db (docs/RESULTS.md)\n");
	return status;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return ar_rep_merge(argc - 1, argv + 1);
	const char *db = "allocrr.db", *filter = NULL, *html = NULL;
	enum ar_rep_format fmt = AR_REP_TABLE;
	int recommend = 0, fmt_given = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int has = i + 1 < argc;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return usage(stdout, 0);
		else if (!strcmp(a, "--db") && has)
			db = argv[++i];
		else if (!strcmp(a, "--trace") && has)
			filter = argv[++i];
		else if (!strcmp(a, "--html") && has)
			html = argv[++i];
		else if (!strcmp(a, "--recommend"))
			recommend = 1;
		else if (!strcmp(a, "--format") && has) {
			const char *v = argv[++i];
			fmt_given = 1;
			if (!strcmp(v, "table"))
				fmt = AR_REP_TABLE;
			else if (!strcmp(v, "csv"))
				fmt = AR_REP_CSV;
			else if (!strcmp(v, "json"))
				fmt = AR_REP_JSON;
			else if (!strcmp(v, "markdown"))
				fmt = AR_REP_MARKDOWN;
			else {
				fprintf(stderr, "allocreport: unknown format '%s' (table, csv, json or markdown)\n", v);
				return 1;
			}
		} else {
			int needs = !strcmp(a, "--db") || !strcmp(a, "--trace") || !strcmp(a, "--html") ||
				    !strcmp(a, "--format");
			fprintf(stderr, "allocreport: %s '%s'\n", needs ? "missing value for" : "unknown argument", a);
			return usage(stderr, 1);
		}
	}
	ar_rep_t rep;
	int bad_usage;
	if (ar_rep_load(&rep, db, filter, &bad_usage)) {
		ar_rep_free(&rep);
		return bad_usage ? 1 : 2;
	}
	int rc = 0;
	if (html && ar_rep_html(&rep, html))
		rc = 2;
	if (recommend)
		ar_rep_print_advice(stdout, &rep, fmt);
	else if (!html || fmt_given)
		ar_rep_print(stdout, &rep, fmt);
	if (html && !rc)
		fprintf(stderr, "allocreport: wrote %s\n", html);
	ar_rep_free(&rep);
	if (fflush(stdout) != 0)
		rc = 2;
	return rc;
}
