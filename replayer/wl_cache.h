/*
 * wl_cache.h — compiled workloads cached by the trace's content hash, so 8
 * allocators x 5 repetitions (and the next allocreplay run) compile a trace
 * once. Cache directory: $ALLOCRR_CACHE_DIR, else $XDG_CACHE_HOME/allocrr,
 * else $HOME/.cache/allocrr. File name: <sha256>.v<AR_WL_VERSION>.wl, so a
 * format change never reads an old file; a file that fails ar_wl_open()'s
 * checks is recompiled. Writers compile into a temporary file in the same
 * directory and rename() it into place: concurrent allocreplays never see a
 * half-written workload. The temporary file of a writer that was killed
 * (named .tmp.<pid>) is removed by the next writer of the same workload.
 */
#ifndef AR_WL_CACHE_H
#define AR_WL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ar_trace.h"
#include "workload.h"

/*
 * Find or build the workload of trace_path (whose hash is sha256) and write
 * its path to out. *hit = 1 when the cache already had it. A compile calls
 * progress (may be NULL) as ar_wl_compile_progress does. Returns 0, or -1
 * with a message in err that says what to do.
 */
int ar_wl_cache_get(const char *trace_path, const char *sha256, char *out, size_t outcap, int *hit,
		    ar_wl_progress_fn *progress, void *ctx, char *err, size_t errcap);

#endif
