/*
 * route.h — allocreplay --route, the parent's side: the rules, which
 * allocation of a trace each one takes, and the route map file the worker
 * reads (route_map.h; the worker's side is worker_route.h).
 *
 * Grammar (docs/RESULTS.md, "Routing"), one rule per --route:
 *   RULE := NAME ':' SEL [',' SEL]...
 *   NAME := pool | arena | tlscache | freelist     (our allocators)
 *   SEL  := size=N | size=A-B                      (requested bytes, inclusive;
 *                                                   calloc: count x size)
 *         | stack=ID                               (the trace's stack id, as
 *                                                   alloctrace stacks prints it)
 *         | thread=N                               (the trace's thread index)
 *         | frame=FUNCTION                         (stacks with a frame named
 *                                                   FUNCTION, as the folded
 *                                                   labels write it)
 * The selectors of one rule must all hold; the rules are tried in the order
 * given and the first that holds routes the allocation; an allocation no
 * rule takes stays with the base allocator. Symbolising belongs to
 * analysis/: a frame= selector becomes the set of stack ids that
 * `alloctrace stacks --ids-through=FUNCTION` prints, run as a child
 * (sites_child.h), for each trace.
 */
#ifndef AR_ROUTE_H
#define AR_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"
#include "worker_route.h"

#define AR_ROUTE_MAX_RULES 16

typedef struct ar_route_rule {
	int lib;                       /* 1-based index into ar_route_set_t.names */
	uint64_t size_min, size_max;   /* 0..UINT64_MAX: any */
	int has_stack, has_thread, has_frame;
	uint32_t stack, thread;
	char frame[96];                /* frame=: the function name */
	const uint32_t *frame_ids;     /* its stacks (sorted), while one trace is walked */
	size_t nframe_ids;
	char text[128];                /* canonical: "pool[size=64]" */
} ar_route_rule_t;

typedef struct ar_route_set {
	ar_route_rule_t rules[AR_ROUTE_MAX_RULES];
	int nrules;
	char names[AR_ROUTE_MAX][16];  /* the routed allocators, in order of first use */
	int nnames;
	char label[97];                /* "+pool[size=64]+arena[stack=17]": the run's name after the base's */
	char option[512];              /* "pool:size=64;arena:stack=17" for runs.options */
} ar_route_set_t;

/* Add one --route RULE to rs. 0, or -1 with a message in err naming the
 * rule and what to write instead. */
int ar_route_add(ar_route_set_t *rs, const char *rule, char *err, size_t cap);

/* Walk the trace at trace_path in sequence order (a frame= selector first
 * resolved to its stack ids in that trace), decide each allocation
 * by the rules, check the result against the workload w compiled from it
 * (same threads, same allocation ops per stream) and write the route map
 * to a new temporary file, its name into map_path. Also counts the
 * allocations routed to each allocator into routed[0..nnames] (0: base).
 * 0, or -1 with a message in err (naming the trace, or the mismatch). */
int ar_route_write_map(const ar_route_set_t *rs, const char *trace_path, const ar_workload_t *w,
		       char *map_path, size_t map_cap, uint64_t routed[AR_ROUTE_MAX + 1], char *err,
		       size_t cap);

/* One trace's routing: the map and the worker's extra arguments. */
typedef struct ar_route_job {
	int active;
	char map_path[4096];
	char lib_arg[AR_ROUTE_MAX][4200]; /* "NAME=PATH" */
	char *args[2 * AR_ROUTE_MAX + 3]; /* --route NAME=PATH ... --route-map FILE NULL */
	uint64_t routed[AR_ROUTE_MAX + 1]; /* allocations per allocator, 0 = base */
} ar_route_job_t;

/* Set up rj for the trace at trace_path, compiled into w: find each routed
 * allocator's prefixed library (the registry's library, route_library),
 * write the map (ar_route_write_map), fill the worker's arguments. With no
 * rule, rj stays inactive. 0, or -1 with a message in err. */
int ar_route_prepare(ar_route_job_t *rj, const ar_route_set_t *rs, const char *trace_path,
		     const ar_workload_t *w, char *err, size_t cap);
/* Remove rj's map file. */
void ar_route_release(ar_route_job_t *rj);

/* The prefixed library of our allocator whose malloc-replacing library is
 * at library (liballocrr-NAME.so -> liballocrr-NAME-prefixed.so, same
 * directory) into out. 0, or -1 when it is not there. */
int ar_route_library(const char *library, char *out, size_t cap);

#endif
