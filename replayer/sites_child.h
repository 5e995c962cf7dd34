/*
 * sites_child.h — allocreplay stores the allocation sites of a trace
 * recorded with stacks (results table sites) by running `alloctrace stacks
 * --db DB TRACE` as a child process: the sites model and the symboliser
 * (analysis/, libdw) stay out of the replayer, which links neither.
 */
#ifndef AR_SITES_CHILD_H
#define AR_SITES_CHILD_H

/*
 * When the trace at path has call stacks, run alloctrace (ALLOCRR_ALLOCTRACE,
 * else the alloctrace next to this executable) to store its sites into the
 * results database db_path, its output discarded and its messages shown
 * only when it fails. A trace without stacks does nothing. Returns 0 (stored, or nothing
 * to store), or -1 after a note on stderr: the runs are stored either way,
 * the sites are an addition (`alloctrace stacks --db` stores them later).
 */
int ar_sites_child_store(const char *path, const char *db_path);

#endif
