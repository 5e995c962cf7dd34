# e2e_lib.sh — sourced by tests/e2e/replay_*.sh: paths, a private temp dir
# and workload cache, and the ok/fail/expect helpers. Exit 0 pass, 1 fail,
# 77 skip (tests/run.sh).
set -u
B=$(cd "${ALLOCRR_BUILD:-build}" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AR="$B/bin/allocreplay"
SAMPLE="$ROOT/traces/samples/synthetic-2t.zst"
T=$(mktemp -d "${TMPDIR:-/tmp}/allocrr-replay-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export ALLOCRR_CACHE_DIR="$T/cache"
cd "$T"
nfail=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }
expect_eq() { # what, got, want
	if [ "$2" = "$3" ]; then ok "$1: $2"; else fail "$1: got '$2', want '$3'"; fi
}
q() { sqlite3 -batch -noheader "$@"; }
finish() {
	if [ "$nfail" -gt 0 ]; then echo "$nfail check(s) failed"; exit 1; fi
	exit 0
}
for f in "$AR" "$B/bin/allocreplay-worker"; do
	[ -x "$f" ] || { echo "missing $f: build first"; exit 77; }
done
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI not installed"; exit 77; }

# ---- for the torture scripts (tests/e2e/torture_replay_*.sh) ----------------------
# SCALE multiplies their iterations (make torture sets it); RANDOM is seeded
# from ALLOCRR_TORTURE_SEED when given, so a failing sequence can be replayed
# (each script prints its seed in its tally line).
SCALE=${ALLOCRR_TORTURE_SCALE:-1}
case $SCALE in '' | *[!0-9]* | 0) echo "ALLOCRR_TORTURE_SCALE must be a positive integer"; exit 1 ;; esac
SEED=${ALLOCRR_TORTURE_SEED:-$(( $(date +%s%N) % 1000000 ))}
RANDOM=$SEED
# A pause without forking sleep(1): read from a pipe nobody writes.
exec {snooze_fd}<> <(:)
snooze() { read -r -t "$1" -u "$snooze_fd" _ || :; }
# rnd N: a random integer in [0, N).
rnd() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }

# The database promises of docs/RESULTS.md ("What a stored run promises"):
# db_integrity DB prints "ok" when PRAGMA integrity_check and
# foreign_key_check find nothing, else what they found.
db_integrity() {
	local ic fk
	ic=$(q "$1" 'PRAGMA integrity_check' 2>&1)
	fk=$(q "$1" 'PRAGMA foreign_key_check' 2>&1)
	if [ "$ic" = ok ] && [ -z "$fk" ]; then echo ok; else echo "integrity: $ic; foreign keys: $fk"; fi
}
# db_partial DB prints how many runs break "a run is whole or absent":
# an ok run must have ops; latency rows for 'all' and per op and histogram
# buckets whose counts equal ops when every call was timed (timing_every 1,
# or NULL in rows older than schema 5), equal the 'all' count, between 1
# and ops, when 1 call in N was (timing_every N > 1), and none at all under
# --timing none (timing_every 0); as many rss_samples as the
# trace's other ok runs (at least one), and its 7 perf counter rows (value
# or reason); a run that is not ok must have a reason and no child rows;
# and no child row may lack its run.
PARTIAL_SQL="
WITH ok AS (SELECT run_id, trace_sha256, ops, counters_source, coalesce(timing_every, 1) AS te
            FROM runs WHERE status = 'ok'),
lat AS (SELECT o.run_id,
        (SELECT count FROM latency l WHERE l.run_id = o.run_id AND l.op = 'all') AS n_all,
        (SELECT sum(count) FROM latency l WHERE l.run_id = o.run_id AND l.op <> 'all') AS n_kinds,
        (SELECT sum(count) FROM histogram h WHERE h.run_id = o.run_id) AS n_hist FROM ok o),
rss AS (SELECT run_id, count(*) AS n FROM rss_samples GROUP BY run_id),
want_rss AS (SELECT o.trace_sha256, max(coalesce(rss.n, 0)) AS m FROM ok o
             LEFT JOIN rss USING (run_id) GROUP BY o.trace_sha256)
SELECT
 (SELECT count(*) FROM ok o JOIN lat USING (run_id) WHERE o.ops IS NULL
   OR (o.te = 0 AND coalesce(n_all, n_kinds, n_hist) IS NOT NULL)
   OR (o.te = 1 AND (coalesce(n_all, -1) <> o.ops OR coalesce(n_kinds, -1) <> o.ops
                     OR coalesce(n_hist, -1) <> o.ops))
   OR (o.te > 1 AND (coalesce(n_all, 0) NOT BETWEEN 1 AND o.ops OR n_kinds IS NOT n_all
                     OR n_hist IS NOT n_all))
   OR coalesce((SELECT n FROM rss WHERE rss.run_id = o.run_id), 0) = 0
   OR (SELECT n FROM rss WHERE rss.run_id = o.run_id)
      <> (SELECT m FROM want_rss w WHERE w.trace_sha256 = o.trace_sha256)
   OR (o.counters_source = 'perf' AND (SELECT count(*) FROM counters c WHERE c.run_id = o.run_id
        AND (c.value IS NOT NULL OR c.reason IS NOT NULL)) <> 7))
 + (SELECT count(*) FROM runs r WHERE r.status <> 'ok' AND (coalesce(r.reason, '') = ''
   OR EXISTS (SELECT 1 FROM latency x WHERE x.run_id = r.run_id)
   OR EXISTS (SELECT 1 FROM histogram x WHERE x.run_id = r.run_id)
   OR EXISTS (SELECT 1 FROM rss_samples x WHERE x.run_id = r.run_id)
   OR EXISTS (SELECT 1 FROM counters x WHERE x.run_id = r.run_id)
   OR EXISTS (SELECT 1 FROM allocator_stats x WHERE x.run_id = r.run_id)))
 + (SELECT count(*) FROM (SELECT run_id FROM latency UNION ALL SELECT run_id FROM histogram
     UNION ALL SELECT run_id FROM rss_samples UNION ALL SELECT run_id FROM counters
     UNION ALL SELECT run_id FROM allocator_stats) WHERE run_id NOT IN (SELECT run_id FROM runs));"
# A database whose creation was interrupted between two schema migrations
# (each one transaction) is an older schema without runs: its count of runs
# is what it prints then. PARTIAL_SQL needs every column it names, the newest
# being timing_every (migration 5), so a kill between migrations 3 and 5
# must take the older-schema branch too.
db_partial() {
	if [ "$(q "$1" "SELECT count(*) FROM pragma_table_info('runs')
	                WHERE name IN ('counters_source', 'timing_every')")" = 2 ]; then
		q "$1" "$PARTIAL_SQL"
	elif [ "$(q "$1" "SELECT count(*) FROM pragma_table_info('runs')")" != 0 ]; then
		q "$1" "SELECT count(*) FROM runs"
	else
		echo 0
	fi
}
# live_workers: allocreplay-worker processes of this test (their workload
# lies in our private cache) that are still running; zombies do not count.
# Skips the script (exit 77) unless every allocator named is installed.
need_allocators() {
	local a
	for a in "$@"; do
		"$AR" --list | awk -v a="$a" '$1 == a && $4 == "yes" { f = 1 } END { exit !f }' ||
			{ echo "allocator $a not installed"; exit 77; }
	done
}
live_workers() { pgrep -f "allocreplay-worker --workload $T/" | wc -l; }
