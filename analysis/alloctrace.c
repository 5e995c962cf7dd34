/*
 * alloctrace.c — entry point: `alloctrace COMMAND [ARGS]`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alloctrace.h"

static const struct {
	const char *name;
	int (*run)(int, char **);
	const char *help;
} commands[] = {
	{"info", ar_cmd_info, "info FILE [--json]      program, threads, events by op, bytes, peak live, SHA-256"},
	{"dump", ar_cmd_dump, "dump FILE [--extra] [--stacks]  one line per event in global sequence order"},
	{"stats", ar_cmd_stats, "stats FILE [--json] [--top N]  sizes, lifetimes, live bytes, threads, realloc, sites"},
	{"stacks", ar_cmd_stacks, "stacks FILE             the recorded call stacks, symbolised, with use counts"},
	{"verify", ar_cmd_verify_any, "verify FILE...          exit 0 valid, 1 truncated but readable, 2 corrupt"},
	{"verify", NULL, "verify --manifest MANIFEST...  every listed trace has its hash, counts and verifies"},
	{"gen", ar_cmd_gen, "gen SCENARIO [--threads N] [--ops N] [--seed S] -o FILE  write a scenario trace; gen --list"},
	{"corpus", ar_cmd_corpus, "corpus add MANIFEST FILE --program P --version V --command C  add a trace's entry"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: alloctrace COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(f, "  %s\n", commands[i].help);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (commands[i].run && !strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "alloctrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 1;
}
