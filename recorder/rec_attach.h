/*
 * rec_attach.h — the entry points an injected recorder shim exports
 * (rec_attach.c) and their results, shared with allocrec -p
 * (allocrec_attach.c), which calls them through gdb and says the results
 * in words.
 */
#ifndef AR_REC_ATTACH_H
#define AR_REC_ATTACH_H

/* allocrr_attach's results. */
enum {
	AR_ATTACH_OK = 0,
	AR_ATTACH_PRELOADED = -1, /* the shim was preloaded: the process records already */
	AR_ATTACH_BUSY = -2,      /* a window is open (attached, or allocrec --start) */
	AR_ATTACH_NO_REAL = -3,   /* the real heap functions cannot be found */
	AR_ATTACH_INIT = -4,      /* the recorder could not start (an allocrr: line says why) */
	AR_ATTACH_WINDOW = -5,    /* the trace could not be opened (an allocrr: line says why) */
	AR_ATTACH_NO_GOT = -6,    /* no object calls the heap functions through its GOT */
};

/* Start recording the process the shim was dlopen'ed into. settings:
 * lines "NAME=value" with the names of the ALLOCRR_* variables
 * (rec_config_parse), plus ALLOCRR_ATTACH_DONE (a file created when the
 * window ends, holding why and how many GOT entries were put back) and
 * ALLOCRR_ATTACH_DURATION_NS (end the window after that long). Returns
 * AR_ATTACH_OK or a negative AR_ATTACH_* code. */
int allocrr_attach(const char *settings);

/* Stop recording: the GOT entries back as they were, the window closed
 * with its footer. Returns 0, or -1 when not attached. */
int allocrr_detach(void);

/* How many GOT entries of loaded objects point at the shim's hooks now
 * (0 when not attached). */
int allocrr_attach_hooked(void);

#endif /* AR_REC_ATTACH_H */
