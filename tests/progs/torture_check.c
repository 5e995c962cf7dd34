/*
 * torture_check — reads a trace written by a torture program (through the
 * public ar_reader API) and compares it with what the program says it did
 * (tests/progs/torture.h describes the tagged sizes and the shared file).
 *
 *   torture_check count TRACE
 *       In sequence order: tagged calls of tt_mix per op ("op NAME N", the
 *       format the programs print; a free counts when it frees a block a
 *       tagged call returned), the signal handlers' mallocs and frees
 *       ("handler malloc N", "handler free N"), those of tests/progs/rec_dllib.c
 *       ("dllib malloc N", "dllib free N": size 3333; "dllib stacked N": those
 *       whose innermost frame is in a module named dl_*), mallocs of each worker
 *       sequence ("seq W N"), then "info" lines: status, dropped, events,
 *       threads, order errors (a seq not increasing, an address returned
 *       while live).
 *   torture_check seq TRACE SHARED BOUND_MS
 *       For each worker in the shared file: its mallocs in the trace must be
 *       exactly the first N of its sequence (no gap, nothing foreign), N at
 *       most what it finished plus the one in flight, and at least what it
 *       had finished when the program took its snapshot (exit from a thread).
 *       With BOUND_MS > 0 and progress records, every malloc finished
 *       BOUND_MS before the last progress record must be in the trace; a
 *       miss is a "violation" (printed, not an error: the caller decides).
 *
 * Exit status: 0 ok, 1 a check failed, 2 unreadable or usage.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_trace.h"
#include "torture.h"
#include "rec_open.h"

/* ---- live blocks: address -> tag (open addressing, tombstones, grows) ----- */
#define TAG_NONE 0
#define TAG_MIX 1
#define TAG_HANDLER 2
#define TAG_DLLIB 3 /* malloc(3333) in tests/progs/rec_dllib.c */
#define TAG_OTHER 4
typedef struct {
	uint64_t key; /* 0 empty, 1 tombstone */
	int tag;
} slot_t;
static slot_t *tab;
static size_t cap, used;

static size_t h(uint64_t k)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int put(uint64_t k, int tag);
static void grow(void)
{
	slot_t *old = tab;
	size_t oc = cap;
	cap = oc ? oc * 2 : 4096;
	tab = calloc(cap, sizeof *tab);
	if (!tab) {
		perror("calloc");
		exit(2);
	}
	used = 0;
	for (size_t i = 0; i < oc; i++)
		if (old[i].key > 1)
			put(old[i].key, old[i].tag);
	free(old);
}

/* 1 if k was already live. */
static int put(uint64_t k, int tag)
{
	if ((used + 1) * 2 > cap)
		grow();
	size_t i = h(k), tomb = SIZE_MAX;
	for (;; i = (i + 1) & (cap - 1)) {
		if (tab[i].key == k) {
			tab[i].tag = tag;
			return 1;
		}
		if (tab[i].key == 1 && tomb == SIZE_MAX)
			tomb = i;
		if (tab[i].key == 0)
			break;
	}
	if (tomb != SIZE_MAX)
		i = tomb;
	else
		used++;
	tab[i].key = k;
	tab[i].tag = tag;
	return 0;
}

/* The tag of k (TAG_NONE if not live); removes it. */
static int take(uint64_t k)
{
	for (size_t i = h(k);; i = (i + 1) & (cap - 1)) {
		if (tab[i].key == k) {
			tab[i].key = 1;
			return tab[i].tag;
		}
		if (tab[i].key == 0)
			return TAG_NONE;
	}
}

/* Results of realloc/reallocarray exist only from seq2 on (SPEC 4): they
 * wait in a min-heap on seq2 until the merged order reaches it. */
typedef struct {
	uint64_t seq2, addr;
	int tag;
} pending_t;
static pending_t *heap;
static size_t hn, hcap;

static void heap_push(pending_t p)
{
	if (hn == hcap) {
		hcap = hcap ? hcap * 2 : 256;
		heap = realloc(heap, hcap * sizeof *heap);
		if (!heap) {
			perror("realloc");
			exit(2);
		}
	}
	size_t i = hn++;
	while (i && heap[(i - 1) / 2].seq2 > p.seq2) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = p;
}

static pending_t heap_pop(void)
{
	pending_t top = heap[0], last = heap[--hn];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= hn)
			break;
		if (c + 1 < hn && heap[c + 1].seq2 < heap[c].seq2)
			c++;
		if (heap[c].seq2 >= last.seq2)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (hn)
		heap[i] = last;
	return top;
}

static uint64_t live_errors;
static void add_live(uint64_t seq, uint64_t addr, int tag)
{
	if (put(addr, tag)) {
		fprintf(stderr, "seq %" PRIu64 ": 0x%" PRIx64 " returned while live\n", seq, addr);
		live_errors++;
	}
}

/* Make live every realloc result whose seq2 comes before seq. */
static void settle(uint64_t seq)
{
	while (hn && heap[0].seq2 < seq) {
		pending_t p = heap_pop();
		add_live(p.seq2, p.addr, p.tag);
	}
}

static int mix_op(const ar_event_t *e)
{
	if (e->size < TT_LO || e->size >= TT_HI)
		return -1;
	switch (e->op) {
	case AR_OP_MALLOC: return TT_MALLOC;
	case AR_OP_CALLOC: return TT_CALLOC;
	case AR_OP_REALLOC: return TT_REALLOC;
	case AR_OP_REALLOCARRAY: return TT_REALLOCARRAY;
	case AR_OP_POSIX_MEMALIGN: return TT_POSIX_MEMALIGN;
	case AR_OP_ALIGNED_ALLOC: return TT_ALIGNED_ALLOC;
	case AR_OP_MEMALIGN: return TT_MEMALIGN;
	default: return -1;
	}
}

/* 1 if the innermost frame of stack id lies in a module whose file name
 * starts with "dl_" (the copies of rec_dllib torture_rec_dl.sh loads). */
static int in_dl_module(ar_reader_t *r, uint32_t id)
{
	uint32_t depth = 0;
	const uint64_t *f = id ? ar_reader_stack(r, id, &depth) : NULL;
	if (!f || depth == 0)
		return 0;
	for (uint32_t i = 0; i < ar_reader_module_count(r); i++) {
		const ar_module_info_t *m = ar_reader_module(r, i);
		const char *base = strrchr(m->path, '/');
		base = base ? base + 1 : m->path;
		if (f[0] >= m->base && f[0] < m->base + m->size && strncmp(base, "dl_", 3) == 0)
			return 1;
	}
	return 0;
}

static const char *status_name(ar_status_t s)
{
	return s == AR_STATUS_COMPLETE ? "complete" : s == AR_STATUS_TRUNCATED ? "truncated" : "corrupt";
}

static int cmd_count(const char *path)
{
	ar_reader_t *r = open_or_die(path);
	grow();
	uint64_t ops[TT_NOPS] = {0}, hmalloc = 0, hfree = 0, dmalloc = 0, dfree = 0, dstacked = 0, seqw[TT_SEQ_MAXW] = {0}, n = 0, last = 0, errors = 0;
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		n++;
		if (e.seq <= last)
			errors++;
		last = e.seq;
		settle(e.seq);
		int in_tag = TAG_NONE;
		if (e.ptr && (e.op == AR_OP_FREE || e.op == AR_OP_REALLOC || e.op == AR_OP_REALLOCARRAY))
			in_tag = take(e.ptr);
		if (e.op == AR_OP_FREE) {
			if (in_tag == TAG_MIX)
				ops[TT_FREE]++;
			else if (in_tag == TAG_HANDLER)
				hfree++;
			else if (in_tag == TAG_DLLIB)
				dfree++;
			continue;
		}
		int op = mix_op(&e);
		int tag = op >= 0 ? TAG_MIX : TAG_OTHER;
		if (op >= 0)
			ops[op]++;
		if (e.op == AR_OP_MALLOC && e.size == TT_HANDLER)
			hmalloc++, tag = TAG_HANDLER;
		if (e.op == AR_OP_MALLOC && e.size == 3333) {
			dmalloc++;
			tag = TAG_DLLIB;
			dstacked += in_dl_module(r, e.stack);
		}
		if (e.op == AR_OP_MALLOC && e.size >= TT_SEQ_LO && e.size < TT_SEQ_LO + 1000u * TT_SEQ_MAXW)
			seqw[(e.size - TT_SEQ_LO) / 1000]++;
		if (e.result && e.seq2)
			heap_push((pending_t){e.seq2, e.result, tag});
		else if (e.result)
			add_live(e.seq, e.result, tag);
	}
	settle(UINT64_MAX);
	errors += live_errors;
	if (rc < 0)
		errors++;
	for (int i = 0; i < TT_NOPS; i++)
		printf("op %s %" PRIu64 "\n", tt_names[i], ops[i]);
	printf("handler malloc %" PRIu64 "\nhandler free %" PRIu64 "\n", hmalloc, hfree);
	printf("dllib malloc %" PRIu64 "\ndllib free %" PRIu64 "\ndllib stacked %" PRIu64 "\n", dmalloc, dfree,
	       dstacked);
	for (int w = 0; w < TT_SEQ_MAXW; w++)
		if (seqw[w])
			printf("seq %d %" PRIu64 "\n", w, seqw[w]);
	const ar_footer_t *f = ar_reader_footer(r);
	printf("info status %s\ninfo dropped %" PRIu64 "\ninfo events %" PRIu64 "\ninfo threads %u\n"
	       "info order_errors %" PRIu64 "\n",
	       status_name(ar_reader_status(r)), f ? f->dropped_events : 0, n, ar_reader_thread_count(r), errors);
	ar_reader_close(r);
	return errors ? 1 : 0;
}

static const tt_shared_t *map_shared(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(tt_shared_t)) {
		fprintf(stderr, "%s: not a torture shared file\n", path);
		exit(2);
	}
	const tt_shared_t *s = mmap(NULL, sizeof *s, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (s != MAP_FAILED && s->magic == 0) {
		/* The program was killed before it set the file up: no worker
		 * did anything the trace could be checked against. */
		static const tt_shared_t none = {TT_MAGIC, 0, {0}, {0}, 0, 0, {{0, {0}}}};
		return &none;
	}
	if (s == MAP_FAILED || s->magic != TT_MAGIC || s->nworkers > TT_SEQ_MAXW) {
		fprintf(stderr, "%s: bad shared file\n", path);
		exit(2);
	}
	return s;
}

static int cmd_seq(const char *path, const char *shared, double bound_ms)
{
	const tt_shared_t *s = map_shared(shared);
	ar_reader_t *r = open_or_die(path);
	unsigned nw = s->nworkers;
	uint64_t n[TT_SEQ_MAXW] = {0}, gaps = 0, errors = 0;
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		if (e.op != AR_OP_MALLOC || e.size < TT_SEQ_LO || e.size >= TT_SEQ_LO + 1000u * nw)
			continue;
		unsigned w = (unsigned)((e.size - TT_SEQ_LO) / 1000);
		if (e.size != TT_SEQ_SIZE(w, n[w])) {
			if (gaps++ < 5)
				fprintf(stderr, "worker %u: malloc #%" PRIu64 " has size %" PRIu64 ", want %u\n", w,
					n[w], e.size, TT_SEQ_SIZE(w, n[w]));
		}
		n[w]++;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, ar_reader_error(r)->msg);
		errors++;
	}
	uint64_t np = atomic_load(&s->nprogress), first = np > TT_PROGRESS ? np - TT_PROGRESS : 0;
	uint64_t t_last = np ? atomic_load(&s->progress[(np - 1) % TT_PROGRESS].t_ns) : 0;
	uint64_t bound_ns = (uint64_t)(bound_ms * 1e6), violations = 0, lost = 0, max_loss_ns = 0;
	for (unsigned w = 0; w < nw; w++) {
		uint64_t done = atomic_load(&s->done[w]), snap = atomic_load(&s->snapshot[w]);
		printf("worker %u trace %" PRIu64 " done %" PRIu64 " snapshot %" PRIu64 "\n", w, n[w], done,
		       atomic_load(&s->snapshot_taken) ? snap : 0);
		if (n[w] > done + 1) {
			fprintf(stderr, "worker %u: %" PRIu64 " mallocs in the trace, it finished only %" PRIu64 "\n",
				w, n[w], done);
			errors++;
		}
		if (atomic_load(&s->snapshot_taken) && n[w] < snap) {
			fprintf(stderr, "worker %u: %" PRIu64 " mallocs in the trace, %" PRIu64
				" were done before exit() was called\n", w, n[w], snap);
			errors++;
		}
		lost += done > n[w] ? done - n[w] : 0;
		if (!bound_ns || !np)
			continue;
		/* The oldest progress record that shows a malloc missing from the trace. */
		for (uint64_t i = first; i < np; i++) {
			const tt_progress_t *p = &s->progress[i % TT_PROGRESS];
			uint64_t t = atomic_load(&p->t_ns);
			if (!t || p->done[w] <= n[w])
				continue;
			uint64_t age = t_last - t;
			if (age > max_loss_ns)
				max_loss_ns = age;
			if (age >= bound_ns) {
				violations++;
				fprintf(stderr, "worker %u: malloc #%" PRIu64 " finished %.1f ms before the last progress record, not in the trace\n",
					w, n[w] + 1, (double)age / 1e6);
			}
			break;
		}
	}
	printf("gaps %" PRIu64 "\nlost %" PRIu64 "\nviolations %" PRIu64 "\nmax_loss_ms %.1f\nstatus %s\n", gaps, lost,
	       violations, (double)max_loss_ns / 1e6, status_name(ar_reader_status(r)));
	ar_reader_close(r);
	return gaps || errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "count") == 0)
		return cmd_count(argv[2]);
	if (argc == 5 && strcmp(argv[1], "seq") == 0)
		return cmd_seq(argv[2], argv[3], atof(argv[4]));
	fprintf(stderr, "usage: torture_check count TRACE | seq TRACE SHARED BOUND_MS\n");
	return 2;
}
