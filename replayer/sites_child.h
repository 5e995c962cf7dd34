/*
 * sites_child.h — allocreplay stores the allocation sites of a trace
 * recorded with stacks (results table sites) by running `alloctrace stacks
 * --db DB TRACE` as a child process: the sites model and the symboliser
 * (analysis/, libdw) stay out of the replayer, which links neither.
 */
#ifndef AR_SITES_CHILD_H
#define AR_SITES_CHILD_H

#include <stddef.h>
#include <stdint.h>

/*
 * When the trace at path has call stacks, run alloctrace (ALLOCRR_ALLOCTRACE,
 * else the alloctrace next to this executable) to store its sites into the
 * results database db_path, its output discarded and its messages shown
 * only when it fails. A trace without stacks does nothing. Returns 0 (stored, or nothing
 * to store), or -1 after a note on stderr: the runs are stored either way,
 * the sites are an addition (`alloctrace stacks --db` stores them later).
 */
int ar_sites_child_store(const char *path, const char *db_path);

/*
 * The ids of the recorded stacks of the trace at path that have a frame
 * named function (allocreplay --route NAME:frame=FUNCTION), from
 * `alloctrace stacks --ids-through=FUNCTION` run the same way: *ids
 * (malloc'ed, sorted; free it) and *n > 0. Returns 0, or -1 with a message
 * in err (no stacks, no alloctrace, no such frame, the child failed).
 */
int ar_sites_child_ids_through(const char *path, const char *function, uint32_t **ids, size_t *n, char *err,
			       size_t cap);

#endif
