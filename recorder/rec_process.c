/*
 * rec_process.c — what the trace says about the process itself (SPEC
 * 6.8-6.10): which allocator served its malloc, its resident set size at
 * start, every 10 ms while it runs, and its peak at the end. Replay is
 * judged against these figures and predicts them.
 *
 * The start RSS is read at start-up on the program's thread (one pread, no
 * allocation); everything else happens on the writer thread or whoever holds
 * the writer lock: proving the allocator (the loader, realpath, the
 * allocator's version function) waits until then, when the program's own
 * start-up is over. The first block written after the trace is opened
 * carries the ALLOCATOR record and the start sample.
 *
 * The recorder's own memory at the peak (SPEC 6.10), which a prediction
 * takes out of the peak, is what only the recorder made resident: the
 * pages of its mappings (rec_mem.c: buffers, the compressor's workspace)
 * and of the libraries only it loaded (rec_ownlibs.c: the shim, libzstd,
 * libunwind, liblzma, unless the program needs them itself), as of when
 * VmHWM reached the peak (saw_hwm). On a program of a few MB those
 * libraries are a tenth of its peak or more, and the compressor's first
 * full block half a MB more, which may come after the program's peak
 * (docs/FIDELITY.md, "nginx's workers").
 *
 * Invariants: only the writer lock's holder touches the sample buffer and
 * the identity; /proc/self/statm, pagemap and status are opened once
 * per process image (again in a fork child: the parent's fds name the
 * parent) and moved high like the trace's fd, and every read first checks
 * the fd still is that file, so a program that closes and reuses the
 * number never has its file read; a failed read ends sampling quietly (a
 * trace without samples is legal, SPEC 6.9), and a pagemap that cannot be
 * read leaves the libraries uncounted, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_readfile.h"
#include "rec_cost.h"
#include "rec_internal.h"
#include "rec_ownlibs.h"
#include "registry_int.h"

/* SPEC 6.9: the sampling period, doubled after every THIN_EVERY samples so
 * that a recording of any length stays far below the readers' limit. */
#define SAMPLE_NS 10000000u
#define THIN_EVERY 65536u
/* Samples wait in their own buffer and go out as one metadata block every
 * second (about 500 bytes of trace a second, measured): a SIGKILL loses at
 * most that second of them. */
#define FLUSH_NS 1000000000u

/* A /proc/self file kept open for this process image. */
typedef struct proc_fd {
	int fd;
	dev_t dev;
	ino_t ino;
} proc_fd_t;
static proc_fd_t statm = {-1, 0, 0}, pagemap = {-1, 0, 0}, status = {-1, 0, 0};
static uint64_t page_size;

static ar_rss_sample_t start_sample; /* read at start-up; seq 0 */
static int identity_done, start_written;
static ar_reg_identity_t ident;

static uint8_t sbuf[16 * 1024];
static ar_metabuf_t samples;
static uint64_t flushed_ns, next_ns, interval_ns, nsamples;
/* The highest RSS sampled and how much of it was the recorder's own; the
 * highest VmHWM seen, and the best lower bound of the program's own peak
 * from the looks at it (rec_process_observe) with the VmHWM and the
 * recorder's memory, in parts, that gave it (ALLOCRR_MEM_REPORT). */
#define REPORT_LIBS 16
typedef struct recorder_mem {
	uint64_t total, maps;
	size_t nlibs;
	const char *lib[REPORT_LIBS];
	uint64_t lib_bytes[REPORT_LIBS];
} recorder_mem_t;
static uint64_t max_rss, hwm_seen, program_peak;
static recorder_mem_t recorder_at_max, recorder_at_best;
/* The process's CPU times and its writers' when this trace began: a
 * window's trace holds only what came after (SPEC 6.10). */
static uint64_t cpu_user_start, cpu_sys_start, writer_cpu_start;
/* VmHWM when this trace began: a window's peak is VmHWM at close only if
 * the mark rose during the window (SPEC 6.10). */
static uint64_t hwm_start;
/* The whole machine's busy CPU time when this trace began (SPEC 6.10):
 * how much other work ran beside the program says how far its CPU time,
 * which predictions start from, was measured under contention. */
static uint64_t machine_busy_start, clock_tick;

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

/* The decimal number at p (0 when none; digits past 2^64 are not ours to
 * meet: /proc prints page and kB counts). */
static uint64_t parse_u64(const char *p)
{
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

/* CPU time every CPU of the machine has spent busy since boot, ns: the
 * first line of /proc/stat (user nice system idle iowait irq softirq steal
 * ..., in clock ticks) less idle and iowait. 0 when unknown. */
static uint64_t machine_busy_ns(void)
{
	char buf[256];
	if (!clock_tick || rec_read_small_file("/proc/stat", buf, sizeof buf) <= 0 || strncmp(buf, "cpu ", 4))
		return 0;
	const char *p = buf + 4;
	uint64_t busy = 0;
	for (int i = 0; i < 8; i++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return 0;
		uint64_t v = parse_u64(p);
		if (i != 3 && i != 4) /* idle, iowait */
			busy += v;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return busy * (1000000000u / clock_tick);
}

/* f's descriptor when it still is the file opened, else -1 (and f
 * forgets it: never read or closed again). */
static int proc_fd_check(proc_fd_t *f)
{
	struct stat st;
	if (f->fd >= 0 && (fstat(f->fd, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->ino))
		f->fd = -1;
	return f->fd;
}

static void proc_fd_open(proc_fd_t *f, const char *path)
{
	int fd = rec_open_high(path, O_RDONLY, 0);
	f->fd = -1;
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->fd = fd;
	rec_fd_own(&f->fd, NULL, NULL);
}

/* Close f (in a fork child the parent's file, before a new trace this
 * image's), unless the program took the number. */
static void proc_fd_drop(proc_fd_t *f)
{
	if (proc_fd_check(f) >= 0)
		close(f->fd);
	f->fd = -1;
}

/* Resident bytes now, or 0 when /proc cannot tell (sampling then stops). */
static uint64_t read_rss(void)
{
	if (proc_fd_check(&statm) < 0)
		return 0;
	char buf[128];
	ssize_t n = pread(statm.fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "size resident shared text lib data dt", in pages: the second one */
	const char *p = buf;
	while (*p >= '0' && *p <= '9')
		p++;
	while (*p == ' ')
		p++;
	return parse_u64(p) * page_size;
}

/* VmHWM of /proc/self/status in bytes, 0 when unknown; through the kept
 * descriptor, else (kept_only 0: at start and close) by opening the file. */
static uint64_t read_hwm(int kept_only)
{
	char buf[4096];
	ssize_t n = proc_fd_check(&status) >= 0 ? pread(status.fd, buf, sizeof buf - 1, 0) : -1;
	if (n > 0)
		buf[n] = 0;
	else if (kept_only || rec_read_small_file("/proc/self/status", buf, sizeof buf) <= 0)
		return 0;
	const char *p = strstr(buf, "\nVmHWM:");
	if (!p)
		return 0;
	for (p += 7; *p == ' ' || *p == '\t'; p++)
		;
	return parse_u64(p) * 1024u;
}

/* The recorder's own resident memory now, in parts. */
static void recorder_now(recorder_mem_t *m)
{
	m->maps = rec_mem_resident_bytes();
	uint64_t libs = rec_own_resident(proc_fd_check(&pagemap), m->lib, m->lib_bytes, REPORT_LIBS, &m->nlibs);
	m->total = m->maps + libs;
}

/* The kernel's high-water mark is not timed. When VmHWM h has risen since
 * the last look, the peak came in between, when the recorder's memory was
 * at most what it is now (it only grows: buffers fill, the compressor's
 * workspace and code come at the first blocks): so the program's own peak
 * is at least h less the recorder's memory now, and the best of these
 * bounds is kept. The recorder grows in steps where a block is written, so
 * the writer looks on both sides of each block (rec_writer.c) as well as at
 * every sample: a peak reached before a step is not charged with it, and
 * a later rise of VmHWM that is only the kernel's per-CPU counters
 * catching up does not lower the bound. */
static void saw_hwm(uint64_t h)
{
	if (h <= hwm_seen)
		return;
	hwm_seen = h;
	recorder_mem_t now;
	recorder_now(&now);
	if (h > now.total && h - now.total >= program_peak) {
		program_peak = h - now.total;
		recorder_at_best = now;
	}
}

/* A new trace of this process image starts now: the start sample. */
static void start_now(void)
{
	int saved = errno;
	page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	long tick = sysconf(_SC_CLK_TCK);
	clock_tick = tick > 0 && tick <= 1000000000 ? (uint64_t)tick : 0;
	proc_fd_open(&statm, "/proc/self/statm");
	proc_fd_open(&pagemap, "/proc/self/pagemap");
	proc_fd_open(&status, "/proc/self/status");
	start_sample = (ar_rss_sample_t){rec_event_time_ns(), 0, read_rss()};
	struct rusage ru;
	cpu_user_start = cpu_sys_start = 0;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		cpu_user_start = tv_ns(ru.ru_utime);
		cpu_sys_start = tv_ns(ru.ru_stime);
	}
	writer_cpu_start = rec_writer_cpu_total_ns();
	hwm_start = read_hwm(0);
	machine_busy_start = machine_busy_ns();
	rec_cost_restart();
	start_written = 0;
	max_rss = 0;
	memset(&recorder_at_max, 0, sizeof recorder_at_max);
	hwm_seen = program_peak = 0;
	saw_hwm(hwm_start);
	ar_metabuf_reset(&samples, sbuf, sizeof sbuf);
	interval_ns = SAMPLE_NS;
	nsamples = 1;
	flushed_ns = rec_time_ns();
	next_ns = flushed_ns + interval_ns;
	errno = saved;
}

void rec_process_init(void)
{
	/* once per image: a fork child has the same objects */
	rec_own_scan((const void *)rec_process_init, rec_loader_iterate);
	start_now();
}

void rec_process_reset_child(void)
{
	proc_fd_drop(&statm);
	proc_fd_drop(&pagemap);
	proc_fd_drop(&status);
	start_now();
}

/* Prove which object serves malloc, once per image (a fork keeps it). */
static void identify(void)
{
	if (identity_done)
		return;
	identity_done = 1;
	/* The loader and realpath may allocate: that is the shim's own work,
	 * also when a program thread holds the writer lock from inside a hook. */
	int saved = errno, in = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	/* The registry opens and maps the allocator's file: off the
	 * program's threads that must not race its dup2 (rec_fds.c). */
	rec_fd_section_begin();
	if (rec_real.malloc && ar_reg_malloc_identity((const void *)rec_real.malloc, &ident) != 0)
		memset(&ident, 0, sizeof ident);
	rec_fd_section_end();
	rec_tls.in_shim = in;
	errno = saved;
}

/* Write m as one metadata block if the trace is open. */
static void write_block(ar_metabuf_t *m)
{
	if (!m->nrecords || !rec_trace_is_open())
		return;
	rec_trace_write_meta(m);
	ar_metabuf_reset(m, m->data, sizeof sbuf);
}

void rec_process_write_start(void)
{
	if (start_written || !rec_trace_is_open())
		return;
	identify();
	uint8_t data[1024];
	ar_metabuf_t m;
	ar_metabuf_reset(&m, data, sizeof data);
	ar_meta_allocator(&m, ident.path, ident.soname, ident.version);
	if (start_sample.rss_bytes) /* 0: /proc could not tell, not an RSS */
		ar_meta_rss_sample(&m, &start_sample);
	start_written = 1;
	rec_trace_write_meta(&m);
}

void rec_process_observe(void)
{
	saw_hwm(read_hwm(1));
}

uint64_t rec_process_tick(uint64_t now)
{
	rec_process_write_start();
	if (statm.fd >= 0 && now >= next_ns) {
		ar_rss_sample_t s = {rec_event_time_ns(), atomic_load_explicit(&rec_seq.n, memory_order_relaxed),
				     read_rss()};
		if (s.rss_bytes && ar_meta_rss_sample(&samples, &s) == 0 && ++nsamples % THIN_EVERY == 0)
			interval_ns *= 2;
		if (s.rss_bytes >= max_rss) {
			max_rss = s.rss_bytes;
			recorder_now(&recorder_at_max);
		}
		rec_process_observe();
		/* Late wake-ups (a loaded machine) are not made up for. */
		next_ns = (now - next_ns < interval_ns ? next_ns : now) + interval_ns;
	}
	if (samples.nrecords && (now - flushed_ns >= FLUSH_NS || samples.cap - samples.len < 64)) {
		write_block(&samples);
		flushed_ns = now;
	}
	if (statm.fd < 0)
		return UINT64_MAX;
	return next_ns > now ? next_ns - now : 0;
}

/* ALLOCRR_MEM_REPORT: the parts of the recorder memory figure this trace
 * stores, appended as "PID maps BYTES", "PID lib FILE BYTES" (one line a
 * library counted), "PID later BYTES" (how far VmHWM rose after the look
 * that bounded the program's peak best), "PID recorder BYTES" (their sum,
 * the PROCESS record's figure) and "PID peak BYTES" (the record's peak). */
static void mem_report(const ar_process_info_t *pi, const recorder_mem_t *r)
{
	if (!rec_cfg.mem_report[0])
		return;
	int fd = rec_open_high(rec_cfg.mem_report, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	char text[2048];
	int pid = (int)rec_pid, n = snprintf(text, sizeof text, "%d maps %llu\n", pid, (unsigned long long)r->maps);
	for (size_t i = 0; i < r->nlibs && n < (int)sizeof text - 200; i++)
		n += snprintf(text + n, sizeof text - (size_t)n, "%d lib %s %llu\n", pid, r->lib[i],
			      (unsigned long long)r->lib_bytes[i]);
	uint64_t later = pi->recorder_rss_bytes > r->total ? pi->recorder_rss_bytes - r->total : 0;
	n += snprintf(text + n, sizeof text - (size_t)n, "%d later %llu\n", pid, (unsigned long long)later);
	n += snprintf(text + n, sizeof text - (size_t)n, "%d recorder %llu\n%d peak %llu\n", pid,
		      (unsigned long long)pi->recorder_rss_bytes, pid, (unsigned long long)pi->peak_rss_bytes);
	if (n > (int)sizeof text - 1)
		n = (int)sizeof text - 1;
	ssize_t w = write(fd, text, (size_t)n); /* O_APPEND: one write, whole */
	(void)w;
	close(fd);
}

void rec_process_close(void)
{
	if (!rec_trace_is_open())
		return;
	int saved = errno;
	rec_process_write_start();
	ar_process_info_t pi;
	memset(&pi, 0, sizeof pi);
	pi.start_rss_bytes = start_sample.rss_bytes;
	pi.start_time_ns = start_sample.time_ns;
	uint64_t hwm = read_hwm(0);
	pi.end_rss_bytes = read_rss();
	pi.end_time_ns = rec_event_time_ns();
	pi.sample_interval_ns = SAMPLE_NS;
	uint64_t end_rss = read_rss();
	if (end_rss >= max_rss) { /* the peak may be now: a short program has no other sample */
		max_rss = end_rss;
		recorder_now(&recorder_at_max);
	}
	saw_hwm(hwm); /* the peak may be now */
	/* the part of the peak that is not the program's */
	const recorder_mem_t *rec_mem = &recorder_at_best;
	pi.recorder_rss_bytes = hwm && program_peak ? hwm - program_peak : recorder_at_max.total;
	if (!hwm || !program_peak)
		rec_mem = &recorder_at_max;
	pi.peak_rss_bytes = hwm;
	pi.peak_source = AR_PEAK_HWM;
	if (rec_window_info() && (hwm <= hwm_start || !hwm_start)) {
		/* The process's high-water mark is older than this window (or
		 * not known): the window's own peak is at least the highest
		 * sample, the start's and the close's included. */
		pi.peak_rss_bytes = max_rss > start_sample.rss_bytes ? max_rss : start_sample.rss_bytes;
		pi.peak_source = AR_PEAK_SAMPLED;
		rec_mem = &recorder_at_max;
		pi.recorder_rss_bytes = recorder_at_max.total;
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		pi.cpu_user_ns = tv_ns(ru.ru_utime);
		pi.cpu_sys_ns = tv_ns(ru.ru_stime);
		pi.cpu_user_start_ns = cpu_user_start;
		pi.cpu_sys_start_ns = cpu_sys_start;
		/* the recorder's part of them since the start (rec_cost.h says
		 * why it matters) */
		uint64_t w = rec_writer_cpu_total_ns();
		pi.recorder_writer_cpu_ns = w > writer_cpu_start ? w - writer_cpu_start : 0;
		pi.recorder_calls_cpu_ns = rec_cost_calls_ns();
	}
	uint64_t busy = machine_busy_ns();
	rec_fd_section_begin(); /* glibc reads /sys/devices/system/cpu/online */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	rec_fd_section_end();
	if (busy && machine_busy_start && busy >= machine_busy_start && cpus > 0) {
		pi.machine_busy_ns = busy - machine_busy_start;
		pi.machine_cpus = (uint64_t)cpus;
	}
	/* The last sample is the end: a program shorter than one period still
	 * has two points. */
	if (pi.end_rss_bytes) {
		ar_rss_sample_t s = {pi.end_time_ns, atomic_load(&rec_seq.n), pi.end_rss_bytes};
		if (ar_meta_rss_sample(&samples, &s) != 0) {
			write_block(&samples);
			ar_meta_rss_sample(&samples, &s);
		}
	}
	if (ar_meta_process(&samples, &pi) != 0) {
		write_block(&samples);
		ar_meta_process(&samples, &pi);
	}
	write_block(&samples);
	mem_report(&pi, rec_mem);
	errno = saved;
}
