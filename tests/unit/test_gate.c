/*
 * test_gate.c — common/gate.c: the --fail-if grammar of ar_gate.h (what it
 * accepts, what it refuses and how the refusal reads), the change in
 * percent at its edges (0 -> 0, 0 -> n, unknown), and the threshold test
 * for each comparison.
 */
#include <math.h>

#include "ar_gate.h"
#include "testing.h"

static const char *const names[] = {"p99", "ops_s", "peak_live", "calls_*", NULL};

static int parses(const char *expr, ar_gate_rule_t *r)
{
	char err[512];
	return ar_gate_parse(expr, names, r, err, sizeof err) == 0;
}

static void test_accepts(void)
{
	ar_gate_rule_t r;
	EXPECT(parses("p99>+10%", &r));
	EXPECT_STR(r.metric, "p99");
	EXPECT_STR(r.cmp, ">");
	EXPECT(r.pct == 10);
	EXPECT(parses("ops_s<-5%", &r));
	EXPECT_STR(r.cmp, "<");
	EXPECT(r.pct == -5);
	EXPECT(parses(" peak_live >= 2.5 % ", &r));
	EXPECT_STR(r.metric, "peak_live");
	EXPECT_STR(r.cmp, ">=");
	EXPECT(r.pct == 2.5);
	EXPECT(parses("p99<=0%", &r));
	EXPECT(r.pct == 0);
	EXPECT(parses("calls_malloc>+1%", &r)); /* a prefix entry */
	EXPECT_STR(r.metric, "calls_malloc");
	EXPECT(parses("p99>10%", &r)); /* no sign: + */
	EXPECT(r.pct == 10);
}

static void test_refuses(void)
{
	ar_gate_rule_t r;
	char err[512];
	static const char *const bad[] = {"", "p99", "p99>", "p99>10", "p99>+10%x", "p99=10%", "p99>>1%",
					  "p99>+inf%", "p99>1e3%", "p99>0x10%", "p99>+.5%", "p99>5.%", "calls_>1%",
					  "+10%", NULL};
	for (int i = 0; bad[i]; i++) {
		int rc = ar_gate_parse(bad[i], names, &r, err, sizeof err);
		EXPECT(rc == -1);
		if (rc == 0)
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
	}
	EXPECT(ar_gate_parse("p98>+10%", names, &r, err, sizeof err) == -1);
	EXPECT_STR(err, "--fail-if 'p98>+10%': unknown metric 'p98' (p99, ops_s, peak_live or calls_*)");
	EXPECT(ar_gate_parse("p99~10%", names, &r, err, sizeof err) == -1);
	EXPECT(strstr(err, "'p99~10%'") && strstr(err, "no comparison"));
	EXPECT(ar_gate_parse("p99>ten%", names, &r, err, sizeof err) == -1);
	EXPECT(strstr(err, "signed percentage"));
}

static void test_change(void)
{
	EXPECT(ar_gate_change_pct(100, 110) == 10);
	EXPECT(ar_gate_change_pct(200, 150) == -25);
	EXPECT(ar_gate_change_pct(0, 0) == 0);
	EXPECT(isinf(ar_gate_change_pct(0, 5)) && ar_gate_change_pct(0, 5) > 0);
	EXPECT(isnan(ar_gate_change_pct(NAN, 5)));
	EXPECT(isnan(ar_gate_change_pct(5, NAN)));
	char buf[32];
	EXPECT_STR(ar_gate_fmt_pct(buf, sizeof buf, 12.34), "+12.3%");
	EXPECT_STR(ar_gate_fmt_pct(buf, sizeof buf, -5), "-5.0%");
	EXPECT_STR(ar_gate_fmt_pct(buf, sizeof buf, 0), "0%");
	EXPECT_STR(ar_gate_fmt_pct(buf, sizeof buf, 0.0454545), "+0.045%");
	EXPECT_STR(ar_gate_fmt_pct(buf, sizeof buf, INFINITY), "new");
	EXPECT_STR(ar_gate_fmt_pct(buf, sizeof buf, NAN), "-");
}

static void test_trips(void)
{
	ar_gate_rule_t r;
	EXPECT(parses("p99>+10%", &r));
	EXPECT(!ar_gate_trips(&r, 10));
	EXPECT(ar_gate_trips(&r, 10.01));
	EXPECT(!ar_gate_trips(&r, -50));
	EXPECT(ar_gate_trips(&r, INFINITY));
	EXPECT(!ar_gate_trips(&r, NAN));
	EXPECT(parses("p99>=+10%", &r));
	EXPECT(ar_gate_trips(&r, 10));
	EXPECT(parses("ops_s<-5%", &r));
	EXPECT(ar_gate_trips(&r, -5.5));
	EXPECT(!ar_gate_trips(&r, -5));
	EXPECT(!ar_gate_trips(&r, 3));
	EXPECT(parses("ops_s<=-5%", &r));
	EXPECT(ar_gate_trips(&r, -5));
	EXPECT(parses("peak_live>0%", &r));
	EXPECT(!ar_gate_trips(&r, 0));
	EXPECT(ar_gate_trips(&r, 0.001));
}

int main(void)
{
	RUN(test_accepts);
	RUN(test_refuses);
	RUN(test_change);
	RUN(test_trips);
	return TEST_END();
}
