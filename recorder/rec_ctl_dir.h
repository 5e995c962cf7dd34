/*
 * rec_ctl_dir.h — where the recorder's control channel lives, shared by the
 * shim (rec_control.c) and allocrec (--start/--stop PID), so that both
 * compute the same place from the effective uid alone (never from the
 * environment: a server started by a service manager and the user's shell
 * seldom agree on XDG_RUNTIME_DIR).
 *
 * The directory is /run/user/EUID/allocrr when /run/user/EUID is the
 * user's own directory, else /tmp/allocrr-EUID; it is 0700, owned by the
 * euid and not a link, or it is not used at all (another user could plant
 * commands or read answers). Files in it, for process PID:
 *   PID.ctl  the shim is listening: "allocrr-control 1\nstart TICKS\n"
 *            (TICKS: field 22 of /proc/PID/stat, so a reused pid or a
 *            stale file from a killed process is told apart)
 *   PID.cmd  one command line "ID VERB\n" (start, stop, status, detach),
 *            written by allocrec under another name and renamed into place
 *   PID.ack  the shim's answer "ID ok TEXT\n" or "ID error TEXT\n",
 *            likewise renamed into place
 */
#ifndef AR_REC_CTL_DIR_H
#define AR_REC_CTL_DIR_H

#include <stddef.h>
#include <sys/types.h>

/* The control directory into out (created when create is set). 0, or -1
 * with a sentence in err saying what is wrong and what to do. Never
 * allocates. */
int rec_ctl_dir(char *out, size_t cap, int create, char *err, size_t errcap);
/* Field 22 of /proc/PID/stat (start time in clock ticks), 0 if unknown. */
unsigned long long rec_ctl_start_ticks(pid_t pid);

#endif
