#!/usr/bin/env bash
# make install as a packager uses it: into a temporary prefix, then
#   - every tool runs from there (--version), allocreplay finds its worker in
#     libexec/allocrr and the allocators in lib/allocrr (a real replay);
#   - a small program that reads traces compiles against the installed
#     header with nothing but `pkg-config --cflags --libs allocrr-trace`, and
#     counts the events of a trace as alloctrace does;
#   - `man TOOL` finds the four man pages;
#   - DESTDIR stages the same tree under DESTDIR, nothing elsewhere;
#   - make uninstall removes every file install wrote.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ALLOCRR_BUILD:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# A make started from make test's recipe must not join its jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL
mk() { make -C "$root" --no-print-directory BUILD="$build" "$@"; }

prefix=$work/prefix
mk install PREFIX="$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "make install"; exit 1; }
for t in allocrec alloctrace allocreplay allocreport; do
	[ -x "$prefix/bin/$t" ] || fail "bin/$t not installed"
	v=$("$prefix/bin/$t" --version 2>&1) || fail "$t --version exits $?"
	[[ $v == "$t (allocrr) "[0-9]* ]] || fail "$t --version says '$v'"
	MANPATH=$prefix/share/man man -P cat "$t" >"$work/$t.man" 2>/dev/null || fail "man $t"
	grep -q -- '--help' "$work/$t.man" || fail "man $t has no options section"
done
[ -x "$prefix/libexec/allocrr/allocreplay-worker" ] || fail "worker not in libexec/allocrr"
[ ! -e "$prefix/bin/allocreplay-worker" ] || fail "worker installed as a user command"
for so in liballocrr-rec.so liballocrr-pool.so liballocrr-arena.so liballocrr-tlscache.so liballocrr-freelist.so; do
	[ -f "$prefix/lib/allocrr/$so" ] || fail "lib/allocrr/$so not installed"
done

# The installed tools, away from the build tree: record, replay, report.
cd "$work"
env -u ALLOCRR_BUILD -u ALLOCRR_WORKER -u ALLOCRR_LIBDIR -u ALLOCRR_SHIM \
	"$prefix/bin/allocrec" -q -o rec.zst "$build/traces/demo_server" 2000 2 || fail "installed allocrec"
env -u ALLOCRR_BUILD -u ALLOCRR_WORKER -u ALLOCRR_LIBDIR \
	"$prefix/bin/allocreplay" -q rec.zst -a glibc,pool --repeat 1 --db i.db >replay.txt 2>&1 ||
	{ cat replay.txt; fail "installed allocreplay (worker and allocators found from the prefix)"; }
grep -q '^pool ' replay.txt || fail "no pool row in the installed replay's table"

# A reader built from the installed header and pkg-config file alone.
cat >reader.c <<'C'
#include <stdio.h>
#include <ar_trace.h>
int main(int argc, char **argv)
{
	ar_reader_t *r;
	ar_error_t err;
	if (argc != 2 || ar_reader_open(&r, argv[1], &err) != 0)
		return 2;
	ar_event_t e;
	unsigned long long n = 0;
	int rc;
	while ((rc = ar_reader_next(r, &e)) == 1)
		n++;
	printf("%llu\n", n);
	ar_reader_close(r);
	return rc < 0;
}
C
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
cc -std=c11 -o reader reader.c $(pkg-config --cflags --libs allocrr-trace) || fail "reader does not build from pkg-config"
want=$("$prefix/bin/alloctrace" info --json "$root/traces/samples/s1-3k.zst" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
got=$(./reader "$root/traces/samples/s1-3k.zst") || fail "reader exits $?"
[ "$got" = "$want" ] || fail "reader counts '$got' events, alloctrace '$want'"
[ "$(pkg-config --modversion allocrr-trace)" = "$("$prefix/bin/alloctrace" --version | awk '{print $3}')" ] ||
	fail "pkg-config version differs from the tools'"

# DESTDIR: the same tree, staged; nothing written under the real prefix.
mk install PREFIX=/opt/allocrr-test DESTDIR="$work/stage" >"$work/stage.log" 2>&1 || fail "make install DESTDIR"
[ ! -e /opt/allocrr-test ] || fail "DESTDIR install wrote to /opt/allocrr-test"
(cd "$prefix" && find . -type f | sort) >"$work/tree.prefix"
(cd "$work/stage/opt/allocrr-test" && find . -type f | sort) >"$work/tree.stage"
diff "$work/tree.prefix" "$work/tree.stage" || fail "DESTDIR tree differs from the prefix tree"
grep -q '^prefix=/opt/allocrr-test$' "$work/stage/opt/allocrr-test/lib/pkgconfig/allocrr-trace.pc" ||
	fail "staged pkg-config file does not name the final prefix"

mk uninstall PREFIX="$prefix" >"$work/uninstall.log" 2>&1 || fail "make uninstall"
left=$(find "$prefix" -type f | wc -l)
[ "$left" = 0 ] || { find "$prefix" -type f; fail "make uninstall left $left files"; }

[ $fails = 0 ] && echo "ok: installed, used, staged and uninstalled"
exit $((fails > 0))
