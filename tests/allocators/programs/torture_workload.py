# torture_workload.py ROUNDS — an allocation-heavy, deterministic Python
# program for tests/e2e/torture_alloc_debug.sh, whose length scales with
# ROUNDS: each round builds dicts of strings, churns them, round-trips a
# nested structure through json, grows bytearrays (realloc) and does the same
# in two threads (cross-thread frees). Run with PYTHONMALLOC=malloc (every
# object through the malloc under test) and PYTHONHASHSEED=0; prints one
# digest per round, which must not depend on the allocator.
import hashlib
import json
import sys
import threading


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield x


def words(g, n):
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for _ in range(n):
        v = next(g)
        out.append("".join(alphabet[(v >> (5 * i)) % 26] for i in range(2 + v % 14)))
    return out


def records(g, ws, n):
    recs = []
    for i in range(n):
        v = next(g)
        recs.append({
            "id": i,
            "name": ws[v % len(ws)],
            "tags": [ws[(v >> k) % len(ws)] for k in range(v % 7)],
            "score": (v % 100000) / 7.0,
            "nested": {"a": [i, str(v % 1000), None, v % 2 == 0], "b": {"w": ws[i % len(ws)] * (1 + v % 5)}},
        })
    return recs


def one_round(seed):
    g = lcg(seed)
    ws = words(g, 3000)
    h = hashlib.sha256()
    # dict churn: insert, delete a third, reinsert under other keys
    d = {}
    for i, w in enumerate(ws):
        d[w + str(i % 17)] = [w] * (i % 5)
    for k in list(d)[::3]:
        del d[k]
    for w in ws[::5]:
        d[w.upper()] = w[::-1]
    h.update(repr(sorted(d.items())[:500]).encode())
    h.update(str(len(d)).encode())
    # json round trips of a nested structure
    recs = records(g, ws, 800)
    for _ in range(3):
        text = json.dumps(recs, sort_keys=True)
        back = json.loads(text)
        if back != recs:
            raise SystemExit("json round trip changed the data")
        recs = back[1:] + back[:1]
    h.update(text.encode())
    # strings: split/join/replace/format
    text = " ".join(ws)
    s = "-".join(p[::-1] for p in text.split(" ")).replace("a", "AA").replace("-", "")
    h.update(s.encode())
    h.update("".join("%s:%d:%x;" % (w, i, i * 31) for i, w in enumerate(ws[:2000])).encode())
    # bytearray growth: realloc
    buf = bytearray()
    for w in ws:
        buf += w.encode() * 3
    h.update(bytes(buf))
    return h.hexdigest()[:16]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for r in range(rounds):
        out = {}

        def worker(k):
            out[k] = one_round(1000 * r + k + 1)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        main_digest = one_round(1000 * r)
        for t in threads:
            t.join()
        print("round", r, main_digest, out[0], out[1])


main()
