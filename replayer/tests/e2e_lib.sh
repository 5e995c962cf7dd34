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
