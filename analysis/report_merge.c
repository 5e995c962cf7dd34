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
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_model.h"

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: allocreport merge OUT.db IN.db...\n"
			"Adds every trace, allocator and run of each IN.db that OUT.db lacks (creating OUT.db\n"
			"from the first IN.db when missing). See docs/RESULTS.md, \"Merging databases\".\n");
	return status;
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
		fprintf(stderr, "allocreport: %s: not a results database%s%s\n", in, src ? ": " : "",
			src ? sqlite3_errmsg(src) : "");
		goto out;
	}
	sqlite3_busy_timeout(src, 10000);
	if (sqlite3_open_v2(out, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		fprintf(stderr, "allocreport: cannot create %s: %s\n", out, dst ? sqlite3_errmsg(dst) : "no memory");
		goto out;
	}
	sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
	if (b) {
		sqlite3_backup_step(b, -1);
		sqlite3_backup_finish(b);
	}
	if (sqlite3_errcode(dst) != SQLITE_OK) {
		fprintf(stderr, "allocreport: copying %s to %s: %s\n", in, out, sqlite3_errmsg(dst));
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
		fprintf(stderr, "allocreport: cannot open %s: %s\n", in, sqlite3_errmsg(db));
		return -1;
	}
	int ret = -1;
	long long vin = scalar(db, "PRAGMA src.user_version"), vout = scalar(db, "PRAGMA main.user_version");
	if (!is_results_db(db, "src")) {
		fprintf(stderr, "allocreport: %s: not a results database (no runs and traces tables)\n", in);
		goto detach;
	}
	if (vin != vout) {
		fprintf(stderr, "allocreport: %s has schema version %lld, %s has %lld: run allocreplay once on the "
				"older one (any trace, e.g. -a glibc --repeat 1 --db FILE) to migrate it, then merge\n",
			in, vin, out, vout);
		goto detach;
	}
	long long runs0 = scalar(db, "SELECT count(*) FROM main.runs");
	long long traces0 = scalar(db, "SELECT count(*) FROM main.traces");
	long long src_runs = scalar(db, "SELECT count(*) FROM src.runs");
	char *err = NULL;
	if (sqlite3_exec(db, ar_rep_merge_sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "allocreport: merging %s into %s failed, nothing of it was added: %s\n", in, out,
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

int ar_rep_merge(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return usage(stdout, 0);
	if (argc < 3)
		return usage(stderr, 1);
	const char *out = argv[1];
	for (int i = 2; i < argc; i++) {
		if (access(argv[i], R_OK)) {
			fprintf(stderr, "allocreport: %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		if (same_file(argv[i], out)) {
			fprintf(stderr, "allocreport: %s is the output itself\n", argv[i]);
			return 1;
		}
	}
	int first = 2;
	if (access(out, F_OK)) {
		if (copy_db(argv[2], out))
			return 2;
		first = 3;
	}
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK || !is_results_db(db, "main")) {
		fprintf(stderr, "allocreport: %s: not a results database%s%s\n", out, db ? ": " : "",
			db ? sqlite3_errmsg(db) : "");
		sqlite3_close(db);
		return 2;
	}
	sqlite3_busy_timeout(db, 10000);
	int failed = 0;
	for (int i = first; i < argc; i++)
		failed |= merge_one(db, out, argv[i]) != 0;
	sqlite3_close(db);
	return failed ? 2 : 0;
}
