/*
 * route.c — allocreplay --route in the parent (route.h): parse the rules,
 * decide every allocation of a trace, write the route map for the worker.
 *
 * The map must name the same allocations, in the same order, as the
 * worker's streams: the compiler (wl_compile.c) emits exactly one op per
 * allocation event of a known op, on its thread's stream, in sequence
 * order; so walking the events in sequence order (ar_reader_next_merged,
 * as the compiler does) and counting per thread gives the same ordinals.
 * The counts are checked against the workload before the file is written,
 * and the worker checks them again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_alloc.h"
#include "ar_trace.h"
#include "route.h"
#include "route_map.h"
#include "sites_child.h"

static const char *const our_names[] = { "pool", "arena", "tlscache", "freelist" };

/* Unsigned decimal at *s, advanced past it. 0, or -1. */
static int take_u64(const char **s, uint64_t *v)
{
	char *end;
	if (**s < '0' || **s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(*s, &end, 10);
	if (errno)
		return -1;
	*v = x;
	*s = end;
	return 0;
}

/* One selector "size=...", "stack=...", "thread=..." or "frame=..." (n bytes at s). */
static int take_sel(ar_route_rule_t *r, const char *s, size_t n)
{
	char buf[128];
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	const char *p;
	uint64_t a, b;
	if (!strncmp(buf, "size=", 5)) {
		p = buf + 5;
		if (take_u64(&p, &a))
			return -1;
		b = a;
		if (*p == '-' && (++p, take_u64(&p, &b) || b < a))
			return -1;
		r->size_min = a;
		r->size_max = b;
	} else if (!strncmp(buf, "stack=", 6)) {
		p = buf + 6;
		if (take_u64(&p, &a) || a == 0 || a > UINT32_MAX)
			return -1;
		r->has_stack = 1;
		r->stack = (uint32_t)a;
	} else if (!strncmp(buf, "thread=", 7)) {
		p = buf + 7;
		if (take_u64(&p, &a) || a > UINT32_MAX)
			return -1;
		r->has_thread = 1;
		r->thread = (uint32_t)a;
	} else if (!strncmp(buf, "frame=", 6)) {
		p = buf + 6;
		size_t l = strlen(p);
		if (!l || l >= sizeof r->frame || strpbrk(p, ";\n"))
			return -1;
		r->has_frame = 1;
		memcpy(r->frame, p, l + 1);
		p += l;
	} else {
		return -1;
	}
	return *p ? -1 : 0;
}

int ar_route_add(ar_route_set_t *rs, const char *rule, char *err, size_t cap)
{
	const char *colon = strchr(rule, ':');
	size_t nl = colon ? (size_t)(colon - rule) : 0;
	int known = -1;
	for (size_t i = 0; colon && i < sizeof our_names / sizeof *our_names; i++)
		if (strlen(our_names[i]) == nl && !strncmp(rule, our_names[i], nl))
			known = (int)i;
	if (known < 0) {
		snprintf(err, cap, "--route '%s': a rule is NAME:SELECTOR, NAME one of pool, arena, "
			 "tlscache, freelist (e.g. pool:size=64, arena:stack=17, pool:size=1-256,thread=0, "
			 "arena:frame=parse_request)",
			 rule);
		return -1;
	}
	if (rs->nrules == AR_ROUTE_MAX_RULES) {
		snprintf(err, cap, "--route '%s': at most %d rules", rule, AR_ROUTE_MAX_RULES);
		return -1;
	}
	ar_route_rule_t *r = &rs->rules[rs->nrules];
	*r = (ar_route_rule_t){ .size_min = 0, .size_max = UINT64_MAX };
	const char *s = colon + 1;
	if (!*s) {
		snprintf(err, cap, "--route '%s': no selector (size=N, size=A-B, stack=ID, thread=N, frame=FUNCTION)",
			 rule);
		return -1;
	}
	while (*s) {
		size_t n = strcspn(s, ",");
		if (take_sel(r, s, n) != 0) {
			snprintf(err, cap, "--route '%s': '%.*s' is not a selector: size=N, size=A-B (bytes, "
				 "A <= B), stack=ID (> 0), thread=N or frame=FUNCTION (under 96 bytes, no ';')", rule,
				 (int)n, s);
			return -1;
		}
		s += n + (s[n] == ',');
	}
	const char *name = our_names[known];
	r->lib = 0;
	for (int i = 0; i < rs->nnames; i++)
		if (!strcmp(rs->names[i], name))
			r->lib = i + 1;
	if (!r->lib) {
		snprintf(rs->names[rs->nnames], sizeof rs->names[0], "%s", name);
		r->lib = ++rs->nnames;
	}
	snprintf(r->text, sizeof r->text, "%s[%s]", name, colon + 1);
	size_t l = strlen(rs->label), o = strlen(rs->option);
	if (l + 1 + strlen(r->text) >= sizeof rs->label || o + 1 + strlen(rule) >= sizeof rs->option) {
		snprintf(err, cap, "--route '%s': the rules together are too long to name the runs (at "
			 "most %zu characters of NAME[SEL] in all)", rule, sizeof rs->label - 1);
		return -1;
	}
	snprintf(rs->label + l, sizeof rs->label - l, "+%s", r->text);
	snprintf(rs->option + o, sizeof rs->option - o, "%s%s", o ? ";" : "", rule);
	rs->nrules++;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The allocator (0 = base, else a names index + 1) of allocation e. */
static int decide(const ar_route_set_t *rs, const ar_event_t *e)
{
	uint64_t n = ar_event_request_bytes(e);
	for (int i = 0; i < rs->nrules; i++) {
		const ar_route_rule_t *r = &rs->rules[i];
		if (n >= r->size_min && n <= r->size_max && (!r->has_stack || e->stack == r->stack) &&
		    (!r->has_thread || e->thread == r->thread) &&
		    (!r->has_frame || bsearch(&e->stack, r->frame_ids, r->nframe_ids, sizeof *r->frame_ids, cmp_u32)))
			return r->lib;
	}
	return 0;
}

/* The ops wl_compile.c turns into an allocation op the map counts. */
static int is_alloc(unsigned op)
{
	switch (op) {
	case AR_OP_MALLOC: case AR_OP_CALLOC: case AR_OP_POSIX_MEMALIGN: case AR_OP_ALIGNED_ALLOC:
	case AR_OP_MEMALIGN: case AR_OP_VALLOC: case AR_OP_PVALLOC:
		return 1;
	default:
		return 0;
	}
}

typedef struct owners {
	uint8_t *b;
	uint64_t n, cap;
} owners_t;

/* Every allocation's owner, per trace thread, into *per (nper threads). */
static int walk(const ar_route_set_t *rs, const char *trace_path, owners_t **per, uint32_t *nper,
		uint64_t routed[AR_ROUTE_MAX + 1], char *err, size_t cap)
{
	ar_reader_t *r;
	ar_error_t e0;
	if (ar_reader_open(&r, trace_path, &e0) != 0) {
		snprintf(err, cap, "%s", e0.msg);
		return -1;
	}
	ar_event_t e;
	int rc;
	*per = NULL;
	*nper = 0;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		if (!is_alloc(e.op))
			continue;
		if (e.thread >= *nper) {
			uint32_t n = e.thread + 1;
			owners_t *m = realloc(*per, n * sizeof *m);
			if (!m)
				goto oom;
			memset(m + *nper, 0, (n - *nper) * sizeof *m);
			*per = m;
			*nper = n;
		}
		owners_t *o = &(*per)[e.thread];
		if (o->n == o->cap) {
			uint64_t c = o->cap ? o->cap * 2 : 4096;
			uint8_t *b = realloc(o->b, c);
			if (!b)
				goto oom;
			o->b = b;
			o->cap = c;
		}
		int k = decide(rs, &e);
		o->b[o->n++] = (uint8_t)k;
		routed[k]++;
	}
	/* A decode error ends the walk where it ended the compile (its valid
	 * prefix); the counts against the workload decide whether they agree. */
	ar_reader_close(r);
	return 0;
oom:
	ar_reader_close(r);
	snprintf(err, cap, "out of memory deciding the routes of %s", trace_path);
	return -1;
}

/* Write header, stream table and owner bytes to fd. 0, or -1. */
static int write_map(int fd, const ar_workload_t *w, const owners_t *per, uint32_t nper, int nroutes)
{
	uint32_t n = w->hdr->nthreads;
	ar_route_map_header_t h = { .magic = AR_ROUTE_MAP_MAGIC, .nstreams = n, .nroutes = (uint32_t)nroutes };
	uint64_t off = sizeof h + (uint64_t)n * sizeof(ar_route_map_stream_t);
	ar_route_map_stream_t *ms = calloc(n ? n : 1, sizeof *ms);
	if (!ms)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ti = w->threads[i].trace_index;
		ms[i].trace_index = ti;
		ms[i].nallocs = ti < nper ? per[ti].n : 0;
		ms[i].offset = off;
		off += ms[i].nallocs;
	}
	h.file_bytes = off;
	int rc = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
			 write(fd, ms, n * sizeof *ms) == (ssize_t)(n * sizeof *ms) ? 0 : -1;
	for (uint32_t i = 0; !rc && i < n; i++) {
		const owners_t *o = ms[i].nallocs ? &per[ms[i].trace_index] : NULL;
		for (uint64_t done = 0; !rc && done < ms[i].nallocs;) {
			ssize_t k = write(fd, o->b + done, ms[i].nallocs - done);
			if (k <= 0)
				rc = -1;
			else
				done += (uint64_t)k;
		}
	}
	free(ms);
	return rc;
}

int ar_route_write_map(const ar_route_set_t *rs, const char *trace_path, const ar_workload_t *w,
		       char *map_path, size_t map_cap, uint64_t routed[AR_ROUTE_MAX + 1], char *err,
		       size_t cap)
{
	owners_t *per = NULL;
	uint32_t nper = 0;
	memset(routed, 0, (AR_ROUTE_MAX + 1) * sizeof *routed);
	ar_route_set_t local = *rs; /* frame= resolved for this trace */
	int rc = 0;
	for (int i = 0; i < local.nrules && !rc; i++) {
		ar_route_rule_t *r = &local.rules[i];
		uint32_t *ids = NULL;
		if (r->has_frame && ar_sites_child_ids_through(trace_path, r->frame, &ids, &r->nframe_ids, err, cap))
			rc = -1;
		r->frame_ids = ids;
	}
	if (!rc)
		rc = walk(&local, trace_path, &per, &nper, routed, err, cap);
	for (int i = 0; i < local.nrules; i++)
		free((void *)local.rules[i].frame_ids);
	if (rc)
		return -1;
	for (uint32_t i = 0; i < w->hdr->nthreads && !rc; i++) {
		uint32_t ti = w->threads[i].trace_index;
		uint64_t have = ti < nper ? per[ti].n : 0, want = ar_route_map_allocs(&w->threads[i]);
		if (have != want) {
			snprintf(err, cap, "%s: thread %u has %" PRIu64 " allocations, its compiled stream %"
				 PRIu64 ": the routes cannot be matched to the workload (recompile it: "
				 "allocreplay --cache-clean)", trace_path, ti, have, want);
			rc = -1;
		}
	}
	if (!rc) {
		const char *tmp = getenv("TMPDIR");
		snprintf(map_path, map_cap, "%s/allocreplay-route.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		int fd = mkstemp(map_path);
		if (fd < 0 || write_map(fd, w, per, nper, rs->nnames) != 0) {
			snprintf(err, cap, "%s: cannot write the route map: %s (set TMPDIR)", map_path,
				 strerror(errno));
			if (fd >= 0)
				unlink(map_path);
			rc = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	for (uint32_t i = 0; i < nper; i++)
		free(per[i].b);
	free(per);
	return rc;
}

int ar_route_library(const char *library, char *out, size_t cap)
{
	size_t n = strlen(library);
	if (n < 3 || strcmp(library + n - 3, ".so"))
		return -1;
	snprintf(out, cap, "%.*s-prefixed.so", (int)(n - 3), library);
	return access(out, R_OK) == 0 ? 0 : -1;
}

int ar_route_prepare(ar_route_job_t *rj, const ar_route_set_t *rs, const char *trace_path,
		     const ar_workload_t *w, char *err, size_t cap)
{
	memset(rj, 0, sizeof *rj);
	if (!rs->nrules)
		return 0;
	size_t na = 0;
	for (int i = 0; i < rs->nnames; i++) {
		ar_allocator_t a;
		char lib[4096];
		if (ar_registry_find(rs->names[i], &a) != 0 || !a.installed ||
		    ar_route_library(a.library, lib, sizeof lib) != 0) {
			snprintf(err, cap, "--route %s: no liballocrr-%s-prefixed.so beside liballocrr-%s.so "
				 "(run make, or set ALLOCRR_LIBDIR)", rs->names[i], rs->names[i], rs->names[i]);
			return -1;
		}
		snprintf(rj->lib_arg[i], sizeof rj->lib_arg[i], "%s=%s", rs->names[i], lib);
		rj->args[na++] = "--route";
		rj->args[na++] = rj->lib_arg[i];
	}
	if (ar_route_write_map(rs, trace_path, w, rj->map_path, sizeof rj->map_path, rj->routed, err,
			       cap) != 0)
		return -1;
	rj->args[na++] = "--route-map";
	rj->args[na++] = rj->map_path;
	rj->args[na] = NULL;
	rj->active = 1;
	return 0;
}

void ar_route_release(ar_route_job_t *rj)
{
	if (rj->active)
		unlink(rj->map_path);
	rj->active = 0;
}
