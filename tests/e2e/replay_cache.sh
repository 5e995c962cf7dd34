#!/usr/bin/env bash
# The workload cache (replayer/wl_cache.h) does not trust its files, lives in
# a directory of your own, stays under its size limit, and allocreplay's exit
# status tells a script what happened:
#   1. a cached workload of another trace renamed to this trace's key, its
#      header's trace hash rewritten (and, second, its digest redone too), is
#      recompiled with a note, and the run stores this trace's op count;
#   2. a cached workload cut short, or cut and padded back to its size with
#      zeros (a crash's zero-filled blocks), or zeroed amid its segments
#      (only the digest can tell), or with one random bit flipped in what
#      the worker reads (20 x ALLOCRR_TORTURE_SCALE), is recompiled;
#   3. a symbolic link planted at the temporary file's name is not followed:
#      the file it points to is untouched;
#   4. a cache directory writable by others, another user's, or a symbolic
#      link is refused with what to do; without HOME (and without a home
#      directory: user nobody), the per-user directory under TMPDIR that
#      another user made first is refused, and one of our own is made 0700;
#   5. --cache-max evicts the least recently used workloads (a reuse counts
#      as use), never one in use, never a live writer's temporary file;
#      ALLOCRR_CACHE_MAX; --cache-clean empties the cache and says what it
#      freed, keeping a workload another process holds and files not ours;
#   6. exit status 3 for a truncated trace's valid prefix;
#   7. an allocator named twice in -a (also with -a twice) runs once;
#   8. allocreplays started together on one new trace (parallel jobs of a
#      plan) compile it once: the others wait for the compile's lock and
#      use its workload; no lock file is left behind.
. "$(dirname "$0")/../../replayer/tests/e2e_lib.sh"
AT="$B/bin/alloctrace"
[ -x "$AT" ] || { echo "missing $AT: build first"; exit 77; }
# sizeof(ar_wl_header_t) (replayer/workload.h, version 8): trace_sha256 at
# 32, content_sha256 at HDR-32; the layout is header | segments | index
# (16 bytes an entry: offset, bytes, nops) | thread table, index_offset at
# 440, threads_offset at 448, nsegs at 456.
HDR=512

sha_of() { sha256sum "$1" | cut -d' ' -f1; }
wl_of() { ls "$ALLOCRR_CACHE_DIR/$(sha_of "$1")".v*.wl 2>/dev/null | head -1; }
# replay TRACE DB [ARGS...]: one glibc run, exit status in $rc, stderr in err.txt
replay() {
	local tr=$1 db=$2
	shift 2
	"$AR" "$tr" -a glibc --repeat 1 --db "$db" -q "$@" >out.txt 2>err.txt
	rc=$?
}
last() { q "$1" "SELECT $2 FROM runs ORDER BY run_id DESC LIMIT 1"; }
# the content digest as workload.h defines it, computed from the file alone:
# SHA-256 of everything after the header, then the header with the digest zeroed
digest() {
	python3 - "$1" "$HDR" "${2:-check}" <<'EOF'
import hashlib, struct, sys
path, hdr, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = bytearray(open(path, 'rb').read())
h = bytearray(data[:hdr]); h[hdr - 32:hdr] = bytes(32)
m = hashlib.sha256(data[hdr:]); m.update(h)
if mode == 'write':
    data[hdr - 32:hdr] = m.digest()
    open(path, 'r+b').write(data[:hdr])
else:
    print('same' if m.digest() == bytes(data[hdr - 32:hdr]) else 'differs')
EOF
}
set_trace_sha() { # WORKLOAD SHA: rewrite the header's trace_sha256
	printf '%s\0' "$2" | dd of="$1" bs=1 seek=32 conv=notrunc status=none
}

"$AT" gen S1 --ops 400 -q -o a.zst && "$AT" gen S1 --ops 20000 -q -o b.zst || { fail "alloctrace gen"; finish; }
sha_a=$(sha_of a.zst)
replay a.zst base.db
expect_eq "a.zst: exit" $rc 0
ops_a=$(last base.db ops) chk_a=$(last base.db op_checksum)
replay b.zst base.db
ops_b=$(last base.db ops) chk_b=$(last base.db op_checksum)
[ "$ops_a" -gt 0 ] && [ "$ops_a" != "$ops_b" ] && ok "two traces: $ops_a and $ops_b ops" || fail "ops $ops_a, $ops_b"
wa=$(wl_of a.zst) wb=$(wl_of b.zst)
ver=$(basename "$wb" | sed 's/.*\.v\([0-9]*\)\.wl$/\1/')
expect_eq "cache directory mode" "$(stat -c %a "$ALLOCRR_CACHE_DIR")" 700
expect_eq "workload mode" "$(stat -c %a "$wb")" 600
expect_eq "the digest is SHA-256 of what workload.h says" "$(digest "$wb")" same

# ---- 1. a swapped workload ------------------------------------------------------------
cp "$wb" "$wa" && set_trace_sha "$wa" "$sha_a"
replay a.zst s.db
expect_eq "swapped, hash rewritten: exit" $rc 0
grep -q "^allocreplay: note: cached workload $wa not used, recompiling: " err.txt &&
	ok "swapped, hash rewritten: a note says why ($(sed -n 's/.*recompiling: //p' err.txt))" ||
	fail "swapped, hash rewritten: no note: $(cat err.txt)"
expect_eq "swapped, hash rewritten: this trace's ops" "$(last s.db ops)" "$ops_a"
cp "$wb" "$wa" && set_trace_sha "$wa" "$sha_a" && digest "$wa" write
expect_eq "swapped, digest redone too: the digest matches" "$(digest "$wa")" same
replay a.zst s.db
grep -q "not used, recompiling: it was made from a trace of [0-9]* bytes" err.txt &&
	ok "swapped, digest redone: the trace's own figures disagree" || fail "swapped, digest redone: $(cat err.txt)"
expect_eq "swapped, digest redone: this trace's ops" "$(last s.db ops)" "$ops_a"
expect_eq "swapped, digest redone: this trace's op checksum" "$(last s.db op_checksum)" "$chk_a"
replay a.zst s.db
grep -q "workload from cache" out.txt && ok "the recompiled workload is reused" || fail "no reuse: $(cat out.txt)"

# ---- 2. a damaged workload --------------------------------------------------------------
size=$(stat -c %s "$wb")
truncate -s 8192 "$wb"
replay b.zst d.db
grep -q "cached workload $wb not used, recompiling: .*header sizes disagree" err.txt &&
	ok "cut short: recompiled" || fail "cut short: $(cat err.txt)"
expect_eq "cut short: ops" "$(last d.db ops)" "$ops_b"
# (the index and thread table are at the end: zeroed, they no longer add up)
truncate -s 8192 "$wb" && truncate -s "$size" "$wb"
replay b.zst d.db
grep -q "cached workload $wb not used, recompiling: " err.txt &&
	ok "cut and zero-padded: recompiled ($(sed -n 's/.*recompiling: //p' err.txt))" ||
	fail "cut and zero-padded: $(cat err.txt)"
expect_eq "cut and zero-padded: op checksum" "$(last d.db op_checksum)" "$chk_b"
# zero-filled blocks amid the segments, index and thread table intact: only
# the digest sees them
python3 - "$wb" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
index = struct.unpack_from('<Q', data, 440)[0]
data[4096:index] = bytes(index - 4096)
open(sys.argv[1], 'r+b').write(data)
EOF
replay b.zst d.db
grep -q "cached workload $wb not used, recompiling: its content does not match its digest" err.txt &&
	ok "segments zeroed: recompiled" || fail "segments zeroed: $(cat err.txt)"
expect_eq "segments zeroed: op checksum" "$(last d.db op_checksum)" "$chk_b"

# Random damage: one bit flipped anywhere the worker reads (header, segment
# index, thread table, the segments' bytes), 20 x ALLOCRR_TORTURE_SCALE
# times: every one recompiled.
flip() { # WORKLOAD SEED: flip one random bit of the digested bytes, print its offset
	python3 - "$1" "$HDR" "$2" <<'EOF'
import random, struct, sys
path, hdr, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = bytearray(open(path, 'rb').read())
index, threads = struct.unpack_from('<QQ', data, 440)
nsegs = struct.unpack_from('<Q', data, 456)[0]
spans = [(0, hdr - 32), (index, threads), (threads, len(data))]
for i in range(nsegs):
    off, nbytes, nops = struct.unpack_from('<QII', data, index + i * 16)
    spans.append((off, off + nbytes))
r = random.Random(seed)
a, b = r.choice([s for s in spans if s[1] > s[0]])
at = r.randrange(a, b)
data[at] ^= 1 << r.randrange(8)
f = open(path, 'r+b'); f.seek(at); f.write(data[at:at + 1])
print(at)
EOF
}
cp "$wa" good.wl
flips=$((20 * SCALE)) caught=0
for ((i = 0; i < flips; i++)); do
	cp good.wl "$wa"
	at=$(flip "$wa" $((SEED + i)))
	replay a.zst f.db
	if grep -q "cached workload $wa not used, recompiling: " err.txt && [ "$(last f.db op_checksum)" = "$chk_a" ] &&
		[ $rc = 0 ]; then
		caught=$((caught + 1))
	else
		fail "bit flipped at byte $at (seed $((SEED + i))): exit $rc, $(cat err.txt)"
	fi
done
expect_eq "random bit flips recompiled (seed $SEED)" "$caught" "$flips"

# ---- 3. a symbolic link at the temporary file's name -------------------------------------
printf 'precious\n' >victim
rm -f "$wa"
(ln -s "$T/victim" "$ALLOCRR_CACHE_DIR/$sha_a.v$ver.wl.tmp.$BASHPID" &&
	exec "$AR" a.zst -a glibc --repeat 1 --db l.db -q >/dev/null 2>err.txt)
expect_eq "planted symlink: exit" $? 0
expect_eq "planted symlink: its target untouched" "$(cat victim)" precious
[ -f "$wa" ] && [ ! -L "$wa" ] && ok "planted symlink: a real workload in the cache" || fail "planted symlink: $(ls -l "$wa")"
expect_eq "planted symlink: ops" "$(last l.db ops)" "$ops_a"

# ---- 4. whose directory ---------------------------------------------------------------------
refused() { # WHAT DIR-IN-MESSAGE REASON-REGEX, after replay
	expect_eq "$1: exit" $rc 2
	grep -q "^allocreplay: refusing the workload cache $2 (from .*): $3.*set ALLOCRR_CACHE_DIR to a directory of your own" err.txt &&
		ok "$1: refused, says what to do" || fail "$1: $(cat err.txt)"
}
mkdir shared && chmod 0777 shared
ALLOCRR_CACHE_DIR=$T/shared replay a.zst p.db
refused "a directory anyone can write" "$T/shared" "its mode 0777 lets other users write there"
expect_eq "a directory anyone can write: nothing written there" "$(ls shared | wc -l)" 0
ln -s "$ALLOCRR_CACHE_DIR" link
ALLOCRR_CACHE_DIR=$T/link replay a.zst p.db
refused "a symbolic link" "$T/link" "it is a symbolic link"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	nob=$(id -u nobody)
	mkdir theirs && chown nobody theirs && chmod 0700 theirs
	ALLOCRR_CACHE_DIR=$T/theirs replay a.zst p.db
	refused "another user's directory" "$T/theirs" "it belongs to uid $nob, not to you"
	# Without HOME, as a user without a home directory (nobody's is
	# /nonexistent): the per-user directory under TMPDIR.
	chmod 755 "$T" && mkdir -m 1777 pub && cp a.zst pub/
	# nobody may not reach the build tree (a checkout under a 0700
	# directory, as mktemp -d makes): give it a copy of the tools it runs.
	NAR=$AR
	if ! setpriv --reuid="$nob" --regid="$(id -g nobody)" --clear-groups test -x "$AR"; then
		mkdir -m 755 nb && cp -a "$B/bin" "$B/lib" nb/ && chmod -R a+rX nb
		NAR=$T/nb/bin/allocreplay
	fi
	as_nobody() {
		(cd pub && setpriv --reuid="$nob" --regid="$(id -g nobody)" --clear-groups \
			env -u HOME -u XDG_CACHE_HOME -u ALLOCRR_CACHE_DIR TMPDIR="$T/pub" \
			"$NAR" a.zst -a glibc --repeat 1 --db n.db -q >../out.txt 2>../err.txt)
		rc=$?
	}
	mkdir -m 0700 "pub/allocrr-cache-$nob" # made first by another user (root)
	as_nobody
	refused "HOME unset, the temporary directory's cache made by another user" "$T/pub/allocrr-cache-$nob" \
		"it belongs to uid 0, not to you"
	rmdir "pub/allocrr-cache-$nob" && mkdir -m 0777 "pub/allocrr-cache-$nob" && chown nobody "pub/allocrr-cache-$nob"
	as_nobody
	refused "HOME unset, the temporary directory's cache writable by all" "$T/pub/allocrr-cache-$nob" \
		"its mode 0777"
	rmdir "pub/allocrr-cache-$nob"
	as_nobody
	expect_eq "HOME unset, no cache yet: exit" $rc 0
	expect_eq "HOME unset: made ours, 0700" "$(stat -c '%U %a' "pub/allocrr-cache-$nob")" "nobody 700"
	expect_eq "HOME unset: the workload is in it" "$(ls "pub/allocrr-cache-$nob" | grep -c "^$sha_a\.v$ver\.wl$")" 1
else
	echo "note: not root (or no setpriv, no user nobody): other users' directories not tried"
fi

# ---- 5. size limit, least recently used first ------------------------------------------------
export ALLOCRR_CACHE_DIR=$T/lru
for i in 1 2 3 4; do "$AT" gen S1 --ops 3000 --seed $i -q -o c$i.zst; done
ALLOCRR_CACHE_DIR=$T/scratch replay c4.zst lru.db
s4=$(($(stat -c %b "$(ALLOCRR_CACHE_DIR=$T/scratch wl_of c4.zst)") * 512))
for i in 1 2 3; do replay c$i.zst lru.db; done
w1=$(wl_of c1.zst) w2=$(wl_of c2.zst) w3=$(wl_of c3.zst)
s1=$(($(stat -c %b "$w1") * 512)) s2=$(($(stat -c %b "$w2") * 512)) s3=$(($(stat -c %b "$w3") * 512))
touch -m -d '-3 hours' "$w1" && touch -m -d '-2 hours' "$w2" && touch -m -d '-1 hour' "$w3"
replay c1.zst lru.db # a reuse: c1 becomes the most recently used
grep -q "workload from cache" out.txt && ok "LRU: c1 reused" || fail "LRU: c1 not reused"
[ "$(stat -c %Y "$w1")" -gt "$(stat -c %Y "$w3")" ] && ok "LRU: a reuse refreshes the file's time" ||
	fail "LRU: c1's time not refreshed"
limit=$((s1 + s3 + s4 + s2 / 2)) # c2 must go, nothing else
replay c4.zst lru.db --cache-max "$limit"
expect_eq "LRU: exit" $rc 0
left=$(for i in 1 2 3 4; do [ -n "$(wl_of c$i.zst)" ] && echo -n "c$i "; done)
expect_eq "LRU: the least recently used (c2) evicted, the reused c1 kept" "$left" "c1 c3 c4 "
grep -q "note: workload cache $T/lru used .* over its limit .*removed the 1 least recently used" err.txt &&
	ok "LRU: a note says what was removed" || fail "LRU: $(cat err.txt)"
replay c1.zst lru.db --cache-max 1G
expect_eq "--cache-max 1G: exit" $rc 0
# A limit below one workload: the one in use stays for its run, a live
# writer's temporary file stays, a dead writer's goes.
sleep 0 & dead=$!
wait $dead
printf x >"$T/lru/$(sha_of c3.zst).v$ver.wl.tmp.$$"
printf x >"$T/lru/$(sha_of c3.zst).v$ver.wl.tmp.$dead"
ALLOCRR_CACHE_MAX=1K replay c2.zst lru.db
expect_eq "limit 1K: the run in progress keeps its workload: exit" $rc 0
expect_eq "limit 1K: its run ok" "$(last lru.db status)" ok
expect_eq "limit 1K: no workload left after the run" "$(ls "$T/lru" | grep -c '\.wl$')" 0
expect_eq "limit 1K: a live writer's temporary file kept" "$(ls "$T/lru" | grep -c "\.tmp\.$$\$")" 1
expect_eq "limit 1K: a dead writer's removed" "$(ls "$T/lru" | grep -c "\.tmp\.$dead\$")" 0
rm -f "$T/lru/"*.tmp.$$
ALLOCRR_CACHE_MAX=lots replay c2.zst lru.db
expect_eq "ALLOCRR_CACHE_MAX=lots: usage error" $rc 1
grep -q "ALLOCRR_CACHE_MAX needs a size such as 4G" err.txt && ok "ALLOCRR_CACHE_MAX=lots: says so" || fail "$(cat err.txt)"
"$AR" c1.zst --cache-max 12X >/dev/null 2>err.txt
expect_eq "--cache-max 12X: usage error" $? 1

# --cache-clean: everything ours, except what is in use; never other files.
for i in 1 2 3; do replay c$i.zst lru.db; done
echo mine >"$T/lru/notes.txt"
exec 9<"$(wl_of c3.zst)" && flock -s 9 # another allocreplay is using c3's workload
"$AR" --cache-clean >clean.txt 2>err.txt
expect_eq "--cache-clean: exit" $? 0
grep -Eq "^workload cache $T/lru: removed 2 file\(s\), [0-9.]+ KiB freed; kept 1 workload\(s\) in use by a running allocreplay" clean.txt &&
	ok "--cache-clean: $(cat clean.txt)" || fail "--cache-clean: $(cat clean.txt) $(cat err.txt)"
exec 9<&-
"$AR" --cache-clean >clean.txt 2>err.txt
grep -q "removed 1 file(s)" clean.txt && ok "--cache-clean once released: $(cat clean.txt)" || fail "$(cat clean.txt)"
expect_eq "--cache-clean: the cache is empty" "$(ls "$T/lru" | grep -c '\.wl')" 0
expect_eq "--cache-clean: other files untouched" "$(cat "$T/lru/notes.txt")" mine
"$AR" --cache-clean c1.zst >/dev/null 2>err.txt
expect_eq "--cache-clean with a trace: usage error" $? 1

# ---- 6. exit status 3: a truncated trace's valid prefix -------------------------------------------
head -c $(($(stat -c %s b.zst) * 6 / 10)) b.zst >cut.zst
"$AT" verify cut.zst >/dev/null 2>&1
expect_eq "cut.zst is truncated (alloctrace verify)" $? 1
replay cut.zst t.db
expect_eq "truncated trace: exit status 3" $rc 3
grep -q "trace cut.zst is truncated; replaying its valid prefix" err.txt && ok "truncated trace: said" || fail "$(cat err.txt)"
expect_eq "truncated trace: the run is stored, ok" "$(last t.db status)" ok
expect_eq "truncated trace: traces.status" "$(q t.db "SELECT status FROM traces")" truncated
"$AR" cut.zst a.zst -a glibc --repeat 1 --db t.db -q >/dev/null 2>&1
expect_eq "truncated and complete traces together: 3" $? 3

# ---- 7. an allocator named twice ------------------------------------------------------------------------
for args in "-a glibc,glibc" "-a glibc -a glibc"; do
	"$AR" a.zst $args --repeat 1 --db "dup.db" -q >/dev/null 2>err.txt
	expect_eq "$args: exit" $? 0
	expect_eq "$args: one run" "$(q dup.db "SELECT count(*) FROM runs")" 1
	expect_eq "$args: one note" "$(grep -c "^allocreplay: note: allocator glibc is named more than once in -a: replaying it once$" err.txt)" 1
	rm -f dup.db
done
"$AR" a.zst -a glibc -a pool --repeat 1 --db dup.db -q >/dev/null 2>err.txt
expect_eq "-a glibc -a pool: both run" "$(q dup.db "SELECT group_concat(allocator) FROM (SELECT allocator FROM runs ORDER BY allocator)")" glibc,pool

# ---- 8. jobs started together compile a trace once ------------------------------------------------
export ALLOCRR_CACHE_DIR="$T/together"
"$AT" gen S2 --ops 400000 --seed 7 -o tg.zst -q
for k in 1 2 3; do
	"$AR" tg.zst -a glibc --repeat 1 --db "tg$k.db" >"tg$k.out" 2>&1 &
done
wait
expect_eq "3 jobs together: every one replayed" "$(cat tg1.out tg2.out tg3.out | grep -c 'calls replayed')" 3
expect_eq "3 jobs together: one compiled, two used its workload" \
	"$(cat tg1.out tg2.out tg3.out | grep 'calls replayed' | grep -c 'workload from cache')" 2
expect_eq "3 jobs together: one workload, no lock file left" "$(ls "$ALLOCRR_CACHE_DIR" | tr '\n' ' ')" \
	"$(sha_of tg.zst).v$ver.wl "
finish
