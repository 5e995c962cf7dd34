/*
 * registry_probe.c — facts the registry learns from the running system:
 * package versions from dpkg's database, which object a symbol lives in, and
 * the proof of which library serves malloc in this process.
 *
 * The dpkg database is read directly (no dpkg-query subprocess): the
 * replayer asks for versions while it is setting up measurements, and a
 * fork+exec there would be slow and would run under whatever LD_PRELOAD the
 * caller has. ALLOCRR_DPKG_STATUS overrides the file (for tests and for
 * non-standard roots).
 *
 * The recorder's shim compiles this file too (recorder/module.mk): the
 * object that serves malloc is proven the same way in the recorded program
 * and in the replay worker. So ar_reg_object_of and ar_reg_malloc_identity
 * must stay safe inside an arbitrary program: no allocation of their own
 * (the loader and realpath may allocate through the program's malloc), no
 * stdio, fixed-size buffers.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_alloc.h"
#include "registry_int.h"

const char *ar_reg_native_arch(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	return "amd64";
#elif defined(__aarch64__)
	return "arm64";
#elif defined(__i386__)
	return "i386";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return "ppc64el";
#elif defined(__riscv) && __riscv_xlen == 64
	return "riscv64";
#elif defined(__s390x__)
	return "s390x";
#else
	return NULL;
#endif
}

static void copy_str(char *out, size_t cap, const char *s)
{
	if (cap == 0)
		return;
	size_t n = strlen(s);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Value of "Field: value" if line starts with field, else NULL; strips the
 * newline. */
static const char *field(char *line, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	char *v = line + n + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	v[strcspn(v, "\r\n")] = '\0';
	return v;
}

int ar_reg_dpkg_version(const char *status_path, const char *pkg, const char *arch, char *out,
			size_t cap)
{
	FILE *f = fopen(status_path, "re");
	if (!f)
		return AR_EIO;
	char line[4096], version[256] = "";
	int match_pkg = 0, installed = 0, arch_ok = 0, found = 0;
	for (;;) {
		char *l = fgets(line, sizeof line, f);
		if (!l || line[0] == '\n') { /* end of a stanza */
			if (match_pkg && installed && arch_ok && version[0]) {
				found = 1;
				break;
			}
			match_pkg = installed = arch_ok = 0;
			version[0] = '\0';
			if (!l)
				break;
			continue;
		}
		const char *v;
		if ((v = field(line, "Package")))
			match_pkg = strcmp(v, pkg) == 0;
		else if ((v = field(line, "Status"))) {
			size_t n = strlen(v);
			installed = n >= 10 && strcmp(v + n - 10, " installed") == 0;
		} else if ((v = field(line, "Architecture")))
			arch_ok = !arch || strcmp(v, arch) == 0 || strcmp(v, "all") == 0;
		else if ((v = field(line, "Version")))
			copy_str(version, sizeof version, v);
	}
	fclose(f);
	if (!found)
		return AR_EINVAL;
	copy_str(out, cap, version);
	return 0;
}

void ar_reg_upstream_version(const char *debian, char *out, size_t cap)
{
	const char *colon = strchr(debian, ':');
	const char *s = colon ? colon + 1 : debian;
	const char *dash = strrchr(s, '-');
	size_t n = dash ? (size_t)(dash - s) : strlen(s);
	size_t cut = strcspn(s, "+~");
	if (cut < n)
		n = cut;
	if (cap == 0)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

int ar_reg_object_of(const void *addr, char *out, size_t cap)
{
	Dl_info info;
	char buf[PATH_MAX];
	if (!out || cap == 0)
		return AR_EINVAL;
	if (!addr || !dladdr(addr, &info) || !info.dli_fname)
		return AR_EIO;
	const char *name = info.dli_fname;
	/* The main program shows up with an empty or bare name. */
	if (!name[0] || !strchr(name, '/'))
		name = "/proc/self/exe";
	if (!realpath(name, buf))
		return AR_EIO;
	if (strlen(buf) >= cap)
		return AR_EINVAL;
	strcpy(out, buf);
	return 0;
}

/* An ELF file mapped read-only: its bytes are parsed with every offset
 * checked against its size (the file is whatever the loader mapped, but
 * it is read here as untrusted input all the same). mmap, not malloc: this
 * runs inside the recorded program too. */
typedef struct elf_file {
	const uint8_t *p;
	size_t n;
	const ElfW(Ehdr) *eh;
} elf_file_t;

static int elf_open(const char *path, elf_file_t *f)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(ElfW(Ehdr)))
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	f->p = m;
	f->n = (size_t)st.st_size;
	f->eh = m;
	if (memcmp(f->eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    f->eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) {
		munmap(m, f->n);
		return -1;
	}
	return 0;
}

static void elf_close(elf_file_t *f)
{
	if (f->p)
		munmap((void *)f->p, f->n);
}

/* The n bytes at file offset off, or NULL when they are not all inside. */
static const void *elf_at(const elf_file_t *f, uint64_t off, uint64_t n)
{
	return off <= f->n && n <= f->n - off ? f->p + off : NULL;
}

/* The NUL-terminated string at off, or NULL. */
static const char *elf_str(const elf_file_t *f, uint64_t off)
{
	if (off >= f->n || !memchr(f->p + off, '\0', f->n - off))
		return NULL;
	return (const char *)f->p + off;
}

/* DT_SONAME, read from the file (the loaded image's dynamic section is
 * relocated or not depending on the architecture; the file is the same
 * everywhere): 0, or -1 when it has none. */
static int elf_soname(const elf_file_t *f, char *out, size_t cap)
{
	const ElfW(Ehdr) *eh = f->eh;
	const ElfW(Phdr) *ph = elf_at(f, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof *ph);
	if (!ph || eh->e_phentsize != sizeof *ph)
		return -1;
	const ElfW(Dyn) *dyn = NULL;
	uint64_t ndyn = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC && (dyn = elf_at(f, ph[i].p_offset, ph[i].p_filesz)) != NULL)
			ndyn = ph[i].p_filesz / sizeof *dyn;
	uint64_t strtab = 0, soname = UINT64_MAX;
	for (uint64_t i = 0; dyn && i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_SONAME)
			soname = dyn[i].d_un.d_val;
	}
	if (soname == UINT64_MAX)
		return -1;
	/* DT_STRTAB is a virtual address: find the file bytes behind it. */
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || strtab < ph[i].p_vaddr || strtab - ph[i].p_vaddr >= ph[i].p_filesz)
			continue;
		const char *s = elf_str(f, ph[i].p_offset + (strtab - ph[i].p_vaddr) + soname);
		if (!s || !s[0])
			return -1;
		copy_str(out, cap, s);
		return 0;
	}
	return -1;
}

/* Whether the file defines dynamic symbol `name` (its .dynsym). Asked
 * before dlsym, because a failed dlsym allocates its error message through
 * the program's malloc, which inside the recorder is a call the next
 * preloaded library would see. */
static int elf_defines(const elf_file_t *f, const char *name)
{
	const ElfW(Ehdr) *eh = f->eh;
	const ElfW(Shdr) *sh = elf_at(f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof *sh);
	if (!sh || eh->e_shentsize != sizeof *sh)
		return 0;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Sym) *sym = elf_at(f, sh[i].sh_offset, sh[i].sh_size);
		const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
		for (uint64_t k = 0; sym && k < sh[i].sh_size / sizeof *sym; k++) {
			if (sym[k].st_shndx == SHN_UNDEF || sym[k].st_name >= strs->sh_size)
				continue;
			const char *s = elf_str(f, strs->sh_offset + sym[k].st_name);
			if (s && strcmp(s, name) == 0)
				return 1;
		}
	}
	return 0;
}

/* Symbol `name` of the object at base (file f), as the program's own
 * lookups find it, or NULL when the object does not define it or another
 * object's definition comes first. */
static void *sym_in(const elf_file_t *f, const char *name, const void *base)
{
	Dl_info info;
	if (!elf_defines(f, name))
		return NULL;
	void *sym = dlsym(RTLD_DEFAULT, name);
	return sym && dladdr(sym, &info) && info.dli_fbase == base ? sym : NULL;
}

/* The version the allocator at base reports about itself, or "". */
static void allocator_version(const elf_file_t *elf, const void *base, char *out, size_t cap)
{
	void *f;
	out[0] = '\0';
	if ((f = sym_in(elf, "gnu_get_libc_version", base))) {
		copy_str(out, cap, ((const char *(*)(void))f)());
	} else if ((f = sym_in(elf, "mallctl", base))) {
		const char *v = NULL;
		size_t len = sizeof v;
		if (((int (*)(const char *, void *, size_t *, void *, size_t))f)("version", &v, &len, NULL, 0) == 0 &&
		    v)
			copy_str(out, cap, v);
	} else if ((f = sym_in(elf, "mi_version", base))) {
		int v = ((int (*)(void))f)(); /* MAJOR * 100 + MINOR * 10 + PATCH */
		if (v > 0)
			snprintf(out, cap, "%d.%d.%d", v / 100, v / 10 % 10, v % 10);
	} else if ((f = sym_in(elf, "tc_version", base))) {
		int major = 0, minor = 0;
		const char *patch = NULL;
		const char *v = ((const char *(*)(int *, int *, const char **))f)(&major, &minor, &patch);
		if (v)
			copy_str(out, cap, v);
	}
}

void *ar_reg_malloc_symbol(const void *malloc_fn, const char *name)
{
	Dl_info info;
	char path[512];
	elf_file_t elf;
	if (ar_reg_object_of(malloc_fn, path, sizeof path) != 0 || !dladdr(malloc_fn, &info) || !info.dli_fbase ||
	    elf_open(path, &elf) != 0)
		return NULL;
	void *sym = sym_in(&elf, name, info.dli_fbase);
	elf_close(&elf);
	return sym;
}

int ar_reg_malloc_identity(const void *malloc_fn, ar_reg_identity_t *id)
{
	Dl_info info;
	memset(id, 0, sizeof *id);
	int rc = ar_reg_object_of(malloc_fn, id->path, sizeof id->path);
	if (rc != 0)
		return rc;
	elf_file_t elf;
	int mapped = elf_open(id->path, &elf) == 0;
	if (!mapped || elf_soname(&elf, id->soname, sizeof id->soname) != 0) {
		const char *slash = strrchr(id->path, '/');
		copy_str(id->soname, sizeof id->soname, slash ? slash + 1 : id->path);
	}
	if (mapped && dladdr(malloc_fn, &info) && info.dli_fbase)
		allocator_version(&elf, info.dli_fbase, id->version, sizeof id->version);
	if (mapped)
		elf_close(&elf);
	return 0;
}

int ar_registry_malloc_provider(char *path, size_t cap)
{
	if (!path || cap == 0)
		return AR_EINVAL;
	/* RTLD_DEFAULT resolves like the program's own calls do: the first
	 * definition in load order, which LD_PRELOAD puts first. */
	void *sym = dlsym(RTLD_DEFAULT, "malloc");
	if (!sym)
		return AR_EIO;
	return ar_reg_object_of(sym, path, cap);
}

int ar_registry_verify(const ar_allocator_t *a, char *served, size_t cap)
{
	char buf[PATH_MAX];
	if (!a || !a->installed || !a->library[0])
		return AR_EINVAL;
	int rc = ar_registry_malloc_provider(buf, sizeof buf);
	if (rc != 0)
		return rc;
	if (served)
		copy_str(served, cap, buf);
	return strcmp(buf, a->library) == 0 ? 0 : 1;
}
