/*
 * symbolize.c — ar_symbolize.h on top of elfutils libdwfl.
 *
 * The recorder stores, per module, the lowest mapped address (base) and the
 * GNU build-id. The load bias libdwfl wants is base minus the file's lowest
 * PT_LOAD p_vaddr, which we read from the file itself; a module is reported
 * to libdwfl only when the file's build-id equals the recorded one.
 *
 * Invariants: strings returned in ar_sym_frame_t live as long as the
 * ar_sym_t (module paths are copied; names and files are libdw's own, which
 * live as long as the Dwfl); lookups never modify the reader.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_escape.h"
#include "ar_hash.h"
#include "ar_symbolize.h"

typedef struct sym_mod {
	uint64_t base, size;
	char *path;
	Dwfl_Module *dm; /* NULL when the file could not be used */
} sym_mod_t;

/* C++ names demangled once each; `mangled` is libdw's stable pointer. */
typedef struct demangled {
	const char *mangled;
	char *name;
} demangled_t;

/* ar_sym_lookup_inline's answers: addr -> frames[first .. first + n). */
typedef struct inline_entry {
	uint64_t addr;
	uint32_t first, n;
} inline_entry_t;

struct ar_sym {
	Dwfl *dwfl;
	sym_mod_t *mods;
	uint32_t nmods;
	demangled_t *names;
	size_t nnames, names_cap;
	/* cache: common/ar_hash.h's table on addr + 1 (0 = empty) */
	inline_entry_t *cache;
	uint64_t ncache, cache_cap;
	ar_sym_frame_t *frames;
	size_t nframes, frames_cap;
};

/* libstdc++'s demangler (the ABI's own), rather than a parser of ours. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The readable form of a symbol name: demangled for C++ (_Z...), else as is. */
static const char *readable_name(ar_sym_t *s, const char *name)
{
	if (strncmp(name, "_Z", 2) != 0)
		return name;
	for (size_t i = 0; i < s->nnames; i++)
		if (s->names[i].mangled == name)
			return s->names[i].name;
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0)
		return name;
	if (s->nnames == s->names_cap) {
		size_t cap = s->names_cap ? 2 * s->names_cap : 64;
		demangled_t *n = realloc(s->names, cap * sizeof *n);
		if (!n) {
			free(d);
			return name;
		}
		s->names = n;
		s->names_cap = cap;
	}
	s->names[s->nnames++] = (demangled_t){name, d};
	return d;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Lowest PT_LOAD vaddr of the file and whether its build-id matches. */
static int inspect(const char *path, const ar_module_info_t *m, uint64_t *min_vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int ok = -1;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		uint64_t lo = UINT64_MAX;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lo)
				lo = ph.p_vaddr;
		}
		const void *id = NULL;
		ssize_t idlen = dwelf_elf_gnu_build_id(e, &id);
		int id_ok = m->build_id_len == 0 ||
			    (idlen == (ssize_t)m->build_id_len && memcmp(id, m->build_id, m->build_id_len) == 0);
		if (lo != UINT64_MAX && id_ok) {
			*min_vaddr = lo;
			ok = 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

int ar_sym_open(ar_sym_t **out, const ar_reader_t *r, uint32_t *skipped)
{
	if (!out || !r)
		return AR_EINVAL;
	elf_version(EV_CURRENT);
	ar_sym_t *s = calloc(1, sizeof *s);
	if (!s)
		return AR_ENOMEM;
	uint32_t n = ar_reader_module_count(r), skip = 0;
	s->mods = calloc(n ? n : 1, sizeof *s->mods);
	s->dwfl = dwfl_begin(&callbacks);
	if (!s->mods || !s->dwfl) {
		ar_sym_close(s);
		return AR_ENOMEM;
	}
	dwfl_report_begin(s->dwfl);
	for (uint32_t i = 0; i < n; i++) {
		const ar_module_info_t *m = ar_reader_module(r, i);
		sym_mod_t *sm = &s->mods[s->nmods++];
		sm->base = m->base;
		sm->size = m->size;
		sm->path = strdup(m->path);
		uint64_t min_vaddr;
		if (m->path[0] != '/')
			continue; /* the kernel's vDSO ("linux-vdso.so.1"): no file to read, nothing missing */
		if (inspect(m->path, m, &min_vaddr) != 0) {
			skip++;
			continue;
		}
		sm->dm = dwfl_report_elf(s->dwfl, m->path, m->path, -1, m->base - min_vaddr, false);
		if (!sm->dm)
			skip++;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (skipped)
		*skipped = skip;
	*out = s;
	return 0;
}

int ar_sym_lookup(ar_sym_t *s, uint64_t addr, ar_sym_frame_t *f)
{
	memset(f, 0, sizeof *f);
	f->addr = addr;
	const sym_mod_t *m = NULL;
	for (uint32_t i = 0; i < s->nmods; i++) /* later records win: a dlopen may reuse a range */
		if (addr >= s->mods[i].base && addr - s->mods[i].base < s->mods[i].size)
			m = &s->mods[i];
	if (!m)
		return 0;
	f->module = m->path;
	f->module_offset = addr - m->base;
	if (!m->dm)
		return 1;
	Dwarf_Addr pc = addr ? addr - 1 : 0; /* the call instruction, not the return address */
	GElf_Sym sym;
	GElf_Off off = 0;
	const char *name = dwfl_module_addrinfo(m->dm, pc, &off, &sym, NULL, NULL, NULL);
	if (name) {
		f->function = readable_name(s, name);
		f->function_offset = off + 1;
	}
	Dwfl_Line *line = dwfl_module_getsrc(m->dm, pc);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (file) {
			f->file = file;
			f->line = lineno;
		}
	}
	return 1;
}

/* The name an inlined subroutine or subprogram DIE gives its function:
 * the linkage name demangled (C++), else its DW_AT_name, both followed
 * through DW_AT_abstract_origin. */
static const char *die_function(ar_sym_t *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		name = dwarf_formstring(&a);
	if (name)
		return readable_name(s, name);
	return dwarf_diename(die);
}

/* The call site (DW_AT_call_file, DW_AT_call_line) of an inlined
 * subroutine DIE, from its compilation unit's file table. */
static void call_site(Dwarf_Die *cudie, Dwarf_Die *die, ar_sym_frame_t *f)
{
	Dwarf_Attribute a;
	Dwarf_Word file = 0, line = 0;
	Dwarf_Files *files;
	size_t nfiles;
	f->file = NULL;
	f->line = 0;
	if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &line) == 0)
		f->line = line <= INT32_MAX ? (int)line : 0;
	if (dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &file) == 0 &&
	    dwarf_getsrcfiles(cudie, &files, &nfiles) == 0 && file < nfiles)
		f->file = dwarf_filesrc(files, file, NULL, NULL);
}

/* Expand the inlined calls at f->addr into out[0..cap): see ar_sym_lookup_inline. */
static int expand_inline(ar_sym_t *s, const ar_sym_frame_t *f, ar_sym_frame_t *out, int cap)
{
	out[0] = *f;
	const sym_mod_t *m = NULL;
	for (uint32_t i = 0; i < s->nmods; i++)
		if (f->module == s->mods[i].path)
			m = &s->mods[i];
	if (!m || !m->dm)
		return 1;
	Dwarf_Addr pc = f->addr ? f->addr - 1 : 0, bias = 0;
	Dwarf_Die *cudie = dwfl_module_addrdie(m->dm, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int nscopes = cudie ? dwarf_getscopes(cudie, pc - bias, &scopes) : -1;
	int n = 1;
	/* scopes run innermost first: each inlined subroutine is a frame whose
	 * caller is the next function scope out, called at its call site */
	for (int i = 0; i < nscopes && n < cap; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		const char *name = die_function(s, &scopes[i]);
		out[n - 1].function = name ? name : out[n - 1].function;
		out[n - 1].function_offset = 0;
		out[n - 1].inlined = 1;
		out[n] = *f; /* the caller: the real function unless another inline follows */
		call_site(cudie, &scopes[i], &out[n]);
		n++;
	}
	free(scopes);
	return n;
}

#define INLINE_EMPTY(e) ((e)->addr == 0)
#define INLINE_KEY(ctx, e) ((e)->addr)
AR_HASH_DEFINE(inline_tab, inline_entry_t, INLINE_EMPTY, INLINE_KEY, ar_hash_fib)
AR_HASH_DEFINE_GROW(inline_tab, inline_entry_t, AR_HASH_CALLOC, AR_HASH_FREE)

int ar_sym_lookup_inline(ar_sym_t *s, uint64_t addr, ar_sym_frame_t *out, int cap)
{
	if (cap <= 0)
		return 0;
	if (cap > AR_SYM_INLINE_MAX)
		cap = AR_SYM_INLINE_MAX;
	uint64_t key = addr + 1; /* addr 2^64-1 shares a slot key with nothing: 0 is never stored */
	uint64_t h = key ? inline_tab_find(s->cache, s->cache_cap - 1, NULL, key) : AR_HASH_ABSENT;
	if (h != AR_HASH_ABSENT) {
		const inline_entry_t *e = &s->cache[h];
		int n = (int)e->n < cap ? (int)e->n : cap;
		memcpy(out, s->frames + e->first, (size_t)n * sizeof *out);
		return (int)e->n;
	}
	ar_sym_frame_t f, tmp[AR_SYM_INLINE_MAX];
	ar_sym_lookup(s, addr, &f);
	int n = expand_inline(s, &f, tmp, AR_SYM_INLINE_MAX);
	memcpy(out, tmp, (size_t)(n < cap ? n : cap) * sizeof *out);
	/* remember it; out of memory only costs the cache */
	if (!key || inline_tab_reserve(&s->cache, &s->cache_cap, s->ncache, 1024, NULL))
		return n;
	if (s->nframes + (size_t)n > s->frames_cap) {
		size_t fc = s->frames_cap ? 2 * s->frames_cap : 1024;
		while (fc < s->nframes + (size_t)n)
			fc *= 2;
		ar_sym_frame_t *nf = realloc(s->frames, fc * sizeof *nf);
		if (!nf)
			return n;
		s->frames = nf;
		s->frames_cap = fc;
	}
	memcpy(s->frames + s->nframes, tmp, (size_t)n * sizeof *tmp);
	s->cache[inline_tab_pos(s->cache, s->cache_cap - 1, NULL, key)] =
		(inline_entry_t){key, (uint32_t)s->nframes, (uint32_t)n};
	s->nframes += (size_t)n;
	s->ncache++;
	return n;
}

const char *ar_sym_format(const ar_sym_frame_t *f, char *buf, size_t cap)
{
	size_t n = 0;
#define PUT(...)                                                           \
	do {                                                               \
		int k_ = snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__); \
		if (k_ > 0)                                                \
			n += (size_t)k_;                                   \
	} while (0)
	/* The module path is the trace's (a modules record), the names and
	 * files come from whatever ELF file it points at: all escaped. */
	char shown[1024];
	if (f->function)
		PUT("%s+0x%" PRIx64, ar_printable(f->function, shown, sizeof shown), f->function_offset);
	else
		PUT("0x%" PRIx64, f->addr);
	if (f->file)
		PUT(" (%s:%d)", ar_printable(f->file, shown, sizeof shown), f->line);
	if (f->module) {
		const char *b = strrchr(f->module, '/');
		PUT(" [%s+0x%" PRIx64 "]", ar_printable(b ? b + 1 : f->module, shown, sizeof shown), f->module_offset);
	}
#undef PUT
	return buf;
}

void ar_sym_close(ar_sym_t *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (uint32_t i = 0; i < s->nmods; i++)
		free(s->mods[i].path);
	free(s->mods);
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i].name);
	free(s->names);
	free(s->cache);
	free(s->frames);
	free(s);
}
