#!/usr/bin/python3
"""Figures of a chens result directory: the implementation of `chens plot DIR`.

  plot_study.py DIR [--out PLOTDIR] [--format png,svg] [--metrics m1,m2]
                    [--runs R1,R2] [--color-by KEY] [--style-by KEY|none]
                    [--min-live FRACTION]

DIR is either one run (DIR/summary.json, DIR/series.csv, optionally DIR/trajectory.csv and
DIR/periodogram.csv) or
a study of several runs (DIR/study.json and one such directory per run, DIR/<directory>/);
docs/study-format.md describes the files. Runs whose status in study.json is not
"complete", or whose directory lacks summary.json or series.csv, are skipped with a warning.

Written to PLOTDIR (default DIR/plots), each figure in every --format:

  <metric>.{png,svg}     per metric of series.csv, log-log against t > 0, one curve per run:
                         the ensemble median (p50), a band from p10 to p90 and the
                         maximum (001 Fig. 1; 002 Figs. 1, 2, 4, 5), the maximum drawn over
                         every band and median with a white halo. Exact zeros are not
                         drawn (log axes); the band only where it has height (p10 > 0,
                         p90 > p10, both finite)
  convergence            studies whose runs differ in integrator.h (swept or set per run):
                         the integration error at t_final (max and median over the
                         ensemble; the energy error when no run has a reference) against h,
                         log-log, one pair of lines per combination of the other swept keys,
                         with the least-squares slope of log error against log h in the
                         legend and in summary.txt (runs of the adaptive methods are left
                         out: their h is a trial step). Left out of the fit, drawn apart and named in the
                         legend and summary.txt: saturated errors (at or above
                         summary.json's growth_exponents.limits.saturation, half the size
                         of the state: grey, hollow), runs with few survivors (below
                         --min-live: grey crosses) and diverged runs; with fewer than 2
                         points left no slope is given
  work_precision         studies whose runs differ in the step size or a tolerance
                         (integrator.h, rtol, atol, tol or steps_per_oscillation; issue 43):
                         the achieved error at t_final (integration error, energy error:
                         median solid, maximum dashed) against the cost, log-log, one curve
                         per combination of the other varied keys (method, formulation,
                         projections, ...): against integration seconds (comparison.csv's
                         integrate_s; wall_s on the GPU) in the top row and against
                         right-hand-side evaluations (the noise-free cost) in the bottom row.
                         Runs below --min-live at t_final and zero or non-finite errors are
                         left out and named in summary.txt, which holds the table
                         (python/chens/work_precision.py, the Python package's
                         StudyResult.work_precision() too): every run's errors and costs and,
                         at each decade of error, which curve reaches it cheapest
                         (interpolated in log-log along each curve)
  periodogram[_<run>]    runs with periodogram.csv (output.periodogram), else pendulum runs
                         with trajectory.csv: amplitude spectrum of instance 0's y(t)
                         (001 §6 periodogram)
  periodograms           studies of several runs with periodograms: all of them in one
                         figure, as 001 §6 compares its runs
  phase_error            runs whose summary.json has a phase-error table
                         (output.phase_error): |y(kT) - y_exact(kT)| against k, one line
                         per run (002 Table 1); the table itself is in summary.txt
  end_atom[_<run>]       chain runs with trajectory.csv: the path of the last atom in the
                         plane (002 Fig. 3)
  survival               runs with first-passage levels (a [first_passage] section:
                         series.csv's surviving_<metric> and surviving_lost columns): the
                         fraction of the instances that have neither crossed the level
                         nor been lost against t, one panel per level (and one for lost,
                         the live fraction), one step curve per run; with --metrics, the
                         levels of the chosen metrics only (lost always)
  spectrum               runs with output.lyapunov_spectrum (summary.json's
                         lyapunov_spectrum; with group_by, each group's): each exponent's mean
                         at t_final with a bar from p10 to p90, the runs (or groups) side by
                         side in order, one colour per exponent, and y = 0 (the exponents
                         pair about it); the means, pair sums and sum in summary.txt
  summary.txt            per run: its live instances at t_final (and when they fell below
                         --min-live), p50 and maximum of every metric at t_final, the growth
                         exponents of summary.json (when present), its first-passage
                         counts and times (levels as in the survival figure) and the
                         periodogram's peak; the phase-error table of all runs; the
                         diverged runs and those with few survivors; the convergence slopes
                         and the points left out of them; the work-precision table

Runs with [parameters] group_by (summary.json "groups", series.csv's group column) are
drawn as a study of their groups: a curve per group, named by its label ("h=0.1",
"length=0.5..0.75"), coloured by the grouped value as a swept key (model.<parameter>, or
integrator.h for step sizes, whose list groups then get the convergence figure); the
ensemble's own rows ("all") are in series.csv and summary.json, not drawn beside them.

Studies of several runs: the swept keys are the keys of study.json's "overrides" whose
values differ between the plotted runs. The legend (outside the axes) names runs by their
"key = value" pairs (the key's last part when that is unambiguous: "h = 0.05"). Colour
shows one swept key and line style another: by default the key with the most values gets
the colour and integrator.h (else the key with the fewest values, at most 8) the line
style; any further swept keys get markers. A study laid out as a grid gets one legend
entry per colour and per line style instead of one per run.

Runs with few survivors: where a run's live fraction (series.csv's live over summary.json's
instances; a group's own live count over the group's size) is below --min-live (default
0.5, 0 < FRACTION <= 1) at a sample, its statistics from that sample on are a few
survivors', not the ensemble's: the median goes on thin and dotted, without band or
maximum, a ring marks where it starts, and the legend says so ("naive — live < 50 % from
t = 122 (73/100000 at t_final)"). In the convergence figure such a run is not fitted.
Runs whose every instance is lost are diverged instead (below).

Diverged runs (every instance lost, e.g. lost reason "diverged" or "non_finite", or an
ensemble statistic non-finite or above 1e10 while instances are live) are drawn without
band or maximum, marked with a triangle on the top edge of the axes where their curve
leaves them, and named in the legend with the time, the cause and their lost counts by
reason; the y-range comes from the other runs.

SVG files keep their text as text (searchable, editable).

The _<run> suffix is used for studies of several runs only. Prints the files written.
Exit codes: 0 success, 2 bad input (DIR missing or holding neither summary.json nor
study.json, no complete run, unknown metric or format, a --runs pattern matching no run,
a --color-by/--style-by key that no run overrides, a --min-live that is not in (0, 1]), 1
the plots could not be written.

Uses the Python standard library, numpy and matplotlib (Debian python3-numpy and
python3-matplotlib); run it with /usr/bin/python3.
"""
import argparse
import copy
import importlib.util
import json
import fnmatch
import math
import os
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.patheffects  # noqa: E402  (after the backend is chosen)
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import matplotlib.transforms  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

PROG = "plot_study.py"
matplotlib.rcParams["svg.fonttype"] = "none"
FIGSIZE = (7.0, 5.0)
FIGSIZE_STUDY = (10.5, 5.5)  # room for the legend right of the axes
DPI = 120

# Axis label and title of each metric chens reports (docs/study-format.md, "series.csv";
# include/chens/diagnostics/metrics.hpp). The chain's phi and psi are the largest residual
# over its constraints; the pendulum has one constraint.
METRIC_LABELS = {
    "integration_error": (r"integration error $\Vert z - z_\mathrm{ref}\Vert_2$", "Integration error"),
    "energy_error": (r"energy error $|H - H_0|$", "Energy error"),
    "phi": (r"position constraint residual $|\phi|$", "Position constraint residual"),
    "psi": (r"momentum constraint residual $|\psi|$", "Momentum constraint residual"),
    "linear_momentum_error": (r"linear momentum error $\Vert P(t) - P(0)\Vert_2$", "Linear momentum error"),
    "angular_momentum_error": (r"angular momentum error $|L(t) - L(0)|$", "Angular momentum error"),
    "wedge_error": (r"wedge product change $|\omega(t) - \omega(0)|$", "Wedge product (symplecticity, 004 §3.2)"),
    "lyapunov": (r"finite-time Lyapunov exponent $\lambda(t) = \log(|P\,dz(t)| / |P\,dz(0)|)\,/\,t$",
                 "Finite-time Lyapunov exponent"),
}
CHAIN_LABELS = {
    "phi": r"position constraint residual $\mathrm{max}_a\,|\phi_a|$",
    "psi": r"momentum constraint residual $\mathrm{max}_a\,|\psi_a|$",
}
# The first-passage levels a run may check ([first_passage]; series.csv's surviving_<slot>
# columns, summary.json's "first_passage"), in chens' order: one per metric, then the loss.
PASSAGE_SLOTS = ("integration_error", "energy_error", "phi", "psi", "linear_momentum_error",
                 "angular_momentum_error", "wedge_error", "lyapunov", "lost")


# The longest legend label made of a run's swept keys; a longer one gives way to the run's name.
LEGEND_WORDS = 48

# Below this live fraction (live / instances) a run's statistics are those of a few
# survivors, not the ensemble's (--min-live): the survivors are the instances the method
# happened not to lose, so their median says little about the method.
MIN_LIVE = 0.5


class InputError(Exception):
    """Bad input: reported on stderr, exit code 2."""


class Run:
    """One run's results: its summary.json, series.csv and (optional) trajectory.csv.

    name is the run's name in study.json, "" for a single-run directory; overrides its
    "section.key": value pairs there. colour, linestyle, marker and label are set by
    encode() for studies (a single run: its colour, formulation, method and step size).
    """

    def __init__(self, name, directory, colour, overrides=None, min_live=MIN_LIVE):
        self.name = name
        self.colour = self.study_colour = colour  # study_colour: by position in study.json
        self.linestyle = "-"
        self.marker = None
        self.grouped_by = None  # [parameters] group_by: the grouped parameter of a group (expand_groups)
        self.overrides = {k: value_text(v) for k, v in (overrides or {}).items()}
        path = os.path.join(directory, "summary.json")
        try:
            with open(path) as f:
                self.summary = json.load(f)
        except ValueError as e:
            raise InputError("%s: not valid JSON: %s" % (path, e)) from None
        self.series = read_csv(os.path.join(directory, "series.csv"))
        path = os.path.join(directory, "trajectory.csv")
        self.trajectory = read_csv(path) if os.path.isfile(path) else None
        path = os.path.join(directory, "periodogram.csv")
        self.periodogram = read_csv(path) if os.path.isfile(path) else None
        self.label = name or run_label(self.summary)
        self.divergence = divergence(self)
        self.min_live = min_live
        self.thinning = thinning(self)
        # Kept here: the groups of a grouped run (expand_groups) lose growth_exponents.
        self.saturation = saturation_limit(self.summary)

    @property
    def model(self):
        return self.summary.get("study", {}).get("model", {}).get("kind", "")

    def metrics(self):
        """Metrics of series.csv, in file order (every metric has a _max column)."""
        return [c[: -len("_max")] for c in self.series if c.endswith("_max")]


# Above this an ensemble statistic counts as diverged: the systems chens integrates have
# states and energies of order 1 to 10^3, so 1e10 is no error a working run reaches.
DIVERGED_ABOVE = 1e10


def lost_words(summary):
    """'256/256 lost: diverged 200, non_finite 56' (reasons with a non-zero count)."""
    reasons = ", ".join("%s %d" % (k, v) for k, v in sorted((summary.get("lost") or {}).items())
                        if isinstance(v, (int, float)) and v > 0)
    words = "%s/%s lost" % (summary.get("lost_instances", "?"), summary.get("instances", "?"))
    return words + (": " + reasons if reasons else "")


def divergence(run):
    """(t, words) where the run diverged, or None.

    A run diverged when every instance is lost (whatever the reason: "diverged",
    "non_finite", ...) or when a statistic of a metric is non-finite or above
    DIVERGED_ABOVE at a sample where instances are live; t is the first such sample (None
    when every instance was lost before the first sample).
    """
    s, series = run.summary, run.series
    t = series["t"]
    live = series["live"] > 0 if "live" in series else np.ones(len(t), bool)
    first = None
    for m in run.metrics():
        for col in [c for c in series if c.startswith(m + "_")]:
            v = series[col]
            bad = live & (~np.isfinite(v) | (v > DIVERGED_ABOVE))
            if bad.any():
                i = int(np.argmax(bad))
                if first is None or i < first[0]:
                    what = "non-finite" if not np.isfinite(v[i]) else "> %.0e" % DIVERGED_ABOVE
                    first = (i, "%s %s" % (col, what))
    instances, lost = s.get("instances"), s.get("lost_instances")
    if isinstance(instances, int) and isinstance(lost, int) and instances > 0 and lost >= instances:
        gone = np.flatnonzero(~live)
        i = int(gone[0]) if gone.size else None
        if first is None or (i is not None and i < first[0]):
            when = "at t = %g, " % t[i] if i is not None else ""
            return (float(t[i]) if i is not None else None), "%severy instance lost (%s)" % (when, lost_words(s))
    if first is None:
        return None
    i, what = first
    lost = "; %s" % lost_words(s) if s.get("lost_instances") else ""
    return float(t[i]), "at t = %g, %s%s" % (t[i], what, lost)


def percent(fraction):
    """A fraction as a percentage: 0.5 -> '50 %', 0.025 -> '2.5 %'."""
    return "%g %%" % (100.0 * fraction)


def live_at_final(run):
    """(live instances at the last sample, instances) or None when series.csv has no live
    column or summary.json no instance count."""
    instances = run.summary.get("instances")
    live = run.series.get("live")
    if live is None or not isinstance(instances, int) or instances <= 0 or not np.isfinite(live[-1]):
        return None
    return int(live[-1]), instances


def thinning(run):
    """(t, words) from where fewer than run.min_live of the run's instances are live, or None.

    t is the first sample whose live / instances is below min_live; a group of a grouped
    run counts its own live instances against its own size (expand_groups). Diverged runs
    (divergence) keep their own treatment and get None.
    """
    final = live_at_final(run)
    if run.divergence is not None or final is None:
        return None
    with np.errstate(invalid="ignore"):
        low = run.series["live"] < run.min_live * final[1]
    if not low.any():
        return None
    t = float(run.series["t"][int(np.argmax(low))])
    return t, "live < %s from t = %g (%d/%d at t_final)" % (percent(run.min_live), t, final[0], final[1])


def saturation_limit(summary):
    """The error at or above which a run's errors are saturated (no longer small against the
    state), or None when it is unknown: summary.json's growth_exponents.limits.saturation,
    the limit of chens' withheld growth exponents ("saturated (max v >= S/2)",
    host/output/growth.hpp: half the size S of the state, the largest |component| of the
    initial state and at least 1); for older summaries S/2 from study.model.initial, or
    1 for the pendulums' default initial state [1, 0, 0, -2]."""
    limits = (summary.get("growth_exponents") or {}).get("limits") or {}
    if isinstance(limits.get("saturation"), (int, float)) and limits["saturation"] > 0:
        return float(limits["saturation"])
    model = summary.get("study", {}).get("model", {})
    initial = model.get("initial")
    if isinstance(initial, list) and initial and all(isinstance(z, (int, float)) for z in initial):
        size = max(abs(z) for z in initial)
        if math.isfinite(size):
            return 0.5 * max(1.0, size)
    if model.get("kind", "pendulum") in ("pendulum", "penalty-pendulum") and not initial:
        return 1.0
    return None


def value_text(v):
    """An override's value as it is written in the legend ('0.1', 'rk4', 'true')."""
    return v if isinstance(v, str) else json.dumps(v)


def read_csv(path):
    """A chens CSV file as {column: numpy array} ('nan' where no instance is live); a first
    column "group" (series.csv of a run with [parameters] group_by) as strings."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        grouped = header[0] == "group"
        try:
            rows = [line.rstrip("\n").split(",") for line in f if line.strip()]
            data = np.array([[float(x) for x in r[1 if grouped else 0:]] for r in rows], dtype=float)
            if any(len(r) != len(header) for r in rows):
                raise ValueError("a row's cells differ in number from the header's")
        except ValueError as e:
            raise InputError("%s: not a chens CSV file: %s" % (path, e)) from None
    if data.shape[0] == 0:
        raise InputError("%s has no rows" % path)
    out = {name: data[:, i] for i, name in enumerate(header[1:] if grouped else header)}
    if grouped:
        out["group"] = np.array([r[0] for r in rows])
    return out


def group_key(by):
    """The study key a [parameters] group_by parameter stands for in legends and figures:
    integrator.h for h (so that a grouped step-size ensemble gets the convergence figure),
    model.<parameter> for the others."""
    return "integrator.h" if by == "h" else "model." + by


def expand_groups(runs, entries):
    """Runs with [parameters] group_by (a "groups" table in summary.json, a group column in
    series.csv) become one run per group, named "<group label>" (a single run) or
    "<run>/<group label>", whose overrides add the grouped key's value: every figure then
    draws a curve per group as it draws one per run of a sweep. The ensemble's own rows
    ("all") are not drawn beside its groups."""
    out_runs, out_entries = [], []
    for run in runs:
        groups = run.summary.get("groups")
        if not groups or "group" not in run.series:
            out_runs.append(run)
            out_entries += [e for e in entries if e.get("name") == run.name] or [{"name": run.name}]
            continue
        key = group_key(groups["by"])
        for g in groups["groups"]:
            label = g["group"]
            part = copy.copy(run)
            rows = run.series["group"] == label
            part.series = {c: v[rows] for c, v in run.series.items() if c != "group"}
            summary = {k: v for k, v in run.summary.items()
                       if k not in ("groups", "growth_exponents", "periodogram", "phase_error", "first_passage")}
            summary.update({k: v for k, v in g.items() if k not in ("group", "value", "min", "max")})
            summary["lost"] = {}  # the reasons are counted for the whole ensemble only
            value = g["value"] if "value" in g else label.split("=", 1)[1]
            study = json.loads(json.dumps(summary.get("study", {})))
            if groups["by"] == "h":  # a bin of step sizes has no one h
                study.setdefault("integrator", {})["h"] = g.get("value")
            summary["study"] = study
            part.summary = summary
            part.name = label if not run.name else run.name + "/" + label
            part.overrides = dict(run.overrides, **{key: value_text(value)})
            part.trajectory = part.periodogram = None
            part.label = part.name
            part.grouped_by = groups["by"]  # summary.txt: a group, not a run of a study
            part.divergence = divergence(part)
            part.thinning = thinning(part)  # the group's live count against the group's size
            out_runs.append(part)
            entry = [e for e in entries if e.get("name") == run.name]
            overrides = dict(entry[0].get("overrides", {}) if entry else {}, **{key: value})
            out_entries.append({"name": part.name, "status": "complete", "overrides": overrides})
    return out_runs, out_entries


# integrator.method's adaptive methods (host/dispatch/method_id.hpp, adaptive_methods): their h
# is the first trial step, their rtol what sets their steps.
ADAPTIVE_METHODS = ("dopri5", "dop853", "vern9", "rodas5p")


def run_label(summary):
    """Legend label of a single run: formulation + method and step size (tolerance for the
    adaptive methods)."""
    integ = summary.get("study", {}).get("integrator", {})
    label = "%s + %s" % (integ.get("formulation", "?"), integ.get("method", "?"))
    if integ.get("method") in ADAPTIVE_METHODS:
        return label + ", rtol = %g" % integ.get("rtol", float("nan"))
    return label + ", h = %g" % integ.get("h", float("nan"))


def colours(n):
    """n distinct colours: tab10 up to 10 runs, tab20 up to 20, viridis beyond."""
    if n <= 10:
        return [plt.get_cmap("tab10")(i) for i in range(n)]
    if n <= 20:
        return [plt.get_cmap("tab20")(i) for i in range(n)]
    return [plt.get_cmap("viridis")(x) for x in np.linspace(0.0, 0.95, n)]


def select(entries, patterns, index_path):
    """The entries of study.json whose name matches one of the --runs patterns (names or
    shell globs: fnmatch, case-sensitive), in study.json's order. A pattern that matches
    no run is an error: a typo must not silently drop runs from a comparison."""
    if patterns is None:
        return entries
    names = [e.get("name", "?") for e in entries]
    unmatched = [p for p in patterns if not fnmatch.filter(names, p)]
    if unmatched or not patterns:
        raise InputError("--runs %s: matches no run in %s (its runs: %s)"
                         % (",".join(unmatched) or "(empty)", index_path, ", ".join(names)))
    return [e for e, n in zip(entries, names) if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def load(directory, patterns=None, min_live=MIN_LIVE):
    """(runs to plot, skipped runs as "run NAME: why", whether DIR is a study of several
    runs, every entry of study.json). patterns: --runs, None for every run; min_live:
    --min-live.

    Without swept keys a run's colour follows its position in study.json (skipped runs
    included), so it is the same in every figure and in every plot of the same study.
    """
    if not os.path.exists(directory):
        raise InputError("%s: no such directory" % directory)
    if not os.path.isdir(directory):
        raise InputError("%s: not a directory" % directory)
    index_path = os.path.join(directory, "study.json")
    if os.path.isfile(index_path):
        try:
            with open(index_path) as f:
                entries = json.load(f).get("runs", [])
        except ValueError as e:
            raise InputError("%s: not valid JSON: %s" % (index_path, e)) from None
        chosen = select(entries, patterns, index_path)
        runs, skipped = [], []
        for entry, colour in zip(entries, colours(len(entries))):
            if not any(entry is c for c in chosen):
                continue
            name = entry.get("name", "?")
            status = entry.get("status", "missing")
            run_dir = os.path.join(directory, entry.get("directory", name))
            if status != "complete":
                code = " (exit code %s)" % entry["exit_code"] if "exit_code" in entry else ""
                skipped.append("run %s: status %s%s" % (name, status, code))
                continue
            missing = [f for f in ("summary.json", "series.csv") if not os.path.isfile(os.path.join(run_dir, f))]
            if missing:
                skipped.append("run %s: %s lacks %s" % (name, run_dir, " and ".join(missing)))
                continue
            try:
                runs.append(Run(name, run_dir, colour, entry.get("overrides"), min_live))
            except InputError as e:
                skipped.append("run %s: %s" % (name, e))
        if not runs:
            raise InputError("%s: no complete run to plot (%d runs in study.json%s)"
                             % (index_path, len(entries), "" if patterns is None else ", %d chosen by --runs"
                                % len(chosen)))
        return runs, skipped, True, entries
    if patterns is not None:
        raise InputError("--runs: %s is one run, not a study of several (it has no study.json)" % directory)
    summary_path = os.path.join(directory, "summary.json")
    if not os.path.isfile(summary_path):
        raise InputError("%s holds neither summary.json (one run) nor study.json (a study of several runs)"
                         % directory)
    if not os.path.isfile(os.path.join(directory, "series.csv")):
        raise InputError("%s: series.csv is missing (summary.json is there)" % directory)
    return [Run("", directory, colours(1)[0], min_live=min_live)], [], False, []


# Line styles and markers of the swept keys (matplotlib dash patterns): each distinct in
# a legend at the line widths used here.
LINESTYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 3)), (0, (1, 3)), (0, (3, 1, 1, 1))]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*", "<", ">"]
UNSET = "(unset)"  # the value of a key a run does not override (a [[run]] study)


class Encoding:
    """How the runs of a study are told apart: colour_keys, style_key, marker_keys (the
    swept keys: overrides that differ between the plotted runs), the legend's key names,
    and whether the legend lists colours and styles (a grid) or runs."""

    def __init__(self):
        self.colour_keys, self.style_key, self.marker_keys = [], None, []
        self.short = {}
        self.factorised = False
        self.colour_of, self.style_of, self.marker_of = {}, {}, {}

    def words(self, keys, values):
        return ", ".join("%s = %s" % (self.short.get(k, k), v) for k, v in zip(keys, values) if v != UNSET)

    def describe(self):
        """summary.txt's line on what colour, line style and markers show."""
        parts = ["colour: " + (", ".join(self.colour_keys) or "one per run")]
        if self.style_key:
            parts.append("line style: " + self.style_key)
        if self.marker_keys:
            parts.append("markers: " + ", ".join(self.marker_keys))
        return "; ".join(parts)


def resolve_key(option, key, keys):
    """The override key that --color-by/--style-by KEY names: KEY itself, or the one key
    whose last part is KEY ('h' for integrator.h)."""
    if key in keys:
        return key
    ends = [k for k in keys if k.split(".")[-1] == key]
    if len(ends) == 1:
        return ends[0]
    raise InputError("%s %s: %s (the runs override %s)" % (
        option, key, "ambiguous" if ends else "no plotted run overrides this key",
        ", ".join(keys) or "no key: study.json's runs have no overrides"))


def sort_values(values):
    """Values in numeric order when they are all numbers, else in order of appearance."""
    try:
        return sorted(values, key=lambda v: float("inf") if v == UNSET else float(v))
    except ValueError:
        return list(values)


def encode(runs, entries, color_by=None, style_by=None):
    """Colour, line style, marker and legend label of every run of a study.

    Colours of a key's values are assigned over every run of study.json (those not plotted
    included, in numeric order for numbers), so a --runs subset keeps the colours of the
    whole study.
    """
    enc = Encoding()
    keys = []
    for e in entries:
        keys += [k for k in (e.get("overrides") or {}) if k not in keys]
    plotted_keys = [k for k in keys if any(k in r.overrides for r in runs)]
    value = lambda r, k: r.overrides.get(k, UNSET)  # noqa: E731
    distinct = {k: list(dict.fromkeys(value(r, k) for r in runs)) for k in plotted_keys}
    swept = [k for k in plotted_keys if len(distinct[k]) > 1]
    colour_key = resolve_key("--color-by", color_by, plotted_keys) if color_by else None
    style_key = None
    if style_by and style_by != "none":
        style_key = resolve_key("--style-by", style_by, plotted_keys)
        if len(distinct[style_key]) > len(LINESTYLES):
            raise InputError("--style-by %s: %d values, more than the %d line styles"
                             % (style_by, len(distinct[style_key]), len(LINESTYLES)))
        if style_key == colour_key:
            raise InputError("--style-by %s: the same key as --color-by" % style_by)
    free = [k for k in swept if k not in (colour_key, style_key)]
    if style_by is None and (len(free) >= 2 or (colour_key and free)):
        fits = [k for k in free if len(distinct[k]) <= len(LINESTYLES)]
        if "integrator.h" in fits:
            style_key = "integrator.h"
        elif fits:
            style_key = min(reversed(fits), key=lambda k: len(distinct[k]))
        free = [k for k in free if k != style_key]
    if colour_key is None and free:
        colour_key = max(free, key=lambda k: len(distinct[k]))
        free.remove(colour_key)
    ends = [k.split(".")[-1] for k in keys]
    enc.short = {k: k.split(".")[-1] if ends.count(k.split(".")[-1]) == 1 else k for k in keys}
    if colour_key is None:  # no swept key left for colour: a colour per run (its position)
        for r in runs:
            r.label = r.name
            if r.overrides and len(runs) == 1:
                r.label = enc.words(list(r.overrides), list(r.overrides.values()))
        if style_key:  # --style-by the only swept key
            enc.style_key = style_key
            for i, v in enumerate(sort_values(distinct[style_key])):
                enc.style_of[v] = LINESTYLES[i]
            for r in runs:
                r.linestyle = enc.style_of[value(r, style_key)]
                r.label = enc.words([style_key], [value(r, style_key)]) or r.name
        return enc
    enc.colour_keys, enc.style_key = [colour_key], style_key
    marker_combos = list(dict.fromkeys(tuple(value(r, k) for k in free) for r in runs))
    if len(marker_combos) > len(MARKERS):
        enc.colour_keys += free  # too many for markers: every combination gets its own colour
    elif len(marker_combos) > 1:
        enc.marker_keys = free
    shown = enc.colour_keys + ([style_key] if style_key else []) + enc.marker_keys

    every = [tuple(e.get("overrides", {}).get(k) for k in enc.colour_keys) for e in entries]
    every = [tuple(UNSET if v is None else value_text(v) for v in c) for c in every]
    colour_values = list(dict.fromkeys(every + [tuple(value(r, k) for k in enc.colour_keys) for r in runs]))
    if len(enc.colour_keys) == 1:
        colour_values = [(v,) for v in sort_values([c[0] for c in colour_values])]
    numeric = len(enc.colour_keys) == 1 and all(is_number(c[0]) or c[0] == UNSET for c in colour_values)
    if numeric and len(colour_values) > 2:  # ordered values: a sequential map shows the order
        palette = [plt.get_cmap("viridis")(x) for x in np.linspace(0.0, 0.85, len(colour_values))]
    else:
        palette = colours(len(colour_values))
    enc.colour_of = dict(zip(colour_values, palette))
    if style_key:  # over the whole study when it has few enough values, as the colours
        study_values = list(dict.fromkeys(value_text(e.get("overrides", {}).get(style_key, UNSET)) for e in entries))
        values = study_values if len(study_values) <= len(LINESTYLES) and set(distinct[style_key]) <= set(
            study_values) else distinct[style_key]
        enc.style_of = {v: LINESTYLES[i] for i, v in enumerate(sort_values(values))}
    enc.marker_of = {c: MARKERS[i] for i, c in enumerate(marker_combos)} if enc.marker_keys else {}
    for r in runs:
        r.colour = enc.colour_of[tuple(value(r, k) for k in enc.colour_keys)]
        if style_key:
            r.linestyle = enc.style_of[value(r, style_key)]
        if enc.marker_keys:
            r.marker = enc.marker_of[tuple(value(r, k) for k in enc.marker_keys)]
        r.label = enc.words(shown, [value(r, k) for k in shown]) or r.name
    entries_needed = (len({tuple(value(r, k) for k in enc.colour_keys) for r in runs})
                      + (len(distinct[style_key]) if style_key else 0) + len(enc.marker_of))
    enc.factorised = bool(style_key or enc.marker_keys) and entries_needed < len(runs)
    if len(shown) > 1 and color_by is None and style_by is None and not is_grid(entries):
        # Not a grid (named [[run]] variants): a colour per run tells them apart best; each
        # is named by its swept keys, or by its name where those read longer than a legend
        # line (a swept initial state).
        enc.colour_keys, enc.style_key, enc.marker_keys = [], None, []
        for r in runs:
            r.colour, r.linestyle, r.marker = r.study_colour, "-", None
            words = enc.words(swept, [value(r, k) for k in swept])
            r.label = words if words and len(words) <= LEGEND_WORDS else r.name
    return enc


def is_grid(entries):
    """Whether study.json's runs are every combination of their overrides' values (a
    [sweep]), as opposed to named variants that each set their own keys ([[run]])."""
    keys = list(dict.fromkeys(k for e in entries for k in (e.get("overrides") or {})))
    combos = {tuple(value_text((e.get("overrides") or {}).get(k, UNSET)) for k in keys) for e in entries}
    size = 1
    for k in keys:
        size *= len({c[keys.index(k)] for c in combos})
    return len(combos) == len(entries) and size == len(entries)


def is_number(v):
    try:
        return math.isfinite(float(v))
    except ValueError:
        return False


def file_stem(kind, run, several):
    return "%s_%s" % (kind, run.name) if several else kind


def save(fig, outdir, stem, formats, written):
    for fmt in formats:
        path = os.path.join(outdir, "%s.%s" % (stem, fmt))
        fig.savefig(path, format=fmt, dpi=DPI)
        written.append(path)
    plt.close(fig)


def positive(v):
    """v masked where it is not a finite positive number: exact zeros have no place on log
    axes and are left out (a gap), not clipped to a small number."""
    v = np.asarray(v, float)
    return np.ma.masked_where(~np.isfinite(v) | (v <= 0), v)


def band_columns(series, metric):
    """Column names (centre, band bottom, band top) and their legend words for one metric.

    The band is p10-p90. Outputs of chens versions without p10 (quantiles p50, p90, p99
    only) draw it from the minimum, and versions without quantiles fall back to the mean
    and min-max.
    """
    if metric + "_p10" in series and metric + "_p50" in series and metric + "_p90" in series:
        return metric + "_p50", metric + "_p10", metric + "_p90", "median (p50)", "p10–p90"
    if metric + "_p50" in series and metric + "_p90" in series:
        return metric + "_p50", metric + "_min", metric + "_p90", "median (p50)", "min–p90"
    return metric + "_mean", metric + "_min", metric + "_max", "mean (no quantiles in series.csv)", "min–max"


def visible_band(bottom, top):
    """Where a band from bottom to top shows on log axes: both finite, bottom > 0 (a band
    down to an exact 0 has no bottom on a log axis) and top > bottom (no height, no band)."""
    bottom, top = np.asarray(bottom, float), np.asarray(top, float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(bottom) & np.isfinite(top) & (bottom > 0) & (top > bottom)


def value_range(arrays):
    """(lowest, highest) finite positive value of the arrays, or None."""
    values = [v[np.isfinite(v) & (v > 0)] for v in arrays]
    values = np.concatenate(values) if values else np.array([])
    return (values.min(), values.max()) if values.size else None


def log_limits(lo, hi):
    pad = (hi / lo) ** 0.04 if hi > lo else 2.0
    return lo / pad, hi * pad


def mark_diverged(ax, x, run, size=9):
    """A triangle on the top edge of the axes at x: the run left the y-range there."""
    ax.plot([x], [1.0], marker="^", ms=size, color=run.colour, mec="k", mew=0.6, ls="none", clip_on=False,
            zorder=6, transform=matplotlib.transforms.blended_transform_factory(ax.transData, ax.transAxes))


def diverged_label(run):
    """The legend entry of a diverged run, wrapped: a long line would squeeze the axes."""
    return "\n".join(textwrap.wrap("%s — diverged: %s" % (run.label, run.divergence[1]), 48,
                                    subsequent_indent="    "))


def thinned_label(run):
    """The legend entry of a run whose live fraction fell below min_live, wrapped."""
    return "\n".join(textwrap.wrap("%s — %s" % (run.label, run.thinning[1]), 48, subsequent_indent="    "))


def min_live_words(runs):
    """'live < 50 %' for the runs' common --min-live."""
    fractions = {r.min_live for r in runs}
    return "live < %s" % percent(fractions.pop()) if len(fractions) == 1 else "live below --min-live"


# The ring where a run's live fraction falls below min_live: not one of MARKERS (those
# show swept keys), and hollow, so the curve under it stays visible.
THIN_MARK = dict(marker="o", ms=9, mfc="none", mew=1.6)


def mark_thinning(ax, t, centre, i, run):
    """The ring on the run's median at sample i, where its live fraction falls below
    min_live; where the median has no positive value there, at the nearest one before it
    (else after it)."""
    ok = np.isfinite(centre) & (centre > 0)
    if not ok.any():
        return
    before, after = np.flatnonzero(ok[: i + 1]), np.flatnonzero(ok[i:])
    j = int(before[-1]) if before.size else i + int(after[0])
    ax.plot([t[j]], [centre[j]], ls="none", mec=run.colour, zorder=4, **THIN_MARK)


# The maximum over the band: a white halo keeps it apart from its band (same colour) and
# from the other runs' medians, which it is drawn over.
MAX_HALO = [matplotlib.patheffects.withStroke(linewidth=2.6, foreground="white", alpha=0.9)]
Z_BAND, Z_MEDIAN, Z_MAX = 1.0, 2.0, 3.0


def run_handle(run, **kw):
    label = "\n".join(textwrap.wrap(run.label, 48, subsequent_indent="    ")) or run.label
    style = dict(color=run.colour, lw=1.6, ls=run.linestyle, marker=run.marker, ms=5, label=label)
    style.update(kw)
    return Line2D([], [], **style)


def key_handles(runs, enc):
    """Legend entries of a grid study: a heading and one entry per colour, line style and
    marker that the plotted runs use (instead of one entry per run)."""
    value = lambda r, k: r.overrides.get(k, UNSET)  # noqa: E731
    handles = [Line2D([], [], lw=0, label="colour: " + ", ".join(enc.short.get(k, k) for k in enc.colour_keys))]
    used = {tuple(value(r, k) for k in enc.colour_keys) for r in runs}
    handles += [Line2D([], [], color=c, lw=1.6, label=enc.words(enc.colour_keys, v) or UNSET)
                for v, c in enc.colour_of.items() if v in used]
    if enc.style_key:
        used = {value(r, enc.style_key) for r in runs}
        handles.append(Line2D([], [], lw=0, label="line style: " + enc.short.get(enc.style_key, enc.style_key)))
        handles += [Line2D([], [], color="0.25", lw=1.6, ls=ls, label=enc.words([enc.style_key], [v]) or UNSET)
                    for v, ls in enc.style_of.items() if v in used]
    if enc.marker_keys:
        names = ", ".join(enc.short.get(k, k) for k in enc.marker_keys)
        handles.append(Line2D([], [], lw=0, label="markers: " + names))
        handles += [Line2D([], [], color="0.25", lw=0, marker=m, label=enc.words(enc.marker_keys, v) or UNSET)
                    for v, m in enc.marker_of.items()]
    return handles


def place_legend(ax, handles, outside):
    """Outside the axes on the right for studies (many curves leave no free corner)."""
    if outside:
        ncol = 1 + (len(handles) - 1) // 28
        return ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                         borderaxespad=0.0, ncol=ncol, frameon=False)
    return ax.legend(handles=handles, fontsize="small", loc="best", ncol=1 if len(handles) <= 9 else 2)


def new_figure(several):
    return plt.subplots(figsize=FIGSIZE_STUDY if several else FIGSIZE, dpi=DPI)


def finish_time_axes(fig, ax, handles, several, ylabel, title, runs):
    """A metric's figure against t: its legend, labels, title and grid. Returns the figure."""
    place_legend(ax, handles, several)
    ax.set_xlabel("t")
    ax.set_ylabel(ylabel)
    ax.set_title("%s — %s" % (title, ensemble_words(runs)))
    ax.grid(True, which="major", lw=0.4, alpha=0.5)
    fig.tight_layout()
    return fig


def draw_metric(runs, metric, enc=None, several=False):
    """Ensemble statistics of one metric against t, log-log (001 Fig. 1; 002 Figs. 1, 2, 4, 5).

    Per run: the median (p50) as a thick line, a translucent band from p10 to p90 where it
    is visible and the maximum as a thin line (dashed, or in the run's line style when line
    styles show a swept key) with a white halo, drawn over every band and median, over the
    samples with t > 0. Runs whose live fraction falls below min_live (thinning): from that
    sample on the median alone, thin and dotted, a ring where it starts and a legend entry
    saying when and how many are live at t_final. Diverged runs: the median only, a
    triangle on the top edge where they diverge, and a legend entry saying why; the y-range
    is that of the other runs. Returns the figure.
    """
    enc = enc or Encoding()
    fig, ax = new_figure(several)
    chain = any(r.model == "chain" for r in runs)
    ylabel, title = METRIC_LABELS.get(metric, (metric, metric))
    if chain and metric in CHAIN_LABELS:
        ylabel = CHAIN_LABELS[metric]
    curves, styles, zero_runs = [], {}, []
    for run in runs:
        if metric + "_max" not in run.series:
            continue
        t = run.series["t"]
        keep = t > 0
        centre, bottom, top, centre_word, band_word = band_columns(run.series, metric)
        with_max = top != metric + "_max"
        cols = {k: run.series[c][keep] for k, c in
                (("centre", centre), ("bottom", bottom), ("top", top), ("max", metric + "_max"))}
        if run.divergence is None:
            styles[(centre_word, band_word)] = with_max
        curves.append((run, t[keep], cols, with_max))
    healthy = [c for c in curves if c[0].divergence is None]
    diverged = [c for c in curves if c[0].divergence is not None]

    def few(run, t):
        """The samples where fewer than min_live of the run's instances are live."""
        return t >= run.thinning[0] if run.thinning else np.zeros(len(t), bool)

    # The range of what is drawn: after a run thins, its median alone.
    span = value_range([v if k == "centre" else np.where(few(run, t), np.nan, v)
                        for run, t, cols, _ in healthy for k, v in cols.items()])
    if span is None:  # every run diverged: show what is below the divergence threshold
        span = value_range([np.where(v <= DIVERGED_ABOVE, v, np.nan) for _, _, cols, _ in diverged
                            for v in cols.values()])
    alpha = 0.18 if len(healthy) <= 6 else 0.10
    if span is not None:
        for run, t, cols, with_max in healthy:
            if not np.any(np.isfinite(cols["max"]) & (cols["max"] > 0)):
                zero_runs.append(run)
                continue
            thin = few(run, t)
            ax.plot(t, positive(np.where(thin, np.nan, cols["centre"])), color=run.colour, lw=1.6,
                    ls=run.linestyle, marker=run.marker, markevery=0.1, ms=5, zorder=Z_MEDIAN)
            if thin.any():
                # The statistics of a few survivors are not the ensemble's: the median goes on
                # faint, joined to the full curve at the sample before, without band or maximum.
                i = int(np.argmax(thin))
                tail = np.arange(len(t)) >= max(i - 1, 0)
                ax.plot(t, positive(np.where(tail, cols["centre"], np.nan)), color=run.colour, lw=0.9, ls=":",
                        alpha=0.7, zorder=Z_MEDIAN)
                mark_thinning(ax, t, cols["centre"], i, run)
            band = visible_band(cols["bottom"], cols["top"]) & ~thin
            if band.any():
                ax.fill_between(t, np.where(band, cols["bottom"], 1.0), np.where(band, cols["top"], 1.0),
                                where=band, color=run.colour, alpha=alpha, lw=0, zorder=Z_BAND)
            if with_max:
                ls = run.linestyle if enc.style_key else "--"
                ax.plot(t, positive(np.where(thin, np.nan, cols["max"])), color=run.colour, lw=0.9, ls=ls,
                        zorder=Z_MAX, path_effects=MAX_HALO)
        bottom_limit, top_limit = log_limits(*span)
        for run, t, cols, _ in diverged:
            ax.plot(t, positive(cols["centre"]), color=run.colour, lw=1.0, ls=run.linestyle, alpha=0.8)
            # The triangle goes where the curve leaves the axes, else where the run diverged.
            with np.errstate(invalid="ignore"):
                off = np.flatnonzero(~(cols["centre"] <= top_limit))
            t_div = run.divergence[0]
            x = t[off[0]] if off.size else t_div if t_div is not None and t_div > 0 else t[-1]
            mark_diverged(ax, x, run)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(bottom_limit, top_limit)
        # The whole time range, also where every instance is lost (nan) at late times.
        times = np.concatenate([t for _, t, _, _ in curves])
        ax.set_xlim(times.min() / 1.1, times.max() * 1.1)
    else:
        zero_runs = [run for run, _, _, _ in healthy]
        ax.text(0.5, 0.5, "0 at every sample with t > 0", transform=ax.transAxes, ha="center", va="center")
    drawn = [r for r, _, _, _ in healthy if r not in zero_runs]
    thinned = [r for r in drawn if r.thinning]
    thin_handle = lambda r: run_handle(r, label=thinned_label(r), mec=r.colour, **THIN_MARK)  # noqa: E731
    if enc.factorised:
        handles = key_handles([r for r, _, _, _ in curves], enc) + [thin_handle(r) for r in thinned]
    else:
        handles = [thin_handle(r) if r.thinning else run_handle(r) for r in drawn]
    handles += [run_handle(r, lw=0, marker="x", label=r.label + ": 0 at every t > 0 (not drawn)") for r in zero_runs]
    handles += [run_handle(r, lw=1.0, marker="^", mec="k", ms=7, label=diverged_label(r)) for r, _, _, _ in diverged]
    for (centre_word, band_word), with_max in styles.items():
        handles.append(Line2D([], [], color="0.35", lw=1.6, label=centre_word))
        handles.append(Patch(color="0.35", alpha=0.25, lw=0, label=band_word + " band"))
        if with_max:
            handles.append(Line2D([], [], color="0.35", lw=0.9, ls="-" if enc.style_key else "--",
                                  path_effects=MAX_HALO, label="max (thin line)" if enc.style_key else "max"))
    if thinned:
        handles.append(Line2D([], [], color="0.35", lw=0.9, ls=":", mec="0.35", **THIN_MARK,
                              label="\n".join(textwrap.wrap(
                                  "%s (from the ring on): median of the survivors only, dotted; no band or max"
                                  % min_live_words(thinned), 48, subsequent_indent="    "))))
    return finish_time_axes(fig, ax, handles, several, ylabel, title, runs)


def draw_lyapunov(runs, enc=None, several=False):
    """The finite-time Lyapunov exponent against t (docs/lyapunov.md): a signed rate, so a
    linear y axis (log t on x), per run the median (p50) and its p10-p90 band, and y = 0,
    which an integrable motion approaches like log t / t and a chaotic one stays above.
    Runs whose live fraction falls below min_live end their curve there (the survivors'
    exponents are not the ensemble's). Returns the figure."""
    enc = enc or Encoding()
    fig, ax = new_figure(several)
    ylabel, title = METRIC_LABELS["lyapunov"]
    drawn = []
    for run in runs:
        if "lyapunov_max" not in run.series:
            continue
        t = run.series["t"]
        keep = t > 0
        if run.thinning:
            keep &= t < run.thinning[0]
        centre, bottom, top, centre_word, band_word = band_columns(run.series, "lyapunov")
        ax.plot(t[keep], run.series[centre][keep], color=run.colour, lw=1.6, ls=run.linestyle, marker=run.marker,
                markevery=0.1, ms=5, zorder=Z_MEDIAN)
        ax.fill_between(t[keep], run.series[bottom][keep], run.series[top][keep], color=run.colour, alpha=0.15,
                        lw=0, zorder=Z_BAND)
        drawn.append(run)
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_xscale("log")
    handles = key_handles(drawn, enc) if enc.factorised else [run_handle(r) for r in drawn]
    if drawn:
        handles.append(Line2D([], [], color="0.35", lw=1.6, label=centre_word))
        handles.append(Patch(color="0.35", alpha=0.25, lw=0, label=band_word + " band"))
    return finish_time_axes(fig, ax, handles, several, ylabel, title, runs)


def spectrum_of(run):
    """summary.json's lyapunov_spectrum of a run (or of a group: expand_groups copies it), with
    at least one live instance; else None."""
    spec = run.summary.get("lyapunov_spectrum")
    return spec if spec and spec.get("instances", 0) > 0 else None


def draw_spectrum(runs):
    """The Lyapunov spectrum at t_final (output.lyapunov_spectrum, docs/lyapunov.md): for each
    run (or group) in order, each exponent's mean over the live instances with a bar from its
    p10 to its p90, one colour per exponent, and y = 0. On the constraint manifold the flow is
    Hamiltonian, so the exponents pair, lambda_i + lambda_{K+1-i} = 0, up to O(1/t): the figure
    is symmetric about 0 where the runs are long enough. Returns (figure, summary.txt lines)."""
    drawn = [r for r in runs if spectrum_of(r) is not None]
    fig, ax = plt.subplots(figsize=FIGSIZE_STUDY if len(drawn) > 1 else FIGSIZE, dpi=DPI)
    k_max = max(len(spectrum_of(r)["final_mean"]) for r in drawn)
    cols = colours(k_max)
    x = np.arange(len(drawn))
    width = 0.6 / max(k_max, 1)
    lines = ["lyapunov spectrum at t_final: each exponent's mean over the live instances (p10..p90 in the figure); "
             "pairs lambda_i + lambda_(K+1-i) and the sum: 0 up to O(1/t) on the constraint manifold"]
    for k in range(k_max):
        xs, mean, low, high = [], [], [], []
        for i, run in enumerate(drawn):
            spec = spectrum_of(run)
            if k >= len(spec["final_mean"]) or spec["final_mean"][k] is None:
                continue
            m = spec["final_mean"][k]
            p10 = spec["final_p10"][k] if spec["final_p10"][k] is not None else m
            p90 = spec["final_p90"][k] if spec["final_p90"][k] is not None else m
            xs.append(x[i] + (k - (k_max - 1) / 2.0) * width)
            mean.append(m)
            low.append(max(m - p10, 0.0))
            high.append(max(p90 - m, 0.0))
        ax.errorbar(xs, mean, yerr=[low, high], fmt="o", color=cols[k], ms=5, capsize=3, lw=1.2,
                    label=r"$\lambda_{%d}$" % (k + 1))
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([r.name or r.label for r in drawn], rotation=30 if len(drawn) > 4 else 0, ha="right" if len(drawn) > 4
                       else "center", fontsize="small")
    ax.set_ylabel(r"finite-time Lyapunov exponent $\lambda_k$ at $t_{final}$")
    ax.set_title("Lyapunov spectrum on the constraint manifold (mean over the live instances, p10-p90)")
    ax.grid(True, axis="y", alpha=0.3)
    place_legend(ax, ax.get_legend_handles_labels()[0], len(drawn) > 1)
    fig.tight_layout()
    width_label = max(len(r.name or r.label) for r in drawn)
    for run in drawn:
        spec = spectrum_of(run)
        means = ["%.4g" % v if v is not None else "-" for v in spec["final_mean"]]
        pairs = ["%.2g" % v if v is not None else "-" for v in spec.get("pair_sums_of_means", [])]
        total = spec.get("sum_of_means")
        lines.append("  %-*s  %d live: %s; pairs %s; sum %s" % (width_label, run.name or run.label, spec["instances"],
                                                                ", ".join(means), ", ".join(pairs),
                                                                "-" if total is None else "%.2g" % total))
    return fig, lines


def surviving(run):
    """{slot: surviving fraction over t} of the run's surviving_<slot> columns of series.csv."""
    return {c[len("surviving_"):]: v for c, v in run.series.items() if c.startswith("surviving_")}


def passage_slots(names, selected=None):
    """The first-passage slots among names, in PASSAGE_SLOTS order (unknown ones after it).
    selected: --metrics (None: every slot); a metric's level is shown when its metric is
    chosen, the loss always (it is no metric, and the other curves drop with it)."""
    ordered = [s for s in PASSAGE_SLOTS if s in names] + [s for s in dict.fromkeys(names) if s not in PASSAGE_SLOTS]
    return [s for s in ordered if selected is None or s == "lost" or s in selected]


def passage_level(run, slot):
    """The slot's level in summary.json's first_passage; None for lost or when it is not there."""
    entry = (run.summary.get("first_passage") or {}).get(slot)
    return entry.get("level") if isinstance(entry, dict) else None


def level_text(v):
    """A level as a study file would write it: '0.05', '1e-3', '2.5e-8'."""
    if v == 0 or 1e-2 <= abs(v) < 1e4:
        return "%g" % v
    mantissa, exponent = ("%.6e" % v).split("e")
    return "%se%d" % (mantissa.rstrip("0").rstrip("."), int(exponent))


def slot_words(slot, chain):
    """A first-passage slot in words: its metric's axis label (the chain's for phi, psi), or 'lost'."""
    if chain and slot in CHAIN_LABELS:
        return CHAIN_LABELS[slot]
    return METRIC_LABELS.get(slot, (slot.replace("_", " "),))[0]


def draw_survival(runs, slots, enc=None, several=False):
    """The surviving fraction of each first-passage level against t, linear axes: one panel
    per slot, one step curve per run in its colour, line style and marker (as in the metric
    figures).

    A panel's title names its level when every run in it has the same one; where the runs'
    levels differ, the legend lists the runs with their levels instead (a grid study's
    colour and style entries could not say them). Returns the figure.
    """
    enc = enc or Encoding()
    chain = any(r.model == "chain" for r in runs)
    levels = {s: {r: passage_level(r, s) for r in runs if s in surviving(r)} for s in slots}
    differ = [s for s in slots if len(set(levels[s].values())) > 1]
    ncols = 1 if len(slots) <= 2 else 2
    nrows = -(-len(slots) // ncols)
    width = (FIGSIZE_STUDY if several else FIGSIZE)[0]
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, 1.2 + 2.6 * nrows), dpi=DPI, squeeze=False)
    t_max = max(float(np.nanmax(r.series["t"])) for r in runs)
    for ax, slot in zip(axes.flat, slots):
        for run, column in ((r, surviving(r)[slot]) for r in levels[slot]):
            # The value at sample t_k counts the crossings in (t_{k-1}, t_k] (a per-step
            # crossing is seen at the next sample): "steps-pre" holds it over that interval,
            # so a drop is drawn at the earliest time it can have happened and the curve is
            # never above the true fraction; "steps-post" would draw each drop up to one
            # sample interval late.
            ax.plot(run.series["t"], column, drawstyle="steps-pre", color=run.colour, lw=1.6, ls=run.linestyle,
                    marker=run.marker, markevery=0.1, ms=5)
        title = slot_words(slot, chain)
        shared = set(levels[slot].values())
        if len(shared) == 1 and None not in shared:
            title += " > " + level_text(shared.pop())
        ax.set_title(title, fontsize="medium")
        ax.set_xlim(0.0, t_max)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("t")
        ax.set_ylabel("surviving fraction")
        ax.grid(True, lw=0.4, alpha=0.5)
    for ax in axes.flat[len(slots):]:
        fig.delaxes(ax)
    if enc.factorised and not differ:
        handles = key_handles(runs, enc)
    else:
        handles = []
        for r in runs:
            words = ", ".join("%s > %s" % (s, level_text(levels[s][r])) for s in differ
                              if levels[s].get(r) is not None)
            label = r.label + (" — " + words if words else "")
            handles.append(run_handle(r, label="\n".join(textwrap.wrap(label, 48, subsequent_indent="    ")) or label))
    place_legend(axes[0][ncols - 1], handles, several)
    fig.suptitle("Surviving fraction — %s" % ensemble_words(runs))
    fig.text(0.01, 0.01, "Surviving: the fraction of the instances that have neither exceeded the level nor been "
             "lost by t (lost: the live fraction).\nA crossing between two samples counts at the later one; its "
             "step is drawn from the sample before.", fontsize="small", va="bottom")
    fig.tight_layout(rect=(0.0, 0.06 if nrows == 1 else 0.04, 1.0, 1.0))
    return fig


def final_value(run, metric, statistic):
    """The metric's statistic ("max", "p50") over the ensemble at t_final: summary.json's
    final_<statistic>, else series.csv's last row; None when neither has it."""
    block = run.summary.get(metric)
    if isinstance(block, dict) and block.get("final_" + statistic) is not None:
        return float(block["final_" + statistic])
    column = run.series.get("%s_%s" % (metric, statistic))
    return None if column is None else float(column[-1])


def step_size(run):
    integ = run.summary.get("study", {}).get("integrator", {})
    try:
        return float(integ.get("h", run.overrides.get("integrator.h")))
    except (TypeError, ValueError):
        return None


def convergence_runs(runs):
    """The runs of a convergence figure (fixed-step methods with a step size h) when they
    have more than one h and integrator.h is one of their overrides; else []."""
    runs = [r for r in runs if step_size(r) is not None
            and r.summary.get("study", {}).get("integrator", {}).get("method") not in ADAPTIVE_METHODS]
    if not any("integrator.h" in r.overrides for r in runs) or len({step_size(r) for r in runs}) < 2:
        return []
    return runs


def slope(h, e):
    """Least-squares slope of log10 e against log10 h, or None with fewer than two h."""
    if len(set(h)) < 2:
        return None
    return float(np.polyfit(np.log10(h), np.log10(e), 1)[0])


def draw_convergence(runs, enc=None):
    """Error at t_final against h, log-log: per combination of the other swept keys the
    ensemble maximum (filled circles) and median (open squares) with least-squares lines
    (dotted), their slopes in the legend. Left out of the fits, and said so in the legend
    and in summary.txt: diverged runs and errors above 1e10 (a triangle on the top edge);
    runs whose live fraction fell below min_live (grey crosses: their final statistics are
    a few survivors', not the ensemble's); saturated errors, at or above the run's
    saturation limit (grey, hollow: an error as large as the state no longer follows
    C h^p). Exact zeros are not drawn. Returns (figure, summary.txt lines)."""
    enc = enc or Encoding()
    metric = "integration_error" if any(isinstance(r.summary.get("integration_error"), dict)
                                        or "integration_error_max" in r.series for r in runs) else "energy_error"
    # Runs without the metric (no reference) have nothing to show; diverged ones get a mark.
    runs = [r for r in runs if final_value(r, metric, "max") is not None or r.divergence is not None]
    others = [k for k in dict.fromkeys(k for r in runs for k in r.overrides)
              if k != "integrator.h" and len({r.overrides.get(k, UNSET) for r in runs}) > 1]
    groups = {}
    for r in runs:
        groups.setdefault(tuple(r.overrides.get(k, UNSET) for k in others), []).append(r)
    if others == enc.colour_keys:
        palette = [enc.colour_of.get(g, "k") for g in groups]
    else:
        palette = colours(len(groups))
    fig, ax = new_figure(True)
    handles, lines, shown_values, out, notes, thinned = [], [], [], [], [], []
    ylabel = METRIC_LABELS.get(metric, (metric, metric))[0]
    t_final = sorted({number(r.summary.get("t_final"), "%g") for r in runs})
    limits = "/".join(number(v, "%g") for v in sorted({r.saturation for r in runs if r.saturation is not None}))
    lines.append("convergence: %s at t_final = %s against h (least-squares slope of log10 error on log10 h; "
                 "left out: diverged runs and errors above %.0e, runs with %s at t_final, saturated errors "
                 "at or above %s)" % (metric, "/".join(t_final), DIVERGED_ABOVE, min_live_words(runs),
                                      (limits + " (half the size of the state, summary.json's "
                                       "growth_exponents.limits.saturation)") if limits else "half the size of the state"))
    unknown = [r.label for r in runs if r.saturation is None]
    if unknown:
        lines.append("  saturation limit unknown (no growth_exponents.limits in summary.json, no model.initial), "
                     "errors not checked for saturation: " + ", ".join(unknown))
    lines.append("  %-36s %6s %10s %10s" % ("runs", "points", "slope max", "slope p50"))
    any_saturated = False
    for (group, members), colour in zip(groups.items(), palette):
        members.sort(key=step_size)
        name = enc.words(others, group) or "all runs"
        h = np.array([step_size(r) for r in members])
        row = {"name": name}
        thin = np.array([r.divergence is None and r.thinning is not None for r in members])
        limit = np.array([np.inf if r.saturation is None else r.saturation for r in members])
        # Open squares, larger, for the median: the maximum's dots stay visible inside them.
        for statistic, marker, ms, ls, mfc in (("max", "o", 5, "-", colour), ("p50", "s", 9, "--", "none")):
            e = np.array([np.nan if final_value(r, metric, statistic) is None else final_value(r, metric, statistic)
                          for r in members])
            bad = np.array([r.divergence is not None for r in members]) | ~np.isfinite(e) | (e > DIVERGED_ABOVE)
            with np.errstate(invalid="ignore"):
                saturated = ~bad & ~thin & (e >= limit)
                few = ~bad & thin & (e > 0)
            fit = ~bad & ~thin & ~saturated & (e > 0)
            k = slope(h[fit], e[fit])
            row[statistic] = k
            row["points " + statistic] = int(fit.sum())
            shown_values.append(np.where(bad, np.nan, e))
            words = "%s — %s" % (name, "max" if statistic == "max" else "median (p50)")
            why = (["%d saturated left out" % saturated.sum()] if saturated.any() else []) + (
                ["%d with %s left out" % (few.sum(), min_live_words(members))] if few.any() else [])
            if k is None and why:
                why.append("fewer than 2 points left")
            label = "%s: slope %s" % (words, number(k, "%.2f")) + ("\n    (%s)" % "; ".join(why) if why else "")
            ax.plot(h, positive(np.where(fit, e, np.nan)), ls=ls, marker=marker, color=colour, mfc=mfc, mec=colour,
                    ms=ms, lw=1.2)
            handles.append(Line2D([], [], ls=ls, marker=marker, color=colour, mfc=mfc, mec=colour, ms=ms, lw=1.2,
                                  label=label))
            if saturated.any():
                any_saturated = True
                ax.plot(h[saturated], e[saturated], ls="none", marker=marker, ms=ms, mfc="none", mec="0.55", mew=1.2)
                notes.append("  saturated, not in the fit: %s at h = %s: %s (at or above %s)" % (
                    words, ", ".join("%g" % v for v in h[saturated]), ", ".join("%.4g" % v for v in e[saturated]),
                    "/".join(sorted({"%g" % v for v in limit[saturated]}))))
            if few.any():
                ax.plot(h[few], e[few], ls="none", marker="x", ms=7, mew=1.4, color="0.45")
            if k is None and why:
                notes.append("  no slope for %s: fewer than 2 points left (%s)" % (words, "; ".join(why[:-1])))
            if k is not None:
                b = float(np.polyfit(np.log10(h[fit]), np.log10(e[fit]), 1)[1])
                hh = np.array([h[fit].min(), h[fit].max()])
                ax.plot(hh, 10 ** (b + k * np.log10(hh)), ls=":", color=colour, lw=1.0)
        for r, hr in zip(members, h):
            e = final_value(r, metric, "max")
            if r.divergence is not None or e is None or not math.isfinite(e) or e > DIVERGED_ABOVE:
                out.append((r, hr, colour))
            elif r.thinning is not None:
                thinned.append((r, hr))
                notes.append("  few live, not in the fit: %s (h = %g): %s" % (r.label, hr, r.thinning[1]))
        points = {row["points max"], row["points p50"]}
        lines.append("  %-36s %6s %10s %10s" % (name[:36], points.pop() if len(points) == 1 else "%d/%d" % (
            row["points max"], row["points p50"]), number(row["max"], "%.3f"), number(row["p50"], "%.3f")))
    lines += notes
    span = value_range(shown_values)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if span is not None:
        ax.set_ylim(*log_limits(*span))
    hs = np.array([step_size(r) for r in runs])
    ax.set_xlim(hs.min() / 1.25, hs.max() * 1.25)
    if len(set(hs)) <= 12:  # the swept values themselves, not only the decades
        ax.set_xticks(sorted(set(hs)))
        ax.set_xticklabels(["%g" % v for v in sorted(set(hs))])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    groups_out = list(dict.fromkeys(colour for _, _, colour in out))
    for r, hr, colour in out:
        r_colour, r.colour = r.colour, colour
        # Side by side where several groups diverge at the same h.
        mark_diverged(ax, hr * 1.04 ** (groups_out.index(colour) - (len(groups_out) - 1) / 2), r)
        r.colour = r_colour
        why = r.divergence[1] if r.divergence is not None else "%s at t_final above %.0e or not finite" % (
            metric, DIVERGED_ABOVE)
        lines.append("  diverged, not in the fit: %s (h = %g): %s" % (r.label, hr, why))
    handles.append(Line2D([], [], ls=":", color="0.35", lw=1.0, label="least-squares fit"))
    if any_saturated:
        handles.append(Line2D([], [], lw=0, marker="o", mfc="none", mec="0.55", mew=1.2, ms=6, label="\n".join(
            textwrap.wrap("saturated: error at or above %s (half the size of the state); not in the fit"
                          % (limits or "S/2"), 48, subsequent_indent="    "))))
    for r, hr in thinned:
        handles.append(Line2D([], [], lw=0, marker="x", ms=7, mew=1.4, color="0.45", label="\n".join(
            textwrap.wrap("%s%s: %s; not in the fit" % (r.label, "" if "h = %g" % hr in r.label else " (h = %g)" % hr,
                                                          r.thinning[1]), 48,
                          subsequent_indent="    "))))
    if out:
        handles.append(Line2D([], [], lw=0, marker="^", color="0.6", mec="k", ms=8,
                              label="diverged run (top edge; not in the fit)"))
    place_legend(ax, handles, True)
    ax.set_xlabel("step size h")
    ax.set_ylabel("%s at t = %s" % (ylabel, "/".join(t_final)))
    ax.set_title("Convergence: error at t_final against h — %s" % ensemble_words(runs))
    ax.grid(True, which="both", lw=0.4, alpha=0.5)
    fig.tight_layout()
    return fig, lines


def work_precision_module():
    """python/chens/work_precision.py, the one implementation of the work-precision table:
    beside this script where chens is installed (share/chens/), in the source tree's Python
    package otherwise."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "work_precision.py"),
                 os.path.join(here, os.pardir, "python", "chens", "work_precision.py")):
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("chens_work_precision", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise OSError("work_precision.py is neither beside %s nor in ../python/chens" % here)


def draw_work_precision(wp, rows):
    """The work-precision figure (see the module's docstring): columns the integration error
    (where a run has one) and the energy error, rows integration seconds and rhs evaluations;
    per curve the median (filled circles, solid) and the maximum (open squares, dashed).
    Returns the figure, or None where no run has a finite error to draw (every run lost)."""
    errors = [m for m in ("integration_error", "energy_error")
              if any(math.isfinite(r[m + "_p50"]) for r in rows)]
    if not errors:
        return None
    names = list(dict.fromkeys(r["curve"] for r in rows))
    palette = dict(zip(names, colours(len(names))))
    width = 5.2 * len(errors) + 2.4  # 2.4 inches for the legend right of the axes
    fig, axes = plt.subplots(2, len(errors), figsize=(width, 8.4), dpi=DPI, squeeze=False)
    for j, metric in enumerate(errors):
        for i, cost in enumerate(wp.COSTS):
            ax = axes[i][j]
            for statistic, marker, ls, filled in (("p50", "o", "-", True), ("max", "s", "--", False)):
                by_curve, _ = wp.curves(rows, "%s_%s" % (metric, statistic), cost)
                for name, points in by_curve.items():
                    if points:
                        ax.plot([c for c, _, _ in points], [e for _, e, _ in points], ls=ls, marker=marker,
                                color=palette[name], mfc=palette[name] if filled else "none", mec=palette[name],
                                ms=6 if filled else 8, lw=1.2)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.grid(True, which="both", lw=0.4, alpha=0.5)
            ax.set_xlabel("integration seconds (integrate_s; wall_s on the GPU)" if cost == "integration_seconds"
                          else "right-hand-side evaluations (the noise-free cost)")
            ax.set_ylabel("%s at t_final" % METRIC_LABELS.get(metric, (metric, metric))[0])
    handles = [Line2D([], [], color=palette[n], lw=1.6, label=n) for n in names]
    handles += [Line2D([], [], ls="-", marker="o", color="0.3", label="median (p50)"),
                Line2D([], [], ls="--", marker="s", mfc="none", color="0.3", label="maximum")]
    fig.legend(handles=handles, loc="center right", fontsize="small", frameon=False)
    fig.suptitle("Work-precision: achieved error at t_final against cost")
    fig.tight_layout(rect=(0.0, 0.0, 1.0 - 2.4 / width, 0.96))
    return fig


def ensemble_words(runs):
    """'pendulum, 200 instances' (the instance count when all runs agree on it)."""
    models = sorted({r.model or "model?" for r in runs})
    sizes = {r.summary.get("instances") for r in runs}
    words = "/".join(models)
    if len(sizes) == 1 and None not in sizes:
        size = sizes.pop()
        words += ", %d instance%s" % (size, "" if size == 1 else "s")
    return words


def periodogram(t, y):
    """Amplitude spectrum of y sampled at the uniform times t (the 001 §6 periodogram).

    Normalisation: A_k = |Y_k| * 2/N, Y = numpy.fft.rfft(y - mean(y)), N samples with
    spacing dt, at the frequencies f_k = k/(N dt) in cycles per unit time; a sinusoid
    A sin(2 pi f t) with f on a frequency f_k shows a peak A at f_k (off the grid, up to
    36 % less: the rectangular window's scalloping). Only the leading samples with the
    spacing t[1] - t[0] are used: chens' last sample is t_end, which may be closer.
    Returns (f, A, N, dt), with f and A from k = 1 on (the mean, k = 0, is removed).
    """
    dt = t[1] - t[0]
    uniform = np.isclose(np.diff(t), dt, rtol=1e-6, atol=0.0)
    n = len(t) if uniform.all() else int(np.argmin(uniform)) + 1
    y = y[:n]
    amplitude = np.abs(np.fft.rfft(y - y.mean())) * 2.0 / n
    return np.fft.rfftfreq(n, dt)[1:], amplitude[1:], n, dt


def run_spectrum(run):
    """(component, f, amplitude, reference amplitude or None, N, dt) of a run's periodogram:
    chens' periodogram.csv when the run wrote one (output.periodogram), else computed here
    from trajectory.csv's y. None when there is neither or fewer than 4 samples."""
    if run.periodogram is not None:
        info = run.summary.get("periodogram", {})
        ref = run.periodogram.get("amplitude_exact")
        return (info.get("component", "y"), run.periodogram["f"], run.periodogram["amplitude"], ref,
                int(info.get("samples", 2 * len(run.periodogram["f"]))), float(info.get("dt", float("nan"))))
    traj = run.trajectory
    if traj is None or "y" not in traj or len(traj["t"]) < 4:
        return None
    f, a, n, dt = periodogram(traj["t"], traj["y"])
    ref = periodogram(traj["t"], traj["y_ref"])[1] if "y_ref" in traj else None
    return "y", f, a, ref, n, dt


def plot_periodogram(run, stem, outdir, formats, written):
    """Periodogram of one component of instance 0 (y for the pendulum), peak marked (001 §6).

    The reference solution's spectrum (when the run has one) is drawn dashed and grey for
    comparison. Returns a line for summary.txt.
    """
    spectrum = run_spectrum(run)
    if spectrum is None:
        return "periodogram (instance 0): skipped, fewer than 4 samples"
    component, f, a, ref, n, dt = spectrum
    k = int(np.argmax(a))
    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI)
    ax.plot(f, a, color=run.colour, lw=1.4, label=run.label)
    if ref is not None:
        ax.plot(f, ref, color="0.3", lw=0.8, ls="--", label="reference solution")
    ax.plot(f[k], a[k], "o", mfc="none", mec="k", ms=9,
            label="peak: f = %.6g, amplitude %.4g" % (f[k], a[k]))
    ax.set_xlim(0.0, f[-1])
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("frequency f (cycles per unit time)")
    ax.set_ylabel(r"amplitude $2|Y_k|/N$")
    ax.set_title("Periodogram of %s(t), instance 0 — %s" % (component, run.label))
    fig.text(0.01, 0.01, "Amplitude 2|Y_k|/N, Y = DFT of %s (k >= 1): a sinusoid of amplitude A on a bin peaks at A.\n"
             "N = %d samples, dt = %g, bin width 1/(N dt) = %.4g." % (component, n, dt, 1.0 / (n * dt)),
             fontsize="small", va="bottom")
    ax.legend(fontsize="small", loc="best")
    ax.grid(True, lw=0.4, alpha=0.5)
    fig.tight_layout(rect=(0.0, 0.07, 1.0, 1.0))
    save(fig, outdir, stem, formats, written)
    return ("periodogram of %s (instance 0): peak frequency %.6g amplitude %.6g "
            "(amplitude 2|Y_k|/N; N = %d, dt = %g, bin width %.6g)"
            % (component, f[k], a[k], n, dt, 1.0 / (n * dt)))


def plot_periodograms(runs, outdir, formats, written):
    """The periodograms of several runs in one figure (001 §6 compares w/o, mom and pos)."""
    fig, ax = new_figure(len(runs) > 4)
    reference = None
    components = set()
    for run in runs:
        component, f, a, ref, n, dt = run_spectrum(run)
        components.add(component)
        ax.plot(f, a, color=run.colour, lw=1.2, ls=run.linestyle, label=run.label)
        if ref is not None and reference is None:
            reference = (f, ref, run.label)
    if reference is not None:  # on top: the runs' spikes would hide it
        ax.plot(reference[0], reference[1], color="k", lw=0.8, ls="--", zorder=5,
                label="reference solution (%s)" % reference[2])
    ax.set_xlim(left=0.0)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("frequency f (cycles per unit time)")
    ax.set_ylabel(r"amplitude $2|Y_k|/N$")
    ax.set_title("Periodograms of %s(t), instance 0" % "/".join(sorted(components)))
    place_legend(ax, ax.get_legend_handles_labels()[0], len(runs) > 4)
    ax.grid(True, lw=0.4, alpha=0.5)
    fig.tight_layout()
    save(fig, outdir, "periodograms", formats, written)


def phase_error_rows(run):
    """[(k, t, |y(kT) - y_exact(kT)| or None)] of a run's summary.json phase-error table."""
    table = run.summary.get("phase_error") or {}
    return [(r["periods"], r.get("t"), r.get("phase_error")) for r in table.get("rows", [])]


def plot_phase_error(runs, outdir, formats, written):
    """|y(kT) - y_exact(kT)| of instance 0 against k, log scale, one line per run (002 Table 1).

    Returns summary.txt's table: one row per run, one column per k.
    """
    fig, ax = new_figure(len(runs) > 4)
    ks = sorted({k for run in runs for k, _, _ in phase_error_rows(run)})
    for run in runs:
        rows = [(k, e) for k, _, e in phase_error_rows(run) if e is not None and e > 0]
        if rows:
            ax.plot([k for k, _ in rows], [e for _, e in rows], marker="o", ls=run.linestyle, color=run.colour,
                    ms=5, lw=1.2, label=run.label)
    ax.set_yscale("log")
    ax.set_xlabel("periods k (t = kT, T the exact period of instance 0)")
    ax.set_ylabel(r"phase error $|y(kT) - y_{exact}(kT)|$")
    ax.set_title("Phase error after k periods, instance 0 (002 Table 1)")
    place_legend(ax, ax.get_legend_handles_labels()[0], len(runs) > 4)
    ax.grid(True, which="both", lw=0.4, alpha=0.5)
    fig.tight_layout()
    save(fig, outdir, "phase_error", formats, written)
    period = (runs[0].summary.get("phase_error") or {}).get("period")
    width = max([24] + [len(run.label) for run in runs])
    lines = ["phase error |y(kT) - y_exact(kT)| of instance 0 (002 Table 1), T = %s" % number(period, "%.12g"),
             "  %-*s" % (width, "run") + "".join("%12s" % ("%dT" % k) for k in ks)]
    for run in runs:
        errors = {k: e for k, _, e in phase_error_rows(run)}
        lines.append("  %-*s" % (width, run.label) + "".join("%12s" % number(errors.get(k), "%.3e") for k in ks))
    return lines


def plot_end_atom(run, stem, outdir, formats, written):
    """Path of a chain's last atom (x_{N-1}, y_{N-1}) in the plane, equal aspect (002 Fig. 3).

    The initial chain (atoms and bonds) is drawn in grey, as in the left part of Fig. 3;
    the reference solution's path (x_{N-1}_ref, ...) dashed when trajectory.csv has it.
    """
    traj = run.trajectory
    atoms = len([c for c in traj if re.fullmatch(r"x\d+", c)])
    last = atoms - 1
    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI)
    x0 = [traj["x%d" % i][0] for i in range(atoms)]
    y0 = [traj["y%d" % i][0] for i in range(atoms)]
    ax.plot(x0, y0, "-o", color="0.6", ms=5, lw=1.0, label="initial chain (t = 0)")
    xe, ye = traj["x%d" % last], traj["y%d" % last]
    ax.plot(xe, ye, color=run.colour, lw=1.2, label="atom %d, %s" % (last, run.label))
    if "x%d_ref" % last in traj:
        ax.plot(traj["x%d_ref" % last], traj["y%d_ref" % last], "k--", lw=0.8, label="reference solution")
    ax.plot(xe[0], ye[0], "s", color=run.colour, ms=7, label="start")
    ax.plot(xe[-1], ye[-1], "^", color=run.colour, ms=7, label="end, t = %g" % traj["t"][-1])
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title("Path of the end atom of the %d-atom chain, instance 0" % atoms)
    ax.legend(fontsize="small", loc="best")
    ax.grid(True, lw=0.4, alpha=0.5)
    fig.tight_layout()
    save(fig, outdir, stem, formats, written)


def number(v, fmt="%.4g"):
    return "n/a" if v is None or not math.isfinite(v) else fmt % v


def first_passage_lines(run, selected=None):
    """summary.txt lines of a run's first-passage statistics (summary.json's first_passage),
    one per level of passage_slots(selected): how many instances crossed it, were lost
    first or never did, their crossing times' median and mean and the surviving fraction
    at t_final; [] when the run has none."""
    table = run.summary.get("first_passage") or {}
    slots = passage_slots(list(table), selected)
    if not slots:
        return []
    row = "  %-24s %8s %-17s %8s %10s %8s %12s %12s %10s"
    lines = ["first passage (summary.json): counts of instances; times over the crossed ones",
             row % ("level of", "level", "checked", "crossed", "lost_first", "never", "time_p50", "time_mean",
                    "surviving")]
    for slot in slots:
        e = table[slot]
        level = e.get("level")
        lines.append(row % (slot, "-" if level is None else level_text(level), e.get("checked", "?"),
                            e.get("crossed", "?"), e.get("lost_first", "-"), e.get("never", "?"),
                            number(e.get("time_p50"), "%.6g"), number(e.get("time_mean"), "%.6g"),
                            number(e.get("surviving_final"), "%.4g")))
    return lines


def summary_block(run, metrics, extra_lines):
    """summary.txt lines of one run: final p50/max per metric, growth exponents, extras."""
    s = run.summary
    integ = s.get("study", {}).get("integrator", {})
    head = "run %s" % run.name if run.name else "run"
    lines = ["%s: %s; %s, %s instances, %s lost; t_final = %s" % (
        head, run_label(s), run.model or "model?", s.get("instances", "?"), s.get("lost_instances", "?"),
        s.get("t_final", integ.get("t_end", "?")))]
    growth = s.get("growth_exponents")
    header = "  %-24s %14s %14s" % ("metric", "p50(t_final)", "max(t_final)")
    if growth is not None:
        header += " %12s %12s" % ("growth p50", "growth max")
        if "window" in growth:
            header += "  (fit over t in [%s, %s])" % tuple(number(w) for w in growth["window"])
    final = live_at_final(run)
    if final is not None:
        # The final statistics below are over these instances only.
        live = "  live at t_final: %d/%d (%s)" % (final[0], final[1], percent(final[0] / final[1]))
        if run.thinning is not None:
            live += "; below --min-live %g from t = %g on: the statistics from then on are the survivors' only" % (
                run.min_live, run.thinning[0])
        lines.append(live)
    lines.append(header)
    for m in metrics:
        if m + "_max" not in run.series:
            continue
        p50 = run.series[m + "_p50"][-1] if m + "_p50" in run.series else None
        line = "  %-24s %14s %14s" % (m, number(p50, "%.6g"), number(run.series[m + "_max"][-1], "%.6g"))
        if growth is not None:
            g = growth.get(m) or {}
            line += " %12s %12s" % (number(g.get("p50"), "%.3f"), number(g.get("max"), "%.3f"))
            # A withheld exponent says why (summary.json's max_reason / p50_reason).
            why = [("%s: %s" % (q, g[q + "_reason"])) for q in ("max", "p50") if g.get(q + "_reason")]
            if why:
                line += "  (" + "; ".join(why) + ")"
        lines.append(line)
    if growth is None and getattr(run, "grouped_by", None):
        lines.append("  growth exponents: the whole ensemble's only (summary.json's growth_exponents)")
    elif growth is None:
        lines.append("  growth exponents: not in summary.json (written by an older chens)")
    if run.divergence is not None:
        lines.append("  diverged: %s" % run.divergence[1])
    return lines + ["  " + e for e in extra_lines]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", metavar="DIR", help="result directory of chens run (one run or a study of several)")
    ap.add_argument("--out", metavar="PLOTDIR", help="where the figures go (default: DIR/plots)")
    ap.add_argument("--format", default="png,svg", help="comma-separated image formats (default: png,svg)")
    ap.add_argument("--metrics", help="comma-separated metrics to plot (default: every metric in series.csv)")
    ap.add_argument("--runs", metavar="R1,R2",
                    help="studies: plot only these runs: comma-separated names of study.json or shell patterns "
                         "('h=0.1_*'); a pattern matching no run is an error (default: every run)")
    ap.add_argument("--color-by", metavar="KEY",
                    help="studies: the swept key (an override of study.json, e.g. integrator.method, or its "
                         "last part, method) shown by colour (default: the swept key with the most values)")
    ap.add_argument("--style-by", metavar="KEY",
                    help="studies: the swept key shown by line style, at most %d values, or none (default: "
                         "integrator.h when swept, else the swept key with the fewest values)" % len(LINESTYLES))
    ap.add_argument("--min-live", metavar="FRACTION", default=str(MIN_LIVE),
                    help="where fewer than this fraction of a run's instances (of a group's, for grouped runs) "
                         "are live, its statistics are drawn as a few survivors' (median only, dotted) and "
                         "left out of the convergence fit; 0 < FRACTION <= 1 (default: %g)" % MIN_LIVE)
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    outdir = args.out or os.path.join(args.dir, "plots")
    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    try:
        supported = FigureCanvasBase.get_supported_filetypes()
        bad = [f for f in formats if f not in supported]
        if bad or not formats:
            raise InputError("--format %s: not an image format matplotlib writes (%s)"
                             % (",".join(bad) or "(empty)", ", ".join(sorted(supported))))
        try:
            min_live = float(args.min_live)
        except ValueError:
            min_live = float("nan")
        if not 0.0 < min_live <= 1.0:  # also refuses nan
            raise InputError("--min-live %s: not a fraction in (0, 1] (the live fraction below which a run's "
                             "statistics are those of a few survivors; default %g)" % (args.min_live, MIN_LIVE))
        patterns = None if args.runs is None else [p.strip() for p in args.runs.split(",") if p.strip()]
        runs, skipped, several, entries = load(args.dir, patterns, min_live)
        if any(r.summary.get("groups") for r in runs):
            runs, entries = expand_groups(runs, entries)
            several = True
        if not several and (args.color_by or args.style_by):
            raise InputError("--color-by/--style-by: %s is one run, not a study of several" % args.dir)
        enc = encode(runs, entries, args.color_by, args.style_by) if several else Encoding()
        available = []
        for run in runs:
            available += [m for m in run.metrics() if m not in available]
        metrics = available
        if args.metrics:
            metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
            unknown = [m for m in metrics if m not in available]
            if unknown or not metrics:
                raise InputError("--metrics %s: not in series.csv (it has %s)"
                                 % (",".join(unknown) or "(empty)", ", ".join(available)))
        selected = metrics if args.metrics else None  # of the first-passage levels
    except InputError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 2
    for s in skipped:
        print("%s: warning: skipping %s" % (PROG, s), file=sys.stderr)

    written = []
    try:
        os.makedirs(outdir, exist_ok=True)
        for m in metrics:
            fig = draw_lyapunov(runs, enc, several) if m == "lyapunov" else draw_metric(runs, m, enc, several)
            save(fig, outdir, m, formats, written)
        with_survival = [r for r in runs if passage_slots(list(surviving(r)), selected)]
        if with_survival:
            slots = passage_slots([s for r in with_survival for s in surviving(r)], selected)
            save(draw_survival(with_survival, slots, enc, several), outdir, "survival", formats, written)
        lines = ["chens plot of %s" % os.path.abspath(args.dir)]
        grouped = sorted({r.grouped_by for r in runs if getattr(r, "grouped_by", None)})
        if several and grouped:
            lines.append("groups of parameters.group_by = %s: %d plotted" % (", ".join(grouped), len(runs)))
        elif several:
            lines.append("study.json: %d runs plotted" % len(runs) + (" (--runs %s)" % args.runs if patterns else ""))
            if enc.describe():
                lines.append(enc.describe())
        lines += ["skipped: " + s for s in skipped]
        lines += ["diverged: run %s: %s" % (r.name or r.label, r.divergence[1]) for r in runs if r.divergence]
        lines += ["few live: run %s: %s" % (r.name or r.label, r.thinning[1]) for r in runs if r.thinning]
        for run in runs:
            extra = first_passage_lines(run, selected)
            traj = run.trajectory or {}
            # The pendulum's columns are t, x, y, px, py; a chain's x0, y0, ...
            if run.periodogram is not None or "y" in traj:
                extra.append(plot_periodogram(run, file_stem("periodogram", run, several), outdir, formats, written))
            if "x0" in traj:
                plot_end_atom(run, file_stem("end_atom", run, several), outdir, formats, written)
            lines += [""] + summary_block(run, metrics, extra)
        with_spectrum = [r for r in runs if run_spectrum(r) is not None]
        if several and len(with_spectrum) > 1:
            plot_periodograms(with_spectrum, outdir, formats, written)
        in_convergence = convergence_runs(runs) if several else []
        if in_convergence:
            fig, convergence_lines = draw_convergence(in_convergence, enc)
            save(fig, outdir, "convergence", formats, written)
            lines += [""] + convergence_lines
        comparison = os.path.join(args.dir, "comparison.csv")
        if several and not grouped and os.path.exists(comparison):
            wp = work_precision_module()
            with open(comparison) as f:
                text = f.read()
            try:
                columns, rows = wp.table(text, min_live)
            except ValueError:  # the runs do not differ in a step size or tolerance
                columns, rows = ["run", "curve"], []
            plotted = {r.name for r in runs}
            rows = [r for r in rows if r["run"] in plotted]  # --runs: those plotted must differ too
            if wp.precision_keys(columns[1:columns.index("curve")], rows):
                fig = draw_work_precision(wp, rows)
                if fig is not None:
                    save(fig, outdir, "work_precision", formats, written)
                metric = "integration_error_p50" if any(
                    math.isfinite(r["integration_error_p50"]) for r in rows) else "energy_error_p50"
                lines += [""] + wp.summary_lines(rows, metric)
        if any(spectrum_of(r) is not None for r in runs):
            fig, spectrum_lines = draw_spectrum(runs)
            save(fig, outdir, "spectrum", formats, written)
            lines += [""] + spectrum_lines
        with_phase = [r for r in runs if phase_error_rows(r)]
        if with_phase:
            lines += [""] + plot_phase_error(with_phase, outdir, formats, written)
        path = os.path.join(outdir, "summary.txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        written.append(path)
    except OSError as e:
        print("%s: could not write the plots to %s: %s" % (PROG, outdir, e), file=sys.stderr)
        return 1
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
