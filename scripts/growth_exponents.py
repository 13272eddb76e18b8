#!/usr/bin/python3
"""Growth exponents of the metrics in a chens series.csv.

For each metric, the least-squares slope p of log(v) against log(t) over the samples with
t in [t0, t1], where v is the running maximum of the column <metric>_max (the errors
oscillate; a stated growth rate describes their envelope). Points are weighted uniformly
in log t (each sample by its share of the log-time axis) so that late samples do not
dominate; this is the fit of growth_exponent() in tests/papers/paper_support.hpp.

  scripts/growth_exponents.py DIR/series.csv                 # all metrics, t in [10, end]
  scripts/growth_exponents.py DIR/series.csv --t0 10 --t1 200 --metric energy_error
  scripts/growth_exponents.py DIR/series.csv --raw           # fit v itself, not its running max

Prints one line per metric: name, exponent, number of points, value at the end of the
window. Metrics that are zero everywhere in the window (e.g. integration_error without a
reference) are reported as "n/a". Standard library only.
"""
import argparse
import csv
import math
import sys


def loglog_slope(ts, vs):
    pts = [(math.log(t), math.log(v)) for t, v in zip(ts, vs) if t > 0 and v > 0]
    if len(pts) < 3:
        return None, len(pts)
    lx = [p[0] for p in pts]
    ly = [p[1] for p in pts]
    n = len(lx)
    w = []
    for i in range(n):
        lo = lx[0] if i == 0 else 0.5 * (lx[i - 1] + lx[i])
        hi = lx[-1] if i == n - 1 else 0.5 * (lx[i] + lx[i + 1])
        w.append(hi - lo)
    sw = sum(w)
    mx = sum(wi * x for wi, x in zip(w, lx)) / sw
    my = sum(wi * y for wi, y in zip(w, ly)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(w, lx))
    sxy = sum(wi * (x - mx) * (y - my) for wi, x, y in zip(w, lx, ly))
    return sxy / sxx, n


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("series", help="series.csv written by chens run")
    ap.add_argument("--t0", type=float, default=10.0, help="start of the window (default 10)")
    ap.add_argument("--t1", type=float, default=math.inf, help="end of the window (default: last sample)")
    ap.add_argument("--metric", action="append", help="metric name (repeatable; default: all *_max columns)")
    ap.add_argument("--raw", action="store_true", help="fit the metric itself instead of its running maximum")
    args = ap.parse_args(argv)

    with open(args.series, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("growth_exponents.py: %s has no rows" % args.series)
    cols = list(rows[0].keys())
    metrics = args.metric or [c[: -len("_max")] for c in cols if c.endswith("_max")]
    t = [float(r["t"]) for r in rows]
    for m in metrics:
        col = m + "_max"
        if col not in rows[0]:
            sys.exit("growth_exponents.py: no column %s in %s" % (col, args.series))
        v = [float(r[col]) for r in rows]
        if not args.raw:
            run, acc = [], 0.0
            for x in v:
                acc = max(acc, x)
                run.append(acc)
            v = run
        sel = [(ti, vi) for ti, vi in zip(t, v) if args.t0 <= ti <= args.t1]
        p, n = loglog_slope([s[0] for s in sel], [s[1] for s in sel])
        last = sel[-1][1] if sel else float("nan")
        if p is None:
            print("%-24s n/a  (%d positive points)" % (m, n))
        else:
            print("%-24s %6.2f  (%d points, value at end %.3e)" % (m, p, n, last))


if __name__ == "__main__":
    main(sys.argv[1:])
