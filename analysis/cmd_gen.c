/*
 * cmd_gen.c — `alloctrace gen SCENARIO [--threads N] [--ops N] [--seed S]
 * -o FILE` writes a scenario trace (traces/gen/gen.h); `alloctrace gen
 * --list` prints one line per scenario. The same arguments always give the
 * same bytes, so a scenario trace is named by its command line as well as
 * by its SHA-256. On failure the partial output file is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloctrace.h"
#include "gen.h"

static int usage(void)
{
	fprintf(stderr, "usage: alloctrace gen SCENARIO [--threads N] [--ops N] [--seed S] [-q] -o FILE\n"
			"       alloctrace gen --list\n");
	return 1;
}

static int parse_u64(const char *s, uint64_t *out)
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

static void list(void)
{
	for (unsigned i = 0; i < ar_gen_count(); i++) {
		const ar_gen_scenario_t *sc = ar_gen_at(i);
		printf("%-3s %s [default --threads %u --ops %llu]\n", sc->name, sc->summary, sc->default_threads,
		       (unsigned long long)sc->default_ops);
	}
}

int ar_cmd_gen(int argc, char **argv)
{
	const char *name = NULL, *out = NULL;
	uint64_t threads = 0, ops = 0, seed = 1;
	int quiet = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--list")) {
			list();
			return 0;
		} else if (!strcmp(a, "-q")) {
			quiet = 1;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(a, "--threads") || !strcmp(a, "--ops") || !strcmp(a, "--seed")) {
			uint64_t *dst = a[2] == 't' ? &threads : a[2] == 'o' ? &ops : &seed;
			if (i + 1 >= argc || parse_u64(argv[++i], dst) != 0) {
				fprintf(stderr, "alloctrace gen: %s needs a non-negative integer\n", a);
				return 1;
			}
		} else if (a[0] == '-' || name) {
			return usage();
		} else {
			name = a;
		}
	}
	if (!name || !out)
		return usage();
	const ar_gen_scenario_t *sc = ar_gen_find(name);
	if (!sc) {
		fprintf(stderr, "alloctrace gen: unknown scenario '%s' (alloctrace gen --list names them)\n", name);
		return 1;
	}
	if (threads > AR_GEN_MAX_THREADS) {
		fprintf(stderr, "alloctrace gen: at most %d threads\n", AR_GEN_MAX_THREADS);
		return 1;
	}
	int to_stdout = !strcmp(out, "-");
	int fd = to_stdout ? STDOUT_FILENO : open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "alloctrace gen: %s: %s\n", out, strerror(errno));
		return 2;
	}
	ar_gen_result_t res;
	ar_error_t err;
	int rc = ar_gen_write(fd, sc, (uint32_t)threads, ops, seed, &res, &err);
	if (!to_stdout && close(fd) != 0 && rc == 0) {
		err.code = AR_EIO;
		snprintf(err.msg, sizeof err.msg, "close: %s", strerror(errno));
		rc = AR_EIO;
	}
	if (rc != 0) {
		fprintf(stderr, "alloctrace gen: %s: %s (%s)\n", out, err.msg[0] ? err.msg : ar_strerror(rc),
			ar_strerror(rc));
		if (!to_stdout)
			unlink(out);
		return rc == AR_EINVAL ? 1 : 2;
	}
	if (!quiet)
		fprintf(stderr, "alloctrace gen: %s: scenario %s, %llu events, last seq %llu, %.3f s simulated\n", out,
			sc->name, (unsigned long long)res.events, (unsigned long long)res.last_seq,
			(double)res.end_time_ns / 1e9);
	return 0;
}
