#!/usr/bin/env bash
# allocreplay --timing every|sample:N|none (issue 14, item 3): the three
# modes run the same ops (same calls, same checksum); runs.timing_every holds
# the period the worker used (1 every call, 0 none, N one in N); under none
# nothing is timed: no latency or histogram rows, NULL timed_ns and
# timer_resolution_ns, NULL latency in run_summary; every call timed gives
# latency counts equal to ops; a sampled run's counts are about ops / N and
# the same under every allocator (the sampler's seed is fixed); the default
# samples, and a short trace is timed more often (worker.h,
# AR_TIMING_MIN_SAMPLES); bad values are usage errors.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

# S1, one thread: 200 000 calls (100 000 malloc + 100 000 free); X, two
# threads with cross-thread frees: 200 000 calls. Both long enough for 1
# in 16 (at least 16 x 10 000 calls).
"$B/bin/alloctrace" gen S1 --ops 200000 -q -o s1.zst || { fail "alloctrace gen S1"; finish; }
"$B/bin/alloctrace" gen X --ops 200000 -q -o x.zst || { fail "alloctrace gen X"; finish; }

for m in none sample:16 every; do
	"$AR" s1.zst x.zst -a glibc,pool --repeat 1 --timing "$m" --db t.db >"out.$m" 2>"err.$m"
	expect_eq "--timing $m: exit" $? 0
done
"$AR" s1.zst "$SAMPLE" -a glibc --repeat 1 --db d.db >out.default 2>err.default
expect_eq "default timing: exit" $? 0

expect_eq "runs ok" "$(q t.db "SELECT count(*) FROM runs WHERE status = 'ok'")" 12
# the trace's calls, for each run
RT="runs r JOIN traces t ON t.sha256 = r.trace_sha256"
expect_eq "every run replayed every call" "$(q t.db "SELECT count(*) FROM $RT WHERE r.ops <> t.calls")" 0
expect_eq "one op checksum per trace, whatever the timing" \
	"$(q t.db "SELECT count(DISTINCT trace_sha256 || op_checksum) FROM runs")" 2
for m in "none 0" "sample:16 16" "every 1"; do
	set -- $m
	expect_eq "--timing $1: runs.timing_every = $2" \
		"$(q t.db "SELECT count(*) FROM runs WHERE options LIKE '%timing=$1%' AND timing_every = $2")" 4
done
expect_eq "options name the timing asked for" \
	"$(q t.db "SELECT count(*) FROM runs WHERE options LIKE '%timing=none' AND timing_every = 0
	           OR options LIKE '%timing=sample:16' AND timing_every = 16
	           OR options LIKE '%timing=every' AND timing_every = 1")" 12

# --timing none: nothing timed, and NULL rather than 0 wherever a latency would be.
expect_eq "none: no latency rows" \
	"$(q t.db "SELECT count(*) FROM latency JOIN runs USING (run_id) WHERE timing_every = 0")" 0
expect_eq "none: no histogram rows" \
	"$(q t.db "SELECT count(*) FROM histogram JOIN runs USING (run_id) WHERE timing_every = 0")" 0
expect_eq "none: timed_ns and timer_resolution_ns NULL" \
	"$(q t.db "SELECT count(*) FROM runs WHERE timing_every = 0 AND timed_ns IS NULL AND timer_resolution_ns IS NULL")" 4
expect_eq "none: run_summary latency NULL" \
	"$(q t.db "SELECT count(*) FROM run_summary s JOIN runs r USING (run_id)
	           WHERE r.timing_every = 0 AND s.p50_ns IS NULL AND s.p99_ns IS NULL AND s.max_ns IS NULL")" 4
expect_eq "none: ops/s measured" "$(q t.db "SELECT count(*) FROM runs WHERE timing_every = 0 AND ops_per_sec > 0")" 4

# every: each call timed once, in its kind's row and in 'all'.
expect_eq "every: latency 'all' count = ops" \
	"$(q t.db "SELECT count(*) FROM runs r JOIN latency l ON l.run_id = r.run_id AND l.op = 'all'
	           WHERE r.timing_every = 1 AND l.count = r.ops")" 4
expect_eq "every: per-kind counts sum to ops" \
	"$(q t.db "SELECT count(*) FROM runs r WHERE r.timing_every = 1 AND r.ops =
	           (SELECT sum(count) FROM latency l WHERE l.run_id = r.run_id AND l.op <> 'all')")" 4
expect_eq "every: histogram buckets sum to ops" \
	"$(q t.db "SELECT count(*) FROM runs r WHERE r.timing_every = 1 AND r.ops =
	           (SELECT sum(count) FROM histogram h WHERE h.run_id = r.run_id)")" 4

# sample:16: the gaps between timed calls are uniform on 1..31 (mean N = 16,
# variance (N^2 - N)/3 = 80), so over ops calls the count of timed calls is
# about ops/N with a standard deviation of about sqrt(ops (N-1) / (3 N^2)):
# 62 for 200 000 calls. The bound, 5 % of ops/N (625), is 10 standard
# deviations: a wrong rate (1 in 15 or 1 in 17 is 6 % off) fails, sampling
# noise cannot. The seed is fixed, so the
# count cannot change between runs either.
expect_eq "sample:16: 'all' count within 5 % of ops / 16" \
	"$(q t.db "SELECT count(*) FROM runs r JOIN latency l ON l.run_id = r.run_id AND l.op = 'all'
	           WHERE r.timing_every = 16 AND abs(l.count - r.ops / 16.0) <= 0.05 * r.ops / 16.0")" 4
q t.db "SELECT t.name, r.allocator, r.ops, l.count FROM $RT JOIN latency l ON l.run_id = r.run_id
        AND l.op = 'all' WHERE r.timing_every = 16" | sed 's/^/     sampled: /'
expect_eq "sample:16: the same calls timed under every allocator" \
	"$(q t.db "SELECT count(DISTINCT r.trace_sha256 || ':' || l.op || ':' || l.count)
	           FROM runs r JOIN latency l USING (run_id) WHERE r.timing_every = 16")" \
	"$(q t.db "SELECT count(DISTINCT r.trace_sha256 || ':' || l.op)
	           FROM runs r JOIN latency l USING (run_id) WHERE r.timing_every = 16")"
expect_eq "sample:16: per-kind counts sum to 'all'" \
	"$(q t.db "SELECT count(*) FROM runs r JOIN latency a ON a.run_id = r.run_id AND a.op = 'all'
	           WHERE r.timing_every = 16 AND a.count =
	           (SELECT sum(count) FROM latency l WHERE l.run_id = r.run_id AND l.op <> 'all')")" 4
expect_eq "sample:16: timed_ns reported (the timed calls scaled to all)" \
	"$(q t.db "SELECT count(*) FROM runs WHERE timing_every = 16 AND timed_ns > 0")" 4

# Timed runs know their timer's resolution; latencies stay numbers.
expect_eq "timed: timer_resolution_ns > 0" \
	"$(q t.db "SELECT count(*) FROM runs WHERE timing_every > 0 AND timer_resolution_ns > 0")" 8
expect_eq "timed: resolution at least one overhead spread or tick" \
	"$(q t.db "SELECT count(*) FROM runs WHERE timing_every > 0 AND timer_resolution_ns + 1e-9 >=
	           timer_overhead_median_ns - timer_overhead_ns AND timer_resolution_ns >= 1 / ticks_per_ns - 1e-9")" 8
expect_eq "timed: p50 numeric, not NULL" \
	"$(q t.db "SELECT count(*) FROM latency l JOIN runs r USING (run_id) WHERE l.op = 'all' AND typeof(l.p50_ns) = 'real'")" 8

# Default: sample:256, timed more often where 256 would leave fewer than
# 10 000 timed calls — S1's 200 000 calls at 1 in 20, the 3 000-call
# sample at every call.
expect_eq "default: options say sample:256" \
	"$(q d.db "SELECT count(*) FROM runs WHERE options LIKE '%timing=sample:256'")" 2
expect_eq "default: S1 at 1 in 20 (200 000 / 10 000)" \
	"$(q d.db "SELECT timing_every FROM $RT WHERE t.name = 's1.zst'")" 20
expect_eq "default: short trace timed in full" \
	"$(q d.db "SELECT r.timing_every || ' ' || (l.count = r.ops) FROM $RT JOIN latency l
	           ON l.run_id = r.run_id AND l.op = 'all' WHERE t.name <> 's1.zst'")" "1 1"

# Bad values: usage errors naming the option.
for bad in sample:0 sample: sample:x sometimes "sample:16x"; do
	"$AR" s1.zst -a glibc --repeat 1 --timing "$bad" --db bad.db >/dev/null 2>bad.err
	rc=$?
	[ $rc = 1 ] && grep -q -- "--timing must be every, none or sample:N" bad.err &&
		ok "--timing $bad: usage error" || fail "--timing $bad: exit $rc: $(cat bad.err)"
done

# The worker accepts every as calls, and refuses sample:0.
W=$B/bin/allocreplay-worker
LIBC=$("$AR" --list | awk '$1 == "glibc" {print $5}')
sha=$(sha256sum s1.zst | cut -d' ' -f1)
WL=$(ls "$ALLOCRR_CACHE_DIR/$sha".v*.wl 2>/dev/null | head -1)
env -u LD_PRELOAD "$W" --workload "$WL" --allocator glibc --library "$LIBC" --timing every --fd 1 >w.txt 2>w.err
expect_eq "worker --timing every: period 1" "$(awk '$1 == "S" && $2 == "timing_every" {print $3}' w.txt)" 1
env -u LD_PRELOAD "$W" --workload "$WL" --allocator glibc --library "$LIBC" --timing sample:0 --fd 1 >/dev/null 2>&1
expect_eq "worker --timing sample:0: usage exit" $? 64
finish
