/*
 * rec_tracecheck — the recorder tests' own look into a trace, through the
 * public ar_reader API only (so it also checks that what the shim writes
 * reads back). Independent of alloctrace on purpose: the recorder's tests
 * must not pass just because the two share a bug.
 *
 *   rec_tracecheck check FILE   events in sequence order obey SPEC 4: no
 *                               address handed out while live, every free
 *                               or realloc of a recorded block after its
 *                               allocation; prints a summary; exit 1 if not
 *   rec_tracecheck count FILE.. events per op, summed over the files
 *   rec_tracecheck info FILE    header, status, threads, stacks, modules
 *
 * Exit status: 0 ok, 1 check failed, 2 unreadable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_symbolize.h"
#include "ar_trace.h"
#include "rec_open.h"

/* ---- a set of live addresses (open addressing, grows) ---------------------- */
static uint64_t *set;
static size_t set_cap, set_n;

static size_t slot_of(uint64_t k, size_t cap)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 20) & (cap - 1);
}

static int set_has(uint64_t k)
{
	for (size_t i = slot_of(k, set_cap);; i = (i + 1) & (set_cap - 1)) {
		if (set[i] == k)
			return 1;
		if (set[i] == 0)
			return 0;
	}
}

static void set_add(uint64_t k);
static void grow(void)
{
	uint64_t *old = set;
	size_t oc = set_cap;
	set_cap = oc ? oc * 2 : 1024;
	set = calloc(set_cap, sizeof *set);
	set_n = 0;
	for (size_t i = 0; i < oc; i++)
		if (old[i] && old[i] != 1)
			set_add(old[i]);
	free(old);
}

static void set_add(uint64_t k)
{
	if ((set_n + 1) * 2 > set_cap)
		grow();
	size_t i = slot_of(k, set_cap);
	while (set[i] && set[i] != 1)
		i = (i + 1) & (set_cap - 1);
	set[i] = k;
	set_n++;
}

/* Deletion leaves a tombstone (1: never a heap address). */
static int set_del(uint64_t k)
{
	for (size_t i = slot_of(k, set_cap);; i = (i + 1) & (set_cap - 1)) {
		if (set[i] == k) {
			set[i] = 1;
			return 1;
		}
		if (set[i] == 0)
			return 0;
	}
}

/* A realloc's result exists only from its seq2 on (SPEC 4): another thread
 * may free the old address and get it back from malloc in between. Results
 * wait here until the merged order passes seq2; few are ever in flight. */
static struct pending {
	uint64_t seq2, addr;
} *pend;
static size_t pend_n, pend_cap;

static void pend_add(uint64_t seq2, uint64_t addr)
{
	if (pend_n == pend_cap) {
		pend_cap = pend_cap ? 2 * pend_cap : 64;
		pend = realloc(pend, pend_cap * sizeof *pend);
		if (!pend) {
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	pend[pend_n++] = (struct pending){seq2, addr};
}

/* Makes live the results whose seq2 is before seq; counts those returned
 * while still live. */
static uint64_t pend_flush(uint64_t seq, uint64_t *live)
{
	uint64_t errors = 0;
	for (size_t i = 0; i < pend_n;) {
		if (pend[i].seq2 >= seq) {
			i++;
			continue;
		}
		if (set_has(pend[i].addr)) {
			fprintf(stderr, "seq %" PRIu64 ": realloc returned 0x%" PRIx64 " which is still live\n",
				pend[i].seq2, pend[i].addr);
			errors++;
		} else {
			set_add(pend[i].addr);
			(*live)++;
		}
		pend[i] = pend[--pend_n];
	}
	return errors;
}

static int cmd_check(const char *path)
{
	ar_reader_t *r = open_or_die(path);
	grow();
	ar_event_t e;
	uint64_t n = 0, live = 0, unknown_frees = 0, errors = 0, by_op[AR_OP_LIMIT] = {0}, last_seq = 0;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		n++;
		by_op[e.op]++;
		if (e.seq <= last_seq) {
			fprintf(stderr, "seq %" PRIu64 " after %" PRIu64 "\n", e.seq, last_seq);
			errors++;
		}
		last_seq = e.seq;
		errors += pend_flush(e.seq, &live);
		uint64_t in = 0;
		if (e.op == AR_OP_FREE || e.op == AR_OP_REALLOC || e.op == AR_OP_REALLOCARRAY)
			in = e.ptr;
		if (in && set_del(in))
			live--;
		else if (in)
			unknown_frees++; /* allocated before recording started */
		if (e.result && e.seq2) {
			pend_add(e.seq2, e.result);
		} else if (e.result) {
			if (set_has(e.result)) {
				fprintf(stderr, "seq %" PRIu64 ": %s returned 0x%" PRIx64 " which is still live\n",
					e.seq, ar_op_name(e.op), e.result);
				errors++;
			} else {
				set_add(e.result);
				live++;
			}
		} else if (in && (e.op == AR_OP_REALLOC || e.op == AR_OP_REALLOCARRAY) &&
			   (e.size != 0 && (e.op == AR_OP_REALLOC || e.count != 0))) {
			set_add(in); /* failed realloc: the old block stays */
			live++;
		}
	}
	errors += pend_flush(UINT64_MAX, &live);
	if (rc < 0) {
		fprintf(stderr, "%s: iteration failed: %s\n", path, ar_reader_error(r)->msg);
		errors++;
	}
	const ar_footer_t *f = ar_reader_footer(r);
	printf("events %" PRIu64 "\nthreads %u\nstatus %s\nunknown_frees %" PRIu64 "\nlive_at_end %" PRIu64 "\n", n,
	       ar_reader_thread_count(r),
	       ar_reader_status(r) == AR_STATUS_COMPLETE    ? "complete"
	       : ar_reader_status(r) == AR_STATUS_TRUNCATED ? "truncated"
							    : "corrupt",
	       unknown_frees, live);
	if (f)
		printf("footer_events %" PRIu64 "\ndropped %" PRIu64 "\n", f->events, f->dropped_events);
	for (unsigned op = 1; op < AR_OP_LIMIT; op++)
		if (by_op[op])
			printf("op %s %" PRIu64 "\n", ar_op_name(op), by_op[op]);
	printf("errors %" PRIu64 "\n", errors);
	ar_reader_close(r);
	return errors ? 1 : 0;
}

static int cmd_count(int argc, char **argv)
{
	uint64_t by_op[AR_OP_LIMIT] = {0};
	for (int i = 0; i < argc; i++) {
		ar_reader_t *r = open_or_die(argv[i]);
		ar_event_t e;
		while (ar_reader_next(r, &e) == 1)
			by_op[e.op]++;
		ar_reader_close(r);
	}
	for (unsigned op = 1; op <= AR_OP_MAX_KNOWN; op++)
		printf("%s %" PRIu64 "\n", ar_op_name(op), by_op[op]);
	return 0;
}

static int cmd_info(const char *path)
{
	ar_reader_t *r = open_or_die(path);
	const ar_header_t *h = ar_reader_header(r);
	printf("pid %" PRIu64 "\nppid %" PRIu64 "\ncmdline %s\nflags %u\nrecorder %s\npage_size %" PRIu64
	       "\nclock_resolution_ns %" PRIu64 "\n",
	       h->pid, h->ppid, h->cmdline, h->flags, h->recorder_version, h->page_size, h->clock_resolution_ns);
	printf("status %d\nevents %" PRIu64 "\n", (int)ar_reader_status(r), ar_reader_event_count(r));
	for (uint32_t i = 0; i < ar_reader_thread_count(r); i++) {
		const ar_thread_info_t *t = ar_reader_thread(r, i);
		printf("thread %u tid %" PRIu64 " name '%s' start %" PRIu64 " exit %" PRIu64 " events %" PRIu64 "\n",
		       t->index, t->os_tid, t->name, t->start_seq, t->exit_seq, t->events);
	}
	printf("stacks %u\nmodules %u\n", ar_reader_stack_count(r), ar_reader_module_count(r));
	for (uint32_t i = 0; i < ar_reader_module_count(r); i++) {
		const ar_module_info_t *m = ar_reader_module(r, i);
		printf("module %s base 0x%" PRIx64 " size %" PRIu64 " build_id_len %u\n", m->path, m->base, m->size,
		       m->build_id_len);
	}
	ar_reader_close(r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "check") == 0)
		return cmd_check(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "count") == 0)
		return cmd_count(argc - 2, argv + 2);
	if (argc >= 3 && strcmp(argv[1], "info") == 0)
		return cmd_info(argv[2]);
	fprintf(stderr, "usage: rec_tracecheck check|count|info FILE...\n");
	return 2;
}
