/*
 * rec_window.c — recording windows: traces that do not start with the
 * process (SPEC 6.11). A window begins on command (allocrec --start PID on
 * a program run with --paused, through rec_control.c), on attach
 * (rec_attach.c) or when --rotate cuts the recording into segments
 * (rec_writer.c); it ends on command, on detach, at the end of a window's
 * --duration or --max-size, or when the image ends.
 *
 * What a window knows that a whole-program trace does not need: the
 * WINDOW record (its number in the process, why it began, how long the
 * process had run, the allocator's own count of bytes in use at that
 * moment when the allocator can tell) and old_size on every free and
 * realloc (the hooks measure it, rec_hooks.c), so that the blocks it frees
 * but never saw allocated can be replayed. What it does not know: the
 * blocks live at its start that it never touches (only their total, when
 * the allocator says it), and where any block came from.
 *
 * Invariants: begin and end are serialised (window_lock) and run with
 * in_shim set to REC_SHIM_INTERNAL; the allocator statistics calls (which
 * may lock or allocate) run only there or on the writer thread during a
 * rotation, never in a signal handler; a window opens only from
 * REC_PAUSED, so a whole-program trace is never cut by a command.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec_ctl_dir.h"
#include "rec_internal.h"
#include "registry_int.h"

int rec_window_trace;
_Atomic int rec_switching;

static _Atomic int window_lock;
static unsigned file_no;       /* traces this image opened so far */
static unsigned file_base;     /* file_no when the output name was last given anew */
static unsigned windows;       /* windows of this image so far */
static ar_window_info_t info;  /* the WINDOW record of the trace being opened */
static int info_valid;
static char last_path[1100];

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int lock_window(int timeout_ms)
{
	for (int i = 0; i < timeout_ms; i++) {
		int z = 0;
		if (atomic_compare_exchange_strong(&window_lock, &z, 1))
			return 1;
		sleep_ms(1);
	}
	return 0;
}

static void unlock_window(void)
{
	atomic_store(&window_lock, 0);
}

/* ---- what the process can tell at the start --------------------------------------------- */
/* How long the process had run: now less its start (field 22 of
 * /proc/self/stat, in clock ticks since boot, against CLOCK_BOOTTIME). */
static uint64_t process_age_ns(void)
{
	uint64_t ticks = rec_ctl_start_ticks(rec_getpid());
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;
	if (!ticks || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	uint64_t start = ticks * (1000000000u / (uint64_t)hz);
	return now > start ? now - start : 0;
}

/* The statistics functions of the allocator serving malloc, looked up
 * once per process (the object serving malloc does not change) and only
 * in that object, without a failing dlsym (registry_probe.c). */
static int stats_looked_up;
static void *fn_mallctl, *fn_tc_get, *fn_mallinfo2;

static void look_up_stats(void)
{
	if (stats_looked_up || !rec_real.malloc)
		return;
	const void *m = (const void *)rec_real.malloc;
	rec_fd_section_begin(); /* each lookup opens and maps the object's file (rec_fds.c) */
	fn_mallctl = ar_reg_malloc_symbol(m, "mallctl");
	fn_tc_get = ar_reg_malloc_symbol(m, "MallocExtension_GetNumericProperty");
	/* glibc's mallinfo2 counts glibc's heap only: asked only when glibc
	 * serves malloc (mallinfo2 lives in the same object as malloc). */
	fn_mallinfo2 = ar_reg_malloc_symbol(m, "mallinfo2");
	rec_fd_section_end();
	stats_looked_up = 1;
}

uint64_t rec_window_heap_in_use(char *source, size_t cap)
{
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL; /* they may lock and allocate: not the program's calls */
	look_up_stats();
	uint64_t v = 0;
	source[0] = 0;
	if (fn_mallctl) {
		int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
			(int (*)(const char *, void *, size_t *, void *, size_t))fn_mallctl;
		uint64_t epoch = 1;
		size_t allocated = 0, len = sizeof epoch;
		mallctl("epoch", &epoch, &len, &epoch, sizeof epoch); /* refresh the statistics */
		len = sizeof allocated;
		if (mallctl("stats.allocated", &allocated, &len, NULL, 0) == 0 && allocated) {
			v = allocated;
			rec_strlcpy(source, "jemalloc stats.allocated", cap);
		}
	} else if (fn_tc_get) {
		int (*get)(const char *, size_t *) = (int (*)(const char *, size_t *))fn_tc_get;
		size_t bytes = 0;
		if (get("generic.current_allocated_bytes", &bytes) && bytes) {
			v = bytes;
			rec_strlcpy(source, "tcmalloc generic.current_allocated_bytes", cap);
		}
	} else if (fn_mallinfo2) {
		struct mallinfo2 (*mi2)(void) = (struct mallinfo2 (*)(void))fn_mallinfo2;
		struct mallinfo2 m = mi2();
		v = (uint64_t)m.uordblks + (uint64_t)m.hblkhd;
		if (v)
			rec_strlcpy(source, "glibc mallinfo2", cap);
	}
	/* mimalloc: mi_process_info counts committed pages, not bytes in
	 * use, and nothing cheaper says it: no figure (0, "") rather than a
	 * guess. */
	rec_tls.in_shim = saved;
	return v;
}

/* ---- numbering ---------------------------------------------------------------------------- */
unsigned rec_window_file_number(void)
{
	return file_no - file_base + 1;
}

void rec_window_new_output(void)
{
	file_base = file_no;
}

const ar_window_info_t *rec_window_info(void)
{
	return info_valid ? &info : NULL;
}

void rec_window_reset_child(void)
{
	file_no = 0;
	file_base = 0;
	windows = 0;
	info_valid = 0;
	rec_window_trace = 0;
	last_path[0] = 0;
	atomic_store(&window_lock, 0);
	atomic_store(&rec_switching, 0);
}

/* The next trace of this image is a window for reason (0: the image's
 * first, whole-program trace): its number and WINDOW record (wlock holder
 * or the window lock's holder, nothing recording). */
void rec_window_prepare(int reason)
{
	info_valid = reason != 0;
	rec_window_trace = reason != 0;
	if (!reason)
		return;
	memset(&info, 0, sizeof info);
	info.index = ++windows;
	info.reason = (uint32_t)reason;
	info.start_time_ns = 0;
	info.process_start_ns = process_age_ns();
	info.heap_in_use_bytes = rec_window_heap_in_use(info.heap_source, sizeof info.heap_source);
}

void rec_window_opened(const char *path)
{
	file_no++;
	rec_strlcpy(last_path, path, sizeof last_path);
}

void rec_window_last_path(char *out, size_t cap)
{
	rec_strlcpy(out, last_path, cap);
}

/* ---- begin and end ------------------------------------------------------------------------ */
int rec_window_begin(int reason)
{
	if (!lock_window(10000))
		return -1;
	int saved = rec_tls.in_shim, rc = -1;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	/* The last window's writer thread may still be on its way out. */
	for (int i = 0; i < 10000 && atomic_load(&rec_writer_running); i++)
		sleep_ms(1);
	if (atomic_load(&rec_state) == REC_PAUSED && !atomic_load(&rec_writer_running) &&
	    rec_writer_lock(2000)) {
		rec_window_prepare(reason);
		rc = rec_writer_new_trace(1);
		rec_writer_unlock();
		if (rc == 0) {
			atomic_store(&rec_state, REC_ON);
			rec_writer_start();
		} else {
			rec_window_trace = 0;
			atomic_store(&rec_state, REC_PAUSED);
		}
	}
	rec_tls.in_shim = saved;
	unlock_window();
	return rc;
}

int rec_window_end(int stop_reason)
{
	if (!lock_window(10000))
		return -1;
	int saved = rec_tls.in_shim, rc = -1;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	if (atomic_load(&rec_state) == REC_ON) {
		rec_writer_set_stop_reason(stop_reason);
		rec_writer_finish("window", 10000);
		rc = 0;
	}
	for (int i = 0; i < 10000 && atomic_load(&rec_writer_running); i++)
		sleep_ms(1);
	rec_window_trace = 0;
	if (atomic_load(&rec_state) != REC_ON && (rc == 0 || rec_windowed()))
		atomic_store(&rec_state, REC_PAUSED);
	rec_tls.in_shim = saved;
	unlock_window();
	return rc;
}

void rec_switch_wait(int timeout_ms)
{
	for (int i = 0; i < timeout_ms && atomic_load(&rec_switching); i++)
		sleep_ms(1);
}
