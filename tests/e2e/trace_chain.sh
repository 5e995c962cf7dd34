#!/usr/bin/env bash
# Chained events blocks (trace format 2.0, SPEC 3.4): both readers
# (alloctrace, tests/spec_reader.py) agree on chained traces, on the 1.3
# trace of the same events, on cut copies (readable up to the last whole
# block) and on forged or damaged ones, which are corrupt with the offset of
# the block at fault: a damaged link, a chained first block, an undefined
# chain mode, a chained metadata block, a chain of 65 blocks. A 1.3 reader
# refuses a 2.0 trace by its header.
# Exit 0 pass, 77 skip (no /usr/bin/python3 or python3-zstandard), 1 fail.
. "$(dirname "$0")/spec_lib.inc"

# agree NAME FILE WANT_RC [WANT_IN_MESSAGE]: both verifiers exit WANT_RC,
# both dumps are identical, alloctrace's message contains WANT_IN_MESSAGE.
agree() {
	local name=$1 f=$2 want=$3 msg=${4:-} crc prc
	"$AT" verify "$f" >"$W/$name.cv" 2>&1; crc=$?
	"$PY" "$READER" verify "$f" >"$W/$name.pv" 2>&1; prc=$?
	[ "$crc" = "$want" ] && [ "$prc" = "$want" ] && ok "$name: both verifiers exit $want" ||
		fail "$name: alloctrace verify exit $crc ($(head -c 300 "$W/$name.cv")), spec_reader $prc ($(head -c 300 "$W/$name.pv")), want $want"
	if [ -n "$msg" ]; then
		grep -q -- "$msg" "$W/$name.cv" && ok "$name: alloctrace says \"$msg\"" ||
			fail "$name: alloctrace's message lacks \"$msg\": $(head -c 300 "$W/$name.cv")"
	fi
	"$AT" dump --extra "$f" >"$W/$name.c" 2>/dev/null
	"$PY" "$READER" dump "$f" >"$W/$name.py" 2>/dev/null
	if [ "$want" = 2 ]; then # a corrupt trace: the C reader dumps up to the problem
		[ -z "$(sort "$W/$name.c" | comm -23 - <(sort "$W/full.c"))" ] &&
			ok "$name: what alloctrace dumps is in the full dump ($(wc -l <"$W/$name.c") lines)" ||
			fail "$name: alloctrace dumps lines that are not in the full dump"
	elif cmp -s "$W/$name.c" "$W/$name.py"; then
		ok "$name: dumps identical ($(wc -l <"$W/$name.c") lines)"
	else
		fail "$name: dumps differ"
	fi
}

# 1. a chained trace: 3 threads, 400 000 events, ~8 blocks per thread,
#    chained whether it pays or not (on these random events it does not:
#    see 5.); and one thread's 1.1 M events, 68 blocks, for a chain over the
#    limit (4.)
BENCH_FORMAT_CHAIN=2 "$BENCH" 400000 3 3 "$W/chained.zst" >/dev/null || fail "bench_format exit $?"
"$BENCH" 1100000 1 1 "$W/one.zst" >/dev/null || fail "bench_format exit $?"
"$AT" dump --extra "$W/chained.zst" >"$W/full.c" 2>/dev/null
agree chained "$W/chained.zst" 0
"$AT" info "$W/chained.zst" | grep -q "^format  *2\.[0-9]" && ok "info: format 2.x" ||
	fail "info does not say format 2.x: $("$AT" info "$W/chained.zst" | grep format)"

# descriptors FILE: one line per block (SPEC 3.2): descriptor offset, frame
# end, kind, thread, events, compressed bytes, chain field (0 when absent).
descriptors() {
	"$PY" - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
def var(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
pos = 8 + struct.unpack_from("<I", d, 4)[0]
while pos < len(d):
    magic, n = struct.unpack_from("<II", d, pos)
    f, i = [], pos + 8
    while i < pos + 8 + n:
        v, i = var(d, i); f.append(v)
    chain = f[8] if len(f) > 8 else 0
    print(pos, pos + 8 + n, f[0], f[1], f[3], f[7], chain)  # desc, frame, kind, thread, count, comp, chain
    pos += 8 + n + f[7]
EOF
}

# The descriptors of the chained trace.
descriptors "$W/chained.zst" >"$W/desc.txt"
nchained=$(awk '$7 == 1' "$W/desc.txt" | wc -l)
nevents=$(awk '$3 == 1' "$W/desc.txt" | wc -l)
[ "$nchained" -gt $((nevents / 2)) ] && ok "$nchained of $nevents events blocks chained" ||
	fail "only $nchained of $nevents events blocks chained"
maxrun=$(awk '$3 == 1 { run[$4] = $7 ? run[$4] + 1 : 1; if (run[$4] > m) m = run[$4] } END { print m }' "$W/desc.txt")
[ "$maxrun" -le 16 ] && ok "the writer's longest chain is $maxrun blocks (at most 16)" ||
	fail "a chain of $maxrun blocks (the writer makes at most 16)"

# 2. the same events as a 1.3 trace (no chain fields): same dump, and a
#    1.3 reader reads it but refuses the 2.0 one by its header
"$BENCH" --rewrite "$W/chained.zst" "$W/v13.zst" 1 3 >"$W/v13.log" || fail "rewrite as 1.3: exit $?"
BENCH_FORMAT_CHAIN=2 "$BENCH" --rewrite "$W/chained.zst" "$W/v20.zst" 2 3 >"$W/v20.log" ||
	fail "rewrite as 2.0: exit $?"
"$AT" dump --extra "$W/v13.zst" >"$W/v13.c" 2>/dev/null
"$AT" dump --extra "$W/v20.zst" >"$W/v20.c" 2>/dev/null
cmp -s "$W/v13.c" "$W/v20.c" && cmp -s "$W/v13.c" "$W/full.c" &&
	ok "1.3 and 2.0 copies of the events dump the same as the original" ||
	fail "1.3 and 2.0 copies dump differently"
s13=$(stat -c %s "$W/v13.zst") s20=$(stat -c %s "$W/v20.zst")
echo "   sizes: 1.3 $s13 bytes, 2.0 $s20 bytes"
"$PY" "$READER" --as-1.3 verify "$W/v13.zst" >/dev/null && ok "a 1.3 reader reads the 1.3 copy" ||
	fail "a 1.3 reader cannot read the 1.3 copy"
"$PY" "$READER" --as-1.3 verify "$W/v20.zst" >"$W/as13.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "major version 2" "$W/as13.out" && ok "a 1.3 reader refuses 2.0: $(cat "$W/as13.out")" ||
	fail "a 1.3 reader on 2.0: exit $rc, $(cat "$W/as13.out")"
"$PY" "$READER" verify "$W/v13.zst" >/dev/null && ok "spec_reader reads the 1.3 copy" ||
	fail "spec_reader cannot read the 1.3 copy"

# 3. cut copies: inside a chained block's frame, and right after one
read -r d0 e0 _ <<<"$(awk '$7 == 1' "$W/desc.txt" | sed -n 8p)"
for cut in $(((d0 + e0) / 2)) "$e0"; do
	head -c "$cut" "$W/chained.zst" >"$W/cut.zst"
	whole=$(awk -v c="$cut" '$3 == 1 && $2 + $6 <= c { n += $5 } END { print n + 0 }' "$W/desc.txt")
	agree "cut-$cut" "$W/cut.zst" 1
	n=$(wc -l <"$W/cut-$cut.c")
	[ "$n" = "$whole" ] && ok "cut at $cut: the $whole events of the whole blocks" ||
		fail "cut at $cut: $n events read, the whole blocks hold $whole"
done

# 4. forged and damaged copies (python rewrites descriptors; zstd frames
#    are recompressed where a chain needs it)
"$PY" - "$W" >"$W/forged.list" <<'EOF' || fail "forging copies failed"
import struct, sys, zstandard
w = sys.argv[1]
d = open(w + "/chained.zst", "rb").read()
def var(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def put(v):
    o = bytearray()
    while v >= 0x80: o.append(v & 0x7f | 0x80); v >>= 7
    o.append(v); return bytes(o)
hl = 8 + struct.unpack_from("<I", d, 4)[0]
frames, pos = [], hl   # (fields, zstd frame)
while pos < len(d):
    n = struct.unpack_from("<I", d, pos + 4)[0]
    f, i = [], pos + 8
    while i < pos + 8 + n:
        v, i = var(d, i); f.append(v)
    frames.append((f, d[pos + 8 + n:pos + 8 + n + f[7]]))
    pos += 8 + n + f[7]
def write(name, fr):
    out = bytearray(d[:hl])
    for f, z in fr:
        p = b"".join(put(v) for v in f)
        out += struct.pack("<II", 0x184D2A51, len(p)) + p + z
    open(w + "/" + name, "wb").write(out)
    offs, o = [], hl
    for f, z in fr:
        offs.append(o); o += 8 + len(b"".join(put(v) for v in f)) + len(z)
    return offs
ev = [k for k, (f, z) in enumerate(frames) if f[0] == 1]
# a chained first block: its thread has no earlier block
fr = list(frames); f, z = fr[ev[0]]; fr[ev[0]] = (f[:8] + [1], z)
print("first", write("first.zst", fr)[ev[0]])
# chain mode 2
k = next(k for k in ev if len(frames[k][0]) > 8)
fr = list(frames); f, z = fr[k]; fr[k] = (f[:8] + [2], z)
print("mode2", write("mode2.zst", fr)[k])
# a chained metadata block
m = next(k for k, (f, z) in enumerate(frames) if f[0] == 2)
fr = list(frames); f, z = fr[m]; fr[m] = (f[:8] + [1], z)
print("meta", write("meta.zst", fr)[m])
# a damaged link: a byte flipped inside a chained block's zstd frame
fr = list(frames); f, z = fr[k]; b = bytearray(z); b[len(b) // 2] ^= 0x10; fr[k] = (f, bytes(b))
offs = write("damaged.zst", fr)
print("damaged", offs[k] + 8 + len(b"".join(put(v) for v in f)))
# one thread's blocks all in one chain (65 and more): decode, recompress
# each against its predecessor
d = open(w + "/one.zst", "rb").read()
hl = 8 + struct.unpack_from("<I", d, 4)[0]
frames, pos = [], hl
while pos < len(d):
    n = struct.unpack_from("<I", d, pos + 4)[0]
    f, i = [], pos + 8
    while i < pos + 8 + n:
        v, i = var(d, i); f.append(v)
    frames.append((f, d[pos + 8 + n:pos + 8 + n + f[7]]))
    pos += 8 + n + f[7]
ev = [k for k, (f, z) in enumerate(frames) if f[0] == 1]
dec = zstandard.ZstdDecompressor()
raw, last, fr = {}, None, list(frames)
for k in ev:
    f, z = frames[k]
    if f[1] != 0:
        continue
    prefix = raw.get(last)
    zd = zstandard.ZstdCompressionDict(prefix, dict_type=zstandard.DICT_TYPE_RAWCONTENT) if prefix else None
    r = (zstandard.ZstdDecompressor(dict_data=zd) if zd else dec).decompress(z, max_output_size=f[6])
    raw[k] = r
    cz = zstandard.ZstdCompressor(level=1, write_checksum=True, dict_data=zd) if zd else zstandard.ZstdCompressor(level=1, write_checksum=True)
    z2 = cz.compress(r)
    fr[k] = (f[:7] + [len(z2)] + ([1] if zd else []), z2)
    last = k
t0 = [k for k in ev if frames[k][0][1] == 0]
offs = write("long.zst", fr)
print("long", offs[t0[64]], len(t0))
EOF
while read -r what off _; do
	case $what in
	first) agree forged-first "$W/first.zst" 2 "offset $off" ;;
	mode2) agree forged-mode2 "$W/mode2.zst" 2 "offset $off" ;;
	meta) agree forged-meta "$W/meta.zst" 2 "offset $off" ;;
	damaged) agree damaged-link "$W/damaged.zst" 2 "offset $off" ;;
	long) # its events are one.zst's
		"$AT" dump --extra "$W/one.zst" >"$W/full.c" 2>/dev/null
		agree chain-65 "$W/long.zst" 2 "offset $off" ;;
	esac
done <"$W/forged.list"
[ "$(wc -l <"$W/forged.list")" = 5 ] || fail "forged $(wc -l <"$W/forged.list") copies, want 5"

# 5. by default the writer chains only where it pays: on random events it
#    tries (compresses a block both ways) every 10 blocks or so, and writes
#    it alone when chaining saved less than 5 %
"$BENCH" 1000000 3 1 "$W/default.zst" >/dev/null || fail "bench_format exit $?"
descriptors "$W/default.zst" >"$W/default.txt"
ev=$(awk '$3 == 1' "$W/default.txt" | wc -l)
ch=$(awk '$7 == 1' "$W/default.txt" | wc -l)
[ $((ch * 8)) -lt "$ev" ] && ok "random events, default: $ch of $ev blocks chained" ||
	fail "random events, default: $ch of $ev blocks chained"
agree default "$W/default.zst" 0

if [ $fails -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
exit 0
