/*
 * cmd_tree.c — `alloctrace tree [--json] DIR|TRACE... | --manifest FILE`:
 * the process tree of a recording, drawn from its traces' headers alone.
 *
 * Every process image that records writes its own trace, whose header gives
 * the pid, the ppid, the command line and the start time (SPEC 3). An exec
 * keeps the pid: the traces that share one are that process's exec chain,
 * in order of start time. A process whose ppid is another recorded
 * process's pid is its child, hung under the image that was running when
 * the child started. Its parent must have started strictly earlier (start
 * time, then pid): a pid reused within one directory, or a hostile header
 * naming its own descendant, then makes a second root, never a cycle.
 *
 * Inputs are untrusted: every string from a header, a file name and a
 * manifest line is written through ar_escape.h; a file that is not a
 * readable trace is reported naming it (and the manifest line that listed
 * it) and left out of the tree, and the exit status is then 2.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"

/* One process image: one trace. */
typedef struct image {
	char *path, *cmdline;
	uint64_t pid, ppid, start_wall_ns, events, duration_ns;
	int has_duration;
	ar_status_t status;
	uint32_t threads;
	/* SPEC 6.11: a window of the process (attach, --start, a rotation
	 * segment), not an image of its own: it keeps the pid and the image */
	int window;
	uint32_t window_index, window_reason;
} image_t;

/* One pid: images[first..first+n) in start order, and where it hangs. */
typedef struct proc {
	size_t first, n;
	long parent;       /* index into procs, -1: a root */
	size_t from_image; /* the parent's image running when this one started */
} proc_t;

typedef struct tree {
	image_t *img;
	size_t nimg, cap;
	proc_t *procs;
	size_t nprocs;
	int failed; /* an input could not be read: exit 2 */
} tree_t;

const ar_cmd_help_t ar_tree_help = {
	"alloctrace tree [OPTION]... DIR|TRACE...\nalloctrace tree [OPTION]... --manifest FILE",
	"The process tree of a recording: each process (pid, parent), the chain of\n"
	"images it exec'ed (an exec keeps the pid), and each image's trace with its\n"
	"events, duration and status (complete, truncated or corrupt), from the\n"
	"traces' headers. DIR: every *.zst in it (an allocrec run writes all its\n"
	"traces into the directory of -o); a MANIFEST lists one trace path a line\n"
	"(the file ALLOCRR_MANIFEST names when the recorder runs without allocrec).\n"
	"A file that is not a readable trace is reported and left out (exit 2).",
	"      --json          print one JSON object instead of text\n"
	"      --manifest=FILE read the trace paths from FILE, one a line\n",
};

/* ---- reading ---------------------------------------------------------------------- */
static int add_image(tree_t *t, const char *path, ar_reader_t *r)
{
	if (t->nimg == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		image_t *n = realloc(t->img, cap * sizeof *n);
		if (!n)
			return -1;
		t->img = n, t->cap = cap;
	}
	const ar_header_t *h = ar_reader_header(r);
	const ar_footer_t *f = ar_reader_footer(r);
	const ar_process_info_t *p = ar_reader_process(r);
	image_t *im = &t->img[t->nimg];
	*im = (image_t){.pid = h->pid, .ppid = h->ppid, .start_wall_ns = h->start_wall_ns,
			.events = f ? f->events : ar_reader_event_count(r), .status = ar_reader_status(r),
			.threads = ar_reader_thread_count(r), .window = !!(h->flags & AR_HDR_WINDOW)};
	const ar_window_info_t *w = im->window ? ar_reader_window(r) : NULL;
	if (w)
		im->window_index = w->index, im->window_reason = w->reason;
	if (h->flags & AR_HDR_NO_TIMES) {
		/* the source recorded no times: unknown, not 0 */
	} else if (f) {
		im->has_duration = 1, im->duration_ns = f->end_time_ns;
	} else if (p && p->has_process && p->end_time_ns) {
		im->has_duration = 1, im->duration_ns = p->end_time_ns;
	}
	im->path = strdup(path);
	im->cmdline = strdup(h->cmdline);
	if (!im->path || !im->cmdline) {
		free(im->path), free(im->cmdline);
		return -1;
	}
	t->nimg++;
	return 0;
}

/* Add the trace at path; a file that cannot be read is reported (as
 * line `line` of manifest when it came from one) and left out. Returns -1
 * only when out of memory. */
static int read_trace(tree_t *t, const char *path, const char *manifest, size_t line)
{
	ar_reader_t *r;
	if (!manifest) {
		r = ar_open_or_complain(path);
	} else {
		ar_error_t err = {0};
		if (ar_reader_open(&r, path, &err) != 0) {
			/* the message is escaped as a whole (ar_cli.h) */
			ar_cli_error(NULL, "%s:%zu: lists %s, which is not a readable trace: %s", manifest, line, path,
				     ar_trace_problem(path, err.msg));
			r = NULL;
		}
	}
	if (!r) {
		t->failed = 1;
		return 0;
	}
	int rc = add_image(t, path, r);
	ar_reader_close(r);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file DIR/NAME.zst, in name order. */
static int read_dir(tree_t *t, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		ar_cli_error(dir, "%s", strerror(errno));
		t->failed = 1;
		return 0;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".zst") != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nn = realloc(names, cap * sizeof *nn);
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
		}
		size_t dl = strlen(dir);
		int slash = dl && dir[dl - 1] == '/';
		if (asprintf(&names[n], "%s%s%s", dir, slash ? "" : "/", e->d_name) < 0)
			rc = -1;
		else
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			found++;
			rc = read_trace(t, names[i], NULL, 0);
		}
		free(names[i]);
	}
	free(names);
	if (rc == 0 && !found) {
		ar_cli_error(dir, "no traces here (no *.zst file)");
		t->failed = 1;
	}
	return rc;
}

/* The traces a manifest lists, one path a line; blank lines and repeats
 * are skipped, since every image appends its own line. */
static int read_manifest(tree_t *t, const char *manifest)
{
	FILE *m = fopen(manifest, "r");
	if (!m) {
		ar_cli_error(manifest, "%s", strerror(errno));
		t->failed = 1;
		return 0;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int rc = 0;
	while (rc == 0 && (len = getline(&line, &cap, m)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (!len)
			continue;
		if ((size_t)len != strlen(line) || len >= PATH_MAX) {
			ar_cli_error(NULL, "%s:%zu: %s, not a path; skipped", manifest, lineno,
				     (size_t)len != strlen(line) ? "holds a NUL byte" : "too long");
			t->failed = 1;
			continue;
		}
		int seen = 0;
		for (size_t i = 0; i < t->nimg && !seen; i++)
			seen = strcmp(t->img[i].path, line) == 0;
		if (seen)
			continue;
		rc = read_trace(t, line, manifest, lineno);
	}
	free(line);
	if (ferror(m)) {
		ar_cli_error(manifest, "read error: %s", strerror(errno));
		t->failed = 1;
	}
	fclose(m);
	return rc;
}

/* ---- the tree ----------------------------------------------------------------------- */
static int by_pid_start(const void *a, const void *b)
{
	const image_t *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_wall_ns != y->start_wall_ns)
		return x->start_wall_ns < y->start_wall_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Did process a start strictly before process b (start time, then pid)? */
static int earlier(const tree_t *t, const proc_t *a, const proc_t *b)
{
	const image_t *x = &t->img[a->first], *y = &t->img[b->first];
	return x->start_wall_ns < y->start_wall_ns || (x->start_wall_ns == y->start_wall_ns && x->pid < y->pid);
}

static int build(tree_t *t)
{
	qsort(t->img, t->nimg, sizeof *t->img, by_pid_start);
	t->procs = calloc(t->nimg ? t->nimg : 1, sizeof *t->procs);
	if (!t->procs)
		return -1;
	for (size_t i = 0; i < t->nimg; i++) {
		/* pid 0: not a recorded process (a generated or imported trace):
		 * each is a process of its own, never an exec chain */
		if (i && t->img[i].pid && t->img[i].pid == t->img[i - 1].pid) {
			t->procs[t->nprocs - 1].n++;
			continue;
		}
		t->procs[t->nprocs++] = (proc_t){.first = i, .n = 1, .parent = -1};
	}
	for (size_t c = 0; c < t->nprocs; c++) {
		proc_t *pc = &t->procs[c];
		const image_t *ci = &t->img[pc->first];
		for (size_t q = 0; q < t->nprocs; q++) {
			proc_t *pq = &t->procs[q];
			if (q == c || !ci->ppid || t->img[pq->first].pid != ci->ppid || !earlier(t, pq, pc))
				continue;
			pc->parent = (long)q;
			pc->from_image = pq->first;
			for (size_t k = pq->first; k < pq->first + pq->n; k++)
				if (t->img[k].start_wall_ns <= ci->start_wall_ns)
					pc->from_image = k;
		}
	}
	return 0;
}

static int is_child(const proc_t *p, long parent, long image)
{
	return p->parent == parent && (image < 0 || p->from_image == (size_t)image);
}

/* The processes under parent (-1: the roots), only those forked from image
 * when image >= 0, in start order, in a malloc'ed array of *n (NULL when
 * none, or when out of memory: *n is then (size_t)-1). Sized to fit: a
 * forged chain of headers can make the tree as deep as it has processes. */
static size_t *children(const tree_t *t, long parent, long image, size_t *count)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		n += (size_t)is_child(&t->procs[i], parent, image);
	*count = 0;
	if (!n)
		return NULL;
	size_t *out = malloc(n * sizeof *out);
	if (!out) {
		*count = (size_t)-1;
		return NULL;
	}
	n = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		if (is_child(&t->procs[i], parent, image))
			out[n++] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && earlier(t, &t->procs[out[j]], &t->procs[out[j - 1]]); j--) {
			size_t s = out[j];
			out[j] = out[j - 1], out[j - 1] = s;
		}
	*count = n;
	return out;
}

static const char *status_name(ar_status_t s)
{
	return s == AR_STATUS_COMPLETE ? "complete" : s == AR_STATUS_TRUNCATED ? "truncated" : "corrupt";
}

/* ---- text -------------------------------------------------------------------------- */
static void print_duration(const image_t *im)
{
	if (!im->has_duration)
		printf("duration unknown");
	else if (im->duration_ns < 10000000000ull)
		printf("%.1f ms", (double)im->duration_ns / 1e6);
	else
		printf("%.2f s", (double)im->duration_ns / 1e9);
}

static const char *window_reason_name(uint32_t why)
{
	const char *s = ar_window_reason(why);
	return s ? s : "unknown";
}

static int text_proc(const tree_t *t, size_t p, int depth)
{
	const proc_t *pr = &t->procs[p];
	int rc = 0;
	for (size_t k = pr->first; k < pr->first + pr->n && rc == 0; k++) {
		const image_t *im = &t->img[k];
		printf("%*s%" PRIu64 " ", 2 * depth, "", im->pid);
		if (k == pr->first)
			printf("(ppid %" PRIu64 ") ", im->ppid);
		else if (!im->window)
			printf("exec ");
		if (im->window)
			printf("window %u (%s) ", im->window_index, window_reason_name(im->window_reason));
		ar_esc_term(stdout, im->cmdline[0] ? im->cmdline : "?");
		printf("  [");
		ar_esc_term(stdout, im->path);
		printf(": %" PRIu64 " events, %u threads, ", im->events, im->threads);
		print_duration(im);
		printf(", %s]\n", status_name(im->status));
		size_t n, *kids = children(t, (long)p, (long)k, &n);
		if (n == (size_t)-1)
			return -1;
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = text_proc(t, kids[i], depth + 1);
		free(kids);
	}
	return rc;
}

/* ---- JSON -------------------------------------------------------------------------- */
static int json_proc(const tree_t *t, size_t p)
{
	const proc_t *pr = &t->procs[p];
	const image_t *first = &t->img[pr->first];
	size_t n, *kids = children(t, (long)p, -1, &n);
	if (n == (size_t)-1)
		return -1;
	printf("{\"pid\":%" PRIu64 ",\"ppid\":%" PRIu64 ",\"parent_recorded\":%s,\"images\":[", first->pid,
	       first->ppid, pr->parent >= 0 ? "true" : "false");
	for (size_t k = pr->first; k < pr->first + pr->n; k++) {
		const image_t *im = &t->img[k];
		printf("%s{\"trace\":", k == pr->first ? "" : ",");
		ar_esc_json(stdout, im->path);
		printf(",\"cmdline\":");
		ar_esc_json(stdout, im->cmdline);
		printf(",\"start_wall_ns\":%" PRIu64 ",\"events\":%" PRIu64 ",\"threads\":%u,\"duration_ns\":",
		       im->start_wall_ns, im->events, im->threads);
		if (im->has_duration)
			printf("%" PRIu64, im->duration_ns);
		else
			printf("null");
		printf(",\"status\":\"%s\"", status_name(im->status));
		if (im->window)
			printf(",\"window\":{\"index\":%u,\"reason\":\"%s\"}", im->window_index,
			       window_reason_name(im->window_reason));
		printf("}");
	}
	printf("],\"children\":[");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const proc_t *c = &t->procs[kids[i]];
		if (i)
			printf(",");
		/* which of our images it was forked from: its index in "images" */
		printf("{\"forked_from_image\":%zu,\"process\":", c->from_image - pr->first);
		rc = json_proc(t, kids[i]);
		printf("}");
	}
	printf("]}");
	free(kids);
	return rc;
}

static int print_tree(const tree_t *t, int json)
{
	size_t n, *roots = children(t, -1, -1, &n);
	if (n == (size_t)-1)
		return -1;
	int rc = 0;
	if (json)
		printf("{\"traces\":%zu,\"processes\":%zu,\"roots\":[", t->nimg, t->nprocs);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (json && i)
			printf(",");
		rc = json ? json_proc(t, roots[i]) : text_proc(t, roots[i], 0);
	}
	if (json)
		printf("]}\n");
	free(roots);
	return rc;
}

static void tree_free(tree_t *t)
{
	for (size_t i = 0; i < t->nimg; i++)
		free(t->img[i].path), free(t->img[i].cmdline);
	free(t->img);
	free(t->procs);
}

/* ---- the command ------------------------------------------------------------------- */
int ar_cmd_tree(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, AR_OPT_OWN},
					     {"manifest", required_argument, NULL, AR_OPT_OWN + 1},
					     AR_CMD_SHARED_OPTIONS,
					     {NULL, 0, NULL, 0}};
	int json = 0, c;
	const char *manifest = NULL;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == AR_OPT_OWN)
			json = 1;
		else if (c == AR_OPT_OWN + 1)
			manifest = optarg;
		else
			return ar_cmd_other_option(c, argv, &ar_tree_help);
	}
	if (manifest && optind < argc)
		return ar_cli_usage_error("tree: --manifest %s names the traces; '%s' is one more (give one or the "
					  "other)", manifest, argv[optind]);
	if (!manifest && optind >= argc)
		return ar_cli_usage_error("tree: missing DIR, the directory of a recording (or TRACE..., or "
					  "--manifest FILE)");
	tree_t t = {0};
	int rc = 0;
	if (manifest)
		rc = read_manifest(&t, manifest);
	for (int i = optind; i < argc && rc == 0; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = read_dir(&t, argv[i]);
		else
			rc = read_trace(&t, argv[i], NULL, 0);
	}
	if (rc == 0)
		rc = build(&t);
	if (rc == 0 && t.nimg)
		rc = print_tree(&t, json);
	if (rc == 0 && !t.nimg && !t.failed) {
		ar_cli_error(manifest, "lists no traces");
		t.failed = 1;
	}
	int failed = t.failed;
	tree_free(&t);
	if (rc != 0)
		return ar_cli_error(NULL, "tree: out of memory");
	if (ar_cli_close_output(stdout) != 0)
		return ar_cli_error(NULL, "tree: cannot write the output: %s", strerror(errno));
	return failed ? AR_EXIT_RUNTIME : AR_EXIT_OK;
}
