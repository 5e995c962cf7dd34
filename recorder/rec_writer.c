/*
 * rec_writer.c — owns the trace file: opens it, compresses and writes the
 * buffers threads hand over, steals buffers from idle threads so that old
 * events reach the disk, and closes the trace with a footer.
 *
 * One background thread ("allocrr-writer") does the work so that the traced
 * threads never compress or write. It keeps rec_tls.in_shim set for its whole
 * life (its own allocations, if any, are not the program's) and blocks every
 * asynchronous signal, so process-directed signals go to program threads.
 *
 * Invariants:
 *   - ar_writer_* is called only by the holder of wlock (normally the writer
 *     thread; a thread that must finish the trace itself when no writer
 *     thread exists, e.g. in a fork child that never started one).
 *   - Submitted buffers are written in submission order per thread, metadata
 *     before events, and then given back to their owner.
 *   - Time bound: a buffer is submitted by its owner once its first event is
 *     older than rec_cfg.flush_ns, or stolen by the writer (scan every
 *     flush_ns/2) when its owner went idle; so an event is written at most
 *     ~1.5 * flush_ns after it happened unless its thread is stuck inside
 *     the real allocator at that moment. That is what a SIGKILL can lose.
 *   - Any write error stops recording for good after one warning; the trace
 *     then ends without a footer (readers report it truncated).
 *   - A footer is written only when every thread was reached by the final
 *     close's handshake (collect_all): a trace never claims to be complete
 *     with events missing. A file appears under its name only with its
 *     header; our writes never let SIGXFSZ reach the program.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rec_internal.h"

_Atomic int rec_writer_running;

static ar_header_t hdr;
static char trace_path[1100];
static int trace_fd = -1;
static dev_t trace_dev;
static ino_t trace_ino;
static ar_writer_t *writer;
static int open_failed;

static _Atomic int wlock;                 /* who may call ar_writer_* */
static _Atomic(rec_buf_t *) queue;        /* submitted buffers, newest first */
static _Atomic(rec_thread_t *) new_threads; /* not yet in the writer's list */
static rec_thread_t *threads;             /* writer's list (wlock holder only) */
static rec_thread_t *gone;                /* exited threads dropped from it (wlock holder only) */
static const rec_thread_t *closer_busy;   /* the closing thread, stopped inside a call */
static _Atomic uint32_t wake_word;
static _Atomic int writer_waiting;
static _Atomic int close_req;
static _Atomic int closed;
static _Atomic int writer_starting;

/* ---- helpers ------------------------------------------------------------------ */
/* Sleeps the whole time even when signals arrive: the bounded waits below
 * count their sleeps, and a program with a 10 kHz timer would otherwise cut
 * the 10 s exit wait to a few ms and leave the trace without its footer. */
static void sleep_ns(long ns)
{
	int saved = errno;
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	errno = saved;
}

/* Writes made on a program thread (the header at start-up; all writes when
 * there is no writer thread) must not let RLIMIT_FSIZE kill the program:
 * the kernel sends SIGXFSZ (default action: die) to the thread whose write
 * crosses the limit, then fails the write with EFBIG. The writer thread
 * blocks every signal; elsewhere we block SIGXFSZ around our writes and
 * discard the one we caused, so the program sees neither, only the
 * warning. */
typedef struct {
	sigset_t old;
	int active, pending_before;
} xfsz_guard_t;

static void xfsz_block(xfsz_guard_t *g)
{
	g->active = !rec_tls.is_writer;
	if (!g->active)
		return;
	sigset_t s, p;
	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &s, &g->old);
	g->pending_before = sigpending(&p) == 0 && sigismember(&p, SIGXFSZ);
}

static void xfsz_restore(xfsz_guard_t *g)
{
	if (!g->active)
		return;
	int saved = errno;
	sigset_t s, p;
	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	if (!g->pending_before && sigpending(&p) == 0 && sigismember(&p, SIGXFSZ)) {
		struct timespec zero = {0, 0};
		sigtimedwait(&s, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = saved;
}

static int try_lock(void)
{
	int z = 0;
	return atomic_compare_exchange_strong(&wlock, &z, 1);
}

static void unlock(void)
{
	atomic_store_explicit(&wlock, 0, memory_order_release);
}

/* "allocrr: MESSAGE TAIL" as one write to stderr. */
static void vwarn(const char *fmt, va_list ap, const char *tail)
{
	int saved = rec_tls.in_shim; /* strerror and vsnprintf are ours */
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	char msg[1400];
	int n = snprintf(msg, sizeof msg, "allocrr: ");
	n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	if (n > (int)sizeof msg - 40)
		n = (int)sizeof msg - 40;
	n += snprintf(msg + n, sizeof msg - (size_t)n, "%s\n", tail);
	xfsz_guard_t g; /* stderr may be a file at its RLIMIT_FSIZE too */
	xfsz_block(&g);
	ssize_t w = write(2, msg, (size_t)n);
	(void)w;
	xfsz_restore(&g);
	rec_tls.in_shim = saved;
}

void rec_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(fmt, ap, "");
	va_end(ap);
}

static _Atomic int warned;
void rec_fail(const char *fmt, ...)
{
	atomic_store(&rec_state, REC_STOPPED);
	if (atomic_exchange(&warned, 1))
		return;
	va_list ap;
	va_start(ap, fmt);
	vwarn(fmt, ap, "; recording stopped");
	va_end(ap);
}

/* ---- header and file --------------------------------------------------------------- */
static void read_cmdline(char *out, size_t cap)
{
	out[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fd, out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	while (n > 0 && out[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (out[i] == 0)
			out[i] = ' ';
	out[n] = 0;
}

static void header_fill(void)
{
	char cmd[AR_CMDLINE_MAX];
	read_cmdline(cmd, sizeof cmd);
	ar_header_init(&hdr);
	hdr.pid = (uint64_t)rec_pid;
	hdr.ppid = (uint64_t)getppid();
	rec_strlcpy(hdr.cmdline, cmd, sizeof hdr.cmdline);
	rec_strlcpy(hdr.recorder_version, REC_VERSION, sizeof hdr.recorder_version);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	hdr.start_wall_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	hdr.start_mono_ns = rec_start_mono_ns;
	if (clock_getres(CLOCK_MONOTONIC, &ts) == 0)
		hdr.clock_resolution_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	hdr.page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	if (rec_cfg.stack_depth)
		hdr.flags |= AR_HDR_STACKS;
}

/* Expand %p (pid) and %% in pattern. */
static void expand(char *out, size_t cap, const char *pat)
{
	size_t n = 0;
	for (const char *s = pat; *s && n + 24 < cap; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			n += (size_t)snprintf(out + n, cap - n, "%d", (int)rec_pid);
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			out[n++] = '%';
			s++;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = 0;
}

/* Keep the trace fd out of the way of programs that dup2() onto low
 * numbers (shells do): move it high. */
static int move_fd_high(int fd)
{
	struct rlimit rl;
	int want = 1000;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1100)
		want = (int)rl.rlim_cur > 128 ? (int)rl.rlim_cur - 64 : 10;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, want);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

static void manifest_add(const char *path)
{
	if (!rec_cfg.manifest[0])
		return;
	int fd = open(rec_cfg.manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	char line[1200];
	int n = snprintf(line, sizeof line, "%s\n", path);
	ssize_t w = write(fd, line, (size_t)n); /* O_APPEND: one atomic line */
	(void)w;
	close(fd);
}

/* trace_path for attempt i (i > 0 only without -o: PROG.PID.i.zst). */
static void name_trace(int i)
{
	if (rec_cfg.output[0])
		expand(trace_path, sizeof trace_path, rec_cfg.output);
	else if (i == 0)
		snprintf(trace_path, sizeof trace_path, "%s/%s.%d.zst", rec_cfg.dir, rec_prog_name(), (int)rec_pid);
	else
		snprintf(trace_path, sizeof trace_path, "%s/%s.%d.%d.zst", rec_cfg.dir, rec_prog_name(),
			 (int)rec_pid, i);
}

static void note_ours(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0) {
		trace_dev = st.st_dev;
		trace_ino = st.st_ino;
	}
}

static int header_failed(int fd, const ar_error_t *err, int rc)
{
	open_failed = 1;
	close(fd);
	writer = NULL;
	rec_fail("cannot write trace %s: %s", trace_path,
		 err->sys_errno ? strerror(err->sys_errno) : (err->msg[0] ? err->msg : ar_strerror(rc)));
	return -1;
}

/* The trace gets its name only once its header is on disk, so that a
 * SIGKILL during start-up leaves no file rather than an unreadable one
 * (SPEC 7.2: a file shorter than its header): an O_TMPFILE in the
 * directory, the header, then linkat through /proc/self/fd. Returns 0 when
 * done, -1 after rec_fail, 1 when this way is not available (no O_TMPFILE
 * on that file system, no /proc, an -o target that is not a regular file
 * such as /dev/full): the caller then opens the file by its name. */
static int open_unnamed_first(void)
{
	name_trace(0);
	char dir[sizeof trace_path];
	rec_strlcpy(dir, trace_path, sizeof dir);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		rec_strlcpy(dir, ".", sizeof dir);
	struct stat st;
	if (rec_cfg.output[0] && lstat(trace_path, &st) == 0 && !S_ISREG(st.st_mode))
		return 1;
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return 1;
	fd = move_fd_high(fd);
	note_ours(fd);
	ar_error_t err;
	int rc = ar_writer_open(&writer, fd, &hdr, rec_cfg.level, &rec_writer_mem, &err);
	if (rc != 0)
		return header_failed(fd, &err, rc); /* nothing was named: nothing to remove */
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	for (int i = 0; i < 100; i++) {
		name_trace(i);
		if (rec_cfg.output[0])
			unlink(trace_path); /* -o replaces a regular file (it was truncated before) */
		if (linkat(AT_FDCWD, proc, AT_FDCWD, trace_path, AT_SYMLINK_FOLLOW) == 0) {
			trace_fd = fd;
			return 0;
		}
		/* A re-exec of the same program keeps its pid: never overwrite. */
		if (errno != EEXIST || rec_cfg.output[0])
			break;
	}
	ar_writer_close(writer, 0, 0, &err);
	writer = NULL;
	close(fd);
	return 1;
}

static int open_trace(void)
{
	if (writer)
		return 0;
	if (open_failed)
		return -1;
	int rc = open_unnamed_first();
	if (rc <= 0) {
		if (rc == 0)
			manifest_add(trace_path);
		return rc;
	}
	int fd = -1;
	if (rec_cfg.output[0]) {
		name_trace(0);
		fd = open(trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	} else {
		/* A re-exec of the same program keeps its pid: never overwrite. */
		for (int i = 0; i < 100; i++) {
			name_trace(i);
			fd = open(trace_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (fd < 0) {
		open_failed = 1;
		rec_fail("cannot create trace %s: %s", trace_path, strerror(errno));
		return -1;
	}
	fd = move_fd_high(fd);
	note_ours(fd);
	ar_error_t err;
	rc = ar_writer_open(&writer, fd, &hdr, rec_cfg.level, &rec_writer_mem, &err);
	if (rc != 0) {
		/* Without its whole header the file is unreadable (SPEC 7.2), not
		 * a truncated trace: remove the regular file we just created
		 * (RLIMIT_FSIZE or a full disk at start), never a device like
		 * /dev/full. */
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == trace_dev && st.st_ino == trace_ino)
			unlink(trace_path);
		return header_failed(fd, &err, rc);
	}
	trace_fd = fd;
	manifest_add(trace_path);
	return 0;
}

/* The program may have closed our fd and reused the number: never write
 * into someone else's file. */
static int fd_still_ours(void)
{
	struct stat st;
	return fstat(trace_fd, &st) == 0 && st.st_dev == trace_dev && st.st_ino == trace_ino;
}

static void write_error(int rc, const ar_error_t *err)
{
	rec_fail("cannot write trace %s: %s", trace_path,
		 err->sys_errno ? strerror(err->sys_errno) : (err->msg[0] ? err->msg : ar_strerror(rc)));
}

/* Write one buffer (wlock held). */
static void write_buf(rec_buf_t *b)
{
	if (!writer && atomic_load(&rec_state) != REC_STOPPED)
		open_trace();
	if (writer && atomic_load(&rec_state) != REC_STOPPED) {
		ar_error_t err;
		int rc = 0;
		if (!fd_still_ours()) {
			rec_fail("the program closed the trace file %s", trace_path);
		} else {
			if (b->mb.len)
				rc = ar_writer_write_meta(writer, &b->mb, &err);
			if (rc == 0 && b->eb.nevents)
				rc = ar_writer_write_events(writer, &b->eb, &err);
			if (rc != 0)
				write_error(rc, &err);
		}
	}
	rec_buf_give_back(b);
}

/* Write everything submitted so far, oldest first (wlock held). */
static void drain_queue(void)
{
	rec_buf_t *list = atomic_exchange_explicit(&queue, NULL, memory_order_acquire);
	rec_buf_t *rev = NULL;
	while (list) {
		rec_buf_t *n = list->next;
		list->next = rev;
		rev = list;
		list = n;
	}
	while (rev) {
		rec_buf_t *n = rev->next;
		write_buf(rev);
		rev = n;
	}
}

static void merge_new_threads(void)
{
	rec_thread_t *t = atomic_exchange_explicit(&new_threads, NULL, memory_order_acquire);
	while (t) {
		rec_thread_t *n = t->all_next;
		t->all_next = threads;
		threads = t;
		t = n;
	}
}

/* Steal and write the buffers of idle threads whose first event is older
 * than min_age_ns. Exited threads whose buffers are all back are moved from
 * the list to `gone` (the final close still makes its handshake with them:
 * glibc makes heap calls on an exiting thread after its last TLS
 * destructor). */
static void steal_all(uint64_t min_age_ns)
{
	merge_new_threads();
	uint64_t now = rec_time_ns() + 1;
	rec_thread_t **pp = &threads;
	while (*pp) {
		rec_thread_t *t = *pp;
		uint64_t first = atomic_load_explicit(&t->first_ns, memory_order_relaxed);
		rec_buf_t *b;
		if (first != 0 && now - first >= min_age_ns && rec_thread_steal(t, &b, 0) && b) {
			/* The owner may have submitted older buffers since the last
			 * drain (it was idle at the steal, so they are queued by
			 * now): they go first, or its blocks would be out of
			 * order in the file (SPEC 7.3: corrupt). */
			drain_queue();
			write_buf(b);
		}
		if (t->exited && !atomic_load(&t->cur) && !atomic_load(&t->in_call)) {
			atomic_store_explicit(&t->writer_gone, 1, memory_order_release);
			rec_buf_t *r = atomic_exchange(&t->returned, NULL);
			while (r) {
				rec_buf_t *n = r->next;
				rec_buf_free_list_push(r);
				r = n;
			}
			*pp = t->all_next;
			t->all_next = gone;
			gone = t;
			continue;
		}
		pp = &t->all_next;
	}
}

/* How long the final close waits for threads found inside a call. They are
 * only ever there for a few hundred ns of work, but a preempted one (64
 * threads on 2 cores) may wait a scheduler round of tens of ms to run. */
#define QUIESCE_WAIT_MS 1000

/* The final collection, rec_state already REC_CLOSING (wlock held): the
 * handshake with every thread that ever recorded, so that none appends or
 * submits anything afterwards, writing what they held. Returns how many
 * threads could not be reached (their last events are lost). */
static int collect_all(void)
{
	int busy = 0;
	for (int ms = 0;; ms++) {
		merge_new_threads();
		rec_buf_t *taken = NULL;
		busy = rec_threads_quiesce(threads, closer_busy, &taken) +
		       rec_threads_quiesce(gone, closer_busy, &taken);
		drain_queue(); /* older buffers of the same threads first */
		while (taken) {
			rec_buf_t *n = taken->next;
			write_buf(taken);
			taken = n;
		}
		if (!busy || ms >= QUIESCE_WAIT_MS)
			break;
		sleep_ns(1000000);
	}
	drain_queue();
	return busy + (closer_busy != NULL);
}

static int meta_name(ar_metabuf_t *m, const void *arg)
{
	const rec_thread_t *t = arg;
	return ar_meta_thread_name(m, t->index, t->name);
}

/* Final flush and footer (wlock held). */
static void do_close(void)
{
	drain_queue();
	int busy = collect_all();
	if (atomic_load(&rec_state) == REC_STOPPED && !writer)
		goto out; /* failed before anything was written */
	/* The names threads have now (names set after start, e.g. by
	 * pthread_setname_np or prctl, are only visible in /proc). */
	static uint8_t mdata[REC_METABUF_CAP];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, mdata, sizeof mdata);
	uint64_t dropped = atomic_load(&rec_dropped_global);
	for (rec_thread_t *t = threads; t; t = t->all_next) {
		dropped += t->dropped;
		if (!t->exited) {
			rec_thread_read_name(t->tid, t->name);
			if (t->name[0])
				meta_name(&m, t);
		}
	}
	if (!writer && m.nrecords == 0 && !rec_cfg.output[0])
		goto out; /* a fork child that recorded nothing: no file */
	if (!writer && open_trace() != 0)
		goto out;
	int footer = atomic_load(&rec_state) != REC_STOPPED;
	if (busy && footer) {
		/* Events are missing: the trace must not claim to be complete. */
		rec_fail("%d thread(s) stayed inside the recorder while %s was closed; their last events are "
			 "missing and the trace is left without a footer", busy, trace_path);
		footer = 0;
	}
	ar_error_t err;
	if (footer && m.nrecords && fd_still_ours()) {
		int rc = ar_writer_write_meta(writer, &m, &err);
		if (rc != 0) {
			write_error(rc, &err);
			footer = 0;
		}
	}
	ar_writer_note_dropped(writer, dropped);
	if (footer && !fd_still_ours())
		footer = 0;
	int rc = ar_writer_close(writer, rec_time_ns(), footer, &err);
	if (rc != 0 && footer)
		write_error(rc, &err);
	writer = NULL;
	close(trace_fd);
	trace_fd = -1;
out:
	atomic_store(&rec_state, REC_STOPPED);
	atomic_store(&closed, 1);
}

/* ---- the writer thread ---------------------------------------------------------------- */
static void *writer_main(void *arg)
{
	(void)arg;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_tls.is_writer = 1;
	prctl(PR_SET_NAME, "allocrr-writer", 0, 0, 0);
	uint64_t tick = rec_cfg.flush_ns / 2;
	uint64_t last_scan = rec_time_ns();
	for (;;) {
		atomic_store(&writer_waiting, 1);
		uint32_t seen = atomic_load(&wake_word);
		if (!atomic_load(&queue) && !atomic_load(&close_req)) {
			struct timespec ts = {(time_t)(tick / 1000000000u), (long)(tick % 1000000000u)};
			syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
		}
		atomic_store(&writer_waiting, 0);
		while (!try_lock())
			sleep_ns(100000);
		if (atomic_load(&close_req)) {
			do_close();
			unlock();
			break;
		}
		drain_queue();
		uint64_t now = rec_time_ns();
		if (now - last_scan >= tick) {
			rec_clock_refit();
			steal_all(rec_cfg.flush_ns);
			last_scan = now;
		}
		unlock();
		if (atomic_load(&rec_state) == REC_STOPPED)
			break; /* a write failed: nothing more to do */
	}
	atomic_store(&rec_writer_running, 0);
	syscall(SYS_futex, &closed, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
	return NULL;
}

int rec_writer_start(void)
{
	if (atomic_load(&rec_writer_running))
		return 0;
	if (atomic_exchange(&writer_starting, 1))
		return atomic_load(&rec_writer_running) ? 0 : -1;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL; /* pthread_create allocates for us */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_t th;
	atomic_store(&rec_writer_running, 1);
	int rc = pthread_create(&th, &attr, writer_main, NULL);
	if (rc != 0)
		atomic_store(&rec_writer_running, 0);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	rec_tls.in_shim = saved;
	atomic_store(&writer_starting, 0);
	return rc == 0 ? 0 : -1;
}

static void wake_writer(void)
{
	atomic_fetch_add(&wake_word, 1);
	if (atomic_load(&writer_waiting))
		syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void rec_writer_submit(rec_buf_t *b)
{
	rec_buf_t *head = atomic_load_explicit(&queue, memory_order_relaxed);
	do
		b->next = head;
	while (!atomic_compare_exchange_weak_explicit(&queue, &head, b, memory_order_release,
						      memory_order_relaxed));
	if (REC_UNLIKELY(!atomic_load(&rec_writer_running))) {
		if (rec_getpid() != rec_pid)
			return; /* a raw clone/vfork child: not ours to write */
		if (rec_writer_start() != 0 && try_lock()) {
			xfsz_guard_t g;
			xfsz_block(&g);
			drain_queue(); /* no thread: write it ourselves */
			xfsz_restore(&g);
			unlock();
		}
		return;
	}
	wake_writer();
}

void rec_writer_add_thread(rec_thread_t *t)
{
	rec_thread_t *head = atomic_load_explicit(&new_threads, memory_order_relaxed);
	do
		t->all_next = head;
	while (!atomic_compare_exchange_weak_explicit(&new_threads, &head, t, memory_order_release,
						      memory_order_relaxed));
}

void rec_writer_wait_returned(rec_thread_t *t)
{
	for (long ns = 20000; !atomic_load(&t->returned); ns = ns < 1000000 ? ns * 2 : ns) {
		if (atomic_load(&rec_state) != REC_ON)
			return;
		if (!atomic_load(&rec_writer_running) && rec_writer_start() != 0 && try_lock()) {
			xfsz_guard_t g;
			xfsz_block(&g);
			drain_queue();
			xfsz_restore(&g);
			unlock();
			continue;
		}
		wake_writer();
		sleep_ns(ns);
	}
}

void rec_writer_finish(const char *why, int timeout_ms)
{
	(void)why;
	/* A vfork child shares our memory: it must not touch the state at all. */
	if (rec_getpid() != rec_pid)
		return;
	int expect = REC_ON;
	if (!atomic_compare_exchange_strong(&rec_state, &expect, REC_CLOSING)) {
		if (expect == REC_CLOSING) /* someone else is closing: let them finish */
			for (int i = 0; i < timeout_ms && !atomic_load(&closed); i++)
				sleep_ns(1000000);
		return;
	}
	/* Our own buffer first: we are its owner and not inside a call unless
	 * a signal interrupted the shim, in which case it is skipped. */
	rec_thread_t *t = rec_tls.t;
	if (t && t->gen == rec_generation && atomic_load(&t->in_call))
		closer_busy = t; /* a signal stopped us inside rec_record: no wait for it */
	if (t && !atomic_load(&t->in_call)) {
		rec_buf_t *b = atomic_exchange(&t->cur, NULL);
		atomic_store(&t->first_ns, 0);
		if (b) {
			rec_buf_t *head = atomic_load(&queue);
			do
				b->next = head;
			while (!atomic_compare_exchange_weak(&queue, &head, b));
		}
	}
	if (atomic_load(&rec_writer_running) && !rec_tls.is_writer) {
		atomic_store(&close_req, 1);
		wake_writer();
		for (int i = 0; i < timeout_ms * 10 && !atomic_load(&closed); i++)
			sleep_ns(100000);
		return;
	}
	for (int i = 0; i < timeout_ms; i++) {
		if (try_lock()) {
			xfsz_guard_t g;
			xfsz_block(&g);
			if (!atomic_load(&closed))
				do_close();
			xfsz_restore(&g);
			unlock();
			return;
		}
		sleep_ns(1000000);
	}
}

int rec_writer_init(int lazy_open)
{
	rec_threads_init();
	header_fill();
	if (lazy_open)
		return 0;
	xfsz_guard_t g;
	xfsz_block(&g);
	int rc = open_trace();
	xfsz_restore(&g);
	return rc;
}

void rec_writer_reset_child(void)
{
	/* The parent's queue, writer and thread list stay in the parent. */
	if (trace_fd >= 0)
		close(trace_fd);
	trace_fd = -1;
	writer = NULL;
	open_failed = 0;
	atomic_store(&wlock, 0);
	atomic_store(&queue, NULL);
	atomic_store(&new_threads, NULL);
	threads = NULL;
	gone = NULL;
	closer_busy = NULL;
	atomic_store(&writer_waiting, 0);
	atomic_store(&close_req, 0);
	atomic_store(&closed, 0);
	atomic_store(&rec_writer_running, 0);
	atomic_store(&writer_starting, 0);
	atomic_store(&rec_dropped_global, 0);
	atomic_store(&rec_seq_counter, 0);
	rec_cfg.output[0] = 0; /* -o names the first process only */
	rec_pid = rec_getpid();
	uint64_t old_start = rec_start_mono_ns;
	rec_start_mono_ns = rec_mono_ns();
	rec_clock_rebase(old_start);
	rec_threads_reset();
	header_fill();
}
