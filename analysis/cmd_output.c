/*
 * cmd_output.c — the trace file a subcommand writes (scrub; any command that
 * makes a new trace from another): written whole or not at all, never
 * through a symbolic link, private to its owner.
 *
 * Invariants: the data goes to a new temporary file beside the output,
 * created by mkstemp (O_EXCL, mode 0600: a trace holds what a program did),
 * and only ar_out_commit renames it over the output, so a failure never
 * leaves a half-written file under the output's name and a symbolic link
 * planted at that name is neither followed nor replaced (it is refused
 * before anything is written). "-" is standard output, refused when it is
 * a terminal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloctrace.h"
#include "ar_cli.h"

int ar_out_open(ar_out_t *o, const char *path, const char *in_path)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	o->fd = -1;
	if (ar_cli_is_stdio(path)) {
		if (isatty(STDOUT_FILENO))
			return ar_cli_usage_error("will not write a binary trace to a terminal; redirect standard "
						  "output or name a file with -o");
		o->fd = STDOUT_FILENO;
		o->is_stdout = 1;
		return 0;
	}
	struct stat st, in;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return ar_cli_error(path, "is a symbolic link, which is not followed: remove it or name "
						  "another output file");
		if (!S_ISREG(st.st_mode))
			return ar_cli_error(path, "exists and is not a regular file: name another output file");
		if (in_path && stat(in_path, &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
			return ar_cli_error(path, "is the input itself: write the new trace to another file");
	}
	if (snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof o->tmp)
		return ar_cli_error(path, "path too long");
	o->fd = mkstemp(o->tmp); /* O_CREAT | O_EXCL, mode 0600 */
	if (o->fd < 0) {
		int e = errno;
		o->tmp[0] = 0;
		return ar_cli_error(path, "cannot create a temporary file beside it: %s", strerror(e));
	}
	return 0;
}

int ar_out_commit(ar_out_t *o)
{
	if (o->is_stdout)
		return 0;
	int rc = close(o->fd);
	o->fd = -1;
	if (rc != 0 || rename(o->tmp, o->path) != 0) {
		int e = errno;
		ar_out_abort(o);
		return ar_cli_error(o->path, "cannot write: %s (nothing was written under this name)", strerror(e));
	}
	o->tmp[0] = 0;
	return 0;
}

void ar_out_abort(ar_out_t *o)
{
	if (o->is_stdout)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}
