/*
 * alloctrace.h — the subcommands of alloctrace, one file each. Each takes
 * its own argv (argv[0] is the subcommand name) and returns the exit status:
 * 0 success, 1 usage error, 2 runtime error (verify has its own: see
 * cmd_verify.c). The ar_*_run functions are the same subcommands with their
 * arguments parsed, callable without main() (tests/fuzz/fuzz_alloctrace.c).
 */
#ifndef AR_ALLOCTRACE_H
#define AR_ALLOCTRACE_H

#include <stdio.h>

#include "ar_trace.h"

int ar_cmd_info(int argc, char **argv);
int ar_cmd_dump(int argc, char **argv);
int ar_cmd_verify(int argc, char **argv);
int ar_cmd_stacks(int argc, char **argv);
int ar_cmd_stats(int argc, char **argv);
int ar_cmd_gen(int argc, char **argv);        /* cmd_gen.c */
int ar_cmd_verify_any(int argc, char **argv); /* cmd_corpus.c: verify FILE... or --manifest */
int ar_cmd_corpus(int argc, char **argv);     /* cmd_corpus.c */

/*
 * The subcommands that read one trace, after argument parsing: the report
 * goes to stdout, problems to stderr, and each returns the exit status its
 * subcommand would. symbolize = 0 prints frames as bare addresses: no libdw,
 * and no file the trace's module map names is opened.
 */
int ar_info_run(const char *path, int json);
int ar_dump_run(const char *path, int extra, int stacks, int symbolize);
int ar_verify_run(const char *path); /* 0 ok, 1 truncated but readable, 2 corrupt */
int ar_stats_run(const char *path, int json, int top, int symbolize);
int ar_stacks_run(const char *path, int symbolize);

struct ar_sym;
/* Print the frames of stack `id`, one per line after `indent`, symbolised
 * when sym is not NULL (cmd_stacks.c). */
void ar_print_stack(FILE *out, const ar_reader_t *r, struct ar_sym *sym, uint32_t id, const char *indent);

/* Open `path` for a subcommand; on failure print "alloctrace: ..." with the
 * offset and return NULL (cmd_common.c). */
ar_reader_t *ar_open_or_complain(const char *path);

#endif
