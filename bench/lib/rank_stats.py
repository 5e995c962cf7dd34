"""rank_stats.py — statistics shared by the bench scripts: Spearman's rank
correlation for those that compare two orders of allocators
(bench/replay/run.sh and timing.sh, bench/fidelity/analyze.py; ties given
average ranks), and the ratio of two sets of runs with a bootstrap interval
— paired by round where the runs were taken in rounds (bench/alloc/real.sh,
bench/fidelity/analyze.py)."""
import os
import random
import re
import statistics as st


def effect_floor():
    """allocreport's floor below which a difference is never meaningful
    (AR_RES_EFFECT_FLOOR in results/ar_results.h), read from the header so
    that real runs are judged by the rule replays are."""
    h = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "ar_results.h")
    with open(h) as f:
        return float(re.search(r"#define AR_RES_EFFECT_FLOOR ([0-9.]+)", f.read()).group(1))


def verdict(lo, hi, floor):
    """allocreport's verdict on a ratio's 95 % interval (time: below 1 is
    faster): meaningful only when the interval lies wholly outside 1 +-
    floor."""
    if hi < 1 - floor:
        return "faster"
    if lo > 1 + floor:
        return "slower"
    return "no meaningful difference"


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


def _interval(stat, rounds, seed):
    """A bootstrap 95 % interval: stat(rng) is one resampled estimate. A fixed
    seed, so a rerun on the same runs prints the same interval."""
    rng = random.Random(seed)
    boot = sorted(stat(rng) for _ in range(rounds))
    return boot[int(rounds * 0.025)], boot[int(rounds * 0.975) - 1]


def median_ratio(v, base, rounds=2000, seed=1):
    """median(v) / median(base) and a bootstrap 95 % interval of it (both
    sets resampled with replacement): for runs that were not taken in
    rounds."""
    lo, hi = _interval(lambda rng: st.median(rng.choices(v, k=len(v))) / st.median(rng.choices(base, k=len(base))),
                       rounds, seed)
    return st.median(v) / st.median(base), lo, hi


def paired_ratio(v, base, rounds=2000, seed=1):
    """v and base map a round to the time of that round's run. The median
    over the rounds both ran of v's time / base's time, and a bootstrap 95 %
    interval of it (rounds resampled with replacement, each round's pair
    kept together); None where no round has both. The scripts run every
    allocator once per round, back to back, so a round's runs share the
    machine's load: pairing cancels what drifts between rounds, which the
    ratio of two medians keeps (docs/FIDELITY.md, "Real ratios from paired
    rounds")."""
    pairs = [t / base[k] for k, t in v.items() if base.get(k)]
    if not pairs:
        return None
    lo, hi = _interval(lambda rng: st.median(rng.choices(pairs, k=len(pairs))), rounds, seed)
    return st.median(pairs), lo, hi
