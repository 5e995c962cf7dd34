/*
 * alloc_list.c — print the allocator registry, one allocator per line, for
 * the end-to-end scripts (which allocators to test, what to LD_PRELOAD).
 *
 *   alloc_list [--installed] [--ours]
 *
 * Each line is tab-separated: name, kind (system|ours), installed (0|1),
 * preload path ("-" for nothing), version, Debian package version ("-"),
 * library that must serve malloc ("-" when not installed).
 */
#include <stdio.h>
#include <string.h>

#include "ar_alloc.h"

int main(int argc, char **argv)
{
	int only_installed = 0, only_ours = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--installed") == 0) {
			only_installed = 1;
		} else if (strcmp(argv[i], "--ours") == 0) {
			only_ours = 1;
		} else {
			fprintf(stderr, "usage: alloc_list [--installed] [--ours]\n");
			return 1;
		}
	}
	for (int i = 0; i < ar_registry_count(); i++) {
		ar_allocator_t a;
		if (ar_registry_get(i, &a) != 0) {
			fprintf(stderr, "alloc_list: registry entry %d unreadable\n", i);
			return 2;
		}
		if ((only_installed && !a.installed) || (only_ours && a.kind != AR_ALLOC_OURS))
			continue;
		printf("%s\t%s\t%d\t%s\t%s\t%s\t%s\n", a.name, a.kind == AR_ALLOC_OURS ? "ours" : "system",
		       a.installed, a.preload[0] ? a.preload : "-", a.version,
		       a.package_version[0] ? a.package_version : "-", a.library[0] ? a.library : "-");
	}
	return 0;
}
