/*
 * cmd_stacks_db.c — `alloctrace stacks` argument parsing, and --db: a
 * trace's allocation sites (sites.h) stored in the results database's
 * sites table (results/ar_results.h), keyed by the trace's SHA-256. Apart
 * from cmd_stacks.c so that the subcommands link without SQLite (the fuzz
 * target).
 *
 * Sites are stored whether or not the database has a traces row for the
 * trace yet (the table has no foreign key): `alloctrace stacks --db` may run
 * before or after allocreplay, which stores sites itself for a trace with
 * stacks by running this command.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_results.h"
#include "ar_trace_id.h"
#include "sites.h"

/* Store the sites of m, the model of the trace at path, into the database db_path. */
static int store_sites(const char *db_path, const char *path, const ar_sites_t *m)
{
	char sha[65], err[512];
	if (ar_trace_sha256(path, sha) != 0)
		return ar_cli_error(path, "cannot hash the trace to key its sites: %s", strerror(errno));
	size_t n = ar_sites_count(m);
	ar_res_site_t *v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return ar_cli_error(db_path, "out of memory for %zu sites", n);
	for (size_t i = 0; i < n; i++) {
		const ar_site_t *s = ar_sites_at(m, i);
		/* SQLite integers are signed: a saturated count (a hostile trace) is stored as the largest one */
#define I64(x) ((x) > INT64_MAX ? INT64_MAX : (int64_t)(x))
		v[i] = (ar_res_site_t){(char *)s->label, I64(s->calls), I64(s->bytes), I64(s->live_at_peak_bytes),
				       I64(s->live_at_peak_blocks), I64(s->temporary_calls), I64(s->leaked_bytes),
				       I64(s->leaked_blocks)};
#undef I64
	}
	sqlite3 *db = NULL;
	int rc = ar_res_db_open(db_path, &db, err, sizeof err);
	if (rc == 0)
		rc = ar_res_sites_store(db, sha, v, n, err, sizeof err);
	if (db)
		ar_res_db_close(db);
	free(v);
	if (rc != 0) {
		fprintf(stderr, "alloctrace: %s\n", err);
		return AR_EXIT_RUNTIME;
	}
	return AR_EXIT_OK;
}

/* stacks [--folded [--by METRIC]] [--db DB] FILE, parsed. */
static int run(const char *path, int folded, ar_site_metric_t by, const char *db)
{
	if (!db)
		return folded ? ar_stacks_folded_run(path, by, 1) : ar_stacks_run(path, 1);
	ar_sites_t *m;
	int st;
	if (folded) { /* one model for both */
		if ((st = ar_stacks_sites(path, 1, stderr, &m)) != 0)
			return st;
		if (ar_sites_write_folded(m, by, stdout) != 0) {
			ar_sites_free(m);
			return ar_cli_error("-", "cannot write the folded stacks");
		}
	} else { /* the table makes its own, with the events' use counts */
		st = ar_stacks_run(path, 1);
		if (st != AR_EXIT_OK && st != AR_EXIT_WARN)
			return st;
		int built = ar_stacks_sites(path, 1, NULL, &m); /* its notes were just printed */
		if (built)
			return built;
	}
	int stored = store_sites(db, path, m);
	if (!stored && folded)
		st = ar_stacks_sites_status(path, m, "the figures");
	ar_sites_free(m);
	return stored ? stored : st;
}

int ar_cmd_stacks(int argc, char **argv)
{
	enum { OPT_FOLDED = AR_OPT_OWN, OPT_BY, OPT_DB, OPT_IDS };
	static const struct option opts[] = {AR_CMD_SHARED_OPTIONS,
					     {"folded", no_argument, NULL, OPT_FOLDED},
					     {"by", required_argument, NULL, OPT_BY},
					     {"db", required_argument, NULL, OPT_DB},
					     {"ids-through", required_argument, NULL, OPT_IDS},
					     {NULL, 0, NULL, 0}};
	int folded = 0, c;
	const char *db = NULL, *by_name = NULL, *through = NULL;
	ar_site_metric_t by = AR_SITE_CALLS;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FOLDED: folded = 1; break;
		case OPT_BY:
			by_name = optarg;
			if (ar_site_metric_parse(optarg, &by) != 0)
				return ar_cli_usage_error("stacks: --by %s: not one of calls, bytes, live-at-peak, "
							  "temporary, leaked",
							  optarg);
			break;
		case OPT_DB: db = optarg; break;
		case OPT_IDS:
			if (!optarg[0])
				return ar_cli_usage_error("stacks: --ids-through needs a function name");
			through = optarg;
			break;
		default: return ar_cmd_other_option(c, argv, &ar_stacks_help);
		}
	}
	/* SQLite writes a file it can reopen and lock: standard output is none */
	if (db && (ar_cli_is_stdio(db) || !db[0]))
		return ar_cli_usage_error("stacks: --db needs a file: the results database cannot be standard output");
	if (by_name && !folded)
		return ar_cli_usage_error("stacks: --by chooses the value of --folded lines; add --folded");
	if (optind >= argc)
		return ar_cli_usage_error("stacks: missing FILE, a trace recorded with allocrec --stacks");
	if (optind + 1 < argc)
		return ar_cli_usage_error("stacks: one FILE at a time ('%s' is a second one)", argv[optind + 1]);
	if (through && (folded || db))
		return ar_cli_usage_error("stacks: --ids-through prints stack ids only: not with --folded or --db");
	if (through)
		return ar_stacks_ids_through_run(argv[optind], through);
	return run(argv[optind], folded, by, db);
}
