/*
 * sites.c — a trace's allocation sites in the results database (table
 * sites, migration 0008; docs/RESULTS.md "Allocation sites"): written by
 * `alloctrace stacks --db` (and so by allocreplay for a trace with stacks),
 * read by reports.
 *
 * Invariants: a trace's sites are replaced whole, inside a savepoint, so a
 * reader sees the old set or the new one, never a mix; a database from
 * before schema 8 has no sites, which loads as none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"

int ar_res_sites_store(sqlite3 *db, const char *trace_sha256, const ar_res_site_t *s, size_t n, char *err,
		       size_t errcap)
{
	sqlite3_stmt *del = NULL, *ins = NULL;
	int ok = 0;
	if (!db || !trace_sha256 || (n && !s)) {
		snprintf(err, errcap, "ar_res_sites_store: bad argument");
		return -1;
	}
	if (ar_res_exec(db, "SAVEPOINT sites_store", err, errcap) != 0)
		return -1;
	if (sqlite3_prepare_v2(db, "DELETE FROM sites WHERE trace_sha256 = ?1", -1, &del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO sites (trace_sha256, stack, calls, bytes, live_at_peak_bytes,"
			       " live_at_peak_blocks, temporary_calls, leaked_bytes, leaked_blocks)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
			       -1, &ins, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(del, 1, trace_sha256, -1, SQLITE_STATIC);
	if (sqlite3_step(del) != SQLITE_DONE)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const ar_res_site_t *x = &s[i];
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, trace_sha256, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, x->stack ? x->stack : "", -1, SQLITE_STATIC);
		const int64_t v[] = {x->calls,	       x->bytes,	x->live_at_peak_bytes, x->live_at_peak_blocks,
				     x->temporary_calls, x->leaked_bytes, x->leaked_blocks};
		for (int k = 0; k < 7; k++)
			sqlite3_bind_int64(ins, 3 + k, v[k]);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
	}
	ok = 1;
out:
	if (!ok)
		snprintf(err, errcap, "cannot store the sites of trace %.12s: %s", trace_sha256, sqlite3_errmsg(db));
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	char e2[256];
	if (!ok) {
		ar_res_exec(db, "ROLLBACK TO sites_store; RELEASE sites_store", e2, sizeof e2);
		return -1;
	}
	if (ar_res_exec(db, "RELEASE sites_store", err, errcap) != 0) {
		ar_res_exec(db, "ROLLBACK TO sites_store; RELEASE sites_store", e2, sizeof e2);
		return -1;
	}
	return 0;
}

ar_res_site_t *ar_res_sites_load(sqlite3 *db, const char *trace_sha256, size_t *n)
{
	*n = 0;
	sqlite3_stmt *st = NULL;
	if (!db || !trace_sha256 ||
	    sqlite3_prepare_v2(db,
			       "SELECT stack, calls, bytes, live_at_peak_bytes, live_at_peak_blocks, temporary_calls,"
			       " leaked_bytes, leaked_blocks FROM sites WHERE trace_sha256 = ?1"
			       " ORDER BY live_at_peak_bytes DESC, bytes DESC, stack",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st); /* no such table: a database before schema 8 */
		return NULL;
	}
	sqlite3_bind_text(st, 1, trace_sha256, -1, SQLITE_STATIC);
	ar_res_site_t *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? 2 * cap : 64;
			v = ar_res_xrealloc(v, cap * sizeof *v);
		}
		const unsigned char *stack = sqlite3_column_text(st, 0);
		ar_res_site_t *x = &v[len++];
		x->stack = ar_res_strdup(stack ? (const char *)stack : "");
		int64_t *f[] = {&x->calls,	      &x->bytes,	&x->live_at_peak_bytes, &x->live_at_peak_blocks,
				&x->temporary_calls, &x->leaked_bytes, &x->leaked_blocks};
		for (int k = 0; k < 7; k++)
			*f[k] = sqlite3_column_int64(st, 1 + k);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || !len) {
		ar_res_sites_free(v, len);
		return NULL;
	}
	*n = len;
	return v;
}

void ar_res_sites_free(ar_res_site_t *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].stack);
	free(s);
}
