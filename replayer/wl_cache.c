/*
 * wl_cache.c — the workload cache (see wl_cache.h for where it lives, what
 * it checks and what each check defends against).
 *
 * Invariants:
 *   - nothing is read from, written to or removed from a directory that
 *     failed check_dir();
 *   - only names of the cache's three forms are ever removed:
 *     <sha256>.v<N>.wl, <sha256>.v<N>.wl.tmp.<pid> and <sha256>.v<N>.wl.lock;
 *   - one process compiles a trace at a time: a compile holds an exclusive
 *     flock on <name>.lock, and whoever waited for it looks in the cache
 *     again (parallel jobs of one trace start together: they would all
 *     compile it). The lock only saves work — two compiles of one trace
 *     still give two whole files, one renamed over the other — so a lock
 *     file is removed whenever nobody holds it, races included;
 *   - a workload is removed only under an exclusive, non-blocking flock, so
 *     never while a lease (a shared flock) is held on it, and only when the
 *     name still refers to the file that was locked;
 *   - a lease is taken before the file becomes visible under its final name
 *     (the temporary file is locked, then renamed), so a concurrent trim
 *     never removes a workload between its compile and its use.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_results.h" /* ar_res_fmt_bytes */
#include "wl_cache.h"
#include "workload.h"

/* ---- the directory ----------------------------------------------------------------- */

static void note(const ar_wl_cache_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const ar_wl_cache_t *c, const char *fmt, ...)
{
	if (!c->note)
		return;
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	c->note(c->note_ctx, line);
}

/* The directory the environment names (wl_cache.h, in that order) into
 * out, and in *from where it came from (for messages). 0, or -1 when the
 * path is too long. */
static int cache_dir(char *out, size_t cap, const char **from)
{
	const char *d = getenv("ALLOCRR_CACHE_DIR");
	if (d && *d) {
		*from = "ALLOCRR_CACHE_DIR";
		return snprintf(out, cap, "%s", d) < (int)cap ? 0 : -1;
	}
	d = getenv("XDG_CACHE_HOME");
	if (d && *d) {
		*from = "XDG_CACHE_HOME";
		return snprintf(out, cap, "%s/allocrr", d) < (int)cap ? 0 : -1;
	}
	d = getenv("HOME");
	*from = "HOME";
	if (!d || !*d) {
		/* No HOME (cron, systemd, CI): the account's home, if it exists. */
		struct passwd *pw = getpwuid(geteuid());
		struct stat st;
		d = pw && pw->pw_dir && pw->pw_dir[0] == '/' && stat(pw->pw_dir, &st) == 0 &&
		    S_ISDIR(st.st_mode) ? pw->pw_dir : NULL;
		*from = "your account's home directory, HOME being unset";
	}
	if (d)
		return snprintf(out, cap, "%s/.cache/allocrr", d) < (int)cap ? 0 : -1;
	/* Shared with every user: per user, and check_dir() refuses one that
	 * someone else made first. */
	const char *tmp = getenv("TMPDIR");
	*from = "TMPDIR, with no HOME and no home directory";
	return snprintf(out, cap, "%s/allocrr-cache-%lu", tmp && *tmp ? tmp : "/tmp",
			(unsigned long)geteuid()) < (int)cap ? 0 : -1;
}

/* mkdir -p, each directory made 0700. */
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
			if (mkdir(p, 0700) != 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The directory may hold our workloads: a real directory (not a symbolic
 * link), ours, writable by nobody else. 0, or -1 with the reason in err. */
static int check_dir(const char *dir, const char *from, char *err, size_t errcap)
{
	const char *fix = "set ALLOCRR_CACHE_DIR to a directory of your own (mode 0700)";
	struct stat st;
	if (lstat(dir, &st) != 0) {
		snprintf(err, errcap, "cannot use the workload cache %s (from %s): %s; %s", dir, from,
			 strerror(errno), fix);
		return -1;
	}
	const char *why = NULL;
	char buf[160];
	if (S_ISLNK(st.st_mode))
		why = "it is a symbolic link, which whoever made it can point anywhere";
	else if (!S_ISDIR(st.st_mode))
		why = "it is not a directory";
	else if (st.st_uid != geteuid()) {
		snprintf(buf, sizeof buf, "it belongs to uid %lu, not to you (uid %lu): its owner could plant "
			 "workloads there", (unsigned long)st.st_uid, (unsigned long)geteuid());
		why = buf;
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(buf, sizeof buf, "its mode %04o lets other users write there and plant workloads",
			 (unsigned)(st.st_mode & 07777));
		why = buf;
		fix = "chmod go-w it, or set ALLOCRR_CACHE_DIR to a directory of your own (mode 0700)";
	}
	if (!why)
		return 0;
	snprintf(err, errcap, "refusing the workload cache %s (from %s): %s; %s", dir, from, why, fix);
	return -1;
}

int ar_wl_cache_open(ar_wl_cache_t *c, int create, char *err, size_t errcap)
{
	const char *from = "";
	if (cache_dir(c->dir, sizeof c->dir, &from) != 0) {
		snprintf(err, errcap, "the workload cache's path (from %s) is too long; set "
			 "ALLOCRR_CACHE_DIR to a shorter one", from);
		return -1;
	}
	struct stat st;
	if (lstat(c->dir, &st) != 0 && errno == ENOENT) {
		if (!create)
			return 1;
		if (mkdirs(c->dir) != 0) {
			snprintf(err, errcap, "cannot create the workload cache %s (from %s): %s; set "
				 "ALLOCRR_CACHE_DIR to a writable directory", c->dir, from, strerror(errno));
			return -1;
		}
	}
	return check_dir(c->dir, from, err, errcap);
}

/* ---- names ------------------------------------------------------------------------- */

enum { NAME_OTHER, NAME_WORKLOAD, NAME_TMP, NAME_LOCK };

/* Which of the cache's names n is: <64 hex>.v<digits>.wl, optionally
 * followed by .tmp.<pid> (*pid set) or .lock. */
static int name_kind(const char *n, long *pid)
{
	for (int i = 0; i < 64; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return NAME_OTHER;
	const char *s = n + 64;
	if (strncmp(s, ".v", 2) != 0 || s[2] < '0' || s[2] > '9')
		return NAME_OTHER;
	for (s += 2; *s >= '0' && *s <= '9'; s++)
		;
	if (strncmp(s, ".wl", 3) != 0)
		return NAME_OTHER;
	s += 3;
	if (!*s)
		return NAME_WORKLOAD;
	if (!strcmp(s, ".lock"))
		return NAME_LOCK;
	if (strncmp(s, ".tmp.", 5) != 0 || s[5] < '1' || s[5] > '9')
		return NAME_OTHER;
	char *end;
	errno = 0;
	*pid = strtol(s + 5, &end, 10);
	return *end || errno || *pid <= 0 ? NAME_OTHER : NAME_TMP;
}

/* Is pid a process that exists? (EPERM: it does, someone else's.) */
static int pid_alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

/* Disk bytes a file uses (workloads are sparse). */
static uint64_t disk_bytes(const struct stat *st)
{
	return (uint64_t)st->st_blocks * 512u;
}

/* Remove dir/name if nobody holds a lease on it: an exclusive flock that
 * cannot wait, then a check that the name still refers to the locked file.
 * 1 removed, 0 in use (or gone meanwhile), -1 error. */
static int evict(const char *dir, const char *name)
{
	char path[PATH_MAX + NAME_MAX + 2];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	int rc = 0;
	struct stat a, b;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
	    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		rc = unlink(path) == 0 ? 1 : -1;
	close(fd);
	return rc;
}

/* One file of the cache, for trimming and cleaning. */
typedef struct entry {
	char name[NAME_MAX + 1];
	uint64_t bytes;
	struct timespec mtime;
	int kind;
	long pid;
} entry_t;

/* The cache's files in dir into *out (malloc'ed, *n of them). 0, or -1. */
static int list_entries(const char *dir, entry_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	size_t cap = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		long pid = 0;
		int kind = name_kind(e->d_name, &pid);
		struct stat st;
		if (kind == NAME_OTHER || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			entry_t *m = realloc(*out, cap * sizeof *m);
			if (!m) {
				rc = -1;
				break;
			}
			*out = m;
		}
		entry_t *x = &(*out)[(*n)++];
		snprintf(x->name, sizeof x->name, "%s", e->d_name);
		x->bytes = disk_bytes(&st);
		x->mtime = st.st_mtim;
		x->kind = kind;
		x->pid = pid;
	}
	closedir(d);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

/* Oldest first; ties by name, so the order is the same in every process. */
static int by_mtime(const void *a, const void *b)
{
	const entry_t *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Remove the temporary files of writers that are gone: an allocreplay
 * killed while compiling leaves one behind (as large as the workload), and
 * nobody else would remove it. A live process's file (a concurrent compile)
 * stays; a reused pid only delays the sweep to a later run. Adds what it
 * removed to *t (may be NULL). */
static void sweep_dead_tmp(const char *dir, const entry_t *es, size_t n, ar_wl_cache_tally_t *t)
{
	for (size_t i = 0; i < n; i++) {
		if (es[i].kind == NAME_LOCK) { /* a compile's lock nobody holds */
			char path[PATH_MAX + NAME_MAX + 2];
			snprintf(path, sizeof path, "%s/%s", dir, es[i].name);
			int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
				unlink(path);
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (es[i].kind != NAME_TMP || es[i].pid == (long)getpid() || pid_alive(es[i].pid))
			continue;
		char path[PATH_MAX + NAME_MAX + 2];
		snprintf(path, sizeof path, "%s/%s", dir, es[i].name);
		if (unlink(path) == 0 && t) {
			t->removed++;
			t->removed_bytes += es[i].bytes;
		}
	}
}

/* ---- trimming and cleaning ---------------------------------------------------------- */

void ar_wl_cache_trim(ar_wl_cache_t *c)
{
	entry_t *es;
	size_t n;
	if (list_entries(c->dir, &es, &n) != 0)
		return;
	sweep_dead_tmp(c->dir, es, n, NULL);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (es[i].kind == NAME_WORKLOAD)
			total += es[i].bytes;
	if (c->max_bytes && total > c->max_bytes) {
		qsort(es, n, sizeof *es, by_mtime);
		uint64_t was = total, freed = 0;
		unsigned removed = 0, busy = 0;
		for (size_t i = 0; i < n && total > c->max_bytes; i++) {
			if (es[i].kind != NAME_WORKLOAD)
				continue;
			int r = evict(c->dir, es[i].name);
			if (r == 1) {
				removed++;
				freed += es[i].bytes;
				total -= es[i].bytes;
			} else if (r == 0) {
				busy++;
			}
		}
		char a[32], b[32], f[32], l[32];
		if (removed)
			note(c, "workload cache %s used %s, over its limit of %s (--cache-max): removed the %u "
			     "least recently used workload(s), %s", c->dir, ar_res_fmt_bytes(a, sizeof a, (double)was),
			     ar_res_fmt_bytes(l, sizeof l, (double)c->max_bytes), removed, ar_res_fmt_bytes(f, sizeof f, (double)freed));
		if (total > c->max_bytes && busy)
			note(c, "workload cache %s uses %s, over its limit of %s: %u workload(s) in use by a "
			     "running allocreplay stay until it ends", c->dir, ar_res_fmt_bytes(b, sizeof b, (double)total),
			     ar_res_fmt_bytes(l, sizeof l, (double)c->max_bytes), busy);
	}
	free(es);
}

int ar_wl_cache_clean(ar_wl_cache_t *c, ar_wl_cache_tally_t *t, char *err, size_t errcap)
{
	memset(t, 0, sizeof *t);
	entry_t *es;
	size_t n;
	if (list_entries(c->dir, &es, &n) != 0) {
		snprintf(err, errcap, "cannot read the workload cache %s: %s", c->dir, strerror(errno));
		return -1;
	}
	sweep_dead_tmp(c->dir, es, n, t);
	for (size_t i = 0; i < n; i++) {
		if (es[i].kind != NAME_WORKLOAD)
			continue;
		int r = evict(c->dir, es[i].name);
		if (r == 1) {
			t->removed++;
			t->removed_bytes += es[i].bytes;
		} else if (r == 0) {
			t->in_use++;
			t->in_use_bytes += es[i].bytes;
		}
	}
	free(es);
	return 0;
}

/* ---- checking a cached workload ------------------------------------------------------ */

/* One stream per trace thread with events, in the reader's order, each
 * with no more calls than its thread has events, the calls adding up to
 * the header's (an empty trace still has one empty stream: wl_compile.c). */
static int same_threads(const ar_workload_t *w, ar_reader_t *r)
{
	const ar_wl_header_t *h = w->hdr;
	uint32_t k = 0;
	uint64_t calls = 0;
	for (uint32_t i = 0; i < ar_reader_thread_count(r); i++) {
		const ar_thread_info_t *ti = ar_reader_thread_at(r, i);
		if (!ti->events)
			continue;
		if (k >= h->nthreads || w->threads[k].trace_index != ti->index)
			return 0;
		uint64_t mine = 0;
		for (int kind = 0; kind < AR_WL_NCALLS; kind++)
			mine += w->threads[k].ops_by_kind[kind];
		if (mine > ti->events)
			return 0;
		calls += mine;
		k++;
	}
	return k ? k == h->nthreads && calls == h->calls : h->nthreads == 1;
}

/* Does workload w stand for the trace at trace_path (sha256)? The checks of
 * wl_cache.h, cheapest first. 0, or -1 with why in a short phrase. */
static int check_against_trace(const ar_workload_t *w, const char *trace_path, const char *sha256,
			       char *why, size_t cap)
{
	const ar_wl_header_t *h = w->hdr;
	if (strncmp(h->trace_sha256, sha256, sizeof h->trace_sha256) != 0) {
		snprintf(why, cap, "it was made from another trace (%.12s…)", h->trace_sha256);
		return -1;
	}
	ar_reader_t *r;
	ar_error_t e;
	if (ar_reader_open(&r, trace_path, &e) != 0) {
		snprintf(why, cap, "the trace cannot be read to check it against");
		return -1;
	}
	uint64_t indexed = ar_reader_event_count(r), bytes = ar_reader_file_size(r);
	int complete = ar_reader_status(r) == AR_STATUS_COMPLETE;
	int was_complete = h->trace_status == AR_STATUS_COMPLETE;
	int rc = -1;
	if (h->trace_file_bytes != bytes)
		snprintf(why, cap, "it was made from a trace of %llu bytes, this one has %llu",
			 (unsigned long long)h->trace_file_bytes, (unsigned long long)bytes);
	else if (h->trace_indexed_events != indexed)
		snprintf(why, cap, "it was made from a trace of %llu events, this one has %llu",
			 (unsigned long long)h->trace_indexed_events, (unsigned long long)indexed);
	else if (h->events > indexed || (was_complete && (!complete || h->events != indexed)))
		snprintf(why, cap, "it read %llu events of the trace's %llu (%s)", (unsigned long long)h->events,
			 (unsigned long long)indexed, complete ? "complete" : "not complete");
	else if (h->calls + h->skipped_unknown_frees + h->skipped_unknown_ops != h->events)
		snprintf(why, cap, "its call count does not add up to the events it read");
	else if (!same_threads(w, r))
		snprintf(why, cap, "its threads are not the trace's threads");
	else
		rc = 0;
	ar_reader_close(r);
	return rc;
}

/* The workload open as fd stands for the trace: it opens (ar_wl_open's
 * checks), belongs to the trace, and its digest matches. 0, or -1 with why. */
static int check_cached(int fd, const char *trace_path, const char *sha256, char *why, size_t cap)
{
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	ar_workload_t w;
	char msg[512];
	if (ar_wl_open(&w, self, msg, sizeof msg) != 0) {
		const char *m = strncmp(msg, self, strlen(self)) ? msg : msg + strlen(self) + 2;
		snprintf(why, cap, "%s", m);
		return -1;
	}
	int rc = check_against_trace(&w, trace_path, sha256, why, cap);
	uint8_t md[32];
	if (rc == 0 && (ar_wl_digest(&w, md) != 0 || memcmp(md, w.hdr->content_sha256, sizeof md) != 0)) {
		snprintf(why, cap, "its content does not match its digest (damaged or cut since it was "
			 "written)");
		rc = -1;
	}
	ar_wl_close(&w);
	return rc;
}

/* A lease's shared lock on fd, waiting for a trim's brief exclusive one.
 * 0, also where the file system has no flock (the lease then protects
 * nothing, and trims there never remove anything: evict() cannot lock
 * either); -1 on another error. */
static int lock_shared(int fd)
{
	while (flock(fd, LOCK_SH) != 0) {
		if (errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)
			return 0;
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* Take a lease on path: open it, wait for a shared lock, and make sure it
 * is still the file the name refers to (not evicted or replaced while we
 * waited). The fd, -1 when the file is not there (errno ENOENT), or -2
 * when something else is there (errno says what). */
static int take_lease(const char *path)
{
	for (int tries = 0; tries < 3; tries++) {
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT ? -1 : -2;
		struct stat a, b;
		if (lock_shared(fd) != 0 || fstat(fd, &a) != 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -2;
		}
		if (!S_ISREG(a.st_mode)) {
			close(fd);
			errno = EINVAL;
			return -2;
		}
		if (lstat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_nlink > 0)
			return fd;
		close(fd); /* evicted or replaced meanwhile: look again */
	}
	errno = ENOENT;
	return -1;
}

/* ---- get and release ------------------------------------------------------------------- */

/* Compile trace_path into the cache at out, leased in lease. 0, or -1. */
static int compile_into(const char *trace_path, const char *sha256, const char *out,
			ar_wl_lease_t *lease, ar_wl_progress_fn *progress, void *ctx, char *err, size_t errcap)
{
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
	ar_wl_compile_opts_t o = { .progress = progress, .progress_ctx = ctx, .exclusive = 1 };
	ar_error_t e;
	int rc = ar_wl_compile_opts(trace_path, tmp, sha256, &o, &e);
	if (rc != 0 && e.sys_errno == EEXIST) {
		/* Our pid's name: left by a process that had our pid and died (no
		 * live process has it), or planted; either way not followed. */
		unlink(tmp);
		rc = ar_wl_compile_opts(trace_path, tmp, sha256, &o, &e);
	}
	if (rc != 0) {
		snprintf(err, errcap, "%s", e.msg[0] ? e.msg : ar_strerror(rc));
		return -1;
	}
	/* The lease first, then the name: a concurrent trim cannot remove it
	 * between the rename and our lock. */
	int fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || lock_shared(fd) != 0 || rename(tmp, out) != 0) {
		snprintf(err, errcap, "cannot put %s into the cache: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return -1;
	}
	lease->fd = fd;
	snprintf(lease->path, sizeof lease->path, "%s", out);
	return 0;
}

int ar_wl_cache_get(ar_wl_cache_t *c, const char *trace_path, const char *sha256, ar_wl_lease_t *lease,
		    int *hit, ar_wl_progress_fn *progress, void *ctx, char *err, size_t errcap)
{
	*hit = 0;
	lease->fd = -1;
	char out[PATH_MAX];
	if (snprintf(out, sizeof out, "%s/%s.v%d.wl", c->dir, sha256, AR_WL_VERSION) >= (int)sizeof out) {
		snprintf(err, errcap, "cache path too long (set ALLOCRR_CACHE_DIR to a shorter one)");
		return -1;
	}
	int fd = take_lease(out);
	char why[512];
	if (fd >= 0) {
		if (check_cached(fd, trace_path, sha256, why, sizeof why) == 0) {
			futimens(fd, NULL); /* used now: the last to be evicted (LRU) */
			lease->fd = fd;
			snprintf(lease->path, sizeof lease->path, "%s", out);
			*hit = 1;
			return 0;
		}
		close(fd);
		note(c, "cached workload %s not used, recompiling: %s", out, why);
	} else if (fd == -2) {
		note(c, "cached workload %s not used, recompiling: %s", out,
		     errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	}
	/* One compile of this trace at a time (above); whoever waited finds
	 * the workload the other one made. */
	char lock_path[PATH_MAX + 8];
	snprintf(lock_path, sizeof lock_path, "%s.lock", out);
	int lk = open(lock_path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lk >= 0 && flock(lk, LOCK_EX) == 0 && (fd = take_lease(out)) >= 0) {
		if (check_cached(fd, trace_path, sha256, why, sizeof why) == 0) {
			close(lk);
			futimens(fd, NULL);
			lease->fd = fd;
			snprintf(lease->path, sizeof lease->path, "%s", out);
			*hit = 1;
			return 0;
		}
		close(fd);
	}
	int rc = compile_into(trace_path, sha256, out, lease, progress, ctx, err, errcap);
	if (lk >= 0)
		close(lk);
	if (rc != 0)
		return -1;
	ar_wl_cache_trim(c);
	return 0;
}

void ar_wl_cache_release(ar_wl_cache_t *c, ar_wl_lease_t *lease)
{
	if (lease->fd < 0)
		return;
	close(lease->fd);
	lease->fd = -1;
	ar_wl_cache_trim(c);
}
