/*
 * cpu.c — see ar_cpu.h. The kernel's flags are read with open/read into a
 * static buffer, and the CPUID leaves are the documented ones: leaf 1 EDX
 * bit 4 (TSC), 0x80000001 EDX bit 27 (RDTSCP), 0x80000007 EDX bit 8
 * (invariant TSC).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ar_cpu.h"
#include "ar_readfile.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* Is word one of the space-separated words of the line at flags? */
static int has_word(const char *flags, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = flags; (p = strstr(p, word)) != NULL; p += n) {
		int starts = p > flags && (p[-1] == ' ' || p[-1] == '\t');
		int ends = p[n] == ' ' || p[n] == '\t' || p[n] == '\n' || p[n] == '\0';
		if (starts && ends)
			return 1;
	}
	return 0;
}

unsigned ar_cpu_tsc_features_from(const char *text, unsigned cpuid)
{
	const char *line = text ? strstr(text, "\nflags") : NULL;
	if (!line && text && strncmp(text, "flags", 5) == 0)
		line = text;
	if (!line)
		return 0;
	const char *colon = strchr(line + 1, ':');
	const char *eol = strchr(line + 1, '\n');
	if (!colon || (eol && colon > eol))
		return 0;
	char flags[4096]; /* one line; the longest seen is under 2 KB */
	size_t n = eol ? (size_t)(eol - colon) : strlen(colon);
	if (n >= sizeof flags)
		n = sizeof flags - 1;
	memcpy(flags, colon, n);
	flags[n] = '\0';
	unsigned kernel = 0;
	if (has_word(flags, "tsc"))
		kernel |= AR_CPU_TSC;
	if (has_word(flags, "constant_tsc") && has_word(flags, "nonstop_tsc"))
		kernel |= AR_CPU_INVARIANT_TSC;
	if (has_word(flags, "rdtscp"))
		kernel |= AR_CPU_RDTSCP;
	unsigned both = kernel & cpuid;
	return both & AR_CPU_TSC ? both : 0; /* nothing works without rdtsc */
}

#if defined(__x86_64__)
static unsigned cpuid_features(void)
{
	unsigned a, b, c, d, f = 0, max_ext = __get_cpuid_max(0x80000000u, NULL);
	if (__get_cpuid(1, &a, &b, &c, &d) && (d >> 4 & 1))
		f |= AR_CPU_TSC;
	if (max_ext >= 0x80000001u && __get_cpuid(0x80000001u, &a, &b, &c, &d) && (d >> 27 & 1))
		f |= AR_CPU_RDTSCP;
	if (max_ext >= 0x80000007u && __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d >> 8 & 1))
		f |= AR_CPU_INVARIANT_TSC;
	return f;
}
#endif

unsigned ar_cpu_tsc_features(void)
{
#if defined(__x86_64__)
	int mode = 0;
	if (prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode != PR_TSC_ENABLE)
		return 0;
	static char buf[16384]; /* the first CPU's block is well inside */
	if (ar_read_small_file("/proc/cpuinfo", buf, sizeof buf) <= 0)
		return 0;
	return ar_cpu_tsc_features_from(buf, cpuid_features());
#else
	return 0;
#endif
}
