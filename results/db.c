/*
 * db.c — opening a results database: read-write for the one writer
 * (allocreplay: WAL, busy timeout, foreign keys, then the schema migrated
 * forward), or read-only for the reports. The schema is the list of
 * migrations in results/sql/, embedded at build time (results/module.mk):
 * migration i takes PRAGMA user_version from i to i+1, one migration per
 * transaction, re-checked inside the write lock so concurrent writers
 * migrate once; a database newer than this program is refused and left
 * untouched. Never edit a shipped migration: add the next file.
 *
 * A database allocrr did not create is untrusted (schema_check.c): every
 * connection here is hardened (ar_res_db_harden) and an existing database
 * is checked against allocrr's schema of its version before anything is
 * read or written — refused, it is left exactly as it was.
 */
#include <stdio.h>

#include "ar_results.h"

/* Generated from results/sql/ (results/module.mk). */
extern const char *const ar_res_migrations[];

int ar_res_schema_version(void)
{
	int n = 0;
	while (ar_res_migrations[n])
		n++;
	return n;
}

const char *ar_res_migration(int i)
{
	return i >= 0 && i < ar_res_schema_version() ? ar_res_migrations[i] : NULL;
}

int ar_res_exec(sqlite3 *db, const char *sql, char *err, size_t cap)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, cap, "%s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	return v;
}

static int too_new(const char *path, int have, int want, char *err, size_t cap)
{
	snprintf(err, cap, "database %s has schema version %d, newer than this allocreplay's %d: "
		 "use a newer allocreplay or another --db", path, have, want);
	return -1;
}

/* Apply migrations user_version .. want-1, one transaction each. 0, or -1
 * with the failing migration's error in e. */
static int migrate(sqlite3 *db, int have, int want, char *e, size_t cap)
{
	for (int v = have; v < want; v++) {
		char sql[64];
		if (ar_res_exec(db, "BEGIN IMMEDIATE", e, cap) != 0)
			return -1;
		/* Re-check inside the write lock: another allocreplay may have
		 * migrated meanwhile. */
		if (user_version(db) != v) {
			ar_res_exec(db, "ROLLBACK", e, cap);
			v = user_version(db) - 1;
			continue;
		}
		snprintf(sql, sizeof sql, "PRAGMA user_version=%d", v + 1);
		if (ar_res_exec(db, ar_res_migration(v), e, cap) != 0 || ar_res_exec(db, sql, e, cap) != 0 ||
		    ar_res_exec(db, "COMMIT", e, cap) != 0) {
			char e2[64];
			ar_res_exec(db, "ROLLBACK", e2, sizeof e2);
			return -1;
		}
	}
	return 0;
}

/* Migrate an open database to this program's version, or refuse it. */
static int check_and_migrate(sqlite3 *db, const char *path, char *err, size_t cap)
{
	char e[512];
	int have = user_version(db), want = ar_res_schema_version();
	if (have < 0) {
		snprintf(err, cap, "database %s: cannot read its schema version", path);
		return -1;
	}
	if (have > want)
		return too_new(path, have, want, err, cap);
	if (migrate(db, have, want, e, sizeof e) != 0) {
		snprintf(err, cap, "database %s: schema migration failed: %s", path, e);
		return -1;
	}
	/* A newer allocreplay may have migrated past us while we waited. */
	if ((have = user_version(db)) > want)
		return too_new(path, have, want, err, cap);
	return 0;
}

int ar_res_db_open(const char *path, sqlite3 **out, char *err, size_t cap)
{
	sqlite3 *db = NULL;
	*out = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL) !=
	    SQLITE_OK) {
		snprintf(err, cap, "cannot open database %s: %s", path, db ? sqlite3_errmsg(db) : "no memory");
		sqlite3_close(db);
		return -1;
	}
	ar_res_db_harden(db);
	sqlite3_busy_timeout(db, 10000);
	/* Nothing is written (not even the journal mode) before the database
	 * is known to be allocrr's: a new file, or its schema of its version. */
	int have = user_version(db), want = ar_res_schema_version();
	if (have > want) {
		too_new(path, have, want, err, cap);
		sqlite3_close(db);
		return -1;
	}
	if (ar_res_schema_check(db, "main", path, "write to it", NULL, err, cap) != 0) {
		sqlite3_close(db);
		return -1;
	}
	char e[512];
	if (ar_res_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", e,
		 sizeof e) != 0) {
		snprintf(err, cap, "database %s: %s (is it an SQLite database?)", path, e);
		sqlite3_close(db);
		return -1;
	}
	if (check_and_migrate(db, path, err, cap) != 0) {
		sqlite3_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

int ar_res_db_open_readonly(const char *path, sqlite3 **out, char *err, size_t cap)
{
	*out = NULL;
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, cap, "%s: cannot open (create it with: allocreplay TRACE --db FILE): %s", path,
			 db ? sqlite3_errmsg(db) : "no memory");
		sqlite3_close(db);
		return -1;
	}
	ar_res_db_harden(db);
	sqlite3_busy_timeout(db, 10000);
	if (ar_res_schema_check(db, "main", path, "read it", NULL, err, cap) != 0) {
		sqlite3_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

void ar_res_db_close(sqlite3 *db)
{
	sqlite3_close(db);
}
