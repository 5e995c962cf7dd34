#!/usr/bin/env bash
# The replay follows the recorded program, not each thread's solo run:
# demo_server's main thread frees the whole cache only after joining its
# workers, synchronisation no heap trace shows. Without SYNC ops the main
# thread's stream would free each cache entry right after its producer made
# it and the replayed heap would never hold the recorded live set; with them
# the glibc replay's peak heap RSS reaches the trace's peak live bytes
# (pages are touched, so RSS cannot be below live bytes by more than page
# rounding: we allow 10 %).
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

for threads in 1 2; do
	"$B/bin/allocrec" -q -o demo$threads.zst "$B/traces/demo_server" 5000 $threads >/dev/null ||
		{ fail "allocrec demo_server ($threads)"; continue; }
	"$AR" demo$threads.zst -a glibc --repeat 1 --db f.db >out$threads.txt 2>&1
	expect_eq "$threads worker(s): exit status" $? 0
	sha=$(sha256sum demo$threads.zst | cut -d' ' -f1)
	row=$(q f.db "SELECT peak_heap_rss_bytes, peak_live_bytes, sync_waits FROM runs WHERE trace_sha256='$sha' AND status='ok'")
	IFS='|' read -r heap live syncs <<<"$row"
	echo "   $threads worker(s): peak heap RSS $heap, trace peak live $live, sync waits $syncs"
	[ -n "$heap" ] && [ -n "$live" ] && [ "$live" -gt 1000000 ] || { fail "$threads: no run row ($row)"; continue; }
	[ $((heap * 10)) -ge $((live * 9)) ] && ok "$threads worker(s): replayed heap holds the recorded live set" ||
		{ fail "$threads worker(s): peak heap RSS $heap is below 90 % of the trace's peak live bytes $live"; cat out$threads.txt; }
done
finish
