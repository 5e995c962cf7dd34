# Corpus workload for python3 (traces/corpus/record.sh): JSON round trip,
# counting, regex, sorting, and two threads building and handing over dicts,
# so the trace has the allocation mix of a small data-processing script and
# cross-thread frees. Deterministic with PYTHONHASHSEED=0.
import collections
import json
import queue
import re
import threading

records = [{"id": i, "name": "item%05d" % i, "tags": ["t%d" % (i % 7), "g%d" % (i % 13)],
            "score": (i * 7919) % 1000 / 10.0} for i in range(3000)]
text = json.dumps(records)
back = json.loads(text)
counts = collections.Counter(tag for r in back for tag in r["tags"])
index = {}
for w in re.findall(r"item\d+", text):
    index.setdefault(w[-2:], []).append(w)
best = sorted(back, key=lambda r: (-r["score"], r["name"]))[:5]

handover = queue.Queue(maxsize=64)

def producer(n):
    for i in range(n):
        handover.put({"k%d" % j: "v" * (j % 40) for j in range(i % 50)})
    handover.put(None)

def consumer(out):
    total = 0
    while (d := handover.get()) is not None:
        total += sum(len(v) for v in d.values())
    out.append(total)

result = []
threads = [threading.Thread(target=producer, args=(800,)), threading.Thread(target=consumer, args=(result,))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(text), len(index), counts.most_common(3), [r["id"] for r in best], result)
