/*
 * ar_symbolize.h — turn the raw return addresses of a trace's stacks into
 * function, file and line, using the trace's module map (path, load range,
 * GNU build-id) and elfutils libdw. Built as liballocrr-sym.a; link with
 * SYM_LDLIBS (the archive, -ldw, -lelf, -lstdc++).
 *
 * A module is used only when the file at its recorded path has the recorded
 * build-id (a rebuilt library would give wrong answers); separate debug info
 * is found the standard way (/usr/lib/debug/.build-id, .gnu_debuglink).
 * C++ function names are demangled with libstdc++'s __cxa_demangle.
 * ar_sym_lookup_inline also expands calls the compiler inlined, from the
 * DWARF scopes around an address (DW_TAG_inlined_subroutine), and keeps
 * every address it answered for in a cache: a trace's stacks share most of
 * their frames (main, the event loop), each is looked up once.
 */
#ifndef AR_SYMBOLIZE_H
#define AR_SYMBOLIZE_H

#include <stdint.h>

#include "ar_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_sym ar_sym_t;

/* What is known about one address. Strings belong to the symboliser and stay
 * valid until ar_sym_close(); absent facts are NULL / 0. */
typedef struct ar_sym_frame {
	uint64_t addr;
	const char *module;      /* path of the object containing addr */
	uint64_t module_offset;  /* addr - module base (the recorded lowest mapped address) */
	const char *function;    /* symbol name, NULL if none */
	uint64_t function_offset;
	const char *file;        /* source file, NULL without debug info */
	int line;
	int inlined;             /* ar_sym_lookup_inline: 1 for a frame the compiler inlined
				  * into the next one (function is the inlined function's name) */
} ar_sym_frame_t;

/*
 * Prepare symbolisation for the modules of reader r. Returns 0 and *out, or
 * AR_ENOMEM / AR_EINVAL. Modules whose file is missing or whose build-id
 * differs are left out (their frames get module and offset only); *skipped,
 * if not NULL, receives how many. Modules without a path (the kernel's
 * vDSO, "linux-vdso.so.1") are left out too but not counted: there is no
 * file that could be missing.
 */
int ar_sym_open(ar_sym_t **out, const ar_reader_t *r, uint32_t *skipped);

/* Describe addr (a return address: the call site just before it is looked
 * up). Returns 1 when a module covers addr, 0 when none does. */
int ar_sym_lookup(ar_sym_t *s, uint64_t addr, ar_sym_frame_t *f);

/* The most frames ar_sym_lookup_inline gives for one address. */
#define AR_SYM_INLINE_MAX 16

/*
 * Describe addr with the calls inlined at it: out[0] is the innermost
 * (the inlined function the call site is in, with its file:line), each next
 * one the function it was inlined into (file:line of that inlined call),
 * the last the function the symbol table names (inlined 0). At most cap
 * (<= AR_SYM_INLINE_MAX) frames are written; returns how many there are
 * (1 when nothing was inlined or there is no debug information, 1 also when
 * no module covers addr: then module is NULL). Cached per address.
 */
int ar_sym_lookup_inline(ar_sym_t *s, uint64_t addr, ar_sym_frame_t *out, int cap);

/* Format f as "function+0xoff (file:line) [module]" into buf, each name
 * escaped for the terminal (they come from the trace and the files it names;
 * link common/ for ar_escape.h); returns buf. */
const char *ar_sym_format(const ar_sym_frame_t *f, char *buf, size_t cap);

void ar_sym_close(ar_sym_t *s);

#ifdef __cplusplus
}
#endif
#endif /* AR_SYMBOLIZE_H */
