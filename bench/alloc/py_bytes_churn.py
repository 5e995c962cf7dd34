# bench/alloc/py_bytes_churn.py THREADS N MAX_KIB: a real multi-threaded
# interpreter churning bytes objects, for running Debian's /usr/bin/python3
# under LD_PRELOAD of each allocator (docs/BENCHMARKS.md, "Threads").
# Each thread replaces, N times, a random one of its 16 live bytes objects
# by b"x" * size, size uniform in 1 KiB .. MAX_KIB + 1 KiB, so the sizes
# above an allocator's largest size class (32 KiB for pool and tlscache)
# go through its large-block path. The threads hold the GIL while they
# allocate. Deterministic; prints the total bytes allocated.
import sys
import threading

threads, n, max_kib = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
totals = [0] * threads


def churn(t):
    keep = [None] * 16
    x = t + 1
    total = 0
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        size = 1024 + (x >> 4) % (max_kib * 1024)
        keep[x % 16] = b"x" * size
        total += size
    totals[t] = total


workers = [threading.Thread(target=churn, args=(t,)) for t in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print(sum(totals))
