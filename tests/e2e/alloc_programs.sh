#!/usr/bin/env bash
# alloc_programs.sh — real programs under LD_PRELOAD of each of our
# allocators, with output byte-identical to the same run on glibc:
#   python3  dicts, strings, lists, bytes and threads (PYTHONMALLOC=malloc,
#            so every Python object goes through the allocator under test)
#   sqlite3  build a 100 000-row table with an index, run queries
#   sort     a 1 000 000-line file, in parallel with temporary files
#   gcc      compile and link a C file (the driver, cc1, as, ld all preloaded)
#   xz -T2   compress in two threads and decompress
# Each of our runs must also leave a line in ALLOCRR_ALLOC_STATS_FILE showing
# that the program allocated through our library (not silently through glibc).
# Missing programs are installed with apt-get when root, otherwise the test
# is skipped (exit 77).
set -u
. "$(dirname "$0")/../allocators/lib.sh"
need "$list"
here=$(cd "$(dirname "$0")/../allocators/programs" && pwd)
python=/usr/bin/python3 # python3 on PATH may be a pyenv shim (a bash script)

need_program sqlite3 sqlite3
need_program sort coreutils
need_program gcc gcc
need_program xz xz-utils
[ -x "$python" ] || need_program python3 python3
[ -x "$python" ] || { echo "skipped: $python is not installed"; exit 77; }

work=$(mktemp -d /tmp/allocrr-programs.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- inputs, generated once (deterministic) --------------------------------------
awk 'BEGIN { x = 42; for (i = 0; i < 1000000; i++) {
	x = (x * 1103515245 + 12345) % 2147483648
	printf "%08x %d line-%d %s\n", x, x % 100000, i, substr("abcdefghijklmnopqrstuvwxyz", x % 26 + 1, 1 + x % 9) } }' \
	>"$work/sort.in"
head -c 8000000 "$work/sort.in" >"$work/xz.in"
cat >"$work/db.sql" <<'SQL'
CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, val REAL, grp INTEGER, note TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
INSERT INTO t SELECT x, printf('name-%06d', (x * 7919) % 100000), x * 0.5, x % 97,
	printf('%x', x * 2654435761 % 4294967296) FROM c;
CREATE INDEX t_name ON t(name);
CREATE INDEX t_grp ON t(grp, val);
SELECT count(*), sum(val), min(name), max(name) FROM t;
SELECT grp, count(*), round(avg(val), 3), group_concat(id % 10, '') FROM t GROUP BY grp ORDER BY grp LIMIT 20;
SELECT name, val FROM t WHERE name BETWEEN 'name-050000' AND 'name-050100' ORDER BY name;
SELECT a.grp, count(*) FROM t a JOIN t b ON b.id = a.id - 1 WHERE (a.grp + b.grp) % 3 = 0 GROUP BY a.grp ORDER BY 2 DESC, 1 LIMIT 5;
UPDATE t SET note = upper(note) || name WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(length(note)), max(note) FROM t;
SELECT id, name FROM t ORDER BY note DESC, id LIMIT 10;
SQL

# ---- the programs -----------------------------------------------------------------
# run_all DIR: run every program, outputs into DIR (LD_PRELOAD already set).
run_all() {
	local out=$1
	mkdir -p "$out"
	(PYTHONMALLOC=malloc PYTHONHASHSEED=0 timeout 300 "$python" "$here/workload.py" >"$out/python.out") || return 1
	rm -f "$out/db.sqlite"
	(timeout 300 sqlite3 "$out/db.sqlite" <"$work/db.sql" >"$out/sqlite.out") || return 2
	rm -f "$out/db.sqlite"
	mkdir -p "$out/tmp"
	(LC_ALL=C timeout 300 sort --parallel=2 -S 8M -T "$out/tmp" "$work/sort.in" >"$out/sort.out") || return 3
	(LC_ALL=C timeout 300 sort -k2,2n -k1,1 --parallel=2 "$work/sort.in" | md5sum >"$out/sortn.out") || return 3
	(cd "$out" && timeout 300 gcc -O2 -Wall -c "$here/sample.c" -o sample.o &&
		timeout 300 gcc -O2 -o sample sample.o && ./sample >gcc.out) || return 4
	(timeout 300 xz -T2 -3 --block-size=1MiB -c "$work/xz.in" >"$out/xz.out") || return 5
	(timeout 300 xz -T2 -d -c "$out/xz.out" | cmp -s - "$work/xz.in") || return 6
	return 0
}

outputs="python.out sqlite.out sort.out sortn.out sample.o gcc.out xz.out"

if ! run_all "$work/glibc"; then
	echo "FAIL: the reference run on glibc failed (step $?)"
	exit 1
fi

failed=0
for name in $ours; do
	preload=$(preload_of "$name") || { failed=$((failed + 1)); continue; }
	stats="$work/$name.stats"
	t0=$EPOCHREALTIME
	LD_PRELOAD=$preload ALLOCRR_ALLOC_STATS_FILE=$stats run_all "$work/$name"
	rc=$?
	dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: program step $rc failed"
		failed=$((failed + 1))
		continue
	fi
	bad=""
	for f in $outputs; do
		cmp -s "$work/glibc/$f" "$work/$name/$f" || bad="$bad $f"
	done
	# Proof: each program allocated through our library. gcc's driver,
	# cc1, as and ld each report; sort and xz run several times.
	for exe in python3 sqlite3 sort gcc cc1 xz; do
		grep "allocator=$name exe=[^ ]*/[^ /]*$exe[^ /]* " "$stats" 2>/dev/null |
			grep -qv ' allocs_total=0 ' || bad="$bad no-stats:$exe"
	done
	if [ -n "$bad" ]; then
		echo "FAIL $name: differs from glibc or did not run on $name:$bad"
		failed=$((failed + 1))
	else
		echo "ok   $name (${dt}s, $(wc -l <"$stats") processes reported)"
	fi
done
[ $failed -eq 0 ]
