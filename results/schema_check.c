/*
 * schema_check.c — is a database allocrr's own? A results database from
 * another team, or any file handed to --db, is untrusted input: its schema
 * can carry triggers that rewrite rows whenever allocreplay or a merge
 * writes, views that make a report lie, or columns that a positional reader
 * would swap (issue 17). Before a tool reads or writes a database it did not
 * create, it compares it with what allocrr's own migrations build
 * (results/sql/, the one source of truth: migrations 1..v run into an
 * in-memory database, v being the database's PRAGMA user_version, so an
 * older database that the migrations upgrade still passes).
 *
 * The rules (docs/RESULTS.md, "Databases from elsewhere"):
 *   - no trigger, ever (allocrr's schema has none);
 *   - every view and every index is allocrr's, with the very SQL its
 *     migrations wrote, and on a table of allocrr's no index of its own;
 *   - every table of allocrr's is there with its columns in their order,
 *     each with its declared type, NOT NULL, default, primary key,
 *     collation, not generated; its foreign keys, keys and unique
 *     constraints, rowid-ness and strictness as allocrr's (CHECK constraints
 *     are not compared: they can refuse a row, never change one);
 *   - a table of its own (notes) is allowed: nothing of allocrr's reads it,
 *     merge does not copy it; a virtual table is not (it runs code);
 *   - schema version 0 (nothing migrated yet) must hold no table at all:
 *     allocreplay never migrates into someone else's database.
 * The comparison reads in one transaction, so a concurrent writer's
 * migration is seen whole or not at all.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"

typedef struct obj {
	char *type, *name, *tbl, *sql;
} obj_t;

typedef struct objs {
	obj_t *v;
	size_t n;
} objs_t;

/* What a check is about, for the messages. */
typedef struct ctx {
	sqlite3 *db, *exp;   /* the database checked, allocrr's schema in memory */
	const char *schema;  /* "main", "src" */
	const char *path, *verb;
	int version;
	char *err;
	size_t cap;
	objs_t later; /* allocrr's latest schema, when version is older: its tables are never "their own" */
	/* Every table's kind in each database (table_kind), read once. */
	objs_t kinds_db, kinds_exp;
	int kinds_loaded;
} ctx_t;

static char *dup(const unsigned char *s)
{
	return s ? ar_res_strdup((const char *)s) : NULL;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_nocase(const char *a, const char *b)
{
	return sqlite3_stricmp(a ? a : "", b ? b : "") == 0;
}

static int fail(ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ctx_t *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->cap, "%s: ", c->path);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->cap)
		vsnprintf(c->err + n, c->cap - n, fmt, ap);
	va_end(ap);
	/* Names come from the database checked: no control byte of theirs
	 * reaches a terminal through the message. */
	for (unsigned char *p = (unsigned char *)c->err; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	return -1;
}

static int sql_fail(ctx_t *c, sqlite3 *db)
{
	return fail(c, "cannot read its schema: %s (is it an SQLite database?)", sqlite3_errmsg(db));
}

static void objs_free(objs_t *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->v[i].type);
		free(o->v[i].name);
		free(o->v[i].tbl);
		free(o->v[i].sql);
	}
	free(o->v);
	o->v = NULL;
	o->n = 0;
}

/* Every object of schema in db, into o. 0 or -1 (SQLite's error in db). */
static int objs_load(sqlite3 *db, const char *schema, objs_t *o)
{
	char sql[128];
	sqlite3_stmt *st;
	snprintf(sql, sizeof sql, "SELECT type, name, tbl_name, sql FROM \"%s\".sqlite_master ORDER BY rowid", schema);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		o->v = ar_res_xrealloc(o->v, (o->n + 1) * sizeof *o->v);
		o->v[o->n++] = (obj_t){dup(sqlite3_column_text(st, 0)), dup(sqlite3_column_text(st, 1)),
				    dup(sqlite3_column_text(st, 2)), dup(sqlite3_column_text(st, 3))};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static const obj_t *find(const objs_t *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (same_nocase(o->v[i].name, name))
			return &o->v[i];
	return NULL;
}

/* The rows of one query on db with the table name (?1) and schema (?2)
 * bound, each row's columns joined by '|', rows by '\n' (sorted when sort);
 * malloc'ed, NULL on error. */
static char *rows(sqlite3 *db, const char *sql, const char *table, const char *schema, int sort)
{
	sqlite3_stmt *st;
	char *q = sort ? ar_res_strf("SELECT group_concat(r, char(10)) FROM (SELECT %s ORDER BY 1)", sql)
		       : ar_res_strf("SELECT group_concat(r, char(10)) FROM (SELECT %s)", sql);
	int ok = sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK;
	free(q);
	if (!ok)
		return NULL;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
	char *out = NULL;
	if (sqlite3_step(st) == SQLITE_ROW)
		out = ar_res_strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
	sqlite3_finalize(st);
	return out;
}

/* A property of table t (one query, see rows) the same in both? 1, 0, or
 * -1 when it cannot be read (message set). */
static int same_rows(ctx_t *c, const char *sql, const char *t, int sort)
{
	char *a = rows(c->db, sql, t, c->schema, sort), *b = rows(c->exp, sql, t, "main", sort);
	int r = a && b ? strcmp(a, b) == 0 : -1;
	if (r < 0)
		sql_fail(c, a ? c->exp : c->db);
	free(a);
	free(b);
	return r;
}

/* Every table's kind — type|WITHOUT ROWID|STRICT, in obj_t.sql — in one
 * query per database: pragma_table_list works out the columns of every
 * view whichever table it is asked about (60 ms with allocrr's views on
 * this machine), so a query per table made a merge spend about a second
 * per input database here. 0, or -1. */
static int kinds_load(sqlite3 *db, const char *schema, objs_t *out)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT name, type || '|' || wr || '|' || strict FROM pragma_table_list"
				   " WHERE schema = ?1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, schema, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		out->v = ar_res_xrealloc(out->v, (out->n + 1) * sizeof *out->v);
		out->v[out->n++] = (obj_t){NULL, dup(sqlite3_column_text(st, 0)), NULL, dup(sqlite3_column_text(st, 1))};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* allocrr's own tables' kinds per schema version, read once per process
 * (the same for every database of that version; a merge checks each input
 * twice and the output once). Kept until exit. */
static objs_t own_kinds[64];
static int own_kinds_loaded[64];

/* Table t the same kind in both? 1, 0, or -1 (message set). */
static int same_kind(ctx_t *c, const char *t)
{
	if (!c->kinds_loaded) {
		if (kinds_load(c->db, c->schema, &c->kinds_db) != 0)
			return sql_fail(c, c->db);
		c->kinds_loaded = 1;
	}
	objs_t *own = &c->kinds_exp;
	if (c->version >= 0 && c->version < 64) {
		own = &own_kinds[c->version];
		if (!own_kinds_loaded[c->version] && kinds_load(c->exp, "main", own) != 0)
			return sql_fail(c, c->exp);
		own_kinds_loaded[c->version] = 1;
	} else if (!own->n && kinds_load(c->exp, "main", own) != 0) {
		return sql_fail(c, c->exp);
	}
	const obj_t *a = find(&c->kinds_db, t), *b = find(own, t);
	return a && b && same(a->sql, b->sql);
}

typedef struct col {
	char *name, *type, *dflt;
	int notnull, pk, hidden;
} col_t;

static col_t *cols_load(sqlite3 *db, const char *schema, const char *t, size_t *n)
{
	sqlite3_stmt *st;
	col_t *v = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT name, type, dflt_value, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1, ?2)"
				   " ORDER BY cid", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = ar_res_xrealloc(v, (*n + 1) * sizeof *v);
		v[(*n)++] = (col_t){dup(sqlite3_column_text(st, 0)), dup(sqlite3_column_text(st, 1)),
				    dup(sqlite3_column_text(st, 2)), sqlite3_column_int(st, 3),
				    sqlite3_column_int(st, 4), sqlite3_column_int(st, 5)};
	}
	sqlite3_finalize(st);
	return v;
}

static void cols_free(col_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].type);
		free(v[i].dflt);
	}
	free(v);
}

static const col_t *col_find(const col_t *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (same_nocase(v[i].name, name))
			return &v[i];
	return NULL;
}

/* Column c of table t: the same collation and autoincrement in both? */
static int same_meta(ctx_t *c, const char *t, const char *col)
{
	const char *ca = NULL, *cb = NULL;
	int ia = 0, ib = 0, dummy;
	if (sqlite3_table_column_metadata(c->db, c->schema, t, col, NULL, &ca, &dummy, &dummy, &ia) != SQLITE_OK ||
	    sqlite3_table_column_metadata(c->exp, "main", t, col, NULL, &cb, &dummy, &dummy, &ib) != SQLITE_OK)
		return 0;
	return same_nocase(ca, cb) && ia == ib;
}

/* Table t, which allocrr's schema has: the same columns, in the same order
 * (a positional reader, `SELECT *` or `INSERT ... VALUES`, must not swap
 * figures), with the same declarations and keys. */
static int check_table(ctx_t *c, const char *t)
{
	size_t na, nb;
	col_t *a = cols_load(c->db, c->schema, t, &na), *b = cols_load(c->exp, "main", t, &nb);
	int rc = -1;
	if (!a || !b) {
		sql_fail(c, a ? c->exp : c->db);
		goto out;
	}
	for (size_t i = 0; i < na; i++)
		if (!col_find(b, nb, a[i].name)) {
			fail(c, "column %s.%s is not part of allocrr's schema version %d: refusing to %s", t, a[i].name,
			     c->version, c->verb);
			goto out;
		}
	for (size_t i = 0; i < nb; i++) {
		const col_t *x = col_find(a, na, b[i].name), *y = &b[i];
		if (!x) {
			fail(c, "table %s has no column %s, which allocrr's schema version %d has: refusing to %s "
				"(not a results database of that version, or damaged)", t, y->name, c->version, c->verb);
			goto out;
		}
		if (!same_nocase(x->type, y->type)) {
			fail(c, "column %s.%s is %s, allocrr's schema version %d has %s: refusing to %s", t, y->name,
			     x->type && *x->type ? x->type : "untyped", c->version, y->type && *y->type ? y->type : "no type",
			     c->verb);
			goto out;
		}
		const char *what = x->notnull != y->notnull ? "NOT NULL"
				   : !same(x->dflt, y->dflt)  ? "default value"
				   : x->pk != y->pk           ? "primary key"
				   : x->hidden != y->hidden   ? "generated or hidden"
				   : !same_meta(c, t, y->name) ? "collation or autoincrement"
							       : NULL;
		if (what) {
			fail(c, "column %s.%s differs from allocrr's schema version %d (%s): refusing to %s", t, y->name,
			     c->version, what, c->verb);
			goto out;
		}
	}
	for (size_t i = 0; i < nb && i < na; i++)
		if (!same_nocase(a[i].name, b[i].name)) {
			fail(c, "table %s: column %zu is %s where allocrr's schema version %d has %s (columns in another "
				"order; allocreplay never writes that): refusing to %s", t, i + 1, a[i].name, c->version,
			     b[i].name, c->verb);
			goto out;
		}
	static const struct {
		const char *sql, *what;
		int sort;
	} props[] = {
		{"\"table\" || '|' || coalesce(\"to\", '') || '|' || \"from\" || '|' || on_update || '|' || on_delete"
		 " || '|' || \"match\" AS r FROM pragma_foreign_key_list(?1, ?2)", "foreign keys", 1},
		{"il.origin || '|' || il.\"unique\" || '|' || il.partial || '|' ||"
		 " (SELECT group_concat(coalesce(name, '') || ' ' || coll || ' ' || \"desc\", ',') FROM"
		 "  (SELECT * FROM pragma_index_xinfo(il.name, ?2) WHERE key ORDER BY seqno)) AS r"
		 " FROM pragma_index_list(?1, ?2) il WHERE il.origin <> 'c'", "keys or unique constraints", 1},
	};
	int k = same_kind(c, t);
	if (k < 0)
		goto out;
	if (!k) {
		fail(c, "table %s differs from allocrr's schema version %d in its kind (WITHOUT ROWID, STRICT): "
			"refusing to %s", t, c->version, c->verb);
		goto out;
	}
	for (size_t i = 0; i < sizeof props / sizeof *props; i++) {
		int r = same_rows(c, props[i].sql, t, props[i].sort);
		if (r < 0)
			goto out;
		if (!r) {
			fail(c, "table %s differs from allocrr's schema version %d in its %s: refusing to %s", t,
			     c->version, props[i].what, c->verb);
			goto out;
		}
	}
	rc = 0;
out:
	cols_free(a, na);
	cols_free(b, nb);
	return rc;
}

/* One object of the database checked against allocrr's schema (mine). */
static int check_obj(ctx_t *c, const objs_t *mine, const obj_t *o)
{
	const obj_t *e = find(mine, o->name);
	const char *type = o->type ? o->type : "?";
	if (!strcmp(type, "trigger"))
		return fail(c, "trigger '%s' on table %s is not part of allocrr's schema: refusing to %s; a results "
			       "database written by allocreplay has no triggers", o->name, o->tbl, c->verb);
	if (e && strcmp(e->type, type))
		return fail(c, "%s '%s' is a %s in allocrr's schema version %d: refusing to %s", type, o->name, e->type,
			    c->version, c->verb);
	if (!strcmp(type, "view")) {
		if (!e)
			return fail(c, "view '%s' is not part of allocrr's schema: refusing to %s; a results database "
				       "written by allocreplay has only the views its migrations create", o->name, c->verb);
		if (!same(e->sql, o->sql))
			return fail(c, "view '%s' is not allocrr's: its SQL differs from schema version %d's: refusing "
				       "to %s", o->name, c->version, c->verb);
		return 0;
	}
	if (!strcmp(type, "index")) {
		/* An index on a table of their own is theirs; on ours, only
		 * ours (an automatic one is compared with its table). */
		if (!find(mine, o->tbl) || (!o->sql && !strncmp(o->name, "sqlite_autoindex_", 17)))
			return 0;
		if (!e)
			return fail(c, "index '%s' on table %s is not part of allocrr's schema: refusing to %s", o->name,
				    o->tbl, c->verb);
		if (!same(e->sql, o->sql) || !same_nocase(e->tbl, o->tbl))
			return fail(c, "index '%s' is not allocrr's: its definition differs from schema version %d's: "
				       "refusing to %s", o->name, c->version, c->verb);
		return 0;
	}
	if (!strcmp(type, "table")) {
		if (o->sql && !sqlite3_strnicmp(o->sql, "CREATE VIRTUAL", 14))
			return fail(c, "virtual table '%s' is not part of allocrr's schema: refusing to %s (a virtual "
				       "table runs a module's code when read)", o->name, c->verb);
		if (!e) {
			if (c->version == 0 && sqlite3_strnicmp(o->name, "sqlite_", 7))
				return fail(c, "not a results database (schema version 0, and it holds table '%s'): "
					       "refusing to %s; name a new file or a database allocreplay wrote",
					    o->name, c->verb);
			if (find(&c->later, o->name))
				return fail(c, "table '%s' is not in allocrr's schema version %d, the version the database "
					       "says it has, but in a later one: refusing to %s (its version understates "
					       "its schema)",
					    o->name, c->version, c->verb);
			return 0; /* a table of their own: never read, never copied */
		}
		return check_table(c, o->name);
	}
	return fail(c, "%s '%s' is not part of allocrr's schema: refusing to %s", type, o->name, c->verb);
}

/* allocrr's schema of version v, in a new in-memory database. */
static sqlite3 *expected(int v, char *err, size_t cap)
{
	sqlite3 *exp = NULL;
	if (sqlite3_open_v2(":memory:", &exp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK) {
		snprintf(err, cap, "no memory for allocrr's schema");
		sqlite3_close(exp);
		return NULL;
	}
	for (int i = 0; i < v; i++)
		if (ar_res_exec(exp, ar_res_migration(i), err, cap) != 0) {
			sqlite3_close(exp);
			return NULL;
		}
	return exp;
}

static int version_of(sqlite3 *db, const char *schema, int *v)
{
	char sql[64];
	sqlite3_stmt *st;
	snprintf(sql, sizeof sql, "PRAGMA \"%s\".user_version", schema);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int check(ctx_t *c)
{
	objs_t theirs = {0}, mine = {0};
	int rc = -1;
	if (version_of(c->db, c->schema, &c->version) != 0 || objs_load(c->db, c->schema, &theirs) != 0)
		return sql_fail(c, c->db);
	if (c->version < 0) {
		fail(c, "has schema version %d, which allocrr never writes: refusing to %s", c->version, c->verb);
		goto out;
	}
	if (c->version > ar_res_schema_version()) {
		fail(c, "has schema version %d, newer than this program's %d: refusing to %s; use a newer allocrr",
		     c->version, ar_res_schema_version(), c->verb);
		goto out;
	}
	char e[256];
	if (!(c->exp = expected(c->version, e, sizeof e))) {
		fail(c, "allocrr's own schema version %d does not build: %s", c->version, e);
		goto out;
	}
	if (objs_load(c->exp, "main", &mine) != 0) {
		sql_fail(c, c->exp);
		goto out;
	}
	if (c->version > 0 && c->version < ar_res_schema_version()) {
		/* A table a later migration creates (sites, from 8) in a database
		 * at an older version is not a table of their own. */
		sqlite3 *latest = expected(ar_res_schema_version(), e, sizeof e);
		int lrc = latest ? objs_load(latest, "main", &c->later) : -1;
		sqlite3_close(latest);
		if (lrc != 0) {
			fail(c, "allocrr's own schema version %d does not build", ar_res_schema_version());
			goto out;
		}
	}
	for (size_t i = 0; i < theirs.n; i++)
		if (check_obj(c, &mine, &theirs.v[i]) != 0)
			goto out;
	for (size_t i = 0; i < mine.n; i++)
		if (!find(&theirs, mine.v[i].name) && strncmp(mine.v[i].name, "sqlite_autoindex_", 17)) {
			fail(c, "%s '%s' of allocrr's schema version %d is missing: refusing to %s (not a results "
				"database of that version, or damaged)", mine.v[i].type, mine.v[i].name, c->version, c->verb);
			goto out;
		}
	rc = 0;
out:
	objs_free(&theirs);
	objs_free(&mine);
	objs_free(&c->later);
	objs_free(&c->kinds_db);
	objs_free(&c->kinds_exp);
	c->kinds_loaded = 0;
	sqlite3_close(c->exp);
	c->exp = NULL;
	return rc;
}

int ar_res_schema_check(sqlite3 *db, const char *schema, const char *path, const char *verb, int *version,
			char *err, size_t cap)
{
	ctx_t c = {db, NULL, schema, path, verb, -1, err, cap, {NULL, 0}, {NULL, 0}, {NULL, 0}, 0};
	/* One read transaction: the version and the objects of one moment. */
	int own = sqlite3_get_autocommit(db);
	if (own && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return sql_fail(&c, db);
	int rc = check(&c);
	if (own)
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (version)
		*version = c.version;
	return rc;
}

void ar_res_db_harden(sqlite3 *db)
{
	/* No writes to sqlite_master or other ways to corrupt the file through
	 * SQL; functions in the schema (views, defaults, indexes) limited to
	 * the innocuous ones; triggers never fire (allocrr's schema has none,
	 * so one that slipped in after the check stays inert); no extensions. */
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
}
