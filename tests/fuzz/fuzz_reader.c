/*
 * fuzz_reader.c — libFuzzer target for the trace reader: any bytes as a
 * trace file, opened, indexed, iterated in file and merged order, metadata
 * queried. The reader must never crash, hang, leak or read out of bounds;
 * `make fuzz` runs it under ASan+UBSan, and fuzz_driver.c replays the
 * committed corpus inside `make test`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"

#include "ar_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void iterate(ar_reader_t *r, int merged)
{
	ar_event_t e;
	uint64_t n = 0;
	while ((merged ? ar_reader_next_merged(r, &e) : ar_reader_next(r, &e)) == 1) {
		const ar_thread_info_t *t = ar_reader_thread(r, e.thread);
		if (!t)
			__builtin_trap(); /* every event's thread is known */
		if (e.stack)
			ar_reader_stack(r, e.stack, NULL);
		if (++n > ar_reader_event_count(r))
			__builtin_trap(); /* never more events than indexed */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_input_fd("fuzz", data, size);
	if (fd < 0)
		return 0;
	ar_reader_t *r;
	ar_error_t err;
	if (ar_reader_open_fd(&r, fd, "fuzz", &err) == 0) {
		for (uint32_t i = 0; i < ar_reader_thread_count(r); i++)
			ar_reader_thread_at(r, i);
		for (uint32_t i = 0; i < ar_reader_module_count(r); i++)
			ar_reader_module(r, i);
		iterate(r, 0);
		ar_reader_rewind(r);
		iterate(r, 1);
		ar_reader_close(r);
	}
	close(fd);
	return 0;
}
