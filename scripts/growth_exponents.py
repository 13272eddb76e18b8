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
reference) are reported as "n/a". As chens does for summary.json (docs/study-format.md,
"Growth exponents"), an exponent is withheld ("n/a" and the reason) where the running
maximum at the end of the window is at rounding level (<= 1000 eps S) or saturated
(>= S / 2), or where the growth stops within the window; eps is the machine epsilon of
the run's precision and S the largest |component| of model.initial (at least 1), both
read from summary.json beside series.csv when it is there (else --precision, --state-size).
--no-limits reports every fit. Standard library only.
"""
import argparse
import csv
import json
import math
import os
import sys

EPSILON = {"double": 2.0 ** -52, "float": 2.0 ** -23}
ROUNDING_ULPS = 1000.0  # host/output/growth.hpp: rounding_ulps, saturation_fraction
SATURATION_FRACTION = 0.5


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


def run_limits(series, precision, state_size):
    """(precision, S) of the run: from summary.json beside series.csv where not given."""
    summary = os.path.join(os.path.dirname(os.path.abspath(series)), "summary.json")
    study = {}
    if os.path.isfile(summary):
        with open(summary) as f:
            study = json.load(f).get("study", {})
    if precision is None:
        precision = study.get("integrator", {}).get("precision", "double")
    if state_size is None:
        state_size = max([abs(z) for z in study.get("model", {}).get("initial", [])] + [0.0])
    return precision, max(1.0, state_size)


def withheld(t, v, t0, t1, rounding, saturation):
    """Why the fit of v over [t0, t1] says nothing about growth, or None (assess_growth)."""
    inside = [x for ti, x in zip(t, v) if ti <= t1]
    if inside and not math.isfinite(inside[-1]):
        return "no live instance at the end of the window"
    largest = max([x for x in inside if math.isfinite(x)] + [0.0])
    if largest <= rounding:
        return "at rounding level (max %.3g <= %.3g)" % (largest, rounding)
    if largest >= saturation:
        return "saturated (max %.3g >= %.3g)" % (largest, saturation)
    tm = math.sqrt(max(t0, 0.0) * t1)
    a, _ = loglog_slope(*zip(*[(ti, x) for ti, x in zip(t, v) if t0 <= ti <= tm])) if any(t0 <= ti <= tm for ti in t) else (None, 0)
    b, _ = loglog_slope(*zip(*[(ti, x) for ti, x in zip(t, v) if tm <= ti <= t1])) if any(tm <= ti <= t1 for ti in t) else (None, 0)
    if a is not None and b is not None and a >= 0.5 and b < 0.5 * a:
        return "growth stops within the window (slope %.3g over t in [%.3g, %.3g], %.3g over [%.3g, %.3g])" % (
            a, t0, tm, b, tm, t1)
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("series", help="series.csv written by chens run")
    ap.add_argument("--t0", type=float, default=10.0, help="start of the window (default 10)")
    ap.add_argument("--t1", type=float, default=math.inf, help="end of the window (default: last sample)")
    ap.add_argument("--metric", action="append", help="metric name (repeatable; default: all *_max columns)")
    ap.add_argument("--raw", action="store_true", help="fit the metric itself instead of its running maximum")
    ap.add_argument("--precision", choices=sorted(EPSILON), help="the run's precision (default: summary.json's, else double)")
    ap.add_argument("--state-size", type=float, help="S (default: from summary.json's model.initial, else 1)")
    ap.add_argument("--no-limits", action="store_true", help="report every fit, at rounding level or saturated too")
    args = ap.parse_args(argv)
    precision, size = run_limits(args.series, args.precision, args.state_size)
    rounding, saturation = ROUNDING_ULPS * EPSILON[precision] * size, SATURATION_FRACTION * size

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
        raw = [float(r[col]) for r in rows]
        run, acc = [], 0.0
        for x in raw:
            acc = max(acc, x) if math.isfinite(x) else acc
            run.append(acc)
        v = raw if args.raw else run
        sel = [(ti, vi) for ti, vi in zip(t, v) if args.t0 <= ti <= args.t1]
        p, n = loglog_slope([s[0] for s in sel], [s[1] for s in sel])
        last = sel[-1][1] if sel else float("nan")
        t1 = min(args.t1, t[-1])
        why = None if args.no_limits or p is None else withheld(t, raw if args.raw else run, args.t0, t1, rounding,
                                                                 saturation)
        if p is None:
            print("%-24s n/a  (%d positive points)" % (m, n))
        elif why:
            print("%-24s    n/a  (%d points, value at end %.3e; withheld: %s)" % (m, n, last, why))
        else:
            print("%-24s %6.2f  (%d points, value at end %.3e)" % (m, p, n, last))


if __name__ == "__main__":
    main(sys.argv[1:])
