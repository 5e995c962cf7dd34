#!/usr/bin/env bash
# allocreplay's progress line (replayer/progress.h): on a terminal, compiling
# and every run show a percentage, the counts and the time elapsed, and end
# on a 100% line (the run's line is fed by the worker's shared op counter,
# so reaching 100% proves the counter made it across); piped, with -q, or
# with TERM=dumb nothing of it is written; and the stored results do not
# depend on it (same ops, calls and checksum; under --counters sim, when
# valgrind is installed, the same harness instruction counts). Assertions
# are on the final lines, never on how many redraws happened.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || { echo "python3 not installed (runs a pseudo-terminal)"; exit 77; }

# in_pty CMD...: run CMD with stdin, stdout and stderr on a new pseudo-
# terminal; print everything it wrote; exit with its status.
in_pty() {
	$PY - "$@" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = bytearray()
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:  # EIO: the terminal's last user is gone
        break
    if not b:
        break
    out += b
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st))
EOF
}
has() { # file, ERE, what
	if grep -aqE -- "$2" "$1"; then ok "$3"; else fail "$3: /$2/ not in $1: $(tr '\r\033' '|~' <"$1" | head -c 600)"; fi
}
lacks() { # file, ERE, what
	if grep -aqE -- "$2" "$1"; then fail "$3: /$2/ in $1: $(tr '\r\033' '|~' <"$1" | head -c 600)"; else ok "$3"; fi
}

"$B/bin/alloctrace" gen D --ops 150000 -q -o t.zst || { fail "alloctrace gen D"; finish; }
cp "$SAMPLE" two.zst # two threads: their counts add up in one counter

# 1. On a terminal: compile and run lines, each ending at 100%.
in_pty "$AR" t.zst two.zst -a glibc,jemalloc --repeat 1 --db tty.db >tty.txt
expect_eq "terminal: exit" $? 0
tr '\r' '\n' <tty.txt >tty.lines # one redraw per line
has tty.lines '^.\[Kcompiling t\.zst: +[0-9]+% \([0-9.]+k?/150k events\) [0-9]+:[0-9]{2} elapsed' \
	"terminal: compile line with percentage, counts and elapsed time"
has tty.lines '^.\[Kcompiling t\.zst: 100% \(150k/150k events\)' "terminal: compile reaches 100%"
has tty.lines '^.\[K\[1/2\] glibc rep 1 on t\.zst: 100% \([0-9.]+k/[0-9.]+k ops\) [0-9]+:[0-9]{2} elapsed' \
	"terminal: run 1 reaches 100% of its ops, with elapsed time"
has tty.lines '^.\[K\[2/2\] jemalloc rep 1 on t\.zst: 100% ' "terminal: run 2 reaches 100%"
has tty.lines '^.\[K\[1/2\] glibc rep 1 on two\.zst: 100% \(3\.0[0-9]k/3\.0[0-9]k ops\)' \
	"terminal: both threads' ops counted (two-thread trace)"
has tty.lines '^trace t\.zst ' "terminal: the table follows"
# "\r\033[K" right before the table's line: the line was erased, not left under it.
tr '\r\n\033' 'RNE' <tty.txt | grep -qE 'elapsedRE\[KRN(RN)*trace t\.zst' &&
	ok "terminal: the last progress line erased before the table" ||
	fail "terminal: progress line not erased: $(tr '\r\033' '|~' <tty.txt | head -c 600)"

# 2. Piped: not a single progress byte.
"$AR" t.zst two.zst -a glibc,jemalloc --repeat 1 --db pipe.db >pipe.out 2>pipe.err
expect_eq "piped: exit" $? 0
lacks pipe.err 'elapsed|%|'$'\r' "piped: no progress on stderr"
lacks pipe.out 'elapsed|'$'\r' "piped: no progress on stdout"

# 3. -q on a terminal, and a terminal that cannot redraw (TERM=dumb).
in_pty "$AR" t.zst -a glibc --repeat 1 -q --db q.db >q.txt
expect_eq "-q: exit" $? 0
lacks q.txt 'elapsed' "-q: no progress on a terminal"
has q.txt '^trace t\.zst ' "-q: the table still printed"
in_pty env TERM=dumb "$AR" t.zst -a glibc --repeat 1 --db dumb.db >dumb.txt
lacks dumb.txt 'elapsed' "TERM=dumb: no progress"

# 4. Results do not depend on the progress line.
runs() { q "$1" "SELECT t.name, r.allocator, r.status, r.ops, r.op_checksum FROM runs r
	JOIN traces t ON t.sha256 = r.trace_sha256 ORDER BY t.name, r.allocator"; }
expect_eq "same runs and op counts with and without progress" "$(runs tty.db)" "$(runs pipe.db)"
[ -n "$(runs tty.db)" ] && ok "runs stored" || fail "no runs stored"
if command -v valgrind >/dev/null; then
	"$B/bin/alloctrace" gen D --ops 20000 -q -o s.zst || fail "alloctrace gen D (sim)"
	in_pty "$AR" s.zst -a glibc --repeat 1 --counters sim --db simtty.db >sim.txt
	expect_eq "sim on a terminal: exit" $? 0
	tr '\r' '\n' <sim.txt | grep -aqE '\[1/1\] glibc rep 1 on s\.zst: 100% ' &&
		ok "sim: the run under valgrind reaches 100%" || fail "sim: no 100% line: $(tr '\r\033' '|~' <sim.txt | head -c 600)"
	"$AR" s.zst -a glibc --repeat 1 --counters sim --db simpipe.db >/dev/null 2>&1
	expect_eq "sim piped: exit" $? 0
	ctr() { q "$1" "SELECT c.name || '=' || c.value FROM counters c WHERE c.name = 'instructions_other'"; }
	expect_eq "sim: harness instructions the same with and without progress" "$(ctr simtty.db)" "$(ctr simpipe.db)"
else
	ok "valgrind not installed: the --counters sim checks are skipped"
fi
finish
