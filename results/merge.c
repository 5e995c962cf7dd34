/*
 * merge.c — folding one results database into another (docs/RESULTS.md,
 * "Merging databases"): the SQL is results/sql/merge.sql, built in as
 * ar_res_merge_sql, so `sqlite3 OUT.db "ATTACH 'IN.db' AS src" ".read
 * results/sql/merge.sql"` and `allocreport merge` always do the same. A
 * database from elsewhere is untrusted: it is attached read-only in effect
 * (only main is written), merged by column name into the schema this program
 * created, and must have OUT's schema version (PRAGMA user_version).
 *
 * Invariants: one transaction per input (an input fails whole, OUT
 * unchanged); merging the same input twice adds nothing (runs by run_uuid);
 * messages name the file (ar_cli_error), the one-line summary of each step
 * goes to standard output.
 */
#include <stdio.h>
#include <unistd.h>

#include "ar_cli.h"
#include "ar_results.h"

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

/* Copy IN to the new file OUT with the online backup API. */
int ar_res_merge_create(const char *in, const char *out)
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
int ar_res_merge_one(sqlite3 *db, const char *out, const char *in)
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
	if (sqlite3_exec(db, ar_res_merge_sql, NULL, NULL, &err) != SQLITE_OK) {
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

int ar_res_merge_open(const char *out, sqlite3 **db)
{
	*db = NULL;
	if (sqlite3_open_v2(out, db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK || !is_results_db(*db, "main")) {
		ar_cli_error(out, "not a results database%s%s", *db ? ": " : "", *db ? sqlite3_errmsg(*db) : "");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	sqlite3_busy_timeout(*db, 10000);
	return 0;
}
