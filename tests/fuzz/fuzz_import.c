/*
 * fuzz_import.c — libFuzzer target for `alloctrace import`: any bytes as a
 * memory_replay or mtrace log (the first byte picks the format, bit 0, and
 * --skip-bad, bit 1), converted by the same parsers and sink the command
 * uses (analysis/import.h) into a memfd.
 *
 * Beyond "never crash, hang, leak or read out of bounds": a malformed line
 * is refused with a message that names a line within the input; a
 * conversion that succeeds is a complete trace that reads back through the
 * trace library, in sequence order, with as many events as the sink wrote,
 * each of the ops the formats have.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"

#include "import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The trace in fd reads back whole, with `events` events of known ops. */
static void check_trace(int fd, uint64_t events)
{
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open_fd(&r, fd, "import", &err) != 0)
		__builtin_trap();
	ar_event_t e;
	uint64_t n = 0;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		n++;
		if (e.op != AR_OP_MALLOC && e.op != AR_OP_CALLOC && e.op != AR_OP_MEMALIGN && e.op != AR_OP_REALLOC &&
		    e.op != AR_OP_FREE)
			__builtin_trap();
	}
	if (rc != 0 || ar_reader_status(r) != AR_STATUS_COMPLETE || n != events)
		__builtin_trap();
	ar_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	int mtrace = data[0] & 1;
	ar_imp_input_t in = {.path = "fuzz", .p = size > 1 ? (const char *)data + 1 : NULL, .len = size - 1,
			     .skip_bad = (data[0] & 2) != 0};
	int fd = memfd_create("import", 0);
	if (fd < 0)
		return 0;
	ar_imp_header_t h = {.input_name = "fuzz"};
	ar_error_t err = {0};
	ar_import_t *im = NULL;
	int rc = (mtrace ? ar_imp_mtrace : ar_imp_memreplay)(&in, &h, fd, &im, &err);
	ar_imp_totals_t tot = {0};
	if (im) {
		ar_error_t cerr = {0};
		int crc = ar_import_close(im, rc == 0, &tot, &cerr);
		if (rc == 0)
			rc = crc;
	}
	if (rc == -1) {
		unsigned long long line;
		const char *m = strstr(in.msg, "line ");
		if (!m || sscanf(m, "line %llu", &line) != 1 || line == 0 || line > (unsigned long long)size)
			__builtin_trap();
	} else if (rc == 0) {
		lseek(fd, 0, SEEK_SET);
		check_trace(fd, tot.events);
	} else if (rc != AR_ENOMEM) {
		__builtin_trap(); /* nothing else can fail writing to a memfd */
	}
	close(fd);
	return 0;
}
