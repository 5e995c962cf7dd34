/*
 * test_escape.c — common/ar_escape.h on hostile strings, per output kind:
 * spreadsheet formulas, HTML tags, terminal escape sequences (retitle, clear
 * screen, CSI as a C1 character), bidi overrides, every kind of invalid
 * UTF-8 (lone continuation, overlong, surrogate, truncated at the end,
 * F5..FF, above U+10FFFF); valid UTF-8 must pass unchanged. Then a
 * property over many generated strings: every kind's output is valid UTF-8
 * without a control, and a cut buffer is still whole.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ar_escape.h"
#include "testing.h"

static char out[4096];

static const char *esc(enum ar_esc_kind k, const char *s)
{
	return ar_esc_str(k, s, out, sizeof out);
}

/* Strict UTF-8 check written apart from the module (Unicode table 3-7). */
static int valid_utf8(const unsigned char *p, int html)
{
	while (*p) {
		unsigned char c = *p;
		int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!n)
			return 0;
		if (n > 1) {
			unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
			unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
			if (p[1] < lo || p[1] > hi)
				return 0;
			for (int i = 2; i < n; i++)
				if ((p[i] & 0xc0) != 0x80)
					return 0;
		}
		/* no C0 (but tab/newline in HTML), DEL, C1 or bidi control may remain */
		if ((c < 0x20 && !(html && (c == '\t' || c == '\n'))) || c == 0x7f || (c == 0xc2 && p[1] < 0xa0) ||
		    (c == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
		    (c == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9))
			return 0;
		p += n;
	}
	return 1;
}

/* A JSON string: opening quote, escapes whole, closing quote last. */
static int json_closed(const char *b)
{
	if (b[0] != '"')
		return 0;
	for (size_t i = 1; b[i]; i++) {
		if (b[i] == '\\' && b[i + 1])
			i++;
		else if (b[i] == '\\' || b[i] == '"')
			return b[i] == '"' && b[i + 1] == 0;
	}
	return 0;
}

static void test_terminal(void)
{
	EXPECT_STR(esc(AR_ESC_TERM, "\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
	EXPECT_STR(esc(AR_ESC_TERM, "\x1b[2J"), "\\x1b[2J");
	EXPECT_STR(esc(AR_ESC_TERM, "a\tb\nc\x7f"), "a\\x09b\\x0ac\\x7f");
	EXPECT_STR(esc(AR_ESC_TERM, "\xc2\x9b" "31m"), "\\xc2\\x9b31m"); /* CSI as C1 */
	EXPECT_STR(esc(AR_ESC_TERM, "x\xe2\x80\xae" "evil\xe2\x81\xa6"), "x\\xe2\\x80\\xaeevil\\xe2\\x81\\xa6");
	EXPECT_STR(esc(AR_ESC_TERM, "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"),
		   "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
	EXPECT_STR(esc(AR_ESC_TERM, "\x80lone"), "\\x80lone");
	EXPECT_STR(esc(AR_ESC_TERM, "\xc0\x80"), "\\xc0\\x80");                 /* overlong NUL */
	EXPECT_STR(esc(AR_ESC_TERM, "\xe0\x80\xaf"), "\\xe0\\x80\\xaf");        /* overlong / */
	EXPECT_STR(esc(AR_ESC_TERM, "\xed\xa0\x80"), "\\xed\\xa0\\x80");        /* surrogate */
	EXPECT_STR(esc(AR_ESC_TERM, "end\xe6\x97"), "end\\xe6\\x97");          /* truncated */
	EXPECT_STR(esc(AR_ESC_TERM, "\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80"); /* F5+ */
	EXPECT_STR(esc(AR_ESC_TERM, "\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
	EXPECT_STR(esc(AR_ESC_TERM, "\xff\xfe"), "\\xff\\xfe");
	EXPECT_STR(esc(AR_ESC_TERM, "\xe6\x97\xa5\xe6"), "\xe6\x97\xa5\\xe6"); /* good then cut */
	EXPECT_STR(esc(AR_ESC_TERM, NULL), "");
	char small[8];
	EXPECT_STR(ar_printable("\x1b\x1b\x1b", small, sizeof small), "\\x1b"); /* cut between escapes */
	EXPECT(ar_esc_is_clean("caf\xc3\xa9"));
	EXPECT(!ar_esc_is_clean("a\x1b"));
	EXPECT(!ar_esc_is_clean("\xff"));
}

static void test_csv(void)
{
	EXPECT_STR(esc(AR_ESC_CSV, "=cmd|' -C calc'!A0"), "\"'=cmd|' -C calc'!A0\"");
	EXPECT_STR(esc(AR_ESC_CSV, "+1"), "\"'+1\"");
	EXPECT_STR(esc(AR_ESC_CSV, "-2+3"), "\"'-2+3\"");
	EXPECT_STR(esc(AR_ESC_CSV, "@SUM(A1)"), "\"'@SUM(A1)\"");
	EXPECT_STR(esc(AR_ESC_CSV, "\t=1"), "\"'\\x09=1\"");
	EXPECT_STR(esc(AR_ESC_CSV, "\r=1"), "\"'\\x0d=1\"");
	EXPECT_STR(esc(AR_ESC_CSV, "=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
	EXPECT_STR(esc(AR_ESC_CSV, "a,b"), "\"a,b\"");
	EXPECT_STR(esc(AR_ESC_CSV, "say \"hi\""), "\"say \"\"hi\"\"\"");
	EXPECT_STR(esc(AR_ESC_CSV, "line\nbreak"), "line\\x0abreak");
	EXPECT_STR(esc(AR_ESC_CSV, "glibc 2.36"), "glibc 2.36");
	EXPECT_STR(esc(AR_ESC_CSV, "a=b"), "a=b"); /* only a leading = is a formula */
	EXPECT_STR(esc(AR_ESC_CSV, "\xff=1"), "\\xff=1");
	EXPECT_STR(esc(AR_ESC_CSV, "caf\xc3\xa9"), "caf\xc3\xa9");
	EXPECT_STR(esc(AR_ESC_CSV, NULL), "");
	char small[8];
	EXPECT_STR(ar_esc_str(AR_ESC_CSV, "=1234567890", small, sizeof small), "\"'=123\"");
}

static void test_markdown(void)
{
	EXPECT_STR(esc(AR_ESC_MD, "<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
	EXPECT_STR(esc(AR_ESC_MD, "a|b"), "a\\|b");
	EXPECT_STR(esc(AR_ESC_MD, "# h *b* _i_ [l](u) `c` ~s~ \\"),
		   "\\# h \\*b\\* \\_i\\_ \\[l\\](u) \\`c\\` \\~s\\~ \\\\");
	EXPECT_STR(esc(AR_ESC_MD, "&\"'"), "&amp;&quot;&#39;");
	EXPECT_STR(esc(AR_ESC_MD, "two\nlines\x1b[2J"), "two\\x0alines\\x1b\\[2J");
	EXPECT_STR(esc(AR_ESC_MD, "\xed\xa0\x80\xe6\x97\xa5"), "\\xed\\xa0\\x80\xe6\x97\xa5");
}

static void test_json(void)
{
	EXPECT_STR(esc(AR_ESC_JSON, "a\"b\\c"), "\"a\\\"b\\\\c\"");
	EXPECT_STR(esc(AR_ESC_JSON, "\x1b]0;t\x07\n\t"), "\"\\u001b]0;t\\u0007\\n\\t\"");
	EXPECT_STR(esc(AR_ESC_JSON, "\xc2\x85\xe2\x80\xae\x7f"), "\"\\u0085\\u202e\\u007f\"");
	EXPECT_STR(esc(AR_ESC_JSON, "\xff\xc0\x80"), "\"\\\\xff\\\\xc0\\\\x80\"");
	EXPECT_STR(esc(AR_ESC_JSON, "end\xe6\x97"), "\"end\\\\xe6\\\\x97\"");
	EXPECT_STR(esc(AR_ESC_JSON, "\xe6\x97\xa5\xe6\x9c\xac"), "\"\xe6\x97\xa5\xe6\x9c\xac\"");
	EXPECT_STR(esc(AR_ESC_JSON, NULL), "null");
	char small[9];
	/* cut between escapes, still a closed string */
	EXPECT_STR(ar_esc_str(AR_ESC_JSON, "\xff\xff", small, sizeof small), "\"\\\\xff\"");
}

static void test_html(void)
{
	EXPECT_STR(esc(AR_ESC_HTML, "<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
	EXPECT_STR(esc(AR_ESC_HTML, "\" onmouseover='x' &"), "&quot; onmouseover=&#39;x&#39; &amp;");
	EXPECT_STR(esc(AR_ESC_HTML, "\x1b]0;t\x07 a\tb\nc\r"), "\\x1b]0;t\\x07 a\tb\nc\\x0d");
	EXPECT_STR(esc(AR_ESC_HTML, "\xc2\x9b\xc2\xa0"), "\\xc2\\x9b\xc2\xa0"); /* C1 out, NBSP in */
	EXPECT_STR(esc(AR_ESC_HTML, "\xf5x"), "\\xf5x");
}

/* A shell word: what ar_esc_shell_word wrote, NUL-ended. */
static const char *shell(const char *s)
{
	FILE *f = fmemopen(out, sizeof out, "w");
	ar_esc_shell_word(f, s);
	fclose(f);
	return out;
}

static void test_shell_word(void)
{
	EXPECT_STR(shell("build/bin/allocreplay"), "build/bin/allocreplay");
	EXPECT_STR(shell("--route=pool:size=1-256,thread=0"), "--route=pool:size=1-256,thread=0");
	EXPECT_STR(shell(""), "''");
	EXPECT_STR(shell("my traces/a b.zst"), "'my traces/a b.zst'");
	EXPECT_STR(shell("it's $HOME `x` \\ *"), "'it'\\''s $HOME `x` \\ *'");
	EXPECT_STR(shell("\xc3\xa9t\xc3\xa9\n"), "'\xc3\xa9t\xc3\xa9\n'"); /* bytes kept, quoted */
}

/* Every kind on many generated byte strings: output valid UTF-8 with no
 * control left (HTML keeps tab and newline), whole or cut at any size. */
static void test_generated(void)
{
	static const unsigned char pieces[][5] = {
		"\x1b", "\x07", "\x9b", "\xc2\x9b", "\xc2\x85", "\xe2\x80\xae", "\xe2\x81\xa9", "\xff", "\xc0\x80",
		"\xed\xa0\x80", "\xe6\x97", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xf4\x90\x80\x80", "\xf5", "\x80",
		"=", "+", "-", "@", "\t", "\r", "\n", ",", "\"", "'", "<", ">", "&", "|", "#", "\\", "`", "a", "\xc3\xa9",
		"\x7f"};
	const size_t npieces = sizeof pieces / sizeof *pieces;
	uint32_t rng = 12345;
	int tried = 0;
	for (int i = 0; i < 20000; i++) {
		char s[64] = "";
		size_t len = 0;
		for (int k = 0; k < 8; k++) {
			rng = rng * 1103515245u + 12345u;
			const char *p = (const char *)pieces[(rng >> 16) % npieces];
			if (len + strlen(p) < sizeof s) {
				strcpy(s + len, p);
				len += strlen(p);
			}
		}
		for (int kind = AR_ESC_TERM; kind <= AR_ESC_HTML; kind++) {
			size_t full = ar_esc_len(kind, s);
			char *d = ar_esc_dup(kind, s);
			EXPECT(d && strlen(d) == full);
			char buf[256];
			if (d && full < sizeof buf)
				EXPECT_STR(ar_esc_str(kind, s, buf, full + 1), d);
			if (d && !valid_utf8((const unsigned char *)d, kind == AR_ESC_HTML)) {
				fprintf(stderr, "kind %d: output not clean for input %zu bytes\n", kind, len);
				test_failures++;
			}
			/* a JSON or quoted CSV cut anywhere still ends with its quote */
			for (size_t cap = 3; cap < full && cap < sizeof buf; cap += 7) {
				ar_esc_str(kind, s, buf, cap);
				EXPECT(strlen(buf) < cap && valid_utf8((const unsigned char *)buf, kind == AR_ESC_HTML));
				if (kind == AR_ESC_JSON)
					EXPECT(json_closed(buf));
			}
			free(d);
			tried++;
		}
	}
	printf("escape: %d generated strings x kinds checked\n", tried);
}

int main(void)
{
	RUN(test_terminal);
	RUN(test_csv);
	RUN(test_markdown);
	RUN(test_json);
	RUN(test_html);
	RUN(test_shell_word);
	RUN(test_generated);
	return TEST_END();
}
