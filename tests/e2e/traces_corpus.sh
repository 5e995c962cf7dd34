#!/usr/bin/env bash
# The checked-in corpus (traces/corpus): every MANIFEST entry verifies (hash,
# counts, complete decode) and has the documented columns filled; the corpus
# stays under 20 MB; and `verify --manifest` catches what it is for: a
# changed byte, a wrong count, an unlisted trace, a missing file. `corpus
# add` on a copy writes an entry that verifies and replaces, not duplicates.
set -u
cd "$(dirname "$0")/../.."
B=${ALLOCRR_BUILD:-build}
AT=$B/bin/alloctrace
[ -x "$AT" ] || { echo "missing $AT: run make first"; exit 77; }
M=traces/corpus/MANIFEST
T=$(mktemp -d /tmp/traces_corpus.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$AT" verify --manifest $M) && ok "$(echo "$out" | tail -n 1)" || { fail "verify --manifest $M"; echo "$out"; }
n=$(grep -v '^#' $M | tail -n +2 | grep -c .)
[ "$n" -ge 5 ] && ok "$n traces listed" || fail "only $n traces listed"
# Every documented column is present and filled.
awk -F'\t' '/^#/ { next } !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1
		split("name sha256 file_bytes events threads requested_bytes program version recorded_at command", need, " ")
		for (k in need) if (!(need[k] in col)) { print "missing column " need[k]; bad++ }; next }
	NF { for (k in need) if ($col[need[k]] == "") { print $1 ": empty " need[k]; bad++ }
	     if ($col["recorded_at"] !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/) { print $1 ": recorded_at"; bad++ } }
	END { exit bad > 0 }' $M && ok "all columns filled" || fail "manifest columns"
awk -F'\t' '!/^#/ && NR > 2 && $5 > 1 { multi = 1 } END { exit !multi }' $M && ok "a multi-threaded trace is listed" ||
	fail "no multi-threaded trace"
kb=$(du -sk --exclude=inputs traces/corpus | cut -f1)
[ "$kb" -lt 20480 ] && ok "corpus is ${kb} KiB (< 20 MiB)" || fail "corpus is ${kb} KiB"

# Tampering is caught (on a copy).
copy() { rm -rf "$T/c" && cp -r traces/corpus "$T/c"; }
first=$(awk -F'\t' '!/^#/ && h++ { print $1; exit }' $M)
copy; printf 'X' | dd of="$T/c/$first" bs=1 seek=100 conv=notrunc 2>/dev/null
"$AT" verify --manifest "$T/c/MANIFEST" >"$T/o"; [ $? = 2 ] && grep -q "^$first: FAIL" "$T/o" &&
	ok "a changed byte in $first fails" || fail "changed byte not caught"
copy; awk -F'\t' -v OFS='\t' '!/^#/ && h++ == 1 { $4 = $4 + 1 } 1' $M >"$T/c/MANIFEST"
"$AT" verify --manifest "$T/c/MANIFEST" >"$T/o"; [ $? = 2 ] && grep -q "events is" "$T/o" && ok "a wrong event count fails" ||
	fail "wrong event count not caught"
copy; cp "$T/c/$first" "$T/c/extra.zst"
"$AT" verify --manifest "$T/c/MANIFEST" >"$T/o"; [ $? = 2 ] && grep -q "^extra.zst: FAIL: .*not in the manifest" "$T/o" &&
	ok "an unlisted trace fails" || fail "unlisted trace not caught"
"$AT" corpus add "$T/c/MANIFEST" "$T/c/extra.zst" --program test --version "test 1" --command "cp $first extra.zst" \
	--recorded-at 2025-01-01T00:00:00Z >/dev/null && "$AT" verify --manifest "$T/c/MANIFEST" >/dev/null &&
	ok "corpus add lists it; the manifest verifies" || fail "corpus add"
"$AT" corpus add "$T/c/MANIFEST" "$T/c/extra.zst" --program test --version "test 2" --command "again" >/dev/null
[ "$(grep -c '^extra.zst' "$T/c/MANIFEST")" = 1 ] && grep -q "test 2" "$T/c/MANIFEST" && ok "corpus add replaces an entry" ||
	fail "corpus add duplicated an entry"
"$AT" corpus add "$T/c/MANIFEST" "$T/c/extra.zst" --program test --version "a	tab" --command x 2>/dev/null
[ $? = 1 ] && ok "corpus add refuses a tab in a value" || fail "corpus add took a tab"
rm "$T/c/$first"
"$AT" verify --manifest "$T/c/MANIFEST" >"$T/o"; [ $? = 2 ] && grep -q "^$first: FAIL: cannot read" "$T/o" &&
	ok "a missing file fails" || fail "missing file not caught"
# Plain verify still works on the files themselves.
"$AT" verify traces/corpus/*.zst >/dev/null && ok "plain verify of every corpus file" || fail "plain verify"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
