/*
 * alloctrace.h — the subcommands of alloctrace, one file each. Each takes
 * its own argv (argv[0] is the subcommand name) and returns the exit status:
 * 0 success, 1 usage error, 2 runtime error (verify has its own: see
 * cmd_verify.c).
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

struct ar_sym;
/* Print the symbolised frames of stack `id`, one per line after `indent`. */
void ar_print_stack(FILE *out, const ar_reader_t *r, struct ar_sym *sym, uint32_t id, const char *indent);

/* Open `path` for a subcommand; on failure print "alloctrace: ..." with the
 * offset and return NULL. */
ar_reader_t *ar_open_or_complain(const char *path);

#endif
