/*
 * wl_cache.h — compiled workloads cached by the trace's content hash, so 8
 * allocators x 5 repetitions (and the next allocreplay run) compile a trace
 * once, and a cache that can be trusted because it checks what it reads.
 *
 * Where: $ALLOCRR_CACHE_DIR, else $XDG_CACHE_HOME/allocrr, else
 * $HOME/.cache/allocrr, else <home of the passwd entry>/.cache/allocrr (cron,
 * systemd and CI often run without HOME), else <$TMPDIR or /tmp>/allocrr-
 * cache-<euid>. Missing directories are created 0700. An existing cache
 * directory must be a directory (lstat: not a symbolic link), owned by the
 * effective user, with no group or other write permission; otherwise it is
 * refused and nothing in it is read, written or removed. File names:
 * <sha256>.v<AR_WL_VERSION>.wl, so a format change never reads an old file.
 *
 * What defends against what:
 *   - The private directory defends against other users. In a directory
 *     another user can write, they could plant a workload for a trace they
 *     expect you to replay (results that are not your program's), or a
 *     symbolic link at a name you will create (a write through it, into
 *     any file you can write). Nothing stored in the file can prove it was
 *     not planted: whoever writes the file writes its digest too. So the
 *     owner and mode are checked, and temporary files are opened
 *     O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, besides.
 *   - The content digest (workload.h, ar_wl_digest: SHA-256 of everything
 *     the worker reads, recorded last by the compiler) defends against
 *     accidents to a file we wrote ourselves: a cut (disk full, a crash
 *     that left zero-filled blocks), a damaged page, a file edited or
 *     copied over by hand. Checked on every reuse.
 *   - The trace's own figures tie a workload to the trace at hand: the
 *     trace_sha256 string, the trace's size, its event count and threads as
 *     its index announces them (cheap: the index, not the events), and the
 *     workload's counts being consistent with them (calls + skipped =
 *     events read <= events indexed, equal for a complete trace; one
 *     stream per thread with events, in order, none with more calls than
 *     its thread has events). A workload of another trace renamed to this
 *     trace's key — even with its header rewritten and its digest redone —
 *     fails these.
 * Any doubt recompiles, with a one-line note (ar_wl_cache_t.note) naming
 * the file and why.
 *
 * Writers compile into <name>.tmp.<pid> in the same directory and rename()
 * it into place: concurrent allocreplays never see a half-written
 * workload. The temporary file of a writer that was killed is removed by
 * the next writer (its pid no longer exists); a live process's never is.
 *
 * Size: files are counted by the disk blocks they use (workloads are sparse
 * files). When the total passes max_bytes, the least recently used
 * workloads are removed until it fits (LRU: every reuse sets the file's
 * time to now). A workload in use — by this process or another
 * allocreplay, whose lease is a shared flock(2) held from ar_wl_cache_get
 * to ar_wl_cache_release — is never removed, nor anything that is not a
 * workload or a workload's temporary file.
 */
#ifndef AR_WL_CACHE_H
#define AR_WL_CACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_trace.h"
#include "workload.h"

/* The default limit (allocreplay --cache-max, ALLOCRR_CACHE_MAX): 4 GiB.
 * A workload takes about 3 bytes per event (8 where most frees cross
 * threads; docs/BENCHMARKS.md, "Traces larger than RAM"): 4 GiB keeps the
 * corpus and the workloads of traces of a billion events, which
 * is what repeated replays need, while staying a small part of a laptop's
 * disk. Recompiling what was evicted costs seconds (docs/BENCHMARKS.md). */
#define AR_WL_CACHE_MAX_DEFAULT (4ull << 30)

/* Told one line (no newline) that says what the cache did on its own:
 * why a cached workload was not used, what was evicted. */
typedef void ar_wl_cache_note_fn(void *ctx, const char *line);

/* The cache of one command; fill max_bytes, note and note_ctx, then
 * ar_wl_cache_open. */
typedef struct ar_wl_cache {
	char dir[PATH_MAX];
	uint64_t max_bytes;        /* disk bytes kept at most; 0 = no limit */
	ar_wl_cache_note_fn *note; /* may be NULL */
	void *note_ctx;
} ar_wl_cache_t;

/* A workload in use: its path, held open with a shared lock (eviction in
 * any process leaves it alone) until ar_wl_cache_release. */
typedef struct ar_wl_lease {
	int fd; /* -1: none */
	char path[PATH_MAX];
} ar_wl_lease_t;

/* What ar_wl_cache_clean did. */
typedef struct ar_wl_cache_tally {
	unsigned removed;       /* workloads and dead temporary files removed */
	uint64_t removed_bytes; /* disk bytes they used */
	unsigned in_use;        /* workloads kept: in use by a running allocreplay */
	uint64_t in_use_bytes;
} ar_wl_cache_tally_t;

/*
 * Find the cache directory (the order above) into c->dir and check it;
 * create it (and missing parents, 0700) when create is set. Returns 0;
 * 1 when !create and the directory does not exist (an empty cache); -1
 * with a message in err naming the directory, what is wrong and what to
 * do (set ALLOCRR_CACHE_DIR).
 */
int ar_wl_cache_open(ar_wl_cache_t *c, int create, char *err, size_t errcap);

/*
 * Find or build the workload of trace_path (whose hash is sha256): a cached
 * one that passes every check above, else a fresh compile stored in the
 * cache. On success lease holds its path and lock, and *hit = 1 when the
 * cache had it (its time is then refreshed). A compile calls progress (may
 * be NULL) as ar_wl_compile_opts does, and trims the cache to max_bytes
 * (this workload kept). Returns 0, or -1 with a message in err that says
 * what to do.
 */
int ar_wl_cache_get(ar_wl_cache_t *c, const char *trace_path, const char *sha256, ar_wl_lease_t *lease,
		    int *hit, ar_wl_progress_fn *progress, void *ctx, char *err, size_t errcap);

/* Drop the lease (no-op when it holds none), then trim the cache to
 * max_bytes: the workload just released may go if it is the least
 * recently used, or alone larger than the limit (noted). */
void ar_wl_cache_release(ar_wl_cache_t *c, ar_wl_lease_t *lease);

/* Remove least recently used workloads until the cache uses at most
 * max_bytes (none if 0), and dead writers' temporary files; leased ones
 * stay. Notes what it removed. */
void ar_wl_cache_trim(ar_wl_cache_t *c);

/*
 * Empty the cache: every workload (any format version) and dead writers'
 * temporary files; workloads in use and live writers' files stay. Files
 * whose names are not the cache's are never touched. Fills *t. Returns 0,
 * or -1 with a message in err (the directory cannot be read).
 */
int ar_wl_cache_clean(ar_wl_cache_t *c, ar_wl_cache_tally_t *t, char *err, size_t errcap);

#endif
