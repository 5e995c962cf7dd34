/*
 * cmd_info.c — `alloctrace info [--json] FILE`: what a trace holds, from one
 * streaming pass in sequence order (memory: the live objects only).
 * The SHA-256 is of the file's bytes, the key the results database uses.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"
#include "ar_trace_id.h"
#include "livemap.h"

typedef struct {
	uint64_t events, by_op[AR_OP_LIMIT], requested, failed;
	uint64_t first_ns, last_ns;
	ar_livemap_t live;
} stats_t;

/* The live set outgrew memory: say how big it was and what to do. */
static int oom(const char *path, ar_livemap_t *live, ar_reader_t *r)
{
	ar_cli_error(path, "out of memory tracking %" PRIu64 " live objects (the trace's live set; try a machine "
			   "with more memory)", (uint64_t)live->len);
	ar_livemap_free(live);
	ar_reader_close(r);
	return 2;
}

/* A figure of the PROCESS record, or null when the trace does not have it
 * (0 stands for unknown there, SPEC 6.10). */
static void json_figure(const char *key, int has, uint64_t v)
{
	if (has && v)
		printf(",\"%s\":%" PRIu64, key, v);
	else
		printf(",\"%s\":null", key);
}

/* A figure the trace says it measured (a flag beside it), where 0 is a
 * reading: a short run's system CPU time is often 0 µs. */
static void json_measured(const char *key, int has, uint64_t v)
{
	if (has)
		printf(",\"%s\":%" PRIu64, key, v);
	else
		printf(",\"%s\":null", key);
}

/* SPEC 6.7: why a bounded recording stopped. */
static const char *stop_name(uint64_t why)
{
	switch (why) {
	case AR_STOP_MAX_SIZE: return "max-size";
	case AR_STOP_DURATION: return "duration";
	case AR_STOP_COMMAND: return "stop-command";
	case AR_STOP_DETACH: return "detach";
	case AR_STOP_ROTATE: return "rotate";
	default: return "unknown";
	}
}

/* SPEC 6.8-6.10, for traces of format 1.1 and later: what the program ran
 * on and its RSS (keys absent for 1.0 traces, whose JSON is a contract:
 * tests/golden). */
static void json_process(const ar_reader_t *r)
{
	const ar_header_t *h = ar_reader_header(r);
	if (h->version_major == 1 && h->version_minor < 1)
		return;
	const ar_process_info_t *p = ar_reader_process(r);
	printf(",\"allocator\":");
	if (p && p->has_allocator) {
		printf("{\"path\":");
		ar_esc_json(stdout, p->alloc_path);
		printf(",\"soname\":");
		ar_esc_json(stdout, p->alloc_soname);
		printf(",\"version\":");
		ar_esc_json(stdout, p->alloc_version);
		printf("}");
	} else {
		printf("null");
	}
	int has = p && p->has_process;
	json_figure("start_rss_bytes", has, has ? p->start_rss_bytes : 0);
	json_figure("peak_rss_bytes", has, has ? p->peak_rss_bytes : 0);
	printf(",\"peak_rss_source\":%s", !has || !p->peak_rss_bytes	   ? "null"
					  : p->peak_source == AR_PEAK_HWM     ? "\"hwm\""
					  : p->peak_source == AR_PEAK_SAMPLED ? "\"sampled\""
									      : "\"unsaid\"");
	json_figure("end_rss_bytes", has, has ? p->end_rss_bytes : 0);
	json_figure("recorder_rss_bytes", has, has ? p->recorder_rss_bytes : 0);
	json_figure("process_end_time_ns", has, has ? p->end_time_ns : 0);
	int cpu = has && p->has_cpu;
	json_measured("cpu_user_ns", cpu, cpu ? p->cpu_user_ns : 0);
	json_measured("cpu_sys_ns", cpu, cpu ? p->cpu_sys_ns : 0);
	int rcpu = cpu && p->has_recorder_cpu;
	json_measured("recorder_writer_cpu_ns", rcpu, rcpu ? p->recorder_writer_cpu_ns : 0);
	json_measured("recorder_calls_cpu_ns", rcpu, rcpu ? p->recorder_calls_cpu_ns : 0);
	int scpu = cpu && p->has_cpu_start;
	json_measured("cpu_user_start_ns", scpu, scpu ? p->cpu_user_start_ns : 0);
	json_measured("cpu_sys_start_ns", scpu, scpu ? p->cpu_sys_start_ns : 0);
	json_figure("machine_busy_ns", has, has ? p->machine_busy_ns : 0);
	json_figure("machine_cpus", has, has ? p->machine_cpus : 0);
	printf(",\"rss_samples\":%u", ar_reader_rss_count(r));
}

/* Since format 1.2 (SPEC 3.1): where an imported trace came from, what a
 * scrub did, whether events have times (keys absent for older traces). */
static void json_provenance(const ar_header_t *h)
{
	if (h->version_major == 1 && h->version_minor < 2)
		return;
	printf(",\"source_format\":");
	if (h->source_format[0])
		ar_esc_json(stdout, h->source_format);
	else
		printf("null");
	printf(",\"scrub_note\":");
	if (h->flags & AR_HDR_SCRUBBED)
		ar_esc_json(stdout, h->scrub_note);
	else
		printf("null");
	printf(",\"times_recorded\":%s", (h->flags & AR_HDR_NO_TIMES) ? "false" : "true");
}

/* The same in text, only what applies. */
static void text_provenance(const ar_header_t *h)
{
	static char shown[4 * AR_SCRUB_NOTE_MAX + 1];
	if ((h->flags & AR_HDR_IMPORTED) || h->source_format[0])
		printf("imported from     %s\n", h->source_format[0] ? ar_printable(h->source_format, shown, sizeof shown)
								 : "(format not named)");
	if (h->flags & AR_HDR_SCRUBBED)
		printf("scrubbed          %s\n", h->scrub_note[0] ? ar_printable(h->scrub_note, shown, sizeof shown)
							   : "(no note)");
	if (h->flags & AR_HDR_NO_TIMES)
		printf("event times       not recorded (durations and lifetimes in time are unknown)\n");
}

/* The process's CPU time and the recorder's part of it (SPEC 6.10): what
 * the program itself used is the difference. */
static void text_cpu(const ar_process_info_t *p, int window)
{
	if (!p->has_cpu)
		return;
	double user = (double)p->cpu_user_ns / 1e9, sys = (double)p->cpu_sys_ns / 1e9;
	/* a window's trace: what the process used before it began is not its
	 * (a whole program's start-up before the recorder's is the program's) */
	double u0 = (double)p->cpu_user_start_ns / 1e9, s0 = (double)p->cpu_sys_start_ns / 1e9;
	if (window && p->has_cpu_start && u0 <= user && s0 <= sys) {
		printf("process CPU       %.3f s since the trace began (user %.3f s, system %.3f s; %.3f s before)",
		       user - u0 + sys - s0, user - u0, sys - s0, u0 + s0);
		user -= u0;
		sys -= s0;
	} else {
		printf("process CPU       %.3f s (user %.3f s, system %.3f s)", user + sys, user, sys);
	}
	if (p->has_recorder_cpu && (p->recorder_writer_cpu_ns || p->recorder_calls_cpu_ns)) {
		double w = (double)p->recorder_writer_cpu_ns / 1e9, c = (double)p->recorder_calls_cpu_ns / 1e9;
		double prog = user + sys - w - c;
		printf("; the recorder's %.3f s (writer %.3f s, its work in the program's calls ~%.3f s, sampled)",
		       w + c, w, c);
		if (prog > 0)
			printf(", the program's %.3f s", prog);
	}
	printf("\n");
}

/* The other work on the machine while the trace ran (SPEC 6.10): its busy
 * CPU time less the process's own, over the trace's time. */
static void text_machine(const ar_process_info_t *p)
{
	double others = ar_process_other_cpus(p);
	if (!isnan(others))
		printf("machine           %.2f of its %" PRIu64 " CPUs busy with other work on average while recording\n",
		       others, p->machine_cpus);
}

/* The same in text, for every trace. */
static void text_process(const ar_reader_t *r)
{
	static char a[4 * 512 + 1], b[4 * AR_SONAME_MAX + 1], c[4 * AR_ALLOC_VERSION_MAX + 1];
	const ar_process_info_t *p = ar_reader_process(r);
	if (p && p->has_allocator && p->alloc_path[0])
		printf("allocator         %s %s (%s)\n", ar_printable(p->alloc_soname, b, sizeof b),
		       p->alloc_version[0] ? ar_printable(p->alloc_version, c, sizeof c) : "(version unknown)",
		       ar_printable(p->alloc_path, a, sizeof a));
	else
		printf("allocator         %s\n", p && p->has_allocator ? "the recorder could not tell"
									 : "not recorded in this trace");
	if (p && p->has_process) {
		char peak[48] = "unknown", end[48] = "unknown";
		if (p->peak_rss_bytes)
			snprintf(peak, sizeof peak, "%.1f MiB", (double)p->peak_rss_bytes / 1048576.0);
		if (p->end_rss_bytes)
			snprintf(end, sizeof end, "%.1f MiB", (double)p->end_rss_bytes / 1048576.0);
		/* SPEC 6.10: what the peak is */
		int window = (ar_reader_header(r)->flags & AR_HDR_WINDOW) != 0;
		const char *how = p->peak_source == AR_PEAK_SAMPLED
					  ? "the window's highest sample: the process's VmHWM predates the window"
				  : window && p->peak_source == AR_PEAK_UNSAID ? "VmHWM, which may predate the window"
									       : "VmHWM";
		printf("process RSS       start %.1f MiB, peak %s (%s), at close %s; %u samples\n",
		       (double)p->start_rss_bytes / 1048576.0, peak, how, end, ar_reader_rss_count(r));
		/* SPEC 6.10: the part of the peak that is not the program's */
		if (p->recorder_rss_bytes)
			printf("recorder memory   %.1f MiB of the peak RSS is the recorder's own (its buffers; "
			       "since allocrr-rec 1.1 also the libraries only it loaded)\n",
			       (double)p->recorder_rss_bytes / 1048576.0);
		text_cpu(p, (ar_reader_header(r)->flags & AR_HDR_WINDOW) != 0);
		text_machine(p);
	} else if (ar_reader_rss_count(r)) {
		printf("process RSS       %u samples (no end record: the trace was not closed)\n", ar_reader_rss_count(r));
	} else {
		printf("process RSS       not recorded in this trace\n");
	}
}

/* SPEC 6.11 */
const char *ar_window_reason(uint32_t why)
{
	return why == AR_WINDOW_ATTACH ? "attach" : why == AR_WINDOW_START ? "start" : why == AR_WINDOW_ROTATE ? "rotate" : NULL;
}

/* The part of the heap at the window's start the trace never saw: the
 * allocator's own in-use figure less the usable bytes of the pre-existing
 * blocks the window freed or realloced. 0 with *known 0 when the figure is
 * unknown or below those bytes (then it cannot be told). */
static uint64_t heap_unseen(const ar_window_info_t *w, uint64_t pre_bytes, int *known)
{
	*known = w && w->heap_in_use_bytes && w->heap_in_use_bytes >= pre_bytes;
	return *known ? w->heap_in_use_bytes - pre_bytes : 0;
}

void ar_window_text(const ar_reader_t *r, uint64_t pre_blocks, uint64_t pre_bytes)
{
	if (!(ar_reader_header(r)->flags & AR_HDR_WINDOW))
		return;
	const ar_window_info_t *w = ar_reader_window(r);
	static char src[4 * AR_WINDOW_SOURCE_MAX + 1];
	if (!w) {
		printf("window            yes, but the trace has no WINDOW record: how it began and the heap at its "
		       "start are unknown\n");
	} else {
		const char *why = ar_window_reason(w->reason);
		printf("window            #%u, began by %s%s", w->index, why ? why : "an unknown reason",
		       why ? "" : " (reserved value)");
		if (w->process_start_ns)
			printf(", %.3f s after the process started", (double)w->process_start_ns / 1e9);
		printf("\n");
	}
	printf("pre-existing      %" PRIu64 " blocks, %" PRIu64 " bytes (allocated before the window, freed or "
	       "realloced in it; replayed before it)\n", pre_blocks, pre_bytes);
	if (w && w->heap_in_use_bytes) {
		printf("heap at start     %" PRIu64 " bytes in use (%s)\n", w->heap_in_use_bytes,
		       w->heap_source[0] ? ar_printable(w->heap_source, src, sizeof src) : "source not named");
		int known;
		uint64_t unseen = heap_unseen(w, pre_bytes, &known);
		if (known)
			printf("never seen        %" PRIu64 " bytes (heap at start less the pre-existing bytes: blocks "
			       "still live at the end, and allocator overhead when the source counts it)\n", unseen);
		else
			printf("never seen        unknown (the pre-existing bytes exceed the heap at start)\n");
	} else {
		printf("heap at start     unknown (the allocator's in-use figure was not read)\n");
		printf("never seen        unknown\n");
	}
}

void ar_window_json(const ar_reader_t *r, uint64_t pre_blocks, uint64_t pre_bytes)
{
	const ar_header_t *h = ar_reader_header(r);
	if (h->version_major == 1 && h->version_minor < 3)
		return; /* older JSON stays as it was (tests/golden) */
	if (!(h->flags & AR_HDR_WINDOW)) {
		printf(",\"window\":null");
		return;
	}
	const ar_window_info_t *w = ar_reader_window(r);
	printf(",\"window\":{\"record\":%s", w ? "true" : "false");
	if (w) {
		const char *why = ar_window_reason(w->reason);
		printf(",\"index\":%u,\"reason\":", w->index);
		if (why)
			printf("\"%s\"", why);
		else
			printf("null");
		printf(",\"start_time_ns\":%" PRIu64 ",\"process_start_ns\":", w->start_time_ns);
		if (w->process_start_ns)
			printf("%" PRIu64, w->process_start_ns);
		else
			printf("null");
	}
	printf(",\"preexisting_blocks\":%" PRIu64 ",\"preexisting_bytes\":%" PRIu64 ",\"heap_in_use_bytes\":",
	       pre_blocks, pre_bytes);
	if (w && w->heap_in_use_bytes)
		printf("%" PRIu64, w->heap_in_use_bytes);
	else
		printf("null");
	printf(",\"heap_source\":");
	if (w && w->heap_source[0])
		ar_esc_json(stdout, w->heap_source);
	else
		printf("null");
	int known;
	uint64_t unseen = heap_unseen(w, pre_bytes, &known);
	printf(",\"heap_unseen_bytes\":");
	if (known)
		printf("%" PRIu64 "}", unseen);
	else
		printf("null}");
}

static const char *status_name(ar_status_t s)
{
	return s == AR_STATUS_COMPLETE ? "complete" : s == AR_STATUS_TRUNCATED ? "truncated" : "corrupt";
}

const ar_cmd_help_t ar_info_help = {
	"alloctrace info [OPTION]... FILE",
	"What the trace FILE holds: program, pid, threads, events by op, the allocator\n"
	"the program ran on and its RSS at start and peak (recorded since format 1.1),\n"
	"bytes requested, failed calls, peak live bytes, duration, file size, SHA-256\n"
	"(the key of the results database), and whether it is complete, truncated or\n"
	"corrupt (where).",
	"      --json          print one JSON object instead of text\n",
};

int ar_cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, AR_OPT_OWN}, AR_CMD_SHARED_OPTIONS,
					     {NULL, 0, NULL, 0}};
	int json = 0, c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == AR_OPT_OWN)
			json = 1;
		else
			return ar_cmd_other_option(c, argv, &ar_info_help);
	}
	if (optind >= argc)
		return ar_cli_usage_error("info: missing FILE, the trace to describe");
	if (optind + 1 < argc)
		return ar_cli_usage_error("info: one FILE at a time ('%s' is a second one)", argv[optind + 1]);
	return ar_info_run(argv[optind], json);
}

int ar_info_run(const char *path, int json)
{
	char sha[65];
	if (ar_trace_sha256(path, sha) != 0)
		return ar_cli_error(path, "%s", strerror(errno));
	ar_reader_t *r = ar_open_or_complain(path);
	if (!r)
		return 2;
	stats_t s;
	memset(&s, 0, sizeof s);
	ar_livemap_init(&s.live, NULL, NULL, NULL);
	ar_livemap_set_window(&s.live, (ar_reader_header(r)->flags & AR_HDR_WINDOW) != 0);
	ar_event_t e;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1) {
		if (s.events++ == 0)
			s.first_ns = e.time_ns;
		s.last_ns = e.time_ns > s.last_ns ? e.time_ns : s.last_ns;
		s.by_op[e.op]++;
		s.requested = ar_sat_add(s.requested, ar_event_request_bytes(&e));
		if ((ar_reader_header(r)->ops[e.op].fields & AR_F_RESULT) && !e.result && ar_event_request_bytes(&e))
			s.failed++;
		if (ar_livemap_apply(&s.live, &e, 0) != 0)
			return oom(path, &s.live, r);
	}
	if (ar_livemap_finish(&s.live) != 0)
		return oom(path, &s.live, r);
	const ar_header_t *h = ar_reader_header(r);
	const ar_footer_t *ft = ar_reader_footer(r);
	const ar_error_t *err = ar_reader_error(r);
	ar_status_t st = rc < 0 ? AR_STATUS_CORRUPT : ar_reader_status(r);
	uint64_t duration = ft && ft->end_time_ns ? ft->end_time_ns : s.last_ns;
	uint64_t bytes = ar_reader_file_size(r);

	if (json) {
		printf("{\"file\":");
		ar_esc_json(stdout, path);
		printf(",\"sha256\":\"%s\",\"format_version\":\"%u.%u\",\"time_unit_ns\":%" PRIu64 ",\"recorder_version\":",
		       sha, h->version_major, h->version_minor, h->time_unit_ns);
		ar_esc_json(stdout, h->recorder_version);
		printf(",\"command\":");
		ar_esc_json(stdout, h->cmdline);
		printf(",\"pid\":%" PRIu64 ",\"ppid\":%" PRIu64 ",\"start_wall_ns\":%" PRIu64 ",\"duration_ns\":",
		       h->pid, h->ppid, h->start_wall_ns);
		if (h->flags & AR_HDR_NO_TIMES)
			fputs("null", stdout);
		else
			printf("%" PRIu64, duration);
		printf(",\"threads\":%u,\"events\":%" PRIu64 ",\"events_by_op\":{", ar_reader_thread_count(r),
		       s.events);
		int first = 1;
		for (unsigned op = 1; op < AR_OP_LIMIT; op++) {
			if (!h->ops[op].name[0] || ar_op_is_sized(h, op))
				continue;
			fputs(first ? "" : ",", stdout);
			ar_esc_json(stdout, h->ops[op].name);
			printf(":%" PRIu64, s.by_op[op]);
			first = 0;
		}
		printf("},\"requested_bytes\":%" PRIu64 ",\"failed_calls\":%" PRIu64 ",\"peak_live_bytes\":%" PRIu64
		       ",\"frees_of_unknown_pointers\":%" PRIu64 ",\"file_bytes\":%" PRIu64
		       ",\"bytes_per_event\":%.3f,\"dropped_events\":%" PRIu64 ",\"stacks\":%u,\"modules\":%u,\"status\":\"%s\"",
		       s.requested, s.failed, s.live.peak_live_bytes, s.live.unknown_frees, bytes,
		       s.events ? (double)bytes / (double)s.events : 0.0, ft ? ft->dropped_events : 0,
		       ar_reader_stack_count(r), ar_reader_module_count(r), status_name(st));
		json_process(r);
		ar_window_json(r, s.live.preexisting_blocks, s.live.preexisting_bytes);
		if (ft && ft->stop_reason) { /* keys absent unless stopped: older JSON stays as it was */
			printf(",\"stopped\":\"%s\",\"calls_after_stop\":%" PRIu64, stop_name(ft->stop_reason),
			       ft->after_stop);
		}
		json_provenance(h);
		if (st != AR_STATUS_COMPLETE) {
			printf(",\"problem\":");
			ar_esc_json(stdout, ar_trace_problem(path, err->msg));
			printf(",\"problem_offset\":%" PRIu64, err->offset);
		}
		printf("}\n");
	} else {
		char when[64] = "?";
		time_t secs = (time_t)(h->start_wall_ns / 1000000000u);
		struct tm tm;
		if (h->start_wall_ns && gmtime_r(&secs, &tm))
			strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
		/* The header's strings are the recording machine's and the file
		 * name anyone's: escaped, so a hostile trace cannot send escape
		 * sequences to this terminal. */
		fputs("file              ", stdout);
		ar_esc_term(stdout, path);
		printf("\nsha256            %s\n", sha);
		static char shown[4 * AR_CMDLINE_MAX + 1];
		printf("format            %u.%u, recorder %s%s\n", h->version_major, h->version_minor,
		       h->recorder_version[0] ? ar_printable(h->recorder_version, shown, sizeof shown) : "?",
		       (h->flags & AR_HDR_SYNTHETIC) ? " (synthetic)" : "");
		text_provenance(h);
		printf("program           %s\n", ar_printable(h->cmdline, shown, sizeof shown));
		if (h->pid || !(h->flags & AR_HDR_IMPORTED))
			printf("pid               %" PRIu64 " (parent %" PRIu64 ")\n", h->pid, h->ppid);
		else
			printf("pid               not recorded\n");
		printf("started           %s\n", when);
		if (h->flags & AR_HDR_NO_TIMES)
			printf("duration          not recorded\n");
		else
			printf("duration          %.6f s, times kept in %" PRIu64 " ns units\n", (double)duration / 1e9,
			       h->time_unit_ns);
		printf("threads           %u\n", ar_reader_thread_count(r));
		printf("events            %" PRIu64 "\n", s.events);
		for (unsigned op = 1; op < AR_OP_LIMIT; op++)
			if (h->ops[op].name[0] && s.by_op[op])
				printf("  %-15s %" PRIu64 "\n", ar_printable(h->ops[op].name, shown, sizeof shown),
				       s.by_op[op]);
		text_process(r);
		printf("requested bytes   %" PRIu64 "\n", s.requested);
		printf("failed calls      %" PRIu64 "\n", s.failed);
		printf("peak live bytes   %" PRIu64 " (at seq %" PRIu64 ")\n", s.live.peak_live_bytes, s.live.peak_seq);
		if (s.live.unknown_frees)
			printf("unknown frees     %" PRIu64 " (pointers the trace never returned)\n", s.live.unknown_frees);
		ar_window_text(r, s.live.preexisting_blocks, s.live.preexisting_bytes);
		printf("file bytes        %" PRIu64 " (%.2f bytes/event)\n", bytes,
		       s.events ? (double)bytes / (double)s.events : 0.0);
		if (ft && ft->dropped_events)
			printf("dropped events    %" PRIu64 "\n", ft->dropped_events);
		if (ft && ft->stop_reason) { /* SPEC 6.7: a bounded recording, a window of the run */
			/* Only a limit stop keeps counting the calls after it; a
			 * window that ended (stop, detach, rotation) counts none. */
			int limit = ft->stop_reason <= AR_STOP_DURATION;
			printf("stopped           %s %s%s", limit ? "at its" : "by", stop_name(ft->stop_reason),
			       limit ? " limit" : "");
			if (limit || ft->after_stop)
				printf("; %" PRIu64 " heap calls after it not recorded", ft->after_stop);
			printf("\n");
		}
		if (ar_reader_stack_count(r) || ar_reader_module_count(r))
			printf("stacks            %u (modules %u)\n", ar_reader_stack_count(r), ar_reader_module_count(r));
		if (st == AR_STATUS_COMPLETE)
			printf("status            complete\n");
		else
			printf("status            %s at byte offset %" PRIu64 ": %s\n", status_name(st), err->offset,
			       ar_printable(ar_trace_problem(path, err->msg), shown, sizeof shown));
	}
	ar_livemap_free(&s.live);
	ar_reader_close(r);
	return st == AR_STATUS_COMPLETE ? AR_EXIT_OK : AR_EXIT_WARN; /* the figures cover the readable part */
}
