/*
 * allocrec_attach.c — recording a process that is already running:
 *
 *   allocrec -p PID [--duration S] [-o FILE] [--stacks[=N]] [--level N] [--time-every N]
 *               [--time-unit NS] [-q]
 *   allocrec --detach PID
 *
 * -p checks that the process can be entered (ours, dynamically linked, not
 * traced by someone else, not recorded already, ptrace allowed), then runs
 * gdb on it (allocrec_gdb.c): on a thread that is not inside the
 * allocator, the loader or a lock, the process dlopens the shim (which
 * stays dormant) and calls allocrr_attach(settings) (rec_attach.c). The shim then
 * records a window into -o's file. allocrec -p waits until the window ends
 * (the shim creates a file of ours then): --duration elapsed, allocrec
 * --detach PID, Ctrl-C here (which detaches), or the process exited; then
 * it prints the trace's summary line.
 *
 * --detach asks the shim's own thread through the control channel
 * (rec_control.c), so it needs no ptrace; when the channel does not answer
 * (no private directory), gdb calls allocrr_detach() instead.
 *
 * Invariants: every refusal is said before gdb touches the process; the
 * process is never left stopped (allocrec_gdb.c bounds gdb); Ctrl-C here
 * detaches rather than leaving the process recording. Exit status 0 when
 * the window was recorded, 1 usage, 2 refused or failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allocrec_attach.h"
#include "allocrec_gdb.h"
#include "allocrec_settings.h"
#include "ar_cli.h"
#include "ar_readfile.h"
#include "ar_trace.h"
#include "rec_attach.h"
#include "rec_ctl_dir.h"

#define DETACH_WAIT_S 30   /* for the shim to close the window after a detach */

typedef struct attach_opts {
	pid_t pid;
	int detach; /* --detach PID rather than -p PID */
	const char *output;
	int quiet;
	allocrec_settings_t set; /* --stacks, --level, --time-every, --time-unit, --duration */
} attach_opts_t;

/* Scratch files of one run, in a private directory. */
typedef struct attach_run {
	char dir[64];
	char manifest[PATH_MAX], done[PATH_MAX], script[PATH_MAX], gdb_out[PATH_MAX];
	char shim[PATH_MAX];
	char settings[8192];
	char gdb[PATH_MAX];
} attach_run_t;

static volatile sig_atomic_t interrupted;
static const allocrec_attach_env_t *penv;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* ---- options ----------------------------------------------------------------------------- */
int allocrec_attach_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			return 0;
		if (strcmp(a, "-p") == 0 || strncmp(a, "-p", 2) == 0 || strcmp(a, "--pid") == 0 ||
		    strncmp(a, "--pid=", 6) == 0 || strcmp(a, "--detach") == 0 || strncmp(a, "--detach=", 9) == 0)
			return 1;
		if (a[0] != '-')
			return 0; /* PROG: the rest is its own */
		/* options that take a separate value: skip it */
		if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--level") == 0 ||
		    strcmp(a, "--duration") == 0 || strcmp(a, "--max-size") == 0 || strcmp(a, "--output-for") == 0 ||
		    strcmp(a, "--time-every") == 0 || strcmp(a, "--time-unit") == 0)
			i++;
	}
	return 0;
}

static int parse_pid(const char *s, pid_t *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
		return -1;
	*out = (pid_t)v;
	return 0;
}

enum { OPT_DETACH = 300 };

static int parse_args(int argc, char **argv, attach_opts_t *o)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},    {"detach", required_argument, NULL, OPT_DETACH},
		{"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
		ALLOCREC_SETTINGS_OPTIONS,                {NULL, 0, NULL, 0}};
	*o = (attach_opts_t){.set = allocrec_settings_default()};
	int c, rc, have_pid = 0;
	while ((c = getopt_long(argc, argv, "+:p:o:q", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case OPT_DETACH:
			if (have_pid)
				return ar_cli_usage_error("give one process: -p PID or --detach PID, once");
			if (parse_pid(optarg, &o->pid) != 0)
				return ar_cli_usage_error("%s takes a process id (a number above 0), not '%s'",
							  c == 'p' ? "-p" : "--detach", optarg);
			o->detach = c == OPT_DETACH;
			have_pid = 1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		default:
			if ((rc = allocrec_settings_option(c, optarg, &o->set)) >= 0) {
				if (rc != 0)
					return rc;
				break;
			}
			return ar_cli_bad_option(c, argv);
		}
	}
	if (optind < argc)
		return ar_cli_usage_error("-p PID records a running process: '%s' cannot be run as well (allocrec "
					  "PROG records a new one)", argv[optind]);
	if (o->detach && (o->output || !allocrec_settings_are_default(&o->set)))
		return ar_cli_usage_error("--detach PID takes no other option: -o, --stacks, --level, --time-every, "
					  "--time-unit and --duration belong to the allocrec -p that attached");
	if (o->output && ar_cli_is_stdio(o->output))
		return ar_cli_usage_error("-p cannot write the trace to standard output: name a file");
	return -1;
}

/* ---- can we enter the process? ------------------------------------------------------------ */
/* Read a small /proc/PID/NAME file into buf; its length, or -1. */
static ssize_t read_proc(pid_t pid, const char *name, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	return ar_read_small_file(path, buf, cap);
}

static long status_field(const char *status, const char *name)
{
	const char *p = strstr(status, name);
	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

/* The process's name (comm) for messages. */
static void proc_comm(pid_t pid, char *out, size_t cap)
{
	if (read_proc(pid, "comm", out, cap) <= 0)
		snprintf(out, cap, "?");
	out[strcspn(out, "\n")] = 0;
}

/* Scan /proc/PID/maps: whether any shared object is mapped, whether our
 * shim is, and the path of a recorder shim mapped there other than ours. */
static int scan_maps(pid_t pid, const char *our_shim, int *has_so, int *has_ours, char *other_shim, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[PATH_MAX + 128];
	*has_so = *has_ours = 0;
	other_shim[0] = 0;
	while (fgets(line, sizeof line, f)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (strstr(file, ".so"))
			*has_so = 1;
		const char *base = strrchr(file, '/') + 1;
		/* A shim replaced on disk since it was loaded (rebuilt,
		 * upgraded): dlopen would load a second copy beside it. */
		if (strcmp(base, "liballocrr-rec.so (deleted)") == 0) {
			snprintf(other_shim, cap, "%s", file);
			*has_ours = 1; /* it may be attached: --detach still works */
		}
		else if (strcmp(base, "liballocrr-rec.so") == 0 && strcmp(file, our_shim) != 0)
			snprintf(other_shim, cap, "%s", file);
		else if (strcmp(base, "liballocrr-rec.so") == 0)
			*has_ours = 1;
	}
	fclose(f);
	return 0;
}

/* ptrace_scope (Yama): 0 any process of ours, 1 only descendants (unless
 * CAP_SYS_PTRACE), 2 only with CAP_SYS_PTRACE, 3 never. -1 when absent. */
static int ptrace_scope(void)
{
	char buf[16];
	if (ar_read_small_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) <= 0)
		return -1;
	return atoi(buf);
}

/* Does process pid see the files we see? Its mount namespace is ours
 * (the links name the same namespace); when we cannot tell, assume so. */
static int same_mount_namespace(pid_t pid)
{
	char ours[64], theirs[64], path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	ssize_t a = readlink("/proc/self/ns/mnt", ours, sizeof ours - 1);
	ssize_t b = readlink(path, theirs, sizeof theirs - 1);
	if (a <= 0 || b <= 0)
		return 1;
	ours[a] = theirs[b] = 0;
	return strcmp(ours, theirs) == 0;
}

/* 0 when allocrec -p may try the process (--detach: when our shim is
 * loaded in it); else the message is printed and the exit status (2)
 * returned. */
static int check_target(pid_t pid, const char *shim, int need_ptrace, int detach)
{
	char status[4096], comm[64];
	if (read_proc(pid, "status", status, sizeof status) < 0)
		return ar_cli_error(NULL, "no process %d (%s): give the id of a running process", (int)pid,
				    strerror(errno));
	proc_comm(pid, comm, sizeof comm);
	char *uid = strstr(status, "\nUid:");
	long ruid = uid ? strtol(uid + 5, NULL, 10) : -1;
	if (getuid() != 0 && ruid != (long)getuid())
		return ar_cli_error(NULL, "process %d (%s) belongs to user %ld: only its owner or root can record it",
				    (int)pid, comm, ruid);
	if (pid == getpid())
		return ar_cli_error(NULL, "process %d is allocrec itself", (int)pid);
	int has_so, has_ours;
	char other[PATH_MAX];
	if (scan_maps(pid, shim, &has_so, &has_ours, other, sizeof other) != 0)
		return ar_cli_error(NULL, "cannot read /proc/%d/maps (%s): the process is not ours to enter", (int)pid,
				    strerror(errno));
	if (!has_so)
		return ar_cli_error(NULL, "process %d (%s) is statically linked: it has no dynamic loader to load the "
				    "recorder into, and its heap calls are bound inside it; it cannot be recorded",
				    (int)pid, comm);
	if (other[0] && strstr(other, " (deleted)") && !detach)
		return ar_cli_error(NULL, "process %d (%s) has the recorder loaded from an earlier attach, and that "
				    "file was replaced since (%s): a second copy cannot be loaded beside it; restart the "
				    "process to record it with the new one", (int)pid, comm, other);
	if (other[0] && !strstr(other, " (deleted)"))
		return ar_cli_error(NULL, "process %d (%s) has another recorder loaded (%s): if allocrec started it, "
				    "use allocrec --start/--stop %d instead", (int)pid, comm, other, (int)pid);
	if (detach && !has_ours)
		return ar_cli_error(NULL, "process %d (%s) is not recorded by allocrec -p: there is nothing to detach",
				    (int)pid, comm);
	if (!need_ptrace)
		return 0;
	if (!same_mount_namespace(pid))
		return ar_cli_error(NULL, "process %d (%s) sees other files than allocrec (another mount namespace: a "
				    "container, or a systemd service with PrivateTmp=): the recorder in it could not write "
				    "where allocrec reads; run allocrec in its namespace: nsenter -t %d -m allocrec -p %d ...",
				    (int)pid, comm, (int)pid, (int)pid);
	long tracer = status_field(status, "\nTracerPid:");
	if (tracer > 0) {
		char tcomm[64];
		proc_comm((pid_t)tracer, tcomm, sizeof tcomm);
		return ar_cli_error(NULL, "process %d (%s) is already traced by process %ld (%s), a debugger or "
				    "strace: a process has one tracer at a time; detach that one first", (int)pid, comm,
				    tracer, tcomm);
	}
	int scope = ptrace_scope();
	if (scope >= 2 && getuid() != 0)
		return ar_cli_error(NULL, "/proc/sys/kernel/yama/ptrace_scope is %d: only root may attach to a "
				    "process here (run as root, or: sysctl kernel.yama.ptrace_scope=0)", scope);
	if (scope == 3)
		return ar_cli_error(NULL, "/proc/sys/kernel/yama/ptrace_scope is 3: no process may attach to another "
				    "until reboot; allocrec -p cannot work on this machine");
	if (scope == 1 && getuid() != 0)
		return ar_cli_error(NULL, "/proc/sys/kernel/yama/ptrace_scope is 1: only a parent may attach to its "
				    "children; run allocrec -p as root, or: sudo sysctl kernel.yama.ptrace_scope=0");
	return 0;
}

/* ---- the settings the shim reads -------------------------------------------------------- */
/* settings (rec_config_parse's lines) for this run; 0, or 2 with the
 * message printed. */
static int make_settings(const attach_opts_t *o, attach_run_t *r)
{
	char dir[PATH_MAX], out[2 * PATH_MAX] = "";
	if (o->output) {
		char tmp[PATH_MAX], tmp2[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s", o->output);
		snprintf(tmp2, sizeof tmp2, "%s", o->output);
		const char *d = dirname(tmp);
		if (!realpath(d, dir))
			return ar_cli_error(d, "%s (the output directory of -o %s must exist)", strerror(errno), o->output);
		snprintf(out, sizeof out, "%s/%s", dir, basename(tmp2));
		struct stat st;
		if (lstat(out, &st) == 0 && S_ISLNK(st.st_mode))
			return ar_cli_error(o->output, "is a symbolic link: -o does not write through links; name the file "
					    "itself, or remove the link");
		if (strlen(out) >= 1024)
			return ar_cli_error(o->output, "its absolute path is longer than the recorder takes (1023 bytes)");
	} else if (!getcwd(dir, sizeof dir)) {
		return ar_cli_error(NULL, "cannot name the current directory: %s", strerror(errno));
	}
	int n = snprintf(r->settings, sizeof r->settings,
			 "%s%s%sALLOCRR_DIR=%s\nALLOCRR_MANIFEST=%s\nALLOCRR_STACKS=%d\nALLOCRR_LEVEL=%d\n"
			 "ALLOCRR_TIME_EVERY=%d\nALLOCRR_TIME_UNIT=%d\nALLOCRR_FOLLOW=0\nALLOCRR_ATTACH_DONE=%s\n"
			 "ALLOCRR_ATTACH_DURATION_NS=%llu\n",
			 out[0] ? "ALLOCRR_OUTPUT=" : "", out, out[0] ? "\n" : "", dir, r->manifest,
			 o->set.stacks, o->set.level, o->set.time_every, o->set.time_unit, r->done, o->set.duration_ns);
	if (n < 0 || (size_t)n >= sizeof r->settings)
		return ar_cli_error(NULL, "the paths are too long for the recorder's settings");
	return 0;
}

static const char *attach_error(int rc)
{
	switch (rc) {
	case AR_ATTACH_PRELOADED:
		return "the recorder is preloaded in it already (allocrec started it): use allocrec --start/--stop";
	case AR_ATTACH_BUSY:
		return "it is being recorded already (another allocrec -p, or allocrec --start): stop that first";
	case AR_ATTACH_NO_REAL:
		return "its heap functions could not be found (dlsym)";
	case AR_ATTACH_INIT:
		return "the recorder could not start in it (its allocrr: message on the process's stderr says why)";
	case AR_ATTACH_WINDOW:
		return "the trace could not be created (the allocrr: message on the process's stderr says why)";
	case AR_ATTACH_NO_GOT:
		return "none of its objects calls the heap functions through a GOT entry (linked with "
		       "-Bsymbolic or statically against its allocator?)";
	default:
		return "unknown result";
	}
}

/* ---- waiting for the window to end -------------------------------------------------------- */
static int file_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static int process_alive(pid_t pid)
{
	char st = allocrec_proc_state(pid);
	return st && st != 'Z' && st != 'X';
}

/* --detach through the control channel (rec_ctl_dir.h): the shim's own
 * thread puts the GOT back and closes the window, no ptrace needed.
 * Returns 0 when it did, -1 when the process does not listen (then gdb
 * calls allocrr_detach), 2 when it answered with an error (printed). */
static int detach_by_channel(pid_t pid, int quiet)
{
	char dir[512], err[700], ctl[PATH_MAX], num[32];
	if (rec_ctl_dir(dir, sizeof dir, 0, err, sizeof err) != 0)
		return -1;
	snprintf(ctl, sizeof ctl, "%s/%d.ctl", dir, (int)pid);
	if (access(ctl, F_OK) != 0)
		return -1;
	snprintf(num, sizeof num, "%d", (int)pid);
	return penv->control("detach", num, quiet) == 0 ? 0 : 2;
}

/* The gdb job for r: its files and settings. */
static allocrec_gdb_job_t job_of(const attach_opts_t *o, const attach_run_t *r)
{
	return (allocrec_gdb_job_t){.pid = o->pid, .gdb = r->gdb, .script = r->script, .out = r->gdb_out,
				    .shim = r->shim, .settings = r->settings};
}

static int detach_by_gdb(const attach_opts_t *o, attach_run_t *r)
{
	if (allocrec_gdb_find(r->gdb, sizeof r->gdb) != 0)
		return 2;
	allocrec_gdb_job_t job = job_of(o, r);
	allocrec_gdb_said_t g;
	allocrec_gdb_run(&job, "detach", &g);
	if (!g.have_result)
		return allocrec_gdb_failed(&job, &g);
	if (g.result != 0)
		return ar_cli_error(NULL, "process %d is not attached (allocrec -p %d attaches)", (int)o->pid, (int)o->pid);
	return 0;
}

/* Wait until the done file appears, the process ends, or Ctrl-C (then
 * detach and wait for the done file). Returns 0 when the window was
 * closed, 1 when the process ended first. */
static int wait_window(const attach_opts_t *o, attach_run_t *r, char *why, size_t cap)
{
	int asked = 0;
	time_t asked_at = 0;
	/* --duration: the shim's timer ends the window; should its word not
	 * come (it could not create the done file), detach as on Ctrl-C once
	 * the window is well past its end, so allocrec never waits for ever. */
	time_t overdue = o->set.duration_ns ? time(NULL) + (time_t)(o->set.duration_ns / 1000000000u) + DETACH_WAIT_S : 0;
	for (;;) {
		if (file_exists(r->done)) {
			int fd = open(r->done, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, why, cap - 1) : -1;
			if (fd >= 0)
				close(fd);
			why[n > 0 ? n : 0] = 0;
			why[strcspn(why, "\n")] = 0;
			return 0;
		}
		if (!process_alive(o->pid)) {
			snprintf(why, cap, "exited");
			return 1;
		}
		if ((interrupted || (overdue && time(NULL) > overdue)) && !asked) {
			asked = 1;
			asked_at = time(NULL);
			if (!o->quiet)
				fprintf(stderr, "%s: detaching from process %d%s\n", ar_cli_tool(), (int)o->pid,
					interrupted ? "" : " (its window did not say it ended when --duration was up)");
			if (detach_by_channel(o->pid, 1) < 0)
				detach_by_gdb(o, r);
		}
		if (asked && time(NULL) - asked_at > DETACH_WAIT_S) {
			snprintf(why, cap, "no answer to the detach");
			return 1;
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

/* The trace paths the shim listed in the manifest, each summarised.
 * 0; 3 (AR_EXIT_WARN) when one is cut short (the process died in the
 * window: what it wrote is kept and readable); 2 when none was written or
 * one cannot be read (summarise said why). */
static int report_traces(const attach_opts_t *o, const attach_run_t *r, const allocrec_attach_env_t *env)
{
	FILE *m = fopen(r->manifest, "r");
	char line[PATH_MAX + 8], first[PATH_MAX + 8] = "";
	int n = 0, cut = 0, unreadable = 0;
	while (m && fgets(line, sizeof line, m)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		int st = env->summarise(line, o->quiet);
		cut += st == 2;
		unreadable += st == 0;
		if (!n++)
			snprintf(first, sizeof first, "%s", line);
	}
	if (m)
		fclose(m);
	if (!n)
		return ar_cli_error(NULL, "process %d wrote no trace (its stderr may say why)", (int)o->pid);
	if (cut)
		fprintf(stderr, "%s: process %d: %d trace(s) cut short (the process ended without closing its "
			"window): what was written is readable and replayable\n", ar_cli_tool(), (int)o->pid, cut);
	if (!o->quiet)
		fprintf(stderr, "%s: next: allocreplay %s --all   (or: alloctrace stats %s)\n", ar_cli_tool(), first,
			first);
	return unreadable ? AR_EXIT_RUNTIME : cut ? AR_EXIT_WARN : 0;
}

/* ---- the commands ---------------------------------------------------------------------------- */
static int make_run_dir(attach_run_t *r)
{
	snprintf(r->dir, sizeof r->dir, "/tmp/allocrec-attach.XXXXXX");
	if (!mkdtemp(r->dir))
		return ar_cli_error("/tmp", "cannot create a private directory: %s", strerror(errno));
	snprintf(r->manifest, sizeof r->manifest, "%s/manifest", r->dir);
	snprintf(r->done, sizeof r->done, "%s/done", r->dir);
	snprintf(r->script, sizeof r->script, "%s/attach.py", r->dir);
	snprintf(r->gdb_out, sizeof r->gdb_out, "%s/gdb.out", r->dir);
	int rc = allocrec_gdb_write_script(r->script);
	if (rc != 0)
		return rc;
	int fd = open(r->manifest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	return 0;
}

static void remove_run_dir(const attach_run_t *r, int keep_gdb_out)
{
	if (!r->dir[0])
		return;
	unlink(r->manifest);
	unlink(r->done);
	unlink(r->script);
	if (keep_gdb_out)
		return;
	unlink(r->gdb_out);
	rmdir(r->dir);
}

/* The file-system uid and gid of process pid (the 4th field of status's
 * Uid: and Gid: lines): who its open() calls create files as. 0 or -1. */
static int proc_fs_ids(pid_t pid, long *uid, long *gid)
{
	char status[4096];
	if (read_proc(pid, "status", status, sizeof status) < 0)
		return -1;
	const char *u = strstr(status, "\nUid:"), *g = strstr(status, "\nGid:");
	if (!u || !g || sscanf(u + 5, "%*d %*d %*d %ld", uid) != 1 || sscanf(g + 5, "%*d %*d %*d %ld", gid) != 1)
		return -1;
	return 0;
}

/* The shim appends to the manifest and creates the done file in our
 * private run directory as the process's own user: root recording another user's
 * process (a server's worker that dropped privileges, a database's
 * backend) hands the directory to that user, still closed to everyone
 * else. Without it the window was recorded but never reported (the shim
 * could not say where it wrote, nor that it was done). */
static int share_run_dir(pid_t pid, const attach_run_t *r)
{
	long uid, gid;
	if (geteuid() != 0 || proc_fs_ids(pid, &uid, &gid) != 0 || uid == 0)
		return 0;
	if (chown(r->dir, (uid_t)uid, (gid_t)gid) != 0 || chown(r->manifest, (uid_t)uid, (gid_t)gid) != 0)
		return ar_cli_error(r->dir, "cannot hand the run directory to user %ld, whom process %d runs as: %s", uid,
				    (int)pid, strerror(errno));
	return 0;
}

/* The process's window ended or it exited: where we are after allocrec -p
 * got its answer. */
static int attach_and_wait(const attach_opts_t *o, attach_run_t *r, const allocrec_attach_env_t *env)
{
	int rc;
	if ((rc = env->find_shim(r->shim, sizeof r->shim)) != 0)
		return rc;
	if ((rc = check_target(o->pid, r->shim, 1, 0)) != 0 || (rc = allocrec_gdb_find(r->gdb, sizeof r->gdb)) != 0)
		return rc;
	if ((rc = make_run_dir(r)) != 0 || (rc = share_run_dir(o->pid, r)) != 0 || (rc = make_settings(o, r)) != 0)
		return rc;
	struct sigaction sa = {.sa_handler = on_interrupt};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	allocrec_gdb_job_t job = job_of(o, r);
	allocrec_gdb_said_t g;
	allocrec_gdb_run(&job, "attach", &g);
	if (!g.have_result) {
		rc = allocrec_gdb_failed(&job, &g);
		remove_run_dir(r, 1);
		return rc;
	}
	if (g.result != AR_ATTACH_OK) {
		char comm[64];
		proc_comm(o->pid, comm, sizeof comm);
		long uid, gid;
		char as_user[128] = "";
		if (g.result == AR_ATTACH_WINDOW && proc_fs_ids(o->pid, &uid, &gid) == 0 && uid != (long)geteuid())
			snprintf(as_user, sizeof as_user, "; it runs as user %ld, who must be able to create the -o file", uid);
		rc = ar_cli_error(NULL, "process %d (%s) was not attached: %s%s", (int)o->pid, comm, attach_error(g.result),
				  as_user);
		remove_run_dir(r, 0);
		return rc;
	}
	if (!o->quiet) {
		if (o->set.duration_ns)
			fprintf(stderr, "%s: recording process %d for %.3g s (allocrec --detach %d or Ctrl-C stops "
				"sooner)\n", ar_cli_tool(), (int)o->pid, (double)o->set.duration_ns / 1e9, (int)o->pid);
		else
			fprintf(stderr, "%s: recording process %d until allocrec --detach %d or Ctrl-C\n", ar_cli_tool(),
				(int)o->pid, (int)o->pid);
	}
	char why[256];
	int ended = wait_window(o, r, why, sizeof why);
	if (ended && !o->quiet)
		fprintf(stderr, "%s: process %d %s before the window was closed by a detach\n", ar_cli_tool(),
			(int)o->pid, why);
	rc = report_traces(o, r, env);
	remove_run_dir(r, 0);
	return rc;
}

int allocrec_attach_main(int argc, char **argv, const allocrec_attach_env_t *env)
{
	attach_opts_t o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	static attach_run_t r; /* big: not on the stack */
	penv = env;
	if (!o.detach)
		return attach_and_wait(&o, &r, env);
	if ((rc = env->find_shim(r.shim, sizeof r.shim)) != 0 || (rc = check_target(o.pid, r.shim, 0, 1)) != 0)
		return rc;
	if ((rc = detach_by_channel(o.pid, o.quiet)) >= 0)
		return rc;
	if ((rc = check_target(o.pid, r.shim, 1, 1)) != 0 || (rc = make_run_dir(&r)) != 0)
		return rc;
	rc = detach_by_gdb(&o, &r);
	remove_run_dir(&r, rc != 0);
	return rc;
}
