#!/usr/bin/env bash
# The shell conventions every allocrr command keeps (common/ar_cli.h, issue
# 13), checked once per convention for each of allocrec, alloctrace (every
# subcommand), allocreplay and allocreport (and `allocreport merge`):
#   1. --version prints "TOOL (allocrr) VERSION" (the Makefile's), exit 0;
#   2. getopt_long: --help on stdout, exit 0, in a layout help2man turns into
#      a man page; --opt=value and --opt value alike, options before or after
#      operands (allocrec stops at PROG: its options are PROG's);
#   3. errors read "TOOL: PATH: message", naming the file once, and never
#      start with the path the tool was run by;
#   4. a bad option, a missing or bad value, a missing operand: one line
#      saying what is wrong, then "Try 'TOOL --help' for more information.",
#      exit 1 (alloctrace verify: 2, its 1 meaning "truncated");
#   5. "-" is standard output wherever a file is written, or is refused in
#      one line when it cannot be (a database; allocrec's trace), and no file
#      named "-" ever appears;
#   6. allocrec ends with one line naming the next command, with the actual
#      trace, pasteable; -q (allocrec, allocreplay, alloctrace gen) prints
#      nothing on stderr;
#   7. exit statuses: 0 ok, 1 usage, 2 runtime.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
for t in allocrec alloctrace allocreport; do
	[ -x "$B/bin/$t" ] || { echo "missing $B/bin/$t: build first"; exit 77; }
done
REC="$B/bin/allocrec" AT="$B/bin/alloctrace" REP="$B/bin/allocreport"
TOOLS="allocrec alloctrace allocreplay allocreport"
VERSION=$(sed -n 's/^ALLOCRR_VERSION := *//p' "$ROOT/Makefile")
S1="$ROOT/traces/samples/s1-3k.zst"
cp "$ROOT/README.md" README.md
cp "$S1" s1.zst

# run TAG CMD...: stdout in TAG.out, stderr in TAG.err; prints the status.
run() {
	local tag=$1; shift
	"$@" >"$tag.out" 2>"$tag.err" </dev/null
	echo $?
}
# usage_error WHAT WANT_STATUS TOOL CMD...: one line on stderr saying what is
# wrong ("TOOL: ..."), then the hint; nothing on stdout; the status.
usage_error() {
	local what=$1 want=$2 tool=$3; shift 3
	local rc; rc=$(run ue "$@")
	local lines; lines=$(wc -l <ue.err)
	if [ "$rc" = "$want" ] && [ "$lines" = 2 ] && [ ! -s ue.out ] &&
		head -n 1 ue.err | grep -q "^$tool: ." &&
		[ "$(tail -n 1 ue.err)" = "Try '$tool --help' for more information." ]; then
		ok "$what: $(head -n 1 ue.err)"
	else
		fail "$what: exit $rc (want $want), $lines stderr lines (want 2), stdout $(wc -c <ue.out) bytes: $(head -n 3 ue.err)"
	fi
}
no_dash_file() { [ ! -e ./- ] && ok "$1: no file named '-'" || { fail "$1: a file named '-' was created"; rm -f ./-; }; }

# A results database for allocreport, and a few traces.
rc=$(run mkdb "$B/bin/allocreplay" -q s1.zst -a glibc --repeat 1 --db r.db)
[ "$rc" = 0 ] && [ -s r.db ] || { fail "allocreplay s1.zst -a glibc: exit $rc: $(head -n 3 mkdb.err)"; }

# ---- 1. --version -----------------------------------------------------------------
for t in $TOOLS; do
	rc=$(run v "$B/bin/$t" --version)
	expect_eq "$t --version: exit" "$rc" 0
	expect_eq "$t --version" "$(cat v.out)" "$t (allocrr) $VERSION"
done
expect_eq "alloctrace info --version" "$("$AT" info --version)" "alloctrace (allocrr) $VERSION"
expect_eq "allocreport merge --version" "$("$REP" merge --version)" "allocreport (allocrr) $VERSION"

# ---- 2. --help and getopt_long ---------------------------------------------------------
for t in $TOOLS; do
	rc=$(run h "$B/bin/$t" --help)
	if [ "$rc" = 0 ] && [ ! -s h.err ] && grep -q "^Usage: $t " h.out && grep -qE '^  -h, --help {2,}' h.out; then
		ok "$t --help: usage and help2man-style option lines on stdout"
	else
		fail "$t --help: exit $rc, $(head -n 1 h.out), stderr: $(head -n 1 h.err)"
	fi
	"$B/bin/$t" -h | cmp -s - h.out && ok "$t -h = --help" || fail "$t -h differs from --help"
done
for c in info dump stats stacks verify gen corpus scrub import tree; do
	"$AT" $c --help >h.out 2>h.err && grep -q "^Usage: alloctrace $c" h.out && [ ! -s h.err ] &&
		ok "alloctrace $c --help" || fail "alloctrace $c --help: $(head -n 1 h.out h.err)"
done
"$REP" merge --help | grep -q "^Usage: allocreport merge OUT.db IN.db" && ok "allocreport merge --help" ||
	fail "allocreport merge --help"
if command -v help2man >/dev/null; then
	for t in $TOOLS; do
		help2man -N "$B/bin/$t" >"$t.1" 2>h2m.err && grep -q '^\.SH SYNOPSIS' "$t.1" && grep -q '^\.SH OPTIONS' "$t.1" &&
			grep -q "^\\\\fB\\\\-\\\\-version\\\\fR" "$t.1" && ok "help2man $t: SYNOPSIS and OPTIONS" ||
			fail "help2man $t: no SYNOPSIS or OPTIONS section ($(head -n 1 h2m.err))"
	done
else
	echo "note: help2man not installed; man pages not checked"
fi
# --opt=value and --opt value, options before or after the operand.
"$AT" stats s1.zst --top 3 >a.txt && "$AT" stats --top=3 s1.zst >b.txt && cmp -s a.txt b.txt &&
	ok "alloctrace stats: --top 3 after FILE = --top=3 before" || fail "alloctrace stats --top forms differ"
"$AT" dump --extra s1.zst | head -n 3 >a.txt && "$AT" dump s1.zst --extra | head -n 3 >b.txt && cmp -s a.txt b.txt &&
	ok "alloctrace dump: --extra before or after FILE" || fail "alloctrace dump --extra position matters"
"$REP" --format=csv --db=r.db >a.txt && "$REP" --db r.db --format csv >b.txt && cmp -s a.txt b.txt &&
	ok "allocreport: --db=FILE --format=csv = --db FILE --format csv" || fail "allocreport option forms differ"
rc=$(run rep2 "$B/bin/allocreplay" s1.zst -q --repeat=1 -a glibc --db=r2.db)
expect_eq "allocreplay: options after TRACE, --opt=value" "$rc" 0
# allocrec stops at PROG: what follows is PROG's, even --version.
rc=$(run stop "$REC" -q -o stop.zst sh -c 'echo "$@"' sh --version --bogus)
expect_eq "allocrec stops at PROG: exit" "$rc" 0
expect_eq "allocrec stops at PROG: PROG got its options" "$(cat stop.out)" "--version --bogus"

# ---- 3. errors: "TOOL: PATH: message", the path once -----------------------------------
# PATH: a file that is not a trace (or not a database) given by a relative name.
# names_once WHAT TOOL FILE: stderr has one line naming FILE, "TOOL: FILE: ...",
# and "FILE: " only there (a suggested command may name FILE again).
names_once() {
	local n; n=$(grep -c "$3" e.err)
	if [ "$n" = 1 ] && grep "$3" e.err | grep -q "^$2: $3: ." && [ "$(grep -o "$3: " e.err | wc -l)" = 1 ]; then
		ok "$1: $(grep "$3" e.err)"
	else
		fail "$1: want one line '$2: $3: ...' naming it once, got: $(head -n 3 e.err)"
	fi
}
for c in info dump stats stacks verify tree; do
	rc=$(run e "$AT" $c README.md)
	expect_eq "alloctrace $c README.md: exit" "$rc" 2
	names_once "alloctrace $c README.md" alloctrace README.md
done
rc=$(run e "$AT" scrub README.md -o scrubbed.zst); expect_eq "alloctrace scrub README.md: exit" "$rc" 2
names_once "alloctrace scrub README.md" alloctrace README.md
rc=$(run e "$AT" import --from mtrace README.md -o imported.zst); expect_eq "alloctrace import README.md: exit" "$rc" 2
names_once "alloctrace import README.md" alloctrace README.md
rc=$(run e "$AT" info no-such.zst); expect_eq "alloctrace info no-such.zst: exit" "$rc" 2
names_once "alloctrace info no-such.zst" alloctrace no-such.zst
rc=$(run e "$B/bin/allocreplay" -q README.md -a glibc --db e.db); expect_eq "allocreplay README.md: exit" "$rc" 2
names_once "allocreplay README.md" allocreplay README.md
cp README.md junk.db
rc=$(run e "$REP" --db junk.db); expect_eq "allocreport --db junk.db: exit" "$rc" 2
names_once "allocreport --db junk.db" allocreport junk.db
rc=$(run e "$REC" ./no-such-prog); expect_eq "allocrec ./no-such-prog: exit" "$rc" 127
names_once "allocrec ./no-such-prog" allocrec ./no-such-prog
# Never the path the tool was run by (getopt's own messages use argv[0]).
for t in $TOOLS; do
	"$B/bin/$t" --bogus </dev/null >/dev/null 2>e.err
	grep -q "$B/bin" e.err && fail "$t: a message starts with its path: $(head -n 1 e.err)" ||
		ok "$t: messages say '$t:', not its path"
done

# ---- 4. bad options: one line and the hint, exit 1 ---------------------------------------
for t in $TOOLS; do
	usage_error "$t --bogus" 1 $t "$B/bin/$t" --bogus
done
for c in info dump stats stacks gen corpus scrub import tree; do
	usage_error "alloctrace $c --bogus" 1 alloctrace "$AT" $c --bogus s1.zst
done
usage_error "alloctrace verify --bogus (verify: 2)" 2 alloctrace "$AT" verify --bogus s1.zst
usage_error "allocreport merge --bogus" 1 allocreport "$REP" merge --bogus
usage_error "alloctrace: no command" 1 alloctrace "$AT"
usage_error "alloctrace: unknown command" 1 alloctrace "$AT" frob
# a missing value
usage_error "allocrec --level (no value)" 1 allocrec "$REC" --level
usage_error "alloctrace stats --top (no value)" 1 alloctrace "$AT" stats s1.zst --top
usage_error "alloctrace gen -o (no value)" 1 alloctrace "$AT" gen S1 -o
usage_error "allocreplay --repeat (no value)" 1 allocreplay "$B/bin/allocreplay" s1.zst --repeat
usage_error "allocreport --db (no value)" 1 allocreport "$REP" --db
# a bad value
usage_error "allocrec --level 99" 1 allocrec "$REC" --level 99 true
usage_error "allocrec --stacks=x" 1 allocrec "$REC" --stacks=x true
usage_error "alloctrace stats --top x" 1 alloctrace "$AT" stats s1.zst --top x
usage_error "alloctrace gen --threads x" 1 alloctrace "$AT" gen S1 --threads x -o g.zst
usage_error "alloctrace gen NOPE" 1 alloctrace "$AT" gen NOPE -o g.zst
usage_error "alloctrace dump --extra=1" 1 alloctrace "$AT" dump --extra=1 s1.zst
usage_error "allocreplay --repeat x" 1 allocreplay "$B/bin/allocreplay" s1.zst --repeat x
usage_error "allocreport --format xml" 1 allocreport "$REP" --format xml
# a missing operand
usage_error "allocrec without PROG" 1 allocrec "$REC" -q
usage_error "alloctrace info without FILE" 1 alloctrace "$AT" info
usage_error "alloctrace gen without -o" 1 alloctrace "$AT" gen S1
usage_error "alloctrace corpus add without --program" 1 alloctrace "$AT" corpus add MANIFEST s1.zst
usage_error "alloctrace verify without FILE (verify: 2)" 2 alloctrace "$AT" verify
usage_error "allocreplay without TRACE" 1 allocreplay "$B/bin/allocreplay"
usage_error "allocreport merge without IN.db" 1 allocreport "$REP" merge out.db
[ ! -e g.zst ] && ok "no trace left by a refused gen" || fail "refused gen left g.zst"

# ---- 5. "-" is standard output -----------------------------------------------------------
rc=$(run html "$REP" --db r.db --html -)
expect_eq "allocreport --html -: exit" "$rc" 0
head -c 15 html.out | grep -q '<!DOCTYPE html>' && grep -q '</html>' html.out &&
	ok "allocreport --html -: the page on stdout ($(wc -c <html.out) bytes)" || fail "allocreport --html -: stdout is not the page"
expect_eq "allocreport --html -: nothing on stderr" "$(cat html.err)" ""
no_dash_file "allocreport --html -"
usage_error "allocreport --html - --format csv (both on stdout)" 1 allocreport "$REP" --db r.db --html - --format csv
usage_error "allocreport merge - (a database is no stream)" 1 allocreport "$REP" merge - r.db
grep -q "standard output" ue.err && ok "allocreport merge -: says why" || fail "allocreport merge -: $(head -n 1 ue.err)"
no_dash_file "allocreport merge -"
usage_error "allocreport --db -" 1 allocreport "$REP" --db -
usage_error "allocreplay --db -" 1 allocreplay "$B/bin/allocreplay" s1.zst -a glibc --db -
no_dash_file "allocreplay --db -"
rc=$(run recstream "$REC" -q -o - true)
expect_eq "allocrec -o -: exit" "$rc" 0
expect_eq "allocrec -o -: the trace on stdout verifies" "$("$AT" verify recstream.out >/dev/null; echo $?)" 0
no_dash_file "allocrec -o -"
usage_error "allocrec -o - --output-for (only PROG's image streams)" 1 allocrec "$REC" -o - --output-for x true
"$AT" gen S1 --ops 3000 -q -o gen.zst || fail "alloctrace gen -o gen.zst"
rc=$(run gen "$AT" gen S1 --ops 3000 -q -o -)
expect_eq "alloctrace gen -o -: exit" "$rc" 0
cmp -s gen.out gen.zst && ok "alloctrace gen -o -: the same trace on stdout" || fail "alloctrace gen -o -: stdout differs from -o FILE"
"$AT" gen S1 --ops 3000 -q -o - | cat >piped.zst
cmp -s piped.zst gen.zst && ok "alloctrace gen -o - into a pipe: the same trace" || fail "alloctrace gen -o - | cat differs"
expect_eq "alloctrace gen -o -: verifies" "$("$AT" verify piped.zst >/dev/null; echo $?)" 0
no_dash_file "alloctrace gen -o -"

# ---- 6. allocrec's next command; -q ---------------------------------------------------------
rc=$(run next "$REC" -o t.zst true)
expect_eq "allocrec -o t.zst true: exit" "$rc" 0
next=$(grep '^allocrec: next: ' next.err)
expect_eq "allocrec: one 'next:' line" "$(grep -c '^allocrec: next: ' next.err)" 1
echo "$next" | grep -q 'allocreplay t.zst ' && echo "$next" | grep -q 'alloctrace stats t.zst' &&
	ok "allocrec: $next" || fail "allocrec next line does not name t.zst: $next"
expect_eq "allocrec: the next line comes last" "$(tail -n 1 next.err)" "$next"
# A name with a space is quoted, so the line can be pasted.
"$REC" -o "my trace.zst" true 2>next.err
cmd=$(sed -n "s/^allocrec: next: .*(or: \(.*\))$/\1/p" next.err)
(PATH="$B/bin:$PATH" eval "$cmd") >/dev/null 2>&1 && ok "allocrec: pasting '$cmd' works" ||
	fail "allocrec: the next line's command fails: $cmd"
rc=$(run quiet "$REC" -q -o q.zst true)
expect_eq "allocrec -q: exit" "$rc" 0
expect_eq "allocrec -q: nothing on stderr" "$(cat quiet.err)" ""
rc=$(run quiet "$B/bin/allocreplay" -q s1.zst -a glibc --repeat 1 --db q.db)
expect_eq "allocreplay -q: exit" "$rc" 0
expect_eq "allocreplay -q: nothing on stderr" "$(cat quiet.err)" ""
rc=$(run quiet "$AT" gen S1 --ops 3000 -q -o q.zst)
expect_eq "alloctrace gen -q: nothing on stderr" "$rc:$(cat quiet.err)" "0:"

# ---- 7. exit statuses ------------------------------------------------------------------------
expect_eq "alloctrace verify: valid" "$("$AT" verify s1.zst >/dev/null 2>&1; echo $?)" 0
head -c 1000 s1.zst >cut.zst
expect_eq "alloctrace verify: truncated" "$("$AT" verify cut.zst >/dev/null 2>&1; echo $?)" 1
expect_eq "alloctrace verify: not a trace" "$("$AT" verify README.md >/dev/null 2>&1; echo $?)" 2
expect_eq "allocreport: runtime error" "$("$REP" --db no-such.db >/dev/null 2>&1; echo $?)" 2
expect_eq "allocrec: PROG's status" "$("$REC" -q sh -c 'exit 7' 2>/dev/null; echo $?)" 7
finish
