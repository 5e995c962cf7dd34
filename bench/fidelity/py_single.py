# bench/fidelity/py_single.py N: the single-threaded interpreter workload of
# make bench-fidelity, run by Debian's /usr/bin/python3. Allocation-heavy the
# way ordinary Python is: records built as dicts, strings formatted and split,
# lists sorted and grouped, JSON encoded and decoded, a dict of sets kept as an
# index and pruned. Deterministic (no random, no clock); prints a checksum so
# a broken allocator shows as a different answer, not only as a crash.
import json
import sys

n = int(sys.argv[1])
index = {}
total = 0
for rnd in range(n // 1000):
    records = []
    for i in range(1000):
        k = rnd * 1000 + i
        rec = {"id": k, "name": f"user-{k * 2654435761 % 1000003:07d}",
               "tags": [f"t{(k * j) % 97}" for j in range(k % 7 + 1)],
               "score": (k * 37 % 1000) / 7.0, "note": "x" * (k % 200)}
        records.append(rec)
        for t in rec["tags"]:
            index.setdefault(t, set()).add(k)
    blob = json.dumps(records)
    back = json.loads(blob)
    back.sort(key=lambda r: (r["score"], r["name"]))
    groups = {}
    for r in back:
        groups.setdefault(r["name"][-1], []).append(r["id"])
    words = " ".join(r["name"] for r in back).split("-")
    total += len(blob) + len(words) + sum(len(g) for g in groups.values())
    if rnd % 10 == 9:  # drop the older half of the index: frees interleave with allocations
        cut = rnd * 1000 - 5000
        for t in list(index):
            index[t] = {k for k in index[t] if k > cut}
print(total, sum(len(s) for s in index.values()))
