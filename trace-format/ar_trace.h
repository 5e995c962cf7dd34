/*
 * ar_trace.h — the allocrr trace format library: the only code that knows the
 * bytes of a trace file. This header is its manual; trace-format/SPEC.md is the
 * normative description of the bytes themselves.
 *
 * A trace is a sequence of zstd frames:
 *   - a skippable header frame at offset 0 (program, pid, clocks, op table);
 *   - then blocks, each a small skippable "descriptor" frame followed by one
 *     regular zstd frame. A metadata block decodes alone; since 2.0 an
 *     events block may need its thread's previous events block (a chain,
 *     SPEC 3.4), which always comes earlier in the file. An events block holds the events
 *     of one thread; a metadata block holds thread, stack, module and footer
 *     records, and (since 1.1) what the process ran on and its RSS over time
 *     (ar_reader_process, ar_reader_rss_at).
 * `zstd -d` therefore works on a 1.x trace (on a 2.0 trace up to its first
 * chained block), and any complete prefix is readable.
 *
 * Writing (recorder side):
 *   ar_writer_open() once; each recording thread appends events to its own
 *   ar_evbuf_t with ar_evbuf_append() (no lock, no allocation, no syscall);
 *   a full buffer is handed to whoever owns the writer, which compresses and
 *   writes it with ar_writer_write_events(). Metadata goes through ar_metabuf_t
 *   and ar_writer_write_meta(). ar_writer_close() writes the footer.
 *   The writer allocates only through the ar_mem_t the caller supplies (at
 *   open, and zstd's workspace on the first block), so it can live under malloc.
 *
 * Reading (tools side):
 *   ar_reader_open() indexes the file by its descriptors without decoding the
 *   events; ar_reader_next() streams events in file (per-block) order and
 *   ar_reader_next_merged() in global sequence order across threads. Memory is
 *   bounded by the index and one decoded block per active thread, never by the
 *   size of the trace. Every length, index and enum is checked; errors carry
 *   the byte offset.
 *
 * Functions returning int give 0 (or a positive count where stated) on
 * success and a negative AR_E* code on failure; ar_strerror() names the code.
 */
#ifndef AR_TRACE_H
#define AR_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AR_TRACE_VERSION_MAJOR 2 /* what the writer writes */
#define AR_TRACE_VERSION_MINOR 1
/* Readers accept majors 1 and 2 with any minor, skipping what they do not
 * know, and refuse any other major. 1.1 added the ALLOCATOR, RSS_SAMPLE and
 * PROCESS records (SPEC 6.8-6.10); 1.2 the header's source format and scrub
 * note and flag bits 2-4 (SPEC 3.1); 1.3 window traces: the WINDOW record,
 * flag bit 5 and the sized ops 11-13 that carry a free's or realloc's
 * old_size (SPEC 5.1, 6.11). 2.0 is 1.3 plus chained events blocks (SPEC
 * 3.4): a block may be compressed against the decoded bytes of its thread's
 * previous events block, which a 1.x reader cannot decode. A header given
 * to ar_writer_open with major 1 gets a 1.x trace without chains. 2.1 adds
 * the PROCESS record's peak source and the machine's busy CPU time (SPEC
 * 6.10). */
#define AR_TRACE_VERSION_MAJOR_MIN 1 /* the oldest major readers accept */

/* ---- error codes ------------------------------------------------------ */
enum {
	AR_OK = 0,
	AR_EIO = -1,        /* read/write/seek failed; errno is kept in ar_error_t */
	AR_ENOMEM = -2,     /* the caller's allocator returned NULL */
	AR_EFORMAT = -3,    /* not a trace, or corrupt: the offset says where */
	AR_ETRUNCATED = -4, /* the file ends inside a frame: earlier blocks are valid */
	AR_EVERSION = -5,   /* a major version this reader does not know */
	AR_EFULL = -6,      /* buffer has no room for this event/record: flush it */
	AR_EINVAL = -7,     /* bad argument from the caller */
	AR_ELIMIT = -8,     /* input exceeds a limit of SPEC section 7 */
	AR_ECOMPRESS = -9,  /* zstd refused to compress/decompress */
};

/* A static string naming an AR_E* code. */
const char *ar_strerror(int code);

/* What went wrong while reading or writing, for a message a user can act on. */
typedef struct ar_error {
	int code;        /* AR_E* */
	int sys_errno;   /* errno for AR_EIO, else 0 */
	uint64_t offset; /* byte offset in the file where the problem is */
	char msg[256];   /* human-readable, names what was expected; may quote
			  * bytes of the file (an op name): escape it before
			  * showing it (allocrr's tools do, common/ar_escape.h) */
} ar_error_t;

/* ---- operations ------------------------------------------------------- */
/* SPEC 5.1: op codes are stable forever; new ops get new codes and are
 * described by the header's op table, so old readers can still skip them. */
typedef enum ar_op {
	AR_OP_MALLOC = 1,
	AR_OP_CALLOC = 2,
	AR_OP_REALLOC = 3,
	AR_OP_REALLOCARRAY = 4,
	AR_OP_FREE = 5,
	AR_OP_POSIX_MEMALIGN = 6,
	AR_OP_ALIGNED_ALLOC = 7,
	AR_OP_MEMALIGN = 8,
	AR_OP_VALLOC = 9,
	AR_OP_PVALLOC = 10,
	AR_OP_MAX_KNOWN = 10,
	AR_OP_LIMIT = 32 /* op codes are 5 bits */
} ar_op_t;

/* Which fields an op carries (SPEC 5.2), in encoding order. */
enum {
	AR_F_SEQ2 = 1u << 0,   /* a second sequence number (realloc: after the call) */
	AR_F_PTR = 1u << 1,    /* input pointer (free, realloc) */
	AR_F_ALIGN = 1u << 2,  /* requested alignment */
	AR_F_COUNT = 1u << 3,  /* element count (calloc, reallocarray) */
	AR_F_SIZE = 1u << 4,   /* size in bytes (element size for calloc) */
	AR_F_RESULT = 1u << 5, /* returned pointer */
	AR_F_ALL = 0x3f
};

/* Name ("malloc") of a known op, or NULL. */
const char *ar_op_name(unsigned op);
/* Field mask of a known op (SPEC 5.2), or 0 for an unknown one. */
unsigned ar_op_fields(unsigned op);

/* One heap call. Fields an op does not carry are 0. */
typedef struct ar_event {
	uint64_t seq;     /* global order (SPEC 4): the call's release point for realloc */
	uint64_t seq2;    /* realloc/reallocarray: taken after the call returned */
	uint64_t time_ns; /* monotonic ns since the header's start_mono_ns, a
			   * multiple of the header's time_unit_ns once read back */
	uint64_t ptr;     /* input pointer */
	uint64_t align;
	uint64_t count;
	uint64_t size;
	uint64_t result;  /* returned pointer; 0 when the call returned NULL (failed,
			   * or realloc(p, 0) which freed p) */
	uint32_t thread;  /* dense thread index within the trace */
	uint32_t stack;   /* stack id, 0 = none recorded */
	uint32_t error;   /* a failed call's error code (posix_memalign's return
			   * value, errno for the others), 0 when none; kept only
			   * with a NULL result, at most 65535 (SPEC 5.3) */
	uint8_t op;       /* ar_op_t, or a code the header's op table names */
	uint64_t old_size; /* since 1.3, free, realloc and reallocarray in a window
			    * trace (AR_HDR_WINDOW): malloc_usable_size(ptr)
			    * measured just before the call, so a block allocated
			    * before the window can be replayed; 0 = not measured.
			    * On disk such an event is one of the sized ops 11-13
			    * (SPEC 5.1); the reader gives it back as AR_OP_FREE,
			    * AR_OP_REALLOC or AR_OP_REALLOCARRAY with old_size set,
			    * and ar_evbuf_append takes it the same way. */
} ar_event_t;

/* ---- header ------------------------------------------------------------ */
#define AR_CMDLINE_MAX 4096
/* Event times are kept in units of a power of two of ns (SPEC 3.1, 5.3): 16
 * ns unless the header given to ar_writer_open names a coarser unit up to
 * AR_TIME_UNIT_MAX_NS. 16 ns is finer than what a clock read costs and a
 * byte per event cheaper than nanoseconds; the recorder writes 64 ns, which
 * its sampled clock does not resolve anyway (docs/BENCHMARKS.md). */
#define AR_TIME_UNIT_SHIFT 4
#define AR_TIME_UNIT_NS (1u << AR_TIME_UNIT_SHIFT)
#define AR_TIME_UNIT_MAX_NS (1u << 20)
/* 1 when a writer keeps `ns` as its time unit (ar_writer_open). */
static inline int ar_time_unit_ok(uint64_t ns)
{
	return ns >= AR_TIME_UNIT_NS && ns <= AR_TIME_UNIT_MAX_NS && !(ns & (ns - 1));
}
#define AR_VERSION_STR_MAX 64
#define AR_SOURCE_FORMAT_MAX 64
#define AR_SCRUB_NOTE_MAX 1024

typedef struct ar_op_desc {
	char name[24];
	uint8_t fields; /* AR_F_* mask */
} ar_op_desc_t;

typedef struct ar_header {
	uint16_t version_major, version_minor;
	uint32_t flags;              /* AR_HDR_* */
	char recorder_version[AR_VERSION_STR_MAX];
	uint64_t pid, ppid;
	char cmdline[AR_CMDLINE_MAX]; /* argv joined by single spaces, NUL-terminated */
	uint64_t start_wall_ns;      /* CLOCK_REALTIME at start, ns since the epoch */
	uint64_t start_mono_ns;      /* CLOCK_MONOTONIC at start: event times count from here */
	uint64_t clock_resolution_ns;
	uint64_t page_size;
	uint64_t time_unit_ns;       /* event times are stored in these units (SPEC 5.3);
				      * ar_writer_open keeps a power of two from
				      * AR_TIME_UNIT_NS to AR_TIME_UNIT_MAX_NS and
				      * writes AR_TIME_UNIT_NS for any other value */
	ar_op_desc_t ops[AR_OP_LIMIT]; /* op table; name[0]==0 for unused codes */
	/* Since 1.2 (both "" in older traces): the format an imported trace was
	 * converted from ("memory_replay", "mtrace"; "" = written by allocrr
	 * itself), and what `alloctrace scrub` removed and kept ("" = never
	 * scrubbed). */
	char source_format[AR_SOURCE_FORMAT_MAX];
	char scrub_note[AR_SCRUB_NOTE_MAX];
} ar_header_t;

enum {
	AR_HDR_STACKS = 1u << 0,    /* events may carry stack ids */
	AR_HDR_SYNTHETIC = 1u << 1, /* generated, not recorded from a process */
	AR_HDR_SCRUBBED = 1u << 2,  /* since 1.2: rewritten by `alloctrace scrub` (scrub_note says how) */
	AR_HDR_IMPORTED = 1u << 3,  /* since 1.2: converted from another tool's format (source_format) */
	AR_HDR_NO_TIMES = 1u << 4,  /* since 1.2: the source had no event times; every time is 0 */
	AR_HDR_WINDOW = 1u << 5,    /* since 1.3: recording began while the process's heap was
				     * already in use (attach, a paused start, a rotation):
				     * frees and reallocs carry old_size, the WINDOW record
				     * says what the heap held at the start */
};

/* Fill h with this format version, the standard op table and zeroes. */
void ar_header_init(ar_header_t *h);
/* 1 when code is one of the sized ops of SPEC 5.1 (since 1.3) in a trace
 * with header h: the on-disk form of a free / realloc / reallocarray with an
 * old_size, which the reader never returns (those events carry the base op),
 * so tools listing h->ops skip it. */
int ar_op_is_sized(const ar_header_t *h, unsigned code);

/* ---- metadata records --------------------------------------------------- */
typedef struct ar_thread_info {
	uint32_t index;      /* dense index used by events */
	uint64_t os_tid;
	char name[32];       /* last name seen, "" if none */
	uint64_t start_seq;  /* 0 if no start record was seen */
	uint64_t exit_seq;   /* 0 if the thread never exited inside the trace */
	uint64_t events;     /* events of this thread in complete blocks */
	uint64_t start_time_ns, exit_time_ns; /* the THREAD_START / THREAD_EXIT times
					       * (ns since start), 0 without them */
} ar_thread_info_t;

#define AR_STACK_MAX_DEPTH 256

typedef struct ar_module_info {
	uint64_t base, size;  /* load address and extent of the mapping */
	char path[512];
	uint8_t build_id[64];
	uint32_t build_id_len;
} ar_module_info_t;

/*
 * What the recorded process ran on and how much memory it really used
 * (SPEC 6.8, 6.10; since format 1.1). The recorder writes the allocator at
 * start and the rest when it closes the trace; a reader fills what the trace
 * holds and says which parts it found. Byte figures are the kernel's resident
 * set (RSS: /proc/self/statm resident pages x page size), of the whole
 * process, recorder included.
 */
#define AR_SONAME_MAX 128
#define AR_ALLOC_VERSION_MAX 64
typedef struct ar_process_info {
	/* ALLOCATOR record: the object that served the program's malloc, proven
	 * like the replay worker does (dladdr + realpath of the malloc the
	 * recorder's shim forwards to). */
	int has_allocator;                  /* 0: the trace has no ALLOCATOR record */
	char alloc_path[512];               /* canonical path, "/usr/lib/x86_64-linux-gnu/libc.so.6" */
	char alloc_soname[AR_SONAME_MAX];   /* DT_SONAME ("libc.so.6"), else the path's basename */
	char alloc_version[AR_ALLOC_VERSION_MAX]; /* "2.36", "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"; "" = unknown */
	/* PROCESS record, written when the trace was closed: absent from a
	 * truncated trace (the first RSS sample, at seq 0, still gives the
	 * start). */
	int has_process;                    /* 0: the fields below are 0 */
	uint64_t start_rss_bytes;  /* RSS when the recorder started, before main; 0 = unknown */
	uint64_t start_time_ns;    /* when start_rss_bytes was read, ns since the header's start */
	uint64_t peak_rss_bytes;   /* the peak RSS during the trace, as peak_source says; 0 = unknown */
	uint64_t end_rss_bytes;    /* RSS at close; 0 = unknown */
	uint64_t end_time_ns;      /* when the trace was closed, ns since start */
	uint64_t sample_interval_ns; /* the RSS sampling period the recorder started with */
	/* CPU time of the whole process (every thread, the recorder's included)
	 * at close, getrusage(RUSAGE_SELF): what an allocator changes even when
	 * wall time is set by clients or I/O. has_cpu 0: the record predates
	 * these fields. */
	int has_cpu;
	uint64_t cpu_user_ns, cpu_sys_ns;
	/* How much of the RSS was the recorder's own (its buffers, the
	 * compressor's; mincore of its mappings) when the sampled RSS was at its
	 * highest: the recorded peak less this is the program's; 0 = unknown. */
	uint64_t recorder_rss_bytes;
	/* How much of the CPU time since the trace began was the recorder's
	 * own (since 2.0; both 0 = unknown): its writer threads' CPU time,
	 * measured, and the recording work on the program's threads,
	 * estimated from a sample of their calls. The CPU time since the
	 * start less both is the program's. */
	int has_recorder_cpu;
	uint64_t recorder_writer_cpu_ns, recorder_calls_cpu_ns;
	/* The process's CPU times when the trace began (since 2.0; has_cpu_start
	 * 0: unknown, taken as 0): a window's trace starts in a process that
	 * has run for a while, and its own CPU time is the difference. */
	int has_cpu_start;
	uint64_t cpu_user_start_ns, cpu_sys_start_ns;
	/* Where peak_rss_bytes came from (since 2.1): AR_PEAK_HWM or
	 * AR_PEAK_SAMPLED; AR_PEAK_UNSAID in older traces and for values a later
	 * version may add. A window's trace in a process that reached its
	 * high-water mark before the window began cannot use VmHWM. */
	unsigned peak_source;
	/* The whole machine while the trace ran (since 2.1; both 0 = unknown):
	 * the CPU time all its CPUs spent busy, every process's (/proc/stat),
	 * and how many CPUs were online. Less the process's own CPU time it is
	 * the other work that ran beside the program: CPU time measured under
	 * much of it (shared caches and cores) runs long. */
	uint64_t machine_busy_ns, machine_cpus;
} ar_process_info_t;

enum {
	AR_PEAK_UNSAID = 0,  /* VmHWM at close, which in a window's trace may predate the window */
	AR_PEAK_HWM = 1,     /* VmHWM at close, reached during this trace: the exact peak */
	AR_PEAK_SAMPLED = 2, /* the highest RSS sampled during this window's trace: a lower bound */
};

/* One RSS sample (SPEC 6.9): at time_ns (ns since the header's start, the
 * clock of events), the process was rss_bytes resident and the sequence
 * counter (SPEC 4) stood at seq: events with a seq up to it happened before. */
typedef struct ar_rss_sample {
	uint64_t time_ns;
	uint64_t seq;
	uint64_t rss_bytes;
} ar_rss_sample_t;

typedef struct ar_footer {
	uint64_t events;        /* events the writer wrote */
	uint64_t threads;
	uint64_t blocks;
	uint64_t last_seq;
	uint64_t end_time_ns;
	uint64_t dropped_events; /* events the recorder had to give up on */
	uint64_t events_by_op[AR_OP_LIMIT];
	/* Since 1.2 (SPEC 6.7), only in the footer of a bounded recording:
	 * why it stopped before the program ended, and the heap calls the
	 * program made after that (not recorded: outside the window). */
	uint64_t stop_reason; /* AR_STOP_NONE, AR_STOP_MAX_SIZE, AR_STOP_DURATION */
	uint64_t after_stop;
} ar_footer_t;
enum {
	AR_STOP_NONE = 0, AR_STOP_MAX_SIZE = 1, AR_STOP_DURATION = 2,
	/* since 1.3: a window ended while the program went on */
	AR_STOP_COMMAND = 3, /* allocrec --stop PID (or its signal) paused recording */
	AR_STOP_DETACH = 4,  /* allocrec --detach PID, or the end of an attach's --duration */
	AR_STOP_ROTATE = 5,  /* --rotate: the next segment is another file */
};

/* WINDOW record (since 1.3, SPEC 6.11): a trace that does not start with the
 * process (AR_HDR_WINDOW) says how it started and what the heap held then.
 * The blocks live at the start that the window frees or reallocs are known
 * by their old_size; the rest of the heap at the start is known only as the
 * figure below, and only when the allocator can tell it. */
#define AR_WINDOW_SOURCE_MAX 64
typedef struct ar_window_info {
	uint32_t index;            /* 1 for the process's first window, 2 for the next ... */
	uint32_t reason;           /* AR_WINDOW_* */
	uint64_t start_time_ns;    /* ns since the header's start (normally 0) */
	uint64_t process_start_ns; /* how long the process had run at the window's start, 0 = unknown */
	uint64_t heap_in_use_bytes; /* the allocator's own count of bytes in use at the start, 0 = unknown */
	char heap_source[AR_WINDOW_SOURCE_MAX]; /* how it was read ("glibc mallinfo2",
						 * "jemalloc stats.allocated"); "" = unknown */
} ar_window_info_t;
enum { AR_WINDOW_ATTACH = 1, AR_WINDOW_START = 2, AR_WINDOW_ROTATE = 3 };

/* ---- writer: memory supplied by the caller ------------------------------- */
/* Same shape as zstd's ZSTD_customMem, which it is handed to. */
typedef struct ar_mem {
	void *(*alloc)(void *opaque, size_t size); /* NULL on failure */
	void (*free)(void *opaque, void *p);       /* p may be NULL */
	void *opaque;
} ar_mem_t;

/* Raw bytes of one metadata buffer: at most this many. */
#define AR_BLOCK_MAX (256u * 1024u)
/* Events of one block: at most this many (SPEC 7). */
#define AR_EVBUF_MAX_EVENTS 16384u
/* The unit of caller storage in an ar_evbuf_t: a malloc, free, valloc or
 * pvalloc takes one slot, any other event (and one with a stack or an
 * error code) two, a reallocarray with an old_size three. */
#define AR_EVENT_SLOT_BYTES 32u
/* Storage for a full event buffer, AR_EVBUF_MAX_EVENTS events of two slots:
 * 1 MiB. Buffers of one-slot events fill at AR_EVBUF_MAX_EVENTS with half
 * of it used. */
#define AR_EVBUF_MAX_BYTES (AR_EVBUF_MAX_EVENTS * 2 * AR_EVENT_SLOT_BYTES)

/*
 * A per-thread event buffer: the recorder's hot path. Appending stores the
 * event in fixed-size slots (no encoding, no allocation, no lock, no
 * syscall); the compact columnar encoding of SPEC 5 happens when the writer
 * turns the buffer into a block, off the hot path. The caller owns the
 * storage (`data`, `cap` bytes, 8-byte aligned; up to AR_EVBUF_MAX_BYTES are
 * used) and only the owning thread may append.
 */
typedef struct ar_evbuf {
	uint8_t *data;
	size_t cap;         /* usable bytes, a multiple of AR_EVENT_SLOT_BYTES */
	uint32_t nevents;
	uint32_t thread;
	uint64_t os_tid;
	uint32_t nslots;    /* slots used: one, two or three per event */
	uint64_t first_seq, last_seq; /* last_seq includes a final seq2 */
	uint64_t events_by_op[AR_OP_LIMIT];
} ar_evbuf_t;

/* Start an empty buffer for `thread` (index) running as `os_tid`. */
void ar_evbuf_reset(ar_evbuf_t *b, uint8_t *data, size_t cap, uint32_t thread, uint64_t os_tid);

/*
 * Store e (its thread field is ignored: the buffer's thread is used) at the
 * end of b. Returns 0, AR_EFULL when the buffer is full (nothing stored:
 * write the buffer out, reset it and append again), or AR_EINVAL when the
 * event breaks a rule (unknown op; seq not above the thread's previous seq
 * or seq2, SPEC 4; seq2 not above seq; an old_size on an op other than
 * free, realloc and reallocarray). Full: AR_EVBUF_MAX_EVENTS events, or
 * not enough of `cap` left for the event's slots (AR_EVENT_SLOT_BYTES).
 */
int ar_evbuf_append(ar_evbuf_t *b, const ar_event_t *e);

/* A metadata buffer, same ownership rules as ar_evbuf_t. */
typedef struct ar_metabuf {
	uint8_t *data;
	size_t cap, len;
	uint32_t nrecords;
} ar_metabuf_t;

void ar_metabuf_reset(ar_metabuf_t *m, uint8_t *data, size_t cap);
/* Each returns 0 or AR_EFULL (nothing written) or AR_EINVAL. */
int ar_meta_thread_start(ar_metabuf_t *m, uint32_t thread, uint64_t os_tid, uint64_t seq, uint64_t time_ns);
int ar_meta_thread_exit(ar_metabuf_t *m, uint32_t thread, uint64_t seq, uint64_t time_ns);
int ar_meta_thread_name(ar_metabuf_t *m, uint32_t thread, const char *name);
int ar_meta_stack(ar_metabuf_t *m, uint32_t id, const uint64_t *frames, uint32_t depth);
int ar_meta_module(ar_metabuf_t *m, const ar_module_info_t *mod);
/* Since 1.1 (SPEC 6.8-6.10). Strings longer than their limit (511, 127, 63
 * bytes) are cut. NULL strings are written empty. */
int ar_meta_allocator(ar_metabuf_t *m, const char *path, const char *soname, const char *version);
int ar_meta_rss_sample(ar_metabuf_t *m, const ar_rss_sample_t *s);
/* Since 1.3 (SPEC 6.11): once, in the first metadata block after the header,
 * in a window trace. heap_source longer than 63 bytes is cut. */
int ar_meta_window(ar_metabuf_t *m, const ar_window_info_t *w);
/* The PROCESS record from p's start/peak/end/interval fields (the allocator
 * fields and the has_* flags are ignored). */
int ar_meta_process(ar_metabuf_t *m, const ar_process_info_t *p);

typedef struct ar_writer ar_writer_t;

/*
 * Write the header frame to fd (which must be at offset 0 of an empty file or
 * a pipe) and return a writer in *out. mem may be NULL to use malloc. level is
 * the zstd compression level (SPEC recommends 1-3 for recording).
 * The writer is not thread-safe: one thread at a time writes blocks.
 */
int ar_writer_open(ar_writer_t **out, int fd, const ar_header_t *h, int level, const ar_mem_t *mem,
		   ar_error_t *err);
/* Chained events blocks (SPEC 3.4, format 2.0): each block of a thread
 * compressed against the decoded bytes of the thread's previous block, for
 * the 16 threads that wrote last. Up to 22 % smaller traces of real
 * programs, for 14-23 % more writer instructions where it is used and 2-6 %
 * more reading instructions, 2-14 % more reading time (docs/BENCHMARKS.md,
 * "Issue 19: trace size, second step").
 * AR_CHAIN_WHEN_IT_PAYS, the default of a 2.x trace: a thread's blocks are
 * written alone for a while when a chained one came out less than 5 %
 * smaller than the first of its chain. AR_CHAIN_ALWAYS chains whatever it
 * costs (tests, measurements); AR_CHAIN_OFF makes every later block decode
 * alone (the trace stays 2.0). A 1.x trace never chains. */
enum { AR_CHAIN_OFF = 0, AR_CHAIN_WHEN_IT_PAYS = 1, AR_CHAIN_ALWAYS = 2 };
void ar_writer_set_chaining(ar_writer_t *w, int how);
/* Encode b (SPEC 5), compress it into one events block and write it; b may
 * be reset afterwards. An empty buffer writes nothing. */
int ar_writer_write_events(ar_writer_t *w, const ar_evbuf_t *b, ar_error_t *err);
/* Compress m into one metadata block and write it. */
int ar_writer_write_meta(ar_writer_t *w, const ar_metabuf_t *m, ar_error_t *err);
/* Account for events the caller could not record (they go into the footer). */
void ar_writer_note_dropped(ar_writer_t *w, uint64_t n);
/* Totals so far (what the footer will say). */
void ar_writer_totals(const ar_writer_t *w, ar_footer_t *f);
/* Bytes written to fd so far. */
uint64_t ar_writer_bytes(const ar_writer_t *w);
/* Write to fd from now on: the same open file under another number (the
 * caller dup'ed it there, e.g. to get out of a program's dup2). */
void ar_writer_set_fd(ar_writer_t *w, int fd);
/* A bounded recording stopped on purpose (SPEC 6.7): why (AR_STOP_*) and
 * the heap calls made since; the footer then carries both. */
void ar_writer_note_stop(ar_writer_t *w, unsigned why, uint64_t after_stop);
/* Write the footer now and keep the writer, so that
 * ar_writer_rewrite_footer can replace it with later figures (the calls a
 * bounded recording saw after its stop). Free it with ar_writer_close(w,
 * 0, 0, err). */
int ar_writer_write_footer(ar_writer_t *w, uint64_t end_time_ns, ar_error_t *err);
/* Replace the footer ar_writer_write_footer wrote (still the file's last
 * block) with one holding the totals now: written over it in place, the
 * file cut where the new one ends. fd must be seekable (a regular file);
 * on failure the old footer stays. */
int ar_writer_rewrite_footer(ar_writer_t *w, ar_error_t *err);
/* Write the footer (unless write_footer is 0: the trace then reads as
 * truncated, which is what a dying recorder wants) and free the writer. The
 * fd is not closed. */
int ar_writer_close(ar_writer_t *w, uint64_t end_time_ns, int write_footer, ar_error_t *err);

/* ---- reader --------------------------------------------------------------- */
typedef struct ar_reader ar_reader_t;

/* Trace condition after opening (and after iteration found more). */
typedef enum ar_status {
	AR_STATUS_COMPLETE = 0,  /* footer present and consistent */
	AR_STATUS_TRUNCATED = 1, /* no footer or a partial last frame: prefix is valid */
	AR_STATUS_CORRUPT = 2,   /* a bad byte was found; everything before it is valid */
} ar_status_t;

/*
 * Open and index a trace. On success returns 0 and *out. A truncated or
 * corrupt tail is not an open error: open succeeds with the valid prefix and
 * ar_reader_status() says what happened (ar_reader_error() says where).
 * Open fails (negative code, err filled) only when even the header is bad.
 */
int ar_reader_open(ar_reader_t **out, const char *path, ar_error_t *err);
/* Same on an already open, seekable fd; the reader does not close it. */
int ar_reader_open_fd(ar_reader_t **out, int fd, const char *name, ar_error_t *err);
void ar_reader_close(ar_reader_t *r);

const ar_header_t *ar_reader_header(const ar_reader_t *r);
ar_status_t ar_reader_status(const ar_reader_t *r);
/* The problem behind a non-COMPLETE status, or the last iteration error. */
const ar_error_t *ar_reader_error(const ar_reader_t *r);
/* The footer, or NULL when the trace has none. */
const ar_footer_t *ar_reader_footer(const ar_reader_t *r);
/* Events in the complete blocks found by indexing. */
uint64_t ar_reader_event_count(const ar_reader_t *r);
uint64_t ar_reader_block_count(const ar_reader_t *r);
uint64_t ar_reader_file_size(const ar_reader_t *r);

/* Threads, stacks and modules found in complete blocks. */
uint32_t ar_reader_thread_count(const ar_reader_t *r);
/* The i-th thread (0 <= i < count) in order of first appearance. */
const ar_thread_info_t *ar_reader_thread_at(const ar_reader_t *r, uint32_t i);
/* The thread with trace index `index` (ar_event_t.thread), or NULL. */
const ar_thread_info_t *ar_reader_thread(const ar_reader_t *r, uint32_t index);
/* Frames of stack `id` (innermost first) and their number; NULL if unknown. */
const uint64_t *ar_reader_stack(const ar_reader_t *r, uint32_t id, uint32_t *depth);
uint32_t ar_reader_stack_count(const ar_reader_t *r);
/* The i-th stack (0 <= i < count) in order of definition: its id in *id
 * and, like ar_reader_stack, its frames and their number; NULL past the
 * end. Ids are the writer's (1 to 2^32-1, not necessarily dense): this is
 * how to list them. */
const uint64_t *ar_reader_stack_at(const ar_reader_t *r, uint32_t i, uint32_t *id, uint32_t *depth);
uint32_t ar_reader_module_count(const ar_reader_t *r);
const ar_module_info_t *ar_reader_module(const ar_reader_t *r, uint32_t i);

/* What the process ran on and its memory (format 1.1), like the other
 * metadata available as soon as ar_reader_open returned. NULL when the trace
 * has neither an ALLOCATOR nor a PROCESS record (a 1.0 trace, a synthetic
 * one); has_allocator / has_process say which of the two it had. A later
 * record of a kind replaces an earlier one. */
const ar_process_info_t *ar_reader_process(const ar_reader_t *r);
/* The other work on the machine while the trace ran (SPEC 6.10, since 2.1):
 * its busy CPU time less the process's own since the trace began, over the
 * trace's time, as CPUs kept busy on average (0 when none is left); NAN
 * when p lacks a figure it needs. */
double ar_process_other_cpus(const ar_process_info_t *p);
/* The WINDOW record (format 1.3, SPEC 6.11), or NULL when the trace has
 * none. A window trace is one whose header has AR_HDR_WINDOW; a WINDOW
 * record in a trace without the flag is returned as written, and tools
 * follow the flag. A later record replaces an earlier one. */
const ar_window_info_t *ar_reader_window(const ar_reader_t *r);
/* RSS samples in file order, which the recorder makes time order (a reader
 * does not check it); 0 for a trace without them. The first sample of a
 * recorded trace is the one taken at start (seq 0). */
uint32_t ar_reader_rss_count(const ar_reader_t *r);
/* The i-th sample (0 <= i < count), or NULL past the end. */
const ar_rss_sample_t *ar_reader_rss_at(const ar_reader_t *r, uint32_t i);

/*
 * Next event in file order (blocks as written, events of a block in order).
 * Returns 1 with *e filled, 0 at the end of the valid prefix, or a negative
 * code when a block that indexed fine fails to decode (ar_reader_error()).
 */
int ar_reader_next(ar_reader_t *r, ar_event_t *e);
/* Next event in global sequence order across threads; same returns. A seq
 * seen twice or out of order is AR_EFORMAT. Do not mix with ar_reader_next()
 * without ar_reader_rewind(). */
int ar_reader_next_merged(ar_reader_t *r, ar_event_t *e);
/* Restart iteration from the first block. */
void ar_reader_rewind(ar_reader_t *r);

/* ---- the live set (SPEC 4, 5.5) ------------------------------------------- */
/*
 * Which blocks a trace says are live, replayed from its events in sequence
 * order: the one model `alloctrace info|stats` and the replay compiler share.
 * An allocation's result is live from its seq; a free ends a life at its seq;
 * a realloc ends its input's life at seq and its result is live only from
 * seq2, which may come after other threads' events (one may even free the
 * address the realloc returns): such a result waits, in seq2 order, until
 * the set advances past seq2. A block is found by its address; each carries
 * its requested bytes and a `tag` of the caller's (a slot, an index into the
 * caller's own records). Memory grows with the live blocks, never with the
 * length of the trace. Not thread-safe; allocates with malloc.
 */

/* One live block, as the callbacks and lookups see it. */
typedef struct ar_live {
	uint64_t ptr;   /* its address (never 0) */
	uint64_t bytes; /* requested: ar_event_request_bytes() of its allocation */
	uint64_t tag;   /* the caller's, given when the block was acquired */
} ar_live_t;

/* A block left the set: released by event `by` (a free, a realloc), or
 * displaced (by == NULL) when the trace hands out its address again without
 * a release in between (a lost free). live_exact no longer counts it. */
typedef void ar_live_released_fn(void *ctx, const ar_live_t *b, const ar_event_t *by);
/* A block joined the set; live_exact (and the peak) already count it. */
typedef void ar_live_acquired_fn(void *ctx, const ar_live_t *b);

typedef struct ar_live_pending {
	uint64_t seq2, ptr, bytes, tag;
} ar_live_pending_t;

/* The set. Read the counters; leave the rest to the functions below. */
typedef struct ar_liveset {
	uint64_t len;        /* live blocks */
	/* Their bytes, exactly: a hostile trace may claim blocks of any size
	 * (SPEC 5.5); ar_liveset_live_bytes() saturates it at 2^64-1. */
	unsigned __int128 live_exact;
	uint64_t peak_live_bytes, peak_seq; /* the highest live bytes (saturated), and the seq it was reached at */
	uint64_t unknown_releases; /* releases of addresses not live: never returned, or freed twice */
	/* Blocks displaced (their address handed out again without a release:
	 * a lost free) and their bytes, exactly. */
	uint64_t displaced;
	unsigned __int128 displaced_exact;
	uint64_t npending;         /* realloc results waiting for their seq2 */
	/* A window trace (AR_HDR_WINDOW, SPEC 6.11): set `window` after init and
	 * a release of an address not live that carries an old_size is a
	 * pre-existing block, live from the window's start until that release,
	 * instead of an unknown release. They are counted here, and
	 * peak_live_bytes counts them: it is the highest of (the pre-existing
	 * bytes still live + live_exact) over the trace so far, which is
	 * preexisting_exact + the highest (live_exact - pre-existing bytes
	 * released so far); peak_seq is 0 when the peak is at the window's
	 * start. live_exact itself counts only the blocks the trace allocated. */
	int window;
	ar_live_released_fn *preexisting; /* called for each (b->tag 0, b->bytes = old_size); may be NULL */
	uint64_t preexisting_blocks;
	unsigned __int128 preexisting_exact;
	/* private */
	__int128 peak_window; /* highest live_exact - preexisting_exact so far */
	ar_live_t *tab; /* open addressing on ptr, 0 = empty; backward-shift deletion */
	uint64_t cap;
	ar_live_pending_t *pending; /* a min-heap on seq2 */
	uint64_t pending_cap;
	ar_live_released_fn *released;
	ar_live_acquired_fn *acquired;
	void *ctx;
} ar_liveset_t;

/* An empty set (allocates nothing yet); either callback may be NULL. */
void ar_liveset_init(ar_liveset_t *ls, ar_live_released_fn *released, ar_live_acquired_fn *acquired, void *ctx);
/* Free the set's memory (no callbacks); it is empty and initialised again. */
void ar_liveset_free(ar_liveset_t *ls);
/*
 * Everything one event does to the set (SPEC 4, 5.5), e given in sequence
 * order: ar_liveset_advance(e->seq); the release of e->ptr when
 * ar_event_releases_input(e); the acquisition of e->result (tagged `tag`)
 * when e is an allocation that returned non-NULL. 0 or AR_ENOMEM.
 */
int ar_liveset_apply(ar_liveset_t *ls, const ar_event_t *e, uint64_t tag);
/* The steps of ar_liveset_apply, for callers that act between them. */
/* Acquire the waiting realloc results whose seq2 < seq, in seq2 order;
 * seq == UINT64_MAX acquires them all (after the last event). 0 or AR_ENOMEM. */
int ar_liveset_advance(ar_liveset_t *ls, uint64_t seq);
/* End the life of the block at ptr: 1 with *out (may be NULL) filled and
 * `released` called, or 0 when nothing lives at ptr (counted in
 * unknown_releases unless ptr is 0; in a window, when `by` carries an
 * old_size, counted as a pre-existing block instead and `preexisting`
 * called). */
int ar_liveset_release(ar_liveset_t *ls, uint64_t ptr, const ar_event_t *by, ar_live_t *out);
/* e->result (non-NULL) of allocating event e is live, tagged `tag`: now, or
 * from e->seq2 on when e has one (SPEC 4). A block still live at that
 * address is displaced first. 0 or AR_ENOMEM. */
int ar_liveset_acquire(ar_liveset_t *ls, const ar_event_t *e, uint64_t tag);
/* Bytes of the live blocks, saturated at 2^64-1. */
uint64_t ar_liveset_live_bytes(const ar_liveset_t *ls);
/* 1 with *out filled when a block lives at ptr, else 0. */
int ar_liveset_find(const ar_liveset_t *ls, uint64_t ptr, ar_live_t *out);
/* Call fn for every live block (in no particular order). */
void ar_liveset_each(const ar_liveset_t *ls, void (*fn)(void *ctx, const ar_live_t *b), void *ctx);

/* SPEC 5.5: whether event e ends the life of e->ptr when it is live — a
 * free; a realloc that returned non-NULL, or asked for 0 bytes and got NULL. */
int ar_event_releases_input(const ar_event_t *e);
/* SPEC 5.5: bytes an allocation event asks for (count * size for calloc and
 * reallocarray, 2^64-1 when that overflows; 0 for free). */
uint64_t ar_event_request_bytes(const ar_event_t *e);

#ifdef __cplusplus
}
#endif
#endif /* AR_TRACE_H */
