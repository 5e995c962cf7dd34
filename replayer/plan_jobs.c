/*
 * plan_jobs.c — allocreplay --plan: the replay matrix written out as
 * independent jobs for an existing job engine (GNU parallel, Slurm arrays;
 * docs/DISTRIBUTED.md), instead of being run here one worker at a time.
 *
 * One job is one trace x one allocator x all its repetitions, as an
 * allocreplay command line of its own writing its own database
 * (DIR/<first 16 hex digits of the trace's SHA-256>-<allocator>.db), so
 * jobs share nothing and `allocreport merge` gathers them.
 *
 * Invariants: a job carries every option that changes what a run measures
 * or how it is named (--repeat, --timeout, --timing, --touch, --counters,
 * --access-pass, every --route, and the environment that picks the
 * allocator libraries, the worker and valgrind), so a job run on another
 * machine equals the serial run's runs of that trace and allocator; the
 * allocator the recorded program ran on (the baseline allocreplay adds on
 * its own, allocreplay.c trace_allocators) is a job of its own, and every
 * job runs with --no-baseline so no job replays it a second time. Options
 * that change nothing measured (--cache-max, --json) are left out;
 * --workload-memory is carried, since a streamed workload's ops/s include
 * its decoding (worker_main.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_trace_id.h"
#include "plan.h"

/* The environment that changes which code a job runs (plan.c's usage text). */
static const char *const carried_env[] = { "ALLOCRR_LIBDIR", "ALLOCRR_WORKER", "ALLOCRR_VALGRIND" };
#define NCARRIED (sizeof carried_env / sizeof carried_env[0])
#define JOB_MAX_ARGS (32 + 2 * AR_ROUTE_MAX_RULES)

/* One job: what it replays and its command line. */
typedef struct job {
	const char *trace;
	char sha256[65];
	const char *allocator;
	char db[4096 + 160];
	char *argv[JOB_MAX_ARGS + 1];
	int argc;
	char own[NCARRIED + AR_ROUTE_MAX_RULES + 1][4096 + 64]; /* the argv strings built here: one
								 * per carried variable and per rule,
								 * and --workload-memory's */
	int nown;
} job_t;

static void put_command(FILE *f, const job_t *j)
{
	for (int i = 0; i < j->argc; i++) {
		if (i)
			fputc(' ', f);
		ar_esc_shell_word(f, j->argv[i]);
	}
}

/* A string built for job j, kept in it: room for every carried variable
 * and every rule route.c accepts (AR_ROUTE_MAX_RULES). */
static char *own(job_t *j, const char *fmt, const char *a, const char *b)
{
	char *s = j->own[j->nown++];
	snprintf(s, sizeof j->own[0], fmt, a, b);
	return s;
}

/* JOB_MAX_ARGS holds the fixed options, the carried variables and two
 * words per rule. */
static void arg(job_t *j, char *s)
{
	j->argv[j->argc++] = s;
	j->argv[j->argc] = NULL;
}

/* The command line of job j (trace, sha256, allocator set). */
static void build_job(job_t *j, const ar_replay_options_t *o, const char *self, const char *dir)
{
	j->argc = j->nown = 0;
	int env = 0;
	for (size_t i = 0; i < NCARRIED; i++) {
		const char *v = getenv(carried_env[i]);
		if (v && *v) {
			if (!env++)
				arg(j, "env");
			arg(j, own(j, "%s=%s", carried_env[i], v));
		}
	}
	static char repeat[16], timeout[16];
	snprintf(repeat, sizeof repeat, "%u", o->repeat);
	snprintf(timeout, sizeof timeout, "%u", o->timeout_s);
	arg(j, (char *)self);
	arg(j, "-q");
	arg(j, "--no-baseline");
	arg(j, "-a");
	arg(j, (char *)j->allocator);
	arg(j, "--repeat");
	arg(j, repeat);
	arg(j, "--timeout");
	arg(j, timeout);
	arg(j, "--timing");
	arg(j, (char *)o->timing);
	arg(j, "--touch");
	arg(j, (char *)o->touch);
	arg(j, "--counters");
	arg(j, (char *)o->counters);
	if (o->access_pass)
		arg(j, "--access-pass");
	if (o->workload_memory) {
		char v[24];
		snprintf(v, sizeof v, "%llu", o->workload_memory);
		arg(j, own(j, "--workload-memory=%s%s", v, ""));
	}
	/* route.c joins the rules with ';' (no rule contains one) */
	static char rules[sizeof o->route.option];
	snprintf(rules, sizeof rules, "%s", o->route.option);
	char *save = NULL;
	for (char *r = o->route.nrules ? strtok_r(rules, ";", &save) : NULL; r; r = strtok_r(NULL, ";", &save)) {
		arg(j, "--route");
		arg(j, own(j, "%s%s", r, ""));
	}
	snprintf(j->db, sizeof j->db, "%s/%.16s-%s.db", dir, j->sha256, j->allocator);
	arg(j, "--db");
	arg(j, j->db);
	if (j->trace[0] == '-')
		arg(j, "--");
	arg(j, (char *)j->trace);
}

static void put_json_job(FILE *f, const job_t *j, unsigned k, unsigned repeat)
{
	fprintf(f, "{\"job\":%u,\"trace\":", k);
	ar_esc_json(f, j->trace);
	fputs(",\"sha256\":", f);
	ar_esc_json(f, j->sha256);
	fputs(",\"allocator\":", f);
	ar_esc_json(f, j->allocator);
	fprintf(f, ",\"repeat\":%u,\"db\":", repeat);
	ar_esc_json(f, j->db);
	fputs(",\"argv\":[", f);
	for (int i = 0; i < j->argc; i++) {
		if (i)
			fputc(',', f);
		ar_esc_json(f, j->argv[i]);
	}
	fputs("]}\n", f);
}

/* The allocator the recorded program ran on (the registry's name), when
 * the trace says and it is installed and not in the plan: the job
 * allocreplay would add on its own; "" otherwise. 0, or 2 when path is not
 * a trace the reader can open (said on stderr: a job would only fail). */
static int recorded_extra(const ar_plan_t *p, const char *path, char *out, size_t cap)
{
	out[0] = '\0';
	ar_reader_t *r;
	ar_error_t e;
	if (ar_reader_open(&r, path, &e) != 0) {
		size_t n = strlen(path); /* the reader's message starts with the path */
		const char *msg = !strncmp(e.msg, path, n) && !strncmp(e.msg + n, ": ", 2) ? e.msg + n + 2 : e.msg;
		return ar_cli_error(path, "%s", msg);
	}
	ar_recorded_t rec;
	ar_recorded_read(r, &rec);
	ar_reader_close(r);
	if (!rec.allocator[0])
		return 0;
	for (int i = 0; i < p->nallocs; i++)
		if (!strcmp(p->allocs[i].name, rec.allocator))
			return 0;
	ar_allocator_t a;
	if (ar_registry_find(rec.allocator, &a) == 0 && a.installed) {
		snprintf(out, cap, "%s", a.name);
		ar_plan_note("%s: also a job for %s, which the recorded program ran on: every ratio and "
			     "prediction is against it", path, a.name);
	}
	return 0;
}

/* Slurm: the job list as one array script, task k running job k. */
static void slurm_begin(FILE *f, unsigned njobs)
{
	fprintf(f, "#!/bin/bash\n"
		   "# allocreplay --plan --plan-format slurm: %u replay job(s) as a Slurm job array.\n"
		   "# Submit with sbatch; task k runs job k of allocreplay --plan and writes its\n"
		   "# own database; gather them with allocreport merge (docs/DISTRIBUTED.md).\n"
		   "#SBATCH --job-name=allocreplay\n"
		   "#SBATCH --array=0-%u\n"
		   "#SBATCH --ntasks=1\n"
		   "# one replay per node: two replays on one machine measure each other\n"
		   "#SBATCH --exclusive\n"
		   "set -u\n"
		   "case \"${SLURM_ARRAY_TASK_ID:?not a Slurm array task: set SLURM_ARRAY_TASK_ID}\" in\n",
		njobs, njobs ? njobs - 1 : 0);
}

static void slurm_end(FILE *f, unsigned njobs)
{
	fprintf(f, "*) echo \"allocreplay job array: no job $SLURM_ARRAY_TASK_ID (0 to %u)\" >&2; exit 1 ;;\n"
		   "esac\n", njobs ? njobs - 1 : 0);
}

/* One trace's part of the plan, read before anything is printed. */
typedef struct trace_plan {
	char sha256[65];
	char extra[128]; /* recorded_extra's */
} trace_plan_t;

/* Print the jobs of trace i (the plan's allocators, then the recorded
 * one); *k counts jobs over the whole plan. */
static void trace_jobs(FILE *f, const ar_replay_options_t *o, const ar_plan_t *p, const char *self,
		       int i, const trace_plan_t *tp, job_t *j, unsigned *k)
{
	j->trace = o->traces[i];
	memcpy(j->sha256, tp->sha256, sizeof j->sha256);
	const char *dir = o->db_dir ? o->db_dir : ".";
	int n = p->nallocs + (tp->extra[0] != 0);
	for (int a = 0; a < n; a++, ++*k) {
		j->allocator = a < p->nallocs ? p->allocs[a].name : tp->extra;
		build_job(j, o, self, dir);
		if (!strcmp(o->plan_format, "json")) {
			put_json_job(f, j, *k, o->repeat);
		} else if (!strcmp(o->plan_format, "slurm")) {
			fprintf(f, "%u) ", *k);
			put_command(f, j);
			fputs(" ;;\n", f);
		} else {
			put_command(f, j);
			fputc('\n', f);
		}
	}
}

int ar_plan_jobs_print(FILE *f, const ar_replay_options_t *o, const ar_plan_t *p, const char *argv0)
{
	/* The command the jobs run: as typed when found on PATH (each machine
	 * its own), else this executable's absolute path. */
	char self[4096];
	if (!strchr(argv0, '/'))
		snprintf(self, sizeof self, "%s", argv0);
	else if (!realpath("/proc/self/exe", self))
		snprintf(self, sizeof self, "%s", argv0);
	/* Every trace read first: a bad one prints no partial plan. */
	trace_plan_t *tp = calloc((size_t)o->ntraces, sizeof *tp);
	job_t *j = calloc(1, sizeof *j);
	if (!tp || !j) {
		free(tp);
		free(j);
		return ar_cli_error(NULL, "out of memory");
	}
	unsigned njobs = 0;
	for (int i = 0; i < o->ntraces; i++) {
		int rc = recorded_extra(p, o->traces[i], tp[i].extra, sizeof tp[i].extra);
		if (!rc && ar_trace_sha256(o->traces[i], tp[i].sha256) != 0)
			rc = ar_cli_error(o->traces[i], "cannot read the trace to compute its SHA-256: %s",
					  strerror(errno));
		if (rc) {
			free(tp);
			free(j);
			return rc;
		}
		njobs += (unsigned)p->nallocs + (tp[i].extra[0] != 0);
	}
	int slurm = !strcmp(o->plan_format, "slurm");
	if (slurm)
		slurm_begin(f, njobs);
	unsigned k = 0;
	for (int i = 0; i < o->ntraces; i++)
		trace_jobs(f, o, p, self, i, &tp[i], j, &k);
	if (slurm)
		slurm_end(f, njobs);
	free(tp);
	free(j);
	return fflush(f) == 0 && !ferror(f) ? AR_EXIT_OK
					     : ar_cli_error(NULL, "cannot write the plan to standard output");
}
