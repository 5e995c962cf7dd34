/*
 * cli.c — see ar_cli.h. One place for the wording, so a fix reaches every
 * tool.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_cli.h"
#include "ar_escape.h"

static const char *tool_name = "allocrr";

void ar_cli_init(const char *tool)
{
	if (tool && *tool)
		tool_name = tool;
}

const char *ar_cli_tool(void)
{
	return tool_name;
}

int ar_cli_version(void)
{
	printf("%s (allocrr) %s\n", tool_name, ALLOCRR_VERSION);
	return AR_EXIT_OK;
}

/* A message to stderr escaped for the terminal (ar_escape.h), line by line:
 * messages quote file names, trace and database strings, which may carry
 * escape sequences. */
static void put_message(const char *fmt, va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs(fmt, stderr); /* out of memory: at least the wording */
		return;
	}
	for (char *line = msg, *nl;; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		ar_esc_term(stderr, line);
		if (!nl)
			break;
		fputc('\n', stderr);
	}
	free(msg);
}

int ar_cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", tool_name);
	return AR_EXIT_USAGE;
}

int ar_cli_bad_option(int c, char *const argv[])
{
	/* getopt_long has just stepped past the offending word unless it was a
	 * short option inside a cluster ("-qx"): optopt names that one. */
	const char *word = optind > 0 ? argv[optind - 1] : NULL;
	int is_long = word && strncmp(word, "--", 2) == 0;
	int name_len = is_long ? (int)strcspn(word, "=") : 0;
	if (c == ':')
		return is_long ? ar_cli_usage_error("option '%.*s' needs a value", name_len, word)
			       : ar_cli_usage_error("option '-%c' needs a value", optopt);
	if (is_long && optopt && word[name_len] == '=')
		return ar_cli_usage_error("option '%.*s' takes no value", name_len, word);
	if (is_long || !optopt)
		return ar_cli_usage_error("unknown option '%.*s'", is_long ? name_len : (int)strlen(word ? word : ""),
					  word ? word : "");
	return ar_cli_usage_error("unknown option '-%c'", optopt);
}

int ar_cli_error(const char *path, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", tool_name);
	if (path) {
		ar_esc_term(stderr, path);
		fputs(": ", stderr);
	}
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return AR_EXIT_RUNTIME;
}

void ar_cli_warn(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: warning: ", tool_name);
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ar_cli_other_option(int c, char *const argv[], int version_opt, void (*usage)(void))
{
	if (c == 'h') {
		usage();
		return AR_EXIT_OK;
	}
	if (c == version_opt)
		return ar_cli_version();
	return ar_cli_bad_option(c, argv);
}

int ar_cli_is_stdio(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

FILE *ar_cli_open_output(const char *path, const char *mode)
{
	return ar_cli_is_stdio(path) ? stdout : fopen(path, mode);
}

int ar_cli_close_output(FILE *f)
{
	if (f == stdout)
		return fflush(f) == 0 && !ferror(f) ? 0 : -1;
	int bad = ferror(f);
	int rc = fclose(f);
	if (bad && rc == 0)
		errno = EIO;
	return bad || rc != 0 ? -1 : 0;
}

int ar_cli_exe_dir(char *dir, size_t cap)
{
	if (cap < 2)
		return -1;
	ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1) /* cap - 1 bytes read: perhaps cut short */
		return -1;
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}
