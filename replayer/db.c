/*
 * db.c — allocreplay's writes to the results database: store one run with
 * everything it measured in a single transaction, so a killed allocreplay
 * leaves either the whole run or nothing; and the comparison's figures of a
 * run (ar_db_run_figures), the same for the database and the printed
 * table. Opening, the schema and its migrations belong to the results
 * module (results/db.c, results/sql/).
 *
 * NULL discipline: a figure the worker did not report (a crashed run, a
 * counter the kernel refused, allocator statistics an allocator does not
 * offer, latencies and timer_resolution_ns of a run under --timing none) is
 * stored as NULL, never as 0. runs.timing_every is the period the worker
 * used (1 every call, 0 none, N one call in N; worker_main.c).
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "worker_clock.h"
#include "replay.h"

/* Opening and migrating belong to the results module (results/db.c). */
int ar_db_open(const char *path, sqlite3 **out, char *err, size_t cap)
{
	return ar_res_db_open(path, out, err, cap);
}

void ar_db_close(sqlite3 *db)
{
	ar_res_db_close(db);
}

/* ---- binding helpers: 1-based positional parameters ---- */
static void b_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void b_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

/* A byte count SQLite's signed integers must hold: a hostile trace's live
 * bytes can reach 2^64-1 (workload.h), stored as 2^63-1 rather than as a
 * negative number (docs/RESULTS.md). */
static void b_bytes(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
}

/* A scalar from the worker's report, or NULL when it did not report it. */
static void b_scalar(sqlite3_stmt *st, int i, const ar_run_t *r, const char *name)
{
	uint64_t v;
	if (ar_run_scalar(r, name, &v))
		b_u64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int step_done(sqlite3 *db, sqlite3_stmt *st, char *err, size_t cap)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, cap, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

static int prep(sqlite3 *db, const char *sql, sqlite3_stmt **st, char *err, size_t cap)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		snprintf(err, cap, "%s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static void iso_utc(uint64_t unix_ns, char *out, size_t cap)
{
	time_t s = (time_t)(unix_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void new_uuid(char out[37])
{
	unsigned char b[16];
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() << 44;
		for (int i = 0; i < 16; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			b[i] = (unsigned char)(x >> 56);
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
}

static void b_num(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* What the recorded program ran on and measured (recorded.c): facts of the
 * trace file, so the same for every run; set on the row whether it is new
 * or was stored by an allocreplay that did not read them yet. */
static int store_recorded(sqlite3 *db, const ar_trace_info_t *t, char *err, size_t cap)
{
	sqlite3_stmt *st;
	if (prep(db,
		 "UPDATE traces SET recorded_allocator = ?2, recorded_allocator_library = ?3,"
		 " recorded_allocator_version = ?4, recorded_duration_ns = ?5, recorded_start_rss_bytes = ?6,"
		 " recorded_peak_rss_bytes = ?7, recorded_rss_samples = ?8, recorded_reason = ?9,"
		 " recorded_cpu_ns = ?10, recorded_recorder_bytes = ?11, recorded_recorder_cpu_ns = ?12"
		 " WHERE sha256 = ?1",
		 &st, err, cap))
		return -1;
	const ar_recorded_t *r = &t->rec;
	b_text(st, 1, t->sha256);
	b_text(st, 2, r->allocator);
	b_text(st, 3, r->library);
	b_text(st, 4, r->version);
	b_num(st, 5, r->duration_ns);
	b_num(st, 6, r->start_rss_bytes);
	b_num(st, 7, r->peak_rss_bytes);
	b_u64(st, 8, r->rss_samples);
	b_text(st, 9, r->reason);
	b_num(st, 10, r->cpu_ns);
	b_num(st, 11, r->recorder_bytes);
	b_num(st, 12, r->recorder_cpu_ns);
	return step_done(db, st, err, cap);
}

static int store_trace(sqlite3 *db, const ar_trace_info_t *t, char *err, size_t cap)
{
	sqlite3_stmt *st;
	if (prep(db,
		 "INSERT OR IGNORE INTO traces (sha256, name, program, file_bytes, recorded_unix_ns, status,"
		 " events, threads, calls, trace_allocs, peak_live_bytes, peak_live_blocks,"
		 " skipped_unknown_frees, unknown_reallocs, lost_blocks, trace_null_results,"
		 " cross_thread_deps, reuse_deps, slots, window_trace, preexisting_blocks, preexisting_bytes,"
		 " heap_at_start_bytes)"
		 " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)",
		 &st, err, cap))
		return -1;
	const ar_wl_header_t *w = t->wl;
	b_text(st, 1, t->sha256);
	b_text(st, 2, t->name);
	b_text(st, 3, t->program);
	b_u64(st, 4, t->file_bytes);
	if (t->recorded_unix_ns)
		b_u64(st, 5, t->recorded_unix_ns);
	b_text(st, 6, t->status);
	b_u64(st, 7, w->events);
	b_u64(st, 8, w->nthreads);
	b_u64(st, 9, w->calls);
	b_u64(st, 10, w->trace_allocs);
	b_bytes(st, 11, w->peak_live_bytes);
	b_u64(st, 12, w->peak_live_blocks);
	b_u64(st, 13, w->skipped_unknown_frees);
	b_u64(st, 14, w->unknown_reallocs);
	b_u64(st, 15, w->lost_blocks);
	b_u64(st, 16, w->trace_null_results);
	b_u64(st, 17, w->cross_thread_deps);
	b_u64(st, 18, w->reuse_deps);
	b_u64(st, 19, w->nslots);
	/* SPEC 6.11: a window trace's pre-existing blocks; the heap at its
	 * start stays NULL when unknown (0 in the workload). */
	b_u64(st, 20, w->window);
	b_u64(st, 21, w->preexisting_blocks);
	b_bytes(st, 22, w->preexisting_bytes);
	if (w->heap_at_start_bytes)
		b_bytes(st, 23, w->heap_at_start_bytes);
	if (step_done(db, st, err, cap))
		return -1;
	return store_recorded(db, t, err, cap);
}

static int store_allocator(sqlite3 *db, const ar_allocator_t *a, char *err, size_t cap)
{
	sqlite3_stmt *st;
	if (prep(db,
		 "INSERT OR IGNORE INTO allocators (name, version, package_version, kind, description)"
		 " VALUES (?1,?2,?3,?4,?5)",
		 &st, err, cap))
		return -1;
	b_text(st, 1, a->name);
	sqlite3_bind_text(st, 2, a->version, -1, SQLITE_TRANSIENT);
	b_text(st, 3, a->package_version);
	sqlite3_bind_text(st, 4, a->kind == AR_ALLOC_OURS ? "ours" : "system", -1, SQLITE_STATIC);
	b_text(st, 5, a->description);
	return step_done(db, st, err, cap);
}

static const char *const run_cols[] = {
	"run_uuid", "trace_sha256", "allocator", "allocator_version", "repetition", "status", "reason",
	"started_at", "host", "cpu_model", "cpus", "kernel", "glibc_version", "allocrr_version",
	"options", "touch", "preload", "expected_library", "library_path", "threads", "ops", "wall_ns",
	"cpu_user_ns", "cpu_sys_ns", "timed_ns", "ops_per_sec", "timer", "ticks_per_ns",
	"timer_overhead_ns", "timer_overhead_median_ns", "baseline_rss_bytes", "peak_rss_bytes",
	"peak_heap_rss_bytes", "peak_rss_method", "final_heap_rss_bytes", "maxrss_bytes", "peak_live_bytes",
	"fragmentation", "minor_faults", "major_faults", "voluntary_ctx_switches",
	"involuntary_ctx_switches", "failed_allocs", "leaked_blocks", "dep_waits", "dep_blocked",
	"op_checksum", "allocs_expected", "frees_expected", "allocator_allocs_delta",
	"allocator_frees_delta", "worker_stderr", "sync_waits", "counters_source", "access_pass_ns",
	"access_pass_blocks", "access_pass_bytes", "access_pass_lines", "timing_every",
	"timer_resolution_ns",
};
#define NRUNCOLS ((int)(sizeof run_cols / sizeof run_cols[0]))

/* Column index (1-based parameter) of a runs column. */
static int col(const char *name)
{
	for (int i = 0; i < NRUNCOLS; i++)
		if (!strcmp(run_cols[i], name))
			return i + 1;
	abort(); /* a typo in this file */
}

/* Under --counters sim the worker ran inside valgrind: its speed and the
 * RSS above baseline are valgrind's, not the allocator's, so the derived
 * figures stay NULL (wall_ns and peak_rss_bytes keep what was measured;
 * docs/RESULTS.md). */
static int run_is_sim(const ar_run_t *r)
{
	return !strcmp(r->counters_mode, "sim");
}

static double scalar_or_nan(const ar_run_t *r, const char *name)
{
	uint64_t v;
	return ar_run_scalar(r, name, &v) ? (double)v : NAN;
}

void ar_db_run_figures(const ar_trace_info_t *t, const ar_run_t *r, ar_res_run_t *f)
{
	memset(f, 0, sizeof *f);
	for (int m = 0; m < AR_RES_NFIG; m++)
		f->fig[m] = NAN;
	f->run_uuid = r->run_uuid[0] ? (char *)r->run_uuid : NULL;
	f->repetition = r->repetition;
	f->status = (char *)r->status;
	f->reason = r->reason[0] ? (char *)r->reason : NULL;
	f->library_path = r->served[0] ? (char *)r->served : NULL;
	f->ops = scalar_or_nan(r, "calls");
	f->wall_ns = scalar_or_nan(r, "wall_ns");
	f->cpu_ns = scalar_or_nan(r, "cpu_user_ns") + scalar_or_nan(r, "cpu_sys_ns");
	f->peak_rss_bytes = run_is_sim(r) ? NAN : scalar_or_nan(r, "peak_rss_bytes");
	int sim = run_is_sim(r);
	if (!sim && f->ops >= 0 && f->wall_ns > 0)
		f->fig[AR_RES_OPS] = f->ops * 1e9 / f->wall_ns;
	const ar_lat_t *l = &r->lat[AR_WL_NCALLS];
	if (r->hist[AR_WL_NCALLS] && r->hist[AR_WL_NCALLS]->count && ar_run_ticks_per_ns(r) > 0) {
		f->fig[AR_RES_P50] = l->p50_ns;
		f->fig[AR_RES_P99] = l->p99_ns;
		f->fig[AR_RES_P999] = l->p999_ns;
		f->fig[AR_RES_MAX] = l->max_ns;
	}
	uint64_t base, peak, fin;
	if (!sim && ar_run_scalar(r, "baseline_rss_bytes", &base) && ar_run_scalar(r, "peak_rss_bytes", &peak)) {
		f->fig[AR_RES_HEAP] = peak > base ? (double)(peak - base) : 0;
		if (t->wl->peak_live_bytes)
			f->fig[AR_RES_FRAG] = f->fig[AR_RES_HEAP] / (double)t->wl->peak_live_bytes;
		if (ar_run_scalar(r, "final_rss_bytes", &fin))
			f->fig[AR_RES_FINAL] = (double)((int64_t)fin - (int64_t)base);
	}
	/* reported only when calls were timed: NAN (NULL) under --timing none */
	uint64_t res;
	if (ar_run_ticks_per_ns(r) > 0 && ar_run_scalar(r, "timer_resolution_ticks", &res))
		f->fig[AR_RES_TIMER_RES] = (double)res / ar_run_ticks_per_ns(r);
	f->fig[AR_RES_MINF] = scalar_or_nan(r, "minor_faults");
	f->fig[AR_RES_MAJF] = scalar_or_nan(r, "major_faults");
	f->fig[AR_RES_FAILED] = scalar_or_nan(r, "failed_allocs");
}

static int store_run_row(sqlite3 *db, const ar_trace_info_t *t, const ar_allocator_t *a,
			 const ar_machine_t *m, const char *options, const ar_run_t *r,
			 const char *uuid, char *err, size_t cap)
{
	char sql[4096] = "INSERT INTO runs (";
	for (int i = 0; i < NRUNCOLS; i++) {
		strcat(sql, run_cols[i]);
		strcat(sql, i + 1 < NRUNCOLS ? "," : ") VALUES (");
	}
	for (int i = 0; i < NRUNCOLS; i++)
		strcat(sql, i + 1 < NRUNCOLS ? "?," : "?)");
	sqlite3_stmt *st;
	if (prep(db, sql, &st, err, cap))
		return -1;
	char when[32];
	iso_utc(r->started_unix_ns, when, sizeof when);
	b_text(st, col("run_uuid"), uuid);
	b_text(st, col("trace_sha256"), t->sha256);
	b_text(st, col("allocator"), a->name);
	sqlite3_bind_text(st, col("allocator_version"), a->version, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, col("repetition"), r->repetition);
	b_text(st, col("status"), r->status);
	b_text(st, col("reason"), r->reason);
	b_text(st, col("started_at"), when);
	b_text(st, col("host"), m->host);
	b_text(st, col("cpu_model"), m->cpu_model);
	sqlite3_bind_int64(st, col("cpus"), m->cpus);
	b_text(st, col("kernel"), m->kernel);
	b_text(st, col("glibc_version"), m->glibc);
	b_text(st, col("allocrr_version"), AR_REPLAY_VERSION);
	b_text(st, col("options"), options);
	b_text(st, col("touch"), r->touch);
	b_text(st, col("preload"), a->preload);
	b_text(st, col("expected_library"), a->library);
	b_text(st, col("library_path"), r->served);
	static const char *const direct[] = {
		"threads", "wall_ns", "cpu_user_ns", "cpu_sys_ns", "timed_ns", "baseline_rss_bytes",
		"peak_rss_bytes", "maxrss_bytes", "minor_faults", "major_faults",
		"voluntary_ctx_switches", "involuntary_ctx_switches", "failed_allocs", "leaked_blocks",
		"dep_waits", "dep_blocked", "allocs_expected", "frees_expected",
		"allocator_allocs_delta", "allocator_frees_delta", "sync_waits", "access_pass_ns",
		"access_pass_blocks", "access_pass_bytes", "access_pass_lines", "timing_every",
	};
	for (size_t i = 0; i < sizeof direct / sizeof *direct; i++)
		b_scalar(st, col(direct[i]), r, direct[i]);
	b_scalar(st, col("ops"), r, "calls");
	/* where the run's counters came from: what --counters asked for */
	if (r->counters_mode[0])
		b_text(st, col("counters_source"), r->counters_mode);
	uint64_t tsc, csum, oh;
	double tpn = ar_run_ticks_per_ns(r);
	/* the comparison's figures, as allocreplay's table shows them */
	ar_res_run_t f;
	ar_db_run_figures(t, r, &f);
	if (!isnan(f.fig[AR_RES_OPS]))
		sqlite3_bind_double(st, col("ops_per_sec"), f.fig[AR_RES_OPS]);
	if (!isnan(f.fig[AR_RES_TIMER_RES]))
		sqlite3_bind_double(st, col("timer_resolution_ns"), f.fig[AR_RES_TIMER_RES]);
	if (ar_run_scalar(r, "timer_tsc", &tsc))
		b_text(st, col("timer"), ar_timer_name(tsc));
	if (tpn > 0) {
		sqlite3_bind_double(st, col("ticks_per_ns"), tpn);
		if (ar_run_scalar(r, "timer_overhead_ticks", &oh))
			sqlite3_bind_double(st, col("timer_overhead_ns"), (double)oh / tpn);
		if (ar_run_scalar(r, "timer_overhead_median_ticks", &oh))
			sqlite3_bind_double(st, col("timer_overhead_median_ns"), (double)oh / tpn);
	}
	b_bytes(st, col("peak_live_bytes"), t->wl->peak_live_bytes);
	if (!isnan(f.fig[AR_RES_HEAP]))
		b_u64(st, col("peak_heap_rss_bytes"), (uint64_t)f.fig[AR_RES_HEAP]);
	if (!isnan(f.fig[AR_RES_FRAG]))
		sqlite3_bind_double(st, col("fragmentation"), f.fig[AR_RES_FRAG]);
	if (!isnan(f.fig[AR_RES_FINAL]))
		sqlite3_bind_int64(st, col("final_heap_rss_bytes"), (sqlite3_int64)f.fig[AR_RES_FINAL]);
	if (ar_run_scalar(r, "peak_rss_exact", &oh))
		b_text(st, col("peak_rss_method"), oh ? "hwm" : "sampled");
	if (ar_run_scalar(r, "op_checksum", &csum)) {
		char hex[24];
		snprintf(hex, sizeof hex, "%016llx", (unsigned long long)csum);
		b_text(st, col("op_checksum"), hex);
	}
	b_text(st, col("worker_stderr"), r->stderr_tail);
	return step_done(db, st, err, cap);
}

static int store_children(sqlite3 *db, int64_t id, const ar_run_t *r, char *err, size_t cap)
{
	sqlite3_stmt *st;
	double tpn = ar_run_ticks_per_ns(r);
	if (prep(db, "INSERT INTO latency (run_id, op, count, mean_ns, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns)"
		 " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)", &st, err, cap))
		return -1;
	for (int k = 0; k <= AR_WL_NCALLS; k++) {
		const ar_lat_t *l = &r->lat[k];
		if (!r->hist[k] || !r->hist[k]->count || tpn <= 0)
			continue;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, k == AR_WL_NCALLS ? "all" : ar_wl_kind_name((unsigned)k), -1,
				  SQLITE_STATIC);
		sqlite3_bind_double(st, 3, l->count);
		sqlite3_bind_double(st, 4, l->mean_ns);
		sqlite3_bind_double(st, 5, l->min_ns);
		sqlite3_bind_double(st, 6, l->p50_ns);
		sqlite3_bind_double(st, 7, l->p90_ns);
		sqlite3_bind_double(st, 8, l->p99_ns);
		sqlite3_bind_double(st, 9, l->p999_ns);
		sqlite3_bind_double(st, 10, l->max_ns);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (prep(db, "INSERT INTO histogram (run_id, op, lo_ns, hi_ns, count) VALUES (?1,?2,?3,?4,?5)", &st, err, cap))
		return -1;
	for (int k = 0; k < AR_WL_NCALLS && tpn > 0; k++) {
		const ar_hist_t *h = r->hist[k];
		if (!h)
			continue;
		for (unsigned b = 0; b < AR_HIST_BUCKETS; b++) {
			if (!h->b[b])
				continue;
			uint64_t lo = ar_hist_bucket_lo(b);
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_text(st, 2, ar_wl_kind_name((unsigned)k), -1, SQLITE_STATIC);
			sqlite3_bind_double(st, 3, (double)lo / tpn);
			sqlite3_bind_double(st, 4, (double)(lo + ar_hist_bucket_width(b)) / tpn);
			b_u64(st, 5, h->b[b]);
			if (sqlite3_step(st) != SQLITE_DONE)
				goto fail;
			sqlite3_reset(st);
		}
	}
	sqlite3_finalize(st);
	uint64_t base = 0;
	ar_run_scalar(r, "baseline_anon_bytes", &base);
	if (prep(db, "INSERT INTO rss_samples (run_id, sample, event, elapsed_ns, anon_rss_bytes, heap_rss_bytes, live_bytes)"
		 " VALUES (?1,?2,?3,?4,?5,?6,?7)", &st, err, cap))
		return -1;
	for (size_t i = 0; i < r->nrss; i++) {
		const ar_rss_point_t *p = &r->rss[i];
		sqlite3_bind_int64(st, 1, id);
		b_u64(st, 2, p->sample);
		b_u64(st, 3, p->event);
		b_u64(st, 4, p->elapsed_ns);
		b_u64(st, 5, p->rss_bytes);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)p->rss_bytes - (sqlite3_int64)base);
		b_u64(st, 7, p->live_bytes);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (prep(db, "INSERT INTO counters (run_id, name, value, reason, source) VALUES (?1,?2,?3,?4,?5)", &st, err, cap))
		return -1;
	for (size_t i = 0; i < r->ncounters; i++) {
		const ar_kv_t *c = &r->counters[i];
		sqlite3_bind_int64(st, 1, id);
		b_text(st, 2, c->name);
		if (c->has_value)
			b_u64(st, 3, c->value);
		else
			sqlite3_bind_null(st, 3);
		b_text(st, 4, c->reason);
		b_text(st, 5, c->source[0] ? c->source : "perf");
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (prep(db, "INSERT OR REPLACE INTO allocator_stats (run_id, name, value) VALUES (?1,?2,?3)", &st, err, cap))
		return -1;
	for (size_t i = 0; i < r->nastats; i++) {
		sqlite3_bind_int64(st, 1, id);
		b_text(st, 2, r->astats[i].name);
		b_u64(st, 3, r->astats[i].value);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
fail:
	snprintf(err, cap, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return -1;
}

int64_t ar_db_store_run(sqlite3 *db, const ar_trace_info_t *t, const ar_allocator_t *a,
			const ar_machine_t *m, const char *options, ar_run_t *r, char *err,
			size_t cap)
{
	char e2[64], uuid[37];
	r->run_uuid[0] = '\0';
	if (ar_res_exec(db, "BEGIN IMMEDIATE", err, cap) != 0)
		return -1;
	new_uuid(uuid);
	int64_t id = -1;
	if (store_trace(db, t, err, cap) == 0 && store_allocator(db, a, err, cap) == 0 &&
	    store_run_row(db, t, a, m, options, r, uuid, err, cap) == 0) {
		id = sqlite3_last_insert_rowid(db);
		/* Latency, histogram, RSS samples, counters and allocator
		 * statistics are stored for ok runs only: a failed run's are at
		 * best those of a replay that stopped part-way, and a query must
		 * not be able to pool them with whole ones (docs/RESULTS.md). */
		if (!strcmp(r->status, AR_ST_OK) && store_children(db, id, r, err, cap) != 0)
			id = -1;
	}
	if (id > 0 && ar_res_exec(db, "COMMIT", err, cap) == 0) {
		memcpy(r->run_uuid, uuid, sizeof uuid);
		return id;
	}
	ar_res_exec(db, "ROLLBACK", e2, sizeof e2);
	return -1;
}

int ar_db_store_predictions(sqlite3 *db, const ar_res_trace_t *rt, char *err, size_t cap)
{
	if (ar_res_exec(db, "BEGIN IMMEDIATE", err, cap))
		return -1;
	for (size_t k = 0; k < rt->nallocs; k++)
		for (size_t i = 0; i < rt->allocs[k].nruns; i++) {
			const ar_res_run_t *f = &rt->allocs[k].runs[i];
			sqlite3_stmt *st;
			if (!f->run_uuid)
				continue;
			if (prep(db,
				 "UPDATE runs SET predicted_time_ns = ?2, predicted_peak_rss_bytes = ?3,"
				 " prediction_reason = ?4, fidelity_time_error = ?5, fidelity_rss_error = ?6,"
				 " fidelity_reason = ?7 WHERE run_uuid = ?1",
				 &st, err, cap))
				goto fail;
			b_text(st, 1, f->run_uuid);
			b_num(st, 2, f->fig[AR_RES_PRED_TIME]);
			b_num(st, 3, f->fig[AR_RES_PRED_RSS]);
			b_text(st, 4, f->prediction_reason);
			b_num(st, 5, f->fig[AR_RES_FID_TIME]);
			b_num(st, 6, f->fig[AR_RES_FID_RSS]);
			b_text(st, 7, f->fidelity_reason);
			if (step_done(db, st, err, cap))
				goto fail;
		}
	return ar_res_exec(db, "COMMIT", err, cap);
fail:
	ar_res_exec(db, "ROLLBACK", NULL, 0);
	return -1;
}
