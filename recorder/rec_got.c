/*
 * rec_got.c — rebinding the heap functions of a running process: the GOT
 * entries (JUMP_SLOT and GLOB_DAT relocations) of every loaded object that
 * point at a real heap function are pointed at the shim's hook, and put
 * back later. This is how an attached recorder sees the calls a preloaded
 * one gets from the loader's symbol interposition (heaptrack's inject mode
 * works the same way).
 *
 * Invariants:
 *   - Only entries bound to the symbol's real function (the one the hook
 *     forwards to), or not bound yet (a lazy-binding stub inside the object
 *     itself), are changed: an object bound to another allocator keeps it,
 *     counted as foreign. So a hook always forwards to what the call would
 *     have reached.
 *   - An entry is written with one aligned pointer store (a thread calling
 *     through it sees the old or the new target, never a torn one); a page
 *     that is not writable (RELRO) is made so for the store and given its
 *     exact previous protection back, read from /proc/self/maps: nothing
 *     here guesses a protection, and a page we cannot make writable is
 *     counted as failed and left alone, never written.
 *   - The shim itself (its calls must reach the real functions), the
 *     dynamic loader and the vDSO are never touched.
 *   - Nothing here allocates: tables are static, /proc/self/maps is read
 *     with read(2) into a stack buffer. One lock serialises the passes.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rec_got.h"
#include "rec_internal.h" /* rec_open_high */

#if defined(__x86_64__)
#define REL_JUMP_SLOT R_X86_64_JUMP_SLOT
#define REL_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define REL_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define REL_GLOB_DAT R_AARCH64_GLOB_DAT
#else
#error "rec_got.c: add this architecture's JUMP_SLOT and GLOB_DAT relocation types"
#endif

#define MAX_SAVED 8192  /* entries whose old value we keep (~11 per object) */
#define MAX_PENDING 4096 /* entries one pass changes */

static const rec_got_sym_t *syms;
static size_t nsyms;
static const void *self_addr;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The value each hooked entry had before: restored on detach. */
static struct {
	uintptr_t slot, old;
} saved[MAX_SAVED];
static size_t nsaved;

/* The entries one pass is about to write, gathered first so that
 * /proc/self/maps is read once per pass. */
static struct {
	uintptr_t slot, value;
	int releases; /* free, realloc, reallocarray: written before the others */
} pending[MAX_PENDING];
static size_t npending;

void rec_got_setup(const rec_got_sym_t *s, size_t n, const void *self)
{
	syms = s;
	nsyms = n;
	self_addr = self;
}

/* ---- reading one object's relocations ---------------------------------------------- */
/* Whether addr is inside one of the object's loaded segments. */
static int in_object(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The loader relocates most d_ptr values of a writable dynamic section in
 * place; a read-only one (some architectures, the vDSO) keeps them as link
 * addresses. A value below the load base cannot be an address inside it. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, uintptr_t v)
{
	return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

typedef struct dyn_info {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *jmprel, *rela;
	size_t jmprel_sz, rela_sz;
} dyn_info_t;

/* 0 and *d filled when the object has what we need (RELA relocations). */
static int read_dynamic(const struct dl_phdr_info *info, dyn_info_t *d)
{
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	memset(d, 0, sizeof *d);
	int pltrel = DT_RELA;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_JMPREL:
			d->jmprel = (const ElfW(Rela) *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->jmprel_sz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			pltrel = (int)dyn->d_un.d_val;
			break;
		case DT_RELA:
			d->rela = (const ElfW(Rela) *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->rela_sz = dyn->d_un.d_val;
			break;
		}
	}
	if (pltrel != DT_RELA)
		d->jmprel = NULL; /* REL on a RELA architecture: not ours to guess */
	return d->symtab && d->strtab ? 0 : -1;
}

/* The index in syms of the symbol a relocation binds, or -1. */
static int reloc_sym(const dyn_info_t *d, const ElfW(Rela) *r)
{
	unsigned long type = ELF64_R_TYPE(r->r_info);
	if (type != REL_JUMP_SLOT && type != REL_GLOB_DAT)
		return -1;
	unsigned long si = ELF64_R_SYM(r->r_info);
	if (!si)
		return -1;
	const char *name = d->strtab + d->symtab[si].st_name;
	for (size_t i = 0; i < nsyms; i++)
		if (syms[i].real && strcmp(name, syms[i].name) == 0)
			return (int)i; /* a symbol without a real function is not rebound */
	return -1;
}

/* What a pass does with each entry bound to one of our symbols. */
enum pass_kind { PASS_PATCH, PASS_RESTORE, PASS_COUNT };
typedef struct pass {
	enum pass_kind kind;
	rec_got_stats_t *st;
	unsigned hooked; /* PASS_COUNT */
} pass_t;

static int is_hook(uintptr_t v)
{
	for (size_t i = 0; i < nsyms; i++)
		if (v == (uintptr_t)syms[i].hook)
			return 1;
	return 0;
}

static uintptr_t saved_value(uintptr_t slot)
{
	for (size_t i = 0; i < nsaved; i++)
		if (saved[i].slot == slot)
			return saved[i].old;
	return 0;
}

static void remember(uintptr_t slot, uintptr_t old)
{
	for (size_t i = 0; i < nsaved; i++)
		if (saved[i].slot == slot) {
			saved[i].old = old;
			return;
		}
	if (nsaved < MAX_SAVED) {
		saved[nsaved].slot = slot;
		saved[nsaved++].old = old;
	}
}

static int releases(const char *name)
{
	return strcmp(name, "free") == 0 || strcmp(name, "realloc") == 0 || strcmp(name, "reallocarray") == 0;
}

static void queue(uintptr_t slot, uintptr_t value, const rec_got_sym_t *s, pass_t *p)
{
	if (npending < MAX_PENDING) {
		pending[npending].slot = slot;
		pending[npending].releases = releases(s->name);
		pending[npending++].value = value;
	} else {
		p->st->failed++;
	}
}

static void visit_entry(const struct dl_phdr_info *info, uintptr_t slot, int si, pass_t *p)
{
	uintptr_t cur = __atomic_load_n((uintptr_t *)slot, __ATOMIC_RELAXED);
	const rec_got_sym_t *s = &syms[si];
	if (p->kind == PASS_COUNT) {
		p->hooked += is_hook(cur);
		return;
	}
	if (p->kind == PASS_RESTORE) {
		if (cur != (uintptr_t)s->hook)
			return;
		uintptr_t old = saved_value(slot);
		/* A lazy stub of another object than this one (the slot was
		 * reused after a dlclose) is not this entry's: bind it. */
		if (!old || (old != (uintptr_t)s->real && !in_object(info, old)))
			old = (uintptr_t)s->real;
		queue(slot, old, s, p);
		return;
	}
	if (cur == (uintptr_t)s->hook)
		return;
	if (cur != (uintptr_t)s->real && !in_object(info, cur)) {
		p->st->foreign++;
		return;
	}
	remember(slot, cur);
	queue(slot, (uintptr_t)s->hook, s, p);
}

static void visit_relocs(const struct dl_phdr_info *info, const dyn_info_t *d, const ElfW(Rela) *r,
			 size_t bytes, pass_t *p)
{
	for (size_t i = 0; r && i < bytes / sizeof *r; i++) {
		int si = reloc_sym(d, &r[i]);
		if (si >= 0)
			visit_entry(info, info->dlpi_addr + r[i].r_offset, si, p);
	}
}

static int visit_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	pass_t *p = arg;
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uintptr_t loader = (uintptr_t)getauxval(AT_BASE);
	if (in_object(info, (uintptr_t)self_addr) || (vdso && in_object(info, vdso)) ||
	    (loader && info->dlpi_addr == loader))
		return 0;
	dyn_info_t d;
	if (read_dynamic(info, &d) != 0)
		return 0;
	p->st->objects++;
	visit_relocs(info, &d, d.jmprel, d.jmprel_sz, p);
	visit_relocs(info, &d, d.rela, d.rela_sz, p);
	return 0;
}

/* ---- writing the entries -------------------------------------------------------------- */
/* Parse "start-end perms ..." at line; 0 when it is one. */
static int parse_map_line(const char *line, uintptr_t *lo, uintptr_t *hi, int *prot)
{
	uintptr_t v[2] = {0, 0};
	const char *s = line;
	for (int k = 0; k < 2; k++) {
		int digits = 0;
		for (;; s++, digits++) {
			char c = *s;
			int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (x < 0)
				break;
			v[k] = v[k] << 4 | (uintptr_t)x;
		}
		if (!digits || *s != (k == 0 ? '-' : ' '))
			return -1;
		s++;
	}
	*lo = v[0];
	*hi = v[1];
	*prot = (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) | (s[2] == 'x' ? PROT_EXEC : 0);
	return 0;
}

/* Store one pending entry that lies in the mapping [lo, hi) of protection
 * prot, making its page writable for the store when it is not. */
static void store_entry(size_t i, int prot, rec_got_stats_t *st)
{
	uintptr_t slot = pending[i].slot;
	if (prot & PROT_WRITE) {
		__atomic_store_n((uintptr_t *)slot, pending[i].value, __ATOMIC_RELEASE);
		st->patched++;
		return;
	}
	uintptr_t page = slot & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
	if (mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), prot | PROT_READ | PROT_WRITE) != 0) {
		st->failed++;
		return;
	}
	__atomic_store_n((uintptr_t *)slot, pending[i].value, __ATOMIC_RELEASE);
	mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), prot);
	st->patched++;
}

/* Write the pending entries (those of the release functions when
 * releases_only) whose mapping /proc/self/maps lists; an entry in no
 * listed mapping (cannot happen for a loaded object) is not written. */
static void store_some(rec_got_stats_t *st, unsigned char *done, int releases_only)
{
	int fd = rec_open_high("/proc/self/maps", O_RDONLY, 0);
	char buf[8192];
	size_t have = 0;
	ssize_t n;
	while (fd >= 0 && (n = read(fd, buf + have, sizeof buf - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
			*nl = 0;
			uintptr_t lo, hi;
			int prot;
			if (parse_map_line(line, &lo, &hi, &prot) == 0)
				for (size_t i = 0; i < npending; i++)
					if (!done[i] && (!releases_only || pending[i].releases) && pending[i].slot >= lo &&
					    pending[i].slot + sizeof(void *) <= hi) {
						store_entry(i, prot, st);
						done[i] = 1;
					}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than the buffer: a path, never ours */
	}
	if (fd >= 0)
		close(fd);
}

/* Write every pending entry: free, realloc and reallocarray first. When a
 * window is open while entries change (an object dlopen'ed during it), a
 * free that reaches its hook before the object's malloc does is recorded
 * as the free of a pre-existing block, which a window allows; the other
 * order would record a malloc whose free went unseen, and the address's
 * next malloc would find it still live. */
static void store_pending(rec_got_stats_t *st)
{
	if (!npending)
		return;
	unsigned char done[MAX_PENDING];
	memset(done, 0, npending);
	store_some(st, done, 1);
	store_some(st, done, 0);
	for (size_t i = 0; i < npending; i++)
		st->failed += !done[i];
	npending = 0;
}

/* ---- the passes ------------------------------------------------------------------------- */
static int run_pass(enum pass_kind kind, rec_got_stats_t *st, unsigned *hooked)
{
	rec_got_stats_t local;
	memset(&local, 0, sizeof local);
	pass_t p = {.kind = kind, .st = &local};
	pthread_mutex_lock(&lock);
	npending = 0;
	dl_iterate_phdr(visit_object, &p);
	store_pending(&local);
	pthread_mutex_unlock(&lock);
	if (hooked)
		*hooked = p.hooked;
	if (st) {
		st->objects += local.objects;
		st->patched += local.patched;
		st->foreign += local.foreign;
		st->failed += local.failed;
	}
	return local.objects ? 0 : -1;
}

int rec_got_patch(rec_got_stats_t *st)
{
	return run_pass(PASS_PATCH, st, NULL);
}

int rec_got_restore(rec_got_stats_t *st)
{
	return run_pass(PASS_RESTORE, st, NULL);
}

unsigned rec_got_count_hooked(void)
{
	unsigned n = 0;
	run_pass(PASS_COUNT, NULL, &n);
	return n;
}
