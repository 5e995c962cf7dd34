/*
 * cmd_common.c — what the subcommands share: their help layout, the options
 * every one of them takes (--help, --version), number parsing, and opening
 * a trace with a message that names the file and the byte offset of the
 * problem. Kept apart from main() (alloctrace.c) so the subcommands link
 * without it (the fuzz target).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloctrace.h"
#include "ar_cli.h"

void ar_cmd_print_help(FILE *f, const ar_cmd_help_t *h)
{
	const char *s = h->synopsis;
	for (int first = 1; *s; first = 0) {
		size_t n = strcspn(s, "\n");
		fprintf(f, "%s%.*s\n", first ? "Usage: " : "   or: ", (int)n, s);
		s += n + (s[n] == '\n');
	}
	fprintf(f, "%s\n\n%s", h->about, h->options);
	fputs("  -h, --help          display this help and exit\n"
	      "      --version       output version information and exit\n",
	      f);
}

void ar_cmd_getopt_begin(void)
{
	optind = 0; /* glibc: 0 re-initialises, including the permutation state */
}

int ar_cmd_other_option(int c, char **argv, const ar_cmd_help_t *help)
{
	if (c == 'h') {
		ar_cmd_print_help(stdout, help);
		return AR_EXIT_OK;
	}
	if (c == AR_OPT_VERSION)
		return ar_cli_version();
	return ar_cli_bad_option(c, argv);
}

int ar_cmd_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

const char *ar_trace_problem(const char *path, const char *msg)
{
	size_t n = strlen(path);
	return strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

ar_reader_t *ar_open_or_complain(const char *path)
{
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) == 0)
		return r;
	/* An offset says where the bytes are wrong. Offset 0 says nothing: a
	 * file that cannot be opened (errno, not a regular file), or one that is
	 * no trace from its first byte, which the message says. */
	if (err.offset > 0 && err.code != AR_ENOMEM)
		ar_cli_error(path, "%s (at byte offset %llu)", ar_trace_problem(path, err.msg),
			     (unsigned long long)err.offset);
	else
		ar_cli_error(path, "%s", ar_trace_problem(path, err.msg));
	return NULL;
}
