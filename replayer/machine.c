/*
 * machine.c — the facts about the machine stored with every run (host, CPU
 * model, CPU count, kernel, glibc), so results from several machines can be
 * merged into one database and still be told apart.
 */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "replay.h"

void ar_machine_probe(ar_machine_t *m)
{
	memset(m, 0, sizeof *m);
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(m->host, sizeof m->host, "%s", u.nodename);
		snprintf(m->kernel, sizeof m->kernel, "%s %s", u.sysname, u.release);
	}
	snprintf(m->glibc, sizeof m->glibc, "%s", gnu_get_libc_version());
	m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(m->cpu_model, sizeof m->cpu_model, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (f) {
		char line[512];
		while (fgets(line, sizeof line, f)) {
			char *colon = strchr(line, ':');
			if (colon && !strncmp(line, "model name", 10)) {
				colon++;
				while (*colon == ' ' || *colon == '\t')
					colon++;
				colon[strcspn(colon, "\n")] = '\0';
				snprintf(m->cpu_model, sizeof m->cpu_model, "%s", colon);
				break;
			}
		}
		fclose(f);
	}
}
