/*
 * report_merge.c — `allocreport merge OUT.db IN.db...`: fold results
 * databases from several machines or teams into OUT.db: the command line;
 * the merging is the results module's (results/merge.c), whose SQL is
 * results/sql/merge.sql itself, built in as ar_res_merge_sql, so
 * `sqlite3 OUT.db "ATTACH 'IN.db' AS src" ".read results/sql/merge.sql"` and this
 * command always do the same: traces keyed by SHA-256 and allocators by
 * (name, version) are inserted when new, runs when their run_uuid is new
 * (with run_id and child rows shifted) and copied by column name, all in
 * one transaction per input; merging the same input twice adds nothing.
 *
 * Inputs are untrusted (results/schema_check.c): every one is opened
 * read-only and checked — allocrr's schema of the current version, no
 * trigger, view, index or column of its own — before anything is written,
 * so a refused input leaves OUT.db as it was. A missing OUT.db is created
 * from allocrr's own schema (never copied from an input) and removed again
 * if any input fails to merge; an existing one is checked the same way and
 * migrated to the current version. An input is never written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_cli.h"
#include "report_model.h"

static void usage(void)
{
	printf("Usage: allocreport merge OUT.db IN.db...\n"
	       "Add every trace, allocator and run of each IN.db that OUT.db lacks, creating\n"
	       "OUT.db from allocrr's schema when it is missing; merging the same input twice\n"
	       "adds nothing. Every IN.db is checked first and refused, with nothing merged,\n"
	       "when it carries triggers, views, indexes or columns that are not allocrr's.\n"
	       "See docs/RESULTS.md, \"Merging databases\".\n"
	       "\n"
	       "Options:\n"
	       "  -h, --help          display this help and exit\n"
	       "      --version       output version information and exit\n");
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* OUT.db and IN.db... from argv (argv[0] is "merge"): *first is the index
 * of the first input. Returns -1 to go on, or the exit status (--help,
 * --version, a usage error). */
static int parse_args(int argc, char **argv, int *first)
{
	enum { OPT_VERSION = 0x100 };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"version", no_argument, NULL, OPT_VERSION},
					     {NULL, 0, NULL, 0}};
	optind = 0; /* glibc: parse afresh, argv being merge's own */
	int c = getopt_long(argc, argv, ":h", opts, NULL); /* the first option, wherever it is */
	if (c != -1) /* --help, --version, a bad option */
		return ar_cli_other_option(c, argv, OPT_VERSION, usage);
	if (argc - optind < 2)
		return ar_cli_usage_error("merge: missing %s", optind < argc ? "IN.db, a database to merge"
									  : "OUT.db and IN.db");
	/* A database is a file SQLite seeks in and locks: no stream will do. */
	if (ar_cli_is_stdio(argv[optind]))
		return ar_cli_usage_error("merge: OUT.db cannot be '-': a database cannot be written to standard output; "
					  "name a file, e.g. allocreport merge merged.db IN.db...");
	for (int i = optind + 1; i < argc; i++)
		if (ar_cli_is_stdio(argv[i]))
			return ar_cli_usage_error("merge: IN.db cannot be '-': a database cannot be read from standard "
						  "input; name its file");
	*first = optind;
	return -1;
}

/* Every input readable and none of them OUT itself. Returns -1 to go on, or
 * the exit status. */
static int check_inputs(const char *out, int n, char **in)
{
	for (int i = 0; i < n; i++) {
		if (access(in[i], R_OK))
			return ar_cli_error(in[i], "%s", strerror(errno));
		if (same_file(in[i], out))
			return ar_cli_usage_error("merge: %s is OUT.db itself; name it once, first", in[i]);
	}
	return -1;
}

int ar_rep_merge(int argc, char **argv)
{
	int first = 0, rc = parse_args(argc, argv, &first);
	if (rc >= 0)
		return rc;
	const char *out = argv[first];
	char **in = argv + first + 1;
	int nin = argc - first - 1;
	if ((rc = check_inputs(out, nin, in)) >= 0)
		return rc;
	/* Every input checked before anything is written: a refused one
	 * leaves OUT.db as it was (or not created). */
	for (int i = 0; i < nin; i++)
		if (ar_res_merge_check(in[i], out))
			return AR_EXIT_RUNTIME;
	sqlite3 *db = NULL;
	int created = 0;
	if (ar_res_merge_open(out, &db, &created))
		return AR_EXIT_RUNTIME;
	int failed = 0;
	for (int i = 0; i < nin && !(failed && created); i++)
		failed |= ar_res_merge_one(db, out, in[i]) != 0;
	ar_res_db_close(db);
	if (failed && created) {
		/* A new OUT.db is all or nothing. */
		ar_res_merge_discard(out);
		ar_cli_error(out, "not created: an input could not be merged");
	}
	return failed ? AR_EXIT_RUNTIME : AR_EXIT_OK;
}
