/*
 * workload.h — the compiled form of a trace that replay workers execute: one
 * flat file, mapped read-only, holding per-thread streams of fixed 24-byte
 * ops that name heap blocks by dense slot index instead of by address.
 *
 * Why a compiled form: a trace names blocks by the addresses one particular
 * allocator handed out; another allocator returns other addresses. The
 * compiler resolves every address to a slot once (SPEC 4: in sequence order
 * no address is handed out before its previous owner released it, realloc
 * releases at seq and acquires at seq2), so the worker only indexes an array.
 *
 * Invariants the compiler guarantees and the worker relies on:
 *   - a slot holds at most one live block at any point of the trace order;
 *   - every op on a slot after the first either runs on the same thread as
 *     the previous op on that slot (program order suffices) or follows a
 *     SYNC (AR_WL_F_DEP) until the previous op's stream has done that op;
 *   - every dependency points from a lower to a higher trace sequence
 *     number, so waits cannot form a cycle;
 *   - a thread never runs more than about AR_WL_SYNC_WINDOW of another
 *     thread's ops ahead of the trace's order: where the trace shows a thread
 *     resuming after others did at least that many ops (it waited on a lock,
 *     a queue, a join — synchronisation a heap trace cannot see), a SYNC op
 *     makes it wait for them, so the live set, and with it peak RSS, follows
 *     the recorded program instead of a thread's solo run;
 *   - threads run concurrently in replay only where they allocated
 *     concurrently in the recording (the schedule, below);
 *   - the number of slots is bounded by peak live blocks plus the blocks
 *     freed within the last AR_WL_REUSE_DISTANCE events (slot reuse across
 *     threads waits for the release), so the worker's table stays small.
 *
 * The schedule (AR_WL_SCHEDULE_RECORDED, the default; the measurements are
 * in the comment of AR_WL_HANDOFF_MIN_RUN). In global sequence order the
 * events form runs: maximal stretches of consecutive events of one thread.
 * Where the order switches from thread A's run R to thread B, the switch is
 * a hand-off when
 *   (1) R has at least AR_WL_HANDOFF_MIN_RUN events: no other thread made a
 *       heap call during all of them, which threads that call the allocator
 *       at the same time do not do (their runs are a few events long); or
 *   (2) R has at least AR_WL_HANDOFF_IDLE_RUN events and the recorded times
 *       show B idle while R ran: B's pause (from its previous event to the
 *       resuming one) exceeds AR_WL_HANDOFF_IDLE_FACTOR times B's usual
 *       spacing (a running mean of the time between two of its events
 *       adjacent in sequence order) and exceeds eps, the clock's granularity
 *       (AR_WL_HANDOFF_EPS_UNITS time units, or the recorded clock
 *       resolution if coarser). B stopped calling the allocator while R ran
 *       — it waited for a lock, or did other work — rather than R slipping
 *       in between two of its calls as it does between threads that
 *       allocate at the same time.
 * Times give durations only; the order of events is the sequence order.
 * The recorder reads the clock after taking the seq (SPEC 4, 5.3), so a
 * time may be late (the thread was preempted in between) but never early:
 * an inversion of times across a switch is such a late reading, not
 * evidence of overlap, and a thread's last time before a switch is bounded
 * by the next event's. A trace without times (all equal) decides by (1)
 * alone.
 * A hand-off makes B wait (SYNC) until A's stream has done every op it had
 * before the switch, so B's run never executes beside R in replay, as in
 * the recording. Where both directions are hand-offs (a lock such as
 * Python's GIL passed between threads, threads time-sliced on a busy CPU)
 * the threads replay one at a time; where only B was idle (it allocates
 * rarely) B keeps its recorded place in A's stream and A runs on. Any other
 * switch keeps the loose window above, so finely interleaved threads keep
 * running concurrently. The exact SYNC replaces the window SYNC on A and
 * has a budget of its own: a stream may hold one per run it resumes, at
 * most min(its events, the other threads' events / AR_WL_HANDOFF_IDLE_RUN),
 * so in all the file grows by at most one op per AR_WL_HANDOFF_IDLE_RUN
 * events (each hand-off ends a run that long); past it the SYNC budget
 * above is used. With both spent the switch keeps the window, counted as
 * a dropped hand-off. The header counts the switches, the
 * hand-offs kept and dropped, and the switches left concurrent.
 * With AR_WL_SCHEDULE_FREE no hand-off is made (the schedule of
 * AR_WL_VERSION 4): threads contend as if nothing had serialised them.
 *
 * A window trace (SPEC 6.11: recording began while the heap was in use)
 * frees and reallocs blocks it never saw allocated; each carries the old
 * block's size. Such a pre-existing block gets a slot of its own (never
 * used before it, so nothing in the window collides with it) and a MALLOC
 * of old_size bytes in the *prelude* of the stream that frees or reallocs
 * it: the first prelude_ops ops of the stream, run before the replay window
 * (after the worker's baselines, so the heap figures include them; untimed,
 * not counted as calls), in the order of the blocks' recorded addresses
 * (wl_compile.c's order_prelude says why). The thread that will free the block allocates it,
 * so the free needs no dependency on another stream and hits the same
 * thread cache as the recorded free most likely did. The live bytes of the
 * header (peak, samples) count the pre-existing blocks from the start until
 * their release, like alloctrace stats.
 *
 * Dependencies are waits on progress: an op that needs another stream's op
 * done first (the block's previous op ran there, or a slot released there
 * is reused) is preceded by a SYNC flagged AR_WL_F_DEP naming that stream
 * and how many of its ops must be done. Nothing is ever patched into an op
 * already written, so the compiler writes each stream once, front to back.
 *
 * The file layout (version 8; little-endian, native structs; the cache is
 * per machine and carries the version in its name):
 *   ar_wl_header_t | segments ... | ar_wl_seg_t[nsegs] | ar_wl_thread_t[nthreads]
 * A stream is a list of segments (its entries of the segment index, from
 * seg_first, in order), each of at most seg_ops ops in the compact encoding
 * of wl_codec.c (about 3 bytes per op instead of 24; docs/BENCHMARKS.md,
 * "Traces larger than RAM"). The compiler appends segments as streams fill
 * them and writes the index and the thread table last, so its memory is one
 * segment per stream, never the trace. A reader decodes a segment at a time
 * (ar_wl_cursor_t), or every stream at once into memory it provides
 * (ar_wl_load) when the decoded ops fit; the worker does the first for a
 * workload larger than --workload-memory and the second otherwise.
 */
#ifndef AR_WORKLOAD_H
#define AR_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "ar_trace.h"

#define AR_WL_MAGIC 0x4c57524155ull /* "ARWL" + format byte, little-endian */
/* Bump when the layout or the compiler's output for a given trace changes:
 * the cache file name carries it, so an old cache is never misread. */
#define AR_WL_VERSION 9 /* 3: peak_thread/peak_op (allocreplay --access-pass); 4: streams only
			   * for threads with events, live bytes saturate at 2^64-1; 5: the
			   * recorded schedule (hand-off SYNCs) and its counters; 6: the
			   * content digest and the trace's size and indexed event count;
			   * 7: window traces, the prelude of pre-existing blocks;
			   * 8: compact segments, dependencies as SYNC ops;
			   * 9: preludes in the blocks' recorded address order */
/* Replay threads at most: one per traced thread with events, all alive at
 * once in the worker (1 MiB stack each). A trace with more is refused when
 * compiled (AR_ELIMIT), not started and killed by the thread limit. */
#define AR_WL_MAX_THREADS 4096
/* Ops per segment at most: decoded, 384 KiB per stream; fewer when a trace
 * has so many threads that one segment each would pass AR_WL_SEG_MEMORY. */
#define AR_WL_SEG_OPS 16384u
#define AR_WL_SEG_OPS_MIN 256u
#define AR_WL_SEG_MEMORY (128u << 20)
/* The decoded ops the worker holds in memory at most by default
 * (--workload-memory): a larger workload is streamed a segment at a time. */
#define AR_WL_RESIDENT_DEFAULT (512ull << 20)
/* A slot freed by another thread is reused only once this many events have
 * passed in trace order: the dependency it adds is then almost always
 * already satisfied in replay, and slots stay <= peak live + this. */
#define AR_WL_REUSE_DISTANCE 4096
/* RSS timeline: about this many sample markers per trace, but never more
 * often than every AR_WL_SAMPLE_MIN_EVENTS events: a sample reads
 * /proc/self/statm (a few microseconds), which must stay a small part of the
 * replay's wall time (the worker reports the total as sampling_ns). */
#define AR_WL_SAMPLES 1000
#define AR_WL_SAMPLE_MIN_EVENTS 2048
#define AR_WL_NOSLOT 0xffffffffu
/* How far (in another thread's ops) a thread may run ahead of the recorded
 * interleaving before a SYNC holds it back; and how many SYNC ops a stream
 * may hold per AR_WL_SYNC_WINDOW events of the trace (a bound on the file:
 * past it, fidelity degrades to slot dependencies only, counted). */
#define AR_WL_SYNC_WINDOW 1024
#define AR_WL_SYNC_PER_WINDOW 8
/* A run of at least this many events of one thread, with no other thread's
 * event in between, ends in a hand-off whatever the times say (the
 * schedule, above). Threads allocating at the same time almost never
 * produce such a run; a lock holder does: a 4-thread Python program under
 * the GIL made runs of ~15000 events (docs/RESULTS.md, "Schedule"). */
#define AR_WL_HANDOFF_MIN_RUN 128
/* A run of at least this many events ends in a hand-off also when the
 * resuming thread paused more than this factor times its usual spacing:
 * under exponential gaps, a thread that kept calling pauses that long with
 * probability e^-8 (0.03 %). */
#define AR_WL_HANDOFF_IDLE_RUN 4
#define AR_WL_HANDOFF_IDLE_FACTOR 8
/* Clock granularity for comparing times of two threads, in the trace's time
 * units (SPEC 5.3): two readings this close are not ordered. */
#define AR_WL_HANDOFF_EPS_UNITS 4

/* Which schedule the compiler emits (the schedule, above). */
typedef enum ar_wl_schedule {
	AR_WL_SCHEDULE_RECORDED = 0, /* hand-offs where the recording shows them (default) */
	AR_WL_SCHEDULE_FREE = 1,     /* the loose window only */
} ar_wl_schedule_t;

/* Op kinds: one per heap function, so each gets its own latency histogram. */
typedef enum ar_wl_kind {
	AR_WL_MALLOC = 0,
	AR_WL_CALLOC,
	AR_WL_REALLOC,
	AR_WL_REALLOCARRAY,
	AR_WL_FREE,
	AR_WL_POSIX_MEMALIGN,
	AR_WL_ALIGNED_ALLOC,
	AR_WL_MEMALIGN,
	AR_WL_VALLOC,
	AR_WL_PVALLOC,
	AR_WL_NCALLS,                /* kinds below are heap calls, timed */
	AR_WL_SAMPLE = AR_WL_NCALLS, /* RSS sample marker, not a call */
	AR_WL_SYNC,                  /* wait for another stream's progress, not a call */
	AR_WL_NKINDS
} ar_wl_kind_t;

enum {
	AR_WL_F_DEP = 1u << 0,    /* on a SYNC: a block's dependency, not the schedule */
	AR_WL_F_NOSRC = 1u << 2,  /* realloc of NULL (or of a pointer the trace
				   * never returned): input is NULL */
	AR_WL_F_TRACE_NULL = 1u << 3, /* the traced call returned NULL */
};

/* One op. slot: the block operated on (free, realloc: input and result;
 * allocations: result; AR_WL_NOSLOT when the result is discarded because the
 * traced call failed; SAMPLE: sample index; SYNC: the stream to wait for).
 * size: bytes (element size for calloc/reallocarray; SAMPLE: global event
 * index; SYNC: how many of that stream's ops must be done). arg: element
 * count for calloc/reallocarray, alignment for the memalign family, live
 * bytes for SAMPLE. This is the decoded form; the file holds it encoded. */
typedef struct ar_wl_op {
	uint8_t kind;
	uint8_t flags;
	uint16_t reserved;
	uint32_t slot;
	uint64_t size;
	uint64_t arg;
} ar_wl_op_t;

/* One segment: nops ops encoded in bytes bytes at file offset offset. */
typedef struct ar_wl_seg {
	uint64_t offset;
	uint32_t bytes;
	uint32_t nops;
} ar_wl_seg_t;

typedef struct ar_wl_thread {
	uint32_t trace_index; /* ar_event_t.thread */
	uint32_t reserved;
	uint64_t op_base;     /* ops of the streams before it: its ops' place in ar_wl_load's memory */
	uint64_t seg_first;   /* its first entry of the segment index */
	uint64_t nsegs;       /* its entries, in stream order */
	uint64_t nops;        /* ops, SAMPLE and SYNC ops included */
	uint64_t ops_by_kind[AR_WL_NKINDS]; /* prelude ops not included */
	uint64_t prelude_ops; /* the first ops: MALLOCs of pre-existing blocks, run before the window */
} ar_wl_thread_t;

typedef struct ar_wl_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nthreads;
	uint32_t nslots;
	uint32_t nsamples;
	uint64_t file_bytes;
	char trace_sha256[65];
	char reserved0[7];
	uint64_t events;            /* trace events read (valid prefix) */
	uint64_t calls;             /* heap calls replayed (events minus skipped) */
	uint64_t ops_by_kind[AR_WL_NKINDS];
	uint64_t trace_allocs;      /* successful blocks the trace created */
	uint64_t peak_live_bytes;   /* requested bytes, trace order */
	uint64_t peak_live_blocks;
	uint64_t final_live_bytes;
	uint64_t skipped_unknown_frees;  /* free of a pointer the trace never returned */
	uint64_t unknown_reallocs;       /* realloc of such a pointer: replayed as realloc(NULL) */
	uint64_t lost_blocks;            /* an address returned while still live (missed free) */
	uint64_t trace_null_results;     /* traced allocations that returned NULL */
	uint64_t cross_thread_deps;      /* op on a block last touched by another thread */
	uint64_t reuse_deps;             /* slot reused after another thread released it */
	uint64_t skipped_unknown_ops;    /* op codes this compiler does not know */
	uint32_t trace_status;           /* ar_status_t of the trace */
	uint32_t reserved1;
	uint64_t compile_ns;             /* how long compiling took */
	uint64_t sync_ops;               /* SYNC ops emitted (all streams) */
	uint64_t sync_dropped;           /* SYNCs not emitted: a stream's budget was spent */
	/* Where the live requested bytes first reach peak_live_bytes: right
	 * after op peak_op - 1 of stream peak_thread, i.e. before its op
	 * peak_op (== nops when the peak op is the stream's last). The worker's
	 * --access-pass walks the live blocks there. */
	uint32_t peak_thread;
	uint32_t schedule;               /* ar_wl_schedule_t it was compiled with */
	uint64_t peak_op;
	/* The schedule (above): how often the merged order changed thread, and
	 * what each switch became. switches = handoffs + handoffs_dropped +
	 * switches_interleaved. */
	uint64_t switches;
	uint64_t handoffs;               /* exact SYNC emitted */
	uint64_t handoffs_dropped;       /* a hand-off, but the stream's SYNC budget was spent */
	uint64_t switches_interleaved;   /* neither a long run nor an idle resumer: concurrent */
	/* What ties the file to its trace beyond the trace_sha256 string, so a
	 * cache can check a workload against the trace it is about to stand for
	 * (wl_cache.h): the trace's size in bytes and its event count as its
	 * index announced (ar_reader_event_count) when it was compiled. */
	uint64_t trace_file_bytes;
	uint64_t trace_indexed_events;
	/* A window trace (SPEC 6.11; window 0 for other traces, every field
	 * below 0): its WINDOW record's index and reason (0 without one), the
	 * pre-existing blocks replayed in the preludes and their bytes, and the
	 * allocator's in-use bytes at the window's start (0 = unknown). */
	uint32_t window, window_index, window_reason, reserved2;
	uint64_t preexisting_blocks, preexisting_bytes;
	uint64_t heap_at_start_bytes;
	/* Where things are (the layout above). max_seg_bytes bounds every
	 * segment's encoded size: a reader's buffer of that many bytes holds
	 * any of them. */
	uint64_t index_offset;           /* ar_wl_seg_t[nsegs] */
	uint64_t threads_offset;         /* ar_wl_thread_t[nthreads] */
	uint64_t nsegs;
	uint32_t seg_ops, max_seg_bytes;
	uint64_t total_ops;              /* every stream's nops */
	/* SHA-256 of the content, ar_wl_digest(): written last by the compiler,
	 * so a file cut or damaged after the compile no longer matches it. */
	uint8_t content_sha256[32];
} ar_wl_header_t;

/* Static name of a kind ("malloc", ..., "sample"). */
const char *ar_wl_kind_name(unsigned kind);
/* Kind for a name, or -1. */
int ar_wl_kind_from_name(const char *name);

/* An opened workload: the file (segments are read with pread, so reading
 * a workload never faults its pages into the reader's memory), the
 * mapping of its header, index and thread table, and, after ar_wl_load,
 * every stream's decoded ops. */
typedef struct ar_workload {
	int fd;
	void *map;
	size_t map_bytes;
	const ar_wl_header_t *hdr;
	const ar_wl_seg_t *segs;
	const ar_wl_thread_t *threads;
	ar_wl_op_t *decoded; /* ar_wl_load's memory, NULL before */
} ar_workload_t;

/*
 * Open the workload file at path and check it: magic, version, sizes, the
 * index and the thread table inside the file, every stream's segments
 * inside the data and adding up to its ops. Segment contents are checked
 * as they are decoded. Returns 0, or -1 with errno set (EINVAL: not a valid
 * workload of this version) and a message in err[0..errcap).
 */
int ar_wl_open(ar_workload_t *w, const char *path, char *err, size_t errcap);
void ar_wl_close(ar_workload_t *w);

/* Bytes of every stream's decoded ops (hdr->total_ops ops). */
uint64_t ar_wl_decoded_bytes(const ar_workload_t *w);
/*
 * Decode every stream into mem (ar_wl_decoded_bytes of it, 8-byte aligned,
 * the caller's: the worker gives an anonymous mapping, never the allocator
 * under test); then ar_wl_ops works. raw: a buffer of hdr->max_seg_bytes.
 * Returns 0, or -1 with a message naming the segment and its offset.
 */
int ar_wl_load(ar_workload_t *w, void *mem, void *raw, char *err, size_t errcap);
/* Op array of stream i, after ar_wl_load. */
static inline const ar_wl_op_t *ar_wl_ops(const ar_workload_t *w, uint32_t i)
{
	return w->decoded + w->threads[i].op_base;
}

/* One stream read a segment at a time. Set w, thread, ops (room for
 * hdr->seg_ops) and raw (hdr->max_seg_bytes), the rest zero. */
typedef struct ar_wl_cursor {
	const ar_workload_t *w;
	uint32_t thread;
	ar_wl_op_t *ops;
	void *raw;
	uint64_t seg;   /* segments of the stream read so far */
	uint64_t first; /* stream index of ops[0] */
	uint32_t n;     /* ops in ops[] */
} ar_wl_cursor_t;
/*
 * Decode the stream's next segment into c->ops: 1 (c->first and c->n say
 * which ops), 0 at the end of the stream, -1 with a message when the
 * segment cannot be read or decodes to anything but what the index says.
 * When readahead is set, the kernel is asked to read the segment after it
 * (posix_fadvise WILLNEED), so a stream read from disk does not wait.
 */
int ar_wl_cursor_next(ar_wl_cursor_t *c, int readahead, char *err, size_t errcap);

/* The compact encoding of a segment (wl_codec.c). Encode n ops into out
 * (room for n * AR_WL_OP_MAX_BYTES); returns the bytes written. */
#define AR_WL_OP_MAX_BYTES 32u
size_t ar_wl_encode(const ar_wl_op_t *ops, uint32_t n, uint8_t *out);
/* Decode exactly n ops from in[0..bytes) into ops: 0, or -1 when the bytes
 * are not n well-formed ops (cut, overlong, unknown kind, left over). */
int ar_wl_decode(const uint8_t *in, size_t bytes, ar_wl_op_t *ops, uint32_t n);

/*
 * Compile the trace at trace_path into a workload file at out_path (created
 * or replaced). sha256 is stored in the header (may be ""). Reads events in
 * global sequence order; a truncated or corrupt trace compiles its valid
 * prefix and the header's trace_status says so. Memory: a hash table of the
 * live addresses and one record per slot, never proportional to the address
 * space or the trace length. Returns 0, or a negative AR_E* code with err
 * filled (err->msg names the trace and the problem).
 */
int ar_wl_compile(const char *trace_path, const char *out_path, const char *sha256,
		  ar_error_t *err);

/* Told how far a compile is: done events of total (the trace's event count
 * as indexed, so a truncated trace's prefix; 0 if unknown). */
typedef void ar_wl_progress_fn(void *ctx, uint64_t done, uint64_t total);
/* Events between two calls of the hook (a power of two: the test is a mask). */
#define AR_WL_PROGRESS_EVERY 65536u

/*
 * ar_wl_compile that also calls progress(ctx, done, total) every
 * AR_WL_PROGRESS_EVERY events and once at the end; progress may be NULL.
 */
int ar_wl_compile_progress(const char *trace_path, const char *out_path, const char *sha256,
			   ar_wl_progress_fn *progress, void *ctx, ar_error_t *err);

/* Everything a compile may be told; zero-initialised means the defaults. */
typedef struct ar_wl_compile_opts {
	ar_wl_schedule_t schedule;
	ar_wl_progress_fn *progress; /* may be NULL */
	void *progress_ctx;
	/* 0: out_path is created or replaced (mode 0644). 1: out_path must not
	 * exist; it is created O_EXCL, mode 0600 (a cache's temporary file:
	 * whatever sits at the name, a symbolic link included, is never
	 * followed, truncated or removed; the compile fails with AR_EIO and
	 * sys_errno EEXIST). Either way a symbolic link at out_path is never
	 * followed (O_NOFOLLOW). */
	int exclusive;
} ar_wl_compile_opts_t;

/*
 * ar_wl_compile with options (opts may be NULL: the defaults). The schedule
 * changes the output, so a cache of workloads compiled with a non-default
 * schedule must key on it (header.schedule says which one a file has).
 */
int ar_wl_compile_opts(const char *trace_path, const char *out_path, const char *sha256,
		       const ar_wl_compile_opts_t *opts, ar_error_t *err);

/*
 * The content digest of an opened workload into out: SHA-256 (OpenSSL) of
 * the file from the end of the header to its end (segments, index, thread
 * table: the order the compiler writes them), then the header with
 * content_sha256 zeroed. The compiler stores it in
 * header.content_sha256; a reader that recomputes it and compares finds a
 * file changed since (a cut, a damaged page, an edited header). It proves
 * nothing against someone who can write the file: they can store the
 * digest of what they wrote (wl_cache.h says what defends against that).
 * Reads the file with pread (its pages never enter the reader's RSS).
 * Returns 0, or -1 (a read error, or out of memory in OpenSSL). Defined in wl_compile.c, not in the worker
 * (which does not link OpenSSL): allocreplay checks before it starts one.
 */
int ar_wl_digest(const ar_workload_t *w, uint8_t out[32]);

#endif
