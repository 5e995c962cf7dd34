/*
 * rec_control.c — the control channel of a process recorded in windows:
 * allocrec --start/--stop PID reach the shim through files in a private
 * directory (rec_ctl_dir.h says which files and what they hold), read by a
 * thread of the shim every 100 ms. Files rather than a signal because
 * servers block every signal in their worker threads and take them with
 * sigwait in one, and a signal's handler could not open a trace anyway
 * (the window's start reads the allocator's statistics, which may lock).
 *
 * Invariants: the thread ("allocrr-control") blocks every signal, runs
 * with in_shim = REC_SHIM_INTERNAL (its libc calls are not the program's),
 * is detached and never joined, so it never keeps the process from
 * exiting; it acts only on files in the checked directory, opened with
 * O_NOFOLLOW; a fork child gets its own channel (its own pid) when it
 * starts paused, none otherwise; PID.ctl is removed when the image ends
 * normally (a killed process leaves it: allocrec tells a stale one by the
 * process start time it holds, and the next channel to start removes
 * those of processes that are gone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec_ctl_dir.h"
#include "rec_internal.h"

int (*rec_control_detach_fn)(void);

static char dir[512];
static _Atomic int running;   /* the thread exists (this image, this pid) */
static _Atomic int stopping;  /* the image ends: act on nothing more */
static pid_t ctl_pid;

static void path_of(char *out, size_t cap, const char *ext)
{
	snprintf(out, cap, "%s/%d.%s", dir, (int)ctl_pid, ext);
}

/* Write text to PID.ext through a temporary name, so a reader sees it
 * whole or not at all. */
static void publish(const char *ext, const char *text)
{
	char tmp[600], path[600];
	snprintf(tmp, sizeof tmp, "%s/.%d.%s.tmp", dir, (int)ctl_pid, ext);
	path_of(path, sizeof path, ext);
	unlink(tmp);
	int fd = rec_open_high(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	ssize_t w = write(fd, text, strlen(text));
	close(fd);
	if (w == (ssize_t)strlen(text))
		rename(tmp, path);
	else
		unlink(tmp);
}

/* The command waiting in PID.cmd ("ID VERB"), removed: 1, or 0 when none. */
static int take_command(char *id, size_t idcap, char *verb, size_t verbcap)
{
	char path[600], buf[256];
	path_of(path, sizeof path, "cmd");
	int fd = rec_open_high(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		n = read(fd, buf, sizeof buf - 1);
	close(fd);
	unlink(path);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%31s %31s", id, verb) != 2)
		return 0;
	(void)idcap;
	(void)verbcap;
	return 1;
}

static void answer(const char *id, int ok, const char *text)
{
	char line[1400];
	snprintf(line, sizeof line, "%s %s %s\n", id, ok ? "ok" : "error", text);
	publish("ack", line);
}

static void run_command(const char *id, const char *verb)
{
	char path[1100], text[1300];
	int st = atomic_load(&rec_state);
	if (strcmp(verb, "start") == 0) {
		if (st == REC_ON) {
			rec_window_last_path(path, sizeof path);
			snprintf(text, sizeof text, "already recording into %s (allocrec --stop %d ends it)", path,
				 (int)ctl_pid);
			answer(id, 0, text);
		} else if (st != REC_PAUSED) {
			answer(id, 0, "recording ended for good in this process (a write failed: see its stderr)");
		} else if (rec_window_begin(AR_WINDOW_START) == 0) {
			rec_window_last_path(path, sizeof path);
			answer(id, 1, path);
		} else {
			answer(id, 0, "the window could not start: the process's stderr says why");
		}
	} else if (strcmp(verb, "stop") == 0) {
		rec_window_last_path(path, sizeof path);
		if (st != REC_ON) {
			answer(id, 0, "no window is open (allocrec --start opens one)");
		} else {
			rec_window_end(AR_STOP_COMMAND);
			answer(id, 1, path);
		}
	} else if (strcmp(verb, "status") == 0) {
		rec_window_last_path(path, sizeof path);
		snprintf(text, sizeof text, "%s %s", st == REC_ON ? "recording" : "paused", st == REC_ON ? path : "");
		answer(id, 1, text);
	} else if (strcmp(verb, "detach") == 0) {
		if (!rec_control_detach_fn)
			answer(id, 0, "this process was not attached (allocrec --stop ends a window)");
		else if (rec_control_detach_fn() == 0) /* rec_attach.c: the GOT back, the window closed */
			answer(id, 1, (rec_window_last_path(path, sizeof path), path));
		else
			answer(id, 0, "not attached now: nothing to detach (allocrec -p PID attaches)");
	} else {
		answer(id, 0, "unknown command");
	}
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void *control_main(void *arg)
{
	(void)arg;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	prctl(PR_SET_NAME, "allocrr-control", 0, 0, 0);
	pid_t me = ctl_pid;
	while (!atomic_load(&stopping) && rec_getpid() == me) {
		char id[32], verb[32];
		if (take_command(id, sizeof id, verb, sizeof verb) && !atomic_load(&stopping))
			run_command(id, verb);
		sleep_ms(100);
	}
	return NULL;
}

/* Remove the PID.ctl files of processes that are gone (killed: their
 * image never ran its destructor), so the directory does not fill up. A
 * pid that exists again is left alone: allocrec tells it by its start
 * time. opendir allocates: the caller has in_shim set. */
static void sweep_stale(void)
{
	rec_fd_section_begin(); /* its descriptor (rec_fds.c) */
	DIR *d = opendir(dir);
	if (!d) {
		rec_fd_section_end();
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (pid <= 0 || strcmp(end, ".ctl") != 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	rec_fd_section_end();
}

/* The process's start time, read in a section (rec_fds.c). */
static unsigned long long start_ticks(pid_t pid)
{
	rec_fd_section_begin();
	unsigned long long t = rec_ctl_start_ticks(pid);
	rec_fd_section_end();
	return t;
}

/* PID.ctl and the thread for this pid. */
static int start_for(pid_t pid)
{
	char err[600];
	ctl_pid = pid;
	if (rec_ctl_dir(dir, sizeof dir, 1, err, sizeof err) != 0) {
		rec_warn("%s; allocrec --start/--stop cannot reach process %d", err, (int)pid);
		return -1;
	}
	sweep_stale();
	char text[128];
	snprintf(text, sizeof text, "allocrr-control 1\nstart %llu\n", start_ticks(pid));
	char path[600];
	path_of(path, sizeof path, "cmd");
	unlink(path); /* a command for an earlier process of this pid */
	publish("ctl", text);
	int rc = rec_thread_start_detached(control_main, NULL, 128 * 1024);
	if (rc != 0) {
		path_of(path, sizeof path, "ctl");
		unlink(path);
		rec_warn("cannot start the control thread: %s; allocrec --start/--stop cannot reach process %d",
			 strerror(rc), (int)pid);
		return -1;
	}
	atomic_store(&running, 1);
	return 0;
}

int rec_control_start(void)
{
	if (atomic_load(&running))
		return 0;
	int saved = rec_tls.in_shim, saved_errno = errno;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	atomic_store(&stopping, 0);
	int rc = start_for(rec_getpid());
	rec_tls.in_shim = saved;
	errno = saved_errno;
	return rc;
}

void rec_control_stop(void)
{
	if (!atomic_load(&running) || rec_getpid() != ctl_pid)
		return;
	int saved_errno = errno;
	atomic_store(&stopping, 1);
	char path[600];
	path_of(path, sizeof path, "ctl");
	unlink(path);
	atomic_store(&running, 0);
	errno = saved_errno;
}

void rec_control_fork_child(void)
{
	int had = atomic_load(&running);
	atomic_store(&running, 0); /* the parent's thread is not in this process */
	if (had && atomic_load(&rec_state) == REC_PAUSED)
		rec_control_start();
}
