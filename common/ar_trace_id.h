/*
 * ar_trace_id.h — a trace's identity: the SHA-256 of the file's bytes, the
 * key under which results databases store traces and corpora list them (so
 * two teams holding the same file agree on its name).
 *
 * Apart from the trace library (ar_trace.h) because it needs OpenSSL: only
 * the tools that name traces by content (alloctrace info and corpus,
 * allocreplay) link it — common/trace_id.c in liballocrr-common.a plus
 * $(TRACE_ID_LDLIBS), i.e. -lcrypto — and users of the trace library do not.
 */
#ifndef AR_TRACE_ID_H
#define AR_TRACE_ID_H

#ifdef __cplusplus
extern "C" {
#endif

/* The lowercase hex SHA-256 of the file at path into out[65]. 0, or -1
 * with errno set (that of fopen, or EIO when reading or hashing failed). */
int ar_trace_sha256(const char *path, char out[65]);

#ifdef __cplusplus
}
#endif

#endif
