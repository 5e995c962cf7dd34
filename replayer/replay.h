/*
 * replay.h — the parent side of allocreplay: what one worker run produced
 * (ar_run_t, filled by runner.c from the worker's report), the trace and
 * machine it ran on, and the functions that store (db.c) and print
 * (table.c) runs. Only the parent process uses these; only db.c touches
 * SQLite.
 *
 * Invariants: a run always has a status; status "ok" implies the report
 * was complete (its Z line seen) and the worker proved the allocator; every
 * figure in an ar_run_t was measured by the worker (or derived from
 * measured figures here), none is a default standing in for a missing one —
 * missing values are flagged (has_*) and stored as NULL.
 */
#ifndef AR_REPLAY_H
#define AR_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "ar_alloc.h"
#include "hist.h"
#include "workload.h"

#define AR_REPLAY_VERSION "1.0.0"

typedef struct ar_kv {
	char name[64];
	uint64_t value;
	int has_value;    /* counters: 0 = not available (NULL) */
	char reason[200]; /* counters: why not, or how it was counted */
	char source[8];   /* counters: "perf" or "sim" (counters.source) */
} ar_kv_t;

typedef struct ar_lat {
	double count, mean_ns, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
} ar_lat_t;

typedef struct ar_rss_point {
	uint64_t sample, event, elapsed_ns, rss_bytes, live_bytes;
} ar_rss_point_t;

/* Status strings stored in runs.status. */
#define AR_ST_OK "ok"
#define AR_ST_WRONG "wrong_allocator"
#define AR_ST_UNSUPPORTED "unsupported"
#define AR_ST_CRASHED "crashed"
#define AR_ST_TIMEOUT "timeout"
#define AR_ST_OOM "oom"
#define AR_ST_ERROR "error"
/* The largest worker report allocreplay reads (runner.c). */
#define AR_REPORT_MAX (64u << 20)

typedef struct ar_run {
	/* what was asked */
	char allocator[128]; /* --route: "BASE+NAME[RULE]..." */
	int repetition; /* 1-based */
	char touch[8];
	char counters_mode[8]; /* --counters: perf, sim or none */
	/* outcome */
	char status[24];
	char reason[1024];
	char served[AR_ALLOC_PATH_MAX]; /* library proven to serve malloc ("" unknown) */
	int complete;                  /* the report ended with Z */
	uint64_t started_unix_ns;
	/* S lines, by name */
	ar_kv_t *scalars;
	size_t nscalars;
	/* per op kind latency (ticks), AR_WL_NCALLS = all kinds merged */
	ar_hist_t *hist[AR_WL_NCALLS + 1];
	ar_lat_t lat[AR_WL_NCALLS + 1];
	ar_rss_point_t *rss;
	size_t nrss;
	ar_kv_t *counters;
	size_t ncounters;
	ar_kv_t *astats;
	size_t nastats;
	char stderr_tail[2048];
	char run_uuid[37]; /* runs.run_uuid once ar_db_store_run committed it, else "" */
} ar_run_t;

/* Scalar `name` of a run; 1 and *v when the worker reported it, else 0. */
int ar_run_scalar(const ar_run_t *r, const char *name, uint64_t *v);
/* Ticks per ns of the run's clock (from the report), 0 when unknown. */
double ar_run_ticks_per_ns(const ar_run_t *r);
void ar_run_free(ar_run_t *r);

/* Where and how the worker runs. */
typedef struct ar_run_opts {
	char worker[4096];
	const char *touch;
	unsigned timeout_s;
	const char *counters; /* "perf", "sim" or "none" (--counters) */
	const char *timing;   /* the worker's --timing: "every", "none" or "sample:N" */
	int access_pass;      /* --access-pass */
	char valgrind[4096];  /* sim: the valgrind command to run the worker under */
	char sim_dir[4096];   /* sim: where callgrind profiles are written (then removed) */
	char **extra_args;    /* --route: more worker arguments, NULL-terminated; or NULL */
	char workload_memory[24]; /* the worker's --workload-memory; "" = its default */
} ar_run_opts_t;

/*
 * Run one worker for allocator a on the workload file, fill *r. Never
 * fails as a whole: whatever happens (cannot exec, crash, timeout, OOM,
 * wrong library) ends up in r->status / r->reason.
 */
void ar_run_worker(const ar_run_opts_t *o, const ar_allocator_t *a, const char *workload,
		   int repetition, ar_run_t *r);

/* ---- recorded.c ---- */
/* What the recorded program ran on and measured (trace format 1.1), as the
 * traces table stores it: NAN / "" when unknown, reason says why. */
typedef struct ar_recorded {
	char allocator[64]; /* the registry's name for it; "" when none matches */
	char library[512];  /* the object that served malloc, as recorded */
	char version[64];
	double duration_ns, start_rss_bytes, peak_rss_bytes;
	double cpu_ns; /* user + system CPU time of the whole process */
	double recorder_bytes; /* the recorder's own peak mapping, inside the RSS figures */
	double recorder_cpu_ns; /* the recorder's own part of cpu_ns (its writer, its work in the calls) */
	uint64_t rss_samples;
	char reason[1024];
} ar_recorded_t;
/* Fill *rec from an open trace's ALLOCATOR, PROCESS and RSS_SAMPLE records
 * (and its footer's end time). */
void ar_recorded_read(const ar_reader_t *r, ar_recorded_t *rec);

/* A trace as stored in the traces table. */
typedef struct ar_trace_info {
	char sha256[65];
	char name[256];   /* file name */
	char path[4096];  /* as given on the command line */
	char program[4096];
	uint64_t file_bytes;
	uint64_t recorded_unix_ns;
	const char *status; /* complete, truncated, corrupt */
	const ar_wl_header_t *wl;
	int cache_hit;
	ar_recorded_t rec;
} ar_trace_info_t;

typedef struct ar_machine {
	char host[256];
	char cpu_model[256];
	long cpus;
	char kernel[256];
	char glibc[64];
} ar_machine_t;

void ar_machine_probe(ar_machine_t *m);

/* ---- db.c ---- */
#include "ar_results.h"
/* Open or create the results database at path, migrate its schema to the
 * current version (results/db.c). 0, or -1 with a message in err. */
int ar_db_open(const char *path, sqlite3 **db, char *err, size_t errcap);
void ar_db_close(sqlite3 *db);
/* Store one run (and its trace, allocator rows when new) in one
 * transaction; the run's child rows (latency, histogram, rss_samples,
 * counters, allocator_stats) only when its status is ok. Returns the new
 * run_id (> 0) and sets r->run_uuid once committed, or -1 with err (and
 * nothing of the run stored). */
int64_t ar_db_store_run(sqlite3 *db, const ar_trace_info_t *t, const ar_allocator_t *a,
			const ar_machine_t *m, const char *options, ar_run_t *r, char *err,
			size_t errcap);
/* The comparison's figures of run r (results/ar_results.h): exactly what
 * ar_db_store_run stores for it and what allocreplay's table and --json
 * aggregate. Its strings point into r. */
void ar_db_run_figures(const ar_trace_info_t *t, const ar_run_t *r, ar_res_run_t *f);

/* Store the predictions and fidelity ar_res_finish computed for the runs
 * of rt that are in the database (run_uuid set), in one transaction. 0, or
 * -1 with err. */
int ar_db_store_predictions(sqlite3 *db, const ar_res_trace_t *rt, char *err, size_t errcap);

/* ---- table.c ---- */
#include <stdio.h>
/* The comparison of one trace's n runs (results/ar_results.h), with what
 * the recorded program ran on; free it with ar_res_trace_free. */
void ar_table_build(ar_res_trace_t *rt, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n);
/* Print a comparison ar_table_build made, as a table or as JSON. */
void ar_table_print_built(FILE *out, const ar_trace_info_t *t, const ar_res_trace_t *rt);
void ar_json_print_built(FILE *out, const ar_res_trace_t *rt, int first);
/* Print the comparison table of n runs of one trace (results/render.c's,
 * the same as allocreport's). */
void ar_table_print(FILE *out, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n);
/* The comparison as one JSON document (results/render.c's format, the same
 * as allocreport --format json): ar_json_begin, then ar_json_runs once per
 * trace (first = 1 for the first), then ar_json_end. */
void ar_json_begin(FILE *out, const char *db_path);
void ar_json_runs(FILE *out, const ar_trace_info_t *t, ar_run_t *const *runs, size_t n, int first);
void ar_json_end(FILE *out);

#endif
