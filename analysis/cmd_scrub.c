/*
 * cmd_scrub.c — `alloctrace scrub IN -o OUT`: a copy of a trace that can
 * leave the team. Every string that comes from the recording machine — the
 * command line, thread names, module paths, the allocator's directory, the
 * start time of day — is hashed or removed (options keep some), event times
 * can be coarsened, and the header says that the trace was scrubbed and
 * how (AR_HDR_SCRUBBED and the scrub note, SPEC 3.1; its grammar is in
 * docs/SHARING.md).
 *
 * Invariants:
 *   - every event is copied with all its fields (op, seq, seq2, thread,
 *     pointers, sizes, alignment, count, error, stack id), each thread's in
 *     its order, so the scrubbed trace compiles to the same workload; only
 *     its times change, and only with --coarsen-time (rounded down, so each
 *     thread's times stay in order);
 *   - metadata is copied through the reader (threads with their start and
 *     exit, stacks, modules, allocator, RSS samples, process figures, the
 *     dropped-event count); records this version does not know are not
 *     copied: nothing here can tell whether they identify someone;
 *   - hashes are HMAC-SHA-256 under a random key that is never stored
 *     (equal strings stay equal within the trace, and nobody can test a
 *     guess), or under the bytes of --hash-key FILE (equal across traces,
 *     and whoever has the file can test guesses);
 *   - memory: the reader's index and one block of events, whatever the
 *     trace's length (events are copied in file order, block by block);
 *   - a truncated or corrupt input gives a scrubbed copy of its readable
 *     part without a footer (it reads as truncated too), and exit 3; one
 *     whose blocks decode but break the sequence order across threads is
 *     copied whole (the copy stops where it does), also exit 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "alloctrace.h"
#include "ar_cli.h"
#include "ar_escape.h"

/* What can be scrubbed, and what may be done to each. */
enum { CAT_CMDLINE, CAT_THREADS, CAT_MODULES, CAT_BUILD_IDS, CAT_ALLOCATOR, CAT_START, NCATS };
/* M_PART: the allocator's directory removed (file name, soname and version
 * kept); the start time's time of day removed (the date kept). */
enum { M_KEEP = 1, M_HASH = 2, M_REMOVE = 4, M_PART = 8 };

static const struct {
	const char *opt;  /* as --keep/--hash/--remove name it */
	const char *note; /* as the scrub note names it */
	unsigned allowed, dflt;
} cats[NCATS] = {
	[CAT_CMDLINE] = {"command-line", "command line", M_KEEP | M_HASH | M_REMOVE, M_HASH},
	[CAT_THREADS] = {"thread-names", "thread names", M_KEEP | M_HASH | M_REMOVE, M_HASH},
	[CAT_MODULES] = {"module-paths", "module paths", M_KEEP | M_HASH | M_REMOVE, M_HASH},
	[CAT_BUILD_IDS] = {"build-ids", "build-ids", M_KEEP | M_REMOVE, M_REMOVE},
	[CAT_ALLOCATOR] = {"allocator", "allocator", M_KEEP | M_REMOVE | M_PART, M_PART},
	[CAT_START] = {"start-time", "start time", M_KEEP | M_REMOVE | M_PART, M_PART},
};

#define HASH_HEX 16 /* hex digits of the HMAC kept: 64 bits */
#define HASH_PREFIX "hmac:"
#define KEY_MIN 16
#define KEY_MAX 4096

typedef struct scrub_opts {
	const char *in, *out, *key_file;
	unsigned mode[NCATS];
	uint64_t coarsen_ns; /* 0: times kept */
	int quiet;
} scrub_opts_t;

/* What the copy needs as it goes. */
typedef struct scrub {
	const scrub_opts_t *o;
	ar_reader_t *r;
	ar_writer_t *w;
	ar_error_t err;
	unsigned char key[KEY_MAX];
	size_t keylen;
	ar_metabuf_t meta;
	uint8_t *meta_mem;
	uint8_t *ev_mem;
	uint64_t events;
} scrub_t;

const ar_cmd_help_t ar_scrub_help = {
	"alloctrace scrub [OPTION]... IN -o OUT",
	"Write a copy of the trace IN that can be shared outside the team: the command\n"
	"line, thread names and module paths are hashed (HMAC-SHA-256 under a random\n"
	"key that is thrown away: equal names stay equal, nothing can be confirmed),\n"
	"build-ids removed, the allocator kept as its file name, soname and version (what\n"
	"replay compares with) without its directory, the start time kept as its date.\n"
	"Every event is kept exactly, so OUT replays to the same workload as IN; the\n"
	"header of OUT says it was scrubbed and what was kept (alloctrace info shows it).\n"
	"WHAT is a comma-separated list of command-line, thread-names, module-paths,\n"
	"build-ids (keep or remove), allocator and start-time (keep or remove): see\n"
	"docs/SHARING.md. OUT is created mode 0600 and replaced whole; a symbolic link\n"
	"there is refused. A truncated or corrupt IN gives the scrubbed readable part\n"
	"(which reads as truncated) and exit 3.",
	"  -o, --output=FILE   the scrubbed trace to write ('-': standard output)\n"
	"      --keep=WHAT     keep these as they are\n"
	"      --hash=WHAT     hash these (the default for the three names)\n"
	"      --remove=WHAT   remove these (empty strings; start-time: 0)\n"
	"      --hash-key=FILE\n"
	"                      hash with the bytes of FILE (16 to 4096) instead of a\n"
	"                      random key: equal across traces scrubbed with it, but\n"
	"                      whoever has FILE can test a guessed name against a hash\n"
	"      --coarsen-time=NS\n"
	"                      round every time in the trace down to a multiple of NS\n"
	"                      nanoseconds (a multiple of 16); the replay schedule's\n"
	"                      hand-offs may change, the ops do not\n"
	"  -q, --quiet         no summary line on standard error\n",
};

/* ---- options ------------------------------------------------------------- */

/* Apply mode m to every category named in the comma-separated list. */
static int set_modes(scrub_opts_t *o, const char *list, unsigned m, const char *optname)
{
	char buf[256];
	if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf)
		return ar_cli_usage_error("scrub: --%s: list too long", optname);
	char *save = NULL;
	int n = 0;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save), n++) {
		int k = 0;
		while (k < NCATS && strcmp(cats[k].opt, w))
			k++;
		if (k == NCATS)
			return ar_cli_usage_error("scrub: --%s: unknown '%s' (command-line, thread-names, "
						  "module-paths, build-ids, allocator, start-time)", optname, w);
		if (!(cats[k].allowed & m))
			return ar_cli_usage_error("scrub: --%s %s: %s can only be kept or removed", optname, w, w);
		o->mode[k] = m;
	}
	if (!n)
		return ar_cli_usage_error("scrub: --%s needs a list (command-line, thread-names, ...)", optname);
	return -1;
}

/* Fill o from argv. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, scrub_opts_t *o)
{
	enum { OPT_KEEP = AR_OPT_OWN, OPT_HASH, OPT_REMOVE, OPT_KEY, OPT_COARSEN };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},    {"keep", required_argument, NULL, OPT_KEEP},
		{"hash", required_argument, NULL, OPT_HASH}, {"remove", required_argument, NULL, OPT_REMOVE},
		{"hash-key", required_argument, NULL, OPT_KEY}, {"coarsen-time", required_argument, NULL, OPT_COARSEN},
		{"quiet", no_argument, NULL, 'q'},           AR_CMD_SHARED_OPTIONS,
		{NULL, 0, NULL, 0}};
	memset(o, 0, sizeof *o);
	for (int k = 0; k < NCATS; k++)
		o->mode[k] = cats[k].dflt;
	int c, rc;
	while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_KEEP:
		case OPT_HASH:
		case OPT_REMOVE:
			rc = set_modes(o, optarg, c == OPT_KEEP ? M_KEEP : c == OPT_HASH ? M_HASH : M_REMOVE,
				       c == OPT_KEEP ? "keep" : c == OPT_HASH ? "hash" : "remove");
			if (rc >= 0)
				return rc;
			break;
		case OPT_KEY:
			o->key_file = optarg;
			break;
		case OPT_COARSEN:
			if (ar_cmd_parse_u64(optarg, &o->coarsen_ns) || o->coarsen_ns == 0 ||
			    o->coarsen_ns % AR_TIME_UNIT_NS)
				return ar_cli_usage_error("scrub: --coarsen-time needs a number of nanoseconds that is a "
							  "positive multiple of %u (the trace's time unit), not '%s'",
							  AR_TIME_UNIT_NS, optarg);
			break;
		default:
			return ar_cmd_other_option(c, argv, &ar_scrub_help);
		}
	}
	if (optind >= argc)
		return ar_cli_usage_error("scrub: missing IN, the trace to scrub");
	if (optind + 1 < argc)
		return ar_cli_usage_error("scrub: one IN at a time ('%s' is a second one)", argv[optind + 1]);
	o->in = argv[optind];
	if (!o->out)
		return ar_cli_usage_error("scrub: missing -o OUT, the scrubbed trace to write");
	return -1;
}

/* ---- hashing ------------------------------------------------------------- */

static int uses_hash(const scrub_opts_t *o)
{
	for (int k = 0; k < NCATS; k++)
		if (o->mode[k] == M_HASH)
			return 1;
	return 0;
}

/* The key: the bytes of --hash-key FILE, else random (never stored). */
static int load_key(scrub_t *s)
{
	const char *path = s->o->key_file;
	if (!path) {
		s->keylen = 32;
		if (getrandom(s->key, s->keylen, 0) != (ssize_t)s->keylen)
			return ar_cli_error(NULL, "scrub: no random key: getrandom: %s", strerror(errno));
		return 0;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ar_cli_error(path, "cannot read the hash key: %s", strerror(errno));
	ssize_t n = 0, k;
	while (n < KEY_MAX && (k = read(fd, s->key + n, KEY_MAX - (size_t)n)) > 0)
		n += k;
	char extra;
	int more = n == KEY_MAX && read(fd, &extra, 1) == 1;
	close(fd);
	if (n < KEY_MIN || more)
		return ar_cli_error(path, "a hash key must be %d to %d bytes, this one is %s (make one with "
					  "`head -c 32 /dev/urandom > FILE`)", KEY_MIN, KEY_MAX,
				    more ? "longer" : "shorter");
	s->keylen = (size_t)n;
	return 0;
}

/* in as category k's mode wants it, into out[cap] (cap >= 22). Empty
 * strings stay empty: there is nothing to hide in them. */
static void scrub_string(const scrub_t *s, int k, const char *in, char *out, size_t cap)
{
	unsigned m = s->o->mode[k];
	if (m == M_KEEP) {
		snprintf(out, cap, "%s", in);
		return;
	}
	out[0] = 0;
	if (m != M_HASH || !in[0])
		return;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	HMAC(EVP_sha256(), s->key, (int)s->keylen, (const unsigned char *)in, strlen(in), md, &len);
	int o = snprintf(out, cap, HASH_PREFIX);
	for (int i = 0; i < HASH_HEX / 2; i++)
		o += snprintf(out + o, cap - (size_t)o, "%02x", md[i]);
}

/* ---- the header ---------------------------------------------------------- */

static const char *mode_word(int k, unsigned m)
{
	if (m == M_KEEP)
		return "kept";
	if (m == M_HASH)
		return "hashed";
	if (m == M_REMOVE)
		return "removed";
	return k == CAT_ALLOCATOR ? "directory removed, file name, soname and version kept" : "date only";
}

/* The scrub note (grammar: docs/SHARING.md): "KEY: VALUE" items joined by
 * "; ", in a fixed order, neither holding ';' or ':' themselves. */
static void make_note(const scrub_t *s, const ar_header_t *in, char *note, size_t cap)
{
	const scrub_opts_t *o = s->o;
	size_t n = 0;
	for (int k = 0; k < NCATS; k++) {
		n += (size_t)snprintf(note + n, cap - n, "%s%s: %s", k ? "; " : "", cats[k].note,
				      mode_word(k, o->mode[k]));
		if (k == CAT_BUILD_IDS)
			n += (size_t)snprintf(note + n, cap - n, "; symbols: none in the trace");
	}
	if (in->flags & AR_HDR_NO_TIMES)
		n += (size_t)snprintf(note + n, cap - n, "; times: none in the trace");
	else if (o->coarsen_ns)
		n += (size_t)snprintf(note + n, cap - n, "; times: rounded down to %" PRIu64 " ns", o->coarsen_ns);
	else
		n += (size_t)snprintf(note + n, cap - n, "; times: kept");
	n += (size_t)snprintf(note + n, cap - n, "; process ids: kept");
	if (uses_hash(o))
		snprintf(note + n, cap - n, "; hash: HMAC-SHA-256, %s",
			 o->key_file ? "key from a key file" : "random key, discarded");
}

static uint64_t coarse(const scrub_t *s, uint64_t t)
{
	return s->o->coarsen_ns ? t - t % s->o->coarsen_ns : t;
}

/* The header of OUT: IN's, at this format version, scrubbed. */
static void scrub_header(const scrub_t *s, const ar_header_t *in, ar_header_t *h)
{
	ar_header_init(h);
	/* SPEC 3.1: bits this version does not know are not copied. */
	h->flags = (in->flags & (AR_HDR_STACKS | AR_HDR_SYNTHETIC | AR_HDR_IMPORTED | AR_HDR_NO_TIMES | AR_HDR_WINDOW)) |
		   AR_HDR_SCRUBBED;
	snprintf(h->recorder_version, sizeof h->recorder_version, "%s", in->recorder_version);
	h->pid = in->pid;
	h->ppid = in->ppid;
	scrub_string(s, CAT_CMDLINE, in->cmdline, h->cmdline, sizeof h->cmdline);
	unsigned m = s->o->mode[CAT_START];
	const uint64_t day = 86400ull * 1000000000ull;
	h->start_wall_ns = m == M_KEEP ? in->start_wall_ns : m == M_PART ? in->start_wall_ns - in->start_wall_ns % day : 0;
	/* The monotonic start is the machine's uptime: kept only with the
	 * start time (no reader needs it: times count from it). */
	h->start_mono_ns = m == M_KEEP ? in->start_mono_ns : 0;
	h->clock_resolution_ns = in->clock_resolution_ns;
	h->page_size = in->page_size;
	/* The copy's time unit: IN's where the writer keeps it (times copied
	 * exactly, in as few bytes as IN spent); with --coarsen-time the largest
	 * power of two dividing the step, since every coarsened time is a
	 * multiple of it: coarse times then cost fewer bytes too. */
	uint64_t c = s->o->coarsen_ns, unit = c ? c & -c : in->time_unit_ns;
	if (c && unit > AR_TIME_UNIT_MAX_NS)
		unit = AR_TIME_UNIT_MAX_NS;
	h->time_unit_ns = ar_time_unit_ok(unit) ? unit : AR_TIME_UNIT_NS;
	/* IN's op table, but this version's sized ops (SPEC 5.1) when IN
	 * predates them: the copy's frees may carry an old_size only through
	 * them. */
	for (unsigned op = 1; op < AR_OP_LIMIT; op++)
		if (in->ops[op].name[0] || !ar_op_is_sized(h, op))
			h->ops[op] = in->ops[op];
	snprintf(h->source_format, sizeof h->source_format, "%s", in->source_format);
	make_note(s, in, h->scrub_note, sizeof h->scrub_note);
}

/* ---- metadata ------------------------------------------------------------ */

/* Write the metadata gathered so far as one block. */
static int meta_flush(scrub_t *s)
{
	if (s->meta.nrecords == 0)
		return 0;
	int rc = ar_writer_write_meta(s->w, &s->meta, &s->err);
	ar_metabuf_reset(&s->meta, s->meta_mem, AR_BLOCK_MAX);
	return rc;
}

/* Make room for one record (the largest, a 256-frame stack, is under 3 KiB)
 * by writing the buffer out when it is nearly full. */
static int meta_room(scrub_t *s)
{
	return s->meta.cap - s->meta.len >= 4096 ? 0 : meta_flush(s);
}

/* A record the library refused (it checks what we give it). */
static int meta_bad(scrub_t *s, int rc, const char *what)
{
	if (rc == 0)
		return 0;
	s->err.code = rc;
	snprintf(s->err.msg, sizeof s->err.msg, "cannot copy %s: %s", what, ar_strerror(rc));
	return rc;
}

/* Each thread's start and name, in the input's order of first appearance,
 * which the replay compiler numbers its streams by. */
static int write_threads(scrub_t *s)
{
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < ar_reader_thread_count(s->r); i++) {
		const ar_thread_info_t *t = ar_reader_thread_at(s->r, i);
		char name[sizeof t->name];
		if ((rc = meta_room(s)) != 0)
			return rc;
		rc = meta_bad(s, ar_meta_thread_start(&s->meta, t->index, t->os_tid, t->start_seq,
						      coarse(s, t->start_time_ns)), "a thread start");
		scrub_string(s, CAT_THREADS, t->name, name, sizeof name);
		if (rc == 0 && name[0])
			rc = meta_bad(s, ar_meta_thread_name(&s->meta, t->index, name), "a thread name");
	}
	return rc;
}

/* The module map: extents kept (stacks map onto them), paths and build-ids
 * as asked. */
static int write_modules(scrub_t *s)
{
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < ar_reader_module_count(s->r); i++) {
		ar_module_info_t m = *ar_reader_module(s->r, i);
		scrub_string(s, CAT_MODULES, ar_reader_module(s->r, i)->path, m.path, sizeof m.path);
		if (s->o->mode[CAT_BUILD_IDS] != M_KEEP) {
			memset(m.build_id, 0, sizeof m.build_id);
			m.build_id_len = 0;
		}
		if ((rc = meta_room(s)) == 0)
			rc = meta_bad(s, ar_meta_module(&s->meta, &m), "a module");
	}
	return rc;
}

/* The allocator the program ran on: what replay matches its registry by
 * (replayer/recorded.c: the path, else its file name, else the soname and
 * family), so by default only the directory goes. Removed, it reads as
 * "the recorder could not tell" (SPEC 6.8). */
static int write_allocator(scrub_t *s)
{
	const ar_process_info_t *p = ar_reader_process(s->r);
	if (!p || !p->has_allocator)
		return 0;
	unsigned m = s->o->mode[CAT_ALLOCATOR];
	const char *path = p->alloc_path, *slash = strrchr(path, '/');
	if (m == M_PART && slash)
		path = slash + 1;
	int rc = meta_room(s);
	if (rc == 0)
		rc = meta_bad(s, m == M_REMOVE ? ar_meta_allocator(&s->meta, "", "", "")
					       : ar_meta_allocator(&s->meta, path, p->alloc_soname, p->alloc_version),
			      "the allocator");
	return rc;
}

/* SPEC 6.11: how a window began and the heap then. Its times are event
 * times (coarsened like them); the heap's source names an allocator
 * statistic, nothing of the program's. */
static int write_window(scrub_t *s)
{
	const ar_window_info_t *w = ar_reader_window(s->r);
	if (!w)
		return 0;
	ar_window_info_t q = *w;
	q.start_time_ns = coarse(s, q.start_time_ns);
	q.process_start_ns = coarse(s, q.process_start_ns);
	int rc = meta_room(s);
	return rc ? rc : meta_bad(s, ar_meta_window(&s->meta, &q), "the window record");
}

/* Every stack, frames as they are (return addresses, no symbols). */
static int write_stacks(scrub_t *s)
{
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < ar_reader_stack_count(s->r); i++) {
		uint32_t id, depth;
		const uint64_t *frames = ar_reader_stack_at(s->r, i, &id, &depth);
		if ((rc = meta_room(s)) == 0)
			rc = meta_bad(s, ar_meta_stack(&s->meta, id, frames, depth), "a stack");
	}
	return rc;
}

/* Before the events, as the recorder writes them. */
static int write_meta_head(scrub_t *s)
{
	int rc = write_window(s);
	if (rc == 0)
		rc = write_threads(s);
	if (rc == 0 && (rc = write_modules(s)) == 0 && (rc = write_allocator(s)) == 0)
		rc = write_stacks(s);
	return rc ? rc : meta_flush(s);
}

/* After the events: thread exits, RSS samples, the process figures. */
static int write_meta_tail(scrub_t *s)
{
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < ar_reader_thread_count(s->r); i++) {
		const ar_thread_info_t *t = ar_reader_thread_at(s->r, i);
		if (!t->exit_seq && !t->exit_time_ns)
			continue;
		if ((rc = meta_room(s)) == 0)
			rc = meta_bad(s, ar_meta_thread_exit(&s->meta, t->index, t->exit_seq,
							     coarse(s, t->exit_time_ns)), "a thread exit");
	}
	for (uint32_t i = 0; rc == 0 && i < ar_reader_rss_count(s->r); i++) {
		ar_rss_sample_t smp = *ar_reader_rss_at(s->r, i);
		smp.time_ns = coarse(s, smp.time_ns);
		if ((rc = meta_room(s)) == 0)
			rc = meta_bad(s, ar_meta_rss_sample(&s->meta, &smp), "an RSS sample");
	}
	const ar_process_info_t *p = ar_reader_process(s->r);
	if (rc == 0 && p && p->has_process) {
		ar_process_info_t q = *p;
		q.start_time_ns = coarse(s, q.start_time_ns);
		q.end_time_ns = coarse(s, q.end_time_ns);
		if (!q.has_cpu) /* the library writes every field (ar_trace.h) */
			ar_cli_warn("%s: its PROCESS record has no CPU times (an early 1.1 recorder); the copy "
				    "says 0 for them", s->o->in);
		if ((rc = meta_room(s)) == 0)
			rc = meta_bad(s, ar_meta_process(&s->meta, &q), "the process figures");
	}
	return rc ? rc : meta_flush(s);
}

/* ---- events -------------------------------------------------------------- */

/* Write b out and start it again for thread `thread`. */
static int ev_flush(scrub_t *s, ar_evbuf_t *b, uint32_t thread)
{
	int rc = b->nevents ? ar_writer_write_events(s->w, b, &s->err) : 0;
	const ar_thread_info_t *t = ar_reader_thread(s->r, thread);
	ar_evbuf_reset(b, s->ev_mem, AR_EVBUF_MAX_BYTES, thread, t ? t->os_tid : 0);
	return rc;
}

/* Every event of the readable part, in file order: a block of the input
 * is one thread's run, so one buffer suffices; it is written out when the
 * thread changes or it is full. Returns 0 at the end of the readable part,
 * 1 when a block failed to decode (the input is corrupt there), or a
 * negative code when writing failed. */
static int copy_events(scrub_t *s)
{
	ar_evbuf_t b;
	ar_event_t e;
	int more;
	ar_evbuf_reset(&b, s->ev_mem, AR_EVBUF_MAX_BYTES, 0, 0);
	while ((more = ar_reader_next(s->r, &e)) == 1) {
		int rc = 0;
		if (b.nevents && e.thread != b.thread)
			rc = ev_flush(s, &b, e.thread);
		else if (!b.nevents)
			ar_evbuf_reset(&b, s->ev_mem, AR_EVBUF_MAX_BYTES, e.thread,
				       ar_reader_thread(s->r, e.thread) ? ar_reader_thread(s->r, e.thread)->os_tid : 0);
		e.time_ns = coarse(s, e.time_ns);
		if (rc == 0 && (rc = ar_evbuf_append(&b, &e)) == AR_EFULL && (rc = ev_flush(s, &b, e.thread)) == 0)
			rc = ar_evbuf_append(&b, &e);
		if (rc == AR_EINVAL) {
			s->err.code = rc;
			snprintf(s->err.msg, sizeof s->err.msg,
				 "event seq %" PRIu64 " (op %u) cannot be written again: an op this version does "
				 "not know, or a sequence number out of order", e.seq, e.op);
		}
		if (rc)
			return rc;
		s->events++;
	}
	int rc = ev_flush(s, &b, 0);
	return rc ? rc : more < 0;
}

/* ---- the command ----------------------------------------------------------- */

/* How much of IN the copy holds. */
enum { COPY_WHOLE, COPY_CUT, COPY_UNORDERED };

/* Does IN read through in sequence order, as verify, dump and replay read
 * it? A trace can decode block by block and still break SPEC 7.3 across
 * threads (a seq used twice): the copy holds the same events and stops at
 * the same one. Counts the events read in order into *n. */
static int order_broken(scrub_t *s, uint64_t *n)
{
	ar_event_t e;
	int rc;
	ar_reader_rewind(s->r);
	while ((rc = ar_reader_next_merged(s->r, &e)) == 1)
		(*n)++;
	return rc < 0;
}

/* Write OUT's header, metadata, events and footer. Returns 0 with *how set,
 * or a negative code (s->err says what). */
static int copy_trace(scrub_t *s, const ar_header_t *h, int fd, int *how)
{
	int rc = ar_writer_open(&s->w, fd, h, 3, NULL, &s->err);
	if (rc == 0 && (rc = write_meta_head(s)) == 0 && (rc = copy_events(s)) >= 0) {
		*how = rc == 1 || ar_reader_status(s->r) != AR_STATUS_COMPLETE ? COPY_CUT : COPY_WHOLE;
		rc = write_meta_tail(s);
	}
	if (rc == 0) {
		const ar_footer_t *f = ar_reader_footer(s->r);
		if (f)
			ar_writer_note_dropped(s->w, f->dropped_events);
		if (f && f->stop_reason) /* a bounded recording stays one (SPEC 6.7) */
			ar_writer_note_stop(s->w, (unsigned)f->stop_reason, f->after_stop);
		/* An input that is not whole gives an output that says so. */
		rc = ar_writer_close(s->w, coarse(s, f ? f->end_time_ns : 0), *how == COPY_WHOLE, &s->err);
		s->w = NULL;
	}
	if (s->w)
		ar_writer_close(s->w, 0, 0, &s->err);
	s->w = NULL;
	return rc;
}

/* Write OUT from the open reader. Returns the exit status. */
static int scrub(scrub_t *s, ar_out_t *out)
{
	const ar_header_t *in = ar_reader_header(s->r);
	ar_header_t *h = calloc(1, sizeof *h);
	s->meta_mem = malloc(AR_BLOCK_MAX);
	s->ev_mem = aligned_alloc(64, AR_EVBUF_MAX_BYTES);
	if (!h || !s->meta_mem || !s->ev_mem) {
		free(h);
		return ar_cli_error(s->o->in, "out of memory");
	}
	scrub_header(s, in, h);
	if (!s->o->coarsen_ns && in->time_unit_ns % h->time_unit_ns)
		ar_cli_warn("%s: event times were stored in units of %" PRIu64 " ns; the copy stores them in %" PRIu64
			    " ns units (rounded down)", s->o->in, in->time_unit_ns, h->time_unit_ns);
	ar_metabuf_reset(&s->meta, s->meta_mem, AR_BLOCK_MAX);
	int how = COPY_WHOLE, rc = copy_trace(s, h, out->fd, &how);
	free(h);
	if (rc != 0)
		return ar_cli_error(out->is_stdout ? "standard output" : out->path, "%s",
				    s->err.msg[0] ? s->err.msg : ar_strerror(rc));
	uint64_t in_order = 0;
	if (how == COPY_WHOLE && order_broken(s, &in_order))
		how = COPY_UNORDERED;
	if ((rc = ar_out_commit(out)) != 0)
		return rc;
	const ar_error_t *e = ar_reader_error(s->r);
	const char *why = ar_trace_problem(s->o->in, e->msg);
	if (how == COPY_CUT) {
		ar_cli_error(s->o->in, "%s at byte offset %" PRIu64 ": %s; scrubbed the %" PRIu64 " events before it "
				       "(the output reads as truncated)",
			     ar_reader_status(s->r) == AR_STATUS_TRUNCATED ? "truncated" : "corrupt", e->offset, why,
			     s->events);
		return AR_EXIT_WARN;
	}
	if (how == COPY_UNORDERED) {
		ar_cli_error(s->o->in, "corrupt at byte offset %" PRIu64 ": %s; scrubbed all %" PRIu64 " events as they "
				       "are, so the output stops at the same place (%" PRIu64 " events in sequence order)",
			     e->offset, why, s->events, in_order);
		return AR_EXIT_WARN;
	}
	if (!s->o->quiet)
		fprintf(stderr, "%s: %s: %" PRIu64 " events scrubbed (alloctrace info shows what was kept)\n",
			ar_cli_tool(), out->is_stdout ? "standard output" : out->path, s->events);
	return AR_EXIT_OK;
}

int ar_cmd_scrub(int argc, char **argv)
{
	scrub_opts_t o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	static scrub_t s;
	memset(&s, 0, sizeof s);
	s.o = &o;
	if ((rc = load_key(&s)) != 0)
		return rc;
	if (!(s.r = ar_open_or_complain(o.in)))
		return AR_EXIT_RUNTIME;
	const ar_header_t *in = ar_reader_header(s.r);
	ar_out_t out;
	if (in->flags & AR_HDR_SCRUBBED) {
		static char shown[4 * AR_SCRUB_NOTE_MAX + 1];
		rc = ar_cli_error(o.in, "already scrubbed (%s): scrub the original trace, so that the note says "
					"what was done to it", ar_printable(in->scrub_note, shown, sizeof shown));
	} else if ((rc = ar_out_open(&out, o.out, o.in)) == 0) {
		rc = scrub(&s, &out);
		if (rc != AR_EXIT_OK && rc != AR_EXIT_WARN)
			ar_out_abort(&out);
	}
	OPENSSL_cleanse(s.key, sizeof s.key);
	free(s.meta_mem);
	free(s.ev_mem);
	ar_reader_close(s.r);
	return rc;
}
