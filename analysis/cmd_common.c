/*
 * cmd_common.c — what the subcommands share: opening a trace with a message
 * that names the file and the byte offset of the problem. Kept apart from
 * main() (alloctrace.c) so the subcommands link without it (the fuzz target).
 */
#include <stdio.h>

#include "alloctrace.h"

ar_reader_t *ar_open_or_complain(const char *path)
{
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) != 0) {
		fprintf(stderr, "alloctrace: %s: %s (at byte offset %llu)\n", path, err.msg,
			(unsigned long long)err.offset);
		return NULL;
	}
	return r;
}
