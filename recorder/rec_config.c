/*
 * rec_config.c — the shim's configuration: the ALLOCRR_* variables read once
 * at start-up into rec_cfg, the program name used in default trace names,
 * and the small helpers (string copy, integer variables, pid/tid) the rest
 * of the shim uses.
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

/* ---- reading the configuration --------------------------------------------------- */
static void read_prog_name(void)
{
	char buf[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	const char *b = strrchr(buf, '/');
	b = b ? b + 1 : buf;
	if (*b)
		rec_strlcpy(prog_name, b, sizeof prog_name);
}

static void read_config(void)
{
	const char *s;
	if ((s = getenv("ALLOCRR_OUTPUT")) != NULL)
		rec_strlcpy(rec_cfg.output, s, sizeof rec_cfg.output);
	if ((s = getenv("ALLOCRR_DIR")) != NULL && *s)
		rec_strlcpy(rec_cfg.dir, s, sizeof rec_cfg.dir);
	else if (!getcwd(rec_cfg.dir, sizeof rec_cfg.dir))
		rec_strlcpy(rec_cfg.dir, ".", sizeof rec_cfg.dir);
	if ((s = getenv("ALLOCRR_MANIFEST")) != NULL)
		rec_strlcpy(rec_cfg.manifest, s, sizeof rec_cfg.manifest);
	int depth = rec_getenv_int("ALLOCRR_STACKS", 0);
	if (depth < 0)
		depth = 0;
	if (depth > AR_STACK_MAX_DEPTH)
		depth = AR_STACK_MAX_DEPTH;
	rec_cfg.stack_depth = (unsigned)depth;
	rec_cfg.follow_exec = rec_getenv_int("ALLOCRR_FOLLOW", 1);
	rec_cfg.level = rec_getenv_int("ALLOCRR_LEVEL", 3);
	int ms = rec_getenv_int("ALLOCRR_FLUSH_MS", 200);
	rec_cfg.flush_ns = (uint64_t)(ms > 0 ? ms : 200) * 1000000u;
}

void rec_config_read(void)
{
	read_prog_name();
	read_config();
}
