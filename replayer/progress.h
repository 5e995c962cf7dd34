/*
 * progress.h — one progress line on stderr for allocreplay's long work
 * (compiling a trace, replaying it under one allocator, which takes minutes
 * under --counters sim):
 *
 *   [2/6] glibc rep 1 on t.zst:  45% (1.23M/2.70M ops) 0:12 elapsed ~0:15 left
 *
 * redrawn in place ("\r\033[K") at most AR_PROGRESS_HZ times a second.
 *
 * Invariants: nothing at all is written unless ar_progress_enable(1) was
 * called (allocreplay: stderr is a terminal, TERM is not "dumb", no -q), so
 * piped output and the stored results never see it; the line never ends in
 * a newline, and ar_progress_finish() erases it, so the next message or
 * table starts on a clean line. One line at a time per process; not
 * thread-safe (allocreplay draws from its main thread only).
 */
#ifndef AR_PROGRESS_H
#define AR_PROGRESS_H

#include <stdint.h>

#define AR_PROGRESS_HZ 5 /* redraws per second at most */

/* Turn drawing on or off for the whole process (default off). */
void ar_progress_enable(int on);
/* 1 when drawing is on: callers skip the work of feeding the line otherwise. */
int ar_progress_enabled(void);

/* Begin a line: label (copied, shortened to the terminal's width) and the
 * number of units (what is counted: "events", "ops") the work will do;
 * total 0 means unknown (no percentage, no estimate). Draws at once. */
void ar_progress_start(const char *label, const char *unit, uint64_t total);
/* done units so far; redraws when the last redraw is 1/AR_PROGRESS_HZ s old. */
void ar_progress_update(uint64_t done);
/* Draw the last state once more (a finished work shows its 100 % line),
 * then erase the line. */
void ar_progress_finish(void);

#endif
