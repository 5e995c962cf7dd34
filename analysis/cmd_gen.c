/*
 * cmd_gen.c — `alloctrace gen SCENARIO [--threads N] [--ops N] [--seed S]
 * -o FILE` writes a scenario trace (traces/gen/gen.h), FILE "-" being
 * standard output (the writer never seeks, so a pipe works); `alloctrace gen
 * --list` prints one line per scenario. The same arguments always give the
 * same bytes, so a scenario trace is named by its command line as well as
 * by its SHA-256. On failure the partial output file is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "gen.h"

/* What the command line asks for. */
typedef struct gen_opts {
	const char *name, *out; /* SCENARIO, -o FILE ("-": standard output) */
	uint64_t threads, ops, seed;
	int quiet, list;
} gen_opts_t;

const ar_cmd_help_t ar_gen_help = {
	"alloctrace gen [OPTION]... SCENARIO -o FILE\n"
	"alloctrace gen --list",
	"Write the trace of a reference scenario (S1-S5, A, B, D, M, X; docs/SCENARIOS.md).\n"
	"The same arguments always give the same bytes; the trace's command line is the\n"
	"canonical `alloctrace gen` command that makes it.",
	"  -o, --output=FILE   the trace to write; '-' for standard output (not a terminal)\n"
	"      --threads=N     threads (default: the scenario's)\n"
	"      --ops=N         about N heap calls in all (default: the scenario's)\n"
	"      --seed=S        seed of the randomness (default 1)\n"
	"  -q, --quiet         no summary line on standard error\n"
	"      --list          list the scenarios with their defaults and exit\n",
};

static void list(void)
{
	for (unsigned i = 0; i < ar_gen_count(); i++) {
		const ar_gen_scenario_t *sc = ar_gen_at(i);
		printf("%-3s %s [default --threads %u --ops %llu]\n", sc->name, sc->summary, sc->default_threads,
		       (unsigned long long)sc->default_ops);
	}
}

/* Fill o from argv. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, gen_opts_t *o)
{
	enum { OPT_THREADS = AR_OPT_OWN, OPT_OPS, OPT_SEED, OPT_LIST };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},     {"threads", required_argument, NULL, OPT_THREADS},
		{"ops", required_argument, NULL, OPT_OPS},    {"seed", required_argument, NULL, OPT_SEED},
		{"quiet", no_argument, NULL, 'q'},            {"list", no_argument, NULL, OPT_LIST},
		AR_CMD_SHARED_OPTIONS,                        {NULL, 0, NULL, 0}};
	*o = (gen_opts_t){.seed = 1};
	int c;
	while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_LIST:
			o->list = 1;
			break;
		case OPT_THREADS:
		case OPT_OPS:
		case OPT_SEED:
			if (ar_cmd_parse_u64(optarg, c == OPT_THREADS ? &o->threads : c == OPT_OPS ? &o->ops : &o->seed))
				return ar_cli_usage_error("gen: --%s needs a non-negative integer, not '%s'",
							  c == OPT_THREADS ? "threads" : c == OPT_OPS ? "ops" : "seed", optarg);
			break;
		default:
			return ar_cmd_other_option(c, argv, &ar_gen_help);
		}
	}
	if (o->list)
		return -1;
	if (optind >= argc)
		return ar_cli_usage_error("gen: missing SCENARIO (alloctrace gen --list names them)");
	if (optind + 1 < argc)
		return ar_cli_usage_error("gen: one SCENARIO at a time ('%s' is a second one)", argv[optind + 1]);
	o->name = argv[optind];
	if (!o->out)
		return ar_cli_usage_error("gen: missing -o FILE, the trace to write ('-' for standard output)");
	if (o->threads > AR_GEN_MAX_THREADS)
		return ar_cli_usage_error("gen: at most %d threads, not %llu", AR_GEN_MAX_THREADS,
					  (unsigned long long)o->threads);
	/* A trace is binary: on a terminal it would only garble the screen. */
	if (ar_cli_is_stdio(o->out) && isatty(STDOUT_FILENO))
		return ar_cli_usage_error("gen: will not write a binary trace to a terminal; redirect standard output "
					  "or name a file with -o");
	return -1;
}

/* Write the trace to o->out (removed again on failure). Returns the exit
 * status, the message printed. */
static int write_trace(const gen_opts_t *o, const ar_gen_scenario_t *sc, ar_gen_result_t *res)
{
	int to_stdout = ar_cli_is_stdio(o->out);
	const char *shown = to_stdout ? "standard output" : o->out;
	int fd = to_stdout ? STDOUT_FILENO : open(o->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return ar_cli_error(o->out, "cannot create: %s", strerror(errno));
	ar_error_t err = {0};
	int rc = ar_gen_write(fd, sc, (uint32_t)o->threads, o->ops, o->seed, res, &err);
	if (!to_stdout && close(fd) != 0 && rc == 0) {
		snprintf(err.msg, sizeof err.msg, "close: %s", strerror(errno));
		rc = AR_EIO;
	}
	if (rc == 0)
		return 0;
	if (!to_stdout)
		unlink(o->out);
	const char *why = err.msg[0] ? err.msg : ar_strerror(rc);
	return rc == AR_EINVAL ? ar_cli_usage_error("gen: %s", why) : ar_cli_error(shown, "%s", why);
}

int ar_cmd_gen(int argc, char **argv)
{
	gen_opts_t o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.list) {
		list();
		return 0;
	}
	const ar_gen_scenario_t *sc = ar_gen_find(o.name);
	if (!sc)
		return ar_cli_usage_error("gen: unknown scenario '%s' (alloctrace gen --list names them)", o.name);
	ar_gen_result_t res;
	if ((rc = write_trace(&o, sc, &res)) != 0)
		return rc;
	if (!o.quiet)
		fprintf(stderr, "%s: %s: scenario %s, %llu events, last seq %llu, %.3f s simulated\n", ar_cli_tool(),
			ar_cli_is_stdio(o.out) ? "standard output" : o.out, sc->name, (unsigned long long)res.events,
			(unsigned long long)res.last_seq, (double)res.end_time_ns / 1e9);
	return 0;
}
