/*
 * alloctrace.c — entry point: `alloctrace COMMAND [ARGS]`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "alloctrace.h"

static const struct {
	const char *name;
	int (*run)(int, char **);
	const char *help;
} commands[] = {
	{"info", ar_cmd_info, "info FILE [--json]      program, threads, events by op, bytes, peak live, SHA-256"},
	{"dump", ar_cmd_dump, "dump FILE [--extra] [--stacks]  one line per event in global sequence order"},
	{"stats", ar_cmd_stats, "stats FILE [--json] [--top N]  sizes, lifetimes, live bytes, threads, realloc, sites"},
	{"stacks", ar_cmd_stacks, "stacks FILE             the recorded call stacks, symbolised, with use counts"},
	{"verify", ar_cmd_verify_any, "verify FILE...          exit 0 valid, 1 truncated but readable, 2 corrupt"},
	{"verify", NULL, "verify --manifest MANIFEST...  every listed trace has its hash, counts and verifies"},
	{"gen", ar_cmd_gen, "gen SCENARIO [--threads N] [--ops N] [--seed S] -o FILE  write a scenario trace; gen --list"},
	{"corpus", ar_cmd_corpus, "corpus add MANIFEST FILE --program P --version V --command C  add a trace's entry"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: alloctrace COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(f, "  %s\n", commands[i].help);
}

ar_reader_t *ar_open_or_complain(const char *path)
{
	ar_reader_t *r;
	ar_error_t err = {0};
	if (ar_reader_open(&r, path, &err) != 0) {
		fprintf(stderr, "alloctrace: %s: %s (at byte offset %llu)\n", path, err.msg,
			(unsigned long long)err.offset);
		return NULL;
	}
	return r;
}

int ar_file_sha256(const char *path, char out[65])
{
	FILE *f = fopen(path, "rb");
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

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (commands[i].run && !strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "alloctrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 1;
}
