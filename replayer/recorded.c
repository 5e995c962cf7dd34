/*
 * recorded.c — what the recorded program itself ran on and measured (trace
 * format 1.1: the ALLOCATOR, PROCESS and RSS_SAMPLE records), as the traces
 * table stores it and the predictions (predict.c) use it.
 *
 * The allocator is named by matching the object the recorder proved served
 * the program's malloc against the registry: the same canonical path first
 * (recorded on this machine); else the same file name (another machine's
 * layout); else the same family by file name ("libjemalloc.so.1" is
 * jemalloc, "libtcmalloc.so.4" is gperftools' tcmalloc, which the registry
 * has as tcmalloc_minimal — the reason says so). A library no registry
 * entry matches leaves the name empty, and the reason says which it was:
 * replay then has no recorded row to compare with, and nothing is predicted.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* "libNAME.so…" or "liballocrr-NAME.so…" for registry name n ("libc.so…" for
 * glibc). */
static int same_family(const char *file, const char *n)
{
	if (!strcmp(n, "glibc"))
		return !strncmp(file, "libc.so", 7) || !strncmp(file, "libc-", 5);
	char a[128], b[128];
	snprintf(a, sizeof a, "lib%s", n);
	snprintf(b, sizeof b, "liballocrr-%s.so", n);
	size_t la = strlen(a);
	return (!strncmp(file, a, la) && (file[la] == '.' || file[la] == '_' || file[la] == '-')) ||
	       !strcmp(file, b) || !strncmp(file, b, strlen(b));
}

/* The registry name for the recorded object (path, soname), or "" with why. */
static void match_registry(ar_recorded_t *rec, const char *path, const char *soname)
{
	char canon[PATH_MAX];
	const char *p = realpath(path, canon) ? canon : path;
	int best = 0; /* 3 same path, 2 same file name, 1 same family */
	ar_allocator_t a, pick;
	for (int i = 0; i < ar_registry_count(); i++) {
		if (ar_registry_get(i, &a) != 0 || !a.installed || !a.library[0])
			continue;
		int score = !strcmp(a.library, p) ? 3
			  : !strcmp(base_name(a.library), base_name(p)) ||
				    (soname[0] && !strcmp(base_name(a.library), soname)) ? 2
			  : same_family(base_name(p), a.name) || (soname[0] && same_family(soname, a.name)) ? 1
												     : 0;
		if (score > best) {
			best = score;
			pick = a;
		}
	}
	if (!best) {
		snprintf(rec->reason, sizeof rec->reason,
			 "the recorded program's malloc came from %.600s, which no installed allocator of "
			 "allocreplay --list is", path);
		return;
	}
	snprintf(rec->allocator, sizeof rec->allocator, "%s", pick.name);
	if (best == 1)
		snprintf(rec->reason, sizeof rec->reason,
			 "the recorded program's malloc came from %.300s; replayed with %s's %.300s, the same "
			 "allocator family but another build", path, pick.name, pick.library);
}

/* A window's peak RSS (SPEC 6.10): since 2.1 the recorder says whether it
 * is the process's high-water mark, reached in the window, or the highest
 * sample; before, it was always the high-water mark, which in a process
 * that had run for a while may be hours older than the window. Then the
 * window's highest sample (its start and close included) is its peak as
 * far as the trace can tell. Returns a note for the reason, or NULL. */
static const char *window_peak(const ar_reader_t *r, const ar_process_info_t *p, double *peak)
{
	if (!(ar_reader_header(r)->flags & AR_HDR_WINDOW) || !p->peak_rss_bytes)
		return NULL;
	if (p->peak_source == AR_PEAK_SAMPLED)
		return "the window's peak RSS is its highest RSS sample (the process reached its high-water "
		       "mark before the window began), a lower bound";
	if (p->peak_source != AR_PEAK_UNSAID)
		return NULL;
	uint64_t hi = p->start_rss_bytes > p->end_rss_bytes ? p->start_rss_bytes : p->end_rss_bytes;
	for (unsigned i = 0, n = ar_reader_rss_count(r); i < n; i++)
		if (ar_reader_rss_at(r, i)->rss_bytes > hi)
			hi = ar_reader_rss_at(r, i)->rss_bytes;
	if (!hi || hi >= p->peak_rss_bytes)
		return NULL;
	*peak = (double)hi;
	return "a window's trace before format 2.1 gives the process's lifetime high-water mark as its peak "
	       "RSS, which may predate the window; the window's highest RSS sample is used, a lower bound";
}

/* SPEC 6.10 (since 2.1): the other work that kept the machine busy while
 * the trace ran, from the machine's busy CPU time less the process's own.
 * From a quarter of the CPUs on, the note says that the recorded CPU time,
 * which the predicted times start from, was measured under contention:
 * bench-fidelity's clang recording, made while other work kept 1.7 of 2
 * CPUs busy, came out 52 % over the unrecorded runs beside it
 * (docs/FIDELITY.md). */
static void busy_machine(const ar_process_info_t *p, ar_recorded_t *rec)
{
	double others = ar_process_other_cpus(p);
	if (!(others >= 0.25 * (double)p->machine_cpus))
		return;
	size_t n = strlen(rec->reason);
	snprintf(rec->reason + n, sizeof rec->reason - n,
		 "%sother work kept %.1f of the machine's %" PRIu64 " CPUs busy on average while the program was "
		 "recorded: CPU time measured under such contention runs long, and the predicted times start "
		 "from it (record again on a quieter machine to check)",
		 n ? "; " : "", others, p->machine_cpus);
}

void ar_recorded_read(const ar_reader_t *r, ar_recorded_t *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->duration_ns = rec->start_rss_bytes = rec->peak_rss_bytes = rec->cpu_ns = rec->recorder_bytes =
		rec->recorder_cpu_ns = NAN;
	const ar_process_info_t *p = ar_reader_process(r);
	const ar_footer_t *f = ar_reader_footer(r);
	rec->rss_samples = ar_reader_rss_count(r);
	if (p && p->has_process && p->end_time_ns)
		rec->duration_ns = (double)p->end_time_ns;
	else if (f && f->end_time_ns)
		rec->duration_ns = (double)f->end_time_ns;
	if (!p) {
		const ar_header_t *h = ar_reader_header(r);
		if (h->flags & AR_HDR_SYNTHETIC)
			snprintf(rec->reason, sizeof rec->reason,
				 "a generated trace: no program ran, so there is nothing to predict");
		else if (h->flags & AR_HDR_IMPORTED)
			snprintf(rec->reason, sizeof rec->reason,
				 "imported from %s, which records neither what the program ran on nor its RSS",
				 h->source_format[0] ? h->source_format : "another tool's format");
		else
			snprintf(rec->reason, sizeof rec->reason,
				 "the trace does not say what the program ran on nor its RSS (format %u.%u: "
				 "recorded before allocrr format 1.1, or not by allocrec)",
				 h->version_major, h->version_minor);
		return;
	}
	const char *absurd = NULL; /* SPEC 7.4: valid bytes, impossible figures */
	if (p->has_process) {
		if (p->has_cpu)
			rec->cpu_ns = (double)p->cpu_user_ns + (double)p->cpu_sys_ns;
		/* a window's trace: the CPU time since it began (SPEC 6.10); a
		 * whole program's keeps its start-up before the recorder's, as a
		 * real run of it would */
		if (p->has_cpu && p->has_cpu_start && (ar_reader_header(r)->flags & AR_HDR_WINDOW)) {
			if (p->cpu_user_start_ns <= p->cpu_user_ns && p->cpu_sys_start_ns <= p->cpu_sys_ns)
				rec->cpu_ns -= (double)p->cpu_user_start_ns + (double)p->cpu_sys_start_ns;
			else {
				rec->cpu_ns = NAN;
				absurd = "the trace says the process used more CPU time before it began than at "
					 "its close; its CPU time is not used";
			}
		}
		double own = (double)p->recorder_writer_cpu_ns + (double)p->recorder_calls_cpu_ns;
		if (!isnan(rec->cpu_ns) && p->has_recorder_cpu && own > 0) {
			if (own < rec->cpu_ns)
				rec->recorder_cpu_ns = own;
			else
				absurd = "the trace says the recorder used no less CPU time than the whole process; "
					 "the process's CPU time is taken whole";
		}
		if (p->start_rss_bytes)
			rec->start_rss_bytes = (double)p->start_rss_bytes;
		if (p->peak_rss_bytes)
			rec->peak_rss_bytes = (double)p->peak_rss_bytes;
		if (p->recorder_rss_bytes)
			rec->recorder_bytes = (double)p->recorder_rss_bytes;
		const char *note = window_peak(r, p, &rec->peak_rss_bytes);
		if (note) {
			size_t n = strlen(rec->reason);
			snprintf(rec->reason + n, sizeof rec->reason - n, "%s%s", n ? "; " : "", note);
		}
		busy_machine(p, rec);
		if (p->peak_rss_bytes && p->peak_rss_bytes < p->start_rss_bytes) {
			rec->peak_rss_bytes = rec->start_rss_bytes = NAN;
			absurd = "the trace's peak RSS is below its start RSS, so neither is used";
		} else if (p->recorder_rss_bytes && p->recorder_rss_bytes >= p->peak_rss_bytes) {
			rec->recorder_bytes = NAN;
			absurd = "the trace says the recorder's own memory was not below the peak RSS; the peak "
				 "is taken whole";
		}
	} else if (rec->rss_samples) {
		rec->start_rss_bytes = (double)ar_reader_rss_at(r, 0)->rss_bytes;
	}
	if (p->has_allocator) {
		snprintf(rec->library, sizeof rec->library, "%s", p->alloc_path);
		snprintf(rec->version, sizeof rec->version, "%s", p->alloc_version);
		match_registry(rec, p->alloc_path, p->alloc_soname);
	} else {
		snprintf(rec->reason, sizeof rec->reason, "the trace does not say which allocator served "
			 "the program");
	}
	if (absurd) {
		size_t n = strlen(rec->reason);
		snprintf(rec->reason + n, sizeof rec->reason - n, "%s%s", n ? "; " : "", absurd);
	}
	if (isnan(rec->peak_rss_bytes) && !rec->reason[0])
		snprintf(rec->reason, sizeof rec->reason, "the trace has no peak RSS (it was not closed "
			 "cleanly: no PROCESS record)");
}
