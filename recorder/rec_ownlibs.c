/*
 * rec_ownlibs.c — the objects the recorder brought into the process, and
 * their resident pages (rec_ownlibs.h says why and the rule).
 *
 * Invariants: nothing here allocates or calls into the shim (the unit test
 * links this file alone); names are kept as hashes, so no pointer into an
 * object outlives the loader's lock; the table of the recorder's objects
 * is written once, at start-up, before any thread of ours reads it, and
 * afterwards only its `programs` flags change, from 0 to 1, never back; a
 * dynamic section is read only where it lies inside its object's loaded
 * segments, and every string offset is checked against DT_STRSZ.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rec_ownlibs.h"

uint64_t rec_own_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

/* ---- the rule --------------------------------------------------------------------- */
/* Add to set every object in objs whose name is needed by a member of set,
 * until nothing changes (a worklist: each member is expanded once).
 * restrict_to, when not NULL, limits the candidates to its members. */
static void close_over(const rec_own_view_t *objs, size_t n, const uint64_t *needed, unsigned char *set,
		       const unsigned char *restrict_to)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (set[i] != 1)
				continue;
			set[i] = 2; /* expanded */
			for (uint32_t k = 0; k < objs[i].nneeded; k++) {
				uint64_t want = needed[objs[i].first + k];
				for (size_t j = 0; j < n; j++)
					if (!set[j] && objs[j].name == want && (!restrict_to || restrict_to[j])) {
						set[j] = 1;
						changed = 1;
					}
			}
		}
	}
}

size_t rec_own_attribute(const rec_own_view_t *objs, size_t n, const uint64_t *needed, size_t self,
			 unsigned char *ours)
{
	/* scratch for as many objects as the scan keeps (MAX_OBJS below) */
	static unsigned char shim_needs[512], program_needs[512];
	memset(ours, 0, n);
	if (self >= n || n > sizeof shim_needs)
		return 0;
	memset(shim_needs, 0, n);
	memset(program_needs, 0, n);
	shim_needs[self] = 1;
	close_over(objs, n, needed, shim_needs, NULL);
	/* Within what the shim needs, whatever any other object needs
	 * directly, and then what those need, is the program's. */
	for (size_t j = 0; j < n; j++) {
		if (shim_needs[j])
			continue;
		for (uint32_t k = 0; k < objs[j].nneeded; k++)
			for (size_t i = 0; i < n; i++)
				if (shim_needs[i] && i != self && objs[i].name == needed[objs[j].first + k])
					program_needs[i] = 1;
	}
	close_over(objs, n, needed, program_needs, shim_needs);
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		ours[i] = (i == self) || (shim_needs[i] && !program_needs[i]);
		count += ours[i];
	}
	return count;
}

/* ---- the process's objects ---------------------------------------------------------- */
#define MAX_OBJS 512 /* at start-up: the executable, what is preloaded, what they need */
#define MAX_NEEDED 4096
#define OWN_MAX 16

/* One walk of the loader's list: scratch, mapped for the walk and unmapped
 * after it, so that it leaves nothing resident. */
static struct walk {
	const void *self_addr;
	rec_own_view_t views[MAX_OBJS];
	uintptr_t lo[MAX_OBJS], hi[MAX_OBJS];
	char file[MAX_OBJS][48]; /* the path's last component, for reports */
	uint64_t needed[MAX_NEEDED];
	size_t n, nneeded, self;
	int overflow;
	unsigned char ours[MAX_OBJS];
} *w;

/* The recorder's objects (written at start-up only, but for `programs`). */
static struct own {
	uintptr_t lo, hi;
	uint64_t name; /* as in its view */
	char file[48];
	_Atomic int programs; /* a program's object needs it: its pages are the program's */
} own[OWN_MAX];
static size_t nown;
static _Atomic int busy;

/* The string at offset off of a string table of size sz, or NULL. */
static const char *str_at(const char *tab, uint64_t sz, uint64_t off)
{
	if (!tab || off >= sz || !memchr(tab + off, 0, sz - off))
		return NULL;
	return tab + off;
}

/* The dynamic section's string table of info, checked to lie inside
 * [lo, hi); NULL when there is none or it does not. dyn_out gets the
 * section, nd_out its number of entries, sz its size. */
static const char *strtab_of(const struct dl_phdr_info *info, uintptr_t lo, uintptr_t hi, const ElfW(Dyn) **dyn_out,
			     size_t *nd_out, uint64_t *sz)
{
	*dyn_out = NULL;
	*nd_out = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		uintptr_t d = info->dlpi_addr + ph->p_vaddr;
		if (d < lo || d + ph->p_memsz > hi || ph->p_memsz < sizeof(ElfW(Dyn)))
			return NULL;
		*dyn_out = (const ElfW(Dyn) *)d;
		size_t nd = *nd_out = ph->p_memsz / sizeof(ElfW(Dyn));
		uintptr_t tab = 0;
		*sz = 0;
		for (size_t k = 0; k < nd && (*dyn_out)[k].d_tag != DT_NULL; k++) {
			if ((*dyn_out)[k].d_tag == DT_STRTAB)
				tab = (*dyn_out)[k].d_un.d_ptr;
			else if ((*dyn_out)[k].d_tag == DT_STRSZ)
				*sz = (*dyn_out)[k].d_un.d_val;
		}
		/* glibc relocates the entry in place; the vDSO's and other
		 * loaders' are link-time addresses */
		if (tab && tab < info->dlpi_addr)
			tab += info->dlpi_addr;
		if (!tab || tab < lo || tab >= hi || *sz > hi - tab)
			return NULL;
		return (const char *)tab;
	}
	return NULL;
}

static void file_name(char *out, size_t cap, const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *b = slash ? slash + 1 : (path ? path : "");
	size_t len = strlen(b);
	if (len >= cap)
		len = cap - 1;
	memcpy(out, b, len);
	out[len] = 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (w->n >= MAX_OBJS) {
		w->overflow = 1;
		return 0;
	}
	uintptr_t lo = UINTPTR_MAX, hi = 0, me = (uintptr_t)w->self_addr;
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t mask = (uintptr_t)(page > 0 ? page : 4096) - 1;
	int is_self = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		is_self |= me >= a && me < b;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (hi <= lo)
		return 0; /* nothing loaded */
	size_t k = w->n++;
	w->lo[k] = lo & ~mask;
	w->hi[k] = (hi + mask) & ~mask;
	if (is_self)
		w->self = k;
	file_name(w->file[k], sizeof w->file[k], info->dlpi_name);
	rec_own_view_t *v = &w->views[k];
	v->name = w->file[k][0] ? rec_own_hash(w->file[k]) : 0;
	v->first = (uint32_t)w->nneeded;
	v->nneeded = 0;
	const ElfW(Dyn) *dyn;
	size_t nd;
	uint64_t sz;
	const char *tab = strtab_of(info, lo, hi, &dyn, &nd, &sz);
	if (!tab)
		return 0;
	for (size_t d = 0; d < nd && dyn[d].d_tag != DT_NULL; d++) {
		const char *s = str_at(tab, sz, dyn[d].d_un.d_val);
		if (!s)
			continue;
		if (dyn[d].d_tag == DT_SONAME) {
			v->name = rec_own_hash(s);
		} else if (dyn[d].d_tag == DT_NEEDED) {
			if (w->nneeded >= MAX_NEEDED) {
				w->overflow = 1;
				continue;
			}
			/* a needed name with a directory is matched by its file name */
			const char *slash = strrchr(s, '/');
			w->needed[w->nneeded++] = rec_own_hash(slash ? slash + 1 : s);
			v->nneeded++;
		}
	}
	return 0;
}

/* Walk the loaded objects and attribute them into w->ours. Returns 0 when
 * the walk was complete and found the shim, -1 otherwise. */
static int walk(const void *self_addr, rec_own_iterate_fn iterate)
{
	w->self_addr = self_addr;
	w->n = w->nneeded = 0;
	w->self = MAX_OBJS;
	w->overflow = 0;
	iterate(visit, NULL);
	if (w->self >= w->n)
		return -1;
	rec_own_attribute(w->views, w->n, w->needed, w->self, w->ours);
	if (w->overflow) { /* an object not seen may need any of them: only the shim is surely ours */
		memset(w->ours, 0, w->n);
		w->ours[w->self] = 1;
	}
	return 0;
}

size_t rec_own_scan(const void *self_addr, rec_own_iterate_fn iterate)
{
	nown = 0;
	if (atomic_exchange(&busy, 1))
		return 0;
	void *mem = mmap(NULL, sizeof *w, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		atomic_store(&busy, 0);
		return 0;
	}
	w = mem;
	if (walk(self_addr, iterate) == 0)
		for (size_t i = 0; i < w->n && nown < OWN_MAX; i++)
			if (w->ours[i]) {
				own[nown].lo = w->lo[i];
				own[nown].hi = w->hi[i];
				own[nown].name = w->views[i].name;
				memcpy(own[nown].file, w->file[i], sizeof own[nown].file);
				atomic_store(&own[nown].programs, 0);
				nown++;
			}
	munmap(mem, sizeof *w);
	w = NULL;
	atomic_store(&busy, 0);
	return nown;
}

/* The string table of the dynamic section dyn loaded at addr, and its
 * size; NULL when it has none. The loader read its own DT_NEEDED names from
 * it: glibc relocates the entry in place, other loaders may not. */
static const char *loaded_strtab(const ElfW(Dyn) *dyn, uintptr_t addr, uint64_t *sz)
{
	uintptr_t tab = 0;
	*sz = 0;
	for (size_t k = 0; dyn[k].d_tag != DT_NULL; k++) {
		if (dyn[k].d_tag == DT_STRTAB)
			tab = dyn[k].d_un.d_ptr;
		else if (dyn[k].d_tag == DT_STRSZ)
			*sz = dyn[k].d_un.d_val;
	}
	if (tab && tab < addr)
		tab += addr;
	return (const char *)tab;
}

void rec_own_dlopened(void *handle)
{
	struct link_map *lm = NULL;
	if (!nown || !handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_ld)
		return;
	for (size_t k = 0; k < nown; k++) /* one of ours, opened by name */
		if ((uintptr_t)lm->l_ld >= own[k].lo && (uintptr_t)lm->l_ld < own[k].hi)
			atomic_store(&own[k].programs, 1);
	uint64_t sz;
	const char *tab = loaded_strtab(lm->l_ld, lm->l_addr, &sz);
	if (!tab)
		return;
	for (size_t d = 0; lm->l_ld[d].d_tag != DT_NULL; d++) {
		const char *s = lm->l_ld[d].d_tag == DT_NEEDED ? str_at(tab, sz, lm->l_ld[d].d_un.d_val) : NULL;
		if (!s)
			continue;
		const char *slash = strrchr(s, '/');
		uint64_t h = rec_own_hash(slash ? slash + 1 : s);
		for (size_t k = 0; k < nown; k++)
			if (own[k].name == h)
				atomic_store(&own[k].programs, 1);
	}
}

uint64_t rec_own_resident(int pagemap_fd, const char **names, uint64_t *bytes, size_t max, size_t *n)
{
	static uint64_t pm[512];
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t page = ps > 0 ? (uint64_t)ps : 4096, total = 0;
	if (n)
		*n = 0;
	if (pagemap_fd < 0)
		return 0;
	for (size_t k = 0; k < nown; k++) {
		if (atomic_load(&own[k].programs))
			continue;
		uint64_t present = 0;
		for (uintptr_t a = own[k].lo; a < own[k].hi;) {
			size_t want = (own[k].hi - a) / page;
			if (want > sizeof pm / sizeof pm[0])
				want = sizeof pm / sizeof pm[0];
			ssize_t got = pread(pagemap_fd, pm, want * sizeof pm[0], (off_t)(a / page * sizeof pm[0]));
			if (got < (ssize_t)sizeof pm[0])
				return 0; /* pagemap cannot tell: count none rather than a part */
			size_t e = (size_t)got / sizeof pm[0];
			for (size_t i = 0; i < e; i++)
				present += pm[i] >> 63;
			a += e * page;
		}
		total += present * page;
		if (names && bytes && n && *n < max) {
			names[*n] = own[k].file;
			bytes[*n] = present * page;
			(*n)++;
		}
	}
	return total;
}
