/*
 * cmd_corpus.c — trace corpora described by a MANIFEST (format: see
 * traces/corpus/README.md): a tab-separated table, '#' comment lines, the
 * first other line naming the columns, then one line per trace file, which
 * lives in the manifest's directory.
 *
 *   alloctrace verify --manifest MANIFEST...   (also: corpus verify)
 *       every entry's file exists, has the listed SHA-256, verifies complete
 *       in sequence order, and has the listed events, threads, file_bytes
 *       and requested_bytes (for the columns present) and scrubbed (when
 *       not empty: the scrub note, or "no"); every *.zst of the
 *       directory is listed. Exit 0 all good, 2 otherwise.
 *   alloctrace corpus add MANIFEST FILE --program P --version V --command C
 *       [--recorded-at T]: measure FILE and add (or replace) its entry.
 *       (--version takes the program's version here, as it always has;
 *       --program-version is the same option under a name that cannot be
 *       mistaken for alloctrace's own --version.)
 *
 * This file also parses `alloctrace verify`, which checks either traces
 * (cmd_verify.c) or manifests.
 *
 * Invariants: columns are found by name, so a later format may add columns
 * and older tools still check the ones they know; a value never holds a tab
 * or newline (add refuses them); the manifest is rewritten whole, via a
 * temporary file and rename, so a failed add leaves the old one intact.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_trace_id.h"
#include "livemap.h"

#define MAX_COLS 32
#define MAX_LINE 8192

static const char *const columns[] = {"name",    "sha256",  "file_bytes",  "events",  "threads",
				      "requested_bytes", "program", "version", "recorded_at", "command", "scrubbed"};
enum { C_NAME, C_SHA, C_FILE_BYTES, C_EVENTS, C_THREADS, C_REQ, C_PROGRAM, C_VERSION, C_AT, C_CMD, C_SCRUB, C_KNOWN };
#define HEADER_COMMENT "# allocrr trace corpus manifest, format 1: see traces/corpus/README.md\n"

/* What a trace file measures: the manifest's checkable columns. */
typedef struct measure {
	char sha[65];
	uint64_t file_bytes, events, requested;
	uint32_t threads;
	int complete;
	char problem[300];
	char scrubbed[AR_SCRUB_NOTE_MAX]; /* the scrub note (SPEC 3.1), "no" when never scrubbed */
} measure_t;

static int measure(const char *path, measure_t *m)
{
	memset(m, 0, sizeof *m);
	if (ar_trace_sha256(path, m->sha) != 0) {
		snprintf(m->problem, sizeof m->problem, "cannot read: %s", strerror(errno));
		return -1;
	}
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) != 0) {
		snprintf(m->problem, sizeof m->problem, "not a trace: %s (byte offset %" PRIu64 ")",
			 ar_trace_problem(path, err.msg), err.offset);
		return -1;
	}
	const ar_header_t *h = ar_reader_header(r);
	snprintf(m->scrubbed, sizeof m->scrubbed, "%s",
		 !(h->flags & AR_HDR_SCRUBBED) ? "no" : h->scrub_note[0] ? h->scrub_note : "yes");
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		m->events++;
		m->requested += ar_event_request_bytes(&e);
	}
	m->threads = ar_reader_thread_count(r);
	m->file_bytes = ar_reader_file_size(r);
	m->complete = rc == 0 && ar_reader_status(r) == AR_STATUS_COMPLETE;
	if (!m->complete)
		snprintf(m->problem, sizeof m->problem, "does not verify: %s (byte offset %" PRIu64 ")",
			 ar_trace_problem(path, ar_reader_error(r)->msg), ar_reader_error(r)->offset);
	ar_reader_close(r);
	return m->complete ? 0 : -1;
}

/* Split a line (modified in place) at tabs; returns the number of fields. */
static int split(char *line, char **f)
{
	int n = 0;
	line[strcspn(line, "\r\n")] = 0;
	for (char *p = line; n < MAX_COLS;) {
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			break;
		*tab = 0;
		p = tab + 1;
	}
	return n;
}

static int is_data(const char *line)
{
	return line[0] != '#' && line[strspn(line, " \t\r\n")] != 0;
}

/* Map known columns to their position in the header line (-1 if absent). */
static int parse_header(char *line, int *pos, const char *manifest)
{
	char *f[MAX_COLS];
	int n = split(line, f);
	for (int k = 0; k < C_KNOWN; k++) {
		pos[k] = -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(f[i], columns[k]))
				pos[k] = i;
	}
	if (pos[C_NAME] < 0 || pos[C_SHA] < 0) {
		ar_cli_error(manifest, "the header line must name at least the columns name and sha256 "
				       "(traces/corpus/README.md)");
		return -1;
	}
	return 0;
}

/* One line of the report on stdout, escaped for the terminal: names and
 * values come from the manifest, its directory and the traces. */
static void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	ar_esc_term(stdout, r < 0 ? "(out of memory)" : s);
	putchar('\n');
	free(s);
}

static int check_u64(const char *name, const char *col, const char *want, uint64_t got)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(want, &end, 10);
	if (errno || !*want || *end) {
		report("%s: FAIL: manifest %s '%s' is not a number", name, col, want);
		return -1;
	}
	if (v != got) {
		report("%s: FAIL: %s is %" PRIu64 ", the manifest says %llu", name, col, got, v);
		return -1;
	}
	return 0;
}

static int listed(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

static int verify_manifest(const char *manifest)
{
	FILE *f = fopen(manifest, "r");
	if (!f) {
		report("%s: FAIL: %s", manifest, strerror(errno));
		return 2;
	}
	char dirbuf[4096];
	snprintf(dirbuf, sizeof dirbuf, "%s", manifest);
	const char *dir = dirname(dirbuf);
	static char line[MAX_LINE];
	int pos[C_KNOWN], have_header = 0, bad = 0, n = 0;
	char *names[4096];
	while (fgets(line, sizeof line, f)) {
		if (!is_data(line))
			continue;
		if (!have_header) {
			if (parse_header(line, pos, manifest) != 0) {
				fclose(f);
				return 2;
			}
			have_header = 1;
			continue;
		}
		char *v[MAX_COLS];
		int nf = split(line, v);
		const char *name = pos[C_NAME] < nf ? v[pos[C_NAME]] : "";
		if (!*name || strchr(name, '/') || n == 4096) {
			report("%s: FAIL: entry %d has no usable name (a file name in the manifest's directory)",
			       manifest, n + 1);
			bad++;
			continue;
		}
		names[n++] = strdup(name);
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		measure_t m;
		if (measure(path, &m) != 0) {
			report("%s: FAIL: %s", name, m.problem);
			bad++;
			continue;
		}
		int ok = 1;
		const char *want_sha = pos[C_SHA] < nf ? v[pos[C_SHA]] : "";
		if (strcmp(want_sha, m.sha)) {
			report("%s: FAIL: sha256 is %s, the manifest says %s", name, m.sha, want_sha);
			ok = 0;
		}
		struct {
			int col;
			uint64_t got;
		} nums[] = {{C_FILE_BYTES, m.file_bytes}, {C_EVENTS, m.events}, {C_THREADS, m.threads},
			    {C_REQ, m.requested}};
		for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
			if (pos[nums[i].col] >= 0 &&
			    check_u64(name, columns[nums[i].col], pos[nums[i].col] < nf ? v[pos[nums[i].col]] : "",
				      nums[i].got) != 0)
				ok = 0;
		/* An empty value: an entry older than the column (not checked). */
		const char *want_scrub = pos[C_SCRUB] >= 0 && pos[C_SCRUB] < nf ? v[pos[C_SCRUB]] : "";
		if (want_scrub[0] && strcmp(want_scrub, m.scrubbed)) {
			report("%s: FAIL: scrubbed is '%s', the manifest says '%s'", name, m.scrubbed, want_scrub);
			ok = 0;
		}
		if (ok)
			report("%s: ok, sha256 %.16s..., %" PRIu64 " events, %u threads, %" PRIu64 " bytes", name,
			       m.sha, m.events, m.threads, m.file_bytes);
		else
			bad++;
	}
	fclose(f);
	if (!have_header) {
		report("%s: FAIL: no header line", manifest);
		bad++;
	}
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len > 4 && !strcmp(de->d_name + len - 4, ".zst") && !listed(names, n, de->d_name)) {
			report("%s: FAIL: in %s but not in the manifest (alloctrace corpus add lists it)", de->d_name,
			       dir);
			bad++;
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		free(names[i]);
	report("%s: %d entries, %d problems", manifest, n, bad);
	return bad ? 2 : 0;
}

static int verify_manifests(int n, char **manifests)
{
	int worst = 0;
	for (int i = 0; i < n; i++) {
		int s = verify_manifest(manifests[i]);
		worst = s > worst ? s : worst;
	}
	return worst;
}

int ar_cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {{"manifest", no_argument, NULL, AR_OPT_OWN}, AR_CMD_SHARED_OPTIONS,
					     {NULL, 0, NULL, 0}};
	int manifests = 0, c;
	/* A usage error exits 2, not 1: verify's 1 means "truncated but
	 * readable", which a script may accept. */
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == AR_OPT_OWN)
			manifests = 1;
		else {
			int rc = ar_cmd_other_option(c, argv, &ar_verify_help);
			return rc == AR_EXIT_USAGE ? AR_EXIT_RUNTIME : rc;
		}
	}
	if (optind >= argc) {
		ar_cli_usage_error("verify: missing %s", manifests ? "MANIFEST, the corpus manifest to check"
								   : "FILE, a trace to verify");
		return AR_EXIT_RUNTIME;
	}
	if (manifests)
		return verify_manifests(argc - optind, argv + optind);
	return ar_verify_files(argc - optind, argv + optind);
}

static int clean_value(const char *what, const char *s)
{
	if (!s || !*s || strpbrk(s, "\t\r\n")) {
		ar_cli_usage_error("corpus add: %s needs a value without tabs or newlines", what);
		return -1;
	}
	return 0;
}

/* Measure file and add (or replace) its entry in manifest; vals holds the
 * --program, --version, --command and --recorded-at values. */
static int add_entry(const char *manifest, const char *file, const char **vals)
{
	char now[32];
	if (!vals[C_AT]) {
		time_t t = time(NULL);
		struct tm tm;
		strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
		vals[C_AT] = now;
	}
	char fb[4096], mb[4096];
	snprintf(fb, sizeof fb, "%s", file);
	snprintf(mb, sizeof mb, "%s", manifest);
	const char *name = basename(fb);
	char fdir[4096], mdir[4096];
	snprintf(fdir, sizeof fdir, "%s", dirname(fb));
	snprintf(fb, sizeof fb, "%s", file);
	snprintf(mdir, sizeof mdir, "%s", dirname(mb));
	if (strcmp(fdir, mdir))
		return ar_cli_usage_error("corpus add: %s must be in the manifest's directory %s (copy it there)", file,
					  mdir);
	if (clean_value("the file's name", name) || clean_value("--program", vals[C_PROGRAM]) || clean_value("--version", vals[C_VERSION]) ||
	    clean_value("--command", vals[C_CMD]) || clean_value("--recorded-at", vals[C_AT]))
		return 1;
	measure_t m;
	if (measure(file, &m) != 0)
		return ar_cli_error(file, "%s", m.problem);
	if (clean_value("the trace's scrub note", m.scrubbed))
		return 1;
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", manifest);
	FILE *out = fopen(tmp, "w"), *in = fopen(manifest, "r");
	if (!out) {
		ar_cli_error(tmp, "cannot create: %s", strerror(errno));
		if (in)
			fclose(in);
		return 2;
	}
	/* Keep comments and other entries; drop an older entry of this name. */
	static char line[MAX_LINE], copy[MAX_LINE];
	int pos[C_KNOWN], have_header = 0;
	while (in && fgets(line, sizeof line, in)) {
		if (is_data(line)) {
			snprintf(copy, sizeof copy, "%s", line);
			if (!have_header) {
				if (parse_header(copy, pos, manifest) != 0) {
					fclose(in);
					fclose(out);
					remove(tmp);
					return 2;
				}
				have_header = 1;
				/* A manifest older than the scrubbed column gets it. */
				if (pos[C_SCRUB] < 0) {
					size_t len = strcspn(line, "\r\n");
					pos[C_SCRUB] = 1;
					for (size_t i = 0; i < len; i++)
						pos[C_SCRUB] += line[i] == '\t';
					fprintf(out, "%.*s\t%s\n", (int)len, line, columns[C_SCRUB]);
					continue;
				}
			} else {
				char *v[MAX_COLS];
				int nf = split(copy, v);
				if (pos[C_NAME] < nf && !strcmp(v[pos[C_NAME]], name))
					continue;
			}
		}
		fputs(line, out);
	}
	if (in)
		fclose(in);
	if (!have_header) {
		fputs(HEADER_COMMENT, out);
		for (int k = 0; k < C_KNOWN; k++)
			fprintf(out, "%s%s", k ? "\t" : "", columns[k]);
		fputc('\n', out);
		for (int k = 0; k < C_KNOWN; k++)
			pos[k] = k;
	}
	char num[4][24];
	snprintf(num[0], 24, "%" PRIu64, m.file_bytes);
	snprintf(num[1], 24, "%" PRIu64, m.events);
	snprintf(num[2], 24, "%u", m.threads);
	snprintf(num[3], 24, "%" PRIu64, m.requested);
	vals[C_NAME] = name;
	vals[C_SHA] = m.sha;
	vals[C_FILE_BYTES] = num[0];
	vals[C_EVENTS] = num[1];
	vals[C_THREADS] = num[2];
	vals[C_REQ] = num[3];
	vals[C_SCRUB] = m.scrubbed;
	/* In the order of this manifest's header; unknown columns stay empty. */
	int ncols = 0;
	for (int k = 0; k < C_KNOWN; k++)
		ncols = pos[k] + 1 > ncols ? pos[k] + 1 : ncols;
	for (int i = 0; i < ncols; i++) {
		const char *v = "";
		for (int k = 0; k < C_KNOWN; k++)
			if (pos[k] == i)
				v = vals[k];
		fprintf(out, "%s%s", i ? "\t" : "", v);
	}
	fputc('\n', out);
	if (fclose(out) != 0 || rename(tmp, manifest) != 0) {
		ar_cli_error(manifest, "cannot write: %s (left as it was)", strerror(errno));
		remove(tmp);
		return 2;
	}
	report("%s: %s, %" PRIu64 " events, %u threads, %" PRIu64 " bytes", name, m.sha, m.events, m.threads,
	       m.file_bytes);
	return 0;
}

const ar_cmd_help_t ar_corpus_help = {
	"alloctrace corpus verify MANIFEST...\n"
	"alloctrace corpus add [OPTION]... MANIFEST FILE",
	"Keep a trace corpus (traces/corpus/README.md). `corpus verify` is `verify\n"
	"--manifest`. `corpus add` measures FILE, which must lie in MANIFEST's directory,\n"
	"and adds its entry (replacing one of the same name); --program, --version and\n"
	"--command are required.",
	"      --program=P     (add) the program that was recorded\n"
	"      --version=V     (add) that program's version; also --program-version=V\n"
	"      --command=CMD   (add) the command line that was recorded\n"
	"      --recorded-at=T  (add) when, as YYYY-MM-DDTHH:MM:SSZ (default: now)\n",
};

/* `corpus add [OPTION]... MANIFEST FILE`; argv[0] is "add". */
static int corpus_add(int argc, char **argv)
{
	enum { OPT_PROGRAM = AR_OPT_OWN, OPT_PVERSION, OPT_COMMAND, OPT_AT };
	static const struct option opts[] = {
		{"program", required_argument, NULL, OPT_PROGRAM}, {"version", required_argument, NULL, OPT_PVERSION},
		{"program-version", required_argument, NULL, OPT_PVERSION},
		{"command", required_argument, NULL, OPT_COMMAND}, {"recorded-at", required_argument, NULL, OPT_AT},
		{"help", no_argument, NULL, 'h'},                 {NULL, 0, NULL, 0}};
	const char *vals[C_KNOWN] = {0};
	int c;
	ar_cmd_getopt_begin();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_PROGRAM:
			vals[C_PROGRAM] = optarg;
			break;
		case OPT_PVERSION:
			vals[C_VERSION] = optarg;
			break;
		case OPT_COMMAND:
			vals[C_CMD] = optarg;
			break;
		case OPT_AT:
			vals[C_AT] = optarg;
			break;
		default:
			return ar_cmd_other_option(c, argv, &ar_corpus_help);
		}
	}
	if (argc - optind < 2)
		return ar_cli_usage_error("corpus add: missing %s", optind < argc ? "FILE, the trace to add"
										 : "MANIFEST and FILE");
	if (argc - optind > 2)
		return ar_cli_usage_error("corpus add: one FILE at a time ('%s' is a second one)", argv[optind + 2]);
	/* The manifest is rewritten in place (temporary file, rename). */
	if (ar_cli_is_stdio(argv[optind]))
		return ar_cli_usage_error("corpus add: MANIFEST cannot be '-': it is updated in place; name its file");
	if (!vals[C_PROGRAM] || !vals[C_VERSION] || !vals[C_CMD])
		return ar_cli_usage_error("corpus add: missing %s", !vals[C_PROGRAM] ? "--program P"
								  : !vals[C_VERSION] ? "--version V"
										     : "--command CMD");
	return add_entry(argv[optind], argv[optind + 1], vals);
}

/* Parse argv for --help and --version only ('+': stop at the first
 * operand). Returns -1 to go on, or the exit status. */
static int shared_options_only(int argc, char **argv, const char *optstring)
{
	static const struct option opts[] = {AR_CMD_SHARED_OPTIONS, {NULL, 0, NULL, 0}};
	int c = getopt_long(argc, argv, optstring, opts, NULL);
	return c == -1 ? -1 : ar_cmd_other_option(c, argv, &ar_corpus_help);
}

int ar_cmd_corpus(int argc, char **argv)
{
	int rc = shared_options_only(argc, argv, "+:h");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return ar_cli_usage_error("corpus: missing the action, add or verify");
	argc -= optind, argv += optind;
	if (!strcmp(argv[0], "add"))
		return corpus_add(argc, argv);
	if (strcmp(argv[0], "verify"))
		return ar_cli_usage_error("corpus: unknown action '%s' (add or verify)", argv[0]);
	ar_cmd_getopt_begin();
	if ((rc = shared_options_only(argc, argv, ":h")) >= 0)
		return rc;
	if (optind >= argc)
		return ar_cli_usage_error("corpus verify: missing MANIFEST, the corpus manifest to check");
	return verify_manifests(argc - optind, argv + optind);
}
