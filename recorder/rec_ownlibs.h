/*
 * rec_ownlibs.h — which loaded objects are in the process only because the
 * recorder is: the shim itself and the libraries only it needs (libzstd,
 * libunwind, liblzma on Debian). Their resident pages are the recorder's
 * memory, like its buffers (SPEC 6.10, the PROCESS record's recorder
 * memory), so that a prediction does not count them as the program's.
 *
 * The rule (rec_own_attribute): an object is the recorder's when the shim
 * needs it, directly or through other objects (DT_NEEDED), and no other
 * object does: the program, its libraries, anything it dlopen'ed, another
 * preloaded library. A program that uses libzstd itself has libzstd's
 * pages counted as its own.
 *
 * The attribution is pure (a list of objects in, a set out) so that it is
 * tested on its own (tests/unit/test_rec_ownlibs.c); rec_own_scan applies
 * it to the process at start-up (dl_iterate_phdr), rec_own_dlopened to what
 * the program loads later, rec_own_resident counts the pages
 * (/proc/self/pagemap); none needs more than libc.
 */
#ifndef REC_OWNLIBS_H
#define REC_OWNLIBS_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* One loaded object, as the attribution sees it: its name (DT_SONAME, or
 * its file name without directories) and the names it needs, hashed
 * (rec_own_hash), so that nothing points into an object that may be
 * unloaded. */
typedef struct rec_own_view {
	uint64_t name;           /* 0: no name (the executable, the vDSO): nobody needs it */
	uint32_t first, nneeded; /* its needed names: needed[first .. first + nneeded) */
} rec_own_view_t;

/* FNV-1a of s; never 0. */
uint64_t rec_own_hash(const char *s);

/* Mark in ours[i] (1 or 0) whether object i is the recorder's, for the n
 * objects of objs (needed[] holds their needed names) of which self is
 * the shim. Returns how many are ours (self counts; 0 when self >= n). */
size_t rec_own_attribute(const rec_own_view_t *objs, size_t n, const uint64_t *needed, size_t self,
			 unsigned char *ours);

/* Find the recorder's objects in this process: the object that holds
 * self_addr and those only it needs. Called once at start-up, before any
 * thread of ours runs; iterate is dl_iterate_phdr or a wrapper of it (the
 * shim passes the fork-gated one). Returns how many objects are the
 * recorder's (0: none found, nothing will be counted). */
typedef int (*rec_own_iterate_fn)(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
size_t rec_own_scan(const void *self_addr, rec_own_iterate_fn iterate);

/* The program's dlopen returned handle: an object of the recorder's that
 * the opened object needs directly (python's _lzma module needs liblzma), or
 * that it is (dlopen of libzstd by name), becomes the program's, for good.
 * Takes no lock of the loader's (dlinfo, then the object's own dynamic
 * section), so a fork on another thread meanwhile is safe; what the
 * opened object's new dependencies need in turn is not looked at. Safe
 * from any thread. */
void rec_own_dlopened(void *handle);

/* The recorder's objects' resident bytes now: the pages of their loaded
 * segments present in this process (bit 63 of /proc/self/pagemap, read
 * through pagemap_fd). Their file names and bytes go to names/bytes when
 * those are not NULL (up to max entries; *n says how many). Returns 0 when
 * pagemap_fd is < 0 or unreadable. Not reentrant: the caller serialises
 * (rec_process.c: the writer lock). */
uint64_t rec_own_resident(int pagemap_fd, const char **names, uint64_t *bytes, size_t max, size_t *n);

#endif
