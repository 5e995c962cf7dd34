# bench/fidelity/py_threads.py N: the multi-threaded interpreter workload of
# make bench-fidelity, run by Debian's /usr/bin/python3: 4 threads churning
# bytes and str objects of varied sizes (join, encode, decode, slice, replace,
# a bounded per-thread list of survivors). The threads hold the GIL while
# they allocate, so they never allocate at the same instant — the case where
# a replay that runs the recorded threads truly concurrently misjudges
# one-lock allocators (issue 14). Deterministic; prints a checksum.
import sys
import threading

n = int(sys.argv[1])
THREADS = 4
sums = [0] * THREADS


def churn(t):
    keep = []
    acc = 0
    for i in range(n // THREADS):
        size = 16 + (i * 7919 + t * 104729) % 3000
        b = bytes([65 + (i + t) % 26]) * size
        s = b.decode("ascii").replace("A", "ab")[: size // 2 + 1]
        parts = [s[j:j + 37] for j in range(0, len(s), 37)]
        joined = "|".join(parts).encode("utf-8")
        acc += len(joined) + len(parts)
        keep.append(joined if i % 3 else s)
        if len(keep) > 2000:
            del keep[: 1000]
    sums[t] = acc + len(keep)


threads = [threading.Thread(target=churn, args=(t,)) for t in range(THREADS)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(sum(sums))
