/*
 * registry_int.h — helpers shared by registry.c and registry_probe.c, and
 * exposed to the registry's unit test; not part of the public API.
 */
#ifndef AR_ALLOC_REGISTRY_INT_H
#define AR_ALLOC_REGISTRY_INT_H

#include <stddef.h>

/* Debian architecture name of this build ("amd64"), or NULL when unknown
 * (then any architecture's record is accepted). */
const char *ar_reg_native_arch(void);

/*
 * Version of installed package pkg from a dpkg status file (stanzas of
 * "Field: value" lines separated by blank lines). Only a stanza whose Status
 * ends in "installed" and whose Architecture is arch or "all" (any, when arch
 * is NULL) counts. Writes the Version field to out. Returns 0, AR_EIO when
 * the file cannot be read, AR_EINVAL when no such installed package.
 */
int ar_reg_dpkg_version(const char *status_path, const char *pkg, const char *arch, char *out,
			size_t cap);

/* Upstream part of a Debian version: drop "epoch:", the "-revision" and any
 * "+ds"/"~rc"-style repack suffix ("1:2.0.9+ds-2" -> "2.0.9"). */
void ar_reg_upstream_version(const char *debian, char *out, size_t cap);

/* Canonical path of the object holding address addr (dladdr + realpath;
 * the main program resolves through /proc/self/exe). 0, or AR_EIO/AR_EINVAL. */
int ar_reg_object_of(const void *addr, char *out, size_t cap);

#endif
