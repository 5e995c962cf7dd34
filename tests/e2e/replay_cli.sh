#!/usr/bin/env bash
# allocreplay's command line follows the conventions every allocrr tool
# shares (common/ar_cli.h): --version; --help on stdout; a bad option or
# value is one line and a hint on stderr, exit 1, never the usage text;
# errors name a path once; "--db -" is refused (SQLite needs a file) without
# creating a file named "-"; options may come before or after the traces;
# and the worker is found in the build tree and in an installed layout
# (PREFIX/libexec/allocrr/), with an error that names the places tried.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"

# 1. --version and --help.
out=$("$AR" --version 2>err.txt)
expect_eq "--version: exit" $? 0
[[ $out =~ ^allocreplay\ \(allocrr\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && ok "--version: $out" || fail "--version: '$out'"
"$AR" --help >help.txt 2>err.txt
expect_eq "--help: exit" $? 0
head -1 help.txt | grep -q "^Usage: allocreplay " && ok "--help: usage line on stdout" || fail "--help: $(head -2 help.txt)"
grep -q "^  -a, --allocators=NAMES  " help.txt && grep -q "^  -q, --quiet  " help.txt &&
	grep -q "^      --version  " help.txt && ok "--help: option lines for help2man" || fail "--help: option lines"
expect_eq "--help: nothing on stderr" "$(wc -c <err.txt)" 0

# 2. A bad command line: one line, the hint, exit 1.
hint="Try 'allocreplay --help' for more information."
bad() { # what, expected first line, args...
	local what=$1 want=$2
	shift 2
	"$AR" "$@" >out.txt 2>err.txt
	local rc=$?
	expect_eq "$what: exit" $rc 1
	expect_eq "$what: message" "$(head -1 err.txt)" "$want"
	expect_eq "$what: hint" "$(sed -n 2p err.txt)" "$hint"
	expect_eq "$what: two lines, no usage" "$(wc -l <err.txt)" 2
	expect_eq "$what: nothing on stdout" "$(wc -c <out.txt)" 0
}
bad "unknown option" "allocreplay: unknown option '--bogus'" "$SAMPLE" --bogus
bad "unknown short option" "allocreplay: unknown option '-x'" -x "$SAMPLE"
bad "missing value" "allocreplay: option '--db' needs a value" "$SAMPLE" --db
bad "value to a flag" "allocreplay: option '--json' takes no value" --json=1 "$SAMPLE"
bad "bad --repeat" "allocreplay: --repeat needs a positive number, not '0'" --repeat 0 "$SAMPLE"
bad "bad --touch" "allocreplay: --touch must be none, first, pages, all or auto, not 'some'" --touch=some "$SAMPLE"
bad "no trace" "allocreplay: no trace given" -a glibc
bad "--db -" "allocreplay: --db needs a file: the results database cannot be standard output (--json prints the runs there)" \
	"$SAMPLE" -a glibc --db -
[ -e ./- ] && fail "--db -: a file named '-' was created" || ok "--db -: no file named '-'"

# 3. Errors name the path once.
mkdir adir
"$AR" adir -a glibc --db e.db >/dev/null 2>err.txt
expect_eq "a directory as trace: exit" $? 2
expect_eq "a directory as trace: message" "$(cat err.txt)" "allocreplay: adir: not a regular file"

# 4. Options before and after the traces, long options with =, -q.
"$AR" "$SAMPLE" -a glibc --repeat 1 --db a.db -q >/dev/null 2>err.txt
expect_eq "options after the trace: exit" $? 0
"$AR" -q --allocators=glibc --repeat=1 --db=a.db "$SAMPLE" >/dev/null 2>err.txt
expect_eq "options before the trace: exit" $? 0
expect_eq "both stored their run" "$(q a.db 'SELECT count(*) FROM runs WHERE status = "ok"')" 2

# 5. Finding the worker: build tree (above), installed layout, nowhere.
mkdir -p inst/bin inst/libexec/allocrr bare/bin
cp "$AR" inst/bin/ && cp "$B/bin/allocreplay-worker" inst/libexec/allocrr/ && cp "$AR" bare/bin/
env -u ALLOCRR_WORKER inst/bin/allocreplay "$SAMPLE" -a glibc --repeat 1 --db i.db >/dev/null 2>err.txt
expect_eq "installed layout: exit" $? 0
expect_eq "installed layout: run ok" "$(q i.db 'SELECT status FROM runs')" ok
env -u ALLOCRR_WORKER bare/bin/allocreplay "$SAMPLE" -a glibc --repeat 1 --db n.db >/dev/null 2>err.txt
expect_eq "no worker: exit" $? 2
grep -q "^allocreplay: cannot find allocreplay-worker: tried $T/bare/bin/allocreplay-worker and $T/bare/bin/../libexec/allocrr/allocreplay-worker" err.txt &&
	ok "no worker: the places tried are named" || fail "no worker: $(cat err.txt)"
ALLOCRR_WORKER=$T/nosuch "$AR" "$SAMPLE" -a glibc --repeat 1 --db n.db >/dev/null 2>err.txt
expect_eq "ALLOCRR_WORKER missing: exit" $? 2
grep -q "^allocreplay: $T/nosuch: cannot execute the worker named by ALLOCRR_WORKER" err.txt &&
	ok "ALLOCRR_WORKER missing: named" || fail "ALLOCRR_WORKER missing: $(cat err.txt)"
finish
