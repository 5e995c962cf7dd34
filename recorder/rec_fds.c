/*
 * rec_fds.c — the descriptors the shim keeps open for the life of a trace
 * (the trace file; /proc/self/statm, pagemap and status) survive what the
 * program does to descriptors it believes are free: close, close_range,
 * closefrom (the daemon idiom closes 3..1023 or everything) and dup2/dup3
 * onto them.
 *
 * Where they live: above the program's RLIMIT_NOFILE soft limit when the
 * hard limit allows (the soft limit is raised for the one fcntl and put
 * back), so a close loop up to sysconf(_SC_OPEN_MAX) never reaches them and
 * dup2 cannot name them (EBADF for a number at or above the limit); else at
 * 1000 or just under a low limit, as before. Only for soft limits up to
 * 4096: the kernel's descriptor table grows to the highest number in use
 * (8 bytes a slot and bitmaps), and 1 MiB of it for a server's 65536 would
 * be a cost of recording.
 *
 * What the program sees is what it would see unrecorded, where these
 * descriptors do not exist: close(OURS) fails with EBADF and keeps ours;
 * close_range/closefrom close everything else in the range (ours already
 * are close-on-exec, so CLOSE_RANGE_CLOEXEC needs nothing;
 * CLOSE_RANGE_UNSHARE unshares first); dup2/dup3 onto ours first moves ours
 * to another free number (under the writer lock, so no write is in flight)
 * and then does what was asked; dup2/dup3 *from* ours fails with EBADF.
 * When no number is left (soft limit = hard limit and the program dup2()ed
 * onto every one), the trace is closed there, complete with its footer,
 * with one warning, and the program's dup2 goes ahead.
 *
 * Not interceptable: a raw syscall(SYS_close, fd) or SYS_close_range. The
 * check before every write (rec_tracefile.c: same device and inode) then
 * stops recording with one warning; the events so far stay in the file,
 * which reads as truncated.
 *
 * Invariants: the shim's own calls (rec_tls.in_shim set, the writer thread)
 * pass straight through; the fast path of close is one TLS load and a scan
 * of REC_FD_SLOTS ints; nothing here allocates.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "ar_readfile.h"
#include "rec_internal.h"

#define AR_EXPORT __attribute__((visibility("default")))
#define REC_FD_SLOTS 6

/* A descriptor is ours while *slot holds its number (the owner sets -1). */
typedef struct owned {
	int *_Atomic slot;
	void (*moved)(int fd); /* called with the new number, writer lock held */
	void (*lost)(void);    /* no number is left to move to: called unlocked */
} owned_t;
static owned_t owned[REC_FD_SLOTS];

void rec_fd_own(int *slot, void (*moved)(int fd), void (*lost)(void))
{
	for (int i = 0; i < REC_FD_SLOTS; i++)
		if (atomic_load(&owned[i].slot) == slot)
			return;
	for (int i = 0; i < REC_FD_SLOTS; i++) {
		int *z = NULL;
		if (atomic_compare_exchange_strong(&owned[i].slot, &z, slot)) {
			owned[i].moved = moved;
			owned[i].lost = lost;
			return;
		}
	}
}

/* The slot holding fd, or -1. */
static inline int owner_of(int fd)
{
	if (fd < 0)
		return -1;
	for (int i = 0; i < REC_FD_SLOTS; i++) {
		int *s = atomic_load_explicit(&owned[i].slot, memory_order_relaxed);
		if (s && *(volatile int *)s == fd)
			return i;
	}
	return -1;
}

/* ---- placement -------------------------------------------------------------------- */
/* A duplicate of fd at a number the program does not use, close-on-exec,
 * or -1. fd itself is left open. */
int rec_fd_dup_high(int fd)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return fcntl(fd, F_DUPFD_CLOEXEC, 1000);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= 4096 &&
	    (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= rl.rlim_cur + 64)) {
		/* Just above the soft limit. Another thread that runs out of
		 * descriptors in this instant could get one above its limit:
		 * start-up usually runs before the program has threads. */
		struct rlimit up = rl;
		up.rlim_cur = rl.rlim_cur + 64;
		if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
			int hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)rl.rlim_cur + 8);
			int e = errno;
			setrlimit(RLIMIT_NOFILE, &rl);
			errno = e;
			if (hi >= 0)
				return hi;
		}
	}
	int want = 1000;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1100)
		want = (int)rl.rlim_cur > 128 ? (int)rl.rlim_cur - 64 : 10;
	return fcntl(fd, F_DUPFD_CLOEXEC, want);
}

int rec_move_fd_high(int fd)
{
	int hi = rec_fd_dup_high(fd);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

/* ---- the shim's own descriptors while they are low ----------------------------------
 * A descriptor the shim opens takes the lowest free number, and off the
 * program's threads (the writer, the control thread) that races the
 * program's own juggling: a shell's `cmd </file` is close(0), then dup2(3,
 * 0); a writer thread opening a file between the two got 0, the shell's
 * dup2 replaced it, and the writer's close then closed the shell's
 * standard input (dash reading its smaps under the recorder read nothing,
 * 2-3 runs in 100; perf showed the writer's openat returning 0). So the
 * shim holds fd_lock from such an open until the number is out of the way
 * (moved high, or closed), and the program's dup2, dup3, close_range and
 * closefrom, the calls that can land on a number they did not open, run
 * under it too. Recursive: a section may call another (trace open, then
 * its manifest line). Nothing is done under it but system calls and the
 * registry's ELF parse, never another lock of the shim's, so no order of
 * locks can deadlock; a fork child, whose other threads are gone, starts
 * it afresh (rec_fd_fork_child). */
static pthread_mutex_t fd_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void rec_fd_section_begin(void)
{
	pthread_mutex_lock(&fd_lock);
}

/* errno kept: every caller hands on errno from the call it made inside. */
void rec_fd_section_end(void)
{
	int e = errno;
	pthread_mutex_unlock(&fd_lock);
	errno = e;
}

void rec_fd_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	memcpy(&fd_lock, &fresh, sizeof fd_lock);
}

ssize_t rec_read_small_file(const char *path, char *buf, size_t cap)
{
	rec_fd_section_begin();
	ssize_t n = ar_read_small_file(path, buf, cap);
	rec_fd_section_end();
	return n;
}

int rec_open_high(const char *path, int flags, mode_t mode)
{
	rec_fd_section_begin();
	int fd = open(path, flags | O_CLOEXEC, mode);
	if (fd >= 0)
		fd = rec_move_fd_high(fd);
	rec_fd_section_end();
	return fd;
}

/* ---- the real functions -------------------------------------------------------------- */
#define REAL(name)                              \
	static __typeof__(name) *real_##name;   \
	if (!real_##name)                       \
		*(void **)&real_##name = dlsym(RTLD_NEXT, #name)

/* The program is about to dup2 onto ours: move ours to another number
 * first (writer lock held, so no write of ours is in flight), then free
 * the old number for the program. */
static void move_aside(int i, int (*real_close)(int))
{
	int saved_errno = errno; /* the program's dup2 sets its own */
	int locked = rec_writer_lock(2000);
	int *slot = atomic_load(&owned[i].slot);
	int old = slot ? *slot : -1, hi = -1;
	int saved = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	if (old >= 0) {
		hi = rec_fd_dup_high(old);
		if (hi >= 0) {
			*slot = hi;
			if (owned[i].moved)
				owned[i].moved(hi);
			real_close(old);
		} else if (!owned[i].lost) {
			*slot = -1; /* the owner notices it is gone (device and inode) */
		}
	}
	if (locked)
		rec_writer_unlock();
	/* Every number up to the hard limit is the program's now (it dup2()ed
	 * onto all of them): the owner gives this one up cleanly. */
	if (old >= 0 && hi < 0 && owned[i].lost)
		owned[i].lost();
	rec_tls.in_shim = saved;
	errno = saved_errno;
}

/* ---- the hooks ------------------------------------------------------------------------ */
AR_EXPORT int close(int fd)
{
	REAL(close);
	if (REC_LIKELY(owner_of(fd) < 0) || rec_tls.in_shim)
		return real_close(fd);
	errno = EBADF; /* unrecorded, nothing is open at that number */
	return -1;
}

/* Owned descriptors in [first, last], ascending; returns how many. */
static int owned_in(unsigned first, unsigned last, unsigned out[REC_FD_SLOTS])
{
	int n = 0;
	for (int i = 0; i < REC_FD_SLOTS; i++) {
		int *s = atomic_load(&owned[i].slot);
		int fd = s ? *(volatile int *)s : -1;
		if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last) {
			int j = n++;
			for (; j > 0 && out[j - 1] > (unsigned)fd; j--)
				out[j] = out[j - 1];
			out[j] = (unsigned)fd;
		}
	}
	return n;
}

/* close_range(first, last, 0) around the owned descriptors in between;
 * with no close_range in the kernel, one close at a time below the last
 * owned one and closefrom above it. */
static int close_around(unsigned first, unsigned last, const unsigned *keep, int nkeep)
{
	REAL(close_range);
	REAL(close);
	unsigned a = first;
	for (int k = 0; k <= nkeep; k++) {
		unsigned b = k < nkeep ? keep[k] - 1 : last;
		if ((k == nkeep || keep[k] > a) && real_close_range(a, b, 0) != 0) {
			if (errno != ENOSYS)
				return -1;
			if (b == ~0u) {
				REAL(closefrom);
				real_closefrom((int)a);
			} else {
				struct rlimit rl; /* no descriptor exists above the hard limit */
				if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
				    rl.rlim_max <= b)
					b = (unsigned)rl.rlim_max - 1;
				for (unsigned fd = a; fd <= b && fd >= a; fd++)
					real_close((int)fd);
			}
		}
		if (k < nkeep) {
			if (keep[k] == last)
				return 0;
			a = keep[k] + 1;
		}
	}
	return 0;
}

static int close_range_locked(unsigned first, unsigned last, int flags)
{
	REAL(close_range);
	unsigned keep[REC_FD_SLOTS];
	int n;
	if (first > last || (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) || (flags & CLOSE_RANGE_CLOEXEC) ||
	    (n = owned_in(first, last, keep)) == 0)
		return real_close_range(first, last, flags);
	if ((flags & CLOSE_RANGE_UNSHARE) && unshare(CLONE_FILES) != 0)
		return -1;
	return close_around(first, last, keep, n);
}

AR_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	REAL(close_range);
	if (rec_tls.in_shim)
		return real_close_range(first, last, flags);
	rec_fd_section_begin();
	int rc = close_range_locked(first, last, flags);
	rec_fd_section_end();
	return rc;
}

AR_EXPORT void closefrom(int lowfd)
{
	REAL(closefrom);
	unsigned keep[REC_FD_SLOTS];
	int n;
	if (rec_tls.in_shim) {
		real_closefrom(lowfd);
		return;
	}
	int saved = errno;
	rec_fd_section_begin();
	if (lowfd < 0 || (n = owned_in((unsigned)lowfd, ~0u, keep)) == 0)
		real_closefrom(lowfd);
	else
		close_around((unsigned)lowfd, ~0u, keep, n);
	rec_fd_section_end();
	errno = saved;
}

/* dup2/dup3 as the program would see them without the recorder: from ours
 * is EBADF (-1), onto ours moves ours aside first. Returns 0 to go on. */
static int before_dup(int oldfd, int newfd)
{
	REAL(close);
	if (rec_tls.in_shim)
		return 0;
	int i;
	if (owner_of(oldfd) >= 0) {
		errno = EBADF;
		return -1;
	}
	if (oldfd != newfd && (i = owner_of(newfd)) >= 0)
		move_aside(i, real_close);
	return 0;
}

/* The program's dup2/dup3 itself, under fd_lock (the section above) so
 * that newfd is never a number the shim holds for an instant; before_dup
 * has already moved a kept descriptor of ours (under the writer lock,
 * which is not held here: the locks are never nested). */
static int dup_locked(int oldfd, int newfd, int flags, int three)
{
	REAL(dup2);
	REAL(dup3);
	if (rec_tls.in_shim)
		return three ? real_dup3(oldfd, newfd, flags) : real_dup2(oldfd, newfd);
	rec_fd_section_begin();
	int rc = three ? real_dup3(oldfd, newfd, flags) : real_dup2(oldfd, newfd);
	rec_fd_section_end();
	return rc;
}

AR_EXPORT int dup2(int oldfd, int newfd)
{
	return before_dup(oldfd, newfd) ? -1 : dup_locked(oldfd, newfd, 0, 0);
}

AR_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return before_dup(oldfd, newfd) ? -1 : dup_locked(oldfd, newfd, flags, 1);
}
