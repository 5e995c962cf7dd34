/*
 * cmd_verify.c — `alloctrace verify FILE...`: decode every block and every
 * event in sequence order, the way a replay would, and classify the file:
 * exit 0 valid and complete, 1 truncated but readable (the valid prefix is
 * usable), 2 corrupt or unreadable. With several files the worst wins.
 * The report is on stdout, a line per file ("PATH: ok, ..."), so that a
 * script can keep it.
 */
#include <stdio.h>

#include "alloctrace.h"
#include "ar_escape.h"

int ar_verify_run(const char *path)
{
	ar_reader_t *r = ar_open_or_complain(path);
	if (!r)
		return 2;
	ar_event_t e;
	uint64_t n = 0;
	int rc;
	while ((rc = ar_reader_next_merged(r, &e)) == 1)
		n++;
	const ar_error_t *err = ar_reader_error(r);
	int status;
	/* the file name and the reader's message (which may quote the trace): escaped */
	char problem[4 * sizeof err->msg + 1];
	ar_printable(ar_trace_problem(path, err->msg), problem, sizeof problem);
	ar_esc_term(stdout, path);
	if (rc < 0 || ar_reader_status(r) == AR_STATUS_CORRUPT) {
		printf(": corrupt at byte offset %llu: %s (%llu events were read in sequence order before it; %llu are in blocks that index cleanly)\n",
		       (unsigned long long)err->offset, problem, (unsigned long long)n,
		       (unsigned long long)ar_reader_event_count(r));
		status = 2;
	} else if (ar_reader_status(r) == AR_STATUS_TRUNCATED) {
		printf(": truncated at byte offset %llu: %s; the %llu events before it are readable\n",
		       (unsigned long long)err->offset, problem, (unsigned long long)n);
		status = 1;
	} else {
		printf(": ok, %llu events, %u threads, %llu blocks\n", (unsigned long long)n,
		       ar_reader_thread_count(r), (unsigned long long)ar_reader_block_count(r));
		status = 0;
	}
	ar_reader_close(r);
	return status;
}

int ar_verify_files(int n, char **paths)
{
	int worst = 0;
	for (int i = 0; i < n; i++) {
		int s = ar_verify_run(paths[i]);
		if (s > worst)
			worst = s;
	}
	return worst;
}

/* Parsed in cmd_corpus.c (ar_cmd_verify), which also does --manifest. */
const ar_cmd_help_t ar_verify_help = {
	"alloctrace verify FILE...\n"
	"alloctrace verify --manifest MANIFEST...",
	"Decode every block and event of each trace FILE in sequence order, as a replay\n"
	"would, and say whether it is valid, truncated (where; the events before are\n"
	"usable) or corrupt (where and what). Exit 0 all valid, 1 truncated but\n"
	"readable, 2 corrupt or unreadable: the worst file wins. A usage error exits 2,\n"
	"so that 1 always means truncated.",
	"      --manifest      each operand is a corpus MANIFEST (traces/corpus/README.md):\n"
	"                      every listed trace has its SHA-256 and counts and\n"
	"                      verifies, every *.zst beside it is listed; exit 0 or 2\n",
};
