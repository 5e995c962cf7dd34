/*
 * cmd_import.c — `alloctrace import --from FORMAT IN -o OUT`: convert a
 * heap trace another tool recorded (Android's memory_replay text, glibc's
 * mtrace log) into an allocrr trace, so that it joins a corpus and replays
 * on every allocator. The parsers are import_memreplay.c and
 * import_mtrace.c; import_sink.c writes the trace.
 *
 * Invariants: OUT appears only complete, private (0600), never written
 * through a symbolic link (cmd_output.c: a temporary file renamed over it);
 * on any error OUT is left as it was. A malformed line is an error (exit 2)
 * naming the line and its byte offset, unless --skip-bad counts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "import.h"

typedef int import_fn(ar_imp_input_t *, ar_imp_header_t *, int, ar_import_t **, ar_error_t *);

static const struct {
	const char *name;
	import_fn *run;
} formats[] = {
	{"memory_replay", ar_imp_memreplay},
	{"mtrace", ar_imp_mtrace},
};
#define NFORMATS (sizeof formats / sizeof *formats)

typedef struct import_opts {
	const char *in, *out;
	import_fn *run;
	const char *format;
	int quiet, skip_bad;
} import_opts_t;

const ar_cmd_help_t ar_import_help = {
	"alloctrace import --from FORMAT [OPTION]... IN -o OUT",
	"Convert a heap trace recorded by another tool into an allocrr trace, in the\n"
	"source's order of calls. FORMAT is memory_replay (Android's malloc debug\n"
	"record_allocs text: '<tid>: malloc <ptr> <size>', ...; a thread per tid, a new\n"
	"one after its thread_done; times kept when the lines carry them) or mtrace\n"
	"(glibc's mtrace(3) log: one thread, no times; '+' lines become malloc, as\n"
	"mtrace logs calloc, memalign and realloc(NULL, n) alike; each caller address\n"
	"a one-frame stack). The header names the source format and says when the\n"
	"source had no times. A free or realloc of a pointer no earlier line returned\n"
	"is kept as written. IN must be a file (it is mapped).",
	"      --from=FORMAT   memory_replay or mtrace\n"
	"  -o, --output=FILE   the trace to write, whole or not at all (mode 0600; a\n"
	"                      symbolic link there is refused; '-' for standard output,\n"
	"                      not a terminal)\n"
	"      --skip-bad      skip malformed lines, counted on standard error (default:\n"
	"                      the first one is an error naming its line and offset)\n"
	"  -q, --quiet         no summary line on standard error\n",
};

/* Fill o from argv. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, import_opts_t *o)
{
	enum { OPT_FROM = AR_OPT_OWN, OPT_SKIP_BAD };
	static const struct option opts[] = {
		{"from", required_argument, NULL, OPT_FROM}, {"output", required_argument, NULL, 'o'},
		{"skip-bad", no_argument, NULL, OPT_SKIP_BAD}, {"quiet", no_argument, NULL, 'q'},
		AR_CMD_SHARED_OPTIONS,                        {NULL, 0, NULL, 0}};
	*o = (import_opts_t){0};
	int c;
	while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FROM:
			o->format = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_SKIP_BAD:
			o->skip_bad = 1;
			break;
		default:
			return ar_cmd_other_option(c, argv, &ar_import_help);
		}
	}
	if (!o->format)
		return ar_cli_usage_error("import: missing --from FORMAT (memory_replay or mtrace)");
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(o->format, formats[i].name))
			o->run = formats[i].run;
	if (!o->run)
		return ar_cli_usage_error("import: unknown format '%s' (memory_replay or mtrace)", o->format);
	if (optind >= argc)
		return ar_cli_usage_error("import: missing IN, the %s file to convert", o->format);
	if (optind + 1 < argc)
		return ar_cli_usage_error("import: one IN at a time ('%s' is a second one)", argv[optind + 1]);
	o->in = argv[optind];
	if (!o->out)
		return ar_cli_usage_error("import: missing -o FILE, the trace to write ('-' for standard output)");
	return -1;
}

/* Map IN whole (read-only). 0, or the exit status with the message. */
static int map_input(const char *path, ar_imp_input_t *in)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ar_cli_error(path, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return ar_cli_error(path, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ar_cli_error(path, "not a regular file: IN is mapped, and read twice when it has times "
					  "(save a pipe to a file first)");
	}
	*in = (ar_imp_input_t){.path = path, .len = (size_t)st.st_size};
	if (in->len) {
		void *p = mmap(NULL, in->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int e = errno;
			close(fd);
			return ar_cli_error(path, "cannot map: %s", strerror(e));
		}
		madvise(p, in->len, MADV_SEQUENTIAL);
		in->p = p;
		in->mapped = 1;
	}
	close(fd);
	return 0;
}

/* Convert o->in into fd. Returns the exit status, the message printed. */
static int convert(const import_opts_t *o, ar_imp_input_t *in, int fd, ar_imp_totals_t *tot)
{
	const char *base = strrchr(o->in, '/');
	ar_imp_header_t h = {.input_name = base ? base + 1 : o->in};
	ar_error_t err = {0};
	ar_import_t *im = NULL;
	int rc = o->run(in, &h, fd, &im, &err);
	if (im) {
		ar_error_t cerr = {0};
		int crc = ar_import_close(im, rc == 0, tot, &cerr);
		if (rc == 0 && crc != 0) {
			rc = crc;
			err = cerr;
		}
	}
	if (rc == -1)
		return ar_cli_error(o->in, "%s%s (--skip-bad skips such lines)", in->msg,
				    ar_cli_is_stdio(o->out) ? "" : "; nothing written");
	if (rc != 0)
		return ar_cli_error(ar_cli_is_stdio(o->out) ? "standard output" : o->out, "%s",
				    err.msg[0] ? err.msg : ar_strerror(rc));
	return 0;
}

/* Write the trace to o->out, whole or not at all (cmd_output.c). */
static int write_trace(const import_opts_t *o, ar_imp_input_t *in, ar_imp_totals_t *tot)
{
	ar_out_t out;
	int rc = ar_out_open(&out, o->out, o->in);
	if (rc != 0)
		return rc;
	if ((rc = convert(o, in, out.fd, tot)) != 0) {
		ar_out_abort(&out);
		return rc;
	}
	return ar_out_commit(&out);
}

int ar_cmd_import(int argc, char **argv)
{
	import_opts_t o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	ar_imp_input_t in;
	if ((rc = map_input(o.in, &in)) != 0)
		return rc;
	in.skip_bad = o.skip_bad;
	ar_imp_totals_t tot = {0};
	rc = write_trace(&o, &in, &tot);
	if (rc == 0 && in.bad_lines)
		ar_cli_warn("%s: %llu malformed line%s skipped, the first line %llu", o.in,
			    (unsigned long long)in.bad_lines, in.bad_lines == 1 ? "" : "s",
			    (unsigned long long)in.first_bad_line);
	if (rc == 0 && !o.quiet)
		fprintf(stderr, "%s: %s: %llu lines of %s, %llu events, %llu threads, %llu stacks\n", ar_cli_tool(),
			ar_cli_is_stdio(o.out) ? "standard output" : o.out, (unsigned long long)in.line, o.format,
			(unsigned long long)tot.events, (unsigned long long)tot.threads,
			(unsigned long long)tot.stacks);
	if (in.p)
		munmap((void *)in.p, in.len);
	return rc;
}
