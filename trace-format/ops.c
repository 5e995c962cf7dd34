/*
 * ops.c — the op table of SPEC 5.1/5.2 and error names.
 *
 * Op codes and their field sets never change once published: a reader of any
 * later minor version decodes version-1.0 events with this table.
 */
#include <stdarg.h>
#include <stdio.h>

#include "format.h"

const uint8_t ar_known_op_fields[AR_OP_LIMIT] = {
	[AR_OP_MALLOC] = AR_F_SIZE | AR_F_RESULT,
	[AR_OP_CALLOC] = AR_F_COUNT | AR_F_SIZE | AR_F_RESULT,
	[AR_OP_REALLOC] = AR_F_SEQ2 | AR_F_PTR | AR_F_SIZE | AR_F_RESULT,
	[AR_OP_REALLOCARRAY] = AR_F_SEQ2 | AR_F_PTR | AR_F_COUNT | AR_F_SIZE | AR_F_RESULT,
	[AR_OP_FREE] = AR_F_PTR,
	[AR_OP_POSIX_MEMALIGN] = AR_F_ALIGN | AR_F_SIZE | AR_F_RESULT,
	[AR_OP_ALIGNED_ALLOC] = AR_F_ALIGN | AR_F_SIZE | AR_F_RESULT,
	[AR_OP_MEMALIGN] = AR_F_ALIGN | AR_F_SIZE | AR_F_RESULT,
	[AR_OP_VALLOC] = AR_F_SIZE | AR_F_RESULT,
	[AR_OP_PVALLOC] = AR_F_SIZE | AR_F_RESULT,
};

static const char *const op_names[AR_OP_MAX_KNOWN + 1] = {
	[AR_OP_MALLOC] = "malloc",
	[AR_OP_CALLOC] = "calloc",
	[AR_OP_REALLOC] = "realloc",
	[AR_OP_REALLOCARRAY] = "reallocarray",
	[AR_OP_FREE] = "free",
	[AR_OP_POSIX_MEMALIGN] = "posix_memalign",
	[AR_OP_ALIGNED_ALLOC] = "aligned_alloc",
	[AR_OP_MEMALIGN] = "memalign",
	[AR_OP_VALLOC] = "valloc",
	[AR_OP_PVALLOC] = "pvalloc",
};

/* SPEC 5.1: old_size travels in the align field, which none of the three
 * base ops has, so each sized op is its base op's mask plus AR_F_ALIGN. */
static const struct {
	uint8_t base, fields;
	char name[20];
} sized_ops[AR_WIRE_SIZED_LAST + 1] = {
	[AR_WIRE_FREE_SIZED] = {AR_OP_FREE, AR_F_PTR | AR_F_ALIGN, "free_sized"},
	[AR_WIRE_REALLOC_SIZED] = {AR_OP_REALLOC, AR_F_SEQ2 | AR_F_PTR | AR_F_ALIGN | AR_F_SIZE | AR_F_RESULT, "realloc_sized"},
	[AR_WIRE_REALLOCARRAY_SIZED] = {AR_OP_REALLOCARRAY, AR_F_ALL, "reallocarray_sized"},
};

unsigned ar_sized_base(unsigned code) { return code <= AR_WIRE_SIZED_LAST ? sized_ops[code].base : 0; }
const char *ar_sized_name(unsigned code) { return ar_sized_base(code) ? sized_ops[code].name : NULL; }
unsigned ar_sized_fields(unsigned code) { return ar_sized_base(code) ? sized_ops[code].fields : 0; }

int ar_op_is_sized(const ar_header_t *h, unsigned code)
{
	return ar_hdr_since(h, 1, 3) && ar_sized_base(code) != 0;
}

unsigned ar_sized_code(unsigned op)
{
	for (unsigned c = AR_OP_MAX_KNOWN + 1; c <= AR_WIRE_SIZED_LAST; c++)
		if (sized_ops[c].base == op)
			return c;
	return 0;
}

const char *ar_op_name(unsigned op)
{
	return op >= 1 && op <= AR_OP_MAX_KNOWN ? op_names[op] : NULL;
}

unsigned ar_op_fields(unsigned op)
{
	return op < AR_OP_LIMIT ? ar_known_op_fields[op] : 0;
}

void ar_header_init(ar_header_t *h)
{
	memset(h, 0, sizeof *h);
	h->version_major = AR_TRACE_VERSION_MAJOR;
	h->version_minor = AR_TRACE_VERSION_MINOR;
	h->time_unit_ns = AR_TIME_UNIT_NS;
	for (unsigned op = 1; op <= AR_OP_MAX_KNOWN; op++) {
		snprintf(h->ops[op].name, sizeof h->ops[op].name, "%s", op_names[op]);
		h->ops[op].fields = ar_known_op_fields[op];
	}
	for (unsigned c = AR_OP_MAX_KNOWN + 1; c <= AR_WIRE_SIZED_LAST; c++) { /* SPEC 5.1, since 1.3 */
		snprintf(h->ops[c].name, sizeof h->ops[c].name, "%s", sized_ops[c].name);
		h->ops[c].fields = sized_ops[c].fields;
	}
}

const char *ar_strerror(int code)
{
	switch (code) {
	case AR_OK: return "success";
	case AR_EIO: return "input/output error";
	case AR_ENOMEM: return "out of memory";
	case AR_EFORMAT: return "corrupt or not a trace";
	case AR_ETRUNCATED: return "truncated trace";
	case AR_EVERSION: return "unsupported trace format version";
	case AR_EFULL: return "buffer full";
	case AR_EINVAL: return "invalid argument";
	case AR_ELIMIT: return "exceeds a format limit";
	case AR_ECOMPRESS: return "compression error";
	default: return "unknown error";
	}
}

int ar_set_error(ar_error_t *err, int code, uint64_t offset, const char *fmt, ...)
{
	if (err) {
		err->code = code;
		err->offset = offset;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}
