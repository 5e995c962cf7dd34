/*
 * rec_got.h — rebinding a running process's calls to a few functions by
 * rewriting the GOT entries of its loaded objects (rec_got.c). Used by an
 * attach (rec_attach.c), never by a preloaded shim, whose hooks the loader
 * binds by itself. Internal to the shim.
 */
#ifndef AR_REC_GOT_H
#define AR_REC_GOT_H

#include <stddef.h>
#include <stdint.h>

/* One symbol to rebind: calls bound to real are sent to hook (none when
 * real is NULL). */
typedef struct rec_got_sym {
	const char *name;
	void *hook;
	void *real;
} rec_got_sym_t;

/* What one pass did, summed over the objects it visited. */
typedef struct rec_got_stats {
	unsigned objects;  /* objects whose relocations were read */
	unsigned patched;  /* entries changed (to the hook, or back) */
	unsigned foreign;  /* entries bound elsewhere than real: left alone */
	unsigned failed;   /* entries that could not be written (mprotect refused) */
} rec_got_stats_t;

/* The symbols to rebind (kept, not copied: static storage) and the object
 * to leave alone (the shim: its own calls must reach the real functions),
 * named by any address inside it. Call once before the others. */
void rec_got_setup(const rec_got_sym_t *syms, size_t n, const void *self_addr);

/* Point every JUMP_SLOT and GLOB_DAT entry of every loaded object (but the
 * shim, the loader and the vDSO) that is bound to a symbol's real function,
 * or not bound yet (a lazy PLT stub inside the object), at its hook. Entries
 * already pointing at the hook are left as they are, so the call is cheap to
 * repeat after a dlopen. The previous value of each changed entry is kept
 * for rec_got_restore. Serialised by a lock; may be called from any thread.
 * Returns 0, or -1 when no object could be read (st says more). */
int rec_got_patch(rec_got_stats_t *st);

/* Put back every entry still pointing at a hook: its value before
 * rec_got_patch, or the real function when that is not known. Objects
 * unloaded since are not touched (the loader's list is walked again).
 * Returns 0 or -1 as rec_got_patch. */
int rec_got_restore(rec_got_stats_t *st);

/* The number of entries of loaded objects that point at a hook now (0 after
 * a complete restore): a check for tests and for allocrr_attach_status. */
unsigned rec_got_count_hooked(void);

#endif /* AR_REC_GOT_H */
