/*
 * header.c — encode and decode the header frame payload (SPEC 3.1).
 *
 * Fields are appended in a fixed order; a reader stops after the fields it
 * knows and ignores the rest, which is how minor versions add fields.
 */
#include <stdio.h>

#include "format.h"

typedef struct {
	uint8_t *p, *end;
	int full;
} enc_t;

static void put_varint(enc_t *e, uint64_t v)
{
	if (e->end - e->p < 10) {
		e->full = 1;
		return;
	}
	e->p = ar_put_varint(e->p, v);
}

static void put_bytes(enc_t *e, const void *s, size_t n)
{
	put_varint(e, n);
	if (e->full || (size_t)(e->end - e->p) < n) {
		e->full = 1;
		return;
	}
	memcpy(e->p, s, n);
	e->p += n;
}

int ar_header_encode(const ar_header_t *h, uint8_t *buf, size_t cap)
{
	if (cap < 16)
		return AR_EFULL;
	memcpy(buf, AR_FILE_MAGIC, AR_FILE_MAGIC_LEN);
	buf[8] = (uint8_t)h->version_major;
	buf[9] = (uint8_t)(h->version_major >> 8);
	buf[10] = (uint8_t)h->version_minor;
	buf[11] = (uint8_t)(h->version_minor >> 8);
	ar_put_u32le(buf + 12, h->flags);
	enc_t e = {buf + 16, buf + cap, 0};
	put_bytes(&e, h->recorder_version, strnlen(h->recorder_version, sizeof h->recorder_version - 1));
	put_varint(&e, h->pid);
	put_varint(&e, h->ppid);
	put_bytes(&e, h->cmdline, strnlen(h->cmdline, sizeof h->cmdline - 1));
	put_varint(&e, h->start_wall_ns);
	put_varint(&e, h->start_mono_ns);
	put_varint(&e, h->clock_resolution_ns);
	put_varint(&e, h->page_size);
	put_varint(&e, h->time_unit_ns);
	unsigned n = 0;
	for (unsigned op = 0; op < AR_OP_LIMIT; op++)
		n += h->ops[op].name[0] != 0;
	put_varint(&e, n);
	for (unsigned op = 0; op < AR_OP_LIMIT; op++) {
		if (!h->ops[op].name[0])
			continue;
		put_varint(&e, op);
		put_varint(&e, h->ops[op].fields);
		put_bytes(&e, h->ops[op].name, strnlen(h->ops[op].name, sizeof h->ops[op].name - 1));
	}
	if (ar_hdr_since(h, 1, 2)) {
		put_bytes(&e, h->source_format, strnlen(h->source_format, sizeof h->source_format - 1));
		put_bytes(&e, h->scrub_note, strnlen(h->scrub_note, sizeof h->scrub_note - 1));
	}
	return e.full ? AR_EFULL : (int)(e.p - buf);
}

typedef struct {
	const uint8_t *p, *start, *end;
	uint64_t base;
	ar_error_t *err;
	int rc;
} dec_t;

static uint64_t get_varint(dec_t *d, const char *what)
{
	uint64_t v = 0;
	if (d->rc == 0 && ar_get_varint(&d->p, d->end, &v) != 0)
		d->rc = ar_set_error(d->err, AR_EFORMAT, d->base + (uint64_t)(d->p - d->start),
				     "header: bad or missing varint for %s", what);
	return d->rc ? 0 : v;
}

/* Copy a length-prefixed string into out[cap] (NUL-terminated); longer than
 * cap-1 is a limit violation (SPEC 7), not silently cut. */
static void get_string(dec_t *d, char *out, size_t cap, const char *what)
{
	uint64_t n = get_varint(d, what);
	if (d->rc)
		return;
	uint64_t at = d->base + (uint64_t)(d->p - d->start);
	if (n > (uint64_t)(d->end - d->p)) {
		d->rc = ar_set_error(d->err, AR_EFORMAT, at, "header: %s length %llu runs past the frame",
				     what, (unsigned long long)n);
		return;
	}
	if (n >= cap) {
		d->rc = ar_set_error(d->err, AR_ELIMIT, at, "header: %s is %llu bytes, limit %zu", what,
				     (unsigned long long)n, cap - 1);
		return;
	}
	if (ar_copy_string(out, cap, d->p, (size_t)n) != 0) {
		d->rc = ar_set_error(d->err, AR_ELIMIT, at,
				     "header: %s holds NUL bytes, and shown as \\x00 it is longer than %zu bytes",
				     what, cap - 1);
		return;
	}
	d->p += n;
}

/* SPEC 1: a string holds no NUL, but a hostile one may; a C string would
 * end at it and silently lose the rest, so each is kept visible as \x00. */
int ar_copy_string(char *out, size_t cap, const uint8_t *p, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		size_t need = p[i] ? 1 : 4;
		if (o + need >= cap)
			return -1;
		if (p[i])
			out[o] = (char)p[i];
		else
			memcpy(out + o, "\\x00", 4);
		o += need;
	}
	out[o] = 0;
	return 0;
}

int ar_header_decode(ar_header_t *h, const uint8_t *buf, size_t len, uint64_t off, ar_error_t *err)
{
	memset(h, 0, sizeof *h);
	if (len < 16 || memcmp(buf, AR_FILE_MAGIC, AR_FILE_MAGIC_LEN) != 0)
		return ar_set_error(err, AR_EFORMAT, off, "not an allocrr trace (no ALLOCRRT magic in header frame)");
	h->version_major = (uint16_t)(buf[8] | buf[9] << 8);
	h->version_minor = (uint16_t)(buf[10] | buf[11] << 8);
	h->flags = ar_get_u32le(buf + 12);
	if (h->version_major < AR_TRACE_VERSION_MAJOR_MIN || h->version_major > AR_TRACE_VERSION_MAJOR)
		return ar_set_error(err, AR_EVERSION, off + 8,
				    "trace format version %u.%u; this reader knows major versions %u to %u: use a newer allocrr",
				    h->version_major, h->version_minor, AR_TRACE_VERSION_MAJOR_MIN, AR_TRACE_VERSION_MAJOR);
	dec_t d = {buf + 16, buf, buf + len, off, err, 0};
	get_string(&d, h->recorder_version, sizeof h->recorder_version, "recorder version");
	h->pid = get_varint(&d, "pid");
	h->ppid = get_varint(&d, "ppid");
	get_string(&d, h->cmdline, sizeof h->cmdline, "command line");
	h->start_wall_ns = get_varint(&d, "start wall time");
	h->start_mono_ns = get_varint(&d, "start monotonic time");
	h->clock_resolution_ns = get_varint(&d, "clock resolution");
	h->page_size = get_varint(&d, "page size");
	h->time_unit_ns = get_varint(&d, "time unit");
	if (d.rc == 0 && h->time_unit_ns == 0)
		d.rc = ar_set_error(err, AR_EFORMAT, off, "header: time unit is 0 ns");
	uint64_t n = get_varint(&d, "op table count");
	if (d.rc == 0 && n >= AR_OP_LIMIT)
		d.rc = ar_set_error(err, AR_EFORMAT, off, "header: op table has %llu entries, at most %u allowed",
				    (unsigned long long)n, AR_OP_LIMIT - 1);
	for (uint64_t i = 0; d.rc == 0 && i < n; i++) {
		uint64_t at = off + (uint64_t)(d.p - buf);
		uint64_t code = get_varint(&d, "op code");
		uint64_t fields = get_varint(&d, "op fields");
		if (d.rc)
			break;
		if (code == 0 || code >= AR_OP_LIMIT || fields > AR_F_ALL || h->ops[code].name[0]) {
			d.rc = ar_set_error(err, AR_EFORMAT, at, "header: op table entry %llu (code %llu, fields 0x%llx) is invalid or repeated",
					    (unsigned long long)i, (unsigned long long)code, (unsigned long long)fields);
			break;
		}
		get_string(&d, h->ops[code].name, sizeof h->ops[code].name, "op name");
		if (d.rc == 0 && h->ops[code].name[0] == 0)
			d.rc = ar_set_error(err, AR_EFORMAT, at, "header: op %llu has an empty name", (unsigned long long)code);
		/* SPEC 3.1: the codes this version defines have fixed names and fields.
		 * The name goes into the message raw: tools escape messages (ar_error_t). */
		if (d.rc == 0 && code <= AR_OP_MAX_KNOWN &&
		    (fields != ar_op_fields((unsigned)code) || strcmp(h->ops[code].name, ar_op_name((unsigned)code))))
			d.rc = ar_set_error(err, AR_EFORMAT, at,
					    "header: op %llu declared as %s with fields 0x%llx, SPEC says %s with 0x%x",
					    (unsigned long long)code, h->ops[code].name,
					    (unsigned long long)fields, ar_op_name((unsigned)code),
					    ar_op_fields((unsigned)code));
		/* SPEC 3.1, since 1.3: so do the sized ops (5.1), in a 1.3 trace. */
		if (d.rc == 0 && ar_hdr_since(h, 1, 3) && ar_sized_base((unsigned)code) &&
		    (fields != ar_sized_fields((unsigned)code) || strcmp(h->ops[code].name, ar_sized_name((unsigned)code))))
			d.rc = ar_set_error(err, AR_EFORMAT, at,
					    "header: op %llu declared as %s with fields 0x%llx, SPEC says %s with 0x%x",
					    (unsigned long long)code, h->ops[code].name,
					    (unsigned long long)fields, ar_sized_name((unsigned)code),
					    ar_sized_fields((unsigned)code));
		h->ops[code].fields = (uint8_t)fields;
	}
	/* 1.2's fields follow the op table; what follows them belongs to later
	 * minor versions (SPEC 8). */
	if (ar_hdr_since(h, 1, 2)) {
		get_string(&d, h->source_format, sizeof h->source_format, "source format");
		get_string(&d, h->scrub_note, sizeof h->scrub_note, "scrub note");
	}
	return d.rc;
}
