/*
 * test_common.c — common/: the CPU feature decision (ar_cpu.h) on the
 * cpuinfo texts and CPUID answers of the machines we met, the "-"
 * convention of ar_cli.h, and the byte formatter (ar_numfmt.h) in both of
 * its forms, sizes (ar_size.h, with the command lines' and the tunables'
 * spellings) and durations.
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "ar_cli.h"
#include "ar_cpu.h"
#include "ar_numfmt.h"
#include "ar_size.h"
#include "testing.h"

#define ALL (AR_CPU_TSC | AR_CPU_INVARIANT_TSC | AR_CPU_RDTSCP)

/* The AMD EPYC VM of issue 13: invariant TSC, no rdtscp in the flags. */
static const char epyc_vm[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
			      "flags\t\t: fpu vme de pse tsc msr pae constant_tsc nonstop_tsc rep_good\n"
			      "bugs\t\t: sysret_ss_attrs\n";

static void test_hidden_rdtscp(void)
{
	/* valgrind's CPUID claims rdtscp; the kernel's flags win. */
	EXPECT_U64(ar_cpu_tsc_features_from(epyc_vm, ALL), AR_CPU_TSC | AR_CPU_INVARIANT_TSC);
}

static void test_both_must_grant(void)
{
	static const char full[] = "processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc\n";
	EXPECT_U64(ar_cpu_tsc_features_from(full, ALL), ALL);
	EXPECT_U64(ar_cpu_tsc_features_from(full, AR_CPU_TSC | AR_CPU_INVARIANT_TSC),
		   AR_CPU_TSC | AR_CPU_INVARIANT_TSC);
	/* No rdtsc at all: nothing else matters. */
	EXPECT_U64(ar_cpu_tsc_features_from(full, AR_CPU_RDTSCP | AR_CPU_INVARIANT_TSC), 0);
}

static void test_whole_words(void)
{
	/* "tsc_scale", "tsc_adjust" and "constant_tsc" are not "tsc". */
	static const char t[] = "processor\t: 0\nflags\t\t: fpu tsc_scale tsc_adjust constant_tsc nonstop_tsc\n";
	EXPECT_U64(ar_cpu_tsc_features_from(t, ALL), 0);
	/* One invariance flag is not enough. */
	static const char half[] = "processor\t: 0\nflags\t\t: tsc constant_tsc\n";
	EXPECT_U64(ar_cpu_tsc_features_from(half, ALL), AR_CPU_TSC);
	/* Only the first CPU's flags line counts; words after it do not. */
	static const char later[] = "processor\t: 0\nflags\t\t: tsc\nbugs\t\t: rdtscp constant_tsc nonstop_tsc\n";
	EXPECT_U64(ar_cpu_tsc_features_from(later, ALL), AR_CPU_TSC);
}

static void test_no_flags(void)
{
	EXPECT_U64(ar_cpu_tsc_features_from("", ALL), 0);
	EXPECT_U64(ar_cpu_tsc_features_from(NULL, ALL), 0);
	EXPECT_U64(ar_cpu_tsc_features_from("processor\t: 0\nflagsX no colon\n", ALL), 0);
	/* An aarch64 cpuinfo has "Features", no "flags". */
	EXPECT_U64(ar_cpu_tsc_features_from("processor\t: 0\nFeatures\t: fp asimd\n", ALL), 0);
}

static void test_this_machine(void)
{
	/* Whatever this CPU is, a granted feature implies rdtsc. */
	unsigned f = ar_cpu_tsc_features();
	EXPECT(f == 0 || (f & AR_CPU_TSC));
}

static void test_dash_is_stdout(void)
{
	EXPECT(ar_cli_is_stdio("-"));
	EXPECT(!ar_cli_is_stdio("./-"));
	EXPECT(!ar_cli_is_stdio(NULL));
	EXPECT(ar_cli_open_output("-", "w") == stdout);
	char path[] = "/tmp/test_common.XXXXXX";
	int fd = mkstemp(path);
	EXPECT(fd >= 0);
	close(fd);
	FILE *f = ar_cli_open_output(path, "w");
	EXPECT(f && f != stdout);
	if (f) {
		fputs("x", f);
		EXPECT(ar_cli_close_output(f) == 0);
	}
	unlink(path);
	/* A write that cannot reach its file is an error at close. */
	FILE *full = ar_cli_open_output("/dev/full", "w");
	if (full) {
		fputs("x", full);
		EXPECT(ar_cli_close_output(full) == -1);
	}
}

static void test_bad_option_is_usage(void)
{
	/* getopt_long's "unknown" and "needs a value" both end main with 1. */
	char *argv[] = {"tool", "--bogus", NULL};
	optind = 2;
	optopt = 0;
	EXPECT(ar_cli_bad_option('?', argv) == AR_EXIT_USAGE);
	EXPECT(ar_cli_bad_option(':', argv) == AR_EXIT_USAGE);
	EXPECT(ar_cli_usage_error("x") == AR_EXIT_USAGE);
	EXPECT(ar_cli_error("p", "x") == AR_EXIT_RUNTIME);
}

static void test_tsc_is_time(void)
{
	EXPECT(ar_cpu_tsc_is_time(AR_CPU_TSC | AR_CPU_INVARIANT_TSC));
	EXPECT(ar_cpu_tsc_is_time(ALL));
	EXPECT(!ar_cpu_tsc_is_time(AR_CPU_TSC | AR_CPU_RDTSCP));
	EXPECT(!ar_cpu_tsc_is_time(AR_CPU_INVARIANT_TSC));
	EXPECT(ar_cpu_tsc_is_time(ar_cpu_tsc_features_from(epyc_vm, ALL)));
}

static void test_bytes(void)
{
	char b[32];
	/* allocreport's form: a whole number of a unit has no decimal */
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 0, 0), "0 B");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 1023, 0), "1023 B");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 1024, 0), "1 KiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 1536, 0), "1.5 KiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 3 << 20, 0), "3 MiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, -2048, 0), "-2 KiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 1125899906842624.0, 0), "1024 TiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, NAN, 0), "-");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, INFINITY, 0), "inf TiB");
	/* alloctrace stats's form: one decimal above bytes */
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 1023, AR_FMT_ONE_DECIMAL), "1023 B");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 1024, AR_FMT_ONE_DECIMAL), "1.0 KiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 3 << 20, AR_FMT_ONE_DECIMAL), "3.0 MiB");
	EXPECT_STR(ar_fmt_bytes(b, sizeof b, 18446744073709551615.0, AR_FMT_ONE_DECIMAL), "16777216.0 TiB");
	/* a short buffer is cut, still a string */
	EXPECT_STR(ar_fmt_bytes(b, 4, 1536, 0), "1.5");
}

static void test_sizes_and_seconds(void)
{
	unsigned long long v = 0;
	/* command lines: T and a bare B, no hex */
	EXPECT(ar_cli_parse_size("4G", &v) == 0 && v == 4ull << 30);
	EXPECT(ar_cli_parse_size("512MiB", &v) == 0 && v == 512ull << 20);
	EXPECT(ar_cli_parse_size("2T", &v) == 0 && v == 2ull << 40);
	EXPECT(ar_cli_parse_size("4096B", &v) == 0 && v == 4096);
	EXPECT(ar_cli_parse_size("0x10", &v) == -1);
	EXPECT(ar_cli_parse_size("16777216T", &v) == -1); /* 2^64 */
	EXPECT(ar_cli_parse_size("", &v) == -1);
	/* tunables: hex, k/m/g only, B only after a unit */
	EXPECT(ar_parse_size("0x10k", AR_SIZE_HEX, &v) == 0 && v == 16ull << 10);
	EXPECT(ar_parse_size("64kb", AR_SIZE_HEX, &v) == 0 && v == 64ull << 10);
	EXPECT(ar_parse_size("2T", AR_SIZE_HEX, &v) == -1);
	EXPECT(ar_parse_size("4096B", AR_SIZE_HEX, &v) == -1);
	EXPECT(ar_parse_size("0x", AR_SIZE_HEX, &v) == -1);
	EXPECT(ar_parse_size("18446744073709551616", AR_SIZE_HEX, &v) == -1);
	/* seconds */
	EXPECT(ar_cli_parse_seconds("2.5", &v) == 0 && v == 2500000000ull);
	EXPECT(ar_cli_parse_seconds("1e-3", &v) == 0 && v == 1000000ull);
	EXPECT(ar_cli_parse_seconds("0", &v) == -1);
	EXPECT(ar_cli_parse_seconds("1e-10", &v) == -1); /* 0 ns */
	EXPECT(ar_cli_parse_seconds(" 5", &v) == -1);
	EXPECT(ar_cli_parse_seconds("5s", &v) == -1);
	EXPECT(ar_cli_parse_seconds("nan", &v) == -1);
	EXPECT(ar_cli_parse_seconds("31708800", &v) == -1); /* 367 days */
	/* whole numbers in a range */
	int n = 7;
	EXPECT(ar_cli_parse_int("1024", 1, 1024, &n) == 0 && n == 1024);
	EXPECT(ar_cli_parse_int("1", 1, 1024, &n) == 0 && n == 1);
	EXPECT(ar_cli_parse_int("0", 1, 1024, &n) == -1 && n == 1); /* unchanged on error */
	EXPECT(ar_cli_parse_int("1025", 1, 1024, &n) == -1);
	EXPECT(ar_cli_parse_int("8x", 1, 1024, &n) == -1);
	EXPECT(ar_cli_parse_int("", 1, 1024, &n) == -1);
	EXPECT(ar_cli_parse_int("99999999999999999999", 1, 1024, &n) == -1);
}

int main(void)
{
	RUN(test_hidden_rdtscp);
	RUN(test_both_must_grant);
	RUN(test_whole_words);
	RUN(test_no_flags);
	RUN(test_this_machine);
	RUN(test_dash_is_stdout);
	RUN(test_bad_option_is_usage);
	RUN(test_tsc_is_time);
	RUN(test_bytes);
	RUN(test_sizes_and_seconds);
	return TEST_END();
}
