/*
 * rec_tracefile.c — the trace file of this process image: its header, its
 * name (ALLOCRR_OUTPUT with %p, or ALLOCRR_DIR/PROG.PID[.i].zst), opening it
 * and listing it in the manifest, writing buffers into it and closing it
 * with a footer; and the shim's warnings (rec_warn, rec_fail).
 *
 * Invariants:
 *   - Only the holder of the writer lock (rec_writer.c) calls in here, so
 *     ar_writer_* is never called by two threads at once; rec_warn and
 *     rec_fail may be called by anyone.
 *   - A file appears under its name only with its header (SPEC 7.2); an
 *     existing trace is never overwritten without -o; the fd is kept high
 *     and checked before every write (never someone else's file).
 *   - Any write error stops recording for good after one warning; the trace
 *     then ends without a footer (readers report it truncated). Our writes
 *     never let SIGXFSZ reach the program (rec_xfsz_block).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ar_readfile.h"
#include "rec_internal.h"

static ar_header_t hdr;
static char trace_path[1100];
static int trace_fd = -1;
static dev_t trace_dev;
static ino_t trace_ino;
static ar_writer_t *writer;
static int open_failed;
/* A bounded recording's writer after its stop (footer written, file still
 * open): the footer is rewritten with the calls made after the stop when
 * the image ends (rec_trace_finish_stopped). */
static ar_writer_t *kept;

/* ---- warnings, SIGXFSZ and SIGPIPE ---------------------------------------------------- */
/* Writes made on a program thread (the header at start-up; all writes when
 * there is no writer thread) must not let RLIMIT_FSIZE kill the program:
 * the kernel sends SIGXFSZ (default action: die) to the thread whose write
 * crosses the limit, then fails the write with EFBIG. Nor may a stream
 * whose reader went away (allocrec -o - PROG | head -c 10): the write
 * raises SIGPIPE on the thread, then fails with EPIPE. The writer thread
 * blocks every signal; elsewhere we block both around our writes and
 * discard the one we caused, so the program sees neither, only the
 * warning. */
static void guard_set(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGXFSZ);
	sigaddset(s, SIGPIPE);
}

void rec_xfsz_block(rec_xfsz_guard_t *g)
{
	g->active = !rec_tls.is_writer;
	if (!g->active)
		return;
	sigset_t s, p;
	guard_set(&s);
	pthread_sigmask(SIG_BLOCK, &s, &g->old);
	g->pending_before = 0;
	if (sigpending(&p) == 0)
		g->pending_before = sigismember(&p, SIGXFSZ) | sigismember(&p, SIGPIPE) << 1;
}

void rec_xfsz_restore(rec_xfsz_guard_t *g)
{
	if (!g->active)
		return;
	int saved = errno;
	sigset_t s, p, one;
	guard_set(&s);
	int sigs[2] = {SIGXFSZ, SIGPIPE};
	for (int i = 0; i < 2; i++) {
		if (!(g->pending_before & 1 << i) && sigpending(&p) == 0 && sigismember(&p, sigs[i])) {
			struct timespec zero = {0, 0};
			sigemptyset(&one);
			sigaddset(&one, sigs[i]);
			sigtimedwait(&one, NULL, &zero);
		}
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = saved;
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
	rec_xfsz_guard_t g; /* stderr may be a file at its RLIMIT_FSIZE too */
	rec_xfsz_block(&g);
	ssize_t w = write(2, msg, (size_t)n);
	(void)w;
	rec_xfsz_restore(&g);
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
	ssize_t got = rec_read_small_file("/proc/self/cmdline", out, cap);
	size_t n = got > 0 ? (size_t)got : 0;
	while (n > 0 && out[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (out[i] == 0)
			out[i] = ' ';
	out[n] = 0;
}

void rec_trace_header_fill(void)
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
	hdr.time_unit_ns = rec_cfg.time_unit_ns;
	if (rec_cfg.stack_depth)
		hdr.flags |= AR_HDR_STACKS;
	if (rec_window_info())
		hdr.flags |= AR_HDR_WINDOW; /* SPEC 6.11 */
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

static void manifest_add(const char *path)
{
	if (!rec_cfg.manifest[0])
		return;
	int fd = rec_open_high(rec_cfg.manifest, O_WRONLY | O_APPEND, 0);
	if (fd < 0)
		return;
	char line[1200];
	int n = snprintf(line, sizeof line, "%s\n", path);
	ssize_t w = write(fd, line, (size_t)n); /* O_APPEND: one atomic line */
	(void)w;
	close(fd);
}

/* The image's n-th trace (n > 1: a later window or rotation segment)
 * gets ".wN" before a final ".zst" of path, or at its end. */
static void add_file_number(char *path, size_t cap, unsigned n)
{
	if (n <= 1)
		return;
	size_t len = strlen(path);
	char tail[8] = "";
	if (len >= 4 && strcmp(path + len - 4, ".zst") == 0) {
		rec_strlcpy(tail, ".zst", sizeof tail);
		len -= 4;
	}
	snprintf(path + len, cap - len, ".w%u%s", n, tail);
}

/* trace_path for attempt i (i > 0 only without -o: PROG.PID.i.zst, or
 * PROG.PID.wN.i.zst). */
static void name_trace(int i)
{
	unsigned n = rec_window_file_number();
	char wn[16] = "";
	if (n > 1)
		snprintf(wn, sizeof wn, ".w%u", n);
	if (rec_cfg.output[0]) {
		expand(trace_path, sizeof trace_path, rec_cfg.output);
		add_file_number(trace_path, sizeof trace_path, n);
	} else if (i == 0) {
		snprintf(trace_path, sizeof trace_path, "%s/%s.%d%s.zst", rec_cfg.dir, rec_prog_name(), (int)rec_pid, wn);
	} else {
		snprintf(trace_path, sizeof trace_path, "%s/%s.%d%s.%d.zst", rec_cfg.dir, rec_prog_name(),
			 (int)rec_pid, wn, i);
	}
}

/* SPEC 6.11: a window trace's first record after the header. */
static int write_window_record(void)
{
	const ar_window_info_t *w = rec_window_info();
	if (!w)
		return 0;
	uint8_t data[512];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, data, sizeof data);
	ar_error_t err;
	int rc = ar_meta_window(&m, w);
	if (rc == 0)
		rc = ar_writer_write_meta(writer, &m, &err);
	if (rc != 0)
		rec_fail("cannot write the WINDOW record of %s: %s", trace_path, ar_strerror(rc));
	return rc;
}

/* rec_fds.c moved the trace out of a program's dup2 (writer lock held). */
static void trace_fd_moved(int fd)
{
	if (writer)
		ar_writer_set_fd(writer, fd);
	if (kept)
		ar_writer_set_fd(kept, fd);
}

/* No number is left to move the trace to: end it here, complete. */
static void trace_fd_lost(void)
{
	rec_warn("no descriptor is left for the trace file %s (the program took every one up to its "
		 "RLIMIT_NOFILE): the trace ends here with its footer; later heap calls are not recorded",
		 trace_path);
	rec_writer_finish("descriptors", 2000);
}

static void note_ours(int fd)
{
	rec_fd_own(&trace_fd, trace_fd_moved, trace_fd_lost);
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
	if (rec_cfg.output[0] && lstat(trace_path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* Never through a link: its target may be anyone's file (a
		 * link planted in /tmp), and replacing the link silently is
		 * not what -o asked either. allocrec refuses it before the
		 * program starts; this is for a link made since. */
		open_failed = 1;
		rec_fail("cannot create trace %s: it is a symbolic link, and the recorder does not write through "
			 "links (name the file itself, or remove the link)", trace_path);
		return -1;
	}
	if (rec_cfg.output[0] && lstat(trace_path, &st) == 0 && !S_ISREG(st.st_mode))
		return 1;
	int fd = rec_open_high(dir, O_TMPFILE | O_WRONLY, 0600);
	if (fd < 0)
		return 1;
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

/* ---- streams (allocrec -o -, -o FIFO) ------------------------------------------------ */
#define STREAM_PIPE_BYTES (1 << 20)
int rec_streaming;
static int is_stream;         /* this trace came through open_stream */
static ar_footer_t stream_totals; /* what allocrec's summary says of it */
static uint64_t stream_bytes;
static int stream_complete;

/* A trace that goes to a pipe, a FIFO or a socket has no name to give
 * and nothing to seek back to. allocrec hands the descriptor over already
 * open (ALLOCRR_STREAM_FD: opening a FIFO a second time would show its
 * reader an EOF in between); an ALLOCRR_OUTPUT that names a FIFO is opened
 * here without blocking, so a FIFO nobody reads fails at once rather than
 * hanging the program's start-up. The descriptor is made blocking: after
 * the header only the writer thread writes to it, and the program's
 * threads never wait for a full pipe (rec_streaming). Returns 0 when open,
 * -1 after rec_fail, 1 when this trace is no stream. */
static int open_stream(void)
{
	int fd = rec_cfg.stream_fd, inherited = fd >= 0;
	rec_cfg.stream_fd = -1; /* the first trace of this image only */
	struct stat st;
	name_trace(0);
	if (fd < 0) {
		if (!rec_cfg.output[0] || lstat(trace_path, &st) != 0 || !S_ISFIFO(st.st_mode))
			return 1;
		fd = rec_open_high(trace_path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW, 0);
		if (fd < 0) {
			open_failed = 1;
			rec_fail("cannot open the FIFO %s for the trace: %s", trace_path,
				 errno == ENXIO ? "no process reads it (start its reader first)" : strerror(errno));
			return -1;
		}
	} else if (!rec_cfg.output[0] || strcmp(rec_cfg.output, "-") == 0) {
		rec_strlcpy(trace_path, "(standard output)", sizeof trace_path);
	}
	if (fstat(fd, &st) != 0) {
		open_failed = 1;
		rec_fail("cannot write the trace to descriptor %d (ALLOCRR_STREAM_FD): %s", fd, strerror(errno));
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	rec_streaming = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
	is_stream = 1;
	/* A bigger pipe (64 KiB by default; 1 MiB is what an unprivileged
	 * process may ask, fs/pipe-max-size) rides out a reader that is only
	 * briefly off the CPU without a drop; no harm if refused. */
	if (S_ISFIFO(st.st_mode))
		fcntl(fd, F_SETPIPE_SZ, STREAM_PIPE_BYTES);
	if (inherited) /* a FIFO's came from rec_open_high, high already */
		fd = rec_move_fd_high(fd); /* close-on-exec from here: exec'ed images write files */
	note_ours(fd);
	ar_error_t err;
	int rc = ar_writer_open(&writer, fd, &hdr, rec_cfg.level, &rec_writer_mem, &err);
	if (rc != 0)
		return header_failed(fd, &err, rc);
	trace_fd = fd;
	return 0;
}

int rec_trace_open(void)
{
	if (writer)
		return 0;
	if (open_failed)
		return -1;
	int rc = rec_cfg.stream_fd >= 0 || rec_cfg.output[0] ? open_stream() : 1;
	if (rc <= 0)
		return rc;
	rc = open_unnamed_first();
	if (rc <= 0) {
		if (rc == 0) {
			manifest_add(trace_path);
			rec_window_opened(trace_path);
			return write_window_record() == 0 ? 0 : -1;
		}
		return rc;
	}
	int fd = -1;
	if (rec_cfg.output[0]) {
		name_trace(0);
		fd = rec_open_high(trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
		struct stat st; /* an existing regular file keeps its mode through O_TRUNC */
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) != 0600)
			fchmod(fd, 0600);
	} else {
		/* A re-exec of the same program keeps its pid: never overwrite. */
		for (int i = 0; i < 100; i++) {
			name_trace(i);
			fd = rec_open_high(trace_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (fd < 0) {
		open_failed = 1;
		rec_fail("cannot create trace %s: %s", trace_path,
			 errno == ELOOP ? "it is a symbolic link, and the recorder does not write through links"
					: strerror(errno));
		return -1;
	}
	note_ours(fd); /* rec_open_high put it high already */
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
	rec_window_opened(trace_path);
	return write_window_record() == 0 ? 0 : -1;
}

/* The program may have closed our fd and reused the number: never write
 * into someone else's file. */
static int fd_still_ours(void)
{
	struct stat st;
	return fstat(trace_fd, &st) == 0 && st.st_dev == trace_dev && st.st_ino == trace_ino;
}

/* The close, close_range, closefrom and dup2 the program can call are
 * interposed (rec_fds.c): what is left is a raw system call. */
static void closed_under_us(void)
{
	rec_fail("the program closed the trace file %s behind the recorder's back (a raw close system call); "
		 "the events so far are kept, the trace reads as truncated", trace_path);
}

static void write_error(int rc, const ar_error_t *err)
{
	rec_fail("cannot write trace %s: %s", trace_path,
		 err->sys_errno ? strerror(err->sys_errno) : (err->msg[0] ? err->msg : ar_strerror(rc)));
}

/* ---- writing and closing (wlock held) ------------------------------------------------ */
int rec_trace_is_open(void)
{
	return writer != NULL;
}

uint64_t rec_trace_bytes(void)
{
	return writer ? ar_writer_bytes(writer) : 0;
}

const char *rec_trace_path(void)
{
	return trace_path;
}

void rec_trace_write(const rec_buf_t *b)
{
	if (!writer && atomic_load(&rec_state) != REC_STOPPED)
		rec_trace_open();
	if (writer && atomic_load(&rec_state) != REC_STOPPED) {
		ar_error_t err;
		int rc = 0;
		rec_process_write_start(); /* the file's first block, SPEC 6.8 */
		if (!fd_still_ours()) {
			closed_under_us();
		} else {
			if (b->mb.len)
				rc = ar_writer_write_meta(writer, &b->mb, &err);
			if (rc == 0 && b->eb.nevents)
				rc = ar_writer_write_events(writer, &b->eb, &err);
			if (rc != 0)
				write_error(rc, &err);
		}
	}
}

void rec_trace_write_meta(const ar_metabuf_t *m)
{
	if (!writer || atomic_load(&rec_state) == REC_STOPPED || !m->nrecords)
		return;
	if (!fd_still_ours()) {
		closed_under_us();
		return;
	}
	ar_error_t err;
	int rc = ar_writer_write_meta(writer, m, &err);
	if (rc != 0)
		write_error(rc, &err);
}

/* A full stream stays full for a while: the verdict is kept 1 ms, so a
 * thread dropping every call does not make a poll() for each. */
static _Atomic uint64_t full_until;
int rec_trace_stream_full(void)
{
	uint64_t now = rec_mono_ns();
	if (now < atomic_load_explicit(&full_until, memory_order_relaxed))
		return 1;
	struct pollfd p = {.fd = trace_fd, .events = POLLOUT};
	int full = trace_fd < 0 || poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT) || (p.revents & (POLLERR | POLLHUP));
	if (full)
		atomic_store_explicit(&full_until, now + 1000000u, memory_order_relaxed);
	return full;
}

/* allocrec's summary of a stream, which it cannot read back: one line
 * "events E threads T bytes B dropped D complete C after_stop A stop S"
 * into ALLOCRR_STREAM_STATS, rewritten when the count after a stop is
 * known. */
static void stream_stats(uint64_t after_stop)
{
	if (!rec_cfg.stream_stats[0])
		return;
	int fd = rec_open_high(rec_cfg.stream_stats, O_WRONLY | O_TRUNC | O_NOFOLLOW, 0);
	if (fd < 0)
		return;
	const ar_footer_t *f = &stream_totals;
	char line[400];
	int n = snprintf(line, sizeof line, "events %llu threads %llu bytes %llu dropped %llu complete %d after_stop %llu stop %d\n",
			 (unsigned long long)f->events, (unsigned long long)f->threads,
			 (unsigned long long)stream_bytes, (unsigned long long)f->dropped_events, stream_complete,
			 (unsigned long long)after_stop, atomic_load(&rec_limit_stop));
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	close(fd);
}

/* Close a stream: the footer at its end, never rewritten (SPEC 6.7: after
 * a limit stop it says 0 calls after the stop; allocrec's summary gives
 * the count). Closing at a limit stop ends the reader's input there
 * (| zstd, | ssh finish) while the program runs on. */
static void stream_end(int footer, int why)
{
	ar_error_t err;
	if (footer && why)
		ar_writer_note_stop(writer, (unsigned)why, 0);
	if (footer) {
		int rc = ar_writer_write_footer(writer, rec_time_ns(), &err);
		if (rc != 0) {
			write_error(rc, &err);
			footer = 0;
		}
	}
	ar_writer_totals(writer, &stream_totals);
	stream_bytes = ar_writer_bytes(writer);
	stream_complete = footer;
	ar_writer_close(writer, 0, 0, &err);
	writer = NULL;
	close(trace_fd);
	trace_fd = -1;
	stream_stats(0);
}

void rec_trace_close(ar_metabuf_t *m, uint64_t dropped, int busy)
{
	if (!writer && m->nrecords == 0 && !rec_cfg.output[0])
		return; /* a fork child that recorded nothing: no file */
	if (!writer && rec_trace_open() != 0)
		return;
	if (atomic_load(&rec_state) != REC_STOPPED)
		rec_process_close();
	int footer = atomic_load(&rec_state) != REC_STOPPED;
	if (busy && footer) {
		/* Events are missing: the trace must not claim to be complete. */
		rec_fail("%d thread(s) stayed inside the recorder while %s was closed; their last events are "
			 "missing and the trace is left without a footer", busy, trace_path);
		footer = 0;
	}
	ar_error_t err;
	if (footer && m->nrecords && fd_still_ours()) {
		int rc = ar_writer_write_meta(writer, m, &err);
		if (rc != 0) {
			write_error(rc, &err);
			footer = 0;
		}
	}
	ar_writer_note_dropped(writer, dropped);
	if (footer && !fd_still_ours())
		footer = 0;
	int why = atomic_load(&rec_limit_stop);
	if (is_stream) {
		stream_end(footer, why);
		return;
	}
	if (footer && why && rec_windowed()) {
		/* A window's own limit: that window ends, the next may come. */
		ar_writer_note_stop(writer, (unsigned)why, 0);
	} else if (footer && why) {
		/* A limit stop: complete now, the count of later calls to come. */
		ar_writer_note_stop(writer, (unsigned)why, 0);
		int rc = ar_writer_write_footer(writer, rec_time_ns(), &err);
		if (rc == 0) {
			kept = writer;
			writer = NULL;
			return;
		}
		write_error(rc, &err);
		footer = 0;
	}
	int stop = rec_writer_stop_reason();
	if (footer && !why && stop) /* SPEC 6.7: the program goes on past this trace */
		ar_writer_note_stop(writer, (unsigned)stop, 0);
	int rc = ar_writer_close(writer, rec_time_ns(), footer, &err);
	if (rc != 0 && footer)
		write_error(rc, &err);
	writer = NULL;
	close(trace_fd);
	trace_fd = -1;
}

void rec_trace_finish_stopped(uint64_t after_stop)
{
	if (is_stream && !writer)
		stream_stats(after_stop); /* the stream ended at the stop */
	if (!kept)
		return;
	ar_error_t err;
	if (fd_still_ours()) {
		ar_writer_note_stop(kept, (unsigned)atomic_load(&rec_limit_stop), after_stop);
		if (ar_writer_rewrite_footer(kept, &err) != 0)
			rec_warn("cannot store the count of calls after the stop in %s (%s): its footer says 0",
				 trace_path, err.sys_errno ? strerror(err.sys_errno) : err.msg);
	}
	ar_writer_close(kept, 0, 0, &err);
	kept = NULL;
	close(trace_fd);
	trace_fd = -1;
}

void rec_trace_forget(void)
{
	kept = NULL; /* the parent's, whose footer is the parent's to rewrite */
	if (trace_fd >= 0)
		close(trace_fd);
	trace_fd = -1;
	writer = NULL;
	open_failed = 0;
	is_stream = 0; /* the child writes a file of its own */
	rec_streaming = 0;
}

void rec_trace_forget_closed(void)
{
	/* The last trace was closed (rec_trace_close): a new one may open,
	 * also after that one failed. */
	writer = NULL;
	open_failed = 0;
	trace_path[0] = 0;
}
