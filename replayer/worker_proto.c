/*
 * worker_proto.c — malloc-free line writer for the worker's report
 * (worker_proto.h). ar_wproto_text replaces newlines by spaces, so a reason
 * or a path stays on its one line whatever it contains.
 */
#include <errno.h>
#include <unistd.h>

#include "worker_proto.h"

void ar_wproto_init(ar_wproto_t *r, int fd)
{
	r->fd = fd;
	r->failed = 0;
	r->len = 0;
}

void ar_wproto_flush(ar_wproto_t *r)
{
	size_t off = 0;
	while (off < r->len && !r->failed) {
		ssize_t n = write(r->fd, r->buf + off, r->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			r->failed = 1;
		else
			off += (size_t)n;
	}
	r->len = 0;
}

static void put(ar_wproto_t *r, char c)
{
	if (r->len == sizeof r->buf)
		ar_wproto_flush(r);
	r->buf[r->len++] = c;
}

void ar_wproto_str(ar_wproto_t *r, const char *s)
{
	for (; *s; s++)
		put(r, *s);
}

void ar_wproto_text(ar_wproto_t *r, const char *s)
{
	for (; *s; s++)
		put(r, (*s == '\n' || *s == '\r') ? ' ' : *s);
}

void ar_wproto_u64(ar_wproto_t *r, uint64_t v)
{
	char d[24];
	int n = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		put(r, d[--n]);
}

void ar_wproto_sp_u64(ar_wproto_t *r, uint64_t v)
{
	put(r, ' ');
	ar_wproto_u64(r, v);
}

void ar_wproto_kv(ar_wproto_t *r, char tag, const char *name, uint64_t v)
{
	put(r, tag);
	put(r, ' ');
	ar_wproto_str(r, name);
	ar_wproto_sp_u64(r, v);
	put(r, '\n');
}
