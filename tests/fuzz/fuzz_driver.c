/*
 * fuzz_driver.c — replay a fuzz corpus without libFuzzer, so `make test`
 * (also under ASan+UBSan) re-checks every input the fuzzer ever kept and
 * every crash turned into a regression file.
 *
 *   fuzz_NAME_replay [FILE|DIR]...   default: tests/fuzz/corpus/NAME, NAME
 *                                    taken from the program's own name
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: read failed\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	DIR *d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		rc |= run_path(p, count);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;
	if (argc < 2) {
		/* build/tests/fuzz_reader_replay -> tests/fuzz/corpus/reader */
		const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
		char name[256], dir[512];
		snprintf(name, sizeof name, "%s", base + (strncmp(base, "fuzz_", 5) ? 0 : 5));
		char *suffix = strstr(name, "_replay");
		if (suffix)
			*suffix = 0;
		snprintf(dir, sizeof dir, "%s/%s", FUZZ_DEFAULT_CORPUS, name);
		rc = run_path(dir, &count);
	}
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i], &count);
	printf("replayed %d inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "fuzz_driver: no inputs found\n");
		return 1;
	}
	return rc ? 1 : 0;
}
