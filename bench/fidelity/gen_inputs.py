# bench/fidelity/gen_inputs.py KIND N: the deterministic inputs of the
# programs.sh programs that read a data file, on stdout (seeded: the same
# bytes on every machine and run).
#   json N   a JSON array of N records (id, name, five tags, a float): jq's
#   text N   N lines of 76 base64 characters: perl_grow.pl's
import base64
import json
import random
import sys

kind, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
out = sys.stdout
if kind == "json":
    json.dump([{"id": i, "name": "n%d" % i, "tags": ["t%d" % rng.randint(0, 99) for _ in range(5)],
                "v": rng.random()} for i in range(n)], out)
elif kind == "text":
    for _ in range(n):
        out.write(base64.b64encode(rng.getrandbits(456).to_bytes(57, "little")).decode() + "\n")
else:
    sys.exit("gen_inputs.py: KIND is json or text, not %r" % kind)
