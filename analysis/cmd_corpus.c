/*
 * cmd_corpus.c — trace corpora described by a MANIFEST (format: see
 * traces/corpus/README.md): a tab-separated table, '#' comment lines, the
 * first other line naming the columns, then one line per trace file, which
 * lives in the manifest's directory.
 *
 *   alloctrace verify --manifest MANIFEST...   (also: corpus verify)
 *       every entry's file exists, has the listed SHA-256, verifies complete
 *       in sequence order, and has the listed events, threads, file_bytes
 *       and requested_bytes (for the columns present); every *.zst of the
 *       directory is listed. Exit 0 all good, 2 otherwise.
 *   alloctrace corpus add MANIFEST FILE --program P --version V --command C
 *       [--recorded-at T]: measure FILE and add (or replace) its entry.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloctrace.h"
#include "livemap.h"

#define MAX_COLS 32
#define MAX_LINE 8192

static const char *const columns[] = {"name",    "sha256",  "file_bytes",  "events",  "threads",
				      "requested_bytes", "program", "version", "recorded_at", "command"};
enum { C_NAME, C_SHA, C_FILE_BYTES, C_EVENTS, C_THREADS, C_REQ, C_PROGRAM, C_VERSION, C_AT, C_CMD, C_KNOWN };
#define HEADER_COMMENT "# allocrr trace corpus manifest, format 1: see traces/corpus/README.md\n"

/* What a trace file measures: the manifest's checkable columns. */
typedef struct measure {
	char sha[65];
	uint64_t file_bytes, events, requested;
	uint32_t threads;
	int complete;
	char problem[300];
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
		snprintf(m->problem, sizeof m->problem, "not a trace: %s (byte offset %" PRIu64 ")", err.msg,
			 err.offset);
		return -1;
	}
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
			 ar_reader_error(r)->msg, ar_reader_error(r)->offset);
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
		fprintf(stderr, "alloctrace: %s: the header line must name at least the columns name and sha256\n",
			manifest);
		return -1;
	}
	return 0;
}

static int check_u64(const char *name, const char *col, const char *want, uint64_t got)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(want, &end, 10);
	if (errno || !*want || *end) {
		printf("%s: FAIL: manifest %s '%s' is not a number\n", name, col, want);
		return -1;
	}
	if (v != got) {
		printf("%s: FAIL: %s is %" PRIu64 ", the manifest says %llu\n", name, col, got, v);
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
		printf("%s: FAIL: %s\n", manifest, strerror(errno));
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
			printf("%s: FAIL: entry %d has no usable name (a file name in the manifest's directory)\n",
			       manifest, n + 1);
			bad++;
			continue;
		}
		names[n++] = strdup(name);
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		measure_t m;
		if (measure(path, &m) != 0) {
			printf("%s: FAIL: %s\n", name, m.problem);
			bad++;
			continue;
		}
		int ok = 1;
		const char *want_sha = pos[C_SHA] < nf ? v[pos[C_SHA]] : "";
		if (strcmp(want_sha, m.sha)) {
			printf("%s: FAIL: sha256 is %s, the manifest says %s\n", name, m.sha, want_sha);
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
		if (ok)
			printf("%s: ok, sha256 %.16s..., %" PRIu64 " events, %u threads, %" PRIu64 " bytes\n", name,
			       m.sha, m.events, m.threads, m.file_bytes);
		else
			bad++;
	}
	fclose(f);
	if (!have_header) {
		printf("%s: FAIL: no header line\n", manifest);
		bad++;
	}
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len > 4 && !strcmp(de->d_name + len - 4, ".zst") && !listed(names, n, de->d_name)) {
			printf("%s: FAIL: in %s but not in the manifest (alloctrace corpus add lists it)\n", de->d_name,
			       dir);
			bad++;
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		free(names[i]);
	printf("%s: %d entries, %d problems\n", manifest, n, bad);
	return bad ? 2 : 0;
}

static int verify_manifests(int argc, char **argv)
{
	if (argc < 1) {
		fprintf(stderr, "usage: alloctrace verify --manifest MANIFEST...\n");
		return 1;
	}
	int worst = 0;
	for (int i = 0; i < argc; i++) {
		int s = verify_manifest(argv[i]);
		worst = s > worst ? s : worst;
	}
	return worst;
}

int ar_cmd_verify_any(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--manifest"))
		return verify_manifests(argc - 2, argv + 2);
	return ar_cmd_verify(argc, argv);
}

static int clean_value(const char *what, const char *s)
{
	if (!s || !*s || strpbrk(s, "\t\r\n")) {
		fprintf(stderr, "alloctrace corpus add: %s must be non-empty without tabs or newlines\n", what);
		return -1;
	}
	return 0;
}

static int add_entry(int argc, char **argv)
{
	const char *manifest = NULL, *file = NULL, *vals[C_KNOWN] = {0};
	char now[32];
	for (int i = 0; i < argc; i++) {
		int k = -1;
		if (!strcmp(argv[i], "--program"))
			k = C_PROGRAM;
		else if (!strcmp(argv[i], "--version"))
			k = C_VERSION;
		else if (!strcmp(argv[i], "--command"))
			k = C_CMD;
		else if (!strcmp(argv[i], "--recorded-at"))
			k = C_AT;
		if (k >= 0 && i + 1 < argc)
			vals[k] = argv[++i];
		else if (argv[i][0] == '-' || (manifest && file))
			manifest = NULL, file = NULL, i = argc;
		else if (!manifest)
			manifest = argv[i];
		else
			file = argv[i];
	}
	if (!manifest || !file || !vals[C_PROGRAM] || !vals[C_VERSION] || !vals[C_CMD]) {
		fprintf(stderr, "usage: alloctrace corpus add MANIFEST FILE --program P --version V --command CMD "
				"[--recorded-at YYYY-MM-DDTHH:MM:SSZ]\n");
		return 1;
	}
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
	if (strcmp(fdir, mdir)) {
		fprintf(stderr, "alloctrace corpus add: %s must be in the manifest's directory %s\n", file, mdir);
		return 1;
	}
	if (clean_value("--program", vals[C_PROGRAM]) || clean_value("--version", vals[C_VERSION]) ||
	    clean_value("--command", vals[C_CMD]) || clean_value("--recorded-at", vals[C_AT]))
		return 1;
	measure_t m;
	if (measure(file, &m) != 0) {
		fprintf(stderr, "alloctrace corpus add: %s: %s\n", file, m.problem);
		return 2;
	}
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", manifest);
	FILE *out = fopen(tmp, "w"), *in = fopen(manifest, "r");
	if (!out) {
		fprintf(stderr, "alloctrace corpus add: %s: %s\n", tmp, strerror(errno));
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
		fprintf(stderr, "alloctrace corpus add: %s: %s\n", manifest, strerror(errno));
		remove(tmp);
		return 2;
	}
	printf("%s: %s, %" PRIu64 " events, %u threads, %" PRIu64 " bytes\n", name, m.sha, m.events, m.threads,
	       m.file_bytes);
	return 0;
}

int ar_cmd_corpus(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return verify_manifests(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "add"))
		return add_entry(argc - 2, argv + 2);
	fprintf(stderr, "usage: alloctrace corpus verify MANIFEST...\n"
			"       alloctrace corpus add MANIFEST FILE --program P --version V --command CMD "
			"[--recorded-at T]\n");
	return 1;
}
