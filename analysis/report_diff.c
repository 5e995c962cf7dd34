/*
 * report_diff.c — `allocreport diff [OPTION]... OLD.db NEW.db`: the command
 * line of the results module's diff (results/diff.c: traces paired by
 * SHA-256, else by name; per allocator and figure the change of the median
 * and its significance) and the CI gate over it, --fail-if rules
 * (common/ar_gate.h).
 *
 * The gate fails only on changes that are meaningful (ar_res_significance:
 * outside 1 +- 5 % with a bootstrap interval that says so) or exact (a
 * trace's own figures), so a noisy run does not fail a job; a threshold
 * passed by an undecided or noisy change is printed as a note.
 * --ignore-significance judges every change (one repetition per side).
 * Both databases are opened read-only.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_gate.h"
#include "report_model.h"

enum { DIFF_MAX_RULES = 64 };

typedef struct diff_opts {
	const char *old_db, *new_db, *filter;
	int split;                      /* one database, two run ranges */
	int64_t old_runs[2], new_runs[2]; /* [first, last] run ids */
	enum ar_res_format fmt;
	int ignore_significance;
	int across_machines; /* --across-machines: each database's machines pooled per trace */
	ar_gate_rule_t rules[DIFF_MAX_RULES];
	int nrules;
} diff_opts_t;

static void usage(void)
{
	fputs("Usage: allocreport diff [OPTION]... OLD.db NEW.db\n"
	      "   or: allocreport diff --old-runs=FIRST-LAST --new-runs=FIRST-LAST [OPTION]... DB\n"
	       "Compare two results databases (a stored baseline and a new run): each trace of\n"
	       "NEW.db is paired with the same trace in OLD.db (same SHA-256, else the same\n"
	       "file name: a trace recorded again), and for every allocator both replayed, each\n"
	       "figure's median over the successful repetitions before and after, the change in\n"
	       "percent and whether it is meaningful: the rule allocreport uses between\n"
	       "allocators (a bootstrap interval of the ratio of medians outside 1 +- 5%; one\n"
	       "repetition on a side leaves it undecided). Traces or allocators on one side only\n"
	       "are listed; a pair measured on different machines is marked as such. With\n"
	       "--old-runs and --new-runs, the two sides are two ranges of run ids (runs.run_id,\n"
	       "e.g. two allocreplay invocations) of one database DB.\n"
	       "\n"
	       "Options:\n"
	       "      --format=FMT    table (default) or json\n"
	       "      --trace=SHA|NAME  only this trace (file name or SHA-256 prefix), in both\n"
	       "      --across-machines  in each database, a trace's runs from several machines\n"
	       "                      as one (default: one per machine, host, CPU, kernel, glibc)\n"
	       "      --old-runs=FIRST-LAST, --new-runs=FIRST-LAST  the runs of DB on each side\n"
	       "                      (run ids, both ends included; FIRST- runs to the last)\n"
	       "      --fail-if=EXPR  exit 4 when a meaningful change passes EXPR (repeatable):\n"
	       "                      METRIC>+N% or METRIC<-N% (also >=, <=), e.g. 'p99>+10%',\n"
	       "                      'ops_s<-5%'; the change is NEW against OLD in percent\n"
	       "      --ignore-significance  judge every change past a threshold, meaningful\n"
	       "                      or not (for runs of one repetition); default: only\n"
	       "                      meaningful changes and changes of trace figures fail\n"
	       "  -h, --help          display this help and exit\n"
	       "      --version       output version information and exit\n"
	       "\n"
	       "Metrics (per allocator): ops_s (operations per second), p50, p99, p999, max\n"
	       "(latency), heap_rss (peak heap RSS), frag (fragmentation: peak heap RSS / peak\n"
	       "live bytes), pred_time, pred_rss (predicted program time and peak RSS, when\n"
	       "stored); per trace (exact): peak_live (peak live bytes), allocs, events.\n"
	       "\n"
	       "Exit status:\n"
	       " 0 compared, no rule tripped; 4 a --fail-if rule tripped (one line per\n"
	       " violation on stderr: trace, allocator, metric, old, new, change); 1 usage\n"
	       " error (a bad --fail-if names the expression); 2 runtime error (unreadable\n"
	       " database; --fail-if given but no trace of NEW.db is in OLD.db).\n",
	      stdout);
}

/* --fail-if's metric names: those of ar_res_diff_metrics. */
static const char *const *gate_names(void)
{
	static const char *names[AR_RES_DIFF_NMETRICS + 1];
	for (int i = 0; i < AR_RES_DIFF_NMETRICS; i++)
		names[i] = ar_res_diff_metrics[i].name;
	return names;
}

static int add_rule(diff_opts_t *o, const char *expr)
{
	char err[1400];
	if (o->nrules == DIFF_MAX_RULES)
		return ar_cli_usage_error("diff: more than %d --fail-if rules", DIFF_MAX_RULES);
	if (ar_gate_parse(expr, gate_names(), &o->rules[o->nrules], err, sizeof err))
		return ar_cli_usage_error("diff: %s", err);
	o->nrules++;
	return -1;
}

/* "FIRST-LAST" or "FIRST-" into r[0], r[1]; -1 when it is neither. */
static int parse_range(const char *s, int64_t *r)
{
	char *end;
	errno = 0;
	long long a = strtoll(s, &end, 10), b = INT64_MAX;
	if (errno || end == s || *s == '-' || *end != '-')
		return -1;
	const char *t = end + 1;
	if (*t) {
		b = strtoll(t, &end, 10);
		if (errno || end == t || *t == '-' || *end || b < a)
			return -1;
	}
	r[0] = a;
	r[1] = b;
	return 0;
}

/* The one database of --old-runs / --new-runs. -1 to go on, or the exit status. */
static int split_operand(int argc, char **argv, diff_opts_t *o)
{
	if (o->split != 3)
		return ar_cli_usage_error("diff: --old-runs and --new-runs go together");
	if (argc - optind != 1)
		return ar_cli_usage_error("diff: --old-runs and --new-runs compare runs of one database, DB (%s)",
					  argc - optind ? "give only one" : "missing");
	o->old_db = o->new_db = argv[optind];
	if (ar_cli_is_stdio(o->old_db))
		return ar_cli_usage_error("diff: a database cannot be read from standard input; name the file");
	return -1;
}

/* Fill o from argv (argv[0] is "diff"). Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, diff_opts_t *o)
{
	enum { OPT_FORMAT = 0x100, OPT_TRACE, OPT_FAIL_IF, OPT_IGNORE_SIG, OPT_VERSION, OPT_OLD_RUNS, OPT_NEW_RUNS,
	       OPT_ACROSS };
	static const struct option opts[] = {{"format", required_argument, NULL, OPT_FORMAT},
					     {"trace", required_argument, NULL, OPT_TRACE},
					     {"fail-if", required_argument, NULL, OPT_FAIL_IF},
					     {"ignore-significance", no_argument, NULL, OPT_IGNORE_SIG},
					     {"old-runs", required_argument, NULL, OPT_OLD_RUNS},
					     {"new-runs", required_argument, NULL, OPT_NEW_RUNS},
					     {"across-machines", no_argument, NULL, OPT_ACROSS},
					     {"help", no_argument, NULL, 'h'},
					     {"version", no_argument, NULL, OPT_VERSION},
					     {NULL, 0, NULL, 0}};
	optind = 0; /* glibc: parse afresh, argv being diff's own */
	int c, rc;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "table") && strcmp(optarg, "json"))
				return ar_cli_usage_error("diff: unknown format '%s' (table or json)", optarg);
			o->fmt = strcmp(optarg, "json") ? AR_RES_TABLE : AR_RES_JSON;
			break;
		case OPT_TRACE:
			o->filter = optarg;
			break;
		case OPT_ACROSS:
			o->across_machines = 1;
			break;
		case OPT_FAIL_IF:
			if ((rc = add_rule(o, optarg)) >= 0)
				return rc;
			break;
		case OPT_IGNORE_SIG:
			o->ignore_significance = 1;
			break;
		case OPT_OLD_RUNS:
		case OPT_NEW_RUNS:
			if (parse_range(optarg, c == OPT_OLD_RUNS ? o->old_runs : o->new_runs))
				return ar_cli_usage_error("diff: --%s-runs needs FIRST-LAST or FIRST- (run ids), not '%s'",
							  c == OPT_OLD_RUNS ? "old" : "new", optarg);
			o->split |= c == OPT_OLD_RUNS ? 1 : 2;
			break;
		default: /* --help, --version, a bad option */
			return ar_cli_other_option(c, argv, OPT_VERSION, usage);
		}
	}
	if (o->split)
		return split_operand(argc, argv, o);
	if (argc - optind != 2)
		return ar_cli_usage_error(argc - optind < 2 ? "diff: needs two databases, OLD.db (the baseline) and NEW.db"
							    : "diff: two databases only, OLD.db and NEW.db ('%s' is a third)",
					  argv[optind + 2 < argc ? optind + 2 : 0]);
	o->old_db = argv[optind];
	o->new_db = argv[optind + 1];
	if (ar_cli_is_stdio(o->old_db) || ar_cli_is_stdio(o->new_db))
		return ar_cli_usage_error("diff: a database cannot be read from standard input; name the file");
	return -1;
}

/* "trace NAME, allocator A: METRIC OLD -> NEW (CHANGE, VERDICT)" after prefix, on stderr. */
static void say_cell(const char *prefix, const ar_res_diff_pair_t *p, const ar_res_diff_cell_t *c)
{
	const ar_res_diff_metric_t *m = &ar_res_diff_metrics[c->metric];
	char o[32], n[32], pct[32];
	fprintf(stderr, "%s: %s: trace ", ar_cli_tool(), prefix);
	ar_esc_term(stderr, p->new->name ? p->new->name : p->new->sha256);
	fputs(", allocator ", stderr);
	ar_esc_term(stderr, c->allocator ? c->allocator : "(any: a figure of the trace)");
	fprintf(stderr, ": %s %s -> %s (%s, %s)", m->name,
		m->kind == AR_RES_DIFF_NS	 ? ar_res_fmt_ns(o, sizeof o, c->old_med)
		: m->kind == AR_RES_DIFF_BYTES ? ar_res_fmt_bytes(o, sizeof o, c->old_med)
					       : ar_res_fmt_num(o, sizeof o, c->old_med),
		m->kind == AR_RES_DIFF_NS	 ? ar_res_fmt_ns(n, sizeof n, c->new_med)
		: m->kind == AR_RES_DIFF_BYTES ? ar_res_fmt_bytes(n, sizeof n, c->new_med)
					       : ar_res_fmt_num(n, sizeof n, c->new_med),
		ar_gate_fmt_pct(pct, sizeof pct, c->change_pct), ar_res_diff_verdict(c));
	if (p->other_host) {
		fputs(" [different machines: ", stderr);
		ar_esc_term(stderr, p->old->machine ? p->old->machine : "unknown");
		fputs(" / ", stderr);
		ar_esc_term(stderr, p->new->machine ? p->new->machine : "unknown");
		fputc(']', stderr);
	}
}

/* Judge every cell against every rule naming its metric; mark the broken
 * ones and return how many violations. */
static int judge(const diff_opts_t *o, ar_res_diff_t *d)
{
	int violations = 0;
	for (size_t i = 0; i < d->npairs; i++) {
		ar_res_diff_pair_t *p = &d->pairs[i];
		for (size_t k = 0; p->old && p->new && k < p->ncells; k++) {
			ar_res_diff_cell_t *c = &p->cells[k];
			for (int r = 0; r < o->nrules; r++) {
				const ar_gate_rule_t *rule = &o->rules[r];
				if (strcmp(rule->metric, ar_res_diff_metrics[c->metric].name) ||
				    !ar_gate_trips(rule, c->change_pct))
					continue;
				int counts = o->ignore_significance || ar_res_diff_significant(c);
				say_cell(counts ? "regression" : "not failing", p, c);
				fputs(counts ? " breaks --fail-if '" : " passes '", stderr);
				ar_esc_term(stderr, rule->text);
				fputs(counts ? "'\n" : "' but is not meaningful (--ignore-significance judges it)\n",
				      stderr);
				if (counts) {
					c->broken_rule = rule->text;
					violations++;
				}
			}
		}
	}
	return violations;
}

/* Say, once per pair, what is not compared like for like. */
static size_t warn_pairs(const ar_res_diff_t *d)
{
	size_t compared = 0;
	for (size_t i = 0; i < d->npairs; i++) {
		const ar_res_diff_pair_t *p = &d->pairs[i];
		if (!p->old || !p->new)
			continue;
		compared++;
		if (p->other_host) {
			fprintf(stderr, "%s: warning: trace ", ar_cli_tool());
			ar_esc_term(stderr, p->new->name);
			fputs(": OLD was measured on host ", stderr);
			ar_esc_term(stderr, p->old->machine ? p->old->machine : "unknown");
			fputs(" and NEW on ", stderr);
			ar_esc_term(stderr, p->new->machine ? p->new->machine : "unknown");
			fputs(": the changes mix the machine with the code\n", stderr);
		}
	}
	return compared;
}

/* Both sides: two databases, or two run ranges of one. 0, or the exit status. */
static int load_sides(const diff_opts_t *o, ar_res_set_t *old, ar_res_set_t *new_)
{
	int bad_usage;
	memset(new_, 0, sizeof *new_);
	if (ar_res_load_machines(old, o->old_db, o->filter, o->across_machines, &bad_usage)) {
		ar_res_free(old);
		return bad_usage ? AR_EXIT_USAGE : AR_EXIT_RUNTIME;
	}
	if (o->split) {
		ar_res_set_t all = *old;
		ar_res_select_runs(&all, o->old_runs[0], o->old_runs[1], old);
		ar_res_select_runs(&all, o->new_runs[0], o->new_runs[1], new_);
		ar_res_free(&all);
		if (old->ntraces && new_->ntraces)
			return 0;
		const char *side = old->ntraces ? "new" : "old";
		ar_res_free(old);
		ar_res_free(new_);
		return ar_cli_usage_error("diff: no run of %s has a run id in --%s-runs (sqlite3 %s 'SELECT run_id, "
					  "trace_name, allocator FROM run_summary' lists them)",
					  o->old_db, side, o->old_db);
	}
	if (ar_res_load_machines(new_, o->new_db, o->filter, o->across_machines, &bad_usage)) {
		ar_res_free(old);
		ar_res_free(new_);
		return bad_usage ? AR_EXIT_USAGE : AR_EXIT_RUNTIME;
	}
	return 0;
}

/* What a side is called in the output: its database, and its runs when split. */
static void side_label(const diff_opts_t *o, int is_new, char *buf, size_t n)
{
	const int64_t *r = is_new ? o->new_runs : o->old_runs;
	if (!o->split)
		snprintf(buf, n, "%s", is_new ? o->new_db : o->old_db);
	else if (r[1] == INT64_MAX)
		snprintf(buf, n, "%s, runs %lld-", o->old_db, (long long)r[0]);
	else
		snprintf(buf, n, "%s, runs %lld-%lld", o->old_db, (long long)r[0], (long long)r[1]);
}

/* load both → diff → judge → print. */
static int run(diff_opts_t *o)
{
	ar_res_set_t old, new_;
	int rc = load_sides(o, &old, &new_);
	if (rc)
		return rc;
	ar_res_diff_t d;
	ar_res_diff(&old, &new_, &d);
	size_t compared = warn_pairs(&d);
	int violations = judge(o, &d);
	char old_label[4200], new_label[4200];
	side_label(o, 0, old_label, sizeof old_label);
	side_label(o, 1, new_label, sizeof new_label);
	ar_res_diff_print(stdout, &d, old_label, new_label, o->fmt);
	rc = violations ? AR_GATE_EXIT : AR_EXIT_OK;
	if (!compared && o->nrules)
		rc = ar_cli_error(NULL, "no trace of %s is in %s: nothing for --fail-if to judge (same trace file "
					"name or content needed)",
				  new_label, old_label);
	else if (!compared)
		ar_cli_warn("no trace of %s is in %s: nothing compared", new_label, old_label);
	if (fflush(stdout) != 0)
		rc = ar_cli_error("standard output", "cannot write the diff");
	ar_res_diff_free(&d);
	ar_res_free(&old);
	ar_res_free(&new_);
	return rc;
}

int ar_rep_diff(int argc, char **argv)
{
	diff_opts_t *o = calloc(1, sizeof *o);
	if (!o)
		return ar_cli_error(NULL, "out of memory");
	int rc = parse_args(argc, argv, o);
	if (rc < 0)
		rc = run(o);
	free(o);
	return rc;
}
