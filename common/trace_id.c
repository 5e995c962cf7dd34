/*
 * trace_id.c — a trace's identity: the SHA-256 of the file's bytes, the key
 * under which results databases store traces and corpora list them (so two
 * teams holding the same file agree on its name). OpenSSL does the hashing,
 * so this lives outside the trace library (ar_trace_id.h says who links it).
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>

#include "ar_trace_id.h"

int ar_trace_sha256(const char *path, char out[65])
{
	FILE *f = fopen(path, "rbe");
	if (!f)
		return -1;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char buf[1 << 16], md[32];
	unsigned int n = 0;
	size_t k;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while (ok && (k = fread(buf, 1, sizeof buf, f)) > 0)
		ok = EVP_DigestUpdate(ctx, buf, k);
	ok = ok && !ferror(f) && EVP_DigestFinal_ex(ctx, md, &n);
	EVP_MD_CTX_free(ctx);
	fclose(f);
	if (!ok) {
		errno = EIO;
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}
