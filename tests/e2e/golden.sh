#!/usr/bin/env bash
# The dump line format and `info --json` are contracts (SPEC 9): for every
# checked-in sample trace, today's output must equal the golden files in
# tests/golden/ byte for byte. A deliberate format change regenerates them:
#   for f in traces/samples/*.zst; do n=$(basename $f .zst);
#     build/bin/alloctrace dump $f --extra > tests/golden/$n.dump;
#     build/bin/alloctrace info $f --json > tests/golden/$n.info.json; done
set -u
B=${ALLOCRR_BUILD:-build}
AT=$B/bin/alloctrace
[ -x "$AT" ] || { echo "missing $AT: run make first"; exit 77; }
cd "$(dirname "$0")/../.."
fails=0 n=0
for f in traces/samples/*.zst; do
	name=$(basename "$f" .zst)
	for kind in dump info.json; do
		golden=tests/golden/$name.$kind
		if [ ! -f "$golden" ]; then
			echo "FAIL: $golden is missing"; fails=$((fails + 1)); continue
		fi
		if [ $kind = dump ]; then "$AT" dump "$f" --extra; else "$AT" info "$f" --json; fi >/tmp/golden.$$ 2>&1
		if cmp -s /tmp/golden.$$ "$golden"; then
			echo "ok: $name $kind ($(wc -l <"$golden") lines)"; n=$((n + 1))
		else
			echo "FAIL: $name $kind differs from $golden:"; diff "$golden" /tmp/golden.$$ | head -20
			fails=$((fails + 1))
		fi
	done
done
rm -f /tmp/golden.$$
[ $n -gt 0 ] || { echo "FAIL: no sample traces compared"; exit 1; }
[ $fails -eq 0 ] || exit 1
echo "all $n golden files match"
