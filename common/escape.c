/*
 * escape.c — the escapers of ar_escape.h. One walk over the string decodes
 * UTF-8 strictly (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF) and hands each character or invalid byte to the output kind's
 * rule; the rules write through a sink that is a FILE, a buffer cut only
 * between whole pieces, or a counter. Invariant: whatever the input, the
 * output is valid UTF-8 holding none of the characters the header lists
 * (HTML keeps tab and newline).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ar_escape.h"

typedef struct {
	FILE *f;     /* write here, or */
	char *buf;   /* into buf (cap bytes, NUL kept room for), or neither: count */
	size_t cap;
	size_t len;
	int full;    /* a piece did not fit: write nothing more */
} sink_t;

static void put(sink_t *k, const char *p, size_t n)
{
	if (k->f) {
		fwrite(p, 1, n, k->f);
		return;
	}
	if (k->buf) {
		if (k->full || k->len + n + 1 > k->cap) {
			k->full = 1;
			return;
		}
		memcpy(k->buf + k->len, p, n);
	}
	k->len += n;
}

static void puts_(sink_t *k, const char *s)
{
	put(k, s, strlen(s));
}

/* The text \xNN for byte c; in JSON, \\xNN (its backslash escaped). One
 * piece, so that a cut buffer never ends in half of it. */
static void hex_byte(sink_t *k, unsigned char c, int json)
{
	static const char hex[] = "0123456789abcdef";
	char e[5] = {'\\', '\\', 'x', hex[c >> 4], hex[c & 15]};
	put(k, e + !json, 4 + (size_t)json);
}

/* Length (1-4) of the valid UTF-8 character at p, its code point in *cp;
 * 0 when the byte at p does not start one. Stops at the NUL: a NUL is never
 * a continuation byte. */
static size_t utf8_char(const unsigned char *p, uint32_t *cp)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the 2nd byte */
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, *cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, *cp = c & 0x0f, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, *cp = c & 0x07, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0; /* continuation byte, C0, C1 (overlong) or F5..FF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i > 1 && (p[i] < 0x80 || p[i] > 0xbf))
			return 0;
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	return n;
}

/* Characters that change how an output is shown, wherever it lands. */
static int is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

static void show_bytes(sink_t *k, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		hex_byte(k, p[i], 0);
}

/* The piece of output for one ASCII character, or NULL to keep it. */
static const char *html_ascii(unsigned char c)
{
	switch (c) {
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '&': return "&amp;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

static const char *md_ascii(unsigned char c)
{
	switch (c) {
	case '\\': return "\\\\";
	case '`': return "\\`";
	case '*': return "\\*";
	case '_': return "\\_";
	case '[': return "\\[";
	case ']': return "\\]";
	case '|': return "\\|";
	case '#': return "\\#";
	case '~': return "\\~";
	default: return html_ascii(c); /* markdown passes inline HTML through */
	}
}

static void json_char(sink_t *k, uint32_t cp, const unsigned char *p, size_t n)
{
	char e[8];
	if (cp == '"' || cp == '\\') {
		e[0] = '\\', e[1] = (char)cp;
		put(k, e, 2);
	} else if (cp == '\n') {
		puts_(k, "\\n");
	} else if (cp == '\t') {
		puts_(k, "\\t");
	} else if (is_control(cp)) {
		snprintf(e, sizeof e, "\\u%04x", (unsigned)cp);
		put(k, e, 6);
	} else {
		put(k, (const char *)p, n);
	}
}

/* Does the field start like a formula (OWASP "CSV injection")? */
static int csv_formula(const char *s)
{
	return s[0] && strchr("=+-@\t\r", s[0]);
}

static void csv_begin(sink_t *k, const char *s)
{
	if (csv_formula(s))
		puts_(k, "\"'");
	else if (strpbrk(s, ",\""))
		put(k, "\"", 1);
}

static void escape(sink_t *k, enum ar_esc_kind kind, const char *s)
{
	if (!s) {
		if (kind == AR_ESC_JSON)
			puts_(k, "null");
		return;
	}
	/* in a buffer, room is kept for the closing quote from the start */
	int closes = kind == AR_ESC_JSON || (kind == AR_ESC_CSV && (csv_formula(s) || strpbrk(s, ",\"")));
	if (closes && k->buf)
		k->cap--;
	if (kind == AR_ESC_JSON)
		put(k, "\"", 1);
	if (kind == AR_ESC_CSV)
		csv_begin(k, s);
	int opened = !k->full;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t cp;
		size_t n = utf8_char(p, &cp);
		if (n == 0) {
			hex_byte(k, *p++, kind == AR_ESC_JSON);
			continue;
		}
		const char *rep = NULL;
		if (kind == AR_ESC_JSON)
			json_char(k, cp, p, n);
		else if (kind == AR_ESC_HTML && (cp == '\t' || cp == '\n'))
			put(k, (const char *)p, n);
		else if (is_control(cp))
			show_bytes(k, p, n);
		else if (kind == AR_ESC_CSV && cp == '"')
			put(k, "\"\"", 2);
		else if (kind == AR_ESC_MD && n == 1 && (rep = md_ascii(*p)))
			puts_(k, rep);
		else if (kind == AR_ESC_HTML && n == 1 && (rep = html_ascii(*p)))
			puts_(k, rep);
		else
			put(k, (const char *)p, n);
		p += n;
	}
	if (closes && k->buf) {
		k->cap++;
		k->full = !opened;
	}
	if (closes)
		put(k, "\"", 1);
}

void ar_esc_put(FILE *f, enum ar_esc_kind kind, const char *s)
{
	sink_t k = {.f = f};
	escape(&k, kind, s);
}

void ar_esc_term(FILE *f, const char *s)
{
	ar_esc_put(f, AR_ESC_TERM, s);
}

void ar_esc_csv(FILE *f, const char *s)
{
	ar_esc_put(f, AR_ESC_CSV, s);
}

void ar_esc_md(FILE *f, const char *s)
{
	ar_esc_put(f, AR_ESC_MD, s);
}

void ar_esc_json(FILE *f, const char *s)
{
	ar_esc_put(f, AR_ESC_JSON, s);
}

void ar_esc_html(FILE *f, const char *s)
{
	ar_esc_put(f, AR_ESC_HTML, s);
}

void ar_esc_shell_word(FILE *f, const char *s)
{
	static const char bare[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./%+,:=@-";
	if (*s && strspn(s, bare) == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

const char *ar_esc_str(enum ar_esc_kind kind, const char *s, char *out, size_t cap)
{
	if (!cap)
		return out;
	sink_t k = {.buf = out, .cap = cap};
	escape(&k, kind, s);
	out[k.len] = 0;
	return out;
}

size_t ar_esc_len(enum ar_esc_kind kind, const char *s)
{
	sink_t k = {0};
	escape(&k, kind, s);
	return k.len;
}

char *ar_esc_dup(enum ar_esc_kind kind, const char *s)
{
	size_t n = ar_esc_len(kind, s) + 1;
	char *d = malloc(n);
	return d ? (char *)ar_esc_str(kind, s, d, n) : NULL;
}

const char *ar_printable(const char *s, char *out, size_t cap)
{
	return ar_esc_str(AR_ESC_TERM, s, out, cap);
}

int ar_esc_is_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		uint32_t cp;
		size_t n = utf8_char(p, &cp);
		if (n == 0 || is_control(cp))
			return 0;
		p += n;
	}
	return 1;
}
