#!/usr/bin/env python3
"""gen_input.py FORMAT LINES [--times]: a synthetic heap log on stdout for
`make bench-import`: memory_replay ("<tid>: malloc 0x... 24", 8 threads) or
mtrace ("@ ./prog:[0x...] + 0x... 0x18", 64 call sites). Each thread keeps a
window of 256 live blocks: a malloc-family call, then later its free, a
realloc now and then, so the lines look like a real program's (sizes 8 to
4 KiB, 64-bit addresses). Deterministic (a fixed seed)."""
import random
import sys

fmt, n = sys.argv[1], int(sys.argv[2])
times = "--times" in sys.argv[3:]
rng = random.Random(1)
out = sys.stdout
threads = 8 if fmt == "memory_replay" else 1
live = [[] for _ in range(threads)]
top = [0x7f0000000000 + (t << 32) for t in range(threads)]
sizes = [8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096]
clock = 1_000_000_000
buf = []
for i in range(n):
    t = i % threads if threads > 1 else 0
    lv = live[t]
    r = rng.random()
    if len(lv) > 256 or (lv and r < 0.45):
        p = lv.pop(rng.randrange(len(lv)))
        line = ("%d: free 0x%x" % (1000 + t, p)) if fmt == "memory_replay" else ("@ ./prog:[0x%x] - 0x%x" % (0x401000 + (i & 63) * 16, p))
    elif lv and r < 0.5 and fmt == "memory_replay":
        j = rng.randrange(len(lv))
        s = rng.choice(sizes)
        top[t] += s + 16
        line = "%d: realloc 0x%x 0x%x %d" % (1000 + t, top[t], lv[j], s)
        lv[j] = top[t]
    else:
        s = rng.choice(sizes)
        top[t] += s + 16
        lv.append(top[t])
        if fmt == "memory_replay":
            line = "%d: malloc 0x%x %d" % (1000 + t, top[t], s)
        else:
            line = "@ ./prog:[0x%x] + 0x%x %#x" % (0x401000 + (i & 63) * 16, top[t], s)
    if times:
        clock += 150
        line += " %d %d" % (clock, clock + 60)
    buf.append(line)
    if len(buf) == 65536:
        out.write("\n".join(buf) + "\n")
        buf = []
if buf:
    out.write("\n".join(buf) + "\n")
