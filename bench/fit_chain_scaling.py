#!/usr/bin/python3
"""Scaling exponents of the chain right-hand side (docs/performance.md, "Chain molecule").

Reads the JSON written by bench_chain_rhs (--benchmark_format=json, or --benchmark_out=F
--benchmark_out_format=json), prints a Markdown table of the per-call CPU time in ns for
every N, and the least-squares slope of log t against log N over N_min <= N <= N_max
(default 32..256) for each part. With repetitions the per-repetition median is used
(the "_median" aggregate rows); without, the median of the iteration rows.

    bench_chain_rhs --benchmark_format=json > run.json
    /usr/bin/python3 bench/fit_chain_scaling.py run.json [run2.json ...] [--nmin 32] [--nmax 256]

With several JSON files (separate runs of the binary), each cell is the median over the
runs of the per-run medians, and the spread (min-max over runs) is printed too.

With --instructions, the input is instead a text file of lines "BM_name N count" (the
callgrind instructions per call, see docs/performance.md), fitted the same way.

Standard library only (no numpy).
"""

import argparse
import json
import math
import re
import statistics
import sys

PARTS = [
    ("BM_DiracRhs", "Dirac rhs"),
    ("BM_NaiveRhs", "naive rhs"),
    ("BM_LennardJonesGradient", "LJ gradient"),
    ("BM_DiracConstraintPart", "constraint part"),
    ("BM_GramFactorSolve", "gram solve"),
]
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
NAME = re.compile(r"^(BM_\w+)<(\d+)>$")


def load(path):
    with open(path) if path != "-" else sys.stdin as f:
        doc = json.load(f)
    medians, iterations = {}, {}
    for b in doc["benchmarks"]:
        m = NAME.match(b.get("run_name", b["name"]))
        if not m:
            continue
        key = (m.group(1), int(m.group(2)))
        t = b["cpu_time"] * TO_NS[b.get("time_unit", "ns")]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = t
        else:
            iterations.setdefault(key, []).append(t)
    times = {k: statistics.median(v) for k, v in iterations.items()}
    times.update(medians)
    return doc.get("context", {}), times


def slope(points):
    """Least-squares slope of log t against log N."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def load_instructions(path):
    times = {}
    with open(path) if path != "-" else sys.stdin as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0].startswith("BM_"):
                times[(parts[0], int(parts[1]))] = float(parts[2])
    return times


def report(times, what, nmin, nmax):
    ns = sorted({n for _, n in times})
    if not ns:
        sys.exit("no BM_*<N> rows in the input")
    print("%s:\n" % what)
    print("| N | " + " | ".join(label for _, label in PARTS) + " | constraint share of Dirac rhs |")
    print("| ---: " * (len(PARTS) + 2) + "|")
    for n in ns:
        cells = []
        for name, _ in PARTS:
            t = times.get((name, n))
            cells.append("%.0f" % t if t is not None else "-")
        d, c = times.get(("BM_DiracRhs", n)), times.get(("BM_DiracConstraintPart", n))
        share = "%.0f %%" % (100.0 * c / d) if d and c else "-"
        print("| %d | %s | %s |" % (n, " | ".join(cells), share))

    print("\nexponent p in t ~ N^p, least squares on log t vs log N, N = %d..%d:" % (nmin, nmax))
    for name, label in PARTS:
        pts = [(n, times[(name, n)]) for n in ns if nmin <= n <= nmax and (name, n) in times]
        if len(pts) < 2:
            print("  %-16s (fewer than two N in range)" % label)
            continue
        print("  %-16s %.2f   (N = %s)" % (label, slope(pts), ", ".join(str(n) for n, _ in pts)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+", help="bench_chain_rhs JSON output(s) ('-' for stdin)")
    ap.add_argument("--nmin", type=int, default=32)
    ap.add_argument("--nmax", type=int, default=256)
    ap.add_argument("--instructions", action="store_true",
                    help="input is lines 'BM_name N instructions_per_call' instead of JSON")
    args = ap.parse_args()

    if args.instructions:
        report(load_instructions(args.inputs[0]), "Instructions per call (callgrind)", args.nmin, args.nmax)
        return
    runs = [load(path) for path in args.inputs]
    if len(runs) == 1:
        context, times = runs[0]
        what = "CPU time per call, ns (%s, %s)" % (context.get("date", "?"), context.get("host_name", "?"))
        report(times, what, args.nmin, args.nmax)
        return
    keys = set.intersection(*(set(t) for _, t in runs))
    times = {k: statistics.median(t[k] for _, t in runs) for k in keys}
    report(times, "CPU time per call, ns, median over %d runs" % len(runs), args.nmin, args.nmax)
    print("\nspread over the runs (min-max, ns):\n")
    print("| N | " + " | ".join(label for _, label in PARTS) + " |")
    print("| ---: " * (len(PARTS) + 1) + "|")
    for n in sorted({n for _, n in keys}):
        cells = []
        for name, _ in PARTS:
            v = [t[(name, n)] for _, t in runs if (name, n) in t]
            cells.append("%.0f-%.0f" % (min(v), max(v)) if v else "-")
        print("| %d | %s |" % (n, " | ".join(cells)))
    print("\nper-run exponents, LJ gradient / constraint part (N = %d..%d):" % (args.nmin, args.nmax))
    for path, (_, t) in zip(args.inputs, runs):
        fits = []
        for name in ("BM_LennardJonesGradient", "BM_DiracConstraintPart"):
            pts = [(n, t[(name, n)]) for (b, n) in t if b == name and args.nmin <= n <= args.nmax]
            fits.append("%.2f" % slope(sorted(pts)) if len(pts) >= 2 else "-")
        print("  %s: %s / %s" % (path, fits[0], fits[1]))


if __name__ == "__main__":
    main()
