/*
 * rec_internal.h — shared state of the recorder shim (liballocrr-rec.so).
 * Nothing here is exported from the shared object: the shim is built with
 * -fvisibility=hidden and only the interposed libc functions are public.
 *
 * Invariants the whole shim keeps:
 *   - The shim never allocates with the traced malloc: its memory comes from
 *     mmap (rec_mem.c) or the static bootstrap pool.
 *   - A thread with tls.in_shim set passes every heap call straight to the
 *     real function without recording: that is the re-entrancy guard, and the
 *     writer thread keeps it set for its whole life. REC_SHIM_HOOK means the
 *     thread is inside a heap hook for the program: a heap call arriving then
 *     can only come from a signal handler that interrupted the hook, and it
 *     is counted as dropped (the footer's dropped_events). REC_SHIM_INTERNAL
 *     marks the shim's own work (start-up, exit/exec/fork handling, the libc
 *     calls the shim makes that may allocate): calls then are not the
 *     program's and are not counted.
 *   - Only the owner thread appends to its current buffer (t->cur); the writer
 *     may take that buffer away only through the steal handshake in
 *     rec_thread.c (t->in_call / t->steal), never while the owner is inside.
 *     A hook holds in_call from before it takes its seq until its event is
 *     appended, so a thread found outside a call owes no event: a close (and
 *     a window's or a rotation's cut) ends at one seq.
 *   - A process records one trace at a time: whole-program (REC_ON from
 *     start-up), or windows (rec_window.c: --paused, attach, rotation
 *     segments) separated by REC_PAUSED. Each new trace bumps
 *     rec_generation; a thread record of an older generation is never
 *     written into the current trace.
 *   - Only the holder of the writer lock calls ar_writer_* (the writer is not
 *     thread-safe); normally that is the background writer thread.
 *   - The descriptors the shim keeps (rec_fd_own) are invisible to the
 *     program: its close, close_range, closefrom, dup2 and dup3 act as if
 *     they did not exist (rec_fds.c); the shim's own calls pass through.
 */
#ifndef AR_REC_INTERNAL_H
#define AR_REC_INTERNAL_H

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ar_trace.h"
#include "rec_stamp.h"

#define REC_VERSION "allocrr-rec 1.1" /* 1.1: the recorder memory figure counts the libraries only it loaded */
#define REC_LIKELY(x) __builtin_expect(!!(x), 1)
#define REC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define REC_CACHELINE 64

/* ---- configuration (read once from ALLOCRR_* at start) ------------------- */
typedef struct rec_config {
	char output[1024];    /* ALLOCRR_OUTPUT: path pattern of this image's trace, "" = default */
	char dir[1024];       /* ALLOCRR_DIR: where descendants write PROG.PID.zst (absolute) */
	char manifest[1024];  /* ALLOCRR_MANIFEST: file that lists every trace written */
	unsigned stack_depth; /* ALLOCRR_STACKS: 0 = no stacks */
	int follow_exec;      /* ALLOCRR_FOLLOW: 0 = do not record exec'ed images */
	int level;            /* ALLOCRR_LEVEL: zstd level */
	uint64_t flush_ns;    /* ALLOCRR_FLUSH_MS: age after which a buffer is written */
	uint64_t max_size;    /* ALLOCRR_MAX_SIZE: stop once the trace holds this many bytes, 0 = no limit */
	uint64_t duration_ns; /* ALLOCRR_DURATION_NS: stop this long after start-up (of each
			       * window with paused), 0 = no limit */
	uint64_t rotate;      /* ALLOCRR_ROTATE: a new segment file once the trace holds this
			       * many bytes, 0 = never (rec_window.c) */
	int paused;           /* ALLOCRR_PAUSED: start with the shim loaded, not recording;
			       * windows come from the control channel (rec_control.c) */
	int stream_fd;        /* ALLOCRR_STREAM_FD: the first image's trace goes to this inherited descriptor, -1 = none */
	char stream_stats[1024]; /* ALLOCRR_STREAM_STATS: where the stream's totals go at its end, for allocrec */
	char mem_report[1024]; /* ALLOCRR_MEM_REPORT: a file each trace's close appends the parts of its
				* recorder memory figure to (rec_process.c), for tests and diagnosis */
	unsigned time_every;  /* ALLOCRR_TIME_EVERY: while a thread calls alone and densely,
			       * read the clock once per this many events (rec_stamp.h) */
	unsigned time_unit_ns; /* ALLOCRR_TIME_UNIT: the trace's time unit (rec_defaults.h) */
} rec_config_t;

extern rec_config_t rec_cfg;
/* Fill rec_cfg and the program name from the environment (rec_config.c). */
void rec_config_read(void);
/* Fill rec_cfg and the program name from settings instead of the
 * environment (attach: the process's environment is not ours to read or
 * edit). settings: "NAME=value" entries, one per line ('\n'), with the
 * names and meanings of the environment variables (ALLOCRR_OUTPUT,
 * ALLOCRR_DIR, ALLOCRR_MANIFEST, ALLOCRR_STACKS, ALLOCRR_LEVEL,
 * ALLOCRR_FLUSH_MS, ALLOCRR_MAX_SIZE, ALLOCRR_DURATION_NS, ALLOCRR_ROTATE,
 * ALLOCRR_PAUSED, ALLOCRR_FOLLOW); unnamed ones take their defaults
 * (ALLOCRR_DIR: the process's working directory). Never allocates; a line
 * longer than 1100 bytes or past the 64th is ignored. Returns 0, or -1
 * when settings is NULL. */
int rec_config_parse(const char *settings);

/* ---- process-wide recording state ---------------------------------------- */
enum rec_state {
	REC_OFF = 0,      /* not initialised yet, or disabled: pass through */
	REC_ON = 1,       /* recording */
	REC_CLOSING = 2,  /* the trace is being closed: new events are dropped */
	REC_STOPPED = 3,  /* closed, failed or past a limit stop: pass through for good */
	REC_PAUSED = 4,   /* between windows (allocrec --paused, attach): pass through,
			   * rec_window_begin may start the next trace */
};
extern _Atomic int rec_state;
extern pid_t rec_pid; /* the process the current trace belongs to */

/* The global sequence counter (SPEC 4), alone on its cache line: every
 * recorded call of every thread writes it, so a variable beside it that the
 * calls only read (rec_state was) would be fetched again after each other
 * thread's call. A padded variable next to it is not enough: the linker
 * orders .bss as it likes. */
typedef struct {
	_Alignas(REC_CACHELINE) _Atomic uint64_t n;
} rec_seq_line_t;
_Static_assert(sizeof(rec_seq_line_t) == REC_CACHELINE, "the counter's line holds nothing else");
extern rec_seq_line_t rec_seq;
static inline uint64_t rec_next_seq(void)
{
	return atomic_fetch_add_explicit(&rec_seq.n, 1, memory_order_relaxed) + 1;
}

/* A bounded recording (--max-size, --duration) ended on purpose: the
 * writer closed the trace through the ordinary close (footer written) and
 * the program's heap calls pass straight through from then on, counted in
 * rec_after_stop (begin() in rec_hooks.c, via rec_note_unrecorded). */
enum rec_limit { REC_LIMIT_NONE = AR_STOP_NONE, REC_LIMIT_SIZE = AR_STOP_MAX_SIZE, REC_LIMIT_DURATION = AR_STOP_DURATION };
extern _Atomic int rec_limit_stop;
/* The count is striped by thread (the address of its TLS block, hashed):
 * one shared counter would bounce its cache line between the program's
 * threads on every call, the slowdown the stop is meant to end. */
#define REC_AFTER_STRIPES 64
typedef struct rec_stripe {
	_Alignas(REC_CACHELINE) _Atomic uint64_t n;
} rec_stripe_t;
extern rec_stripe_t rec_after_stop[REC_AFTER_STRIPES];
extern __thread struct rec_tls rec_tls __attribute__((tls_model("initial-exec")));
static inline void rec_note_unrecorded(void)
{
	if (REC_UNLIKELY(atomic_load_explicit(&rec_limit_stop, memory_order_relaxed))) {
		uint64_t h = ((uint64_t)(uintptr_t)&rec_tls >> 12) * 0x9E3779B97F4A7C15ull;
		atomic_fetch_add_explicit(&rec_after_stop[h >> 58].n, 1, memory_order_relaxed);
	}
}
/* When the image ends (exit, _exit, exec, a fatal signal), once: the heap
 * calls it made after a limit stop go into the trace's footer (SPEC 6.7,
 * rewritten in place; allocrec's summary says them). */
void rec_limit_report(void);

/* ---- clock ---------------------------------------------------------------- */
extern uint64_t rec_start_mono_ns;
static inline uint64_t rec_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* Event time: ns since the header's start_mono_ns. */
static inline uint64_t rec_time_ns(void)
{
	return rec_mono_ns() - rec_start_mono_ns;
}
/* The event clock (rec_clock.c): the same ns, from the TSC where stable. */
extern int rec_clock_tsc;
void rec_clock_init(void);  /* after rec_start_mono_ns is set */
void rec_clock_refit(void); /* writer thread, every scan */
/* After rec_start_mono_ns moved (fork child): keep the fit, shift its zero. */
void rec_clock_rebase(uint64_t old_start_mono_ns);
uint64_t rec_clock_tsc_ns(void);
static inline uint64_t rec_event_time_ns(void)
{
	return REC_LIKELY(rec_clock_tsc) ? rec_clock_tsc_ns() : rec_time_ns();
}

/* ---- memory (rec_mem.c) ----------------------------------------------------- */
void *rec_mmap(size_t size);         /* zeroed pages or NULL; never malloc */
void rec_munmap(void *p, size_t size);
size_t rec_mem_resident_bytes(void);  /* of the shim's mappings, resident now (mincore) */
extern const ar_mem_t rec_writer_mem; /* for ar_writer_open: mmap with a size header */
/* Static pool for the allocations dlsym makes before the real functions are known. */
void *rec_boot_alloc(size_t size, size_t align);
#define REC_BOOT_SIZE (64u * 1024u)
extern uint8_t rec_boot_pool[REC_BOOT_SIZE];
/* Inline: every free and realloc asks, paused ones too. */
static inline int rec_boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)rec_boot_pool < REC_BOOT_SIZE;
}
size_t rec_boot_size(const void *p);

/* ---- buffers and threads (rec_thread.c) ---------------------------------------- */
#define REC_EVBUF_CAP AR_EVBUF_MAX_BYTES /* one events block: 16384 events, 32-64 bytes each */
#define REC_METABUF_CAP (64u * 1024u)  /* thread, stack and module records */
#define REC_BUFS_PER_THREAD 4          /* in flight per thread before it waits */

typedef struct rec_thread rec_thread_t;

/* One unit handed to the writer: a thread's events and the metadata that
 * must reach the file no later than those events. */
typedef struct rec_buf {
	ar_evbuf_t eb;
	ar_metabuf_t mb;
	struct rec_buf *next; /* in the submit queue / free lists */
	rec_thread_t *owner;
	int exit_record;      /* the owner wrote its thread-exit record here */
} rec_buf_t;

struct rec_thread {
	/* owned by the thread; the writer reads in_call/first_ns and writes steal */
	_Atomic int in_call;          /* 1 while the owner uses cur */
	_Atomic int steal;            /* writer wants cur */
	_Atomic(rec_buf_t *) cur;     /* current buffer, NULL = none yet */
	_Atomic uint64_t first_ns;    /* time of cur's first event, 0 = cur empty */
	_Atomic(rec_buf_t *) returned; /* buffers written and given back by the writer */
	int nbufs;                    /* buffers this thread owns (cur, queued, returned) */
	uint32_t index;               /* dense index in the trace */
	unsigned gen;                 /* rec_generation when created */
	pid_t tid;
	int exited;                   /* thread-exit record written */
	int dtor_rounds;
	uint64_t dropped;             /* events lost by this thread (nested calls in handlers) */
	char name[32];
	rec_thread_t *all_next;       /* writer's list of threads */
	_Atomic int writer_gone;      /* writer removed it from its list */
	int quiesced;                 /* writer: the final close's handshake is done */
	int retired;                  /* its trace was closed for a new one in this process */
	int appending;                /* the owner is writing into cur or holds a buffer
				       * only in a local (a signal handler that closes the
				       * trace must not take cur then); clear while it
				       * waits for a buffer or wakes the writer */
	int holding_event;            /* the owner made an event not yet in a buffer: a
				       * closing handler that interrupts it counts it dropped */
	uint64_t deferred_sigs;       /* signals (bit sig - 1) that landed while appending:
				       * delivered again once it ends (rec_signal.c) */
	rec_stamp_t stamp;            /* when its events read the clock (owner only) */
	uint32_t cost_left;           /* calls to its next timed one (rec_cost.h; owner only) */
	siginfo_t deferred_si;        /* the first deferred signal's siginfo (cold) */
	char pad[REC_CACHELINE];
};

#define REC_SHIM_HOOK 1     /* tls.in_shim: inside a heap hook for the program */
#define REC_SHIM_INTERNAL 2 /* tls.in_shim: the shim's own work */
typedef struct rec_tls {
	rec_thread_t *t;
	int in_shim; /* 0, REC_SHIM_HOOK or REC_SHIM_INTERNAL */
	int reallocarray_inner; /* inside the real reallocarray: its realloc is expected */
	int is_writer;
	int closing; /* this thread is closing the trace: a signal handler on it must not wait for the close */
} rec_tls_t;
extern __thread rec_tls_t rec_tls __attribute__((tls_model("initial-exec")));

/* The calling thread's record, created on first use; NULL if out of memory. */
rec_thread_t *rec_thread_self(void);
/* The owner's side of the steal handshake (asymmetric Dekker, rec_thread.c
 * says how): with membarrier the light fence is a compiler barrier. */
extern int rec_membarrier_ok;
extern unsigned rec_generation;
static inline void rec_light_fence(void)
{
	if (REC_LIKELY(rec_membarrier_ok))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
}

static inline void rec_call_enter(rec_thread_t *t)
{
	for (;;) {
		atomic_store_explicit(&t->in_call, 1, memory_order_relaxed);
		rec_light_fence();
		if (REC_LIKELY(!atomic_load_explicit(&t->steal, memory_order_relaxed)))
			return;
		atomic_store_explicit(&t->in_call, 0, memory_order_release);
		while (atomic_load_explicit(&t->steal, memory_order_acquire))
			sched_yield();
	}
}

/* appending is set around every write into cur and every moment a buffer
 * is only in a local; a signal of ours (a fatal one, whether the program
 * handles it or not) that lands there waits for the end, where
 * rec_signal_deferred sends it to the thread again. */
void rec_signal_deferred(rec_thread_t *t);
static inline void rec_appending_begin(rec_thread_t *t)
{
	t->appending = 1;
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void rec_appending_end(rec_thread_t *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->appending = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (REC_UNLIKELY(t->deferred_sigs))
		rec_signal_deferred(t);
}

static inline void rec_call_leave(rec_thread_t *t)
{
	atomic_store_explicit(&t->in_call, 0, memory_order_release);
}

/* The hooks' side of the handshake: 1 with in_call held when this trace
 * records (state REC_ON, t of the current generation), 0 (in_call clear)
 * when not. Taken before the hook takes its seq, held until
 * rec_thread_append releases it. The state is read inside enter/leave: the
 * final close makes the steal handshake with every thread after setting
 * REC_CLOSING, so a thread it found outside sees REC_CLOSING from then on
 * (read before enter(), a thread could decide to record, be preempted, and
 * append to a buffer the close had already collected: an event lost from
 * a trace that says it is complete). The generation: a record of a closed
 * window's trace is not this trace's. */
static inline int rec_thread_enter(rec_thread_t *t)
{
	rec_call_enter(t);
	if (REC_LIKELY(atomic_load_explicit(&rec_state, memory_order_acquire) == REC_ON &&
		       t->gen == rec_generation))
		return 1;
	rec_call_leave(t);
	return 0;
}
/* The time of the event whose first seq is `seq` (rec_stamp.h: the clock
 * is read once per rec_cfg.time_every events of a lone, dense thread). */
static inline uint64_t rec_event_stamp(rec_thread_t *t, uint64_t seq)
{
	uint64_t ns;
	if (REC_LIKELY(rec_stamp_reuse(&t->stamp, seq, &ns)))
		return ns;
	return rec_stamp_read(&t->stamp, seq, rec_event_time_ns(), rec_cfg.time_every);
}

/* Append one event for the calling thread (in_shim set, in_call held by
 * rec_thread_enter); releases in_call. */
void rec_thread_append(rec_thread_t *t, ar_event_t *e);
/* Append a metadata record built by fn into the thread's current buffer. */
typedef int (*rec_meta_fn)(ar_metabuf_t *m, const void *arg);
void rec_record_meta(rec_thread_t *t, rec_meta_fn fn, const void *arg);
/* Thread-exit handling (pthread key destructor), and whether it ran. */
void rec_thread_exit(rec_thread_t *t);
/* Read /proc/self/task/TID/comm into name[32]. */
void rec_thread_read_name(pid_t tid, char name[32]);
/* Forget every thread (fork child / restart): the caller's record is rebuilt lazily. */
void rec_threads_reset(void);
/* A new trace in the same process (window, rotation; nothing recording):
 * every thread record of the old one is retired (buffers back on the
 * free list; a live thread's record is reused on its next call, with a new
 * index), the generation bumped. list: the writer's lists, all_next. */
void rec_threads_new_generation(rec_thread_t *list);
/* The writer is done with t: its owner is told (writer_gone: it hands no
 * more buffers back) and the buffers it handed back go on the free list. */
void rec_thread_writer_done(rec_thread_t *t);
/* Start fn(arg) on a detached thread of the recorder's own (writer,
 * control, --duration timer) with every signal blocked, so that none of
 * the program's signals is ever delivered to it; stack_size 0 = the
 * default. The caller's signal mask is unchanged afterwards. 0, or
 * pthread_create's error number. */
int rec_thread_start_detached(void *(*fn)(void *), void *arg, size_t stack_size);
/* Bumped when a new trace starts in this process (fork child, failed
 * exec): records of an older generation belong to the old trace. */
extern unsigned rec_generation;
void rec_threads_init(void);
/* Writer side of the steal handshake: 1 and *out (maybe NULL) when the
 * owner was idle, 0 when it is inside a call right now. With quiesce the
 * handshake is made even when the thread has no buffer: afterwards the
 * owner sees any rec_state change made before the call (the final close
 * relies on it: no event can slip into a buffer after it was taken). */
int rec_thread_steal(rec_thread_t *t, rec_buf_t **out, int quiesce);
/* The final close's form of it, for every thread on a list (all_next) at
 * once, with one heavy fence: each thread found outside a call is marked
 * quiesced and its buffer, if any, pushed on *taken. Threads already
 * quiesced and skip are left alone. Returns how many were inside a call. */
int rec_threads_quiesce(rec_thread_t *list, const rec_thread_t *skip, rec_buf_t **taken);
/* Global counter of events dropped: made while recording was closing, or
 * made by a signal handler that interrupted a heap hook (REC_SHIM_HOOK). */
extern _Atomic uint64_t rec_dropped_global;

/* Steal protocol helpers used by the writer. */
void rec_buf_give_back(rec_buf_t *b);
void rec_buf_free_list_push(rec_buf_t *b);
extern int rec_membarrier_ok;

/* ---- lifecycle (rec_lifecycle.c) ---------------------------------------------- */
/* 0 before start-up, 1 while it runs, 2 after. */
extern _Atomic int rec_init_state;
/* Start-up, once: from the first hook call or the constructor. */
void rec_init(void);
/* Called before an exec or _exit replaces or ends this image. Returns 1 if
 * the trace was closed (and recording may restart if the exec fails). */
int rec_close_before(const char *why);
/* The exec failed: this image goes on, so it gets a new trace file. */
void rec_restart_after_failed_exec(void);
/* The environment an exec should pass: envp itself, or (following execs,
 * when envp lacks our LD_PRELOAD entry or an ALLOCRR_* variable of
 * start-up) a copy in out[slots] with them added; pre (precap bytes) holds
 * a rebuilt LD_PRELOAD entry. Never allocates: the caller gives the
 * memory, out with rec_exec_env_slots(envp) entries. */
size_t rec_exec_env_slots(char *const *envp);
char *const *rec_exec_env(char *const *envp, char **out, size_t slots, char *pre, size_t precap);

/* ---- the trace file (rec_tracefile.c); wlock holder only ------------------------ */
/* The header of this image's trace, from rec_pid, the command line, the clocks. */
void rec_trace_header_fill(void);
/* Open (name, header, manifest) if not open yet: 0, or -1 after rec_fail. */
int rec_trace_open(void);
/* Whether a trace is open. */
int rec_trace_is_open(void);
/* Bytes written to the open trace so far (0 when none is open). */
uint64_t rec_trace_bytes(void);
/* The open trace's path ("" before it was named). */
const char *rec_trace_path(void);
/* Write a buffer's metadata then events, opening the file first if needed;
 * does nothing once recording stopped; a failure calls rec_fail. */
void rec_trace_write(const rec_buf_t *b);
/* Write the thread names in m, the dropped count and the footer (only when
 * busy is 0 and nothing failed), then close the file. */
void rec_trace_close(ar_metabuf_t *m, uint64_t dropped, int busy);
/* After a limit stop the footer is written but the file kept open
 * (rec_trace_close): this rewrites the footer with the calls made since
 * and closes the file. */
void rec_trace_finish_stopped(uint64_t after_stop);
/* Fork child: close the parent's file here and forget it. */
void rec_trace_forget(void);
/* After a clean close in this image: the next rec_trace_open opens anew. */
void rec_trace_forget_closed(void);
/* 1 while this image's trace goes to a pipe, a FIFO or a socket (allocrec
 * -o -, -o FIFO): a reader may be slower than the program, so a thread with
 * every buffer in flight waits for the writer only while the stream has
 * room, and otherwise drops its events, counted (rec_writer_wait_returned);
 * nothing is rewritten in place. */
extern int rec_streaming;
/* Any thread: 1 when the stream has no room now (its reader is behind, or
 * gone), so the writer is or will be blocked in write(). */
int rec_trace_stream_full(void);
/* Write one metadata block if the trace is open (a failure calls rec_fail). */
void rec_trace_write_meta(const ar_metabuf_t *m);

/* ---- descriptors the shim keeps (rec_fds.c) ------------------------------------------ */
/* fd moved out of the program's way (rec_fds.c says where), close-on-exec;
 * fd itself when that fails. */
int rec_move_fd_high(int fd);
/* A duplicate of fd there, or -1; fd stays open. */
int rec_fd_dup_high(int fd);
/* open(path, flags | O_CLOEXEC, mode) moved high (rec_move_fd_high) with
 * no instant at a low number the program's dup2 could land on; -1 and
 * errno as open's. For a descriptor the shim keeps. */
int rec_open_high(const char *path, int flags, mode_t mode);
/* Around the shim's own open ... close of a short-lived descriptor (a
 * manifest line, a control file, the registry reading an ELF file), on any
 * thread: the program's dup2, dup3, close_range and closefrom wait for the
 * end (rec_fds.c says why). Nests; the end leaves errno as it was. */
void rec_fd_section_begin(void);
void rec_fd_section_end(void);
/* ar_read_small_file (common/ar_readfile.h) in such a section: the shim's
 * reads of /proc and other small files. */
ssize_t rec_read_small_file(const char *path, char *buf, size_t cap);
/* atfork child handler, first: the lock may have been held by a thread
 * the child does not have. */
void rec_fd_fork_child(void);
/* *slot holds a descriptor the shim keeps (or -1): the program's close,
 * close_range, closefrom and dup2/dup3 leave it alone; when the program
 * dup2s onto it, it moves and moved(new number) runs under the writer lock,
 * or, when no number is free, lost() runs (without the lock) and must
 * stop using it. */
void rec_fd_own(int *slot, void (*moved)(int fd), void (*lost)(void));

/* ---- the process: allocator and RSS (rec_process.c) ------------------------------ */
/* Start-up, program thread: the RSS at start. */
void rec_process_init(void);
/* A new trace of this image (fork child, failed exec): its own start RSS. */
void rec_process_reset_child(void);
/* wlock holder, trace open: the ALLOCATOR record and the start sample, once
 * per trace, before anything else of it. */
void rec_process_write_start(void);
/* Writer thread, wlock held: take an RSS sample when one is due and write
 * the waiting ones every second. Returns ns until the next sample is due
 * (UINT64_MAX when sampling stopped). */
uint64_t rec_process_tick(uint64_t now_ns);
/* wlock holder, around each block write: note the recorder's own memory
 * when the kernel's high-water mark has risen since the last look. */
void rec_process_observe(void);
/* wlock holder, closing an open trace: the last sample, the PROCESS record. */
void rec_process_close(void);

/* ---- warnings (rec_tracefile.c); any thread ------------------------------------- */
/* Warn once on stderr ("allocrr: ...") and stop recording. */
void rec_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One "allocrr: ..." line on stderr, recording goes on; the caller says it
 * once. Neither lets SIGXFSZ reach the program. */
void rec_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Block SIGXFSZ and SIGPIPE around a write made on a program thread and
 * discard the one the write raised (no-op on the writer thread, which
 * blocks everything). */
typedef struct rec_xfsz_guard {
	sigset_t old;
	int active, pending_before;
} rec_xfsz_guard_t;
void rec_xfsz_block(rec_xfsz_guard_t *g);
void rec_xfsz_restore(rec_xfsz_guard_t *g);

/* ---- writer thread (rec_writer.c) ------------------------------------------- */
/* Open the trace for this process image; fork children open lazily. */
int rec_writer_init(int lazy_open);
/* Start the background writer thread (idempotent; 0 on success). */
int rec_writer_start(void);
/* Hand a buffer (events and/or metadata) to the writer: queue it (a
 * lock-free push), then kick the writer (wake it; start it, or write the
 * queue on this thread, when it is not running: that may take the writer
 * lock and write to the file). */
void rec_writer_queue(rec_buf_t *b);
void rec_writer_kick(void);
/* The CPU time the writer threads of this image have used, ns. */
uint64_t rec_writer_cpu_total_ns(void);
/* A new thread record exists; the writer adds it to its list. */
void rec_writer_add_thread(rec_thread_t *t);
/* Flush everything and close the trace (with a footer). why: "exit", "exec",
 * "signal". timeout_ms bounds how long we wait for the writer. The fatal
 * asynchronous signals are held off meanwhile (rec_signals_hold); called
 * again on the closing thread (a fault in the close) it returns at once. */
void rec_writer_finish(const char *why, int timeout_ms);
/* After fork in the child / after a failed exec: forget the old trace. */
void rec_writer_reset_child(void);
/* In a fork child, right after rec_writer_reset_child: create its trace now,
 * with the credentials the parent had, rather than at its first write, by
 * when a server's worker has dropped them (nginx's workers setuid to
 * www-data: their traces could not be created in root's directory). */
void rec_writer_open_child(void);
/* A new trace of this image after a clean close (window begin, rotation;
 * wlock held, nothing recording, the last writer thread gone or it is the
 * caller): new thread generation, new header (AR_HDR_WINDOW when window),
 * clock rebased, the file opened (rec_window_prepare named it). 0, or -1
 * when the file cannot be created. */
int rec_writer_new_trace(int window);
/* The footer's stop reason for the next close (AR_STOP_COMMAND, ...). */
void rec_writer_set_stop_reason(int why);
/* wlock holder: the stop reason set for the close under way (0 none). */
int rec_writer_stop_reason(void);
/* Wait until one of the thread's buffers comes back (backpressure). */
void rec_writer_wait_returned(rec_thread_t *t);
extern _Atomic int rec_writer_running;
/* Take the writer lock from outside the writer (waits up to timeout_ms):
 * 1 when taken, 0 when not (the caller goes on without it). */
int rec_writer_lock(int timeout_ms);
void rec_writer_unlock(void);

/* ---- stacks and modules (rec_stacks.c) ------------------------------------------- */
int rec_stacks_init(void);
/* Capture and intern the calling stack; 0 when none (disabled or table full). */
uint32_t rec_stack_capture(rec_thread_t *t);
/* Emit module records for every object not reported yet (startup, dlopen). */
void rec_modules_scan(rec_thread_t *t);
void rec_stacks_reset_child(void);
/* A new trace in this process (window, rotation), nothing recording: the
 * interning tables start again (the old ones unmapped); rec_modules_due
 * has the next thread record's owner scan the module map into it. */
void rec_stacks_new_trace(void);
extern _Atomic int rec_modules_due;
/* Fork safety (pthread_atfork handlers; fork_child runs before any other
 * child set-up): no thread of ours is inside libunwind or the loader when
 * fork copies the process, and a child that cannot be sure of that records
 * without stacks. */
void rec_stacks_fork_prepare(void);
void rec_stacks_fork_parent(void);
void rec_stacks_fork_child(void);
/* Around every call into the dynamic loader that takes its write lock,
 * whoever makes it: dl_iterate_phdr (iterate = 1: held for the whole call),
 * dlopen and dlclose (iterate = 0: held for a list update inside). */
void rec_loader_enter(int iterate);
/* dl_iterate_phdr behind the same gate as the shim's unwinding (rec_stacks.c). */
struct dl_phdr_info;
int rec_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
void rec_loader_leave(int iterate);

/* ---- signals (rec_signal.c) -------------------------------------------------------- */
void rec_signals_init(void);
/* Hold off (block on this thread) the asynchronous signals that end a
 * process by default, around closing the trace: one arriving mid-close
 * would run our handler on the very thread it must wait for. The
 * synchronous faults stay deliverable. release() restores the mask, and
 * a signal held meanwhile is delivered then, to a closed trace. */
void rec_signals_hold(sigset_t *old);
void rec_signals_release(const sigset_t *old);
/* rec_signal_deferred: with rec_appending_end, above. */

/* ---- windows (rec_window.c) ------------------------------------------------------------ */
/* A window is a trace that does not start with the process (SPEC 6.11):
 * AR_HDR_WINDOW in its header, the WINDOW record first, and old_size on
 * every free/realloc/reallocarray of a non-NULL pointer. Windows come
 * from the control channel (allocrec --start/--stop PID on a program run
 * with allocrec --paused), from attach (allocrr_attach, rec_attach.c) and
 * from --rotate (every segment after the first).
 *
 * Each trace of a process image after its first gets a file number n = 2,
 * 3, ... (windows and rotation segments share the count): -o out.zst
 * names them out.w2.zst, out.w3.zst (".wN" before a final ".zst", else
 * appended), the default PROG.PID.zst names them PROG.PID.w2.zst; every
 * file goes into the manifest. seq keeps counting across the traces of a
 * process (SPEC 4: a trace's first seq may be large). */

/* Nonzero while the open trace is a window: the free hooks then measure
 * old_size (read only on the recording path, never on the paused one). */
extern int rec_window_trace;
/* Nonzero while the writer switches a rotation's files: the hooks wait
 * (they take no seq meanwhile), so no event falls between two segments. */
extern _Atomic int rec_switching;
/* Start a window now (any thread except a signal handler; not while a
 * window is open): a new trace file with AR_HDR_WINDOW and the WINDOW
 * record (index, reason AR_WINDOW_*, how long the process had run, the
 * allocator's own count of bytes in use when it can tell), the writer
 * thread started; threads that exist get their thread records lazily on
 * their next heap call. Configuration comes from rec_cfg as it is.
 * Returns 0, or -1 when a window or whole-program recording is open, or
 * the file cannot be created (then the state stays REC_PAUSED and a
 * "allocrr:" line says why). Waits up to 10 s for another begin/end. */
int rec_window_begin(int reason);
/* Close the open window (or whole-program trace) cleanly: every thread's
 * events, the footer with stop_reason (AR_STOP_COMMAND, AR_STOP_DETACH),
 * the file closed; then state REC_PAUSED, heap calls pass straight through
 * at the cost of one load and a branch. No-op when nothing is open.
 * Returns 0, or -1 when nothing was open. Blocks up to ~10 s (a thread
 * stuck inside a heap call: the trace is then left without its footer). */
int rec_window_end(int stop_reason);
/* Path of the last trace a window opened ("" none), for the control
 * channel's replies; the caller holds no lock, so it is a copy. */
void rec_window_last_path(char *out, size_t cap);
/* wlock held: the file number of the trace being opened (1 = the image's
 * first: no suffix; rec_window_opened counts them) and its WINDOW record
 * (NULL when it is not a window). */
unsigned rec_window_file_number(void);
/* The output name was given anew (an attach's -o): its first trace takes
 * the name as given, later ones (rotation) number from there. */
void rec_window_new_output(void);
const ar_window_info_t *rec_window_info(void);
/* The allocator's own count of heap bytes in use (glibc mallinfo2,
 * jemalloc stats.allocated, tcmalloc generic.current_allocated_bytes,
 * mimalloc process info); 0 and source "" when it cannot tell. Sets
 * in_shim to REC_SHIM_INTERNAL around the calls; never from a signal
 * handler. */
uint64_t rec_window_heap_in_use(char *source, size_t cap);
/* New image (fork child, exec): window numbering starts again. */
void rec_window_reset_child(void);
/* The next trace of this image: reason AR_WINDOW_* for a window (its
 * WINDOW record is filled now: the heap figure is read here), 0 for the
 * image's whole-program trace. Nothing may be recording. */
void rec_window_prepare(int reason);
/* rec_tracefile.c: the trace just opened is at path. */
void rec_window_opened(const char *path);
/* Wait (up to timeout_ms) while a rotation switches files. */
void rec_switch_wait(int timeout_ms);
/* Whether this image records in windows (--paused, or attached): a stop
 * then returns to REC_PAUSED rather than ending recording for good. */
static inline int rec_windowed(void);

/* ---- the control channel (rec_control.c) -------------------------------------------- */
/* A private directory ($XDG_RUNTIME_DIR/allocrr, else /tmp/allocrr-EUID;
 * 0700, owned by the euid, never through a link) holds PID.ctl while a
 * process can be controlled; allocrec --start/--stop PID writes PID.cmd
 * (rename into place) and reads the answer from PID.ack. A thread of the
 * shim ("allocrr-control", every signal blocked, detached) polls every
 * 100 ms, so programs that block or handle every signal work the same.
 * Returns 0, or -1 (no private directory: a warning). Idempotent. */
int rec_control_start(void);
/* The image ends (exit, exec) or a fork child forgets its parent's
 * channel: remove PID.ctl (only at exit/exec). */
void rec_control_stop(void);
/* fork child: the parent's thread is gone; a paused child gets its own
 * channel (PID.ctl of its own pid), a recording one none. */
void rec_control_fork_child(void);
/* "detach" command: called on the control thread when set (attach sets it,
 * rec_attach.c); returns 0 or -1. Without it, "detach" is refused. */
extern int (*rec_control_detach_fn)(void);

/* ---- start-up without LD_PRELOAD (rec_lifecycle.c) ---------------------------------- */
/* Whether this shim was preloaded (1) or dlopen'ed into a running
 * process (0: attach; it comes after libc in the loader's list). Not
 * preloaded, the shim stays dormant: no constructor work, hooks pass
 * through, no environment edits, rec_init does not run by itself. */
int rec_shim_preloaded(void);
extern int rec_dormant;
static inline int rec_windowed(void)
{
	return rec_cfg.paused || rec_dormant;
}
/* For attach, once, after rec_resolve_with(RTLD_DEFAULT) and
 * rec_config_parse: clocks, threads, fork handlers, no trace and no signal
 * handlers (call rec_signals_init() to add them); state REC_PAUSED. Then
 * rec_window_begin(AR_WINDOW_ATTACH). Returns 0, or -1 (already started). */
int rec_init_attached(void);

/* ---- hooks (rec_hooks.c) ------------------------------------------------------------ */
/* Real libc functions resolved with dlsym(RTLD_NEXT), or, for an injected
 * shim, dlsym(RTLD_DEFAULT) (rec_resolve_with). */
typedef struct rec_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
} rec_real_t;
extern rec_real_t rec_real;
/* Fill rec_real once (dlsym may call malloc: the bootstrap pool serves it). */
void rec_resolve(void);
/* The same from handle (RTLD_NEXT or RTLD_DEFAULT); the first call wins.
 * An injected shim must use RTLD_DEFAULT: its RTLD_NEXT would find libc's
 * malloc even in a program linked against jemalloc. */
void rec_resolve_with(void *handle);

/* ---- helpers (rec_config.c) --------------------------------------------------------- */
/* Program name used in default file names (basename of argv[0]). */
const char *rec_prog_name(void);

/* Small helpers that never allocate. */
size_t rec_strlcpy(char *dst, const char *src, size_t cap);
int rec_getenv_int(const char *name, int dflt);
pid_t rec_gettid(void);
pid_t rec_getpid(void);

#endif /* AR_REC_INTERNAL_H */
