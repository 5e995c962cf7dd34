/*
 * wl_cache.c — the workload cache (see wl_cache.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl_cache.h"
#include "workload.h"

/* mkdir -p */
static int mkdirs(const char *dir)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int cache_dir(char *out, size_t cap)
{
	const char *d = getenv("ALLOCRR_CACHE_DIR");
	if (d && *d)
		return snprintf(out, cap, "%s", d) < (int)cap ? 0 : -1;
	d = getenv("XDG_CACHE_HOME");
	if (d && *d)
		return snprintf(out, cap, "%s/allocrr", d) < (int)cap ? 0 : -1;
	d = getenv("HOME");
	if (!d || !*d)
		d = "/tmp";
	return snprintf(out, cap, "%s/.cache/allocrr", d) < (int)cap ? 0 : -1;
}

/* Remove <out>.tmp.<pid> files whose process is gone: an allocreplay
 * killed while compiling leaves its temporary workload behind (as large as
 * the workload), and nobody else would ever remove it. A live process's
 * file (a concurrent compile) is left alone; a reused pid only delays the
 * sweep to a later run. */
static void sweep_dead_tmp(const char *dir, const char *out)
{
	const char *base = strrchr(out, '/');
	base = base ? base + 1 : out;
	char prefix[NAME_MAX + 1];
	int plen = snprintf(prefix, sizeof prefix, "%s.tmp.", base);
	DIR *d = opendir(dir);
	if (!d || plen <= 0 || plen >= (int)sizeof prefix) {
		if (d)
			closedir(d);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
			continue;
		char *end;
		long pid = strtol(e->d_name + plen, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			char path[PATH_MAX + NAME_MAX + 2];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

int ar_wl_cache_get(const char *trace_path, const char *sha256, char *out, size_t outcap, int *hit,
		    ar_wl_progress_fn *progress, void *ctx, char *err, size_t errcap)
{
	char dir[PATH_MAX];
	*hit = 0;
	if (cache_dir(dir, sizeof dir) != 0 || mkdirs(dir) != 0) {
		snprintf(err, errcap, "cannot create the workload cache directory %s: %s (set "
			 "ALLOCRR_CACHE_DIR to a writable directory)", dir, strerror(errno));
		return -1;
	}
	if (snprintf(out, outcap, "%s/%s.v%d.wl", dir, sha256, AR_WL_VERSION) >= (int)outcap) {
		snprintf(err, errcap, "cache path too long");
		return -1;
	}
	ar_workload_t w;
	char why[512];
	if (ar_wl_open(&w, out, why, sizeof why) == 0) {
		int same = strcmp(w.hdr->trace_sha256, sha256) == 0;
		ar_wl_close(&w);
		if (same) {
			*hit = 1;
			return 0;
		}
	}
	sweep_dead_tmp(dir, out);
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
	ar_error_t e;
	int rc = ar_wl_compile_progress(trace_path, tmp, sha256, progress, ctx, &e);
	if (rc != 0) {
		snprintf(err, errcap, "%s", e.msg[0] ? e.msg : ar_strerror(rc));
		return -1;
	}
	if (rename(tmp, out) != 0) {
		snprintf(err, errcap, "cannot rename %s into the cache: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
