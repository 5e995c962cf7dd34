/*
 * rec_ctl_dir.c — the control channel's private directory (rec_ctl_dir.h):
 * computed from the euid, created 0700, and trusted only when it is a real
 * directory owned by the euid with no access for others (the checks
 * replayer/wl_cache.c makes for its cache). Nothing here allocates: the
 * shim calls it from its own thread inside arbitrary programs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_readfile.h"
#include "rec_ctl_dir.h"

static int own_dir(const char *path, struct stat *st)
{
	return lstat(path, st) == 0 && S_ISDIR(st->st_mode) && st->st_uid == geteuid();
}

int rec_ctl_dir(char *out, size_t cap, int create, char *err, size_t errcap)
{
	struct stat st;
	char run[64];
	unsigned long euid = (unsigned long)geteuid();
	snprintf(run, sizeof run, "/run/user/%lu", euid);
	if (own_dir(run, &st) && access(run, W_OK | X_OK) == 0)
		snprintf(out, cap, "%s/allocrr", run);
	else
		snprintf(out, cap, "/tmp/allocrr-%lu", euid);
	if (create && mkdir(out, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errcap, "cannot create the control directory %s: %s", out, strerror(errno));
		return -1;
	}
	if (lstat(out, &st) != 0) {
		snprintf(err, errcap, "no control directory %s (%s): no process of yours was started with "
			 "allocrec --paused", out, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errcap, "the control directory %s is not a directory (a link or a file put there "
			 "by someone): remove it", out);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errcap, "the control directory %s belongs to uid %lu, not to you (uid %lu): remove "
			 "it as its owner or root", out, (unsigned long)st.st_uid, euid);
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(err, errcap, "the control directory %s is open to others (mode %03o): chmod 700 it",
			 out, (unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

unsigned long long rec_ctl_start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (ar_read_small_file(path, buf, sizeof buf) <= 0)
		return 0;
	const char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (int field = 2; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	unsigned long long v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	return v;
}
