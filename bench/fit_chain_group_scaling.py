#!/usr/bin/python3
"""Cost per instance-step of chains against N on each backend (docs/performance.md,
"Chains on thread groups"), from bench_chain_group's JSON.

    bench_chain_group --benchmark_repetitions=3 --benchmark_format=json > run.json
    /usr/bin/python3 bench/fit_chain_group_scaling.py run.json [--plot scaling.png]

For every row family (BM_GpuChainGroup, BM_GpuChainGroupExact, BM_CpuChainGroup) and N it
takes the median instance_steps_per_s (the "_median" aggregate, else the median of the
iteration rows; the largest ensemble where there are several), prints the cost per
instance-step in ns, and the least-squares slope of log cost against log N over the sizes
present (N >= 16 unless --nmin says otherwise): ~2 where the Lennard-Jones pairs dominate,
~1 for the constraint part. --plot draws cost against N on log-log axes with the fitted
lines (Debian's python3-matplotlib).
"""

import argparse
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_chain_scaling import slope  # noqa: E402  (the same least-squares fit of log t on log N)

NAME = re.compile(r"^(BM_\w+)<(\d+)>/(\d+)")


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rows = {}
    for b in doc["benchmarks"]:
        m = NAME.match(b.get("run_name", b["name"]))
        if not m or "instance_steps_per_s" not in b or b.get("error_occurred"):
            continue
        family, n, count = m.group(1), int(m.group(2)), int(m.group(3))
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        rows.setdefault((family, n), {}).setdefault(count, []).append(b["instance_steps_per_s"])
    cost = {}
    for (family, n), by_count in rows.items():
        rate = statistics.median(by_count[max(by_count)])
        cost.setdefault(family, {})[n] = 1e9 / rate
    return doc.get("context", {}), cost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--nmin", type=int, default=16)
    ap.add_argument("--plot")
    args = ap.parse_args()
    context, cost = load(args.json)
    if not cost:
        sys.exit("no instance_steps_per_s rows in " + args.json)
    print(f"host: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs")
    fits = {}
    for family in sorted(cost):
        pts = sorted((n, c) for n, c in cost[family].items() if n >= args.nmin)
        line = ", ".join(f"N={n}: {c:.4g} ns" for n, c in sorted(cost[family].items()))
        if len(pts) >= 2:
            fits[family] = slope(pts)
            line += f"; exponent over N >= {args.nmin}: {fits[family]:.2f}"
        print(f"{family}: {line}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 4))
        for family in sorted(cost):
            pts = sorted(cost[family].items())
            label = family.replace("BM_", "") + (f" (exponent {fits[family]:.2f})" if family in fits else "")
            ax.loglog([n for n, _ in pts], [c for _, c in pts], "o-", label=label)
        ax.set_xlabel("atoms N")
        ax.set_ylabel("ns per instance-step (Dirac + RK4 + check)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print("wrote", args.plot)


if __name__ == "__main__":
    main()
