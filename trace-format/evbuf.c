/*
 * evbuf.c — the recorder's hot path and the metadata records.
 *
 * ar_evbuf_append stores an event in one, two or three 32-byte slots
 * (format.h says which) after checking the SPEC 4 rules; it never
 * allocates, locks, makes a syscall or stores a partial event. Encoding
 * happens later in encode.c, on the writer's thread.
 * Metadata records are encoded directly (they are rare).
 */
#include "format.h"

void ar_evbuf_reset(ar_evbuf_t *b, uint8_t *data, size_t cap, uint32_t thread, uint64_t os_tid)
{
	memset(b, 0, sizeof *b);
	b->data = data;
	if (cap > AR_EVBUF_MAX_BYTES)
		cap = AR_EVBUF_MAX_BYTES;
	b->cap = cap - cap % AR_EVENT_SLOT_BYTES;
	b->thread = thread;
	b->os_tid = os_tid;
}

int ar_evbuf_append(ar_evbuf_t *b, const ar_event_t *e)
{
	unsigned op = e->op;
	if (op >= AR_OP_LIMIT || ar_known_op_fields[op] == 0)
		return AR_EINVAL;
	if (e->old_size && !ar_sized_code(op))
		return AR_EINVAL;
	unsigned f = ar_known_op_fields[op];
	/* Plain copies: the encoder reads only the fields the op's mask names. */
	ar_slot_event_t v = {
		.seq = e->seq,
		.seq2 = e->seq2,
		.time_ns = e->time_ns,
		.ptr = e->ptr,
		.result = e->result,
		.size = e->size,
		.aux = (f & AR_F_ALIGN) ? e->align : e->count,
		.old_size = e->old_size,
		.stack = e->stack,
		.op = (uint8_t)op,
		.error = ((f & AR_F_RESULT) && !e->result) ? (uint16_t)(e->error > 0xffff ? 0xffff : e->error) : 0,
	};
	if (!ar_evbuf_room(b, ar_slot_count(&v)))
		return AR_EFULL;
	/* SPEC 4: within a thread every seq (and seq2) is above the last one. */
	if ((b->nevents && e->seq <= b->last_seq) || e->seq == 0 || ((f & AR_F_SEQ2) && e->seq2 <= e->seq))
		return AR_EINVAL;
	ar_evbuf_put(b, &v, (f & AR_F_SEQ2) ? e->seq2 : e->seq);
	return 0;
}

void ar_metabuf_reset(ar_metabuf_t *m, uint8_t *data, size_t cap)
{
	m->data = data;
	m->cap = cap > AR_BLOCK_MAX ? AR_BLOCK_MAX : cap;
	m->len = 0;
	m->nrecords = 0;
}

/* Append one record: type, body length, body (SPEC 6). */
static int meta_put(ar_metabuf_t *m, unsigned type, const uint8_t *body, size_t n)
{
	if (m->cap - m->len < n + 16)
		return AR_EFULL;
	uint8_t *p = m->data + m->len;
	p = ar_put_varint(p, type);
	p = ar_put_varint(p, n);
	memcpy(p, body, n);
	m->len = (size_t)(p + n - m->data);
	m->nrecords++;
	return 0;
}

static uint8_t *put_string(uint8_t *p, const char *s, size_t n)
{
	p = ar_put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

int ar_meta_thread_start(ar_metabuf_t *m, uint32_t thread, uint64_t os_tid, uint64_t seq, uint64_t time_ns)
{
	uint8_t body[40], *p = body;
	p = ar_put_varint(p, thread);
	p = ar_put_varint(p, os_tid);
	p = ar_put_varint(p, seq);
	p = ar_put_varint(p, time_ns);
	return meta_put(m, AR_REC_THREAD_START, body, (size_t)(p - body));
}

int ar_meta_thread_exit(ar_metabuf_t *m, uint32_t thread, uint64_t seq, uint64_t time_ns)
{
	uint8_t body[30], *p = body;
	p = ar_put_varint(p, thread);
	p = ar_put_varint(p, seq);
	p = ar_put_varint(p, time_ns);
	return meta_put(m, AR_REC_THREAD_EXIT, body, (size_t)(p - body));
}

int ar_meta_thread_name(ar_metabuf_t *m, uint32_t thread, const char *name)
{
	uint8_t body[5 + 1 + AR_LIMIT_NAME], *p = body;
	size_t n = strnlen(name, AR_LIMIT_NAME);
	p = ar_put_varint(p, thread);
	p = put_string(p, name, n);
	return meta_put(m, AR_REC_THREAD_NAME, body, (size_t)(p - body));
}

int ar_meta_stack(ar_metabuf_t *m, uint32_t id, const uint64_t *frames, uint32_t depth)
{
	if (id == 0 || depth > AR_STACK_MAX_DEPTH)
		return AR_EINVAL;
	uint8_t body[10 + 5 + 10 * AR_STACK_MAX_DEPTH], *p = body;
	p = ar_put_varint(p, id);
	p = ar_put_varint(p, depth);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < depth; i++) { /* SPEC 6.5: frames as zigzag deltas */
		p = ar_put_varint(p, ar_zigzag((int64_t)(frames[i] - prev)));
		prev = frames[i];
	}
	return meta_put(m, AR_REC_STACK, body, (size_t)(p - body));
}

int ar_meta_module(ar_metabuf_t *m, const ar_module_info_t *mod)
{
	if (mod->build_id_len > AR_LIMIT_BUILD_ID)
		return AR_EINVAL;
	uint8_t body[20 + 5 + AR_LIMIT_PATH + 5 + AR_LIMIT_BUILD_ID], *p = body;
	p = ar_put_varint(p, mod->base);
	p = ar_put_varint(p, mod->size);
	p = put_string(p, mod->path, strnlen(mod->path, AR_LIMIT_PATH));
	p = put_string(p, (const char *)mod->build_id, mod->build_id_len);
	return meta_put(m, AR_REC_MODULE, body, (size_t)(p - body));
}

int ar_meta_allocator(ar_metabuf_t *m, const char *path, const char *soname, const char *version)
{
	uint8_t body[3 * 2 + AR_LIMIT_PATH + AR_LIMIT_SONAME + AR_LIMIT_ALLOC_VERSION], *p = body;
	p = put_string(p, path ? path : "", path ? strnlen(path, AR_LIMIT_PATH) : 0);
	p = put_string(p, soname ? soname : "", soname ? strnlen(soname, AR_LIMIT_SONAME) : 0);
	p = put_string(p, version ? version : "", version ? strnlen(version, AR_LIMIT_ALLOC_VERSION) : 0);
	return meta_put(m, AR_REC_ALLOCATOR, body, (size_t)(p - body));
}

int ar_meta_rss_sample(ar_metabuf_t *m, const ar_rss_sample_t *s)
{
	uint8_t body[30], *p = body;
	p = ar_put_varint(p, s->time_ns);
	p = ar_put_varint(p, s->seq);
	p = ar_put_varint(p, s->rss_bytes);
	return meta_put(m, AR_REC_RSS_SAMPLE, body, (size_t)(p - body));
}

int ar_meta_window(ar_metabuf_t *m, const ar_window_info_t *w)
{
	uint8_t body[2 * 5 + 3 * 10 + 1 + AR_LIMIT_HEAP_SOURCE], *p = body;
	p = ar_put_varint(p, w->index);
	p = ar_put_varint(p, w->reason);
	p = ar_put_varint(p, w->start_time_ns);
	p = ar_put_varint(p, w->process_start_ns);
	p = ar_put_varint(p, w->heap_in_use_bytes);
	p = put_string(p, w->heap_source, strnlen(w->heap_source, AR_LIMIT_HEAP_SOURCE));
	return meta_put(m, AR_REC_WINDOW, body, (size_t)(p - body));
}

int ar_meta_process(ar_metabuf_t *m, const ar_process_info_t *pi)
{
	uint8_t body[16 * 10], *p = body;
	p = ar_put_varint(p, pi->start_rss_bytes);
	p = ar_put_varint(p, pi->start_time_ns);
	p = ar_put_varint(p, pi->peak_rss_bytes);
	p = ar_put_varint(p, pi->end_rss_bytes);
	p = ar_put_varint(p, pi->end_time_ns);
	p = ar_put_varint(p, pi->sample_interval_ns);
	p = ar_put_varint(p, pi->cpu_user_ns);
	p = ar_put_varint(p, pi->cpu_sys_ns);
	p = ar_put_varint(p, pi->recorder_rss_bytes);
	p = ar_put_varint(p, pi->recorder_writer_cpu_ns);
	p = ar_put_varint(p, pi->recorder_calls_cpu_ns);
	p = ar_put_varint(p, pi->cpu_user_start_ns);
	p = ar_put_varint(p, pi->cpu_sys_start_ns);
	p = ar_put_varint(p, pi->peak_source);
	p = ar_put_varint(p, pi->machine_busy_ns);
	p = ar_put_varint(p, pi->machine_cpus);
	return meta_put(m, AR_REC_PROCESS, body, (size_t)(p - body));
}
