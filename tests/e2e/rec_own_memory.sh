#!/usr/bin/env bash
# The recorder's own memory in the PROCESS record (SPEC 6.10), the part of
# the peak RSS a prediction takes out: besides its buffers it counts the
# resident pages of the libraries that are in the process only because of
# the recorder (the shim, and what only it needs: libzstd, libunwind,
# liblzma on Debian), and never a library the program needs itself. On a
# program of a few MB those libraries are a tenth of the peak or more
# (docs/FIDELITY.md, "nginx's workers").
#
# Deterministic: no timing, no figure that depends on the machine's load.
# ALLOCRR_MEM_REPORT makes each trace's close append the parts of the figure
# it stored ("PID maps B", "PID lib FILE B", "PID later B", "PID recorder
# B", "PID peak B"); the program's own /proc/PID/smaps, read from inside it while it
# runs, is the lower bound of each library's pages (pages only accumulate),
# its mappings' sizes the upper bound.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/progs/rec_testlib.sh"
PY=/usr/bin/python3
[ -x $PY ] || { echo "skip: $PY not installed"; exit 77; }
SH=/bin/sh
[ -x /bin/dash ] && SH=/bin/dash

# expected PROG: the file names of the libraries only the shim brings into
# PROG (the shim, and what ldd says it needs that PROG does not need).
names() { ldd "$1" 2>/dev/null | awk '$1 ~ /^\// {n = $1; sub(".*/", "", n); print n; next} NF > 1 && $1 !~ /^linux-vdso/ {print $1}'; }
expected() {
	{ echo liballocrr-rec.so; names "$B/lib/liballocrr-rec.so" | grep -vxF -f <(names "$1"); } | sort -u
}
# report_libs REPORT PID: the libraries the report counted for PID.
report_libs() { awk -v p="$2" '$1 == p && $2 == "lib" {print $3}' "$1" | sort; }
report_val() { awk -v p="$2" -v k="$3" '$1 == p && $2 == k {print $3}' "$1"; }

# ---- a shell reading its own smaps: every library of the shim's is counted -------
# dash reads /proc/$$/smaps with its read builtin: no fork, no exec.
rm -f sh.report sh.zst smaps.txt
ALLOCRR_MEM_REPORT=$W/sh.report "$REC" -q --no-follow -o sh.zst $SH -c \
	'while IFS= read -r l; do printf "%s\n" "$l"; done </proc/$$/smaps >smaps.txt' ||
	fail "allocrec $SH exit $?"
[ -s smaps.txt ] || fail "$SH read nothing from its smaps (rec_fd_race.sh is about this)"
"$AT" info --json sh.zst >sh.json || fail "alloctrace info sh.zst exit $?"
pid=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' sh.json)
expect_eq "$SH: libraries counted as the recorder's" "$(report_libs sh.report "$pid" | tr '\n' ' ')" \
	"$(expected $SH | tr '\n' ' ')"
rec=$(report_val sh.report "$pid" recorder)
expect_eq "$SH: the trace's recorder memory is the report's" \
	"$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["recorder_rss_bytes"])' sh.json)" "$rec"
expect_eq "$SH: recorder memory = mappings + libraries + VmHWM's rise after the best look" \
	"$(awk -v p="$pid" '$1 == p && ($2 == "maps" || $2 == "later") {s += $3} $1 == p && $2 == "lib" {s += $4} END {print s}' sh.report)" "$rec"
$PY - "$pid" sh.report smaps.txt <<'PY' || fail "$SH: a library's pages outside what its smaps allow (above)"
import re, sys
pid, report, smaps = sys.argv[1:]
rss, size, cur = {}, {}, None
for line in open(smaps):
    m = re.match(r'^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s+(\S*)', line)
    if m:
        cur = m.group(1).rsplit('/', 1)[-1] if m.group(1).startswith('/') else None
        continue
    k = line.split(':')[0]
    if cur and k in ('Rss', 'Size'):
        d = rss if k == 'Rss' else size
        d[cur] = d.get(cur, 0) + int(line.split()[1]) * 1024
bad = 0
for line in open(report):
    p = line.split()
    if p[0] != pid or p[1] != 'lib':
        continue
    name, got = p[2], int(p[3])
    # the soname's file: libzstd.so.1 maps as libzstd.so.1.5.4
    files = [f for f in rss if f == name or f.startswith(name + '.')]
    lo, hi = sum(rss[f] for f in files), sum(size[f] for f in files)
    # its .bss beyond the file is anonymous in smaps: not in lo, may be in got
    ok = files and got >= lo and got <= hi + (1 << 20)
    print(('ok' if ok else 'FAIL') + f': {name}: counted {got}, resident in main {lo}, mapped {hi}')
    bad += not ok
sys.exit(1 if bad else 0)
PY
peak=$(report_val sh.report "$pid" peak)
[ -n "$rec" ] && [ -n "$peak" ] && [ "$rec" -gt 0 ] && [ "$rec" -lt "$peak" ] &&
	ok "$SH: recorder memory $rec below the peak $peak" || fail "$SH: recorder memory '$rec', peak '$peak'"
"$AT" info sh.zst | grep -q "^recorder memory .* MiB of the peak RSS is the recorder's own" &&
	ok "$SH: info text shows the recorder's memory" || fail "$SH: info text: $("$AT" info sh.zst | head -20)"

# ---- a program that needs one of those libraries itself: not counted ---------
# The zstd command links liblzma (Debian): its pages are the program's.
if command -v zstd >/dev/null && names "$(command -v zstd)" | grep -qx liblzma.so.5; then
	head -c 200000 /dev/zero >in.bin
	ALLOCRR_MEM_REPORT=$W/z.report "$REC" -q -o z.zst zstd -q -c in.bin >/dev/null || fail "allocrec zstd exit $?"
	zpid=$("$AT" info --json z.zst | $PY -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	expect_eq "zstd: libraries counted as the recorder's (not liblzma)" \
		"$(report_libs z.report "$zpid" | tr '\n' ' ')" "$(expected "$(command -v zstd)" | tr '\n' ' ')"
	report_libs z.report "$zpid" | grep -qx liblzma.so.5 && fail "zstd: liblzma counted as the recorder's"
else
	echo "note: no zstd command linking liblzma: the shared-library case is not checked"
fi

# ---- ... or loads one later (dlopen): python's lzma module needs liblzma --------
libs_of() {
	local n=$1; shift
	ALLOCRR_MEM_REPORT=$W/$n.report "$REC" -q --no-follow -o $n.zst "$@" || fail "allocrec $* exit $?"
	local p
	p=$("$AT" info --json $n.zst | $PY -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	report_libs $n.report "$p" | tr '\n' ' '
}
if $PY -c 'import lzma' 2>/dev/null && $PY -c 'import sys; sys.exit("lzma" in sys.modules)'; then
	plain=$(libs_of py0 $PY -c 'import sys')
	case " $plain " in *" liblzma.so.5 "*) ok "python3 without lzma: liblzma is the recorder's" ;;
	*) echo "note: liblzma is not among the shim's libraries here ($plain)" ;; esac
	with=$(libs_of py1 $PY -c 'import lzma')
	case " $with " in *" liblzma.so.5 "*) fail "python3 -c 'import lzma': liblzma still counted ($with)" ;;
	*) ok "python3 -c 'import lzma': liblzma is the program's once _lzma is loaded ($with)" ;; esac
	case " $with " in *" liballocrr-rec.so "*) ok "python3: the shim is counted" ;;
	*) fail "python3: the shim not counted ($with)" ;; esac
fi
finish
