#!/usr/bin/python3
"""Figures of a chens result directory: the implementation of `chens plot DIR`.

  plot_study.py DIR [--out PLOTDIR] [--format png,svg] [--metrics m1,m2]

DIR is either one run (DIR/summary.json, DIR/series.csv, optionally DIR/trajectory.csv and
DIR/periodogram.csv) or
a study of several runs (DIR/study.json and one such directory per run, DIR/<directory>/);
docs/study-format.md describes the files. Runs whose status in study.json is not
"complete", or whose directory lacks summary.json or series.csv, are skipped with a warning.

Written to PLOTDIR (default DIR/plots), each figure in every --format:

  <metric>.{png,svg}     per metric of series.csv, log-log against t > 0, one colour per run:
                         the ensemble median (p50), a band from p10 to p90 and the
                         maximum dashed (001 Fig. 1; 002 Figs. 1, 2, 4, 5)
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
  summary.txt            per run: p50 and maximum of every metric at t_final, the growth
                         exponents of summary.json (when present) and the periodogram's
                         peak; the phase-error table of all runs

SVG files keep their text as text (searchable, editable).

The _<run> suffix is used for studies of several runs only. Prints the files written.
Exit codes: 0 success, 2 bad input (DIR missing or holding neither summary.json nor
study.json, no complete run, unknown metric or format), 1 the plots could not be written.

Uses the Python standard library, numpy and matplotlib (Debian python3-numpy and
python3-matplotlib); run it with /usr/bin/python3.
"""
import argparse
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

PROG = "plot_study.py"
matplotlib.rcParams["svg.fonttype"] = "none"
FIGSIZE = (7.0, 5.0)
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
}
CHAIN_LABELS = {
    "phi": r"position constraint residual $\mathrm{max}_a\,|\phi_a|$",
    "psi": r"momentum constraint residual $\mathrm{max}_a\,|\psi_a|$",
}


class InputError(Exception):
    """Bad input: reported on stderr, exit code 2."""


class Run:
    """One run's results: its summary.json, series.csv and (optional) trajectory.csv.

    name is the run's name in study.json, "" for a single-run directory; the legend label
    is the name, or for a single run its formulation, method and step size.
    """

    def __init__(self, name, directory, colour):
        self.name = name
        self.colour = colour
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

    @property
    def model(self):
        return self.summary.get("study", {}).get("model", {}).get("kind", "")

    def metrics(self):
        """Metrics of series.csv, in file order (every metric has a _max column)."""
        return [c[: -len("_max")] for c in self.series if c.endswith("_max")]


def read_csv(path):
    """A chens CSV file as {column: numpy array} ('nan' where no instance is live)."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        try:
            data = np.loadtxt(f, delimiter=",", ndmin=2)
        except ValueError as e:
            raise InputError("%s: not a chens CSV file: %s" % (path, e)) from None
    if data.shape[0] == 0:
        raise InputError("%s has no rows" % path)
    return {name: data[:, i] for i, name in enumerate(header)}


def run_label(summary):
    """Legend label of a single run: formulation + method and step size (tolerance for dopri5)."""
    integ = summary.get("study", {}).get("integrator", {})
    label = "%s + %s" % (integ.get("formulation", "?"), integ.get("method", "?"))
    if integ.get("method") == "dopri5":
        return label + ", rtol = %g" % integ.get("rtol", float("nan"))
    return label + ", h = %g" % integ.get("h", float("nan"))


def colours(n):
    """n distinct colours: tab10 up to 10 runs, tab20 up to 20, viridis beyond."""
    if n <= 10:
        return [plt.get_cmap("tab10")(i) for i in range(n)]
    if n <= 20:
        return [plt.get_cmap("tab20")(i) for i in range(n)]
    return [plt.get_cmap("viridis")(x) for x in np.linspace(0.0, 0.95, n)]


def load(directory):
    """(runs to plot, skipped runs as "run NAME: why", whether DIR is a study of several runs).

    A run's colour follows its position in study.json (skipped runs included), so it is
    the same in every figure and in every plot of the same study.
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
        runs, skipped = [], []
        for entry, colour in zip(entries, colours(len(entries))):
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
                runs.append(Run(name, run_dir, colour))
            except InputError as e:
                skipped.append("run %s: %s" % (name, e))
        if not runs:
            raise InputError("%s: no complete run to plot (%d runs in study.json)" % (index_path, len(entries)))
        return runs, skipped, True
    summary_path = os.path.join(directory, "summary.json")
    if not os.path.isfile(summary_path):
        raise InputError("%s holds neither summary.json (one run) nor study.json (a study of several runs)"
                         % directory)
    if not os.path.isfile(os.path.join(directory, "series.csv")):
        raise InputError("%s: series.csv is missing (summary.json is there)" % directory)
    return [Run("", directory, colours(1)[0])], [], False


def file_stem(kind, run, several):
    return "%s_%s" % (kind, run.name) if several else kind


def save(fig, outdir, stem, formats, written):
    for fmt in formats:
        path = os.path.join(outdir, "%s.%s" % (stem, fmt))
        fig.savefig(path, format=fmt, dpi=DPI)
        written.append(path)
    plt.close(fig)


def positive(v):
    """v masked where it is not a finite positive number (not drawable on log axes)."""
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


def plot_metric(runs, metric, outdir, formats, written):
    """Ensemble statistics of one metric against t, log-log (001 Fig. 1; 002 Figs. 1, 2, 4, 5).

    Per run: the median (p50) as a solid line, a translucent band from p10 to p90 and the
    maximum as a thin dashed line, over the samples with t > 0. Where the band's bottom is
    0 it extends to the bottom of the axes.
    """
    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI)
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
        styles[(centre_word, band_word)] = with_max
        cols = {k: run.series[c][keep] for k, c in
                (("centre", centre), ("bottom", bottom), ("top", top), ("max", metric + "_max"))}
        curves.append((run, t[keep], cols, with_max))
    values = np.concatenate([v[np.isfinite(v) & (v > 0)] for _, _, cols, _ in curves for v in cols.values()])
    if values.size:
        lo, hi = values.min(), values.max()
        pad = (hi / lo) ** 0.04 if hi > lo else 2.0
        floor = lo / pad
        for run, t, cols, with_max in curves:
            if not np.any(np.isfinite(cols["max"]) & (cols["max"] > 0)):
                zero_runs.append(run)
                continue
            ax.plot(t, positive(cols["centre"]), color=run.colour, lw=1.6)
            bottom = np.where(cols["bottom"] > 0, cols["bottom"], floor)
            ax.fill_between(t, positive(bottom), positive(cols["top"]), color=run.colour, alpha=0.18, lw=0)
            if with_max:
                ax.plot(t, positive(cols["max"]), color=run.colour, lw=0.7, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(floor, hi * pad)
        # The whole time range, also where every instance is lost (nan) at late times.
        times = np.concatenate([t for _, t, _, _ in curves])
        ax.set_xlim(times.min() / 1.1, times.max() * 1.1)
    else:
        zero_runs = [run for run, _, _, _ in curves]
        ax.text(0.5, 0.5, "0 at every sample with t > 0", transform=ax.transAxes, ha="center", va="center")
    handles = [Line2D([], [], color=r.colour, lw=1.6, label=r.label) for r, _, _, _ in curves if r not in zero_runs]
    handles += [Line2D([], [], color=r.colour, lw=0, marker="x", label=r.label + ": 0 at every t > 0 (not drawn)")
                for r in zero_runs]
    for (centre_word, band_word), with_max in styles.items():
        handles.append(Line2D([], [], color="0.35", lw=1.6, label=centre_word))
        handles.append(Patch(color="0.35", alpha=0.25, lw=0, label=band_word + " band"))
        if with_max:
            handles.append(Line2D([], [], color="0.35", lw=0.7, ls="--", label="max"))
    ax.legend(handles=handles, fontsize="small", loc="best", ncol=1 if len(handles) <= 9 else 2)
    ax.set_xlabel("t")
    ax.set_ylabel(ylabel)
    ax.set_title("%s — %s" % (title, ensemble_words(runs)))
    ax.grid(True, which="major", lw=0.4, alpha=0.5)
    fig.tight_layout()
    save(fig, outdir, metric, formats, written)


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
    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI)
    reference = None
    components = set()
    for run in runs:
        component, f, a, ref, n, dt = run_spectrum(run)
        components.add(component)
        ax.plot(f, a, color=run.colour, lw=1.2, label=run.label)
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
    ax.legend(fontsize="small", loc="best")
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
    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI)
    ks = sorted({k for run in runs for k, _, _ in phase_error_rows(run)})
    for run in runs:
        rows = [(k, e) for k, _, e in phase_error_rows(run) if e is not None and e > 0]
        if rows:
            ax.plot([k for k, _ in rows], [e for _, e in rows], "-o", color=run.colour, ms=5, lw=1.2, label=run.label)
    ax.set_yscale("log")
    ax.set_xlabel("periods k (t = kT, T the exact period of instance 0)")
    ax.set_ylabel(r"phase error $|y(kT) - y_{exact}(kT)|$")
    ax.set_title("Phase error after k periods, instance 0 (002 Table 1)")
    ax.legend(fontsize="small", loc="best")
    ax.grid(True, which="both", lw=0.4, alpha=0.5)
    fig.tight_layout()
    save(fig, outdir, "phase_error", formats, written)
    period = (runs[0].summary.get("phase_error") or {}).get("period")
    lines = ["phase error |y(kT) - y_exact(kT)| of instance 0 (002 Table 1), T = %s" % number(period, "%.12g"),
             "  %-24s" % "run" + "".join("%12s" % ("%dT" % k) for k in ks)]
    for run in runs:
        errors = {k: e for k, _, e in phase_error_rows(run)}
        lines.append("  %-24s" % run.label[:24] + "".join("%12s" % number(errors.get(k), "%.3e") for k in ks))
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
    lines.append(header)
    for m in metrics:
        if m + "_max" not in run.series:
            continue
        p50 = run.series[m + "_p50"][-1] if m + "_p50" in run.series else None
        line = "  %-24s %14s %14s" % (m, number(p50, "%.6g"), number(run.series[m + "_max"][-1], "%.6g"))
        if growth is not None:
            g = growth.get(m) or {}
            line += " %12s %12s" % (number(g.get("p50"), "%.3f"), number(g.get("max"), "%.3f"))
        lines.append(line)
    if growth is None:
        lines.append("  growth exponents: not in summary.json (written by an older chens)")
    return lines + ["  " + e for e in extra_lines]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", metavar="DIR", help="result directory of chens run (one run or a study of several)")
    ap.add_argument("--out", metavar="PLOTDIR", help="where the figures go (default: DIR/plots)")
    ap.add_argument("--format", default="png,svg", help="comma-separated image formats (default: png,svg)")
    ap.add_argument("--metrics", help="comma-separated metrics to plot (default: every metric in series.csv)")
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
        runs, skipped, several = load(args.dir)
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
    except InputError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 2
    for s in skipped:
        print("%s: warning: skipping %s" % (PROG, s), file=sys.stderr)

    written = []
    try:
        os.makedirs(outdir, exist_ok=True)
        for m in metrics:
            plot_metric(runs, m, outdir, formats, written)
        lines = ["chens plot of %s" % os.path.abspath(args.dir)]
        if several:
            lines.append("study.json: %d runs plotted" % len(runs))
        lines += ["skipped: " + s for s in skipped]
        for run in runs:
            extra = []
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
