/*
 * evbuf.c — encode events and metadata records into caller-owned buffers
 * (SPEC 5.3 and 6). This is the recorder's hot path: no allocation, no lock,
 * no syscall, and an event either goes in whole or not at all.
 *
 * Invariant: an ar_evbuf_t holds AR_EVBUF_RESERVE free bytes, then the
 * EVENTS record body (thread index, OS tid, events); the delta bases reset at
 * every buffer so each block decodes alone.
 */
#include "format.h"

void ar_evbuf_reset(ar_evbuf_t *b, uint8_t *data, size_t cap, uint32_t thread, uint64_t os_tid)
{
	memset(b, 0, sizeof *b);
	b->data = data;
	b->cap = cap > AR_BLOCK_MAX ? AR_BLOCK_MAX : cap;
	b->thread = thread;
	b->os_tid = os_tid;
	uint8_t *p = data + AR_EVBUF_RESERVE;
	p = ar_put_varint(p, thread);
	p = ar_put_varint(p, os_tid);
	b->len = (size_t)(p - data);
}

int ar_evbuf_append(ar_evbuf_t *b, const ar_event_t *e)
{
	if (b->cap - b->len < AR_EVENT_MAX_BYTES)
		return AR_EFULL;
	unsigned op = e->op;
	if (op >= AR_OP_LIMIT || ar_known_op_fields[op] == 0 || e->seq <= b->prev_seq)
		return AR_EINVAL;
	unsigned f = ar_known_op_fields[op];
	if ((f & AR_F_SEQ2) && e->seq2 <= e->seq)
		return AR_EINVAL;

	uint8_t *p = b->data + b->len;
	uint8_t h = (uint8_t)op;
	if (e->stack)
		h |= AR_EV_STACK;
	if ((f & AR_F_RESULT) && e->result == 0)
		h |= AR_EV_NULL_RESULT;
	*p++ = h;
	/* SPEC 5.3: seq is stored as the gap minus one to the thread's previous
	 * sequence number, which is the previous event's seq2 when it had one. */
	p = ar_put_varint(p, e->seq - b->prev_seq - 1);
	uint64_t last = e->seq;
	if (f & AR_F_SEQ2) {
		p = ar_put_varint(p, e->seq2 - e->seq - 1);
		last = e->seq2;
	}
	uint64_t t = e->time_ns >> AR_TIME_UNIT_SHIFT;
	p = ar_put_varint(p, ar_zigzag((int64_t)(t - b->prev_time)));
	uint64_t prev_ptr = b->prev_ptr;
	if (f & AR_F_PTR) {
		p = ar_put_ptr(p, e->ptr, prev_ptr);
		prev_ptr = e->ptr;
	}
	if (f & AR_F_ALIGN)
		p = ar_put_varint(p, e->align);
	if (f & AR_F_COUNT)
		p = ar_put_varint(p, e->count);
	if (f & AR_F_SIZE)
		p = ar_put_varint(p, e->size);
	if ((f & AR_F_RESULT) && e->result) {
		p = ar_put_ptr(p, e->result, prev_ptr);
		prev_ptr = e->result;
	}
	if (e->stack)
		p = ar_put_varint(p, e->stack);

	b->len = (size_t)(p - b->data);
	b->prev_ptr = prev_ptr;
	b->prev_time = t;
	b->prev_seq = last;
	if (b->nevents++ == 0)
		b->first_seq = e->seq;
	b->last_seq = last;
	b->events_by_op[op]++;
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
