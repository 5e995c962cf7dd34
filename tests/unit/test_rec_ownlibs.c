/*
 * test_rec_ownlibs.c — which loaded objects count as the recorder's memory
 * (recorder/rec_ownlibs.h): the rule on made-up object lists, then the
 * scan, the page count and a later dlopen on this very process, with
 * libzstd (which this test links) standing in for the shim.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include "rec_ownlibs.h"
#include "testing.h"

/* A made-up process: objects named by strings, each with its needed list
 * ("" ends it). */
typedef struct fake {
	const char *name;
	const char *needed[6];
} fake_t;

/* Attribute objs (n of them, self the shim) into ours; returns the count. */
static size_t attribute(const fake_t *objs, size_t n, size_t self, unsigned char *ours)
{
	rec_own_view_t v[16];
	uint64_t needed[96];
	uint32_t k = 0;
	for (size_t i = 0; i < n; i++) {
		v[i].name = objs[i].name[0] ? rec_own_hash(objs[i].name) : 0;
		v[i].first = k;
		v[i].nneeded = 0;
		for (int j = 0; j < 6 && objs[i].needed[j] && objs[i].needed[j][0]; j++, k++, v[i].nneeded++)
			needed[k] = rec_own_hash(objs[i].needed[j]);
	}
	return rec_own_attribute(v, n, needed, self, ours);
}

/* Debian's shim: libzstd and libunwind, and liblzma through libunwind. */
static void test_shim_only(void)
{
	const fake_t p[] = {
		{"", {"libc.so.6"}},                                        /* the executable */
		{"liballocrr-rec.so", {"libzstd.so.1", "libunwind.so.8", "libc.so.6"}}, /* the shim */
		{"libzstd.so.1", {"libc.so.6"}},
		{"libunwind.so.8", {"liblzma.so.5", "libc.so.6"}},
		{"libc.so.6", {"ld-linux-x86-64.so.2"}},
		{"liblzma.so.5", {"libc.so.6"}},
		{"ld-linux-x86-64.so.2", {""}},
	};
	unsigned char ours[7];
	EXPECT_U64(attribute(p, 7, 1, ours), 4);
	EXPECT(!ours[0] && ours[1] && ours[2] && ours[3] && !ours[4] && ours[5] && !ours[6]);
}

/* A program that needs liblzma itself (the zstd command does): liblzma is
 * the program's; so is libzstd when a library of the program's needs it. */
static void test_program_shares(void)
{
	const fake_t p[] = {
		{"", {"liblzma.so.5", "libfoo.so.1", "libc.so.6"}},
		{"liballocrr-rec.so", {"libzstd.so.1", "libunwind.so.8", "libc.so.6"}},
		{"libzstd.so.1", {"libc.so.6"}},
		{"libunwind.so.8", {"liblzma.so.5", "libc.so.6"}},
		{"libc.so.6", {""}},
		{"liblzma.so.5", {"libc.so.6"}},
		{"libfoo.so.1", {"libzstd.so.1"}},
	};
	unsigned char ours[7];
	EXPECT_U64(attribute(p, 7, 1, ours), 2);
	EXPECT(ours[1] && !ours[2] && ours[3] && !ours[5]);
}

/* What the program needs, it needs with everything that needs: libunwind
 * needed by another preloaded library takes liblzma along. */
static void test_program_needs_transitively(void)
{
	const fake_t p[] = {
		{"", {"libc.so.6"}},
		{"libother-preload.so", {"libunwind.so.8"}},
		{"liballocrr-rec.so", {"libzstd.so.1", "libunwind.so.8"}},
		{"libzstd.so.1", {"libc.so.6"}},
		{"libunwind.so.8", {"liblzma.so.5"}},
		{"liblzma.so.5", {"libc.so.6"}},
		{"libc.so.6", {""}},
	};
	unsigned char ours[7];
	EXPECT_U64(attribute(p, 7, 2, ours), 2);
	EXPECT(ours[2] && ours[3] && !ours[4] && !ours[5] && !ours[1]);
}

/* Cycles end; a shim that is not in the list owns nothing. */
static void test_edges(void)
{
	const fake_t p[] = {
		{"", {"libc.so.6"}},
		{"liballocrr-rec.so", {"liba.so"}},
		{"liba.so", {"libb.so"}},
		{"libb.so", {"liba.so", "liballocrr-rec.so"}},
		{"libc.so.6", {""}},
	};
	unsigned char ours[5];
	EXPECT_U64(attribute(p, 5, 1, ours), 3);
	EXPECT(ours[1] && ours[2] && ours[3] && !ours[4]);
	EXPECT_U64(attribute(p, 5, 5, ours), 0);
	EXPECT(!ours[0] && !ours[1]);
}

static int iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	return dl_iterate_phdr(cb, arg);
}

/* This process, libzstd playing the shim: this test needs libzstd itself,
 * but as "the shim" it is ours by definition and libc is not; its pages
 * are counted until a dlopen names it. */
static void test_this_process(void)
{
	EXPECT(ZSTD_versionNumber() > 0); /* some of libzstd is resident */
	EXPECT_U64(rec_own_scan((const void *)ZSTD_versionNumber, iterate), 1);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	EXPECT(fd >= 0);
	const char *names[4];
	uint64_t bytes[4];
	size_t n = 9;
	uint64_t total = rec_own_resident(fd, names, bytes, 4, &n);
	EXPECT_U64(n, 1);
	EXPECT(n == 1 && strcmp(names[0], "libzstd.so.1") == 0 && bytes[0] == total);
	EXPECT(total >= 4096 && total < (64u << 20));
	EXPECT_U64(rec_own_resident(-1, names, bytes, 4, &n), 0);
	/* a dlopen of it by name: the program's from now on */
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_NOLOAD);
	EXPECT(h != NULL);
	rec_own_dlopened(h);
	EXPECT_U64(rec_own_resident(fd, names, bytes, 4, &n), 0);
	EXPECT_U64(n, 0);
	if (h)
		dlclose(h);
	close(fd);
}

int main(void)
{
	RUN(test_shim_only);
	RUN(test_program_shares);
	RUN(test_program_needs_transitively);
	RUN(test_edges);
	RUN(test_this_process);
	return TEST_END();
}
