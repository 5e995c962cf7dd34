/*
 * report_flame.c — where a trace's heap goes, from its allocation sites
 * (table sites of the results database, ar_res_sites_load): an icicle chart
 * (a flame graph drawn top-down: the root "all" on top, callees below their
 * callers, each frame as wide as the bytes below it) by bytes allocated and
 * by live bytes at the peak, a table of the top sites, and the same table
 * as text for allocreport's table output.
 *
 * The layout only needs (folded stack, value) pairs, so it is tested on
 * hand-made input (tests/unit/test_flame.c). Invariants: a child lies
 * within its parent and siblings do not overlap (their values are summed
 * from the leaves, so a parent is never narrower than its children); the
 * page stays readable whatever the database holds — stack strings are
 * escaped, negative, NaN and absurd values count as 0 or are clamped to the
 * total, and the drawing is bounded (rectangles narrower than a fraction of
 * a pixel and frames deeper than MAX_DEPTH are left out and counted).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_escape.h"
#include "ar_hash.h"
#include "report_model.h"

/* ---- the prefix tree of folded stacks ---- */

typedef struct node {
	size_t name;          /* offset of the frame in the names buffer */
	size_t len;           /* its length */
	size_t parent;
	size_t first, next;   /* first child, next sibling (0: none; node 0 is the root) */
	double value;         /* the subtree's total */
} node_t;

/* Nodes, their names, and a hash table (parent, frame) -> node, so that a
 * database with a million sibling frames still builds in linear time. */
typedef struct tree {
	node_t *nodes;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
	size_t *slots; /* node index, 0: empty (common/ar_hash.h) */
	uint64_t nslots;
} tree_t;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* The key of a node: its parent and its frame's name, compared, not read
 * back (ar_hash.h's keyed form). */
typedef struct node_key {
	size_t parent;
	const char *frame;
	size_t len;
} node_key_t;

/* FNV-1a over the name, seeded by the parent; the product spreads it into
 * the high bits the table takes. */
static inline uint64_t hash(size_t parent, const char *frame, size_t len)
{
	uint64_t h = 1469598103934665603u ^ (uint64_t)parent * 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)frame[i]) * 1099511628211u;
	return ar_hash_fib(h ^ (h >> 29));
}

static inline uint64_t key_hash(const node_key_t *k) { return hash(k->parent, k->frame, k->len); }

static inline uint64_t node_hash(const void *ctx, const size_t *e)
{
	const tree_t *t = ctx;
	const node_t *nd = &t->nodes[*e];
	return hash(nd->parent, t->names + nd->name, nd->len);
}

static inline int node_is(const void *ctx, const size_t *e, const node_key_t *k)
{
	const tree_t *t = ctx;
	const node_t *nd = &t->nodes[*e];
	return nd->parent == k->parent && nd->len == k->len && !memcmp(t->names + nd->name, k->frame, k->len);
}

#define SLOT_EMPTY(e) (*(e) == 0)
AR_HASH_DEFINE_KEYED(node_tab, size_t, SLOT_EMPTY, const node_key_t *, key_hash, node_hash, node_is)
AR_HASH_DEFINE_GROW(node_tab, size_t, AR_HASH_CALLOC, AR_HASH_FREE)

/* The child of parent named frame[0..len), added when missing; 0 on out of memory. */
static size_t child(tree_t *t, size_t parent, const char *frame, size_t len)
{
	/* the table holds the nodes but the root */
	if (node_tab_reserve(&t->slots, &t->nslots, t->n - 1, 1024, t))
		return 0;
	node_key_t k = {parent, frame, len};
	uint64_t h = node_tab_pos(t->slots, t->nslots - 1, t, &k);
	if (t->slots[h])
		return t->slots[h];
	if (grow((void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes) ||
	    grow((void **)&t->names, &t->ncap, t->nlen + len + 1, 1))
		return 0;
	size_t c = t->n++;
	t->nodes[c] = (node_t){.name = t->nlen, .len = len, .parent = parent, .next = t->nodes[parent].first};
	t->nodes[parent].first = c; /* sort_children orders them */
	memcpy(t->names + t->nlen, frame, len);
	t->names[t->nlen + len] = 0;
	t->nlen += len + 1;
	t->slots[h] = c;
	return c;
}

/* Children of every node ordered largest first (ties by name): a stable,
 * readable order, so the same sites always give the same picture. */
static const tree_t *sort_tree;
static int by_value(const void *a, const void *b)
{
	const node_t *x = &sort_tree->nodes[*(const size_t *)a], *y = &sort_tree->nodes[*(const size_t *)b];
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(sort_tree->names + x->name, sort_tree->names + y->name);
}

static int sort_children(tree_t *t, size_t node)
{
	size_t k = 0, cap = 0, *c = NULL;
	for (size_t ch = t->nodes[node].first; ch; ch = t->nodes[ch].next) {
		if (grow((void **)&c, &cap, k + 1, sizeof *c)) {
			free(c);
			return -1;
		}
		c[k++] = ch;
	}
	if (k > 1) {
		sort_tree = t;
		qsort(c, k, sizeof *c, by_value);
		t->nodes[node].first = c[0];
		for (size_t i = 0; i < k; i++)
			t->nodes[c[i]].next = i + 1 < k ? c[i + 1] : 0;
	}
	free(c);
	return 0;
}

typedef struct layout {
	tree_t *t;
	ar_flame_t *fl;
	size_t cap;
	double min_frac;
	int max_depth;
} layout_t;

/* Depth-first, parents before children; an explicit stack, since a stack
 * string from elsewhere may be thousands of frames deep. */
static int lay_out(layout_t *L)
{
	typedef struct item {
		size_t node;
		int depth;
		double x0;
	} item_t;
	item_t *st = NULL;
	size_t ns = 0, scap = 0;
	if (grow((void **)&st, &scap, 1, sizeof *st))
		return -1;
	st[ns++] = (item_t){0, 0, 0};
	double total = L->fl->total;
	while (ns) {
		item_t it = st[--ns];
		node_t *nd = &L->t->nodes[it.node];
		double w = nd->value / total;
		if (it.depth > L->max_depth || w < L->min_frac) {
			L->fl->omitted++;
			continue;
		}
		if (sort_children(L->t, it.node) ||
		    grow((void **)&L->fl->rects, &L->cap, L->fl->n + 1, sizeof *L->fl->rects)) {
			free(st);
			return -1;
		}
		L->fl->rects[L->fl->n++] = (ar_flame_rect_t){
			.frame = it.node ? L->t->names + nd->name : "all",
			.depth = it.depth, .x0 = it.x0, .x1 = fmin(1, it.x0 + w), .value = nd->value};
		if (it.depth > L->fl->depth)
			L->fl->depth = it.depth;
		/* push children in reverse so the largest comes out first */
		size_t k = 0;
		for (size_t c = nd->first; c; c = L->t->nodes[c].next)
			k++;
		if (grow((void **)&st, &scap, ns + k, sizeof *st)) {
			free(st);
			return -1;
		}
		double x = it.x0;
		size_t at = ns + k;
		for (size_t c = nd->first; c; c = L->t->nodes[c].next) {
			st[--at] = (item_t){c, it.depth + 1, x};
			x += L->t->nodes[c].value / total;
		}
		ns += k;
	}
	free(st);
	return 0;
}

int ar_flame_layout(const char *const *stacks, const double *values, size_t n, double min_frac, int max_depth,
		    ar_flame_t *fl)
{
	memset(fl, 0, sizeof *fl);
	tree_t t = {0};
	int rc = -1;
	if (grow((void **)&t.nodes, &t.cap, 1, sizeof *t.nodes) || grow((void **)&t.names, &t.ncap, 1, 1))
		goto out;
	t.nodes[t.n++] = (node_t){0};
	t.names[t.nlen++] = 0;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		if (stacks[i] && isfinite(values[i]) && values[i] > 0)
			total += values[i];
	/* a sum that overflows (absurd values) leaves every value 0 */
	if (!isfinite(total))
		total = 0;
	for (size_t i = 0; i < n && total > 0; i++) {
		double v = values[i];
		if (!(isfinite(v) && v > 0) || !stacks[i])
			continue;
		size_t node = 0;
		t.nodes[0].value += v;
		for (const char *p = stacks[i];;) {
			const char *e = strchr(p, ';');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			if (!(node = child(&t, node, p, len)))
				goto out;
			t.nodes[node].value += v;
			if (!e)
				break;
			p = e + 1;
		}
	}
	fl->total = total;
	rc = 0;
	if (total > 0) {
		layout_t L = {&t, fl, 0, min_frac, max_depth};
		rc = lay_out(&L);
	}
out:
	free(t.nodes);
	free(t.slots);
	if (rc) {
		free(t.names);
		free(fl->rects);
		memset(fl, 0, sizeof *fl);
	} else
		fl->names = t.names;
	return rc;
}

void ar_flame_free(ar_flame_t *fl)
{
	free(fl->rects);
	free(fl->names);
	memset(fl, 0, sizeof *fl);
}

/* ---- the chart ---- */

enum { FW = 1140, ROW = 17, FT = 30, MAX_DEPTH = 48, TOP_SITES = 12 };

ar_res_site_t *ar_rep_sites(const ar_res_set_t *rep, const ar_res_trace_t *t, size_t *n)
{
	*n = 0;
	return rep->db ? ar_res_sites_load(rep->db, t->sha256, n) : NULL;
}

/* A warm colour per frame name (a hash, so the same frame has the same
 * colour in both charts and every report), light enough for dark text. */
static void frame_colour(char *buf, size_t n, const char *frame)
{
	unsigned h = 2166136261u;
	for (const char *p = frame; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(buf, n, "hsl(%u,%u%%,%u%%)", 8 + h % 40, 70 + (h >> 8) % 25, 62 + (h >> 16) % 14);
}

/* s cut to at most max_chars characters (UTF-8 characters, never split)
 * and to buf's cap, its last character replaced by an ellipsis when cut;
 * into buf (cap >= 4). */
static const char *fit(char *buf, size_t cap, const char *s, size_t max_chars)
{
	size_t i = 0, chars = 0, last = 0; /* last: where the last character taken starts */
	while (s[i] && chars < max_chars) {
		size_t j = i + 1;
		while (s[j] && ((unsigned char)s[j] & 0xC0) == 0x80)
			j++;
		if (j + 4 > cap) /* no room left for an ellipsis and the NUL */
			break;
		last = i;
		i = j;
		chars++;
	}
	if (!s[i]) {
		memcpy(buf, s, i + 1);
		return buf;
	}
	if (!max_chars) {
		buf[0] = 0;
		return buf;
	}
	memcpy(buf, s, last);
	memcpy(buf + last, "\u2026", 4); /* the ellipsis (3 bytes) and the NUL */
	return buf;
}

static const char *fmt_value(char *buf, size_t n, double v, int bytes)
{
	return bytes ? ar_res_fmt_bytes(buf, n, v) : ar_res_fmt_num(buf, n, v);
}

/* One icicle chart of t's sites by the value val(site). */
static int flame_chart(FILE *f, const ar_res_trace_t *t, const ar_res_site_t *s, size_t n, int idx, const char *kind,
		       const char *what, int64_t (*val)(const ar_res_site_t *))
{
	const char **stacks = ar_res_xcalloc(n + 1, sizeof *stacks);
	double *values = ar_res_xcalloc(n + 1, sizeof *values);
	for (size_t i = 0; i < n; i++) {
		stacks[i] = s[i].stack;
		values[i] = (double)val(&s[i]);
	}
	ar_flame_t fl;
	/* a rectangle under a third of a pixel cannot be seen or hovered */
	int rc = ar_flame_layout(stacks, values, n, 0.33 / FW, MAX_DEPTH, &fl);
	free(stacks);
	free(values);
	if (rc || !(fl.total > 0)) {
		ar_flame_free(&fl);
		return 0;
	}
	int h = FT + ROW * (fl.depth + 1) + 24;
	char id[64], title[512], tot[32];
	snprintf(id, sizeof id, "%s-%d", kind, idx);
	snprintf(title, sizeof title, "%s: call sites by %s (icicle: callers above callees, width = share of %s)",
		 t->name, what, fmt_value(tot, sizeof tot, fl.total, 1));
	ar_svg_open(f, id, FW, h, title);
	fprintf(f, "<desc>chart=%s trace=", kind);
	ar_esc_html(f, t->sha256);
	fprintf(f, " total=%.0f</desc>\n", fl.total);
	for (size_t i = 0; i < fl.n; i++) {
		const ar_flame_rect_t *r = &fl.rects[i];
		double x = r->x0 * FW, w = (r->x1 - r->x0) * FW, y = FT + r->depth * ROW;
		char col[48], v[32], label[256];
		frame_colour(col, sizeof col, r->frame);
		fprintf(f, "<g class=\"frame\"><title>");
		ar_esc_html(f, *r->frame ? r->frame : "(empty frame)");
		fprintf(f, "\n%s, %.2f %%</title><rect class=\"mark flame\" data-depth=\"%d\" data-value=\"%.0f\" "
			   "x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
			fmt_value(v, sizeof v, r->value, 1), 100 * r->value / fl.total, r->depth, r->value, x, y, w,
			ROW - 1, i ? col : "#e8e8e8");
		/* a label where about five characters fit (6.2 px each at 10.5 px):
		 * fewer, cut with an ellipsis, say nothing and clutter the chart */
		if (w >= 40) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"flame-label\">", x + 3, y + ROW - 5);
			ar_esc_html(f, fit(label, sizeof label, *r->frame ? r->frame : "(empty frame)",
					   (size_t)((w - 6) / 6.2)));
			fputs("</text>", f);
		}
		fputs("</g>\n", f);
	}
	if (fl.omitted) {
		char note[160];
		snprintf(note, sizeof note, "%zu frame(s) too narrow (< 1/3 pixel) or deeper than %d not drawn",
			 fl.omitted, MAX_DEPTH);
		ar_svg_text(f, FW - 8, h - 8, "end", "note", note);
	}
	ar_svg_close(f);
	int marks = (int)fl.n;
	ar_flame_free(&fl);
	return marks;
}

static int64_t by_bytes(const ar_res_site_t *s) { return s->bytes; }
static int64_t by_live(const ar_res_site_t *s) { return s->live_at_peak_bytes; }

/* The innermost frame of a folded stack (its last), and where it starts. */
static const char *innermost(const char *stack)
{
	const char *p = strrchr(stack, ';');
	return p ? p + 1 : stack;
}

static const ar_res_site_t *rank_sites;
static int by_rank(const void *a, const void *b)
{
	const ar_res_site_t *x = &rank_sites[*(const size_t *)a], *y = &rank_sites[*(const size_t *)b];
	if (x->live_at_peak_bytes != y->live_at_peak_bytes)
		return x->live_at_peak_bytes > y->live_at_peak_bytes ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

/* The indices of the top k (at most) sites by live bytes at the peak, then
 * bytes, then stack; malloc'ed; *m how many. */
static size_t *top_sites(const ar_res_site_t *s, size_t n, size_t k, size_t *m)
{
	size_t *idx = ar_res_xcalloc(n + 1, sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	rank_sites = s;
	qsort(idx, n, sizeof *idx, by_rank);
	*m = n < k ? n : k;
	return idx;
}

int ar_rep_html_sites(FILE *f, const ar_res_trace_t *t, const ar_res_site_t *s, size_t n, int idx)
{
	if (!n)
		return 0;
	fprintf(f, "<section class=\"sites\" id=\"sites-%d\">\n<h3>Allocation sites</h3>\n", idx);
	fprintf(f, "<p class=\"meta\">%zu call site(s) of the recorded program (its caller chains, outermost frame "
		   "first). Hover a frame for its name, bytes and share.</p>\n",
		n);
	int marks = flame_chart(f, t, s, n, idx, "flame-bytes", "bytes allocated", by_bytes);
	marks += flame_chart(f, t, s, n, idx, "flame-live", "live bytes at the peak", by_live);
	size_t k, *top = top_sites(s, n, TOP_SITES, &k);
	fprintf(f, "<table class=\"top-sites\">\n<tr><th>site (innermost frame, then its callers)</th><th>live at "
		   "peak</th><th>blocks</th><th>calls</th><th>bytes</th><th>temporary</th><th>leaked</th></tr>\n");
	for (size_t i = 0; i < k; i++) {
		const ar_res_site_t *x = &s[top[i]];
		char a[32], b[32], c[32], d[32], e[32], g[32];
		fputs("<tr><td class=\"stack\" title=\"", f);
		ar_esc_html(f, x->stack);
		fputs("\"><b>", f);
		char inner[256];
		ar_esc_html(f, fit(inner, sizeof inner, innermost(x->stack), 80));
		fputs("</b>", f);
		if (innermost(x->stack) != x->stack) {
			/* callers, nearest first, cut to a line */
			size_t len = (size_t)(innermost(x->stack) - x->stack) - 1;
			/* each ";" becomes " \u2190 " (5 bytes) */
			char *callers = ar_res_xcalloc(len + 1, 1), *rev = ar_res_xcalloc(5 * len + 8, 1);
			memcpy(callers, x->stack, len);
			size_t at = 0;
			for (char *p; (p = strrchr(callers, ';'));) {
				at += (size_t)sprintf(rev + at, "%s \u2190 ", p + 1);
				*p = 0;
			}
			strcpy(rev + at, callers);
			char cut[256];
			fputs(" <span class=\"meta\">\u2190 ", f);
			ar_esc_html(f, fit(cut, sizeof cut, rev, 90));
			fputs("</span>", f);
			free(callers);
			free(rev);
		}
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			ar_res_fmt_bytes(a, sizeof a, (double)x->live_at_peak_bytes),
			ar_res_fmt_num(b, sizeof b, (double)x->live_at_peak_blocks), ar_res_fmt_num(c, sizeof c, (double)x->calls),
			ar_res_fmt_bytes(d, sizeof d, (double)x->bytes), ar_res_fmt_num(e, sizeof e, (double)x->temporary_calls),
			ar_res_fmt_bytes(g, sizeof g, (double)x->leaked_bytes));
	}
	fputs("</table>\n", f);
	free(top);
	if (n > k)
		fprintf(f, "<p class=\"meta\">top %zu of %zu sites by live bytes at the peak (then bytes); every site: "
			   "<code>alloctrace stacks --folded</code> or the table <code>sites</code> "
			   "(docs/RESULTS.md).</p>\n",
			k, n);
	fputs("</section>\n", f);
	return marks;
}

void ar_rep_print_sites(FILE *f, const ar_res_set_t *rep)
{
	for (size_t ti = 0; ti < rep->ntraces; ti++) {
		const ar_res_trace_t *t = &rep->traces[ti];
		size_t n;
		ar_res_site_t *s = ar_rep_sites(rep, t, &n);
		if (!n)
			continue;
		size_t k, *top = top_sites(s, n, TOP_SITES, &k);
		fputs("\ntop sites of ", f);
		ar_esc_term(f, t->name);
		fprintf(f, " (%zu of %zu, by live bytes at the peak):\n", k, n);
		fprintf(f, "  %12s %10s %10s %12s %10s %12s  %s\n", "live@peak", "blocks", "calls", "bytes", "temporary",
			"leaked", "site (innermost frame <- callers)");
		for (size_t i = 0; i < k; i++) {
			const ar_res_site_t *x = &s[top[i]];
			char a[32], b[32], c[32], d[32], e[32], g[32];
			fprintf(f, "  %12s %10s %10s %12s %10s %12s  ",
				ar_res_fmt_bytes(a, sizeof a, (double)x->live_at_peak_bytes),
				ar_res_fmt_num(b, sizeof b, (double)x->live_at_peak_blocks),
				ar_res_fmt_num(c, sizeof c, (double)x->calls), ar_res_fmt_bytes(d, sizeof d, (double)x->bytes),
				ar_res_fmt_num(e, sizeof e, (double)x->temporary_calls),
				ar_res_fmt_bytes(g, sizeof g, (double)x->leaked_bytes));
			/* innermost first: the folded order reversed */
			size_t len = strlen(x->stack);
			char *cp = ar_res_xcalloc(len + 1, 1);
			memcpy(cp, x->stack, len);
			int first = 1;
			for (char *p; (p = strrchr(cp, ';')); first = 0) {
				fputs(first ? "" : " <- ", f);
				ar_esc_term(f, p + 1);
				*p = 0;
			}
			fputs(first ? "" : " <- ", f);
			ar_esc_term(f, cp);
			fputc('\n', f);
			free(cp);
		}
		free(top);
		ar_res_sites_free(s, n);
	}
}
