/*
 * allocreport.c — entry point:
 *   allocreport [--db FILE] [--trace SHA|NAME] [--format table|csv|json|markdown]
 *               [--recommend] [--html FILE] [--baseline NAME]
 *   allocreport merge OUT.db IN.db...
 *   allocreport diff [--fail-if EXPR]... OLD.db NEW.db   (report_diff.c)
 * Reads a results database written by allocreplay (read-only; only merge
 * writes, and only OUT.db). The comparison and the recommendations go to
 * stdout, the HTML report to its file ("-": stdout, then alone). Exit 0 on
 * success, 1 for a usage error (bad option, unknown trace), 2 for a runtime
 * error (unreadable database, unwritable output, failed merge).
 *
 * --baseline NAME: every ratio and recommendation against NAME instead of
 * the allocator the program ran on. A trace where NAME has no successful
 * run keeps its default baseline and says so (stderr and the output); NAME
 * absent from every trace is a usage error (most likely a typo).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_cli.h"
#include "ar_escape.h"
#include "report_model.h"

/* What the command line asks for. */
typedef struct rep_opts {
	const char *db, *filter, *html; /* html: NULL, a file, or "-" */
	const char *baseline;           /* NULL: each trace's own (recorded allocator, else glibc) */
	enum ar_res_format fmt;
	int fmt_given, recommend;
	int across_machines; /* --across-machines: one comparison per trace over every machine's runs */
} rep_opts_t;

static void usage(void)
{
	printf("Usage: allocreport [OPTION]...\n"
	       "   or: allocreport merge OUT.db IN.db...\n"
	       "   or: allocreport diff [--fail-if EXPR]... OLD.db NEW.db\n"
	       "Compare the allocators replayed on each trace of a results database (written by\n"
	       "allocreplay): medians over repetitions with min-max, ratios to the baseline (the\n"
	       "allocator the recorded program ran on, else glibc), predicted program time and\n"
	       "peak RSS when stored, latency percentiles, fragmentation, faults, counters,\n"
	       "failed runs with their reason; then the top allocation sites of each trace\n"
	       "whose sites are stored (recorded with --stacks).\n"
	       "\n"
	       "Options:\n"
	       "      --db=FILE       the results database (default allocrr.db)\n"
	       "      --trace=SHA|NAME  only this trace: its file name or a prefix (4+ hex\n"
	       "                      digits) of its SHA-256\n"
	       "      --format=FMT    table, csv, json or markdown: of the comparison (or of\n"
	       "                      the recommendations); default table\n"
	       "      --recommend     print the best allocator for speed, memory, tail latency\n"
	       "                      and balance, with the evidence and warnings, instead of\n"
	       "                      the comparison\n"
	       "      --baseline=NAME compare against allocator NAME instead of what the program\n"
	       "                      ran on (traces without a successful NAME run keep theirs)\n"
	       "      --across-machines  compare a trace's runs from several machines as one\n"
	       "                      (default: one comparison per machine, a machine being\n"
	       "                      host, CPU model and count, kernel and glibc as the runs\n"
	       "                      stored them; a note on stderr either way)\n"
	       "      --html=FILE     write a self-contained HTML report with SVG charts ('-':\n"
	       "                      to standard output): throughput, box plots (5+ runs),\n"
	       "                      latency per operation, heap overhead, flame charts of\n"
	       "                      the sites; prints nothing else unless --format or\n"
	       "                      --recommend is given too\n"
	       "  -h, --help          display this help and exit\n"
	       "      --version       output version information and exit\n"
	       "\n"
	       "merge:\n"
	       "  Fold databases from several machines into OUT.db, created from the first IN.db\n"
	       "  when missing (docs/RESULTS.md); see allocreport merge --help.\n"
	       "\n"
	       "diff:\n"
	       "  Per trace, allocator and figure, the change from OLD.db to NEW.db and its\n"
	       "  significance; --fail-if 'p99>+10%%' exits 4 on a meaningful regression past\n"
	       "  a threshold (docs/CI.md); see allocreport diff --help.\n"
	       "\n"
	       "Exit status:\n"
	       " 0 success, 1 usage error (bad option, unknown trace), 2 runtime error\n"
	       " (unreadable database, unwritable output, failed merge); diff: 4 a --fail-if\n"
	       " rule tripped.\n");
}

/* --format's value into *fmt; -1 when it names none. */
static int parse_format(const char *v, enum ar_res_format *fmt)
{
	static const struct {
		const char *name;
		enum ar_res_format fmt;
	} names[] = {{"table", AR_RES_TABLE}, {"csv", AR_RES_CSV}, {"json", AR_RES_JSON}, {"markdown", AR_RES_MARKDOWN}};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(v, names[i].name)) {
			*fmt = names[i].fmt;
			return 0;
		}
	return -1;
}

/* What the options ask for, checked together. Returns -1 to go on, or the
 * exit status of a usage error. */
static int check_args(const rep_opts_t *o)
{
	/* SQLite opens a database by name and seeks in it: no pipe will do. */
	if (ar_cli_is_stdio(o->db))
		return ar_cli_usage_error("--db -: a database cannot be read from standard input; name the file");
	if (o->html && ar_cli_is_stdio(o->html) && (o->fmt_given || o->recommend))
		return ar_cli_usage_error("--html - and --%s would both write to standard output; give --html a "
					  "file name",
					  o->recommend ? "recommend" : "format");
	return -1;
}

/* Fill o from argv. Returns -1 to go on, or the exit status (--help,
 * --version, a usage error). */
static int parse_args(int argc, char **argv, rep_opts_t *o)
{
	enum { OPT_DB = 0x100, OPT_TRACE, OPT_FORMAT, OPT_RECOMMEND, OPT_HTML, OPT_VERSION, OPT_BASELINE,
	       OPT_ACROSS };
	static const struct option opts[] = {
		{"db", required_argument, NULL, OPT_DB},       {"trace", required_argument, NULL, OPT_TRACE},
		{"format", required_argument, NULL, OPT_FORMAT}, {"recommend", no_argument, NULL, OPT_RECOMMEND},
		{"html", required_argument, NULL, OPT_HTML},   {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},   {"baseline", required_argument, NULL, OPT_BASELINE},
		{"across-machines", no_argument, NULL, OPT_ACROSS}, {NULL, 0, NULL, 0}};
	*o = (rep_opts_t){.db = "allocrr.db", .fmt = AR_RES_TABLE};
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			o->db = optarg;
			break;
		case OPT_TRACE:
			o->filter = optarg;
			break;
		case OPT_FORMAT:
			o->fmt_given = 1;
			if (parse_format(optarg, &o->fmt) != 0)
				return ar_cli_usage_error("unknown format '%s' (table, csv, json or markdown)", optarg);
			break;
		case OPT_RECOMMEND:
			o->recommend = 1;
			break;
		case OPT_ACROSS:
			o->across_machines = 1;
			break;
		case OPT_HTML:
			o->html = optarg;
			break;
		case OPT_BASELINE:
			if (!*optarg)
				return ar_cli_usage_error("--baseline needs an allocator name (e.g. glibc, jemalloc)");
			o->baseline = optarg;
			break;
		default: /* --help, --version, a bad option */
			return ar_cli_other_option(c, argv, OPT_VERSION, usage);
		}
	}
	if (optind < argc)
		return ar_cli_usage_error("unexpected argument '%s' (the database is --db FILE; merging is "
					  "allocreport merge OUT.db IN.db...)",
					  argv[optind]);
	return check_args(o);
}

/* Load the database and write what o asks for. Returns the exit status. */
static int run(const rep_opts_t *o)
{
	ar_res_set_t rep;
	int bad_usage;
	if (ar_res_load_machines(&rep, o->db, o->filter, o->across_machines, &bad_usage)) {
		ar_res_free(&rep);
		return bad_usage ? AR_EXIT_USAGE : AR_EXIT_RUNTIME;
	}
	int rc = AR_EXIT_OK;
	if (o->baseline && ar_res_set_baseline(&rep, o->baseline) == 0) {
		ar_res_free(&rep);
		return ar_cli_usage_error("--baseline %s: no trace in %s has a successful run of %s (allocreplay -a %s "
					  "replays it)",
					  o->baseline, o->db, o->baseline, o->baseline);
	}
	for (size_t i = 0; o->baseline && i < rep.ntraces; i++)
		if (rep.traces[i].baseline_note)
			ar_cli_error(rep.traces[i].name, "%s", rep.traces[i].baseline_note);
	if (o->html && ar_rep_html(&rep, o->html))
		rc = AR_EXIT_RUNTIME;
	if (o->recommend)
		ar_rep_print_advice(stdout, &rep, o->fmt);
	else if (!o->html || o->fmt_given) {
		ar_res_print(stdout, &rep, o->fmt);
		if (o->fmt == AR_RES_TABLE)
			ar_rep_print_sites(stdout, &rep);
	}
	if (o->html && !rc && !ar_cli_is_stdio(o->html)) {
		fprintf(stderr, "%s: wrote ", ar_cli_tool());
		ar_esc_term(stderr, o->html);
		fputc('\n', stderr);
	}
	ar_res_free(&rep);
	if (fflush(stdout) != 0)
		rc = ar_cli_error("standard output", "cannot write the report");
	return rc;
}

int main(int argc, char **argv)
{
	ar_cli_init("allocreport");
	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return ar_rep_merge(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "diff"))
		return ar_rep_diff(argc - 1, argv + 1);
	rep_opts_t o;
	int rc = parse_args(argc, argv, &o);
	return rc >= 0 ? rc : run(&o);
}
