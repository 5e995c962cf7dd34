/*
 * runner.c — start one replay worker and turn what happened into an
 * ar_run_t: fork + execve of allocreplay-worker with LD_PRELOAD set to the
 * allocator's library (removed entirely for glibc, and never inherited from
 * our own environment), the report read from a pipe on fd 3, the worker's
 * stderr kept (its tail goes into the reason of a failed run), a deadline
 * after which the worker is SIGKILLed, and the exit status classified. The
 * worker dies with allocreplay (PR_SET_PDEATHSIG); a report cut short (no Z
 * line) is discarded whole, never stored as numbers.
 * With --counters sim the worker runs under valgrind's callgrind
 * (sim_callgrind.h): LD_PRELOAD passes through valgrind to the worker
 * (callgrind replaces no malloc, so the worker's allocator proof holds), the
 * timeout is scaled by AR_SIM_TIMEOUT_FACTOR, and the profile is read into
 * counters with source "sim" and removed. While allocreplay draws a
 * progress line (progress.h), the worker gets a shared page to count its
 * ops in (--progress-fd) and the wait loop redraws the line from it a few
 * times a second. Status:
 *
 *   ok               complete report, allocator proven, no error line
 *                    (reason set when the allocator returned NULL where
 *                    the trace's call succeeded: failed_allocs, skipped_ops)
 *   wrong_allocator  the worker found another library serving malloc
 *   unsupported      the trace calls a function the allocator lacks
 *   timeout          no complete report within --timeout; killed
 *   oom              killed by SIGKILL we did not send (the cgroup's
 *                    memory.events oom_kill count is checked when readable)
 *   crashed          killed by another signal (or by a SIGKILL the cgroup's
 *                    oom_kill count rules out), or exited without a report
 *   error            the worker reported a failure (e.g. a dependency wait
 *                    that never ended) or could not be executed
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "replay.h"
#include "sim_callgrind.h"

extern char **environ;

int ar_run_scalar(const ar_run_t *r, const char *name, uint64_t *v)
{
	for (size_t i = 0; i < r->nscalars; i++)
		if (!strcmp(r->scalars[i].name, name)) {
			*v = r->scalars[i].value;
			return 1;
		}
	return 0;
}

double ar_run_ticks_per_ns(const ar_run_t *r)
{
	uint64_t v;
	return ar_run_scalar(r, "ticks_per_ms", &v) && v ? (double)v / 1e6 : 0;
}

void ar_run_free(ar_run_t *r)
{
	free(r->scalars);
	free(r->rss);
	free(r->counters);
	free(r->astats);
	for (int k = 0; k <= AR_WL_NCALLS; k++)
		free(r->hist[k]);
	memset(r, 0, sizeof *r);
}

static uint64_t now_unix_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000ull + (uint64_t)ts.tv_nsec / 1000000ull;
}

static void copy(char *out, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);
	memcpy(out, s, n);
	out[n] = '\0';
}

static void set_status(ar_run_t *r, const char *status, const char *reason)
{
	copy(r->status, sizeof r->status, status);
	copy(r->reason, sizeof r->reason, reason);
}

/* The "oom_kill N" figure of a cgroup file, or -1. */
static long read_oom_kill(const char *path)
{
	char line[256];
	long n = -1;
	FILE *f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "oom_kill %ld", &n) == 1)
				break;
		fclose(f);
	}
	return n;
}

/* oom_kill count of our cgroup, or -1 when unreadable: cgroup v2's
 * memory.events, else (cgroup v1, or a hybrid mount whose v2 tree has no
 * memory controller, as on our VMs) the memory controller's
 * memory.oom_control, which has the same count since Linux 4.13. */
static long cgroup_oom_kills(void)
{
	char v2[256] = "", v1[256] = "", line[512], path[600];
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = '\0';
			char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (!c2)
				continue;
			*c1 = *c2 = '\0'; /* line = hierarchy id, c1 + 1 = controllers */
			if (!strcmp(line, "0") && c1[1] == '\0') /* "0::/path" */
				snprintf(v2, sizeof v2, "%s", c2 + 1);
			else if (strstr(c1 + 1, "memory")) /* "4:memory:/path" */
				snprintf(v1, sizeof v1, "%s", c2 + 1);
		}
		fclose(f);
	}
	long n = -1;
	if (v2[0]) {
		snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.events", v2);
		n = read_oom_kill(path);
	}
	if (n < 0 && v1[0]) {
		snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.oom_control", v1);
		n = read_oom_kill(path);
	}
	return n;
}

static int push_kv_src(ar_kv_t **arr, size_t *n, const char *name, uint64_t v, int has,
		      const char *why, const char *source);
static int push_kv(ar_kv_t **arr, size_t *n, const char *name, uint64_t v, int has, const char *why)
{
	return push_kv_src(arr, n, name, v, has, why, "perf");
}

static int push_kv_src(ar_kv_t **arr, size_t *n, const char *name, uint64_t v, int has,
		      const char *why, const char *source)
{
	ar_kv_t *a = realloc(*arr, (*n + 1) * sizeof *a);
	if (!a)
		return -1;
	*arr = a;
	ar_kv_t *kv = &a[(*n)++];
	memset(kv, 0, sizeof *kv);
	snprintf(kv->name, sizeof kv->name, "%s", name);
	kv->value = v;
	kv->has_value = has;
	snprintf(kv->reason, sizeof kv->reason, "%s", why ? why : "");
	snprintf(kv->source, sizeof kv->source, "%s", source);
	return 0;
}

static ar_hist_t *hist_of(ar_run_t *r, int k)
{
	if (!r->hist[k]) {
		r->hist[k] = malloc(sizeof(ar_hist_t));
		if (r->hist[k])
			ar_hist_reset(r->hist[k]);
	}
	return r->hist[k];
}

/* Parse the worker's report (worker_proto.h); sets r->complete on its Z
 * line and the status on an E line. Unknown lines are ignored (a newer
 * worker). */
static void parse_report(ar_run_t *r, char *buf)
{
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], rest[1024];
		unsigned long long a, b, c, d, e;
		int k;
		switch (line[0]) {
		case 'V':
			if (sscanf(line, "V %llu %4095s", &a, r->served) < 2)
				r->served[0] = '\0';
			if (!strcmp(r->served, "?"))
				r->served[0] = '\0';
			break;
		case 'S':
			if (sscanf(line, "S %63s %llu", name, &a) == 2)
				push_kv(&r->scalars, &r->nscalars, name, a, 1, NULL);
			break;
		case 'T':
			if (sscanf(line, "T %63s %llu", name, &a) == 2)
				push_kv(&r->astats, &r->nastats, name, a, 1, NULL);
			break;
		case 'C':
			rest[0] = '\0';
			if (sscanf(line, "C %63s %llu %1023[^\n]", name, &a, rest) >= 2)
				push_kv(&r->counters, &r->ncounters, name, a, 1, rest);
			else if (sscanf(line, "C %63s - %1023[^\n]", name, rest) >= 1)
				push_kv(&r->counters, &r->ncounters, name, 0, 0, rest);
			break;
		case 'H':
			if (sscanf(line, "H %63s %llu %llu %llu %llu", name, &a, &b, &c, &d) == 5 &&
			    (k = ar_wl_kind_from_name(name)) >= 0 && k < AR_WL_NCALLS) {
				ar_hist_t *h = hist_of(r, k);
				if (h) {
					h->count = a;
					h->sum = b;
					h->min = c;
					h->max = d;
				}
			}
			break;
		case 'B':
			if (sscanf(line, "B %63s %llu %llu", name, &a, &b) == 3 &&
			    (k = ar_wl_kind_from_name(name)) >= 0 && k < AR_WL_NCALLS && a < AR_HIST_BUCKETS) {
				ar_hist_t *h = hist_of(r, k);
				if (h)
					h->b[a] = b;
			}
			break;
		case 'R':
			if (sscanf(line, "R %llu %llu %llu %llu %llu", &a, &b, &c, &d, &e) == 5) {
				ar_rss_point_t *p = realloc(r->rss, (r->nrss + 1) * sizeof *p);
				if (p) {
					r->rss = p;
					p[r->nrss++] = (ar_rss_point_t){ a, b, c, d, e };
				}
			}
			break;
		case 'E':
			if (sscanf(line, "E %23s %1023[^\n]", name, rest) == 2)
				set_status(r, name, rest);
			break;
		case 'Z':
			r->complete = 1;
			break;
		}
	}
}

/* A report without its Z line was cut off by the worker's death: a line
 * may be cut in the middle ("S calls 12" of "S calls 1234567"), so nothing
 * in it is a measurement. Keep only what proves the allocator (V line). */
static void drop_partial_report(ar_run_t *r)
{
	free(r->scalars);
	free(r->rss);
	free(r->counters);
	free(r->astats);
	r->scalars = NULL;
	r->rss = NULL;
	r->counters = r->astats = NULL;
	r->nscalars = r->nrss = r->ncounters = r->nastats = 0;
	for (int k = 0; k <= AR_WL_NCALLS; k++) {
		free(r->hist[k]);
		r->hist[k] = NULL;
	}
}

/* Quantiles in ns from the tick histograms; AR_WL_NCALLS merges all kinds. */
static void derive_latency(ar_run_t *r)
{
	double tpn = ar_run_ticks_per_ns(r);
	if (tpn <= 0)
		return;
	ar_hist_t *all = NULL;
	for (int k = 0; k < AR_WL_NCALLS; k++)
		if (r->hist[k] && r->hist[k]->count) {
			if (!all && !(all = hist_of(r, AR_WL_NCALLS)))
				return;
			ar_hist_merge(all, r->hist[k]);
		}
	for (int k = 0; k <= AR_WL_NCALLS; k++) {
		const ar_hist_t *h = r->hist[k];
		if (!h || !h->count)
			continue;
		ar_lat_t *l = &r->lat[k];
		l->count = (double)h->count;
		l->mean_ns = (double)h->sum / (double)h->count / tpn;
		l->min_ns = (double)h->min / tpn;
		l->p50_ns = ar_hist_quantile(h, 0.50) / tpn;
		l->p90_ns = ar_hist_quantile(h, 0.90) / tpn;
		l->p99_ns = ar_hist_quantile(h, 0.99) / tpn;
		l->p999_ns = ar_hist_quantile(h, 0.999) / tpn;
		l->max_ns = (double)h->max / tpn;
	}
}

/* Counters of a run under callgrind (source "sim"), from its profile,
 * which is removed afterwards. A run that is not ok gets none; an ok run
 * whose profile cannot be read becomes an error (the user asked for them). */
static void sim_counters(ar_run_t *r, const ar_allocator_t *a, const char *worker,
			 const char *profile)
{
	if (strcmp(r->status, AR_ST_OK) != 0) {
		unlink(profile);
		return;
	}
	ar_sim_result_t s;
	char err[512];
	int glibc = !strcmp(a->name, "glibc");
	const char *obj = r->served[0] ? r->served : a->library;
	if (ar_sim_read(profile, obj, worker, glibc, &s, err, sizeof err) != 0) {
		set_status(r, AR_ST_ERROR, err);
		unlink(profile);
		return;
	}
	unlink(profile);
	const char *how = glibc ? "callgrind, replay window; allocator = calls into libc's malloc family"
				: "callgrind, replay window; allocator = calls into its library";
	const struct {
		const char *name;
		uint64_t v;
	} c[] = {
		{ "instructions", s.total.ir },
		{ "d1_misses", s.total.d1 },
		{ "ll_misses", s.total.ll },
		{ "instructions_allocator", s.allocator.ir },
		{ "d1_misses_allocator", s.allocator.d1 },
		{ "ll_misses_allocator", s.allocator.ll },
		{ "instructions_other", s.total.ir - s.allocator.ir },
		{ "d1_misses_other", s.total.d1 - s.allocator.d1 },
		{ "ll_misses_other", s.total.ll - s.allocator.ll },
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++)
		push_kv_src(&r->counters, &r->ncounters, c[i].name, c[i].v, 1, how, "sim");
	if (s.has_access) {
		const char *w = "callgrind: self cost of ar_access_walk (part of *_other)";
		push_kv_src(&r->counters, &r->ncounters, "access_pass_instructions", s.access.ir, 1, w, "sim");
		push_kv_src(&r->counters, &r->ncounters, "access_pass_d1_misses", s.access.d1, 1, w, "sim");
		push_kv_src(&r->counters, &r->ncounters, "access_pass_ll_misses", s.access.ll, 1, w, "sim");
	}
}

/* Environment for the worker: ours minus LD_PRELOAD, plus the allocator's. */
static char **worker_env(const ar_allocator_t *a, char *preload_var, size_t cap)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[j++] = environ[i];
	if (a->preload[0]) {
		snprintf(preload_var, cap, "LD_PRELOAD=%s", a->preload);
		env[j++] = preload_var;
	}
	env[j] = NULL;
	return env;
}

/* ---- the progress page ------------------------------------------------------------ */
/* One page the worker counts its replayed ops in (--progress-fd, worker.h),
 * for the progress line: a memfd mapped here and inherited by the worker,
 * which maps it too. Made only while the line is drawn; without it the
 * worker counts into a page of its own, so it does the same work either
 * way and the results cannot depend on whether anyone watched. */
typedef struct progress_page {
	int fd; /* -1: none */
	_Atomic uint64_t *ops;
	size_t bytes;
} progress_page_t;

static void progress_page_open(progress_page_t *pp)
{
	*pp = (progress_page_t){ .fd = -1 };
	if (!ar_progress_enabled())
		return;
	int fd = memfd_create("allocreplay-progress", MFD_CLOEXEC);
	if (fd < 0)
		return; /* no progress line for this run, nothing else lost */
	/* Above the fds the child's dup2s overwrite (0-3). */
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	size_t bytes = (size_t)sysconf(_SC_PAGESIZE);
	void *m = MAP_FAILED;
	if (hi >= 0 && ftruncate(hi, (off_t)bytes) == 0)
		m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, hi, 0);
	if (m == MAP_FAILED) {
		if (hi >= 0)
			close(hi);
		return;
	}
	*pp = (progress_page_t){ .fd = hi, .ops = m, .bytes = bytes };
}

static void progress_page_close(progress_page_t *pp)
{
	if (pp->ops)
		munmap((void *)pp->ops, pp->bytes);
	if (pp->fd >= 0)
		close(pp->fd);
	pp->ops = NULL;
	pp->fd = -1;
}

static void progress_page_show(const progress_page_t *pp)
{
	if (pp->ops)
		ar_progress_update(atomic_load_explicit(pp->ops, memory_order_relaxed));
}

/* ---- starting the worker ------------------------------------------------------------ */

/* The run's budget in seconds (0 = none): --timeout, scaled under valgrind. */
static unsigned run_timeout(const ar_run_opts_t *o, int sim)
{
	unsigned timeout_s = o->timeout_s;
	if (sim && timeout_s) /* valgrind is slow: docs/RESULTS.md gives the measured factor */
		timeout_s = timeout_s > UINT32_MAX / AR_SIM_TIMEOUT_FACTOR / 500u
				    ? UINT32_MAX / 500u
				    : timeout_s * AR_SIM_TIMEOUT_FACTOR;
	return timeout_s;
}

/* The worker's command line, strings in buffers the caller keeps. */
typedef struct worker_cmd {
	char dep_ms[32], progress_fd[16];
	char profile[4200], out_arg[4300];
	char *argv[64];
	const char *exe;
} worker_cmd_t;

static void build_cmd(worker_cmd_t *c, const ar_run_opts_t *o, const ar_allocator_t *a,
		      const char *workload, unsigned timeout_s, int sim, int progress_fd)
{
	/* A dependency wait longer than half the run's budget is a bug report,
	 * not a timeout. */
	snprintf(c->dep_ms, sizeof c->dep_ms, "%u", timeout_s ? timeout_s * 500u : 30000u);
	snprintf(c->progress_fd, sizeof c->progress_fd, "%d", progress_fd);
	static unsigned seq;
	snprintf(c->profile, sizeof c->profile, "%s/callgrind.%d.%u.out", o->sim_dir, (int)getpid(),
		 seq++);
	snprintf(c->out_arg, sizeof c->out_arg, "--callgrind-out-file=%s", c->profile);
	/* --workload right after the program: tests find workers by it. */
	char *wargv[] = { (char *)o->worker, "--workload", (char *)workload, "--allocator",
			  (char *)a->name, "--library", (char *)a->library, "--touch", (char *)o->touch,
			  "--fd", "3", "--dep-timeout-ms", c->dep_ms, "--counters",
			  (char *)(o->counters ? o->counters : "perf"), "--access-pass",
			  o->access_pass ? "on" : "off", "--timing",
			  (char *)(o->timing ? o->timing : "every") };
	char *vargv[] = { AR_SIM_VALGRIND_ARGS(o->valgrind, c->out_arg) };
	size_t na = 0;
	if (sim)
		for (size_t i = 0; i < sizeof vargv / sizeof *vargv; i++)
			c->argv[na++] = vargv[i];
	for (size_t i = 0; i < sizeof wargv / sizeof *wargv; i++)
		c->argv[na++] = wargv[i];
	if (progress_fd >= 0) {
		c->argv[na++] = "--progress-fd";
		c->argv[na++] = c->progress_fd;
	}
	if (o->workload_memory[0]) {
		c->argv[na++] = "--workload-memory";
		c->argv[na++] = (char *)o->workload_memory;
	}
	for (size_t i = 0; o->extra_args && o->extra_args[i] && na + 1 < sizeof c->argv / sizeof *c->argv; i++)
		c->argv[na++] = o->extra_args[i];
	c->argv[na] = NULL;
	c->exe = sim ? o->valgrind : o->worker;
}

/* The worker while it runs: its pid and the read ends of its pipes. */
typedef struct child {
	pid_t pid;
	int rep_fd, err_fd;
} child_t;

/* In the child, between fork and execve: only async-signal-safe calls. */
__attribute__((noreturn)) static void exec_child(const worker_cmd_t *cmd, char **env, pid_t parent, int rep_w, int err_w,
		       int progress_fd)
{
	/* A worker must not outlive allocreplay: killed (SIGKILL, SIGTERM,
	 * a closed terminal), allocreplay cannot reap it, and a hanging
	 * allocator would then spin or sleep forever, holding a CPU the
	 * next measurement needs. The kernel kills it with its parent;
	 * the getppid check closes the window where the parent died
	 * before prctl. The setting survives execve (also valgrind's). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(126);
	/* fd 3 = report pipe, fd 2 = stderr pipe; dup2 clears CLOEXEC. */
	if (dup2(rep_w, 3) < 0 || dup2(err_w, 2) < 0)
		_exit(126);
	if (progress_fd >= 0 && fcntl(progress_fd, F_SETFD, 0) != 0)
		_exit(126);
	int devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
	}
	execve(cmd->exe, cmd->argv, env);
	dprintf(2, "cannot execute %s: %s", cmd->exe, strerror(errno));
	_exit(127);
}

/* Fork and exec the worker. 0, or -1 with the run's status set. */
static int spawn(const worker_cmd_t *cmd, const ar_allocator_t *a, int progress_fd, child_t *c,
		 ar_run_t *r)
{
	static char preload_var[AR_ALLOC_PATH_MAX + 16];
	char **env = worker_env(a, preload_var, sizeof preload_var);
	int rep[2] = { -1, -1 }, errp[2] = { -1, -1 };
	if (!env || pipe2(rep, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
		for (int i = 0; i < 2; i++) {
			if (rep[i] >= 0)
				close(rep[i]);
			if (errp[i] >= 0)
				close(errp[i]);
		}
		free(env);
		set_status(r, AR_ST_ERROR, "cannot create a pipe for the worker");
		return -1;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		exec_child(cmd, env, parent, rep[1], errp[1], progress_fd);
	free(env);
	close(rep[1]);
	close(errp[1]);
	if (pid < 0) {
		close(rep[0]);
		close(errp[0]);
		set_status(r, AR_ST_ERROR, "fork failed: too many processes or out of memory");
		return -1;
	}
	*c = (child_t){ .pid = pid, .rep_fd = rep[0], .err_fd = errp[0] };
	return 0;
}

/* ---- reading what the worker says ------------------------------------------------------ */

/* What came back while the worker ran. */
typedef struct collected {
	char *buf; /* the report (fd 3) */
	size_t len, cap;
	size_t elen;     /* bytes in r->stderr_tail */
	int report_lost; /* the report outgrew AR_REPORT_MAX or our memory */
	int timed_out;   /* we killed the worker at its deadline */
} collected_t;

/* Append report bytes. A worker's report is a few hundred KiB at most
 * (worker_proto.h); anything writing past the cap is not our worker (a
 * preloaded library writing to fd 3, say) and would grow this process
 * without end.
 * A report that did not fit, for that reason or for lack of memory, is
 * never parsed: its missing middle would read as numbers. */
static void keep_report(collected_t *c, pid_t pid, const char *tmp, size_t got)
{
	if (c->report_lost)
		return; /* drain to EOF, keep nothing */
	if (c->len + got + 1 > c->cap) {
		char *nb = c->len + got + 1 > AR_REPORT_MAX ? NULL : realloc(c->buf, c->cap * 2 + got);
		if (!nb) {
			c->report_lost = 1;
			kill(pid, SIGKILL);
			return;
		}
		c->buf = nb;
		c->cap = c->cap * 2 + got;
	}
	memcpy(c->buf + c->len, tmp, got);
	c->len += got;
}

/* Keep the tail of the worker's stderr in r->stderr_tail. */
static void keep_stderr(ar_run_t *r, size_t *elen, const char *tmp, size_t got)
{
	size_t keep = sizeof r->stderr_tail - 1;
	for (size_t j = 0; j < got; j++) {
		if (*elen == keep) {
			memmove(r->stderr_tail, r->stderr_tail + keep / 2, keep - keep / 2);
			*elen = keep - keep / 2;
		}
		r->stderr_tail[(*elen)++] = tmp[j];
	}
	r->stderr_tail[*elen] = '\0';
}

/* How long the next poll may sleep: until the deadline, and no longer
 * than a progress redraw while the line is shown. -1 = no limit. */
static int poll_wait_ms(uint64_t deadline, int timed_out, int progress)
{
	int wait_ms = -1;
	if (deadline && !timed_out) {
		uint64_t now = mono_ms();
		wait_ms = now >= deadline ? 0 : (int)(deadline - now);
	}
	if (progress && (wait_ms < 0 || wait_ms > 1000 / AR_PROGRESS_HZ))
		wait_ms = 1000 / AR_PROGRESS_HZ;
	return wait_ms;
}

/* Read the worker's report and stderr until both pipes close, killing it
 * at the deadline (timeout_s, 0 = none); redraw the progress line from pp
 * meanwhile. */
static void collect(const child_t *ch, unsigned timeout_s, const progress_page_t *pp,
		    collected_t *c, ar_run_t *r)
{
	c->cap = 1 << 16;
	c->buf = malloc(c->cap);
	c->report_lost = !c->buf;
	uint64_t deadline = timeout_s ? mono_ms() + (uint64_t)timeout_s * 1000ull : 0;
	int open_fds = 2;
	struct pollfd pf[2] = { { ch->rep_fd, POLLIN, 0 }, { ch->err_fd, POLLIN, 0 } };
	while (open_fds > 0) {
		int n = poll(pf, 2, poll_wait_ms(deadline, c->timed_out, pp->ops != NULL));
		progress_page_show(pp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			if (deadline && !c->timed_out && mono_ms() >= deadline) {
				c->timed_out = 1;
				kill(ch->pid, SIGKILL);
			}
			continue;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char tmp[8192];
			ssize_t got = read(pf[i].fd, tmp, sizeof tmp);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
			} else if (i == 0) {
				keep_report(c, ch->pid, tmp, (size_t)got);
			} else {
				keep_stderr(r, &c->elen, tmp, (size_t)got);
			}
		}
	}
}

/* ---- what happened ------------------------------------------------------------------- */

/* Status for a worker killed by signal sig (header comment: oom, crashed). */
static void classify_signal(ar_run_t *r, int sig, long oom_before)
{
	char why[1024];
	long oom_after = cgroup_oom_kills();
	if (sig == SIGKILL && oom_before >= 0 && oom_after == oom_before) {
		/* The cgroup counts every OOM kill: this one came from
		 * elsewhere (a user, a test, a supervisor). */
		snprintf(why, sizeof why, "killed by signal %d (%s), which allocreplay did not send; "
			 "not the OOM killer (the cgroup's oom_kill count did not change)", sig,
			 strsignal(sig));
		set_status(r, AR_ST_CRASHED, why);
	} else if (sig == SIGKILL) {
		snprintf(why, sizeof why, "killed by SIGKILL, which allocreplay did not send%s",
			 oom_after > oom_before && oom_before >= 0
				 ? " (the cgroup's oom_kill count went up: the OOM killer)"
				 : " (most likely the OOM killer)");
		set_status(r, AR_ST_OOM, why);
	} else {
		snprintf(why, sizeof why, "killed by signal %d (%s)%s%.900s", sig, strsignal(sig),
			 r->stderr_tail[0] ? "; stderr: " : "", r->stderr_tail);
		set_status(r, AR_ST_CRASHED, why);
	}
}

/* A complete report without an E line: ok, with a reason when the
 * allocator returned NULL where the program's call had succeeded — still a
 * measurement (of an allocator out of memory), but of fewer blocks than the
 * trace's, so say so. */
static void classify_ok(ar_run_t *r)
{
	set_status(r, AR_ST_OK, "");
	uint64_t nulls = 0, skipped = 0;
	ar_run_scalar(r, "unexpected_failed_allocs", &nulls);
	ar_run_scalar(r, "skipped_ops", &skipped);
	if (nulls || skipped) {
		char why[1024];
		snprintf(why, sizeof why, "%llu allocation(s) returned NULL where the traced call "
			 "succeeded; %llu free/realloc op(s) on the missing blocks skipped (not "
			 "called, not timed): fewer live blocks than the trace",
			 (unsigned long long)nulls, (unsigned long long)skipped);
		copy(r->reason, sizeof r->reason, why);
	}
}

/* The run's status from how the worker ended (header comment). */
static void classify(ar_run_t *r, const collected_t *c, int ws, long oom_before,
		     const ar_run_opts_t *o, unsigned timeout_s, int sim)
{
	char why[1024];
	if (c->report_lost) {
		snprintf(why, sizeof why, "the worker's report outgrew %u MiB (or this process's memory): "
			 "something other than the worker wrote to its report pipe; worker killed, report "
			 "discarded", (unsigned)(AR_REPORT_MAX >> 20));
		set_status(r, AR_ST_ERROR, why);
	} else if (c->timed_out) {
		snprintf(why, sizeof why, "no result within %u s (--timeout %u%s): worker killed with "
			 "SIGKILL", timeout_s, o->timeout_s, sim ? ", scaled for valgrind" : "");
		set_status(r, AR_ST_TIMEOUT, why);
	} else if (WIFSIGNALED(ws)) {
		classify_signal(r, WTERMSIG(ws), oom_before);
	} else if (WEXITSTATUS(ws) == 127 || WEXITSTATUS(ws) == 126) {
		snprintf(why, sizeof why, "could not start the worker: %.900s", r->stderr_tail);
		set_status(r, AR_ST_ERROR, why);
	} else if (!r->complete) {
		snprintf(why, sizeof why, "worker exited with status %d without a complete report%s%.900s",
			 WEXITSTATUS(ws), r->stderr_tail[0] ? "; stderr: " : "", r->stderr_tail);
		set_status(r, AR_ST_CRASHED, why);
	} else if (!strcmp(r->status, AR_ST_ERROR) && !r->reason[0]) {
		classify_ok(r); /* complete, no E line */
	}
}

/* Parse what a finished worker reported into r (whole lines only: a last
 * line without its newline was cut by the worker's death). */
static void take_report(ar_run_t *r, collected_t *c)
{
	if (c->buf && !c->report_lost) {
		while (c->len > 0 && c->buf[c->len - 1] != '\n')
			c->len--;
		c->buf[c->len] = '\0';
		parse_report(r, c->buf);
	}
	free(c->buf);
	c->buf = NULL;
	if (!r->complete)
		drop_partial_report(r);
	for (char *s = r->stderr_tail; *s; s++)
		if (*s == '\n')
			*s = ' ';
}

void ar_run_worker(const ar_run_opts_t *o, const ar_allocator_t *a, const char *workload,
		   int repetition, ar_run_t *r)
{
	memset(r, 0, sizeof *r);
	snprintf(r->allocator, sizeof r->allocator, "%s", a->name);
	snprintf(r->touch, sizeof r->touch, "%s", o->touch);
	snprintf(r->counters_mode, sizeof r->counters_mode, "%s", o->counters ? o->counters : "perf");
	r->repetition = repetition;
	r->started_unix_ns = now_unix_ns();
	set_status(r, AR_ST_ERROR, "");

	int sim = o->counters && !strcmp(o->counters, "sim");
	unsigned timeout_s = run_timeout(o, sim);
	progress_page_t pp;
	progress_page_open(&pp);
	static worker_cmd_t cmd; /* 8 KiB of paths */
	build_cmd(&cmd, o, a, workload, timeout_s, sim, pp.fd);
	long oom_before = cgroup_oom_kills();
	child_t ch;
	if (spawn(&cmd, a, pp.fd, &ch, r) != 0) {
		progress_page_close(&pp);
		return;
	}
	collected_t c = { 0 };
	collect(&ch, timeout_s, &pp, &c, r);
	int ws = 0;
	while (waitpid(ch.pid, &ws, 0) < 0 && errno == EINTR)
		;
	progress_page_show(&pp); /* the last count, for the line's final state */
	progress_page_close(&pp);
	take_report(r, &c);
	classify(r, &c, ws, oom_before, o, timeout_s, sim);
	if (sim)
		sim_counters(r, a, o->worker, cmd.profile);
	derive_latency(r);
}
