/*
 * report_merge.c — `allocreport merge OUT.db IN.db...`: fold results
 * databases from several machines or teams into OUT.db. The SQL is
 * replayer/merge.sql itself, compiled in as ar_rep_merge_sql (report.mk), so
 * `sqlite3 OUT.db "ATTACH 'IN.db' AS src" ".read replayer/merge.sql"` and this
 * command always do the same: traces keyed by SHA-256 and allocators by
 * (name, version) are inserted when new, runs when their run_uuid is new
 * (with run_id and child rows shifted), all in one transaction per input;
 * merging the same input twice adds nothing.
 *
 * A missing OUT.db starts as a copy of the first input (SQLite online
 * backup, consistent even while allocreplay writes the input). Every input
 * must have OUT.db's schema version; an input is never written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_cli.h"
#include "report_model.h"

static void usage(void)
{
	printf("Usage: allocreport merge OUT.db IN.db...\n"
	       "Add every trace, allocator and run of each IN.db that OUT.db lacks, creating\n"
	       "OUT.db from the first IN.db when it is missing; merging the same input twice\n"
	       "adds nothing. See docs/RESULTS.md, \"Merging databases\".\n"
	       "\n"
	       "Options:\n"
	       "  -h, --help          display this help and exit\n"
	       "      --version       output version information and exit\n");
}

static long long scalar(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int is_results_db(sqlite3 *db, const char *schema)
{
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s.sqlite_master WHERE name IN ('runs','traces')", schema);
	return scalar(db, sql) == 2;
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Copy IN to the new file OUT with the online backup API. */
static int copy_db(const char *in, const char *out)
{
	sqlite3 *src = NULL, *dst = NULL;
	int rc = -1;
	if (sqlite3_open_v2(in, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK || !is_results_db(src, "main")) {
		ar_cli_error(in, "not a results database%s%s", src ? ": " : "", src ? sqlite3_errmsg(src) : "");
		goto out;
	}
	sqlite3_busy_timeout(src, 10000);
	if (sqlite3_open_v2(out, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		ar_cli_error(out, "cannot create: %s", dst ? sqlite3_errmsg(dst) : "out of memory");
		goto out;
	}
	sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
	if (b) {
		sqlite3_backup_step(b, -1);
		sqlite3_backup_finish(b);
	}
	if (sqlite3_errcode(dst) != SQLITE_OK) {
		ar_cli_error(out, "copying %s into it failed: %s", in, sqlite3_errmsg(dst));
		goto out;
	}
	printf("%s: created from %s (%lld runs, %lld traces)\n", out, in, scalar(dst, "SELECT count(*) FROM runs"),
	       scalar(dst, "SELECT count(*) FROM traces"));
	rc = 0;
out:
	sqlite3_close(src);
	sqlite3_close(dst);
	if (rc && dst)
		unlink(out);
	return rc;
}

/* Merge one input into the open OUT. Returns 0 or -1 (message printed,
 * OUT unchanged). */
static int merge_one(sqlite3 *db, const char *out, const char *in)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "ATTACH ?1 AS src", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, in, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ar_cli_error(in, "cannot open: %s", sqlite3_errmsg(db));
		return -1;
	}
	int ret = -1;
	long long vin = scalar(db, "PRAGMA src.user_version"), vout = scalar(db, "PRAGMA main.user_version");
	if (!is_results_db(db, "src")) {
		ar_cli_error(in, "not a results database (no runs and traces tables)");
		goto detach;
	}
	if (vin != vout) {
		ar_cli_error(in, "has schema version %lld, %s has %lld: run allocreplay once on the older one (any "
				 "trace, e.g. -a glibc --repeat 1 --db FILE) to migrate it, then merge",
			     vin, out, vout);
		goto detach;
	}
	long long runs0 = scalar(db, "SELECT count(*) FROM main.runs");
	long long traces0 = scalar(db, "SELECT count(*) FROM main.traces");
	long long src_runs = scalar(db, "SELECT count(*) FROM src.runs");
	char *err = NULL;
	if (sqlite3_exec(db, ar_rep_merge_sql, NULL, NULL, &err) != SQLITE_OK) {
		ar_cli_error(in, "merging it into %s failed, nothing of it was added: %s", out,
			     err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		if (!sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto detach;
	}
	long long added = scalar(db, "SELECT count(*) FROM main.runs") - runs0;
	printf("%s: merged %s: %lld new runs, %lld already present, %lld new traces\n", out, in, added,
	       src_runs - added, scalar(db, "SELECT count(*) FROM main.traces") - traces0);
	ret = 0;
detach:
	sqlite3_exec(db, "DETACH src", NULL, NULL, NULL);
	return ret;
}

/* OUT.db and IN.db... from argv (argv[0] is "merge"): *first is the index
 * of the first input. Returns -1 to go on, or the exit status (--help,
 * --version, a usage error). */
static int parse_args(int argc, char **argv, int *first)
{
	enum { OPT_VERSION = 0x100 };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"version", no_argument, NULL, OPT_VERSION},
					     {NULL, 0, NULL, 0}};
	optind = 0; /* glibc: parse afresh, argv being merge's own */
	int c = getopt_long(argc, argv, ":h", opts, NULL); /* the first option, wherever it is */
	if (c == 'h') {
		usage();
		return AR_EXIT_OK;
	}
	if (c != -1)
		return c == OPT_VERSION ? ar_cli_version() : ar_cli_bad_option(c, argv);
	if (argc - optind < 2)
		return ar_cli_usage_error("merge: missing %s", optind < argc ? "IN.db, a database to merge"
									  : "OUT.db and IN.db");
	/* A database is a file SQLite seeks in and locks: no stream will do. */
	if (ar_cli_is_stdio(argv[optind]))
		return ar_cli_usage_error("merge: OUT.db cannot be '-': a database cannot be written to standard output; "
					  "name a file, e.g. allocreport merge merged.db IN.db...");
	for (int i = optind + 1; i < argc; i++)
		if (ar_cli_is_stdio(argv[i]))
			return ar_cli_usage_error("merge: IN.db cannot be '-': a database cannot be read from standard "
						  "input; name its file");
	*first = optind;
	return -1;
}

/* Every input readable and none of them OUT itself. Returns -1 to go on, or
 * the exit status. */
static int check_inputs(const char *out, int n, char **in)
{
	for (int i = 0; i < n; i++) {
		if (access(in[i], R_OK))
			return ar_cli_error(in[i], "%s", strerror(errno));
		if (same_file(in[i], out))
			return ar_cli_usage_error("merge: %s is OUT.db itself; name it once, first", in[i]);
	}
	return -1;
}

int ar_rep_merge(int argc, char **argv)
{
	int first = 0, rc = parse_args(argc, argv, &first);
	if (rc >= 0)
		return rc;
	const char *out = argv[first];
	char **in = argv + first + 1;
	int nin = argc - first - 1;
	if ((rc = check_inputs(out, nin, in)) >= 0)
		return rc;
	int skip = 0;
	if (access(out, F_OK)) {
		if (copy_db(in[0], out))
			return AR_EXIT_RUNTIME;
		skip = 1;
	}
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK || !is_results_db(db, "main")) {
		ar_cli_error(out, "not a results database%s%s", db ? ": " : "", db ? sqlite3_errmsg(db) : "");
		sqlite3_close(db);
		return AR_EXIT_RUNTIME;
	}
	sqlite3_busy_timeout(db, 10000);
	int failed = 0;
	for (int i = skip; i < nin; i++)
		failed |= merge_one(db, out, in[i]) != 0;
	sqlite3_close(db);
	return failed ? AR_EXIT_RUNTIME : AR_EXIT_OK;
}
