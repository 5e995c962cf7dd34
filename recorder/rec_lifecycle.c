/*
 * rec_lifecycle.c — the life of the recording in this process: start-up
 * (constructor or first hook, whichever comes first), the destructor, the
 * fork handlers, closing before exec/_exit and starting anew after a failed
 * exec, the edits of the environment that exec'ed images inherit, and the
 * copy of what recording needs for an exec that passes its own environment.
 *
 * Invariants: start-up runs once (rec_init_state); start-up, closing,
 * restarting and a fork child's set-up run with in_shim set to
 * REC_SHIM_INTERNAL, so the shim's own libc calls are never recorded;
 * errno after each step is what the program left; the
 * environment is edited in place, never with setenv/unsetenv (see
 * env_entry); a vfork child (same memory, other pid) touches nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec_cost.h"
#include "rec_internal.h"

extern char **environ;

_Atomic int rec_state;
pid_t rec_pid;
rec_seq_line_t rec_seq;
uint64_t rec_start_mono_ns;

_Atomic int rec_init_state; /* 0 never, 1 running, 2 done */
int rec_dormant; /* dlopen'ed, not preloaded: nothing happens until allocrr_attach */

/* ---- start-up ---------------------------------------------------------------------- */
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void env_snapshot(void);

/* Initialise once; runs from the first hook call or the constructor,
 * whichever comes first, with in_shim set. */
void rec_init(void)
{
	int z = 0;
	if (!atomic_compare_exchange_strong(&rec_init_state, &z, 1))
		return;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_resolve();
	if (getenv("ALLOCRR_DISABLE")) {
		atomic_store(&rec_init_state, 2);
		rec_tls.in_shim = saved;
		return;
	}
	rec_pid = rec_getpid();
	rec_start_mono_ns = rec_mono_ns();
	rec_clock_init();
	rec_cost_calibrate();
	rec_process_init(); /* the RSS before the program's main */
	rec_config_read();
	env_snapshot();
	if (rec_cfg.paused) {
		/* allocrec --paused: the shim is here, the trace waits for a
		 * window (rec_window_begin through the control channel). */
		rec_writer_init(1);
		rec_stacks_init();
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atomic_store(&rec_state, REC_PAUSED);
		rec_signals_init();
	} else if (rec_writer_init(0) == 0) {
		rec_stacks_init();
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atomic_store(&rec_state, REC_ON);
		rec_signals_init();
		rec_thread_t *t = rec_thread_self();
		if (t)
			rec_modules_scan(t);
	}
	atomic_store(&rec_init_state, 2);
	rec_tls.in_shim = saved;
}

/* ---- the environment exec'ed images inherit ------------------------------------------ */
/* The environment is edited here by hand, never with setenv/unsetenv: a
 * program may define those itself, and symbol interposition then hands the
 * shim the program's. bash does: its versions work on its own variable
 * table, and before its main they change nothing, so ALLOCRR_OUTPUT
 * reached every program bash started, and each one's trace replaced the
 * first process's (found by tests/e2e/torture_rec_programs.sh). Edits are
 * in place, as glibc's own unsetenv makes them, so a program reading the
 * envp argument of main sees them too. */
static char **env_entry(const char *name)
{
	size_t len = strlen(name);
	for (char **ep = environ; ep && *ep; ep++)
		if (strncmp(*ep, name, len) == 0 && (*ep)[len] == '=')
			return ep;
	return NULL;
}

static void env_remove(const char *name)
{
	char **ep;
	while ((ep = env_entry(name)) != NULL)
		do
			ep[0] = ep[1];
		while (*ep++);
}

/* Drop our own entry from LD_PRELOAD (for --no-follow) so exec'ed images
 * run unrecorded, keeping whatever else the user preloaded. */
static void unpreload_self(void)
{
	const char *pre = getenv("LD_PRELOAD");
	if (!pre)
		return;
	char out[4096];
	size_t n = 0;
	const char *p = pre;
	while (*p) {
		while (*p == ' ' || *p == ':')
			p++;
		const char *e = p;
		while (*e && *e != ' ' && *e != ':')
			e++;
		size_t len = (size_t)(e - p);
		const char *base = p;
		for (const char *q = p; q < e; q++)
			if (*q == '/')
				base = q + 1;
		int ours = (size_t)(e - base) == strlen("liballocrr-rec.so") &&
			   memcmp(base, "liballocrr-rec.so", (size_t)(e - base)) == 0;
		if (len && !ours && n + len + 2 < sizeof out) {
			if (n)
				out[n++] = ' ';
			memcpy(out + n, p, len);
			n += len;
		}
		p = e;
	}
	out[n] = 0;
	/* out is the old value less our entry, never longer: rewritten in
	 * the string itself (the environment strings are writable). */
	char **ep = env_entry("LD_PRELOAD");
	if (n && ep && n <= strlen(*ep + sizeof "LD_PRELOAD"))
		memcpy(*ep + sizeof "LD_PRELOAD", out, n + 1);
	else
		env_remove("LD_PRELOAD");
}

/* ---- the environment of an exec that would drop the recorder ------------------------ */
/* A program may exec a child with an environment of its own making: empty
 * (execve(path, argv, {NULL}), or clearenv() then execv), or filtered. The
 * child would then run unrecorded without a word. With ALLOCRR_FOLLOW on,
 * the exec hooks give such a child what recording needs and nothing else:
 * our LD_PRELOAD entry (in front of any the program set) and the ALLOCRR_*
 * variables as they were at start-up (ALLOCRR_OUTPUT excepted: it names
 * the first image only). Copies are taken at start-up because by exec time
 * the program may have cleared its own environment. */
#define ENV_SAVED_MAX 32
static char env_saved[8192];          /* "NAME=value\0" ... */
static char *env_saved_ptr[ENV_SAVED_MAX];
static size_t env_nsaved;
static char shim_entry[1024];         /* our LD_PRELOAD entry, "" if none */

static void env_snapshot(void)
{
	size_t used = 0;
	env_nsaved = 0;
	for (char **ep = environ; ep && *ep && env_nsaved < ENV_SAVED_MAX; ep++) {
		if (strncmp(*ep, "ALLOCRR_", 8) != 0 || strncmp(*ep, "ALLOCRR_OUTPUT=", 15) == 0 ||
		    strncmp(*ep, "ALLOCRR_STREAM_FD=", 18) == 0) /* the first image's descriptor */
			continue;
		size_t len = strlen(*ep) + 1;
		if (used + len > sizeof env_saved)
			break;
		memcpy(env_saved + used, *ep, len);
		env_saved_ptr[env_nsaved++] = env_saved + used;
		used += len;
	}
	shim_entry[0] = 0;
	const char *p = getenv("LD_PRELOAD");
	while (p && *p) {
		while (*p == ' ' || *p == ':')
			p++;
		const char *e = p;
		while (*e && *e != ' ' && *e != ':')
			e++;
		size_t len = (size_t)(e - p), blen = strlen("liballocrr-rec.so");
		if (len >= blen && memcmp(e - blen, "liballocrr-rec.so", blen) == 0 &&
		    (len == blen || e[-(long)blen - 1] == '/') && len < sizeof shim_entry) {
			memcpy(shim_entry, p, len);
			shim_entry[len] = 0;
			break;
		}
		p = e;
	}
}

static const char *env_find(char *const *envp, const char *entry)
{
	size_t len = strcspn(entry, "=") + 1; /* "NAME=" */
	for (char *const *ep = envp; ep && *ep; ep++)
		if (strncmp(*ep, entry, len) == 0)
			return *ep;
	return NULL;
}

size_t rec_exec_env_slots(char *const *envp)
{
	size_t n = 0;
	for (char *const *ep = envp; ep && *ep; ep++)
		n++;
	return n + ENV_SAVED_MAX + 2;
}

char *const *rec_exec_env(char *const *envp, char **out, size_t slots, char *pre, size_t precap)
{
	if (!rec_cfg.follow_exec || !shim_entry[0] || rec_tls.in_shim ||
	    atomic_load(&rec_init_state) != 2)
		return envp;
	const char *have = env_find(envp, "LD_PRELOAD=");
	int need_pre = !have || !strstr(have, shim_entry);
	int missing = 0;
	for (size_t i = 0; i < env_nsaved; i++)
		missing += env_find(envp, env_saved_ptr[i]) == NULL;
	if (!need_pre && !missing)
		return envp; /* the usual case: nothing to add, nothing copied */
	size_t n = 0;
	if (need_pre) {
		int w = snprintf(pre, precap, "LD_PRELOAD=%s%s%s", shim_entry, have ? " " : "",
				 have ? have + sizeof "LD_PRELOAD" : "");
		if (w < 0 || (size_t)w >= precap)
			return envp; /* cannot say it whole: leave the program's choice */
		out[n++] = pre;
	}
	for (char *const *ep = envp; ep && *ep && n + 1 < slots; ep++)
		if (!need_pre || !have || *ep != have)
			out[n++] = *ep;
	for (size_t i = 0; i < env_nsaved && n + 1 < slots; i++)
		if (!env_find(envp, env_saved_ptr[i]))
			out[n++] = env_saved_ptr[i];
	out[n] = NULL;
	return out;
}

int rec_init_attached(void)
{
	int z = 0;
	if (!atomic_compare_exchange_strong(&rec_init_state, &z, 1)) {
		/* The dormant constructor marks start-up done without doing it. */
		if (!rec_dormant || atomic_load(&rec_state) != REC_OFF)
			return -1;
	}
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_resolve_with(RTLD_DEFAULT);
	rec_pid = rec_getpid();
	rec_start_mono_ns = rec_mono_ns();
	rec_clock_init();
	rec_cost_calibrate();
	rec_process_init();
	rec_writer_init(1);
	rec_stacks_init();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	atomic_store(&rec_state, REC_PAUSED);
	atomic_store(&rec_init_state, 2);
	rec_tls.in_shim = saved;
	return 0;
}

/* ---- constructor and destructor ----------------------------------------------------- */
__attribute__((constructor)) static void rec_ctor(void)
{
	if (atomic_load(&rec_init_state) == 0 && !rec_shim_preloaded()) {
		/* dlopen'ed into a running process (attach): dormant until
		 * allocrr_attach, which resolves the real functions (the
		 * program's, not those after us) before any hook can be
		 * reached; nothing read, nothing edited, no trace. */
		rec_dormant = 1;
		atomic_store(&rec_init_state, 2);
		return;
	}
	rec_init();
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	/* ALLOCRR_OUTPUT names this image's trace only: exec'ed images and
	 * forked children use ALLOCRR_DIR/PROG.PID.zst. */
	env_remove("ALLOCRR_OUTPUT");
	env_remove("ALLOCRR_STREAM_FD"); /* its number means nothing in another image */
	if (!rec_cfg.follow_exec)
		unpreload_self();
	if (atomic_load(&rec_state) == REC_ON)
		rec_writer_start();
	if (atomic_load(&rec_state) == REC_PAUSED)
		rec_control_start();
	rec_tls.in_shim = saved;
}

__attribute__((destructor)) static void rec_dtor(void)
{
	if (rec_dormant && atomic_load(&rec_state) == REC_OFF)
		return;
	rec_control_stop();
	rec_limit_report(); /* a bounded recording that ended early: what came after */
	rec_switch_wait(10000);
	if (atomic_load(&rec_state) != REC_ON || rec_getpid() != rec_pid)
		return;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_writer_finish("exit", 10000);
	rec_tls.in_shim = saved;
}

/* ---- fork ---------------------------------------------------------------------------- */
/* A new trace for this process (a fork child, an image whose exec failed):
 * fresh writer and stack state, recording on, the module map again. */
static void record_anew(void)
{
	rec_window_reset_child();
	rec_writer_reset_child();
	rec_stacks_reset_child();
	if (rec_windowed()) {
		/* Windows come on command: this image waits for the next. */
		atomic_store(&rec_state, REC_PAUSED);
		return;
	}
	atomic_store(&rec_state, REC_ON);
	rec_thread_t *t = rec_thread_self();
	if (t)
		rec_modules_scan(t);
}

/* glibc runs prepare handlers last registered first, the others in order;
 * ours is registered at start-up, usually before the program's, so the
 * program's prepare handlers (which may allocate and unwind) mostly run
 * before ours closes the gate, and any that run while it is closed do so on
 * the forking thread, which passes it (rec_stacks.c). */
static void atfork_prepare(void)
{
	int saved = errno;
	rec_stacks_fork_prepare();
	errno = saved;
}

static void atfork_parent(void)
{
	int saved = errno; /* fork's own errno when it failed */
	rec_stacks_fork_parent();
	errno = saved;
}

static void atfork_child(void)
{
	rec_fd_fork_child(); /* before anything here opens a file */
	rec_stacks_fork_child(); /* whether this child may unwind at all */
	if (rec_windowed() && atomic_load(&rec_state) != REC_OFF) {
		/* A child of a program recorded in windows starts paused, with
		 * a control channel of its own pid (rec_control.c). */
		int saved = rec_tls.in_shim;
		rec_tls.in_shim = REC_SHIM_INTERNAL;
		record_anew();
		rec_control_fork_child();
		rec_tls.in_shim = saved;
		return;
	}
	/* A parent past its --max-size/--duration still has children
	 * recorded: each image's trace has its own limit. */
	if (atomic_load(&rec_state) != REC_ON && atomic_load(&rec_state) != REC_CLOSING &&
	    !atomic_load(&rec_limit_stop))
		return;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	atomic_store(&rec_state, REC_OFF);
	record_anew();
	if (atomic_load(&rec_state) == REC_ON)
		rec_writer_open_child();
	rec_tls.in_shim = saved;
}

/* ---- exec and _exit ------------------------------------------------------------------ */
/* Called before an exec or _exit replaces or ends this image. Returns 1 if
 * the trace was closed (and recording may restart if the exec fails). */
int rec_close_before(const char *why)
{
	/* In a vfork child (or raw clone) we share the parent's memory: hands off. */
	if (!rec_tls.in_shim && rec_getpid() == rec_pid && atomic_load(&rec_state) == REC_STOPPED)
		rec_limit_report(); /* this image ends (or execs) past its limit */
	if (!rec_tls.in_shim && rec_getpid() == rec_pid)
		rec_switch_wait(10000); /* a rotation's switch: close the next segment */
	if (atomic_load(&rec_state) != REC_ON || rec_getpid() != rec_pid || rec_tls.in_shim)
		return 0;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_writer_finish(why, 10000);
	rec_tls.in_shim = 0;
	return 1;
}

/* The exec failed: this image goes on, so it gets a new trace file. */
void rec_restart_after_failed_exec(void)
{
	int saved = errno;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	for (int i = 0; i < 1000 && atomic_load(&rec_writer_running); i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	record_anew(); /* windowed: paused again, the control thread still runs */
	rec_tls.in_shim = 0;
	errno = saved;
}
