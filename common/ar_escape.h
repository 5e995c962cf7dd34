/*
 * ar_escape.h — the one way every allocrr tool writes a string it did not
 * write itself (a command line, trace and thread names, module paths,
 * symbols, allocator names and versions, host names, failure reasons: all
 * read from traces and databases other people made) into an output, so
 * that it is safe where the output lands and a fix lands everywhere.
 *
 * One writer per output kind. Common to all: valid UTF-8 passes unchanged
 * (a non-ASCII file name stays readable); a byte that is not part of valid
 * UTF-8 (a lone continuation byte, an overlong form such as C0 80, a
 * surrogate ED A0 80, a sequence cut short, F5..FF) is shown as the text
 * \xNN, as is every byte of a character that could change how the output
 * is shown: C0 controls, DEL, C1 controls (U+0080-U+009F) and the bidi
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069, "Trojan Source").
 * JSON is the one exception: it writes those characters as \u escapes, so a
 * JSON reader gets the string back; invalid bytes are the text \xNN there
 * too (the JSON string holds backslash, x, two hex digits). A NUL byte
 * cannot be in a C string; readers that find one in a trace or a database
 * give the text \x00 instead, so it looks the same.
 *
 *   terminal  as above; tab and newline are escaped too (one line stays one)
 *   CSV       RFC 4180 field: quoted when it holds , or "; quotes doubled; a
 *             field starting with = + - @ TAB CR (a formula to a spreadsheet,
 *             OWASP "CSV injection") gets a leading ' and is quoted. Numbers
 *             a tool writes itself (-0.05) do not go through here.
 *   markdown  < > & " ' as HTML entities; \ ` * _ [ ] | # ~ escaped with a
 *             backslash (a table cell or heading keeps its structure)
 *   JSON      a quoted string: " and \ escaped, controls as \u00XX
 *   HTML      text and attribute values: < > & " ' as entities; controls
 *             other than tab and newline shown as \xNN
 *
 * The FILE writers write nothing for NULL (JSON writes null). Nothing here
 * keeps state; the string writers never read past the terminating NUL.
 */
#ifndef AR_ESCAPE_H
#define AR_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

enum ar_esc_kind { AR_ESC_TERM, AR_ESC_CSV, AR_ESC_MD, AR_ESC_JSON, AR_ESC_HTML };

void ar_esc_term(FILE *f, const char *s);
void ar_esc_csv(FILE *f, const char *s);
void ar_esc_md(FILE *f, const char *s);
void ar_esc_json(FILE *f, const char *s);
void ar_esc_html(FILE *f, const char *s);
/* Any of the above by kind. */
void ar_esc_put(FILE *f, enum ar_esc_kind kind, const char *s);

/* s as one POSIX shell word, for a command line the user runs or pastes:
 * bare when every byte is one each shell takes literally (letters, digits,
 * _ . / % + , : = @ -), else in single quotes with each ' as '\''. Unlike
 * the writers above it keeps every byte as it is, since the shell must get
 * the exact argument back; "" becomes ''. */
void ar_esc_shell_word(FILE *f, const char *s);

/* s escaped for kind into out, always NUL-terminated; when it does not fit
 * in cap, cut before the first escape or character that does not fit whole
 * (never inside a \xNN or a UTF-8 sequence). A cap of
 * ar_esc_len(kind, s) + 1 never cuts. Returns out; NULL s gives "" (JSON:
 * "null"). */
const char *ar_esc_str(enum ar_esc_kind kind, const char *s, char *out, size_t cap);

/* The length of s escaped for kind, without the terminating NUL. */
size_t ar_esc_len(enum ar_esc_kind kind, const char *s);

/* s escaped for kind, malloc'ed (free it), or NULL when out of memory. */
char *ar_esc_dup(enum ar_esc_kind kind, const char *s);

/* The terminal form of s in out (ar_esc_str with AR_ESC_TERM): the
 * replacement of the trace library's former ar_printable. A cap of
 * 4 * strlen(s) + 1 never cuts. Returns out. */
const char *ar_printable(const char *s, char *out, size_t cap);

/* Is s valid UTF-8 with no character the terminal writer would escape? */
int ar_esc_is_clean(const char *s);

#endif
