#!/usr/bin/env bash
# allocreplay --route (replayer/route.h, worker_route.h): a program whose
# one site churns fixed 64-byte blocks in a loop while two others allocate
# other sizes, recorded with stacks, replayed under glibc alone and with
# the 64-byte blocks (by size, then by the site's stack id) served by pool
# in the same worker. The worker's proof must show both allocators served
# calls, with counts equal to the trace's 64-byte allocations and the rest;
# the routed allocator's own counters must agree; the runs carry the rule.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

LIB=$("$AR" --list | awk '$1 == "pool" && $4 == "yes" {print $5}')
[ -n "$LIB" ] && [ -e "${LIB%.so}-prefixed.so" ] || { echo "liballocrr-pool-prefixed.so not built"; exit 77; }
command -v cc >/dev/null || { echo "no C compiler"; exit 77; }

cat >churn.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* noinline: each is a site of its own in the recorded stacks */
__attribute__((noinline)) static void *node(void) { return malloc(64); }
__attribute__((noinline)) static void *buffer(size_t n) { return malloc(n); }
int main(void)
{
	void *ring[32] = { 0 };
	void *bufs[8] = { 0 };
	unsigned long sum = 0;
	for (int i = 0; i < 20000; i++) {
		int k = i % 32;
		free(ring[k]);
		ring[k] = node();
		memset(ring[k], i, 64);
		if (i % 10 == 0) {
			int b = (i / 10) % 8;
			free(bufs[b]);
			bufs[b] = buffer(100 + (size_t)(i % 900));
			sum += (unsigned long)bufs[b] & 1;
		}
	}
	char *s = calloc(3, 1000);
	s = realloc(s, 5000);
	free(s);
	for (int k = 0; k < 32; k++)
		free(ring[k]);
	for (int b = 0; b < 8; b++)
		free(bufs[b]);
	printf("%lu\n", sum);
	return 0;
}
C
cc -O1 -g -fno-builtin -fno-omit-frame-pointer -o churn churn.c || { fail "compile churn.c"; finish; }
"$B/bin/allocrec" -q --stacks -o churn.zst ./churn >/dev/null || { fail "allocrec --stacks churn"; finish; }

# The trace's own counts, from alloctrace dump ("SEQ TID OP ARGS = RESULT"):
# 64-byte mallocs vs every allocation (malloc, calloc, the memalign family:
# what the route map counts; the program's calloc is not of 64 bytes).
"$B/bin/alloctrace" dump --extra churn.zst >dump.txt || { fail "alloctrace dump"; finish; }
n64=$(awk '$3 == "malloc" && $4 == 64' dump.txt | wc -l)
nalloc=$(awk '$3 ~ /^(malloc|calloc|posix_memalign|aligned_alloc|memalign|valloc|pvalloc)$/' dump.txt | wc -l)
[ "$n64" -ge 20000 ] && ok "the trace has $n64 64-byte mallocs of $nalloc allocations" ||
	fail "expected >= 20000 64-byte mallocs, dump has $n64 (format: $(sed -n 1,3p dump.txt))"

"$AR" churn.zst -a glibc --route pool:size=64 --repeat 1 --timing every --db r.db >out.txt 2>err.txt
expect_eq "exit status" $? 0
cat out.txt err.txt
expect_eq "integrity" "$(db_integrity r.db)" ok
expect_eq "runs: glibc and glibc+pool[size=64]" \
	"$(q r.db "SELECT group_concat(allocator, ' ') FROM (SELECT allocator FROM runs WHERE status='ok' ORDER BY allocator)")" \
	"glibc glibc+pool[size=64]"
expect_eq "the routed run carries the rule in its options" \
	"$(q r.db "SELECT count(*) FROM runs WHERE allocator='glibc+pool[size=64]' AND options LIKE '% route=pool:size=64'")" 1
expect_eq "the plain run carries none" "$(q r.db "SELECT count(*) FROM runs WHERE allocator='glibc' AND options LIKE '%route=%'")" 0
expect_eq "both runs replayed the same ops (checksum)" "$(q r.db 'SELECT count(DISTINCT op_checksum) FROM runs')" 1
expect_eq "no failed or skipped calls" "$(q r.db 'SELECT sum(failed_allocs) FROM runs')" 0

st() { q r.db "SELECT value FROM allocator_stats JOIN runs USING (run_id) WHERE allocator='$1' AND name='$2'"; }
R='glibc+pool[size=64]'
expect_eq "proof: allocations sent to pool = the trace's 64-byte mallocs" "$(st "$R" route.pool.allocs)" "$n64"
expect_eq "proof: allocations left to glibc = the rest" "$(st "$R" route.base.allocs)" $((nalloc - n64))
expect_eq "proof: pool counted them itself (allocs_total delta)" "$(st "$R" route.pool.allocs_total)" "$n64"
expect_eq "proof: and freed them all (frees_total delta)" "$(st "$R" route.pool.frees_total)" "$n64"
expect_eq "proof: pool's calls = its mallocs + their frees" "$(st "$R" route.pool.calls)" $((2 * n64))
calls=$(q r.db "SELECT ops FROM runs WHERE allocator='$R'")
expect_eq "proof: base + pool calls = all calls" $(( $(st "$R" route.base.calls) + $(st "$R" route.pool.calls) )) "$calls"
[ "$(st "$R" route.base.calls)" -gt 0 ] && ok "both allocators served calls" || fail "glibc served no call"
expect_eq "the plain run has no route proof" "$(q r.db "SELECT count(*) FROM allocator_stats JOIN runs USING (run_id) WHERE allocator='glibc' AND name LIKE 'route.%'")" 0

# allocreport --recommend: the routed run against its base alone.
"$B/bin/allocreport" --db r.db --recommend >rec.txt 2>&1
grep -q 'glibc+pool\[size=64\] vs glibc alone: time gain [-+][0-9.]*% (median ops/s .*memory cost [-+][0-9.]*%' rec.txt &&
	ok "allocreport --recommend reports the route's time gain and memory cost" ||
	fail "recommend: $(grep -A2 routes rec.txt)"

# By site: the stack id of the 64-byte mallocs (all from node()).
sid=$(awk '$3 == "malloc" && $4 == 64 { for (i = 1; i <= NF; i++) if ($i ~ /^stack=/) { sub("stack=", "", $i); print $i } }' dump.txt | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
if [ -n "$sid" ]; then
	nsid=$(awk -v s="stack=$sid" '$3 ~ /^(malloc|calloc|posix_memalign|aligned_alloc|memalign|valloc|pvalloc)$/ { for (i = 1; i <= NF; i++) if ($i == s) print }' dump.txt | wc -l)
	"$AR" churn.zst -a glibc --route "pool:stack=$sid" --repeat 1 --db s.db >/dev/null 2>err2.txt
	expect_eq "--route pool:stack=$sid: exit status" $? 0
	S="glibc+pool[stack=$sid]"
	expect_eq "by stack: allocations sent to pool = the site's" \
		"$(q s.db "SELECT value FROM allocator_stats JOIN runs USING (run_id) WHERE allocator='$S' AND name='route.pool.allocs'")" "$nsid"
	expect_eq "by stack: pool counted them" \
		"$(q s.db "SELECT value FROM allocator_stats JOIN runs USING (run_id) WHERE allocator='$S' AND name='route.pool.allocs_total'")" "$nsid"
else
	fail "no stack id on the 64-byte mallocs (dump: $(grep -m1 ' malloc ' dump.txt))"
fi

# By function: frame=buffer is every allocation made in buffer(), which the
# loop calls once in 10 of its 20000 turns (the trace's symbols, through
# alloctrace stacks --ids-through run by allocreplay).
"$AR" churn.zst -a glibc --route "arena:frame=buffer" --repeat 1 --db f.db >/dev/null 2>err3.txt
expect_eq "--route arena:frame=buffer: exit status" $? 0
expect_eq "by frame: allocations sent to arena = buffer()'s 2000" \
	"$(q f.db "SELECT value FROM allocator_stats JOIN runs USING (run_id) WHERE allocator='glibc+arena[frame=buffer]' AND name='route.arena.allocs'")" 2000
"$AR" churn.zst -a glibc --route "arena:frame=no_such_function" --repeat 1 --db f.db >/dev/null 2>err4.txt
expect_eq "--route with a frame no stack has: exit status" $? 2
grep -q "no recorded stack has a frame named no_such_function" err4.txt &&
	ok "an unknown frame is named in the error" || fail "unknown frame: $(cat err4.txt)"
"$AR" churn.zst -a glibc --route "arena:frame=a;b" --repeat 1 --db f.db >/dev/null 2>err5.txt
expect_eq "--route frame with ';': usage error" $? 1

# alloctrace stats proposes the churning 64-byte site for pool, as a ready rule.
if [ -n "$sid" ]; then
	"$B/bin/alloctrace" stats churn.zst >stats.txt
	grep -q -- "--route pool:stack=$sid .*allocations of 64 B" stats.txt &&
		ok "alloctrace stats proposes --route pool:stack=$sid" ||
		fail "stats candidates: $(sed -n '/route candidates/,$p' stats.txt)"
fi

# Two routes, a base of ours: arena takes thread 0's other blocks.
"$AR" churn.zst -a freelist --route pool:size=64 --route arena:thread=0 --repeat 1 --db m.db >/dev/null 2>err3.txt
expect_eq "two routes on freelist: exit status" $? 0
M='freelist+pool[size=64]+arena[thread=0]'
mq() { q m.db "SELECT value FROM allocator_stats JOIN runs USING (run_id) WHERE allocator='$M' AND name='$1'"; }
expect_eq "two routes: pool got the 64-byte blocks" "$(mq route.pool.allocs)" "$n64"
expect_eq "two routes: arena the rest of thread 0" "$(mq route.arena.allocs)" $((nalloc - n64))
expect_eq "two routes: arena counted them" "$(mq route.arena.allocs_total)" $((nalloc - n64))
expect_eq "two routes: freelist (the base) allocated nothing in the window" \
	"$(q m.db "SELECT allocator_allocs_delta FROM runs WHERE allocator='$M'")" 0

# Bad rules: usage errors naming the rule.
"$AR" churn.zst --route jemalloc:size=64 --db x.db >/dev/null 2>e1.txt
expect_eq "unknown routed allocator: exit 1" $? 1
grep -q "jemalloc:size=64" e1.txt && ok "the message names the rule" || fail "message: $(cat e1.txt)"
"$AR" churn.zst --route pool:size=9-3 --db x.db >/dev/null 2>e2.txt
expect_eq "size range backwards: exit 1" $? 1
"$AR" churn.zst --route pool:colour=red --db x.db >/dev/null 2>e3.txt
expect_eq "unknown selector: exit 1" $? 1
grep -q "colour=red" e3.txt && ok "the message names the selector" || fail "message: $(cat e3.txt)"

# The worker refuses a file that is not a route map, naming it.
"$B/bin/alloctrace" gen S1 --ops 2000 -q -o other.zst
"$AR" other.zst -a glibc --repeat 1 --db o.db >/dev/null 2>&1
WL=$(ls "$ALLOCRR_CACHE_DIR"/*.wl | head -1)
GLIBC=$("$AR" --list | awk '$1 == "glibc" {print $5}')
printf 'garbage-route-map-file-with-enough-bytes' >bad.map
out=$(env -u LD_PRELOAD "$B/bin/allocreplay-worker" --workload "$WL" --allocator glibc --library "$GLIBC" \
	--route "pool=${LIB%.so}-prefixed.so" --route-map bad.map --fd 1 2>&1)
grep -q '^E error .*bad.map: not a route map' <<<"$out" && ok "a bad map is refused with its name" ||
	fail "bad map: $(grep -m1 '^E' <<<"$out")"
finish
