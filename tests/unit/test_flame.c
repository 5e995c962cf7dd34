/*
 * test_flame.c — unit tests of the icicle layout of allocreport's flame
 * charts (analysis/report_flame.c, ar_flame_layout) on hand-made folded
 * stacks whose widths are known: the root spans everything, children are
 * ordered largest first (ties by name) and start at their parent's left
 * edge, a stack that is a prefix of another keeps its own share as the gap
 * at its node's right end, equal frames under different parents stay
 * apart, and input a database from elsewhere may hold (negative, NaN,
 * infinite, huge values, empty frames, ";;", absurd depth, thousands of
 * siblings) lays out without overlap and within [0, 1]. Then the HTML of
 * a trace's sites: escaped stack strings, no section without sites.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ar_results.h"
#include "report_model.h"
#include "testing.h"

#define CLOSE(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

/* The rectangle of frame at depth (the first one found), or NULL. */
static const ar_flame_rect_t *find(const ar_flame_t *fl, const char *frame, int depth)
{
	for (size_t i = 0; i < fl->n; i++)
		if (fl->rects[i].depth == depth && !strcmp(fl->rects[i].frame, frame))
			return &fl->rects[i];
	return NULL;
}

static void expect_rect(const ar_flame_t *fl, const char *frame, int depth, double x0, double x1, double value)
{
	const ar_flame_rect_t *r = find(fl, frame, depth);
	EXPECT(r != NULL);
	if (!r) {
		fprintf(stderr, "  no rectangle %s at depth %d\n", frame, depth);
		return;
	}
	if (!CLOSE(r->x0, x0) || !CLOSE(r->x1, x1) || !CLOSE(r->value, value)) {
		fprintf(stderr, "%s:%d: %s@%d is [%g, %g] value %g, expected [%g, %g] value %g\n", __FILE__, __LINE__,
			frame, depth, r->x0, r->x1, r->value, x0, x1, value);
		test_failures++;
	}
}

/* Every child inside its parent and no two siblings overlapping: checked
 * on the rectangles alone (a child is the next rectangle one deeper whose
 * span lies inside). */
static void expect_nested(const ar_flame_t *fl)
{
	for (size_t i = 0; i < fl->n; i++) {
		const ar_flame_rect_t *r = &fl->rects[i];
		EXPECT(r->x0 >= -1e-12 && r->x1 <= 1 + 1e-12 && r->x1 >= r->x0);
		EXPECT(isfinite(r->value) && r->value >= 0);
		for (size_t j = i + 1; j < fl->n; j++) {
			const ar_flame_rect_t *q = &fl->rects[j];
			if (q->depth != r->depth)
				continue;
			double overlap = fmin(r->x1, q->x1) - fmax(r->x0, q->x0);
			if (overlap > 1e-9) {
				fprintf(stderr, "%s:%d: %s and %s overlap at depth %d\n", __FILE__, __LINE__, r->frame,
					q->frame, r->depth);
				test_failures++;
				return;
			}
		}
	}
}

static void test_known_widths(void)
{
	/* total 200: a = 100 (a;b = 40, a;e = 60), f = 100 */
	const char *stacks[] = {"a;b;c", "a;b;d", "a;e", "f"};
	const double values[] = {10, 30, 60, 100};
	ar_flame_t fl;
	EXPECT(ar_flame_layout(stacks, values, 4, 0, 64, &fl) == 0);
	EXPECT(CLOSE(fl.total, 200));
	EXPECT_U64(fl.n, 7); /* all, a, f, e, b, d, c */
	EXPECT(fl.depth == 3);
	EXPECT_U64(fl.omitted, 0);
	expect_rect(&fl, "all", 0, 0, 1, 200);
	expect_rect(&fl, "a", 1, 0, 0.5, 100); /* a and f tie: by name */
	expect_rect(&fl, "f", 1, 0.5, 1, 100);
	expect_rect(&fl, "e", 2, 0, 0.3, 60); /* largest child first */
	expect_rect(&fl, "b", 2, 0.3, 0.5, 40);
	expect_rect(&fl, "d", 3, 0.3, 0.45, 30);
	expect_rect(&fl, "c", 3, 0.45, 0.5, 10);
	EXPECT_STR(fl.rects[0].frame, "all"); /* parents before children */
	expect_nested(&fl);
	ar_flame_free(&fl);
}

static void test_prefix_and_shared_names(void)
{
	/* main allocates itself (self 50) and through two paths to the same
	 * frame name "alloc", which must stay two rectangles */
	const char *stacks[] = {"main", "main;x;alloc", "main;y;alloc", "main;x;alloc"};
	const double values[] = {50, 20, 30, 20}; /* the repeated stack sums */
	ar_flame_t fl;
	EXPECT(ar_flame_layout(stacks, values, 4, 0, 64, &fl) == 0);
	EXPECT(CLOSE(fl.total, 120));
	expect_rect(&fl, "main", 1, 0, 1, 120);
	expect_rect(&fl, "x", 2, 0, 40.0 / 120, 40); /* x = 40 > y = 30 */
	expect_rect(&fl, "y", 2, 40.0 / 120, 70.0 / 120, 30);
	size_t allocs = 0;
	for (size_t i = 0; i < fl.n; i++)
		allocs += !strcmp(fl.rects[i].frame, "alloc");
	EXPECT_U64(allocs, 2);
	expect_nested(&fl);
	ar_flame_free(&fl);
}

static void test_pruning(void)
{
	/* 1000 + 1: the small one is under min_frac; depth beyond max_depth cut */
	const char *stacks[] = {"big;deep;deeper;deepest", "small"};
	const double values[] = {1000, 1};
	ar_flame_t fl;
	EXPECT(ar_flame_layout(stacks, values, 2, 0.01, 2, &fl) == 0);
	EXPECT(find(&fl, "small", 1) == NULL);
	EXPECT(find(&fl, "deep", 2) != NULL);
	EXPECT(find(&fl, "deeper", 3) == NULL);
	EXPECT(fl.depth == 2);
	EXPECT_U64(fl.omitted, 2); /* small, deeper (deepest is under it) */
	expect_rect(&fl, "big", 1, 0, 1000.0 / 1001, 1000);
	ar_flame_free(&fl);
}

static void test_hostile_input(void)
{
	const char *stacks[] = {"a;;b", ";", "", "neg", "nan", "inf", "huge;x", "ok;<script>", NULL};
	const double values[] = {5, 5, 5, -100, NAN, INFINITY, 9.2e18, 5, 7};
	ar_flame_t fl;
	EXPECT(ar_flame_layout(stacks, values, 9, 0, 64, &fl) == 0);
	EXPECT(CLOSE(fl.total, 9.2e18 + 20));
	EXPECT(find(&fl, "neg", 1) == NULL);
	EXPECT(find(&fl, "nan", 1) == NULL);
	EXPECT(find(&fl, "inf", 1) == NULL);
	EXPECT(find(&fl, "huge", 1) != NULL);
	expect_nested(&fl);
	ar_flame_free(&fl);

	/* only worthless values: an empty layout, not an error */
	const double zero[] = {0, -1, NAN};
	EXPECT(ar_flame_layout(stacks, zero, 3, 0, 64, &fl) == 0);
	EXPECT_U64(fl.n, 0);
	EXPECT(fl.total == 0);
	ar_flame_free(&fl);

	/* a sum that overflows a double counts nothing rather than drawing garbage */
	const double over[] = {1e308, 1e308};
	EXPECT(ar_flame_layout(stacks, over, 2, 0, 64, &fl) == 0);
	EXPECT_U64(fl.n, 0);
	ar_flame_free(&fl);

	/* 100000 frames deep and 5000 siblings: bounded, no recursion */
	size_t deep = 100000;
	char *d = malloc(2 * deep);
	for (size_t i = 0; i < deep; i++) {
		d[2 * i] = 'f';
		d[2 * i + 1] = ';';
	}
	d[2 * deep - 1] = 0;
	enum { SIB = 5000 };
	const char **many = calloc(SIB + 1, sizeof *many);
	double *mv = calloc(SIB + 1, sizeof *mv);
	char (*names)[16] = calloc(SIB, sizeof *names);
	for (int i = 0; i < SIB; i++) {
		snprintf(names[i], sizeof names[i], "s%d", i);
		many[i] = names[i];
		mv[i] = 1;
	}
	many[SIB] = d;
	mv[SIB] = SIB;
	EXPECT(ar_flame_layout(many, mv, SIB + 1, 0, 48, &fl) == 0);
	EXPECT(fl.depth == 48);
	EXPECT(CLOSE(fl.total, 2 * SIB));
	expect_rect(&fl, "f", 1, 0, 0.5, SIB);
	expect_nested(&fl);
	ar_flame_free(&fl);
	free(d);
	free(many);
	free(mv);
	free(names);
}

/* The sites section's HTML: stacks escaped, nothing at all without sites. */
static void test_sites_html(void)
{
	ar_res_trace_t t;
	memset(&t, 0, sizeof t);
	t.name = "t<1>";
	t.sha256 = "00ff";
	ar_res_site_t s[2] = {
		{.stack = "main;<img src=x onerror=alert(1)>", .calls = 3, .bytes = 300, .live_at_peak_bytes = 200},
		{.stack = "main;\"quoted\";&amp", .calls = 1, .bytes = 100, .live_at_peak_bytes = -5},
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	EXPECT(ar_rep_html_sites(f, &t, s, 0, 0) == 0);
	fflush(f);
	EXPECT_U64(len, 0);
	int marks = ar_rep_html_sites(f, &t, s, 2, 0);
	fclose(f);
	EXPECT(marks > 0);
	EXPECT(strstr(buf, "<img") == NULL);
	EXPECT(strstr(buf, "&lt;img src=x onerror=alert(1)&gt;") != NULL);
	EXPECT(strstr(buf, "\"quoted\"") == NULL);
	EXPECT(strstr(buf, "id=\"flame-bytes-0\"") != NULL);
	EXPECT(strstr(buf, "id=\"flame-live-0\"") != NULL);
	EXPECT(strstr(buf, "class=\"top-sites\"") != NULL);
	free(buf);
}

int main(void)
{
	RUN(test_known_widths);
	RUN(test_prefix_and_shared_names);
	RUN(test_pruning);
	RUN(test_hostile_input);
	RUN(test_sites_html);
	return TEST_END();
}
