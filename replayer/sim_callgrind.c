/*
 * sim_callgrind.c — read a callgrind profile (valgrind's "callgrind format",
 * docs: valgrind manual, "Callgrind Format Specification") into totals and
 * the allocator's share.
 *
 * What is read: the "events:" line (which columns are Ir, D1mr, D1mw, DLmr,
 * DLmw), "ob=" / "fn=" (current object and function) and "cob=" / "cfn="
 * (the callee of the next "calls=" line; cob defaults to the caller's
 * object), with name compression "(id) name" / "(id)", and cost lines.
 * Self cost lines summed give the total, every instruction once. The cost
 * line right after a "calls=" line is that call's inclusive cost (already
 * in the callee's self cost): it never adds to the total.
 *
 * The allocator's share ("inside the allocator"): the inclusive cost of
 * every call the worker's own code (its executable's object) makes into a
 * function of the allocator's library — for glibc, whose malloc shares
 * libc.so.6 with everything else, into libc's malloc-family entry points
 * (glibc_malloc_fns). Inclusive, so what the allocator's code calls in
 * other libraries on the way (pthread mutexes and the mmap/munmap wrappers
 * in libc, __tls_get_addr in ld.so, calloc's memset) is the allocator's
 * cost too, for every allocator alike. Callgrind skips PLT stubs
 * (--skip-plt=yes, its default), so the calls appear as made directly.
 * Such calls are disjoint parts of the total, so allocator <= total and
 * other = total - allocator. The first call of each heap function goes
 * through ld.so's lazy binding first: that resolution is "other".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_callgrind.h"

/* The heap entry points as the worker calls them (and glibc's __libc_
 * names, which its symbol table may give instead). */
static const char *const glibc_malloc_fns[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
	"memalign", "valloc", "pvalloc", "__libc_malloc", "__libc_free", "__libc_calloc",
	"__libc_realloc", "__libc_reallocarray", "__libc_memalign", "__libc_valloc",
	"__libc_pvalloc", "__posix_memalign", NULL,
};

/* Names by compressed id, one table per kind (ob, fn). */
typedef struct names {
	char **v;
	size_t n;
} names_t;

static void names_free(names_t *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* "(id) name" defines id, "(id)" refers to it, "name" has no id. Returns
 * the name (owned by the table, or by the line for uncompressed names). */
static const char *resolve(names_t *t, char *s)
{
	if (*s != '(')
		return s;
	char *end;
	unsigned long id = strtoul(s + 1, &end, 10);
	if (*end != ')' || id > 10000000)
		return "";
	const char *name = end + 1;
	while (*name == ' ')
		name++;
	if (*name) {
		if (id >= t->n) {
			size_t n = (id + 1) * 2;
			char **v = realloc(t->v, n * sizeof *v);
			if (!v)
				return "";
			memset(v + t->n, 0, (n - t->n) * sizeof *v);
			t->v = v;
			t->n = n;
		}
		free(t->v[id]);
		t->v[id] = strdup(name);
		return t->v[id] ? t->v[id] : "";
	}
	return id < t->n && t->v[id] ? t->v[id] : "";
}

static int is_glibc_malloc_fn(const char *fn)
{
	size_t len = strcspn(fn, "@'"); /* malloc@@GLIBC_2.2.5, fn'2 */
	for (const char *const *p = glibc_malloc_fns; *p; p++)
		if (strlen(*p) == len && !strncmp(*p, fn, len))
			return 1;
	return 0;
}

static int is_libc(const char *obj)
{
	const char *b = strrchr(obj, '/');
	b = b ? b + 1 : obj;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5);
}

static void add(ar_sim_cost_t *c, uint64_t ir, uint64_t d1, uint64_t ll)
{
	c->ir += ir;
	c->d1 += d1;
	c->ll += ll;
}

/* Is fn in object obj one of the allocator's functions? */
static int is_alloc_fn(const char *obj, const char *fn, const char *alloc_real, int glibc)
{
	if (glibc)
		return is_libc(obj) && is_glibc_malloc_fn(fn);
	char real[PATH_MAX];
	const char *o = realpath(obj, real) ? real : obj;
	if (alloc_real[0] && !strcmp(o, alloc_real))
		return 1;
	/* tcmalloc keeps its entry points in a section valgrind maps to no
	 * object ("???"); the worker proved at start-up that every heap
	 * function it calls is the allocator's, so the name decides there. */
	return !strcmp(obj, "???") && is_glibc_malloc_fn(fn);
}

int ar_sim_read(const char *path, const char *alloc_obj, const char *worker_obj, int glibc,
		ar_sim_result_t *res, char *err, size_t errcap)
{
	memset(res, 0, sizeof *res);
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errcap, "cannot read the callgrind profile %s", path);
		return -1;
	}
	char alloc_real[PATH_MAX] = "", worker_real[PATH_MAX] = "";
	if (alloc_obj && !realpath(alloc_obj, alloc_real))
		snprintf(alloc_real, sizeof alloc_real, "%s", alloc_obj);
	if (!realpath(worker_obj, worker_real))
		snprintf(worker_real, sizeof worker_real, "%s", worker_obj);
	names_t obs = { 0 }, fns = { 0 };
	enum { IR, D1MR, D1MW, DLMR, DLMW, NEV };
	int col[NEV] = { -1, -1, -1, -1, -1 }, npos = 1, call_cost = 0, have_events = 0;
	int in_worker = 0, cur_walk = 0, alloc_call = 0;
	char cur_obj[PATH_MAX] = "", callee_obj[PATH_MAX] = "", callee_fn[1024] = "";
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		char c = line[0];
		if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') {
			char *p = line, *end;
			for (int i = 0; i < npos; i++) { /* positions: skip */
				while (*p == ' ')
					p++;
				while (*p && *p != ' ')
					p++;
			}
			uint64_t ev[16] = { 0 };
			for (int i = 0; i < 16; i++) {
				while (*p == ' ')
					p++;
				if (!*p)
					break;
				ev[i] = strtoull(p, &end, 10);
				p = end;
			}
			uint64_t ir = ev[col[IR]], d1 = ev[col[D1MR]] + ev[col[D1MW]];
			uint64_t ll = ev[col[DLMR]] + ev[col[DLMW]];
			if (call_cost) { /* the inclusive cost of the call above */
				call_cost = 0;
				if (alloc_call)
					add(&res->allocator, ir, d1, ll);
				continue;
			}
			add(&res->total, ir, d1, ll);
			if (cur_walk) {
				add(&res->access, ir, d1, ll);
				res->has_access = 1;
			}
		} else if (!strncmp(line, "calls=", 6)) {
			call_cost = 1;
			alloc_call = in_worker &&
				     is_alloc_fn(callee_obj[0] ? callee_obj : cur_obj, callee_fn, alloc_real, glibc);
			callee_obj[0] = '\0'; /* cob= holds for one call */
		} else if (!strncmp(line, "ob=", 3)) {
			snprintf(cur_obj, sizeof cur_obj, "%s", resolve(&obs, line + 3));
			char real[PATH_MAX];
			const char *o = realpath(cur_obj, real) ? real : cur_obj;
			in_worker = !strcmp(o, worker_real);
		} else if (!strncmp(line, "fn=", 3)) {
			const char *fn = resolve(&fns, line + 3);
			cur_walk = in_worker && !strcmp(fn, "ar_access_walk");
			callee_obj[0] = '\0';
		} else if (!strncmp(line, "cob=", 4)) {
			snprintf(callee_obj, sizeof callee_obj, "%s", resolve(&obs, line + 4));
		} else if (!strncmp(line, "cfn=", 4)) {
			snprintf(callee_fn, sizeof callee_fn, "%s", resolve(&fns, line + 4));
		} else if (!strncmp(line, "positions:", 10)) {
			npos = 0;
			for (char *tok = strtok(line + 10, " "); tok; tok = strtok(NULL, " "))
				npos++;
		} else if (!strncmp(line, "events:", 7)) {
			static const char *const want[NEV] = { "Ir", "D1mr", "D1mw", "DLmr", "DLmw" };
			int i = 0;
			for (char *tok = strtok(line + 7, " "); tok && i < 16; tok = strtok(NULL, " "), i++)
				for (int k = 0; k < NEV; k++)
					if (!strcmp(tok, want[k]))
						col[k] = i;
			have_events = 1;
		}
	}
	free(line);
	fclose(f);
	names_free(&obs);
	names_free(&fns);
	for (int k = 0; k < NEV; k++)
		if (col[k] < 0)
			have_events = 0;
	if (!have_events) {
		snprintf(err, errcap, "%s is not a callgrind profile with cache simulation "
			 "(events Ir D1mr D1mw DLmr DLmw missing)", path);
		return -1;
	}
	return 0;
}
