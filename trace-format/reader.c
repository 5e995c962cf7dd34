/*
 * reader.c — open a trace and index it (SPEC 3, 7): walk the frames, keep
 * one small entry per events block, decode metadata blocks on the spot.
 *
 * Invariants: nothing past the first bad or missing byte is believed; the
 * index holds only complete blocks; memory grows with the number of blocks,
 * threads, stacks and modules, never with the number of events.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_fullio.h"
#include "ar_hash.h"
#include "reader_int.h"

int ar_grow(void **arr, size_t sz, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *p = realloc(*arr, n * sz);
	if (!p)
		return AR_ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

int ar_reader_fail(ar_reader_t *r, int code, uint64_t offset, const char *fmt, ...)
{
	r->err.code = code;
	r->err.offset = offset;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err.msg, sizeof r->err.msg, fmt, ap);
	va_end(ap);
	r->status = code == AR_ETRUNCATED ? AR_STATUS_TRUNCATED : AR_STATUS_CORRUPT;
	return code;
}

/* Threads and stacks are found through index tables (common/ar_hash.h) of
 * slot+1 values, 0 = empty; the key lives in the slot. */
#define IDX_EMPTY(e) (*(e) == 0)
#define THREAD_KEY(ctx, e) (((const thread_slot_t *)(ctx))[*(e) - 1].info.index)
#define STACK_KEY(ctx, e) (((const stack_slot_t *)(ctx))[*(e) - 1].id)
AR_HASH_DEFINE(thread_idx, uint32_t, IDX_EMPTY, THREAD_KEY, ar_hash_mix32)
AR_HASH_DEFINE(stack_idx, uint32_t, IDX_EMPTY, STACK_KEY, ar_hash_mix32)

AR_HASH_DEFINE_GROW(thread_idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)
AR_HASH_DEFINE_GROW(stack_idx, uint32_t, AR_HASH_CALLOC, AR_HASH_FREE)

thread_slot_t *ar_thread_slot(ar_reader_t *r, uint32_t index, int create)
{
	uint64_t h = thread_idx_find(r->thread_hash, r->thread_hash_cap - 1, r->threads, index);
	if (h != AR_HASH_ABSENT)
		return &r->threads[r->thread_hash[h] - 1];
	if (!create)
		return NULL;
	size_t cap = r->threads_cap;
	if (thread_idx_reserve(&r->thread_hash, &r->thread_hash_cap, r->nthreads, 64, r->threads) ||
	    ar_grow((void **)&r->threads, sizeof *r->threads, &cap, r->nthreads + 1u))
		return NULL;
	r->threads_cap = (uint32_t)cap;
	thread_slot_t *t = &r->threads[r->nthreads];
	memset(t, 0, sizeof *t);
	t->info.index = index;
	t->first_block = t->last_block = -1;
	t->prefix_block = -1;
	r->thread_hash[thread_idx_pos(r->thread_hash, r->thread_hash_cap - 1, r->threads, index)] = ++r->nthreads;
	return t;
}

static int pread_all(ar_reader_t *r, void *buf, size_t n, uint64_t off)
{
	ssize_t k = ar_pread_full(r->fd, buf, n, off, NULL);
	if (k < 0) {
		r->err.sys_errno = errno;
		return ar_reader_fail(r, AR_EIO, off, "%s: read failed: %s", r->name, strerror(errno));
	}
	if ((size_t)k < n)
		return ar_reader_fail(r, AR_ETRUNCATED, off, "%s: unexpected end of file", r->name);
	return 0;
}

int ar_block_decompress_into(ar_reader_t *r, uint64_t data_offset, uint32_t comp, uint32_t raw,
			     const uint8_t *prefix, size_t plen, uint8_t *dst)
{
	uint8_t *src = malloc(comp ? comp : 1);
	if (!src)
		return ar_reader_fail(r, AR_ENOMEM, data_offset, "out of memory for a %u-byte block", comp);
	int rc = pread_all(r, src, comp, data_offset);
	if (rc == 0) {
		/* raw content, used for this frame only (SPEC 3.4) */
		size_t got = prefix ? ZSTD_DCtx_refPrefix(r->dctx, prefix, plen) : 0;
		if (!ZSTD_isError(got))
			got = ZSTD_decompressDCtx(r->dctx, dst, raw, src, comp);
		if (ZSTD_isError(got))
			rc = ar_reader_fail(r, AR_EFORMAT, data_offset, "corrupt block at offset %llu: zstd: %s",
					    (unsigned long long)data_offset, ZSTD_getErrorName(got));
		else if (got != raw)
			rc = ar_reader_fail(r, AR_EFORMAT, data_offset,
					    "corrupt block at offset %llu: decodes to %zu bytes, descriptor says %u",
					    (unsigned long long)data_offset, got, raw);
	}
	free(src);
	return rc;
}

int ar_block_decompress(ar_reader_t *r, uint64_t data_offset, uint32_t comp, uint32_t raw, const uint8_t *prefix,
			size_t plen, uint8_t **buf, size_t *cap)
{
	if (ar_grow((void **)buf, 1, cap, raw ? raw : 1))
		return ar_reader_fail(r, AR_ENOMEM, data_offset, "out of memory for a %u-byte block", raw);
	return ar_block_decompress_into(r, data_offset, comp, raw, prefix, plen, *buf);
}

/* Parse the records of a metadata block (SPEC 6.2-6.7). */
typedef struct {
	const uint8_t *p, *start, *end;
	int bad;
} mrd_t;

static uint64_t mvar(mrd_t *m)
{
	uint64_t v = 0;
	if (!m->bad && ar_get_varint(&m->p, m->end, &v) != 0)
		m->bad = 1;
	return v;
}

static void mstr(mrd_t *m, char *out, size_t cap, uint32_t *len_out)
{
	uint64_t n = mvar(m);
	if (m->bad || n >= cap || n > (uint64_t)(m->end - m->p)) {
		m->bad = 1;
		return;
	}
	if (len_out) { /* binary (a build-id): kept as is */
		memcpy(out, m->p, n);
		out[n] = 0;
		*len_out = (uint32_t)n;
	} else if (ar_copy_string(out, cap, m->p, (size_t)n) != 0) {
		m->bad = 1;
		return;
	}
	m->p += n;
}

static int add_stack(ar_reader_t *r, mrd_t *m)
{
	uint64_t id = mvar(m), depth = mvar(m);
	if (m->bad || id == 0 || id > UINT32_MAX || depth > AR_STACK_MAX_DEPTH) {
		m->bad = 1;
		return 0;
	}
	size_t cap = r->stacks_cap, fcap = r->frames_cap;
	if (stack_idx_reserve(&r->stack_hash, &r->stack_hash_cap, r->nstacks, 64, r->stacks) ||
	    ar_grow((void **)&r->stacks, sizeof *r->stacks, &cap, r->nstacks + 1u) ||
	    ar_grow((void **)&r->frames, sizeof *r->frames, &fcap, r->nframes + depth))
		return AR_ENOMEM;
	r->stacks_cap = (uint32_t)cap;
	r->frames_cap = fcap;
	uint64_t prev = 0;
	for (uint64_t i = 0; i < depth; i++) {
		prev += (uint64_t)ar_unzigzag(mvar(m));
		r->frames[r->nframes + i] = prev;
	}
	if (m->bad)
		return 0;
	uint32_t *h = &r->stack_hash[stack_idx_pos(r->stack_hash, r->stack_hash_cap - 1, r->stacks, id)];
	if (*h) /* a repeated id keeps its first definition (SPEC 6.5) */
		return 0;
	r->stacks[r->nstacks] = (stack_slot_t){(uint32_t)id, (uint32_t)depth, r->nframes};
	r->nframes += depth;
	*h = ++r->nstacks;
	return 0;
}

static int parse_meta(ar_reader_t *r, const uint8_t *buf, size_t len, uint64_t nrec, uint64_t off)
{
	const uint8_t *p = buf, *end = buf + len;
	uint64_t seen = 0;
	while (p < end) {
		uint64_t type, n;
		size_t at = (size_t)(p - buf);
		if (ar_get_varint(&p, end, &type) || ar_get_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return ar_reader_fail(r, AR_EFORMAT, off,
					      "metadata block at offset %llu: record at byte %zu has a bad type or length",
					      (unsigned long long)off, at);
		mrd_t m = {p, p, p + n, 0};
		int rc = 0;
		switch (type) {
		case AR_REC_THREAD_START: {
			uint64_t idx = mvar(&m), tid = mvar(&m), seq = mvar(&m), when = mvar(&m);
			thread_slot_t *t = (!m.bad && idx <= UINT32_MAX) ? ar_thread_slot(r, (uint32_t)idx, 1) : NULL;
			if (t) {
				t->info.os_tid = tid;
				t->info.start_seq = seq;
				t->info.start_time_ns = when;
			} else if (!m.bad && idx <= UINT32_MAX)
				rc = AR_ENOMEM;
			else
				m.bad = 1;
			break;
		}
		case AR_REC_THREAD_EXIT: {
			uint64_t idx = mvar(&m), seq = mvar(&m), when = mvar(&m);
			thread_slot_t *t = (!m.bad && idx <= UINT32_MAX) ? ar_thread_slot(r, (uint32_t)idx, 1) : NULL;
			if (t) {
				t->info.exit_seq = seq;
				t->info.exit_time_ns = when;
			} else
				m.bad = 1;
			break;
		}
		case AR_REC_THREAD_NAME: {
			uint64_t idx = mvar(&m);
			char name[sizeof r->threads->info.name];
			mstr(&m, name, sizeof name, NULL);
			thread_slot_t *t = (!m.bad && idx <= UINT32_MAX) ? ar_thread_slot(r, (uint32_t)idx, 1) : NULL;
			if (t)
				memcpy(t->info.name, name, sizeof name);
			else
				m.bad = 1;
			break;
		}
		case AR_REC_STACK:
			rc = add_stack(r, &m);
			break;
		case AR_REC_MODULE: {
			ar_module_info_t mod;
			memset(&mod, 0, sizeof mod);
			mod.base = mvar(&m);
			mod.size = mvar(&m);
			mstr(&m, mod.path, sizeof mod.path, NULL);
			char bid[AR_LIMIT_BUILD_ID + 1];
			mstr(&m, bid, sizeof bid, &mod.build_id_len);
			memcpy(mod.build_id, bid, sizeof mod.build_id);
			size_t cap = r->modules_cap;
			if (!m.bad) {
				if (ar_grow((void **)&r->modules, sizeof mod, &cap, r->nmodules + 1u))
					rc = AR_ENOMEM;
				else {
					r->modules_cap = (uint32_t)cap;
					r->modules[r->nmodules++] = mod;
				}
			}
			break;
		}
		case AR_REC_ALLOCATOR: {
			ar_process_info_t *pi = &r->proc;
			char path[sizeof pi->alloc_path], soname[sizeof pi->alloc_soname],
				version[sizeof pi->alloc_version];
			mstr(&m, path, sizeof path, NULL);
			mstr(&m, soname, sizeof soname, NULL);
			mstr(&m, version, sizeof version, NULL);
			if (!m.bad) {
				memcpy(pi->alloc_path, path, sizeof path);
				memcpy(pi->alloc_soname, soname, sizeof soname);
				memcpy(pi->alloc_version, version, sizeof version);
				pi->has_allocator = 1;
			}
			break;
		}
		case AR_REC_RSS_SAMPLE: {
			ar_rss_sample_t smp;
			smp.time_ns = mvar(&m);
			smp.seq = mvar(&m);
			smp.rss_bytes = mvar(&m);
			if (m.bad)
				break;
			if (r->nrss >= AR_LIMIT_RSS_SAMPLES)
				return ar_reader_fail(r, AR_ELIMIT, off,
						      "metadata block at offset %llu: more than %u RSS samples (SPEC 7.1)",
						      (unsigned long long)off, AR_LIMIT_RSS_SAMPLES);
			size_t cap = r->rss_cap;
			if (ar_grow((void **)&r->rss, sizeof smp, &cap, r->nrss + 1u))
				rc = AR_ENOMEM;
			else {
				r->rss_cap = (uint32_t)cap;
				r->rss[r->nrss++] = smp;
			}
			break;
		}
		case AR_REC_PROCESS: {
			ar_process_info_t *pi = &r->proc;
			uint64_t v[6];
			for (int i = 0; i < 6; i++)
				v[i] = mvar(&m);
			if (!m.bad) {
				pi->start_rss_bytes = v[0];
				pi->start_time_ns = v[1];
				pi->peak_rss_bytes = v[2];
				pi->end_rss_bytes = v[3];
				pi->end_time_ns = v[4];
				pi->sample_interval_ns = v[5];
				pi->has_process = 1;
				/* CPU times: written by every 1.1 recorder but the first
				 * builds, so optional. */
				pi->has_cpu = m.p < m.end;
				if (pi->has_cpu) {
					pi->cpu_user_ns = mvar(&m);
					pi->cpu_sys_ns = mvar(&m);
				}
				if (pi->has_cpu && m.p < m.end)
					pi->recorder_rss_bytes = mvar(&m);
				/* the recorder's CPU: since 2.0, optional too */
				pi->has_recorder_cpu = pi->has_cpu && m.p < m.end;
				pi->recorder_writer_cpu_ns = pi->has_recorder_cpu ? mvar(&m) : 0;
				pi->recorder_calls_cpu_ns = pi->has_recorder_cpu && m.p < m.end ? mvar(&m) : 0;
				/* the CPU times at the trace's start: since 2.0, optional */
				pi->has_cpu_start = pi->has_recorder_cpu && m.p < m.end;
				pi->cpu_user_start_ns = pi->has_cpu_start ? mvar(&m) : 0;
				pi->cpu_sys_start_ns = pi->has_cpu_start && m.p < m.end ? mvar(&m) : 0;
				/* where the peak came from: since 2.1, optional; a value
				 * this reader does not know is not said */
				uint64_t src = pi->has_cpu_start && m.p < m.end ? mvar(&m) : AR_PEAK_UNSAID;
				pi->peak_source = src <= AR_PEAK_SAMPLED ? (unsigned)src : AR_PEAK_UNSAID;
				/* the machine's busy CPU time and its CPUs: since 2.1, optional */
				pi->machine_busy_ns = pi->has_cpu_start && m.p < m.end ? mvar(&m) : 0;
				pi->machine_cpus = pi->has_cpu_start && m.p < m.end ? mvar(&m) : 0;
			}
			break;
		}
		case AR_REC_WINDOW: { /* SPEC 6.11, since 1.3 */
			ar_window_info_t w;
			memset(&w, 0, sizeof w);
			uint64_t idx = mvar(&m), why = mvar(&m);
			w.start_time_ns = mvar(&m);
			w.process_start_ns = mvar(&m);
			w.heap_in_use_bytes = mvar(&m);
			mstr(&m, w.heap_source, sizeof w.heap_source, NULL);
			if (idx > UINT32_MAX || why > UINT32_MAX)
				m.bad = 1;
			if (!m.bad) {
				w.index = (uint32_t)idx;
				w.reason = (uint32_t)why;
				r->window = w;
				r->has_window = 1;
			}
			break;
		}
		case AR_REC_FOOTER: {
			ar_footer_t f;
			memset(&f, 0, sizeof f);
			f.events = mvar(&m);
			f.threads = mvar(&m);
			f.blocks = mvar(&m);
			f.last_seq = mvar(&m);
			f.end_time_ns = mvar(&m);
			f.dropped_events = mvar(&m);
			uint64_t nops = mvar(&m);
			for (uint64_t i = 0; !m.bad && i < nops; i++) {
				uint64_t v = mvar(&m);
				if (i < AR_OP_LIMIT)
					f.events_by_op[i] = v;
			}
			if (!m.bad && m.p < m.end) { /* since 1.2: a bounded recording's stop */
				f.stop_reason = mvar(&m);
				f.after_stop = mvar(&m);
			}
			if (!m.bad) {
				r->footer = f;
				r->has_footer = 1;
			}
			break;
		}
		case AR_REC_EVENTS:
			return ar_reader_fail(r, AR_EFORMAT, off,
					      "metadata block at offset %llu: an EVENTS record belongs in an events block",
					      (unsigned long long)off);
		default: /* SPEC 8: unknown record types are skipped by length */
			break;
		}
		if (rc)
			return ar_reader_fail(r, rc, off, "out of memory reading metadata");
		if (m.bad)
			return ar_reader_fail(r, AR_EFORMAT, off,
					      "metadata block at offset %llu: record type %llu at byte %zu is malformed",
					      (unsigned long long)off, (unsigned long long)type, at);
		p += n;
		seen++;
	}
	if (seen != nrec)
		return ar_reader_fail(r, AR_EFORMAT, off,
				      "metadata block at offset %llu: %llu records, descriptor says %llu",
				      (unsigned long long)off, (unsigned long long)seen, (unsigned long long)nrec);
	return 0;
}

/* Read and check one descriptor + block at *off; advance *off past it. */
static int index_block(ar_reader_t *r, uint64_t *off, uint32_t dsize)
{
	uint64_t at = *off;
	uint8_t d[AR_LIMIT_DESCRIPTOR_BYTES];
	if (dsize > sizeof d)
		return ar_reader_fail(r, AR_EFORMAT, at, "block descriptor at offset %llu is %u bytes, limit %u",
				      (unsigned long long)at, dsize, AR_LIMIT_DESCRIPTOR_BYTES);
	if (r->size - at - 8 < dsize)
		return ar_reader_fail(r, AR_ETRUNCATED, at, "truncated after %llu events: descriptor at offset %llu is cut",
				      (unsigned long long)r->events, (unsigned long long)at);
	int rc = pread_all(r, d, dsize, at + 8);
	if (rc)
		return rc;
	const uint8_t *p = d, *end = d + dsize;
	uint64_t v[8];
	for (int i = 0; i < 8; i++)
		if (ar_get_varint(&p, end, &v[i]))
			return ar_reader_fail(r, AR_EFORMAT, at, "block descriptor at offset %llu: field %d is not a varint",
					      (unsigned long long)at, i);
	uint64_t kind = v[0], thread = v[1], os_tid = v[2], count = v[3], first = v[4], last = v[5], raw = v[6],
		 comp = v[7], chain = AR_CHAIN_NONE;
	/* SPEC 3.4, since 2.0: the chain field; a 1.x reader never had one and
	 * ignores what follows the known fields (SPEC 8) */
	if (p < end && r->hdr.version_major >= 2 && ar_get_varint(&p, end, &chain))
		return ar_reader_fail(r, AR_EFORMAT, at, "block descriptor at offset %llu: field 8 is not a varint",
				      (unsigned long long)at);
	uint64_t data = at + 8 + dsize;
	if (raw > AR_LIMIT_RAW_BLOCK || comp > ZSTD_compressBound(AR_LIMIT_RAW_BLOCK) || comp < 9)
		return ar_reader_fail(r, AR_EFORMAT, at,
				      "block descriptor at offset %llu: sizes raw %llu / compressed %llu outside SPEC 7 limits",
				      (unsigned long long)at, (unsigned long long)raw, (unsigned long long)comp);
	if (r->size - data < comp)
		return ar_reader_fail(r, AR_ETRUNCATED, at,
				      "truncated after %llu events: block at offset %llu needs %llu bytes, file has %llu",
				      (unsigned long long)r->events, (unsigned long long)data, (unsigned long long)comp,
				      (unsigned long long)(r->size - data));
	uint8_t magic[4];
	if ((rc = pread_all(r, magic, 4, data)))
		return rc;
	if (ar_get_u32le(magic) != AR_ZSTD_MAGIC)
		return ar_reader_fail(r, AR_EFORMAT, data, "offset %llu: expected a zstd frame after the block descriptor",
				      (unsigned long long)data);
	if (r->has_footer)
		return ar_reader_fail(r, AR_EFORMAT, at, "offset %llu: block after the footer", (unsigned long long)at);
	*off = data + comp;
	r->nblocks_all++;

	if (kind == AR_BLOCK_META && chain != AR_CHAIN_NONE)
		return ar_reader_fail(r, AR_EFORMAT, at,
				      "block descriptor at offset %llu: a metadata block cannot be chained (SPEC 3.4)",
				      (unsigned long long)at);
	if (kind == AR_BLOCK_META) {
		if ((rc = ar_block_decompress(r, data, (uint32_t)comp, (uint32_t)raw, NULL, 0, &r->meta_buf, &r->meta_cap)))
			return rc;
		return parse_meta(r, r->meta_buf, raw, count, at);
	}
	if (kind != AR_BLOCK_EVENTS) /* SPEC 8: unknown block kinds are skipped */
		return 0;
	if (chain > AR_CHAIN_PREVIOUS)
		return ar_reader_fail(r, AR_EFORMAT, at,
				      "block descriptor at offset %llu: chain mode %llu is not defined (SPEC 3.4)",
				      (unsigned long long)at, (unsigned long long)chain);
	/* Each event takes at least 3 bytes (SPEC 5.3), which bounds count. */
	if (thread > UINT32_MAX || count == 0 || count > AR_EVBUF_MAX_EVENTS || count > raw / 3 || first == 0 ||
	    last < first)
		return ar_reader_fail(r, AR_EFORMAT, at,
				      "block descriptor at offset %llu: inconsistent (thread %llu, %llu events, seq %llu..%llu)",
				      (unsigned long long)at, (unsigned long long)thread, (unsigned long long)count,
				      (unsigned long long)first, (unsigned long long)last);
	thread_slot_t *t = ar_thread_slot(r, (uint32_t)thread, 1);
	size_t cap = r->blocks_cap;
	if (!t || ar_grow((void **)&r->blocks, sizeof *r->blocks, &cap, r->nblocks + 1))
		return ar_reader_fail(r, AR_ENOMEM, at, "out of memory indexing blocks");
	r->blocks_cap = cap;
	if (t->last_block >= 0 && first <= t->last_seq) /* SPEC 4: a thread's seqs only grow */
		return ar_reader_fail(r, AR_EFORMAT, at,
				      "block at offset %llu: thread %llu seq %llu does not follow its previous block's %llu",
				      (unsigned long long)at, (unsigned long long)thread, (unsigned long long)first,
				      (unsigned long long)t->last_seq);
	if (chain && t->last_block < 0)
		return ar_reader_fail(r, AR_EFORMAT, at,
				      "events block at offset %llu is chained to the previous block of thread %llu, but "
				      "the file has none before it (SPEC 3.4)",
				      (unsigned long long)at, (unsigned long long)thread);
	uint32_t chain_len = chain ? t->chain_len + 1 : 1;
	if (chain_len > AR_LIMIT_CHAIN)
		return ar_reader_fail(r, AR_ELIMIT, at,
				      "events block at offset %llu ends a chain of %u blocks, limit %u (SPEC 7.1)",
				      (unsigned long long)at, chain_len, AR_LIMIT_CHAIN);
	block_t *b = &r->blocks[r->nblocks];
	*b = (block_t){at, data, (uint32_t)comp, (uint32_t)raw, (uint32_t)thread, os_tid, count, first, last, -1,
		       t->last_block, chain != 0};
	t->chain_len = chain_len;
	if (t->last_block >= 0)
		r->blocks[t->last_block].next_of_thread = (int64_t)r->nblocks;
	else
		t->first_block = (int64_t)r->nblocks;
	t->last_block = (int64_t)r->nblocks;
	t->last_seq = last;
	t->info.os_tid = os_tid;
	t->info.events += count;
	r->nblocks++;
	r->events += count;
	return 0;
}

static int index_file(ar_reader_t *r, uint64_t off)
{
	while (off < r->size) {
		uint8_t fh[8];
		if (r->size - off < 8)
			return ar_reader_fail(r, AR_ETRUNCATED, off, "truncated after %llu events: %llu stray bytes at offset %llu",
					      (unsigned long long)r->events, (unsigned long long)(r->size - off),
					      (unsigned long long)off);
		int rc = pread_all(r, fh, 8, off);
		if (rc)
			return rc;
		uint32_t magic = ar_get_u32le(fh), size = ar_get_u32le(fh + 4);
		if (magic == AR_DESCRIPTOR_MAGIC) {
			if ((rc = index_block(r, &off, size)))
				return rc;
		} else if ((magic & AR_SKIP_MAGIC_MASK) == AR_SKIP_MAGIC_BASE && magic != AR_HEADER_MAGIC) {
			if (r->size - off - 8 < size) /* SPEC 8: other skippable frames are ignored */
				return ar_reader_fail(r, AR_ETRUNCATED, off, "truncated after %llu events: frame at offset %llu is cut",
						      (unsigned long long)r->events, (unsigned long long)off);
			off += 8 + (uint64_t)size;
		} else {
			return ar_reader_fail(r, AR_EFORMAT, off, "offset %llu: unexpected frame (magic 0x%08x); expected a block descriptor",
					      (unsigned long long)off, magic);
		}
	}
	if (!r->has_footer)
		return ar_reader_fail(r, AR_ETRUNCATED, r->size,
				      "truncated after %llu events: no footer (the recorder did not close the trace)",
				      (unsigned long long)r->events);
	/* The footer must agree with what we indexed (SPEC 6.7). */
	if (r->footer.events != r->events || r->footer.blocks + 1 != r->nblocks_all)
		return ar_reader_fail(r, AR_EFORMAT, r->size,
				      "footer says %llu events in %llu blocks, file has %llu in %llu",
				      (unsigned long long)r->footer.events, (unsigned long long)r->footer.blocks,
				      (unsigned long long)r->events, (unsigned long long)(r->nblocks_all - 1));
	return 0;
}

int ar_reader_open_fd(ar_reader_t **out, int fd, const char *name, ar_error_t *err)
{
	*out = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return ar_set_error(err, AR_EINVAL, 0, "%s: not a regular file (a trace must be seekable)", name);
	ar_reader_t *r = calloc(1, sizeof *r);
	if (!r || !(r->dctx = ZSTD_createDCtx())) {
		free(r);
		return ar_set_error(err, AR_ENOMEM, 0, "out of memory");
	}
	r->fd = fd;
	r->size = (uint64_t)st.st_size;
	snprintf(r->name, sizeof r->name, "%s", name);
	r->file_cur.block = -1;

	uint8_t fh[8];
	int rc = r->size < 8 ? ar_reader_fail(r, AR_EFORMAT, 0, "%s: %llu bytes is too short for a trace", name,
					      (unsigned long long)r->size)
			     : pread_all(r, fh, 8, 0);
	if (rc == 0 && ar_get_u32le(fh) != AR_HEADER_MAGIC)
		rc = ar_reader_fail(r, AR_EFORMAT, 0, "%s: not an allocrr trace (%s)", name,
				    ar_get_u32le(fh) == AR_ZSTD_MAGIC ? "a plain zstd file" : "no header frame at offset 0");
	uint32_t hsize = rc == 0 ? ar_get_u32le(fh + 4) : 0;
	if (rc == 0 && hsize > AR_LIMIT_HEADER_BYTES)
		rc = ar_reader_fail(r, AR_EFORMAT, 4, "%s: header frame of %u bytes exceeds the %u-byte limit", name, hsize,
				    AR_LIMIT_HEADER_BYTES);
	if (rc == 0 && r->size - 8 < hsize)
		rc = ar_reader_fail(r, AR_ETRUNCATED, 8, "%s: truncated inside the header frame", name);
	uint8_t *hb = rc == 0 ? malloc(hsize ? hsize : 1) : NULL;
	if (rc == 0 && !hb)
		rc = ar_reader_fail(r, AR_ENOMEM, 8, "out of memory");
	if (rc == 0 && (rc = pread_all(r, hb, hsize, 8)) == 0)
		rc = ar_header_decode(&r->hdr, hb, hsize, 8, &r->err);
	free(hb);
	if (rc) {
		if (r->err.code == 0)
			r->err.code = rc;
		if (err)
			*err = r->err;
		ar_reader_close(r);
		return rc;
	}
	/* A bad block stops the index but not the open: the prefix is valid. */
	if (index_file(r, 8 + (uint64_t)hsize) == AR_ENOMEM) {
		if (err)
			*err = r->err;
		ar_reader_close(r);
		return AR_ENOMEM;
	}
	r->file_cur.block = r->nblocks ? 0 : -1;
	*out = r;
	return 0;
}

int ar_reader_open(ar_reader_t **out, const char *path, ar_error_t *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		ar_set_error(err, AR_EIO, 0, "%s: %s", path, strerror(e));
		if (err)
			err->sys_errno = e;
		return AR_EIO;
	}
	int rc = ar_reader_open_fd(out, fd, path, err);
	if (rc)
		close(fd);
	else
		(*out)->own_fd = 1;
	return rc;
}

void ar_reader_close(ar_reader_t *r)
{
	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->file_cur.buf);
	free(r->file_cur.hist);
	for (uint32_t i = 0; r->curs && i < r->nthreads; i++) {
		free(r->curs[i].buf);
		free(r->curs[i].hist);
	}
	free(r->curs);
	free(r->heap);
	free(r->meta_buf);
	free(r->chain_buf);
	for (uint32_t i = 0; r->threads && i < r->nthreads; i++)
		free(r->threads[i].prefix);
	free(r->blocks);
	free(r->threads);
	free(r->thread_hash);
	free(r->stacks);
	free(r->stack_hash);
	free(r->frames);
	free(r->modules);
	free(r->rss);
	free(r);
}

const ar_header_t *ar_reader_header(const ar_reader_t *r) { return &r->hdr; }
ar_status_t ar_reader_status(const ar_reader_t *r) { return r->status; }
const ar_error_t *ar_reader_error(const ar_reader_t *r) { return &r->err; }
const ar_footer_t *ar_reader_footer(const ar_reader_t *r) { return r->has_footer ? &r->footer : NULL; }
uint64_t ar_reader_event_count(const ar_reader_t *r) { return r->events; }
uint64_t ar_reader_block_count(const ar_reader_t *r) { return r->nblocks_all; }
uint64_t ar_reader_file_size(const ar_reader_t *r) { return r->size; }
uint32_t ar_reader_thread_count(const ar_reader_t *r) { return r->nthreads; }
uint32_t ar_reader_stack_count(const ar_reader_t *r) { return r->nstacks; }
uint32_t ar_reader_module_count(const ar_reader_t *r) { return r->nmodules; }

const ar_window_info_t *ar_reader_window(const ar_reader_t *r) { return r->has_window ? &r->window : NULL; }

double ar_process_other_cpus(const ar_process_info_t *p)
{
	if (!p->machine_busy_ns || !p->machine_cpus || !p->end_time_ns || !p->has_cpu ||
	    p->cpu_user_ns < p->cpu_user_start_ns || p->cpu_sys_ns < p->cpu_sys_start_ns)
		return NAN;
	double own = (double)(p->cpu_user_ns - p->cpu_user_start_ns) + (double)(p->cpu_sys_ns - p->cpu_sys_start_ns);
	double others = (double)p->machine_busy_ns - own;
	return others > 0 ? others / (double)p->end_time_ns : 0.0;
}

const ar_process_info_t *ar_reader_process(const ar_reader_t *r)
{
	return r->proc.has_allocator || r->proc.has_process ? &r->proc : NULL;
}

uint32_t ar_reader_rss_count(const ar_reader_t *r) { return r->nrss; }

const ar_rss_sample_t *ar_reader_rss_at(const ar_reader_t *r, uint32_t i)
{
	return i < r->nrss ? &r->rss[i] : NULL;
}

const ar_thread_info_t *ar_reader_thread_at(const ar_reader_t *r, uint32_t i)
{
	return i < r->nthreads ? &r->threads[i].info : NULL;
}

const ar_thread_info_t *ar_reader_thread(const ar_reader_t *r, uint32_t index)
{
	thread_slot_t *t = ar_thread_slot((ar_reader_t *)r, index, 0);
	return t ? &t->info : NULL;
}

const ar_module_info_t *ar_reader_module(const ar_reader_t *r, uint32_t i)
{
	return i < r->nmodules ? &r->modules[i] : NULL;
}

/* The frames of a defined stack: never NULL, also for depth 0 (SPEC 6.5
 * allows it), when no frame array may exist yet. */
static const uint64_t *stack_frames(const ar_reader_t *r, const stack_slot_t *s)
{
	static const uint64_t no_frames[1];
	return s->depth ? &r->frames[s->first] : no_frames;
}

const uint64_t *ar_reader_stack_at(const ar_reader_t *r, uint32_t i, uint32_t *id, uint32_t *depth)
{
	if (i >= r->nstacks)
		return NULL;
	const stack_slot_t *s = &r->stacks[i];
	if (id)
		*id = s->id;
	if (depth)
		*depth = s->depth;
	return stack_frames(r, s);
}

const uint64_t *ar_reader_stack(const ar_reader_t *r, uint32_t id, uint32_t *depth)
{
	uint64_t h = stack_idx_find(r->stack_hash, r->stack_hash_cap - 1, r->stacks, id);
	if (h == AR_HASH_ABSENT)
		return NULL;
	const stack_slot_t *s = &r->stacks[r->stack_hash[h] - 1];
	if (depth)
		*depth = s->depth;
	return stack_frames(r, s);
}
