#!/usr/bin/env bash
# What allocrec stores about the process itself (SPEC 6.8-6.10, format 1.1),
# on real programs: which allocator served malloc (glibc for python3 and
# sqlite3; jemalloc for python3 under LD_PRELOAD=libjemalloc.so.2 and for
# redis-server, which Debian links against it), with the version the
# allocator reports (compared with getconf / dpkg); the RSS at start, the
# samples over time and the kernel's peak (VmHWM), compared with GNU time's
# maximum RSS of the same program run unrecorded; a program too short for
# one sampling period still has start, peak and end; a fork child has its
# own. The two readers (alloctrace, tests/spec_reader.py) must agree on
# every figure, and a 1.0 trace must say "not recorded", never 0.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/progs/rec_testlib.sh"
PY=/usr/bin/python3
SPEC=$ROOT/tests/spec_reader.py
[ -x $PY ] || { echo "skip: $PY not installed"; exit 77; }
[ -x /usr/bin/time ] || { echo "skip: GNU time (/usr/bin/time) not installed"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not installed"; exit 77; }
have_spec=1
$PY -c 'import zstandard' 2>/dev/null || { have_spec=0; echo "note: python3-zstandard missing: second reader not compared"; }

# field JSONFILE EXPR: a value of a JSON document, EXPR in Python on `d`.
field() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); v=$2; print('null' if v is None else v)" "$1"; }
# check WHAT PYTHON-CONDITION JSONFILE...: the condition over d0, d1, ...
check() {
	local what=$1 cond=$2; shift 2
	if $PY -c "import json,sys; d=[json.load(open(f)) for f in sys.argv[1:]]; sys.exit(0 if ($cond) else 1)" "$@"; then
		ok "$what"
	else
		fail "$what ($cond): $(head -c 600 "$1")"
	fi
}
# describe NAME TRACE: the three views of a trace into NAME.info / NAME.stats / NAME.spec.
describe() {
	"$AT" info --json "$2" >"$1.info" 2>"$1.err" || fail "$1: alloctrace info exit $?: $(cat "$1.err")"
	"$AT" stats --json "$2" >"$1.stats" 2>>"$1.err" || fail "$1: alloctrace stats exit $?"
	if [ $have_spec = 1 ]; then
		$PY "$SPEC" process "$2" >"$1.spec" || fail "$1: spec_reader exit $?"
		# The independent reader agrees on every recorded figure.
		check "$1: alloctrace and spec_reader agree on allocator, PROCESS and samples" \
			'd[0]["allocator"] == d[2].get("allocator") and
			 all(d[0][k] == d[2]["process"][k] for k in ("start_rss_bytes", "peak_rss_bytes", "end_rss_bytes")) and
			 d[0]["process_end_time_ns"] == d[2]["process"]["end_time_ns"] and
			 d[0]["rss_samples"] == d[2]["rss_samples"] == d[1]["process_rss"]["samples"] and
			 d[1]["process_rss"]["peak_bytes"] == d[2]["rss_peak_bytes"] and
			 d[1]["process_rss"]["peak_time_ns"] == d[2]["rss_peak_time_ns"] and
			 d[1]["process_rss"]["min_bytes"] == d[2]["rss_min_bytes"]' \
			"$1.info" "$1.stats" "$1.spec"
		check "$1: alloctrace and spec_reader agree on the CPU times and the recorder's part" \
			'all((d[0][k] or 0) == d[1]["process"].get(k, 0) for k in
			     ("cpu_user_ns", "cpu_sys_ns", "recorder_writer_cpu_ns", "recorder_calls_cpu_ns",
			      "cpu_user_start_ns", "cpu_sys_start_ns", "peak_rss_source", "machine_busy_ns",
			      "machine_cpus"))' \
			"$1.info" "$1.spec"
	fi
	# A whole program's trace: its peak is the kernel's high-water mark (SPEC 6.10).
	check "$1: format 2.1, complete, peak from VmHWM" \
		'd[0]["format_version"] == "2.1" and d[0]["status"] == "complete" and d[0]["peak_rss_source"] == "hwm"' \
		"$1.info"
	# SPEC 6.10: the machine beside the program
	check "$1: the machine's CPUs ($(nproc))" "d[0]['machine_cpus'] == $(nproc)" "$1.info"
}

LIBC=$(readlink -f "$($PY -c 'import ctypes.util; print(ctypes.util.find_library("c"))' | sed 's|^|/lib/x86_64-linux-gnu/|')" 2>/dev/null)
[ -f "$LIBC" ] || LIBC=$(ldd /usr/bin/sqlite3 | awk '$1 == "libc.so.6" {print $3}' | xargs readlink -f)
GLIBC=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
echo "glibc: $LIBC, version $GLIBC"

# ---- python3 on glibc: grows past 50 MB, holds it, releases it ----------------
cat >grow.py <<'PY'
import time
x = [bytes([i % 256]) * (1 << 20) for i in range(80)]  # 80 MiB, every page written
time.sleep(0.3)
del x
time.sleep(0.1)
PY
/usr/bin/time -f %M -o bare.kib $PY grow.py || fail "python3 grow.py unrecorded failed"
"$REC" -q -o py.zst $PY grow.py || fail "allocrec python3 grow.py exit $?"
describe py py.zst
check "python3: allocator is glibc ($LIBC, libc.so.6, $GLIBC)" \
	"d[0]['allocator'] == {'path': '$LIBC', 'soname': 'libc.so.6', 'version': '$GLIBC'}" py.info
BARE=$(($(cat bare.kib) * 1024))
HWM=$(field py.info 'd["peak_rss_bytes"]')
START=$(field py.info 'd["start_rss_bytes"]')
END=$(field py.info 'd["end_rss_bytes"]')
SPEAK=$(field py.stats 'd["process_rss"]["peak_bytes"]')
echo "  unrecorded max RSS (GNU time) $BARE; recorded: start $START, peak (VmHWM) $HWM, sampled peak $SPEAK, end $END"
# The recorder's own memory (buffers, compressor) is a few MiB: the
# recorded peak stays within 20 % of the unrecorded one.
check "python3: recorded peak RSS within 20 % of GNU time's unrecorded $BARE" \
	"abs($HWM - $BARE) <= 0.2 * $BARE" py.info
check "python3: RSS at start (before main) is small: under a quarter of the peak" \
	"0 < $START < $HWM / 4" py.info
# 80 MiB held for 300 ms: the samples see it, and they see its release.
check "python3: sampled peak is at least 50 MiB above the start" "$SPEAK >= $START + 50 * 2**20" py.info
check "python3: sampled peak within 1 % of VmHWM (the same kernel counters)" \
	"abs($SPEAK - $HWM) <= 0.01 * $HWM" py.info
check "python3: RSS at close at least 40 MiB below the peak (the memory was released)" \
	"$END <= $HWM - 40 * 2**20" py.info
check "python3: samples every 10 ms: more than 10 over a run of 400 ms or more" \
	'd[0]["rss_samples"] > 10 and d[1]["process_rss"]["last_time_ns"] > 0.4e9' py.info py.stats
# Samples are in time order, their seqs follow the events, the peak's seq
# lies inside the trace, and the peak RSS comes after the peak live bytes
# began (the objects are live when the memory is resident).
check "python3: sample points in time and seq order, peak seq within the events" \
	'all(a["time_ns"] <= b["time_ns"] and a["seq"] <= b["seq"]
	     for a, b in zip(d[0]["process_rss"]["points"], d[0]["process_rss"]["points"][1:])) and
	 0 < d[0]["process_rss"]["peak_seq"] <= d[0]["events"] + d[0]["calls"].get("realloc", 0)' py.stats
"$AT" info py.zst >py.txt
grep -q "^allocator *libc.so.6 $GLIBC ($LIBC)" py.txt && ok "python3: info text names the allocator" ||
	fail "python3: info text: $(grep allocator py.txt)"
grep -q "^process RSS *start .* MiB, peak .* MiB (VmHWM)" py.txt && ok "python3: info text shows start and peak RSS" ||
	fail "python3: info text: $(grep 'process RSS' py.txt)"
"$AT" stats py.zst >py.stxt
grep -q "^process RSS .* samples: min .* median .* peak .* at " py.stxt && ok "python3: stats text shows the RSS summary" ||
	fail "python3: stats text: $(grep 'process RSS' py.stxt)"

# ---- sqlite3 on glibc --------------------------------------------------------------
"$REC" -q -o sq.zst sqlite3 :memory: "create table t(a, b); with recursive c(x) as (select 1 union all select x+1 from c where x < 20000) insert into t select x, hex(x * 7919) from c; select count(*) from t;" >sq.out ||
	fail "allocrec sqlite3 exit $?"
describe sq sq.zst
check "sqlite3: allocator is glibc $GLIBC" \
	"d[0]['allocator'] == {'path': '$LIBC', 'soname': 'libc.so.6', 'version': '$GLIBC'}" sq.info
# The recorder's own CPU time (SPEC 6.10): its writer's, measured, and its
# work in the calls, sampled (1 in 256: a few hundred samples here); both
# part of the process's CPU time, never all of it.
check "sqlite3: the recorder's CPU time is recorded, writer and calls, and below the process's" \
	'd[0]["recorder_writer_cpu_ns"] and d[0]["recorder_calls_cpu_ns"] and
	 d[0]["recorder_writer_cpu_ns"] + d[0]["recorder_calls_cpu_ns"] < d[0]["cpu_user_ns"] + d[0]["cpu_sys_ns"]' sq.info
"$AT" info sq.zst | grep -q "^process CPU  *[0-9.]* s (user .*); the recorder's .* s (writer .* s, its work in the program's calls ~.* s, sampled), the program's .* s$" &&
	ok "sqlite3: info text shows the CPU time and the recorder's part of it" ||
	fail "sqlite3: info text: $("$AT" info sq.zst | grep 'process CPU')"
# The machine's busy CPU time while recording (SPEC 6.10, /proc/stat): at
# least sqlite3's own clock ticks, and the info line about the other work.
check "sqlite3: the machine's busy CPU time is recorded" 'd[0]["machine_busy_ns"]' sq.info
"$AT" info sq.zst | grep -q "^machine  *[0-9.]* of its $(nproc) CPUs busy with other work on average while recording$" &&
	ok "sqlite3: info text shows the other work on the machine" ||
	fail "sqlite3: info text: $("$AT" info sq.zst | grep '^machine')"

# ---- shorter than one sampling period: start, peak and end all the same -------------
"$REC" -q -o true.zst /bin/true || fail "allocrec /bin/true exit $?"
describe short true.zst
check "/bin/true: start, peak and end RSS recorded, at least the start and end samples" \
	'd[0]["start_rss_bytes"] and d[0]["peak_rss_bytes"] and d[0]["end_rss_bytes"] and
	 d[0]["process_end_time_ns"] and d[0]["rss_samples"] >= 2 and
	 d[0]["peak_rss_bytes"] >= d[0]["start_rss_bytes"]' short.info
echo "  /bin/true ran $(field short.info 'd["process_end_time_ns"]') ns, $(field short.info 'd["rss_samples"]') samples"

# ---- jemalloc: preloaded under allocrec, and linked in by Debian's redis-server -----
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
if [ -n "$JE" ]; then
	JEPATH=$(readlink -f "$JE")
	JEVER=$(dpkg-query -W -f '${Version}' libjemalloc2 2>/dev/null | sed 's/^[0-9]*://; s/-[^-]*$//')
	LD_PRELOAD=$JE "$REC" -q -o je.zst $PY -c 'x = [bytes(1000) for i in range(20000)]' || fail "allocrec jemalloc exit $?"
	describe je je.zst
	check "LD_PRELOAD jemalloc: allocator is $JEPATH, soname libjemalloc.so.2, version from mallctl starting with $JEVER" \
		"d[0]['allocator']['path'] == '$JEPATH' and d[0]['allocator']['soname'] == 'libjemalloc.so.2' and
		 d[0]['allocator']['version'].startswith('${JEVER:-5}')" je.info
	if command -v redis-server >/dev/null && ldd "$(command -v redis-server)" | grep -q libjemalloc; then
		"$REC" -q -o redis.zst redis-server --version >/dev/null || fail "allocrec redis-server exit $?"
		describe redis redis.zst
		check "redis-server (linked against jemalloc): allocator is jemalloc, with its version" \
			"d[0]['allocator']['path'] == '$JEPATH' and d[0]['allocator']['version'] != ''" redis.info
	else
		echo "note: no redis-server linked against jemalloc: that case skipped"
	fi
else
	echo "note: libjemalloc.so.2 not installed: jemalloc cases skipped"
fi

# ---- a fork child has its own start and peak ----------------------------------------
cat >fork.py <<'PY'
import os, time
pid = os.fork()
if pid == 0:
    y = [bytes([i % 256]) * (1 << 20) for i in range(40)]
    time.sleep(0.1)
    os._exit(0)
os.waitpid(pid, 0)
PY
mkdir fk && (cd fk && "$REC" -q $PY ../fork.py) || fail "allocrec fork.py exit $?"
n=0
for t in fk/*.zst; do
	n=$((n + 1))
	describe "fork$n" "$t"
	check "fork trace $n: allocator glibc and its own start RSS" \
		"d[0]['allocator']['soname'] == 'libc.so.6' and d[0]['start_rss_bytes'] > 0" "fork$n.info"
done
expect_eq "fork: traces" $n 2
check "fork: the child's peak (40 MiB held) is above the parent's by 30 MiB or more" \
	'max(x["peak_rss_bytes"] for x in d) >= min(x["peak_rss_bytes"] for x in d) + 30 * 2**20' fork1.info fork2.info

# ---- a 1.0 trace: none of it, and the tools say so ------------------------------------
OLD=$ROOT/traces/samples/s1-3k.zst
if [ -f "$OLD" ]; then
	"$AT" info --json "$OLD" >old.info
	check "1.0 trace: info --json has no allocator keys (its JSON is a golden contract)" \
		'"allocator" not in d[0] and d[0]["format_version"] == "1.0"' old.info
	"$AT" info "$OLD" | grep -q "^allocator *not recorded in this trace" && ok "1.0 trace: info says not recorded" ||
		fail "1.0 trace: info text: $("$AT" info "$OLD" | grep allocator)"
	"$AT" stats --json "$OLD" >old.stats
	check "1.0 trace: stats --json process_rss is null" 'd[0]["process_rss"] is None' old.stats
fi
finish
