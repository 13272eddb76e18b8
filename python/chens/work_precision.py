"""Work-precision of a study (issue 43): achieved error against cost, from comparison.csv.

One module for both readers: `StudyResult.work_precision()` / `cheapest_at()` of the Python
package, and `chens plot`'s work_precision figure and summary.txt table
(scripts/plot_study.py loads this file). Standard library only.

A study has a work-precision diagram when its runs differ in a precision key
(PRECISION_KEYS: the step size or a tolerance). Its curves are the runs that agree on every
other varied key (method, formulation, projections, ...), each ordered by cost. The costs:
`integration_seconds` (comparison.csv's integrate_s, the CPU's timed integration; wall_s on
the GPU, where integrate_s is nan: `seconds_from` says which), which moves by several per
cent between identical runs (docs/study-format.md, "Cost"), and `rhs_evals`, the right-hand
side evaluations, which do not move: the noise-free cost.

`cheapest_at` answers "which run reaches this error cheapest": along each curve, the first
cost (from the cheapest run on) at which its error falls to the level, interpolated linearly
in log cost against log error between the two runs around it; `bound` says "=" for an
interpolated cost, "<=" where the curve's cheapest run is already at or below the level (a
cheaper run might be too: no extrapolation), and "" where no run of the curve reaches it.
Runs left out of every curve (and said so in `left_out`): a non-finite or zero error (a log
scale has no place for it), a non-finite or non-positive cost, and runs whose live fraction
at t_final is below min_live (their statistics are a few survivors', not the ensemble's).
"""

import csv
import io
import math

#: The keys whose values move a run along its curve: the step size and the tolerances.
PRECISION_KEYS = ("integrator.h", "integrator.rtol", "integrator.atol", "integrator.tol",
                  "integrator.steps_per_oscillation")
#: The achieved errors a table row holds (comparison.csv's columns at t_final).
ERRORS = ("integration_error_p50", "integration_error_max", "energy_error_p50", "energy_error_max")
#: The costs a curve can be read against.
COSTS = ("integration_seconds", "rhs_evals")
#: Below this live fraction at t_final a run's errors are a few survivors' (plot's --min-live).
MIN_LIVE = 0.5


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def varied_keys(header):
    """comparison.csv's varied keys: its columns between `run` and `formulation`."""
    return header[1:header.index("formulation")] if "formulation" in header else []


def read(comparison_csv):
    """(varied keys, rows as dicts of text) of comparison.csv's text."""
    reader = csv.DictReader(io.StringIO(comparison_csv))
    rows = list(reader)
    return varied_keys(reader.fieldnames or []), rows


def precision_keys(keys, rows):
    """The precision keys among the varied ones whose values differ between the rows."""
    return [k for k in keys if k in PRECISION_KEYS and len({r.get(k, "") for r in rows}) > 1]


def table(comparison_csv, min_live=MIN_LIVE):
    """(columns, rows): one row per run, in the study's order: run, its varied keys, `curve`
    (the other varied keys' values: "method=rk4, formulation=dirac"; "all runs" when only
    precision keys vary), formulation, method, h, the achieved errors (ERRORS), the costs
    (integration_seconds, seconds_from, cost_s, steps, rhs_evals, reference_rhs_evals),
    instances, live_final and `usable` (False: left out of the curves, `left_out` says why).
    Raises ValueError when the runs do not differ in a precision key."""
    keys, rows = read(comparison_csv)
    moving = precision_keys(keys, rows)
    if not moving:
        raise ValueError("work-precision needs runs that differ in the step size or a tolerance (%s); this "
                         "study's runs vary %s" % (", ".join(PRECISION_KEYS), ", ".join(keys) or "nothing"))
    others = [k for k in keys if k not in moving]
    columns = (["run"] + keys + ["curve", "formulation", "method", "h"] + list(ERRORS) +
               ["integration_seconds", "seconds_from", "cost_s", "steps", "rhs_evals", "reference_rhs_evals",
                "instances", "live_final", "usable", "left_out"])
    out = []
    for r in rows:
        row = {"run": r["run"]}
        for k in keys:
            row[k] = r.get(k, "")
        row["curve"] = ", ".join("%s=%s" % (k.split(".")[-1], r.get(k, "")) for k in others) or "all runs"
        row["formulation"], row["method"], row["h"] = r.get("formulation", ""), r.get("method", ""), _number(r.get("h"))
        for e in ERRORS:
            row[e] = _number(r.get(e))
        seconds = _number(r.get("integrate_s"))
        row["seconds_from"] = "integrate_s"
        if not math.isfinite(seconds):
            seconds, row["seconds_from"] = _number(r.get("wall_s")), "wall_s"
        row["integration_seconds"] = seconds
        row["cost_s"] = _number(r.get("cost_s"))
        for c in ("steps", "rhs_evals", "reference_rhs_evals", "instances", "live_final"):
            v = _number(r.get(c))
            row[c] = int(v) if math.isfinite(v) else None
        why = []
        if row["instances"] and row["live_final"] is not None and row["live_final"] < min_live * row["instances"]:
            why.append("%d/%d live at t_final, below %g" % (row["live_final"], row["instances"], min_live))
        row["usable"], row["left_out"] = not why, "; ".join(why)
        out.append(row)
    return columns, out


def _point(row, metric, cost):
    """(cost, error, why not) of a row's point, why not empty where it has one."""
    e, c = row[metric], row[cost]
    c = math.nan if c is None else float(c)
    if not row["usable"]:
        return None, None, row["left_out"]
    if not (math.isfinite(e) and e > 0):
        return None, None, "%s is %s" % (metric, "0" if e == 0 else "not finite")
    if not (math.isfinite(c) and c > 0):
        return None, None, "%s is %s" % (cost, "not positive" if math.isfinite(c) else "not finite")
    return c, e, ""


def curves(rows, metric, cost):
    """{curve: [(cost, error, run), ...] ordered by cost} of the usable points, and the runs
    left out as [(run, why)]."""
    by_curve, left_out = {}, []
    for row in rows:
        c, e, why = _point(row, metric, cost)
        by_curve.setdefault(row["curve"], [])
        if why:
            left_out.append((row["run"], why))
        else:
            by_curve[row["curve"]].append((c, e, row["run"]))
    for points in by_curve.values():
        points.sort()
    return by_curve, left_out


def cost_at(points, error):
    """(cost, bound, runs) at which a curve's error first falls to `error`, from its cheapest
    point on: see the module's docstring; (None, "", ()) where it never does."""
    if not points:
        return None, "", ()
    if points[0][1] <= error:
        return points[0][0], "<=", (points[0][2],)
    for (c0, e0, r0), (c1, e1, r1) in zip(points, points[1:]):
        if e0 > error >= e1:
            f = (math.log(error) - math.log(e0)) / (math.log(e1) - math.log(e0))
            return math.exp(math.log(c0) + f * (math.log(c1) - math.log(c0))), "=", (r0, r1)
    return None, "", ()


def cheapest_at(rows, error, metric="integration_error_p50", cost="integration_seconds"):
    """One row per curve: curve, cost (None where not reached), bound, runs (the one or two
    runs it is read from), cheapest (True for the lowest cost); ordered cheapest first, the
    curves that do not reach `error` last."""
    if metric not in ERRORS:
        raise ValueError("metric %r: one of %s" % (metric, ", ".join(ERRORS)))
    if cost not in COSTS:
        raise ValueError("cost %r: one of %s" % (cost, ", ".join(COSTS)))
    if not (isinstance(error, (int, float)) and math.isfinite(error) and error > 0):
        raise ValueError("error %r: a finite number > 0" % (error,))
    by_curve, _ = curves(rows, metric, cost)
    out = []
    for name, points in by_curve.items():
        c, bound, runs = cost_at(points, error)
        out.append({"curve": name, "cost": c, "bound": bound, "runs": " .. ".join(runs), "cheapest": False})
    out.sort(key=lambda r: (r["cost"] is None, r["cost"] if r["cost"] is not None else 0.0))
    if out and out[0]["cost"] is not None:
        out[0]["cheapest"] = True
    return out


def levels(rows, metric, cost, most=6):
    """The decades 10^k between the smallest and the largest usable error of the metric, at
    most `most` of them (every other one, and so on, when there are more): where the
    summary's table compares the curves."""
    by_curve, _ = curves(rows, metric, cost)
    errors = [e for points in by_curve.values() for _, e, _ in points]
    if not errors:
        return []
    lo, hi = math.ceil(math.log10(min(errors)) - 1e-9), math.floor(math.log10(max(errors)) + 1e-9)
    decades = list(range(hi, lo - 1, -1))
    step = max(1, math.ceil(len(decades) / most))
    return [10.0 ** k for k in decades[::step]]


def summary_lines(rows, metric):
    """summary.txt's work-precision table: every run's errors and costs, then per level which
    curve reaches it cheapest, against integration seconds and against rhs evaluations."""
    def num(v, fmt):
        return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else fmt % v

    lines = ["work-precision: achieved error at t_final against cost, one curve per combination of the "
             "varied keys other than %s (integration seconds: integrate_s, wall_s on the GPU; they move by "
             "several per cent between identical runs: rhs evaluations are the noise-free cost)"
             % "/".join(PRECISION_KEYS)]
    head = "  %-28s %-30s %11s %11s %11s %11s %11s %12s"
    lines.append(head % ("run", "curve", "int p50", "int max", "energy p50", "energy max", "seconds", "rhs evals"))
    for r in rows:
        lines.append(head % (r["run"][:28], r["curve"][:30], num(r["integration_error_p50"], "%.3e"),
                             num(r["integration_error_max"], "%.3e"), num(r["energy_error_p50"], "%.3e"),
                             num(r["energy_error_max"], "%.3e"), num(r["integration_seconds"], "%.3g")
                             + ("*" if r["seconds_from"] == "wall_s" else ""), num(r["rhs_evals"], "%d")))
    if any(r["seconds_from"] == "wall_s" for r in rows):
        lines.append("  * wall_s: the run has no integrate_s (the GPU does not time the integration apart)")
    for cost in COSTS:
        by_curve, left_out = curves(rows, metric, cost)
        marks = levels(rows, metric, cost)
        if not marks:
            lines.append("  cheapest by %s: no usable point of %s" % (cost, metric))
            continue
        lines.append("  cheapest to reach %s <= level, by %s (interpolated in log-log along each curve; "
                     "<= : the curve's cheapest run is already below the level; - : not reached):" % (metric, cost))
        names = list(by_curve)
        lines.append("    %-10s " % "level" + " ".join("%16s" % n[:16] for n in names) + "   cheapest")
        for level in marks:
            found = {x["curve"]: x for x in cheapest_at(rows, level, metric, cost)}
            cells = []
            for n in names:
                x = found[n]
                cells.append("%16s" % ("-" if x["cost"] is None else
                                       ("<=" if x["bound"] == "<=" else "") + ("%.3g" % x["cost"])))
            best = [x["curve"] for x in found.values() if x["cheapest"]]
            lines.append("    %-10s " % ("%.0e" % level) + " ".join(cells) + "   " + (best[0] if best else "none"))
        for run, why in dict.fromkeys(left_out):
            lines.append("    left out: %s (%s)" % (run, why))
    return lines
