/*
 * merge.c — folding one results database into another (docs/RESULTS.md,
 * "Merging databases"): the SQL is results/sql/merge.sql, built in as
 * ar_res_merge_sql, so `sqlite3 OUT.db "ATTACH 'IN.db' AS src" ".read
 * results/sql/merge.sql"` and `allocreport merge` always do the same. A
 * database from elsewhere is untrusted (schema_check.c): it is opened
 * read-only (SQLite URI mode=ro) on a hardened connection, must be
 * allocrr's schema of OUT's version and nothing more (no trigger, no view
 * or column of its own), and its rows are copied by column name into a
 * schema this program created: a missing OUT.db is made from allocrr's
 * migrations (ar_res_db_open), never copied from an input.
 *
 * Invariants: one transaction per input (an input fails whole, OUT
 * unchanged); the caller checks every input (ar_res_merge_check) before the
 * first is merged, and each is checked again once attached, so the file
 * merged is the file checked; merging the same input twice adds nothing
 * (runs by run_uuid); messages name the file (ar_cli_error), the one-line
 * summary of each step goes to standard output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* path as an SQLite URI that opens it read-only: every byte but the
 * unreserved ones and '/' percent-encoded, so no '?', '#' or '%' in a file
 * name is taken for URI syntax. malloc'ed. */
static char *ro_uri(const char *path)
{
	size_t n = strlen(path);
	char *u = ar_res_xcalloc(1, 3 * n + 32), *p = u;
	p += sprintf(p, path[0] == '/' ? "file://" : "file:");
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    strchr("/-._~", *s))
			*p++ = (char)*s;
		else
			p += sprintf(p, "%%%02X", *s);
	}
	strcpy(p, "?mode=ro");
	return u;
}

/* The version first (its message says how to migrate), then the schema of
 * that version; schema is "main" or "src" of db. 0 or -1 (message printed). */
static int check_schema(sqlite3 *db, const char *schema, const char *in, const char *out)
{
	char sql[64], err[768];
	snprintf(sql, sizeof sql, "PRAGMA %s.user_version", schema);
	int v = (int)scalar(db, sql), want = ar_res_schema_version();
	if (v == 0)
		return ar_cli_error(in, "not a results database (schema version 0, no runs and traces tables)"), -1;
	if (v > 0 && v != want)
		goto mismatch;
	if (ar_res_schema_check(db, schema, in, "merge it", &v, err, sizeof err) != 0) {
		ar_cli_error(NULL, "%s", err); /* names in and what is unexpected */
		return -1;
	}
	if (v == want)
		return 0;
mismatch:
	ar_cli_error(in, "has schema version %d, %s has %d: run allocreplay once on the older one (any trace, e.g. "
			 "-a glibc --repeat 1 --db FILE) to migrate it, then merge",
		     v, out, want);
	return -1;
}

int ar_res_merge_check(const char *in, const char *out)
{
	sqlite3 *db = NULL;
	char *uri = ro_uri(in);
	int rc = -1;
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		ar_cli_error(in, "cannot open: %s", db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	ar_res_db_harden(db);
	sqlite3_busy_timeout(db, 10000);
	rc = check_schema(db, "main", in, out);
out:
	sqlite3_close(db);
	free(uri);
	return rc;
}

/* Merge one input into the open OUT. Returns 0 or -1 (message printed,
 * OUT unchanged). */
int ar_res_merge_one(sqlite3 *db, const char *out, const char *in)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "ATTACH ?1 AS src", -1, &st, NULL) != SQLITE_OK)
		return -1;
	char *uri = ro_uri(in);
	sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	free(uri);
	if (rc != SQLITE_DONE) {
		ar_cli_error(in, "cannot open: %s", sqlite3_errmsg(db));
		return -1;
	}
	int ret = -1;
	if (check_schema(db, "src", in, out) != 0)
		goto detach;
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

int ar_res_merge_open(const char *out, sqlite3 **db, int *created)
{
	char err[768];
	*created = access(out, F_OK) != 0;
	if (ar_res_db_open(out, db, err, sizeof err) != 0) {
		ar_cli_error(NULL, "%s", err);
		return -1;
	}
	if (*created)
		printf("%s: created from allocrr's schema (version %d)\n", out, ar_res_schema_version());
	return 0;
}

void ar_res_merge_discard(const char *out)
{
	static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
		char *p = ar_res_strf("%s%s", out, sfx[i]);
		unlink(p);
		free(p);
	}
}
