/*
 * alloctrace.c — entry point: `alloctrace [--help|--version] COMMAND [ARGS]`.
 * Options before COMMAND are alloctrace's own; everything from COMMAND on
 * is the subcommand's, which parses it (alloctrace.h). `alloctrace --help`
 * prints every subcommand's options too: it is the man page's source.
 */
#include <stdio.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"

static const struct {
	const char *name;
	int (*run)(int, char **);
	const ar_cmd_help_t *help;
	const char *summary;
} commands[] = {
	{"info", ar_cmd_info, &ar_info_help, "program, threads, events by op, bytes, peak live, SHA-256"},
	{"dump", ar_cmd_dump, &ar_dump_help, "one line per event in global sequence order"},
	{"stats", ar_cmd_stats, &ar_stats_help, "sizes, lifetimes, live bytes, threads, realloc, sites"},
	{"stacks", ar_cmd_stacks, &ar_stacks_help, "the recorded call stacks, symbolised, with use counts"},
	{"verify", ar_cmd_verify, &ar_verify_help, "exit 0 valid, 1 truncated but readable, 2 corrupt"},
	{"gen", ar_cmd_gen, &ar_gen_help, "write a reference scenario's trace (S1-S5, A, B, D, M, X)"},
	{"corpus", ar_cmd_corpus, &ar_corpus_help, "check or extend a trace corpus MANIFEST"},
	{"import", ar_cmd_import, &ar_import_help, "convert a memory_replay or mtrace log into a trace"},
	{"scrub", ar_cmd_scrub, &ar_scrub_help, "a copy of a trace without names, paths or times of day, to share"},
	{"tree", ar_cmd_tree, &ar_tree_help, "the process tree of a recording: pids, exec chains, each image's trace"},
	{"diff", ar_cmd_diff, &ar_diff_help, "what changed in the heap between two traces of a program; CI gating"},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The whole manual, in the layout help2man reads: every form in the
 * synopsis, then the commands, then each one's options. */
static void usage(void)
{
	printf("Usage: alloctrace COMMAND [OPTION]... [FILE]...\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		for (const char *s = commands[i].help->synopsis; *s;) {
			size_t n = strcspn(s, "\n");
			printf("   or: %.*s\n", (int)n, s);
			s += n + (s[n] == '\n');
		}
	printf("Read, check and summarise allocrr traces (trace-format/SPEC.md), and write\n"
	       "the reference scenarios as traces.\n\n"
	       "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		printf("  %-9s %s\n", commands[i].name, commands[i].summary);
	printf("\nOptions:\n"
	       "  -h, --help          display this help and exit; after COMMAND, that command's\n"
	       "      --version       output version information and exit\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].help->options[0])
			printf("\nOptions of %s:\n%s", commands[i].name, commands[i].help->options);
	printf("\nExit status:\n"
	       " 0 success, 1 usage error, 2 runtime error (nothing or not all done), 3 done\n"
	       " on the readable part of a truncated or corrupt trace only (info, dump, stats,\n"
	       " stacks, scrub, diff; the message says where it stops); verify: 0 valid, 1\n"
	       " truncated but readable, 2 corrupt or a usage error; diff: 4 a --fail-if rule\n"
	       " tripped.\n");
}

/* alloctrace's own options, before COMMAND. Returns -1 with *cmd the index
 * of COMMAND in argv, or the exit status (--help, --version, a bad option). */
static int parse_args(int argc, char **argv, int *cmd)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"version", no_argument, NULL, AR_OPT_VERSION},
					     {NULL, 0, NULL, 0}};
	int c;
	/* '+': stop at COMMAND, whose options are its own. */
	if ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) /* --help, --version, a bad option */
		return ar_cli_other_option(c, argv, AR_OPT_VERSION, usage);
	if (optind >= argc)
		return ar_cli_usage_error("missing COMMAND (info, dump, stats, stacks, verify, gen, corpus, import, scrub, tree or diff)");
	*cmd = optind;
	return -1;
}

/* Hand argv[cmd...] to the subcommand it names. */
static int run_command(int argc, char **argv)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[0], commands[i].name)) {
			ar_cmd_getopt_begin();
			return commands[i].run(argc, argv);
		}
	return ar_cli_usage_error("unknown command '%s' (info, dump, stats, stacks, verify, gen, corpus, import, scrub, tree or diff)", argv[0]);
}

int main(int argc, char **argv)
{
	ar_cli_init("alloctrace");
	int cmd = 0, rc = parse_args(argc, argv, &cmd);
	if (rc >= 0)
		return rc;
	return run_command(argc - cmd, argv + cmd);
}
