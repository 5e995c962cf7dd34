/*
 * rec_config.c — the shim's configuration: the ALLOCRR_* variables read once
 * at start-up into rec_cfg, the program name used in default trace names,
 * and the small helpers (string copy, integer variables, pid/tid) the rest
 * of the shim uses.
 *
 * With ALLOCRR_OUTPUT_FOR (allocrec --output-for NAME), the -o path goes
 * not to the first image but to the first image named NAME (a wrapper
 * script or a version-manager shim execs several programs before the one
 * the user meant): ALLOCRR_OUTPUT_FOR_FILE is that path, and
 * ALLOCRR_OUTPUT_FOR_CLAIM a file allocrec created, which the first
 * matching image removes. unlink() succeeds for exactly one process, so
 * "first" holds across concurrent forks and execs, and the environment is
 * never edited (bash's own setenv is not to be trusted, rec_lifecycle.c).
 *
 * Invariants: nothing here allocates (the helpers run inside hooks and
 * before the real functions are known); rec_cfg is written only at
 * start-up (rec_config_read) and, for output, by a fork child's reset
 * (rec_writer.c); everyone else only reads it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ar_readfile.h"
#include "rec_defaults.h"
#include "rec_internal.h"

rec_config_t rec_cfg;

static char prog_name[256] = "prog";

/* ---- small helpers ------------------------------------------------------------ */
size_t rec_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = strlen(src);
	size_t c = n < cap - 1 ? n : cap - 1;
	memcpy(dst, src, c);
	dst[c] = 0;
	return n;
}

int rec_getenv_int(const char *name, int dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? dflt : (int)v;
}

pid_t rec_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

pid_t rec_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

const char *rec_prog_name(void)
{
	return prog_name;
}

/* ---- where settings come from ------------------------------------------------------- */
/* The environment, or (attach) the settings rec_config_parse was given:
 * "NAME=value" lines kept in a static table. */
#define SET_MAX 64
static char set_text[SET_MAX][1100];
static int set_n, use_settings;

static const char *setting(const char *name)
{
	if (!use_settings)
		return getenv(name);
	size_t len = strlen(name);
	for (int i = 0; i < set_n; i++)
		if (strncmp(set_text[i], name, len) == 0 && set_text[i][len] == '=')
			return set_text[i] + len + 1;
	return NULL;
}

static int setting_int(const char *name, int dflt)
{
	const char *s = setting(name);
	if (!s || !*s)
		return dflt;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? dflt : (int)v;
}

/* ---- reading the configuration --------------------------------------------------- */
static void read_prog_name(void)
{
	char buf[4096];
	if (rec_read_small_file("/proc/self/cmdline", buf, sizeof buf) <= 0)
		return;
	const char *b = strrchr(buf, '/');
	b = b ? b + 1 : buf;
	if (*b)
		rec_strlcpy(prog_name, b, sizeof prog_name);
}

/* Does s match the shell glob pat (*, ?, [set], [!set], [a-z]; no escapes)?
 * Our own rather than fnmatch(3), which may allocate in some locales. */
static int glob_match(const char *pat, const char *s)
{
	for (; *pat; pat++, s++) {
		if (*pat == '*') {
			for (const char *t = s;; t++) {
				if (glob_match(pat + 1, t))
					return 1;
				if (!*t)
					return 0;
			}
		}
		if (!*s)
			return 0;
		if (*pat == '[' && pat[1] && strchr(pat + 2, ']')) {
			const char *p = pat + 1;
			int neg = *p == '!' || *p == '^', hit = 0;
			p += neg;
			for (int first = 1; *p && (first || *p != ']'); first = 0, p++) {
				if (p[1] == '-' && p[2] && p[2] != ']') {
					hit |= (unsigned char)*s >= (unsigned char)p[0] && (unsigned char)*s <= (unsigned char)p[2];
					p += 2;
				} else {
					hit |= *s == *p;
				}
			}
			if (!*p || hit == neg)
				return 0; /* no closing ] after all ("[!]"), or no match */
			pat = p;
		} else if (*pat != '?' && *pat != *s) {
			return 0;
		}
	}
	return !*s;
}

/* Is this image named pat: the basename of argv[0] (what was run:
 * "python3") or of its executable ("python3.11", the symlink's target)? */
static int image_named(const char *pat)
{
	if (glob_match(pat, prog_name))
		return 1;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	const char *b = strrchr(exe, '/');
	return glob_match(pat, b ? b + 1 : exe);
}

/* --output-for: take the -o path if this is the first image so named. */
static void claim_output(void)
{
	const char *name = setting("ALLOCRR_OUTPUT_FOR");
	const char *file = setting("ALLOCRR_OUTPUT_FOR_FILE");
	const char *claim = setting("ALLOCRR_OUTPUT_FOR_CLAIM");
	if (!name || !*name || !file || !*file || !claim || !*claim || !image_named(name))
		return;
	if (unlink(claim) == 0)
		rec_strlcpy(rec_cfg.output, file, sizeof rec_cfg.output);
}

/* A whole unsigned decimal ALLOCRR_* value, 0 when unset or not a number
 * (allocrec checked what the user typed; 0 means no limit). */
static uint64_t env_u64(const char *name)
{
	const char *s = setting(name);
	uint64_t v = 0;
	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v;
}

static void read_config(void)
{
	const char *s;
	if ((s = setting("ALLOCRR_OUTPUT")) != NULL)
		rec_strlcpy(rec_cfg.output, s, sizeof rec_cfg.output);
	else
		claim_output();
	if ((s = setting("ALLOCRR_DIR")) != NULL && *s)
		rec_strlcpy(rec_cfg.dir, s, sizeof rec_cfg.dir);
	else if (!getcwd(rec_cfg.dir, sizeof rec_cfg.dir))
		rec_strlcpy(rec_cfg.dir, ".", sizeof rec_cfg.dir);
	if ((s = setting("ALLOCRR_MANIFEST")) != NULL)
		rec_strlcpy(rec_cfg.manifest, s, sizeof rec_cfg.manifest);
	int depth = setting_int("ALLOCRR_STACKS", 0);
	if (depth < 0)
		depth = 0;
	if (depth > AR_STACK_MAX_DEPTH)
		depth = AR_STACK_MAX_DEPTH;
	rec_cfg.stack_depth = (unsigned)depth;
	rec_cfg.follow_exec = setting_int("ALLOCRR_FOLLOW", 1);
	rec_cfg.level = setting_int("ALLOCRR_LEVEL", 3);
	int ms = setting_int("ALLOCRR_FLUSH_MS", 200);
	rec_cfg.flush_ns = (uint64_t)(ms > 0 ? ms : 200) * 1000000u;
	int every = setting_int("ALLOCRR_TIME_EVERY", REC_TIME_EVERY_DEFAULT);
	rec_cfg.time_every = every >= 1 && every <= REC_TIME_EVERY_MAX ? (unsigned)every : REC_TIME_EVERY_DEFAULT;
	int unit = setting_int("ALLOCRR_TIME_UNIT", REC_TIME_UNIT_DEFAULT_NS);
	rec_cfg.time_unit_ns = ar_time_unit_ok((uint64_t)unit) ? (unsigned)unit : REC_TIME_UNIT_DEFAULT_NS;
	rec_cfg.max_size = env_u64("ALLOCRR_MAX_SIZE");
	rec_cfg.duration_ns = env_u64("ALLOCRR_DURATION_NS");
	rec_cfg.rotate = env_u64("ALLOCRR_ROTATE");
	rec_cfg.paused = setting_int("ALLOCRR_PAUSED", 0) != 0;
	rec_cfg.stream_fd = rec_getenv_int("ALLOCRR_STREAM_FD", -1);
	if ((s = getenv("ALLOCRR_STREAM_STATS")) != NULL)
		rec_strlcpy(rec_cfg.stream_stats, s, sizeof rec_cfg.stream_stats);
	if ((s = setting("ALLOCRR_MEM_REPORT")) != NULL)
		rec_strlcpy(rec_cfg.mem_report, s, sizeof rec_cfg.mem_report);
}

void rec_config_read(void)
{
	read_prog_name();
	read_config();
}

int rec_config_parse(const char *settings)
{
	if (!settings)
		return -1;
	set_n = 0;
	for (const char *p = settings; *p && set_n < SET_MAX;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len && len < sizeof set_text[0]) {
			memcpy(set_text[set_n], p, len);
			set_text[set_n++][len] = 0;
		}
		p += len + (e != NULL);
	}
	use_settings = 1;
	memset(&rec_cfg, 0, sizeof rec_cfg);
	rec_config_read();
	return 0;
}
