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

/* Who a malloc is: the object holding it and what it says about itself. */
typedef struct ar_reg_identity {
	char path[512];    /* canonical path (ar_reg_object_of) */
	char soname[128];  /* DT_SONAME read from that file, else its basename */
	char version[64];  /* "" when the object does not say: glibc's
			    * gnu_get_libc_version(), jemalloc's mallctl("version"),
			    * mimalloc's mi_version() as "M.m.p", gperftools'
			    * tc_version(); each only when that symbol, as the
			    * program's lookups find it, lives in the same object */
} ar_reg_identity_t;

/*
 * Fill *id for the object holding malloc_fn: the replay worker passes the
 * malloc its program resolves (dlsym(RTLD_DEFAULT)), the recorder's shim the
 * one it forwards to (dlsym(RTLD_NEXT)). Safe inside an arbitrary program:
 * calls only dladdr, realpath, dlsym of symbols the object's file defines
 * (a failed dlsym would allocate its message), mmap of that file and the
 * version functions above; allocates nothing itself. 0, or AR_EIO/AR_EINVAL from
 * ar_reg_object_of (then *id is empty).
 */
int ar_reg_malloc_identity(const void *malloc_fn, ar_reg_identity_t *id);

/* Symbol name of the object holding malloc_fn, as the program's own
 * lookups find it (dlsym(RTLD_DEFAULT) lands in that object), or NULL.
 * Never makes a dlsym that fails (its message would be allocated with the
 * program's malloc: the recorder reads allocator statistics this way). */
void *ar_reg_malloc_symbol(const void *malloc_fn, const char *name);

#endif
