/*
 * alloctrace.h — the subcommands of alloctrace, one file each. Each takes
 * its own argv (argv[0] is the subcommand name), parses it with getopt_long
 * (options and operands in any order, "--" ends the options) and returns
 * the exit status: 0 success, 1 usage error, 2 runtime error (verify has
 * its own: see cmd_verify.c). Messages follow ar_cli.h: "alloctrace: PATH:
 * message", once. The ar_*_run functions are the same subcommands with their
 * arguments parsed, callable without main() (tests/fuzz/fuzz_alloctrace.c).
 */
#ifndef AR_ALLOCTRACE_H
#define AR_ALLOCTRACE_H

#include <getopt.h>
#include <stdio.h>

#include "ar_trace.h"

int ar_cmd_info(int argc, char **argv);
int ar_cmd_dump(int argc, char **argv);
int ar_cmd_stacks(int argc, char **argv);
int ar_cmd_stats(int argc, char **argv);
int ar_cmd_gen(int argc, char **argv);    /* cmd_gen.c */
int ar_cmd_verify(int argc, char **argv); /* cmd_corpus.c: verify FILE... or --manifest MANIFEST... */
int ar_cmd_corpus(int argc, char **argv); /* cmd_corpus.c */
int ar_cmd_import(int argc, char **argv); /* cmd_import.c, import.h */
int ar_cmd_scrub(int argc, char **argv);  /* cmd_scrub.c */
int ar_cmd_tree(int argc, char **argv);   /* cmd_tree.c */
int ar_cmd_diff(int argc, char **argv);   /* cmd_diff.c */

/*
 * A subcommand's help, in the layout help2man reads: `alloctrace CMD --help`
 * prints one, `alloctrace --help` all of them (the man page).
 */
typedef struct ar_cmd_help {
	const char *synopsis; /* "alloctrace info [OPTION]... FILE"; more forms after '\n' */
	const char *about;    /* what it does, a few lines */
	const char *options;  /* its option lines ("      --json   ..."), "" when none */
} ar_cmd_help_t;

extern const ar_cmd_help_t ar_info_help, ar_dump_help, ar_stats_help, ar_stacks_help, ar_verify_help,
	ar_gen_help, ar_corpus_help, ar_scrub_help;

extern const ar_cmd_help_t ar_import_help;
extern const ar_cmd_help_t ar_tree_help;
extern const ar_cmd_help_t ar_diff_help;

/* Print h: "Usage: " before the first synopsis line, "   or: " before the
 * others, then about, then the options with --help and --version. */
void ar_cmd_print_help(FILE *f, const ar_cmd_help_t *h);

/* getopt_long values of the options every subcommand shares. */
enum { AR_OPT_VERSION = 0x100, AR_OPT_OWN = 0x101 /* first free value for a subcommand's own */ };
#define AR_CMD_SHARED_OPTIONS {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, AR_OPT_VERSION}

/* Start parsing a subcommand's argv afresh (getopt_long's state is global
 * and main() may have used it). */
void ar_cmd_getopt_begin(void);

/* What a subcommand does with a getopt_long result it does not handle
 * itself: 'h' prints its help to stdout (returns 0), AR_OPT_VERSION the
 * version (0), anything else is a bad option (one line and the hint, 1). */
int ar_cmd_other_option(int c, char **argv, const ar_cmd_help_t *help);

/* Parse s as a whole non-negative number (decimal, or 0x hex) into *out.
 * Returns 0, or -1 when it is not one. */
int ar_cmd_parse_u64(const char *s, uint64_t *out);

/*
 * The subcommands that read one trace, after argument parsing: the report
 * goes to stdout, problems to stderr, and each returns the exit status its
 * subcommand would. symbolize = 0 prints frames as bare addresses: no libdw,
 * and no file the trace's module map names is opened.
 */
int ar_info_run(const char *path, int json);
int ar_dump_run(const char *path, int extra, int stacks, int symbolize);
int ar_verify_run(const char *path); /* 0 ok, 1 truncated but readable, 2 corrupt */
int ar_verify_files(int n, char **paths); /* the worst of ar_verify_run over paths */
int ar_stats_run(const char *path, int json, int top, int symbolize);
int ar_stacks_run(const char *path, int symbolize);
/* `stacks --folded --by METRIC` (metric: an ar_site_metric_t of sites.h). */
int ar_stacks_folded_run(const char *path, int metric, int symbolize);
/* stacks --ids-through: the ids of the stacks with a frame named function. */
int ar_stacks_ids_through_run(const char *path, const char *function);
struct ar_sites;
/* The sites model (sites.h) of the trace at path, its notes on `notes`
 * (NULL: none), problems on stderr: the exit status, with *out set when it
 * is 0 (cmd_stacks.c). */
int ar_stacks_sites(const char *path, int symbolize, FILE *notes, struct ar_sites **out);
/* AR_EXIT_OK for the model m of a complete trace; else AR_EXIT_WARN after
 * saying where path's events stopped ("WHAT are of the events before it"). */
int ar_stacks_sites_status(const char *path, const struct ar_sites *m, const char *what);
/* A window trace (AR_HDR_WINDOW, SPEC 6.11), for info and stats
 * (cmd_info.c): how it began, the pre-existing blocks found (blocks, bytes:
 * ar_livemap_t's) and the heap at its start. Text: lines, nothing for
 * other traces. JSON: ",\"window\":{...}" or ",\"window\":null" (a 1.3 or
 * later trace), nothing for older ones. */
void ar_window_text(const ar_reader_t *r, uint64_t pre_blocks, uint64_t pre_bytes);
void ar_window_json(const ar_reader_t *r, uint64_t pre_blocks, uint64_t pre_bytes);
/* "attach", "start", "rotate" for a WINDOW record's reason; NULL for a value SPEC 6.11 reserves. */
const char *ar_window_reason(uint32_t why);

/*
 * A trace file a subcommand writes (cmd_output.c): the data goes to a new
 * private (0600) temporary file beside path and ar_out_commit renames it
 * over path, so the output is whole or absent; a symbolic link at path is
 * refused, never followed; "-" is standard output (not a terminal). Each
 * returns 0, or prints the message ("alloctrace: PATH: ...") and returns
 * the exit status. ar_out_abort removes the temporary file.
 */
typedef struct ar_out {
	const char *path;
	char tmp[4200];
	int fd, is_stdout;
} ar_out_t;
/* in_path (may be NULL): the input, which path must not be. */
int ar_out_open(ar_out_t *o, const char *path, const char *in_path);
int ar_out_commit(ar_out_t *o);
void ar_out_abort(ar_out_t *o);

struct ar_sym;
/* Print the frames of stack `id`, one per line after `indent`, symbolised
 * when sym is not NULL (cmd_stacks.c). */
void ar_print_stack(FILE *out, const ar_reader_t *r, struct ar_sym *sym, uint32_t id, const char *indent);

/* Open `path` for a subcommand; on failure print "alloctrace: PATH: ..."
 * with the byte offset and return NULL (cmd_common.c). */
ar_reader_t *ar_open_or_complain(const char *path);

/* The trace library's message about path without the "PATH: " some of its
 * messages start with, since ours already name the file (cmd_common.c). */
const char *ar_trace_problem(const char *path, const char *msg);

#endif
