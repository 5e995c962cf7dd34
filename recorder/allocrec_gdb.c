/*
 * allocrec_gdb.c — running gdb on a live process to call the recorder
 * shim's entry points in it (allocrec_gdb.h).
 *
 * gdb stops every thread wherever it is. A call made on a thread stopped
 * inside malloc (holding an arena lock), inside the loader (holding its
 * lock), or in any lock operation could deadlock, and the process with it.
 * So the script looks at each thread's stack and uses the first whose
 * frames name none of those; a frame it cannot name inside the C library
 * or an allocator counts as unsafe, unless the program's own code is below
 * it (a thread's start, main's caller). When every thread is busy, gdb
 * detaches and allocrec tries again a little later. During the call the
 * other threads run (scheduler-locking off), so a lock another thread
 * holds is released as usual; signals reaching the process are passed to
 * it without stopping gdb (a server's SIGPIPE must not abort the call); a
 * fault inside the call unwinds it (unwindonsignal).
 *
 * Invariants: one gdb run is bounded (ALLOCREC_GDB_TIMEOUT, else
 * GDB_TIMEOUT_S): past it gdb gets SIGTERM, on which it detaches and
 * quits, then SIGKILL, after which the kernel detaches it; a process left
 * stopped gets SIGCONT. gdb reads only libc's and the shim's symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocrec_gdb.h"
#include "ar_cli.h"
#include "ar_readfile.h"

#define GDB_TIMEOUT_S 60 /* one gdb run: attach, dlopen, attach call, detach */
#define PICK_TRIES 30    /* gdb runs that found every thread busy before we give up */

int allocrec_gdb_find(char *out, size_t cap)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		snprintf(out, cap, "%.*s/gdb", (int)len, p);
		if (len && access(out, X_OK) == 0)
			return 0;
		if (!e)
			break;
		p = e + 1;
	}
	return ar_cli_error(NULL, "gdb is not installed: allocrec -p uses it to load the recorder into a running "
			    "process (apt-get install gdb)");
}


/* The script gdb runs (Python: gdb's own command language cannot choose a
 * thread by its stack). It reads ALLOCREC_GDB_ACTION (attach, detach),
 * ALLOCREC_SHIM and ALLOCREC_SETTINGS from the environment and prints
 * "allocrec-gdb: WORD VALUE" lines: busy (no thread may be used now),
 * thread N (the one used), dlopen 0xADDR|0x0, result N, error TEXT. */
static const char gdb_script[] =
	"import gdb, os, re\n"
	"def say(k, v=''):\n"
	"    gdb.write('allocrec-gdb: %s %s\\n' % (k, v)); gdb.flush()\n"
	"def cstr(s):\n"
	"    out = ''\n"
	"    for ch in s.encode():\n"
	"        c = chr(ch)\n"
	"        out += c if (32 <= ch < 127 and c not in '\\\\\"') else '\\\\%03o' % ch\n"
	"    return '\"' + out + '\"'\n"
	/* Frames whose name says the thread may hold a lock that dlopen,
	 * malloc or the recorder's start-up needs. */
	"UNSAFE = re.compile(r'alloc|free|malloc|_int_|arena|tcache|sbrk|_dl_|^dl|dl_iterate|dlopen|dlsym|dlclose|"
	"tls_get_addr|lll_|mutex_lock|mutex_timedlock|rwlock_(rd|wr)lock|spin_lock|fork|exit|_IO_|^je_|^tc_|^mi_|"
	"pthread_create|allocate_stack|setxid|backtrace|unwind|^_Unwind|dl_find_object')\n"
	"SYSTEM = re.compile(r'/(libc\\.so|ld-linux|libpthread|libjemalloc|libtcmalloc|libmimalloc|liballocrr-rec)')\n"
	"def safe(th):\n"
	"    th.switch()\n"
	"    f = gdb.newest_frame(); user = False\n"
	"    for i in range(128):\n"
	"        if f is None: return True\n"
	"        name = f.name()\n"
	"        so = gdb.solib_name(f.pc()) or ''\n"
	"        if name is not None and UNSAFE.search(name): return False\n"
	/* A frame we cannot name inside the C library or an allocator, below
	 * the program's own code: it may be inside malloc. Above it (the
	 * thread's start, main's caller) it is a caller, harmless. */
	"        if name is None and SYSTEM.search(so) and not user: return False\n"
	"        if not SYSTEM.search(so): user = True\n"
	"        try: f = f.older()\n"
	"        except gdb.error: return user\n"
	"    return False\n"
	"def pick():\n"
	"    ths = sorted(gdb.selected_inferior().threads(), key=lambda t: t.num)\n"
	"    for th in ths:\n"
	"        try:\n"
	"            if th.is_valid() and safe(th): return th\n"
	"        except gdb.error: pass\n"
	"    return None\n"
	"def call(expr):\n"
	"    return int(gdb.parse_and_eval(expr))\n"
	"def main():\n"
	"    act = os.environ['ALLOCREC_GDB_ACTION']\n"
	"    for c in ['set pagination off', 'set confirm off', 'set unwindonsignal on',\n"
	"              'set unwind-on-terminating-exception on', 'set scheduler-locking off',\n"
	"              'handle all nostop noprint pass',\n"
	"              'handle SIGSEGV SIGBUS SIGILL SIGFPE SIGABRT stop print nopass']:\n"
	"        try: gdb.execute(c, to_string=True)\n"
	"        except gdb.error: pass\n"
	"    th = pick()\n"
	"    if th is None:\n"
	"        say('busy'); return\n"
	"    th.switch(); say('thread', th.num)\n"
	"    if act == 'attach':\n"
	"        shim = os.environ['ALLOCREC_SHIM']\n"
	"        h = 0\n"
	"        for e in ['(void*)dlopen(%s, 2)', '(void*)__libc_dlopen_mode(%s, 0x80000002)']:\n"
	"            try:\n"
	"                h = call(e % cstr(shim)); break\n"
	"            except gdb.error as x: say('note', str(x).replace('\\n', ' '))\n"
	"        say('dlopen', hex(h))\n"
	"        if not h: return\n"
	/* The settings string is put in the process's memory before gdb
	 * knows the shim's symbols: gdb allocates it by calling "malloc",
	 * which must not be the shim's dormant hook. */
	"        arg = call('(char*)%s' % cstr(os.environ['ALLOCREC_SETTINGS']))\n"
	"        gdb.execute('sharedlibrary liballocrr-rec', to_string=True)\n"
	"        say('result', call('(int)allocrr_attach((char*)%d)' % arg))\n"
	"    elif act == 'detach':\n"
	"        gdb.execute('sharedlibrary liballocrr-rec', to_string=True)\n"
	"        say('result', call('(int)allocrr_detach()'))\n"
	"    elif act == 'hooked':\n"
	"        gdb.execute('sharedlibrary liballocrr-rec', to_string=True)\n"
	"        say('result', call('(int)allocrr_attach_hooked()'))\n"
	"try:\n"
	"    main()\n"
	"except Exception as x:\n"
	"    say('error', str(x).replace('\\n', ' '))\n";

static void read_gdb_output(const char *path, allocrec_gdb_said_t *g)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		const char *v;
		if (strncmp(line, "allocrec-gdb: ", 14) != 0) {
			/* gdb's own complaints (ptrace refused, no such process) */
			if (strstr(line, "ptrace: ") || strstr(line, "Could not attach") || strstr(line, "not permitted"))
				snprintf(g->error, sizeof g->error, "%.500s", line);
			continue;
		}
		v = line + 14;
		if (strncmp(v, "busy", 4) == 0)
			g->busy = 1;
		else if (strncmp(v, "dlopen 0x0", 10) == 0 && (v[10] == 0 || v[10] == ' '))
			g->dlopen_failed = 1;
		else if (strncmp(v, "result ", 7) == 0) {
			g->have_result = 1;
			g->result = atoi(v + 7);
		} else if (strncmp(v, "error ", 6) == 0)
			snprintf(g->error, sizeof g->error, "%.500s", v + 6);
	}
	fclose(f);
}

char allocrec_proc_state(pid_t pid)
{
	char path[64], status[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (ar_read_small_file(path, status, sizeof status) < 0)
		return 0;
	const char *s = strstr(status, "\nState:");
	if (!s)
		return 0;
	s += strlen("\nState:");
	return s[strspn(s, " \t")];
}

/* Wait for gdb up to its deadline; past it, SIGTERM (gdb then detaches
 * from the process and quits), then SIGKILL (the kernel detaches it); a
 * process that was left stopped gets SIGCONT. */
static void wait_gdb(pid_t g, pid_t target, int timeout_s, allocrec_gdb_said_t *said)
{
	int status = 0, ms = 0;
	for (;; ms += 20) {
		pid_t r = waitpid(g, &status, WNOHANG);
		if (r == g || (r < 0 && errno != EINTR))
			break;
		if (ms == timeout_s * 1000) {
			said->timed_out = 1;
			kill(g, SIGTERM);
		}
		if (ms == timeout_s * 1000 + 5000)
			kill(g, SIGKILL);
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	char st = allocrec_proc_state(target);
	if (said->timed_out && (st == 'T' || st == 't'))
		kill(target, SIGCONT);
}

/* One gdb run doing action on the process. */
static void run_once(const allocrec_gdb_job_t *job, const char *action, allocrec_gdb_said_t *said)
{
	memset(said, 0, sizeof *said);
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)job->pid);
	pid_t g = fork();
	if (g < 0) {
		snprintf(said->error, sizeof said->error, "fork: %s", strerror(errno));
		return;
	}
	if (g == 0) {
		int fd = open(job->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || nul < 0)
			_exit(127);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("ALLOCREC_GDB_ACTION", action, 1);
		setenv("ALLOCREC_SHIM", job->shim, 1);
		setenv("ALLOCREC_SETTINGS", job->settings ? job->settings : "", 1);
		unsetenv("LD_PRELOAD");
		signal(SIGINT, SIG_IGN); /* Ctrl-C is allocrec's: gdb must finish its call */
		/* Only libc's symbols (and the shim's, later): reading every
		 * library's symbols would make attaching slow on big programs. */
		execl(job->gdb, "gdb", "--batch", "-n", "-q", "-iex", "set auto-solib-add off", "-iex",
		      "set debuginfod enabled off", "-p", pid, "-ex", "sharedlibrary libc\\.so", "-ex",
		      "sharedlibrary libpthread", "-x", job->script, "-ex", "detach", (char *)NULL);
		_exit(127);
	}
	const char *env = getenv("ALLOCREC_GDB_TIMEOUT");
	int timeout = env && atoi(env) > 0 ? atoi(env) : GDB_TIMEOUT_S;
	wait_gdb(g, job->pid, timeout, said);
	read_gdb_output(job->out, said);
}

void allocrec_gdb_run(const allocrec_gdb_job_t *job, const char *action, allocrec_gdb_said_t *said)
{
	for (int i = 0; i < PICK_TRIES; i++) {
		run_once(job, action, said);
		if (!said->busy || said->timed_out)
			return;
		struct timespec ts = {0, 20000000L * (i + 1)};
		nanosleep(&ts, NULL);
	}
}

int allocrec_gdb_write_script(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, gdb_script, sizeof gdb_script - 1) != (ssize_t)(sizeof gdb_script - 1)) {
		if (fd >= 0)
			close(fd);
		return ar_cli_error(path, "cannot write: %s", strerror(errno));
	}
	close(fd);
	return 0;
}

int allocrec_gdb_failed(const allocrec_gdb_job_t *job, const allocrec_gdb_said_t *g)
{
	if (g->timed_out)
		return ar_cli_error(NULL, "gdb did not finish within its deadline (ALLOCREC_GDB_TIMEOUT, %d s by "
				    "default) and was stopped; process %d runs on, the recorder may be loaded in it but "
				    "does not record (gdb's output: %s)", GDB_TIMEOUT_S, (int)job->pid, job->out);
	if (g->busy)
		return ar_cli_error(NULL, "every thread of process %d was inside the allocator, the loader or a "
				    "lock each of %d times gdb stopped it: try again (with libc6-dbg installed gdb can "
				    "name more frames)", (int)job->pid, PICK_TRIES);
	if (g->dlopen_failed)
		return ar_cli_error(job->shim, "the process could not load it (dlopen returned NULL; a 32-bit "
				    "process, or a path it cannot read?)");
	if (g->error[0])
		return ar_cli_error(NULL, "gdb could not do it: %s (its output: %s)", g->error, job->out);
	return ar_cli_error(NULL, "gdb could not attach to process %d (its output: %s)", (int)job->pid, job->out);
}
