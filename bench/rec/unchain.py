#!/usr/bin/python3
# bench/rec/unchain.py IN OUT: the trace the 1.3 writer would have written
# for the same recording, for make bench-rec-size's before/after: every
# chained events block (trace format 2.0, SPEC 3.4) decoded and compressed
# alone with the writer's zstd settings (level 3, checksum, content size:
# python3-zstandard bundles the same zstd 1.5.4 as libzstd here, and gives
# byte-identical frames), its descriptor without the chain field, the
# header's version 1.3. Prints the size of OUT.
import struct
import sys

import zstandard


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def put(v):
    o = bytearray()
    while v >= 0x80:
        o.append(v & 0x7F | 0x80)
        v >>= 7
    o.append(v)
    return bytes(o)


def main(src, dst, level=3):
    d = open(src, "rb").read()
    hl = 8 + struct.unpack_from("<I", d, 4)[0]
    out = bytearray(d[:hl])
    struct.pack_into("<HH", out, 16, 1, 3)  # SPEC 3.1: major, minor after ALLOCRRT
    last, pos = {}, hl
    cz = zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=True)
    while pos < len(d):
        magic, n = struct.unpack_from("<II", d, pos)
        if magic != 0x184D2A51:  # other skippable frames: as they are
            out += d[pos:pos + 8 + n]
            pos += 8 + n
            continue
        f, i = [], pos + 8
        while i < pos + 8 + n:
            v, i = varint(d, i)
            f.append(v)
        z = d[pos + 8 + n:pos + 8 + n + f[7]]
        pos += 8 + n + f[7]
        chained = len(f) > 8 and f[8] == 1
        if f[0] == 1:
            dec = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
                last[f[1]], dict_type=zstandard.DICT_TYPE_RAWCONTENT)) if chained else zstandard.ZstdDecompressor()
            last[f[1]] = dec.decompress(z, max_output_size=f[6])
            if chained:
                z = cz.compress(last[f[1]])
                f[7] = len(z)
        p = b"".join(put(v) for v in f[:8])
        out += struct.pack("<II", magic, len(p)) + p + z
    open(dst, "wb").write(out)
    print(len(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
