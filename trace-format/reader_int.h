/*
 * reader_int.h — the reader's private state, shared by reader.c (opening and
 * indexing) and iter.c (decoding blocks and iterating).
 */
#ifndef AR_READER_INT_H
#define AR_READER_INT_H

#include <zstd.h>

#include "format.h"

typedef struct block {
	uint64_t offset;      /* of the descriptor frame */
	uint64_t data_offset; /* of the zstd frame */
	uint32_t comp_size, raw_size;
	uint32_t thread;
	uint64_t os_tid, count, first_seq, last_seq;
	int64_t next_of_thread; /* next events block of the same thread, or -1 */
	int64_t prev_of_thread; /* previous one, or -1 */
	int chained;            /* SPEC 3.4: its prefix is prev_of_thread's bytes */
} block_t;

typedef struct thread_slot {
	ar_thread_info_t info;
	int64_t first_block, last_block;
	uint64_t last_seq; /* highest seq in its indexed blocks (SPEC 4: per-thread order) */
	uint32_t chain_len; /* blocks in the chain its last block ends (SPEC 3.4) */
	/* the decoded bytes of one of its blocks, kept when the next block is
	 * chained to it (iter.c) */
	uint8_t *prefix;
	size_t prefix_len, prefix_cap;
	int64_t prefix_block; /* whose bytes, -1 = none */
} thread_slot_t;

typedef struct stack_slot {
	uint32_t id, depth;
	uint64_t first; /* index into frames */
} stack_slot_t;

/* Iteration over the blocks of one thread (merged order) or of the file. */
typedef struct cursor {
	int64_t block; /* current block, -1 when done */
	int decoded;   /* block is decompressed into buf and dec is live */
	uint8_t *buf;
	size_t buf_cap;
	ar_evdec_t dec;
	uint64_t *hist; /* pointer histories for dec: 2 x count */
	size_t hist_cap;
	ar_event_t ev; /* the next event, when has_ev */
	int has_ev;
} cursor_t;

struct ar_reader {
	int fd, own_fd;
	char name[256];
	uint64_t size;
	ar_header_t hdr;
	ar_status_t status;
	ar_error_t err;
	int has_footer;
	ar_footer_t footer;
	ZSTD_DCtx *dctx;
	uint8_t *meta_buf;
	size_t meta_cap;
	uint8_t *chain_buf; /* iter.c: a chain's scratch block */
	size_t chain_cap;

	block_t *blocks; /* events blocks in file order */
	size_t nblocks, blocks_cap;
	uint64_t nblocks_all; /* every block including metadata ones */
	uint64_t events;

	thread_slot_t *threads;
	uint32_t nthreads, threads_cap;
	uint32_t *thread_hash; /* ar_hash.h index table: slot+1, 0 = empty */
	uint64_t thread_hash_cap;

	stack_slot_t *stacks;
	uint32_t nstacks, stacks_cap;
	uint32_t *stack_hash;
	uint64_t stack_hash_cap;
	uint64_t *frames;
	uint64_t nframes, frames_cap;

	ar_module_info_t *modules;
	uint32_t nmodules, modules_cap;

	ar_process_info_t proc; /* ALLOCATOR and PROCESS records (SPEC 6.8, 6.10) */
	ar_window_info_t window; /* WINDOW record (SPEC 6.11), when has_window */
	int has_window;
	ar_rss_sample_t *rss;   /* RSS_SAMPLE records, at most AR_LIMIT_RSS_SAMPLES */
	uint32_t nrss, rss_cap;

	/* iteration */
	cursor_t file_cur;
	cursor_t *curs;     /* merged: one per thread with events */
	/* merged: the cursors with the least seq that orders them at [0]
	 * (a min-heap above MERGE_SCAN_MAX of them, iter.c), the key beside
	 * the index so that ordering reads one array, not the cursors (each
	 * on lines of its own) */
	struct ar_heap_ent {
		uint64_t key; /* cursor_key(cur) as of the cursor's last change */
		uint32_t cur; /* index into curs */
	} *heap;
	uint32_t heap_len;
	int merged_started;
	uint64_t last_merged_seq;
	int iter_error; /* sticky AR_E* once iteration failed */
};

/* Grow *arr (element size sz) so it holds at least need elements. */
int ar_grow(void **arr, size_t sz, size_t *cap, size_t need);
/* Thread slot for trace index `index`, creating it when create != 0. */
thread_slot_t *ar_thread_slot(ar_reader_t *r, uint32_t index, int create);
/* Decompress the zstd frame at data_offset into *buf (growing it), against
 * prefix[0..plen) when prefix is not NULL (SPEC 3.4); 0 or AR_E*. */
int ar_block_decompress(ar_reader_t *r, uint64_t data_offset, uint32_t comp, uint32_t raw, const uint8_t *prefix,
			size_t plen, uint8_t **buf, size_t *cap);
/* The same into dst, which has room for raw bytes. */
int ar_block_decompress_into(ar_reader_t *r, uint64_t data_offset, uint32_t comp, uint32_t raw,
			     const uint8_t *prefix, size_t plen, uint8_t *dst);
/* Decompress events block r->blocks[bi] into *buf (growing it), decoding
 * the chain it ends when its prefix is not at hand (iter.c); 0 or AR_E*. */
int ar_events_decompress(ar_reader_t *r, int64_t bi, uint8_t **buf, size_t *cap);
/* Mark the reader corrupt at `offset` with a message; returns AR_EFORMAT. */
int ar_reader_fail(ar_reader_t *r, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
