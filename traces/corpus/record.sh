#!/usr/bin/env bash
# record.sh — `make corpus`: re-record the real-program traces of this
# corpus with allocrec and rewrite their MANIFEST entries (other entries of
# the manifest, e.g. traces another team added, are kept).
#
# Each workload runs in a fresh scratch directory holding the files of
# inputs/ plus the two generated below, with LC_ALL=C and, for python,
# PYTHONHASHSEED=0 and PYTHONMALLOC=malloc (pymalloc off: every Python
# object is a heap call, as when allocators are compared on python). The
# manifest's command column is the exact command run there; gcc forks cc1
# and as, and the corpus keeps cc1's trace (the compiler proper).
# Missing programs are installed with apt-get when run as root.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${ALLOCRR_BUILD:-build}
REC=$B/bin/allocrec AT=$B/bin/alloctrace
CORPUS=traces/corpus MANIFEST=traces/corpus/MANIFEST
for t in "$REC" "$AT"; do [ -x "$t" ] || { echo "record.sh: $t missing: run make first" >&2; exit 1; }; done

need=()
for p in /usr/bin/python3:python3 sqlite3:sqlite3 gcc:gcc sort:coreutils xz:xz-utils; do
	command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	else
		echo "record.sh: install these first: sudo apt-get install -y ${need[*]}" >&2; exit 1
	fi
fi

W=$(mktemp -d /tmp/allocrr-corpus.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp $CORPUS/inputs/* "$W/"
# Generated inputs (deterministic).
seq 1 120000 | awk '{printf "%d,w%d\n", ($1 * 7919) % 100003, ($1 * 31) % 977}' >"$W/sort-input.txt"
seq 1 1500000 >"$W/xz-input.txt"

# "package version" of the Debian package that ships the binary BIN runs
# (by its path: python3 on PATH may be a pyenv shim, never /usr/bin/python3).
pkg_version() {
	local bin pkg
	bin=$(readlink -f "$(command -v "$1")")
	pkg=$(dpkg -S "$bin" 2>/dev/null | head -n 1 | cut -d: -f1)
	[ -n "$pkg" ] && echo "$pkg $(dpkg-query -W -f='${Version}' "$pkg")" || echo "unknown"
}

# record NAME PROGRAM STDIN COMMAND...: run COMMAND (stdin from STDIN, or
# /dev/null) under allocrec in $W and add $CORPUS/NAME.zst to the manifest. The trace kept is the one whose
# header command starts with KEEP (default: the main one).
record() {
	local name=$1 prog=$2 stdin=$3; shift 3
	local at; at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	rm -rf "$W/out" && mkdir "$W/out"
	(cd "$W" && env LC_ALL=C PYTHONHASHSEED=0 PYTHONMALLOC=malloc \
		"$OLDPWD/$REC" -q -o "$W/out/main.zst" "$@" <"${stdin:-/dev/null}" >/dev/null)
	local keep=$W/out/main.zst
	if [ -n "${KEEP:-}" ]; then
		keep=
		for f in "$W"/out/*.zst; do
			"$AT" info "$f" --json | grep -q "\"command\":\"$KEEP" && keep=$f
		done
		[ -n "$keep" ] || { echo "record.sh: no trace of $KEEP among $(ls "$W/out")" >&2; exit 1; }
	fi
	cp "$keep" "$CORPUS/$name.zst"
	chmod 644 "$CORPUS/$name.zst"
	local cmd="$*"
	[ "$prog" = python3 ] && cmd="PYTHONHASHSEED=0 PYTHONMALLOC=malloc $cmd"
	[ -n "$stdin" ] && cmd="$cmd < $(basename "$stdin")"
	"$AT" corpus add "$MANIFEST" "$CORPUS/$name.zst" --program "$prog" --version "$(pkg_version "$1")" \
		--command "$cmd" --recorded-at "$at"
}

record python3-json-threads python3 "" /usr/bin/python3 workload.py
record sqlite3-table-index sqlite3 "$W/workload.sql" sqlite3 :memory:
KEEP=/usr/lib/gcc record gcc-cc1-O2 gcc "" gcc -O2 -g -c compile_me.c -o compile_me.o
record sort-keys sort "" sort -t , -k2,2 -k1,1n --parallel=2 -S 8M sort-input.txt
record xz-T2 xz "" xz -T2 -1 -c xz-input.txt
"$AT" verify --manifest "$MANIFEST"
du -ch $CORPUS/*.zst | tail -n 1
