/*
 * test_alloc_registry.c — unit test of the allocator registry
 * (liballocrr-registry.a): the fixed list, the library search order, version
 * lookup from a dpkg status file, and the proof of which library serves
 * malloc. Runs plain and under ASan+UBSan (where the sanitizer's own malloc,
 * linked into this executable, is what the proof must report).
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ar_alloc.h"
#include "registry_int.h"
#include "testing.h"

static char tmpdir[64]; /* short: paths built from it always fit PATH_MAX */

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	EXPECT(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void test_list(void)
{
	static const char *const names[] = { "glibc", "jemalloc", "tcmalloc", "mimalloc",
					     "pool", "arena", "tlscache", "freelist" };
	EXPECT_U64(ar_registry_count(), 8);
	for (int i = 0; i < ar_registry_count() && i < 8; i++) {
		ar_allocator_t a;
		EXPECT_U64(ar_registry_get(i, &a), 0);
		EXPECT_STR(a.name, names[i]);
		EXPECT_U64(a.kind, i < 4 ? AR_ALLOC_SYSTEM : AR_ALLOC_OURS);
		EXPECT(a.description && a.description[0]);
		EXPECT(a.version[0] != '\0');
		if (a.installed) {
			/* library is canonical and exists; preloading preload
			 * loads that very file. */
			char real[PATH_MAX];
			EXPECT(a.library[0] == '/' && exists(a.library));
			EXPECT(realpath(a.library, real) && strcmp(real, a.library) == 0);
			if (a.preload[0])
				EXPECT(realpath(a.preload, real) && strcmp(real, a.library) == 0);
		} else {
			EXPECT_STR(a.preload, "");
			EXPECT_STR(a.library, "");
		}
		if (a.kind == AR_ALLOC_OURS) {
			EXPECT_STR(a.version, AR_ALLOC_VERSION_STRING);
			EXPECT(a.stats_symbol && strcmp(a.stats_symbol, "ar_allocator_stats") == 0);
			EXPECT(a.package == NULL);
		} else {
			EXPECT(a.stats_symbol == NULL);
			EXPECT(a.package != NULL);
			/* Debian's version starts with the upstream one. */
			if (a.package_version[0])
				EXPECT(strncmp(a.package_version, a.version, strlen(a.version)) == 0 ||
				       strchr(a.package_version, ':'));
		}
	}
	ar_allocator_t a;
	EXPECT_U64(ar_registry_get(-1, &a), AR_EINVAL);
	EXPECT_U64(ar_registry_get(8, &a), AR_EINVAL);
	EXPECT_U64(ar_registry_get(0, NULL), AR_EINVAL);
	EXPECT_U64(ar_registry_find("nosuch", &a), AR_EINVAL);
	EXPECT_U64(ar_registry_find(NULL, &a), AR_EINVAL);
}

static void test_glibc(void)
{
	ar_allocator_t a;
	EXPECT_U64(ar_registry_find("glibc", &a), 0);
	EXPECT(a.installed);
	EXPECT_STR(a.preload, ""); /* nothing to preload */
	EXPECT_STR(a.version, gnu_get_libc_version());
	const char *base = strrchr(a.library, '/');
	EXPECT(base && strncmp(base, "/libc.so", 8) == 0);
	/* On Debian the package version of libc6 starts with the same number. */
	if (a.package_version[0])
		EXPECT(strncmp(a.package_version, a.version, strlen(a.version)) == 0);
}

static void test_search_ours(void)
{
	write_file("liballocrr-pool.so", "not really a library\n");
	char libdir[2 * PATH_MAX], expect[PATH_MAX];
	snprintf(libdir, sizeof libdir, "/nonexistent/allocrr:%s", tmpdir);
	setenv("ALLOCRR_LIBDIR", libdir, 1);
	ar_allocator_t a;
	EXPECT_U64(ar_registry_find("pool", &a), 0);
	EXPECT(a.installed);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/liballocrr-pool.so", tmpdir);
	EXPECT(realpath(path, expect) != NULL);
	EXPECT_STR(a.library, expect);
	EXPECT_STR(a.preload, expect);
	/* ALLOCRR_LIBDIR wins over the build directory next to this program. */
	unsetenv("ALLOCRR_LIBDIR");
	EXPECT_U64(ar_registry_find("pool", &a), 0);
	if (a.installed) {
		const char *base = strrchr(a.library, '/');
		EXPECT(base && strcmp(base, "/liballocrr-pool.so") == 0);
		EXPECT(strcmp(a.library, expect) != 0);
	}
	/* A directory without the file is skipped; an empty list finds nothing there. */
	setenv("ALLOCRR_LIBDIR", "/nonexistent", 1);
	setenv("ALLOCRR_BUILD", "/nonexistent", 1);
	EXPECT_U64(ar_registry_find("arena", &a), 0);
	if (a.installed)
		EXPECT(strstr(a.library, "/nonexistent") == NULL);
	unsetenv("ALLOCRR_LIBDIR");
}

static void test_dpkg(void)
{
	write_file("status",
		   "Package: foo\n"
		   "Status: install ok installed\n"
		   "Architecture: amd64\n"
		   "Version: 1:2.0.9+ds-2\n"
		   "Description: x\n"
		   " continued line: not a field\n"
		   "\n"
		   "Package: foo\n"
		   "Status: install ok installed\n"
		   "Architecture: i386\n"
		   "Version: 9.9-1\n"
		   "\n"
		   "Package: gone\n"
		   "Status: deinstall ok config-files\n"
		   "Architecture: amd64\n"
		   "Version: 1.0-1\n"
		   "\n"
		   "Package: indep\n"
		   "Version: 3.1~rc1-4\n"
		   "Architecture: all\n"
		   "Status: install ok installed\n"
		   "\n"
		   "Package: libjemalloc2\n"
		   "Status: install ok installed\n"
		   "Architecture: amd64\n"
		   "Version: 7.7.7-1\n"); /* last stanza without a trailing blank line */
	char path[PATH_MAX], v[64];
	snprintf(path, sizeof path, "%s/status", tmpdir);
	EXPECT_U64(ar_reg_dpkg_version(path, "foo", "amd64", v, sizeof v), 0);
	EXPECT_STR(v, "1:2.0.9+ds-2");
	EXPECT_U64(ar_reg_dpkg_version(path, "foo", "i386", v, sizeof v), 0);
	EXPECT_STR(v, "9.9-1");
	EXPECT_U64(ar_reg_dpkg_version(path, "foo", "arm64", v, sizeof v), AR_EINVAL);
	EXPECT_U64(ar_reg_dpkg_version(path, "gone", "amd64", v, sizeof v), AR_EINVAL);
	EXPECT_U64(ar_reg_dpkg_version(path, "indep", "amd64", v, sizeof v), 0);
	EXPECT_STR(v, "3.1~rc1-4");
	EXPECT_U64(ar_reg_dpkg_version(path, "libjemalloc2", "amd64", v, sizeof v), 0);
	EXPECT_STR(v, "7.7.7-1");
	EXPECT_U64(ar_reg_dpkg_version(path, "fo", NULL, v, sizeof v), AR_EINVAL);
	EXPECT_U64(ar_reg_dpkg_version("/nonexistent/status", "foo", NULL, v, sizeof v), AR_EIO);

	ar_reg_upstream_version("1:2.0.9+ds-2", v, sizeof v);
	EXPECT_STR(v, "2.0.9");
	ar_reg_upstream_version("2.36-9+deb12u14", v, sizeof v);
	EXPECT_STR(v, "2.36");
	ar_reg_upstream_version("3.1~rc1-4", v, sizeof v);
	EXPECT_STR(v, "3.1");
	ar_reg_upstream_version("5.3.0", v, sizeof v);
	EXPECT_STR(v, "5.3.0");
	ar_reg_upstream_version("1.2-3-4", v, sizeof v);
	EXPECT_STR(v, "1.2-3");

	/* The registry reads the file named by ALLOCRR_DPKG_STATUS. */
	if (ar_reg_native_arch() && strcmp(ar_reg_native_arch(), "amd64") == 0) {
		setenv("ALLOCRR_DPKG_STATUS", path, 1);
		ar_allocator_t a;
		EXPECT_U64(ar_registry_find("jemalloc", &a), 0);
		EXPECT_STR(a.package_version, "7.7.7-1");
		EXPECT_STR(a.version, "7.7.7");
		EXPECT_U64(ar_registry_find("mimalloc", &a), 0);
		EXPECT_STR(a.package_version, ""); /* not in this status file */
		EXPECT_STR(a.version, "unknown");
		unsetenv("ALLOCRR_DPKG_STATUS");
	}
}

static void test_provider(void)
{
	char served[PATH_MAX], self[PATH_MAX];
	EXPECT_U64(ar_registry_malloc_provider(served, sizeof served), 0);
	EXPECT(served[0] == '/' && exists(served));
	EXPECT_U64(ar_registry_malloc_provider(NULL, 10), AR_EINVAL);
	EXPECT_U64(ar_registry_malloc_provider(served, 4), AR_EINVAL);
	ar_allocator_t glibc, fake;
	EXPECT_U64(ar_registry_find("glibc", &glibc), 0);
	EXPECT(realpath("/proc/self/exe", self) != NULL);
	int rc = ar_registry_verify(&glibc, served, sizeof served);
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's malloc serves us: libasan.so (gcc) or this executable
	 * (clang's static runtime); either way, not glibc. */
	EXPECT_U64(rc, 1);
	EXPECT(strstr(served, "asan") != NULL || strcmp(served, self) == 0);
#else
	if (getenv("LD_PRELOAD") && getenv("LD_PRELOAD")[0]) {
		fprintf(stderr, "test_provider: LD_PRELOAD is set, skipping the glibc proof\n");
	} else {
		EXPECT_U64(rc, 0);
		EXPECT_STR(served, glibc.library);
	}
#endif
	/* An allocator that is not loaded must not verify. */
	setenv("ALLOCRR_LIBDIR", tmpdir, 1);
	EXPECT_U64(ar_registry_find("pool", &fake), 0);
	unsetenv("ALLOCRR_LIBDIR");
	EXPECT_U64(ar_registry_verify(&fake, NULL, 0), 1);
	fake.installed = 0;
	EXPECT_U64(ar_registry_verify(&fake, served, sizeof served), AR_EINVAL);
	EXPECT_U64(ar_registry_verify(NULL, served, sizeof served), AR_EINVAL);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/allocrr-registry-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(test_list);
	RUN(test_glibc);
	RUN(test_search_ours);
	RUN(test_dpkg);
	RUN(test_provider);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return TEST_END();
}
