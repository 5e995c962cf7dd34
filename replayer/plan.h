/*
 * plan.h — allocreplay's first two steps: the command line into
 * ar_replay_options_t (getopt_long, with the conventions of common/ar_cli.h),
 * then the plan: which allocators run, which worker binary (and, for
 * --counters sim, which valgrind) runs them, and the options string stored
 * with every run. allocreplay.c carries the plan out.
 *
 * Functions that can fail have said why on stderr ("allocreplay: ...")
 * when they return, and return the exit status: 1 for a usage error, 2 for
 * a runtime one (common/ar_cli.h).
 */
#ifndef AR_PLAN_H
#define AR_PLAN_H

#include "replay.h"
#include "route.h"

#define AR_PLAN_MAX_ALLOCS 32
/* The default --timing: 1 heap call in this many timed (docs/BENCHMARKS.md,
 * "Sampled timing", measured the choice). */
#define AR_PLAN_SAMPLE_EVERY 256

/* What the command line asked for. */
typedef struct ar_replay_options {
	const char *db_path, *touch, *counters;
	char *names; /* every -a's NAMES, joined by commas; NULL without -a */
	const char *timing; /* --timing: "every", "none" or "sample:N" */
	unsigned repeat, timeout_s;
	int all, json, list, quiet, access_pass;
	int cache_clean;                /* --cache-clean */
	unsigned long long cache_max;   /* --cache-max, else ALLOCRR_CACHE_MAX, else the default */
	unsigned long long workload_memory; /* --workload-memory; 0 = the worker's default */
	ar_route_set_t route;           /* --route RULE... (route.h); route.nrules 0 without */
	int no_baseline;                /* --no-baseline: not also the recorded allocator */
	int plan;                       /* --plan: print the jobs (plan_jobs.c), run nothing */
	const char *plan_format;        /* --plan-format: "shell", "json" or "slurm" */
	const char *db_dir;             /* --db-dir: where the jobs' databases go (NULL: ".") */
	char **traces; /* the positional arguments, in their order */
	int ntraces;
} ar_replay_options_t;

/* What will run: the allocators, how each worker starts, and the options
 * string stored with every run. */
typedef struct ar_plan {
	ar_allocator_t allocs[AR_PLAN_MAX_ALLOCS];
	int nallocs;
	ar_run_opts_t run;
	char options[256];
} ar_plan_t;

/* argv into *o: options before or after the traces, checked. Returns -1 to
 * go on, or the exit status (0 after --help or --version, 1 for a bad
 * command line, said in one line and a hint). */
int ar_plan_parse_options(int argc, char **argv, ar_replay_options_t *o);

/* Print "allocreplay: note: LINE" on stderr, escaped for the terminal:
 * something the command decided on its own that the user should know. */
void ar_plan_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print the registry's allocators (--list). Returns 0. */
int ar_plan_list_allocators(void);

/* Everything decided before the first trace: resolve the allocators, find
 * the worker ($ALLOCRR_WORKER, else next to this executable, else
 * ../libexec/allocrr/) and, for --counters sim, valgrind and a private
 * directory for its profiles. 0, or the exit status. */
int ar_plan_make(const ar_replay_options_t *o, ar_plan_t *p);

/* ---- plan_jobs.c ---- */
/* --plan: print the matrix (every trace x allocator, each with all its
 * repetitions) as independent allocreplay commands, each into its own
 * database under o->db_dir, in o->plan_format: "shell" (one shell-quoted
 * command a line), "json" (one object a line: job, trace, sha256,
 * allocator, repeat, db, argv) or "slurm" (a job-array script, task k
 * running job k). The allocator the recorded program ran on is a job of
 * its own when the plan lacks it; every job runs with --no-baseline.
 * argv0 names the command the jobs run (kept when bare: found on each
 * machine's PATH). 0, or the exit status (2: a trace cannot be read,
 * nothing printed). */
int ar_plan_jobs_print(FILE *f, const ar_replay_options_t *o, const ar_plan_t *p, const char *argv0);

/* Undo what ar_plan_make left on disk (the profiles' directory). */
void ar_plan_cleanup(ar_plan_t *p);

#endif
