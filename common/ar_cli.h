/*
 * ar_cli.h — the conventions every allocrr command shares, so that allocrec,
 * alloctrace, allocreplay and allocreport look and fail alike:
 *
 *   - `--version` prints "TOOL (allocrr) VERSION" on stdout, exit 0;
 *   - an error about a file reads "TOOL: PATH: message", once;
 *   - a bad option or argument prints one line saying what is wrong and one
 *     hint ("Try 'TOOL --help' for more information."), exit 1, never the
 *     whole usage text;
 *   - "-" names standard output wherever a tool writes a file.
 *
 * Messages go to stderr escaped for the terminal (ar_escape.h; newlines
 * kept), since they quote file names and strings from traces and databases.
 *
 * Exit statuses, the same in every tool: 0 success, 1 usage error, 2 runtime error.
 * Nothing here keeps state beyond the tool's name.
 */
#ifndef AR_CLI_H
#define AR_CLI_H

#include <stddef.h>
#include <stdio.h>

#ifndef ALLOCRR_VERSION
#define ALLOCRR_VERSION "unknown" /* the Makefile passes the real one */
/* The directory of the running executable (/proc/self/exe without its
 * last component, no slash at the end) into dir[0..cap): where a tool finds
 * its neighbours (allocreplay's worker and alloctrace, allocrec's shim) in
 * the build tree and in an installed one alike. 0, or -1 when
 * /proc/self/exe is unreadable or its path does not fit in cap. */
int ar_cli_exe_dir(char *dir, size_t cap);

#endif

/* Exit statuses of every tool (README, "Exit status"): 0 all done; 1 a
 * usage error (alloctrace verify: the trace is truncated); 2 an error, the
 * work not done; 3 done, but on the readable part of a truncated or corrupt
 * input only, the message saying where it stops. */
#define AR_EXIT_OK 0
#define AR_EXIT_USAGE 1
#define AR_EXIT_RUNTIME 2
#define AR_EXIT_WARN 3

/* Set the name every message starts with ("allocrec", "alloctrace", ...).
 * Call first in main; the string must outlive the program. */
void ar_cli_init(const char *tool);

/* The name given to ar_cli_init ("allocrr" before it is called). */
const char *ar_cli_tool(void);

/* Print "TOOL (allocrr) VERSION" to stdout. Returns AR_EXIT_OK. */
int ar_cli_version(void);

/* Print "TOOL: MESSAGE" and the one-line --help hint to stderr.
 * Returns AR_EXIT_USAGE, so `return ar_cli_usage_error("...")` ends main. */
int ar_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* getopt_long returned c, '?' (unknown option, or a value given to an
 * option that takes none) or ':' (an option's value is missing), parsing
 * argv with an optstring that starts with ':' (after any '+'), so getopt
 * printed nothing itself: print that one line, naming the option as the
 * user wrote it, and the --help hint. Returns AR_EXIT_USAGE. */
int ar_cli_bad_option(int c, char *const argv[]);

/* What every tool does with a getopt_long result c that is none of its own
 * options, so they all answer alike: 'h' (-h, --help) prints usage() and
 * returns AR_EXIT_OK; version_opt (the value the tool gave --version)
 * prints the version (ar_cli_version); anything else is a bad option
 * (ar_cli_bad_option). Returns the exit status. */
int ar_cli_other_option(int c, char *const argv[], int version_opt, void (*usage)(void));

/* Print "TOOL: PATH: MESSAGE" (or "TOOL: MESSAGE" when path is NULL) to
 * stderr. Returns AR_EXIT_RUNTIME. */
int ar_cli_error(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "TOOL: warning: MESSAGE" to stderr. */
void ar_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is path the "-" that means standard output (or input)? */
int ar_cli_is_stdio(const char *path);

/* A size as a user writes it, into *out: decimal digits with an optional
 * K, M, G or T suffix (powers of 1024; "KiB", "MB" and "kb" spellings
 * accepted, a B alone meaning bytes). Returns 0, or -1 when s is not a
 * size or overflows 64 bits. (cli_size.c) */
int ar_cli_parse_size(const char *s, unsigned long long *out);

/* A duration in seconds as a user writes it ("2.5", "1e-3"), into *ns in
 * nanoseconds: above 0 and at most 366 days, nothing after the number, no
 * leading space. 0, or -1 when s is not such a duration. (cli_size.c) */
int ar_cli_parse_seconds(const char *s, unsigned long long *ns);

/* A whole decimal number from lo to hi, nothing after it, into *out.
 * 0, or -1 when s is not one. (cli_size.c) */
int ar_cli_parse_int(const char *s, int lo, int hi, int *out);

/* Open path for writing as fopen(path, mode) would, "-" being stdout.
 * Returns NULL with errno set on failure. Close with ar_cli_close_output. */
FILE *ar_cli_open_output(const char *path, const char *mode);

/* Flush and close what ar_cli_open_output returned (stdout is flushed, not
 * closed). Returns 0, or -1 with errno set when the data did not reach the
 * file (full disk, closed pipe): the caller reports it, naming path. */
int ar_cli_close_output(FILE *f);

/* The directory of the running executable (/proc/self/exe without its
 * last component, no slash at the end) into dir[0..cap): where a tool finds
 * its neighbours (allocreplay's worker and alloctrace, allocrec's shim) in
 * the build tree and in an installed one alike. 0, or -1 when
 * /proc/self/exe is unreadable or its path does not fit in cap. */
int ar_cli_exe_dir(char *dir, size_t cap);

#endif
