"""rank_stats.py — statistics shared by the bench scripts: Spearman's rank
correlation for those that compare two orders of allocators
(bench/replay/run.sh and timing.sh, bench/fidelity/analyze.py; ties given
average ranks), and the median ratio of two sets of runs with a bootstrap
interval (bench/alloc/real.sh)."""
import random
import statistics as st


def ranks(v):
    """Average ranks, 1 = smallest."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    """Spearman's rho of x and y; NaN with fewer than 2 points or no spread."""
    if len(x) < 2:
        return float("nan")
    rx, ry = ranks(x), ranks(y)
    mx, my = st.mean(rx), st.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else float("nan")


def median_ratio(v, base, rounds=2000, seed=1):
    """median(v) / median(base) and a bootstrap 95 % interval of it (both
    sets resampled with replacement; a fixed seed, so a rerun on the same
    runs prints the same interval)."""
    rng = random.Random(seed)
    r = st.median(v) / st.median(base)
    boot = sorted(st.median(rng.choices(v, k=len(v))) / st.median(rng.choices(base, k=len(base)))
                  for _ in range(rounds))
    return r, boot[int(rounds * 0.025)], boot[int(rounds * 0.975) - 1]
