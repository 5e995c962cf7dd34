# workload.py — an allocation-heavy, deterministic Python program for
# tests/e2e/alloc_programs.sh: dicts, strings, lists, bytes and threads.
# Run with PYTHONMALLOC=malloc (every object through the malloc under test)
# and PYTHONHASHSEED=0; prints digests that must not depend on the allocator.
import hashlib
import json
import threading


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield x


def words(seed, n):
    g = lcg(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for _ in range(n):
        v = next(g)
        k = 3 + v % 12
        out.append("".join(alphabet[(v >> (5 * i)) % 26] for i in range(k)))
    return out


def digest(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def dict_work(seed):
    ws = words(seed, 20000)
    counts = {}
    index = {}
    for i, w in enumerate(ws):
        counts[w] = counts.get(w, 0) + 1
        index.setdefault(w[:2], []).append(i)
    # Delete and reinsert to churn the table.
    for w in list(counts)[::3]:
        del counts[w]
    for w in ws[::7]:
        counts[w.upper()] = len(w)
    return digest([sorted(counts.items())[:2000], len(counts), {k: len(v) for k, v in index.items()}])


def string_work(seed):
    ws = words(seed, 15000)
    text = " ".join(ws)
    parts = text.split(" ")
    joined = "-".join(p[::-1] for p in parts)
    replaced = joined.replace("a", "AA").replace("-", "")
    fmt = ["%s:%d:%x" % (w, i, i * 31) for i, w in enumerate(parts[:8000])]
    buf = bytearray()
    for w in parts[:10000]:
        buf += w.encode() * 3  # grows by realloc
    return digest([len(text), len(replaced), hashlib.sha256(replaced.encode()).hexdigest(),
                   fmt[::397], hashlib.sha256(bytes(buf)).hexdigest()])


def list_work(seed):
    g = lcg(seed)
    lists = [[next(g) % 1000 for _ in range(50 + i % 200)] for i in range(800)]
    for lst in lists:
        lst.sort()
    flat = sorted(x for lst in lists for x in lst)
    tuples = sorted((len(l), l[0], l[-1]) for l in lists)
    return digest([flat[::1000], tuples[::20], sum(flat)])


results = {}


def worker(k):
    # Each thread allocates and frees on its own; results land in a dict
    # shared by all threads (cross-thread frees when entries are replaced).
    r = [dict_work(100 + k), string_work(200 + k), list_work(300 + k)]
    results[k] = r


threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()

print("main dict", dict_work(1))
print("main string", string_work(2))
print("main list", list_work(3))
for k in sorted(results):
    print("thread", k, " ".join(results[k]))
