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
 */
#include <dlfcn.h>
#include <limits.h>
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
