/*
 * allocrec_stream.h — allocrec's side of streaming a trace (-o -, -o FIFO):
 * the descriptor handed to the recorder shim, PROG's standard output moved
 * out of the trace's way, and the summary of a trace allocrec cannot read
 * back. Internal to allocrec.
 */
#ifndef AR_ALLOCREC_STREAM_H
#define AR_ALLOCREC_STREAM_H

/* When output is "-" (allocrec's standard output) or names an existing
 * FIFO: open it without blocking (a FIFO nobody reads is refused here,
 * before PROG runs), hand it to the shim (ALLOCRR_STREAM_FD,
 * ALLOCRR_STREAM_STATS) and, for "-", say once on stderr that PROG's own
 * standard output goes to standard error. Returns -1 when output is no
 * stream (the environment then names none), 0 when set up, or an exit
 * status with the message printed: 1 (standard output is a terminal), 2
 * (the FIFO has no reader, or cannot be opened). */
int allocrec_stream_open(const char *output, int quiet);

/* In the forked child, before exec: with -o -, PROG's standard output
 * becomes allocrec's standard error. */
void allocrec_stream_child(void);

/* In allocrec after the fork: let go of the stream, so that its reader
 * sees its end when the recorder closes it, not when allocrec exits. */
void allocrec_stream_parent(void);

/* The summary lines of the streamed trace (events, bytes, dropped events,
 * a limit stop), from the totals the shim left, unless quiet; nothing when
 * there was no stream. */
void allocrec_stream_report(int quiet);

#endif /* AR_ALLOCREC_STREAM_H */
