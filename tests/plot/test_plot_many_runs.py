#!/usr/bin/python3
"""Tests of scripts/plot_study.py's figures of studies of many runs (`chens plot`).

  /usr/bin/python3 tests/plot/test_plot_many_runs.py [-v]

Synthetic studies with known content (docs/study-format.md's files): a grid of
integrator.method x integrator.h whose final errors are exactly C h^p, runs that diverge,
runs that lose most of their instances, saturated errors in the convergence fit, a band
that would hide the maximum, and a run whose statistics are exactly 0 or have no spread at
known times. The figures
are drawn in-process (plot_study's draw_* functions) so that their artists and pixels can
be measured in data coordinates; the command line (--runs, --color-by, exit codes, files,
summary.txt) is run as a subprocess. Needs Debian's python3-numpy and python3-matplotlib;
standard-library unittest (pytest runs it too).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.image  # noqa: E402
import matplotlib.patheffects  # noqa: E402
import numpy as np  # noqa: E402

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
SCRIPT = os.path.join(SCRIPTS, "plot_study.py")
sys.path.insert(0, SCRIPTS)
import plot_study  # noqa: E402

STATS = ("mean", "rms", "min", "max", "p10", "p50", "p90", "p99")
TIMES = np.linspace(0.0, 10.0, 21)
ORDERS = {"euler": 1, "rk2": 2, "rk4": 4}
CONSTANTS = {"euler": 3.0, "rk2": 0.7, "rk4": 0.05}
STEPS = ("0.1", "0.05", "0.025", "0.0125")


def write_run(directory, metrics, method="rk4", h=0.1, formulation="dirac", times=TIMES, instances=256,
              lost=None, live=None, summary_extra=None):
    """One run: series.csv with metrics = {name: {statistic: array over times}} (missing
    statistics: the p50), summary.json with final values from the last row (and
    summary_extra's fields)."""
    os.makedirs(directory)
    header = ["t", "live"]
    columns = [times, live if live is not None else np.full(len(times), instances)]
    for m, stats in metrics.items():
        for s in STATS:
            header.append("%s_%s" % (m, s))
            columns.append(stats.get(s, stats["p50"]))
    with open(os.path.join(directory, "series.csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for row in zip(*columns):
            f.write(",".join("%.17g" % v for v in row) + "\n")
    lost = lost or {}
    summary = {
        "study": {"model": {"kind": "pendulum"},
                  "integrator": {"formulation": formulation, "method": method, "h": h, "t_end": float(times[-1])}},
        "instances": instances, "lost_instances": sum(lost.values()),
        "lost": dict({"non_finite": 0, "max_steps": 0}, **lost),
        "t_final": float(times[-1]), "samples": len(times),
    }
    for m, stats in metrics.items():
        last = {s: float(stats.get(s, stats["p50"])[-1]) for s in STATS}
        summary[m] = {"final_" + s: (v if np.isfinite(v) else None) for s, v in last.items()}
    summary.update(summary_extra or {})
    with open(os.path.join(directory, "summary.json"), "w") as f:
        json.dump(summary, f)


def write_study(root, runs):
    """runs: [(name, overrides, write_run keyword arguments)]; all complete."""
    os.makedirs(root)
    for name, _, kw in runs:
        write_run(os.path.join(root, name), **kw)
    entries = [{"name": n, "directory": n, "overrides": o, "status": "complete"} for n, o, _ in runs]
    with open(os.path.join(root, "study.json"), "w") as f:
        json.dump({"chens_version": "0.1.0", "study_file": "s.toml", "complete": True, "runs": entries}, f)


def grid_runs():
    """method x h, the runs named as chens names them ('h=0.1_method=rk4'). Integration error
    p50 = C h^p t/10, p10 = p50/2, p90 = 3/2 p50, max = 2 p50: at t_final the maximum is
    2 C h^p and the median C h^p, so the convergence slopes are p exactly."""
    runs = []
    for method in ORDERS:
        for h in STEPS:
            p50 = CONSTANTS[method] * float(h) ** ORDERS[method] * TIMES / 10.0
            stats = {"p50": p50, "p10": 0.5 * p50, "p90": 1.5 * p50, "max": 2.0 * p50}
            runs.append(("h=%s_method=%s" % (h, method), {"integrator.h": h, "integrator.method": method},
                         dict(metrics={"integration_error": stats, "energy_error": stats}, method=method,
                              h=float(h))))
    return runs


def plot(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=300)


def rendered(fig):
    """The figure's pixels (rows from the top, RGB in [0, 1])."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[:, :, :3] / 255.0


def pixel_columns(fig, ax, t0, t1):
    """Image columns of the data range t0 <= t <= t1 and image rows inside the axes."""
    height = fig.canvas.get_width_height()[1]
    x0 = ax.transData.transform((t0, 1.0))[0]
    x1 = ax.transData.transform((t1, 1.0))[0]
    box = ax.get_window_extent()
    return slice(int(np.ceil(x0)) + 1, int(np.floor(x1)) - 1), slice(int(height - box.y1) + 2, int(height - box.y0) - 2)


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


class ManyRunsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="chens-plot-many-")
        cls.grid = os.path.join(cls.tmp.name, "grid")
        write_study(cls.grid, grid_runs())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def load(self, directory, patterns=None, color_by=None, style_by=None):
        runs, _, several, entries = plot_study.load(directory, patterns)
        self.assertTrue(several)
        return runs, plot_study.encode(runs, entries, color_by, style_by)

    def median_lines(self, ax, runs):
        """{run name: its median line} matched by the line's data (each run's is distinct)."""
        found = {}
        for run in runs:
            p50 = run.series["integration_error_p50"][run.series["t"] > 0]
            for line in ax.get_lines():
                y = np.ma.filled(np.ma.asarray(line.get_ydata(orig=True), float), np.nan)
                if line.get_linewidth() == 1.6 and y.shape == p50.shape and np.allclose(y, p50):
                    found[run.name] = line
        return found

    def test_grid_colour_by_method_style_by_h(self):
        runs, enc = self.load(self.grid)
        self.assertEqual(enc.colour_keys, ["integrator.method"])
        self.assertEqual(enc.style_key, "integrator.h")
        self.assertTrue(enc.factorised)
        fig = plot_study.draw_metric(runs, "integration_error", enc, several=True)
        ax = fig.axes[0]
        lines = self.median_lines(ax, runs)
        self.assertEqual(len(lines), 12)
        # One colour per method, one line style per h: 12 distinct pairs.
        colour = {m: set() for m in ORDERS}
        style = {h: set() for h in STEPS}
        for run in runs:
            line = lines[run.name]
            colour[run.overrides["integrator.method"]].add(matplotlib.colors.to_hex(line.get_color()))
            style[run.overrides["integrator.h"]].add(line.get_linestyle())
        self.assertTrue(all(len(c) == 1 for c in colour.values()), colour)
        self.assertEqual(len(set.union(*colour.values())), 3)
        self.assertTrue(all(len(s) == 1 for s in style.values()), style)
        self.assertEqual(len(set.union(*style.values())), 4)
        # The legend: outside the axes, key = value entries, not the run directories' names.
        fig.canvas.draw()
        self.assertGreaterEqual(ax.get_legend().get_window_extent().x0, ax.get_window_extent().x1)
        texts = legend_texts(ax)
        for words in ("colour: method", "line style: h", "method = euler", "method = rk4", "h = 0.0125", "h = 0.1"):
            self.assertIn(words, texts)
        self.assertFalse([t for t in texts if "h=0.1_method" in t], texts)
        # Both curves and bands are on the figure: every method's colour is drawn.
        image = rendered(fig)
        for hexes in colour.values():
            rgb = np.array(matplotlib.colors.to_rgb(hexes.pop()))
            self.assertGreater((np.abs(image - rgb).max(axis=2) < 0.02).sum(), 200)
        # --color-by h --style-by method swaps them (h has 4 values: a sequential map).
        _, swapped = self.load(self.grid, color_by="h", style_by="integrator.method")
        self.assertEqual(swapped.colour_keys, ["integrator.h"])
        self.assertEqual(swapped.style_key, "integrator.method")

    def test_runs_filter(self):
        out = os.path.join(self.tmp.name, "subset")
        r = plot(self.grid, "--out", out, "--runs", "h=0.1_*,h=0.05_method=rk4", "--format", "png,svg")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.txt")) as f:
            text = f.read()
        plotted = sorted(line.split(":")[0][4:] for line in text.splitlines() if line.startswith("run "))
        self.assertEqual(plotted, ["h=0.05_method=rk4", "h=0.1_method=euler", "h=0.1_method=rk2", "h=0.1_method=rk4"])
        with open(os.path.join(out, "integration_error.svg")) as f:
            svg = f.read()
        self.assertIn("method = rk4, h = 0.05", svg)
        self.assertNotIn("h = 0.025", svg)
        image = matplotlib.image.imread(os.path.join(out, "integration_error.png"))
        inked = (image[:, :, :3].min(axis=2) < 0.98).mean()
        self.assertTrue(0.005 <= inked <= 0.6, inked)
        # A subset keeps the colours and line styles of the whole study.
        whole, _ = self.load(self.grid)
        part, _ = self.load(self.grid, ["h=0.1_*", "h=0.05_method=rk4"])
        self.assertEqual(len(part), 4)
        by_name = {run.name: run for run in whole}
        for run in part:
            self.assertEqual(run.colour, by_name[run.name].colour, run.name)
            self.assertEqual(run.linestyle, by_name[run.name].linestyle, run.name)
        # A pattern that matches nothing is an error and writes nothing.
        bad = os.path.join(self.tmp.name, "no-subset")
        r = plot(self.grid, "--out", bad, "--runs", "h=0.1_*,h=0.3_*")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--runs h=0.3_*: matches no run", r.stderr)
        self.assertFalse(os.path.exists(bad))
        r = plot(os.path.join(self.grid, "h=0.1_method=rk4"), "--out", bad, "--runs", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no study.json", r.stderr)
        r = plot(self.grid, "--out", bad, "--color-by", "integrator.tol")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--color-by integrator.tol", r.stderr)
        self.assertFalse(os.path.exists(bad))

    def test_adaptive_methods_are_labelled_by_rtol_and_left_out_of_the_fit(self):
        # Every adaptive method (host/dispatch/method_id.hpp's adaptive_methods): its h is a
        # first trial step, so its runs are named by rtol and stay off the convergence figure.
        from types import SimpleNamespace
        for method in ("dopri5", "dop853", "vern9", "rodas5p"):
            summary = {"study": {"integrator": {"formulation": "dirac", "method": method, "h": 0.1, "rtol": 1e-8}}}
            self.assertEqual(plot_study.run_label(summary), "dirac + %s, rtol = 1e-08" % method)
            runs = [SimpleNamespace(summary={"study": {"integrator": {"method": method, "h": h}}},
                                    overrides={"integrator.h": str(h)}) for h in (0.1, 0.05)]
            self.assertEqual(plot_study.convergence_runs(runs), [], method)
        fixed = {"study": {"integrator": {"formulation": "dirac", "method": "rk4", "h": 0.1}}}
        self.assertEqual(plot_study.run_label(fixed), "dirac + rk4, h = 0.1")

    def test_convergence_slopes(self):
        runs, enc = self.load(self.grid)
        members = plot_study.convergence_runs(runs)
        self.assertEqual(len(members), 12)
        fig, lines = plot_study.draw_convergence(members, enc)
        ax = fig.axes[0]
        texts = legend_texts(ax)
        for method, p in ORDERS.items():
            self.assertIn("method = %s — max: slope %.2f" % (method, p), texts)
            self.assertIn("method = %s — median (p50): slope %.2f" % (method, p), texts)
        row = [line for line in lines if line.strip().startswith("method = rk4")][0].split()
        self.assertEqual(row[-3:], ["4", "4.000", "4.000"])
        # Every point is inside the axes: 2 C h^p from euler at h = 0.1 to rk4 at h = 0.0125.
        lo, hi = ax.get_ylim()
        self.assertLess(lo, CONSTANTS["rk4"] * 0.0125 ** 4)
        self.assertGreater(hi, 2 * CONSTANTS["euler"] * 0.1)
        self.assertLess(hi, 10 * CONSTANTS["euler"] * 0.1)
        self.assertEqual(sorted(ax.get_xticks()), sorted(float(h) for h in STEPS))
        # The command line writes it, with the slopes in summary.txt; without a swept h no figure.
        out = os.path.join(self.tmp.name, "grid-plots")
        r = plot(self.grid, "--out", out, "--format", "png")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(os.path.join(out, "convergence.png"), r.stdout.splitlines())
        with open(os.path.join(out, "summary.txt")) as f:
            self.assertRegex(f.read(), r"\n\s+method = euler\s+4\s+1\.000\s+1\.000\n")
        # A run without a reference (no integration error) is neither a point nor "diverged".
        mixed = os.path.join(self.tmp.name, "mixed")
        p50 = lambda h: CONSTANTS["rk4"] * h ** 4 * TIMES / 10  # noqa: E731
        write_study(mixed, [("h=%g" % h, {"integrator.h": str(h)}, dict(metrics={m: {"p50": p50(h)}}, h=h))
                            for h, m in ((0.1, "integration_error"), (0.05, "integration_error"),
                                         (0.025, "energy_error"))])
        runs, enc = self.load(mixed)
        fig, lines = plot_study.draw_convergence(plot_study.convergence_runs(runs), enc)
        self.assertFalse([line for line in lines if "diverged, not in the fit" in line], lines)
        self.assertIn("all runs — max: slope 4.00", legend_texts(fig.axes[0]))
        one_h = os.path.join(self.tmp.name, "one-h")
        r = plot(self.grid, "--out", one_h, "--format", "png", "--runs", "h=0.1_*")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(one_h, "convergence.png")))

    def test_diverged_runs_keep_the_axes(self):
        root = os.path.join(self.tmp.name, "diverging")
        def healthy(s):
            return {"p50": s * (1 + TIMES), "p10": 0.5 * s * (1 + TIMES), "p90": 2 * s * (1 + TIMES)}
        blowup = 1e-6 * np.exp(6.0 * TIMES)  # 1e-6 at t = 0, above 1e10 from t = 6.2 on
        gone = np.where(TIMES < 5, blowup / 10, np.nan)  # every instance lost at t = 5 (reason diverged)
        runs = [("a", {"integrator.formulation": "naive"}, dict(metrics={"energy_error": healthy(1e-6)})),
                ("b", {"integrator.formulation": "dirac"}, dict(metrics={"energy_error": healthy(1e-5)})),
                ("c", {"integrator.formulation": "extended"}, dict(metrics={"energy_error": {"p50": blowup}})),
                ("d", {"integrator.formulation": "total"},
                 dict(metrics={"energy_error": {"p50": gone}}, lost={"diverged": 256},
                      live=np.where(TIMES < 5, 256, 0)))]
        write_study(root, runs)
        loaded, enc = self.load(root)
        status = {r.name: r.divergence for r in loaded}
        self.assertIsNone(status["a"])
        self.assertIsNone(status["b"])
        self.assertAlmostEqual(status["c"][0], 6.5)
        self.assertIn("> 1e+10", status["c"][1])
        self.assertAlmostEqual(status["d"][0], 5.0)
        self.assertIn("every instance lost (256/256 lost: diverged 256)", status["d"][1])
        fig = plot_study.draw_metric(loaded, "energy_error", enc, several=True)
        ax = fig.axes[0]
        # The y-range is that of a and b: up to 2e-5 * 11, not 1e20.
        lo, hi = ax.get_ylim()
        self.assertLess(hi, 1e-3)
        self.assertGreater(lo, 1e-8)
        texts = " ".join(legend_texts(ax))
        self.assertIn("formulation = extended — diverged", texts)
        self.assertIn("diverged 256", texts)
        # A triangle on the top edge per diverged run, where its curve leaves the axes.
        marks = [line for line in ax.get_lines() if line.get_marker() == "^"]
        self.assertEqual(len(marks), 2)
        image = rendered(fig)
        height = image.shape[0]
        for line in marks:
            x, y = line.get_transform().transform((line.get_xdata()[0], line.get_ydata()[0]))
            self.assertAlmostEqual(y, ax.get_window_extent().y1, places=3)
            t = ax.transData.inverted().transform((x, 1.0))[0]
            self.assertGreater(t, 0.5)
            self.assertLess(t, 3.0)  # 1e-6 e^(6t) passes 2.2e-4 at t = 0.9, 1e-7 e^(6t) at t = 1.3
            # The marker is drawn: its colour around the point.
            rgb = np.array(matplotlib.colors.to_rgb(line.get_color()))
            patch = image[int(height - y) - 6:int(height - y) + 6, int(x) - 6:int(x) + 6]
            self.assertGreater((np.abs(patch - rgb).max(axis=2) < 0.05).sum(), 10)
        r = plot(root, "--out", os.path.join(self.tmp.name, "diverging-plots"), "--format", "png")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "diverging-plots", "summary.txt")) as f:
            text = f.read()
        self.assertIn("diverged: run c: at t = 6.5", text)
        self.assertIn("diverged: run d: at t = 5, every instance lost", text)
        self.assertNotIn("diverged: run a", text)

    def test_zeros_masked_and_bands_only_where_visible(self):
        # Times 0.1 ... 1000 (log-spaced). p50: exactly 0 before t = 10; the band: p10 = 0
        # on [10, 50), no height (p10 = p90 = p50) on [50, 200), a decade each way from 200 on.
        t = np.concatenate([[0.0], np.logspace(-1, 3, 401)])
        p50 = np.where(t < 10, 0.0, 1e-6 * t)
        p10 = np.where(t < 50, 0.0, np.where(t < 200, p50, p50 / 10))
        p90 = np.where(t < 200, p50, p50 * 10)
        root = os.path.join(self.tmp.name, "zeros")
        write_study(root, [("z", {"integrator.h": "0.1"},
                            dict(metrics={"phi": {"p50": p50, "p10": p10, "p90": p90, "max": p90}}, times=t)),
                           ("other", {"integrator.h": "0.05"},
                            dict(metrics={"phi": {"p50": 1e-3 + 0 * t}}, times=t))])
        runs, enc = self.load(root)
        z = [r for r in runs if r.name == "z"][0]
        fig = plot_study.draw_metric(runs, "phi", enc, several=True)
        ax = fig.axes[0]
        # Artists: the median line is masked (not clipped) where it is 0; the band's
        # polygons start at t = 200.
        zline = [ln for ln in ax.get_lines() if ln.get_linewidth() == 1.6
                 and matplotlib.colors.same_color(ln.get_color(), z.colour)][0]
        y = np.ma.asarray(zline.get_ydata(orig=True))
        tx = np.asarray(zline.get_xdata())
        self.assertTrue(np.ma.getmaskarray(y)[tx < 10].all())
        self.assertFalse(np.ma.getmaskarray(y)[tx >= 10].any())
        zbands = [c for c in ax.collections if matplotlib.colors.same_color(c.get_facecolor()[0][:3], z.colour[:3])]
        self.assertTrue(zbands)
        band_t = np.concatenate([p.vertices[:, 0] for c in zbands for p in c.get_paths()])
        self.assertGreaterEqual(band_t.min(), 200 * (1 - 1e-9))
        # Pixels: nothing of run z left of t = 10 (no line, no band, no max); on [12, 180]
        # the median line alone (a few pixels per column: a band would fill the column to
        # the bottom); from 250 on a band a decade each way of the line.
        image = rendered(fig)
        colour = np.array(matplotlib.colors.to_rgb(z.colour))
        other = np.array(matplotlib.colors.to_rgb([r for r in runs if r.name == "other"][0].colour))
        hue = colour - colour.mean()
        tinted = (image - image.mean(axis=2, keepdims=True)) @ hue > 0.25 * hue @ hue * 0.18
        # Exclude the other run's horizontal line (its own hue).
        tinted &= np.abs(image - other).max(axis=2) > 0.3
        cols, rows = pixel_columns(fig, ax, 0.12, 8.0)
        self.assertEqual(tinted[rows, cols].sum(), 0)
        cols, rows = pixel_columns(fig, ax, 12.0, 180.0)
        self.assertLessEqual(tinted[rows, cols].sum(axis=0).max(), 8)
        self.assertGreater(tinted[rows, cols].sum(axis=0).min(), 0)
        cols, rows = pixel_columns(fig, ax, 250.0, 900.0)
        self.assertGreater(tinted[rows, cols].sum(axis=0).min(), 30)

    def test_a_grouped_run_is_drawn_as_a_study_of_its_groups(self):
        """One run with [parameters] group_by = "h" (series.csv's group column, summary.json's
        groups): a run per group named by its label, its h the group's value, so that the
        convergence figure fits the groups' final errors C h^4 with slope 4 exactly."""
        root = os.path.join(self.tmp.name, "grouped")
        os.makedirs(root)
        steps = [0.0125, 0.025, 0.05, 0.1]
        curves = {"all": CONSTANTS["rk4"] * 0.05 ** 4 * TIMES / 10.0}
        curves.update({"h=%g" % h: CONSTANTS["rk4"] * h ** 4 * TIMES / 10.0 for h in steps})
        header = ["group", "t", "live"] + ["integration_error_%s" % s for s in STATS]
        with open(os.path.join(root, "series.csv"), "w") as f:
            f.write(",".join(header) + "\n")
            for label, p50 in curves.items():
                for t, v in zip(TIMES, p50):
                    f.write(",".join([label, "%.17g" % t, "64" if label != "all" else "256"] +
                                     ["%.17g" % (2 * v if s == "max" else v) for s in STATS]) + "\n")
        final = lambda v: {"final_" + s: float(2 * v[-1] if s == "max" else v[-1]) for s in STATS}  # noqa: E731
        summary = {
            "study": {"model": {"kind": "pendulum"},
                      "integrator": {"formulation": "dirac", "method": "rk4", "h": 0.05, "t_end": 10.0}},
            "instances": 256, "lost_instances": 0, "lost": {}, "t_final": 10.0, "samples": len(TIMES),
            "integration_error": final(curves["all"]),
            "groups": {"by": "h", "bins": False,
                       "groups": [dict({"group": "h=%g" % h, "value": h, "instances": 64, "lost_instances": 0},
                                       integration_error=final(curves["h=%g" % h])) for h in steps]},
        }
        with open(os.path.join(root, "summary.json"), "w") as f:
            json.dump(summary, f)
        runs, _, several, entries = plot_study.load(root)
        self.assertFalse(several)
        runs, entries = plot_study.expand_groups(runs, entries)
        self.assertEqual([r.name for r in runs], ["h=%g" % h for h in steps])
        self.assertEqual([r.overrides for r in runs], [{"integrator.h": json.dumps(h)} for h in steps])
        self.assertEqual([plot_study.step_size(r) for r in runs], steps)
        self.assertTrue(np.array_equal(runs[2].series["integration_error_p50"], curves["h=0.05"]))
        self.assertNotIn("group", runs[0].series)
        out = os.path.join(self.tmp.name, "grouped-plots")
        r = plot(root, "--out", out, "--format", "png")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(os.path.join(out, "convergence.png"), r.stdout.splitlines())
        with open(os.path.join(out, "summary.txt")) as f:
            text = f.read()
        self.assertRegex(text, r"\n\s+all runs\s+4\s+4\.000\s+4\.000\n")


    def few_survivors_study(self, name):
        """The naive RK4 pendulums of the user's report, scaled to TIMES: 100000 instances,
        of which 41543 are live at t = 6 (below half), 2620 at 6.5, 77 at 7 and 73 from 7.5
        on; their median then drops below dirac's, whose ensemble stays whole."""
        root = os.path.join(self.tmp.name, name)
        live = np.select([TIMES < 6, TIMES < 6.5, TIMES < 7, TIMES < 7.5], [100000, 41543, 2620, 77], 73)
        naive = 1e-3 * (1 + TIMES)
        naive = np.where(TIMES >= 6, 1e-6, naive)  # the 73 survivors look better than the ensemble
        stats = lambda p50: {"p50": p50, "p10": p50 / 2, "p90": 2 * p50, "max": 4 * p50}  # noqa: E731
        write_study(root, [
            ("naive", {"integrator.formulation": "naive"},
             dict(metrics={"integration_error": stats(naive)}, instances=100000, live=live,
                  lost={"diverged": 99927})),
            ("dirac", {"integrator.formulation": "dirac"},
             dict(metrics={"integration_error": stats(1e-4 * (1 + TIMES))}, instances=100000))])
        return root

    def test_statistics_of_few_survivors_are_marked(self):
        root = self.few_survivors_study("few-survivors")
        runs, enc = self.load(root)
        by_name = {r.name: r for r in runs}
        naive, dirac = by_name["naive"], by_name["dirac"]
        self.assertIsNone(naive.divergence)  # not every instance is lost: not "diverged"
        self.assertEqual(naive.thinning, (6.0, "live < 50 % from t = 6 (73/100000 at t_final)"))
        self.assertIsNone(dirac.thinning)
        fig = plot_study.draw_metric(runs, "integration_error", enc, several=True)
        ax = fig.axes[0]
        legend = " ".join(" ".join(legend_texts(ax)).split())
        self.assertIn("formulation = naive — live < 50 % from t = 6 (73/100000 at t_final)", legend)
        self.assertNotIn("formulation = dirac — live", legend)
        colour = lambda artist, run: matplotlib.colors.same_color(artist.get_color(), run.colour)  # noqa: E731

        def drawn_t(line):
            y = np.ma.asarray(line.get_ydata(orig=True))
            return np.asarray(line.get_xdata())[~np.ma.getmaskarray(y) & np.isfinite(np.ma.filled(y, np.nan))]

        naive_lines = [ln for ln in ax.get_lines() if colour(ln, naive) and len(ln.get_xdata()) > 1]
        # The full-style median and the maximum stop before t = 6; a faint dotted median
        # goes on from the sample before to t_final.
        full = [ln for ln in naive_lines if ln.get_linewidth() == 1.6]
        self.assertEqual(len(full), 1)
        self.assertEqual(drawn_t(full[0]).max(), 5.5)
        faint = [ln for ln in naive_lines if ln.get_linestyle() == ":"]
        self.assertEqual(len(faint), 1)
        self.assertLess(faint[0].get_linewidth(), 1.6)
        self.assertEqual((drawn_t(faint[0]).min(), drawn_t(faint[0]).max()), (5.5, 10.0))
        for line in naive_lines:
            if line not in faint:
                self.assertLessEqual(drawn_t(line).max(), 5.5, line)
        # No band over the survivors.
        bands = [c for c in ax.collections if matplotlib.colors.same_color(c.get_facecolor()[0][:3], naive.colour[:3])]
        self.assertTrue(bands)
        self.assertLessEqual(max(p.vertices[:, 0].max() for c in bands for p in c.get_paths()), 5.5 + 1e-9)
        # A ring on the curve where the live fraction falls below half.
        rings = [ln for ln in ax.get_lines() if colour(ln, naive) and ln.get_marker() == "o"
                 and ln.get_markerfacecolor() == "none"]
        self.assertEqual(len(rings), 1)
        self.assertEqual((rings[0].get_xdata()[0], rings[0].get_ydata()[0]), (6.0, 1e-6))
        # Dirac is drawn whole: median, band and maximum to t_final.
        dirac_full = [ln for ln in ax.get_lines() if colour(ln, dirac) and ln.get_linewidth() == 1.6]
        self.assertEqual(drawn_t(dirac_full[0]).max(), 10.0)
        # summary.txt: the run's live count beside its final statistics, and when it thinned.
        out = os.path.join(self.tmp.name, "few-survivors-plots")
        r = plot(root, "--out", out, "--format", "png")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.txt")) as f:
            text = f.read()
        self.assertIn("few live: run naive: live < 50 % from t = 6 (73/100000 at t_final)", text)
        self.assertNotIn("few live: run dirac", text)
        naive_block = text[text.index("run naive:"):text.index("run dirac:")]
        self.assertIn("live at t_final: 73/100000 (0.073 %); below --min-live 0.5 from t = 6 on", naive_block)
        self.assertIn("live at t_final: 100000/100000 (100 %)\n", text[text.index("run dirac:"):])
        self.assertNotIn("diverged: run naive", text)
        # --min-live sets the threshold: 73/100000 is above 0.05 %.
        r = plot(root, "--out", out, "--format", "png", "--min-live", "0.0005")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.txt")) as f:
            self.assertNotIn("few live", f.read())

    def test_a_group_counts_its_own_live_instances(self):
        """Groups of a grouped run are thinned by their own live count against their own
        size: 40 of 64 live is 62 %, though 40 of the ensemble's 128 would be 31 %."""
        root = os.path.join(self.tmp.name, "grouped-live")
        os.makedirs(root)
        live = {"all": np.where(TIMES < 5, 128, 50), "h=0.1": np.where(TIMES < 5, 64, 10),
                "h=0.05": np.where(TIMES < 5, 64, 40)}
        header = ["group", "t", "live"] + ["energy_error_%s" % s for s in STATS]
        with open(os.path.join(root, "series.csv"), "w") as f:
            f.write(",".join(header) + "\n")
            for label, counts in live.items():
                for t, n in zip(TIMES, counts):
                    f.write(",".join([label, "%.17g" % t, "%d" % n] + ["%.17g" % (1e-6 * (1 + t))] * len(STATS)) + "\n")
        summary = {
            "study": {"model": {"kind": "pendulum"}, "integrator": {"formulation": "dirac", "method": "rk4", "h": 0.1}},
            "instances": 128, "lost_instances": 78, "lost": {"diverged": 78}, "t_final": 10.0, "samples": len(TIMES),
            "groups": {"by": "h", "bins": False, "groups": [
                {"group": "h=0.1", "value": 0.1, "instances": 64, "lost_instances": 54},
                {"group": "h=0.05", "value": 0.05, "instances": 64, "lost_instances": 24}]},
        }
        with open(os.path.join(root, "summary.json"), "w") as f:
            json.dump(summary, f)
        runs, _, _, entries = plot_study.load(root)
        runs, _ = plot_study.expand_groups(runs, entries)
        thinning = {r.name: r.thinning for r in runs}
        self.assertEqual(thinning["h=0.1"], (5.0, "live < 50 % from t = 5 (10/64 at t_final)"))
        self.assertIsNone(thinning["h=0.05"])

    def test_convergence_leaves_out_runs_with_few_survivors(self):
        root = os.path.join(self.tmp.name, "convergence-few")
        runs = []
        for h in STEPS:
            p50 = CONSTANTS["rk4"] * float(h) ** 4 * TIMES / 10.0
            kw = dict(metrics={"integration_error": {"p50": p50, "max": 2 * p50}}, h=float(h))
            if h == "0.1":  # 10 of 256 left, whose error is far off C h^4
                kw.update(metrics={"integration_error": {"p50": p50 / 100, "max": p50 / 50}},
                          live=np.where(TIMES < 8, 256, 10), lost={"diverged": 246})
            runs.append(("h=%s" % h, {"integrator.h": h}, kw))
        write_study(root, runs)
        loaded, enc = self.load(root)
        fig, lines = plot_study.draw_convergence(plot_study.convergence_runs(loaded), enc)
        legend = " ".join(" ".join(legend_texts(fig.axes[0])).split())
        self.assertIn("all runs — max: slope 4.00 (1 with live < 50 % left out)", legend)
        self.assertIn("all runs — median (p50): slope 4.00 (1 with live < 50 % left out)", legend)
        self.assertIn("h = 0.1: live < 50 % from t = 8 (10/256 at t_final); not in the fit", legend)
        self.assertIn("  few live, not in the fit: h = 0.1 (h = 0.1): live < 50 % from t = 8 (10/256 at t_final)",
                      lines)
        self.assertRegex("\n".join(lines), r"\n\s+all runs\s+3\s+4\.000\s+4\.000\n")
        # Drawn, as grey crosses, not as the group's points.
        crosses = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "x"]
        self.assertEqual(sorted(x for ln in crosses for x in ln.get_xdata()), [0.1, 0.1])

    def test_convergence_fit_drops_saturated_errors(self):
        """The user's Euler runs: final maxima 232, 22.9, 9.0, 5.7 and 3.5, all above the
        saturation limit 1 (summary.json's growth_exponents.limits.saturation), leave no
        slope; medians 40 h, saturated down to h = 0.025, leave two points and slope 1."""
        root = os.path.join(self.tmp.name, "saturated")
        steps = [0.1, 0.05, 0.025, 0.0125, 0.00625]
        maxima = [232.0, 22.9, 9.0, 5.7, 3.5]
        limits = {"growth_exponents": {"window": [1.0, 10.0], "limits": {"rounding": 4.4e-13, "saturation": 1.0}}}
        write_study(root, [("h=%g" % h, {"integrator.h": "%g" % h},
                            dict(metrics={"integration_error": {"p50": 40 * h * TIMES / 10, "max": m * TIMES / 10}},
                                 method="euler", h=h, summary_extra=limits)) for h, m in zip(steps, maxima)])
        loaded, enc = self.load(root)
        self.assertEqual({r.saturation for r in loaded}, {1.0})
        fig, lines = plot_study.draw_convergence(plot_study.convergence_runs(loaded), enc)
        ax = fig.axes[0]
        legend = " ".join(" ".join(legend_texts(ax)).split())
        self.assertIn("all runs — max: slope n/a (5 saturated left out; fewer than 2 points left)", legend)
        self.assertIn("all runs — median (p50): slope 1.00 (3 saturated left out)", legend)
        self.assertIn("saturated: error at or above 1 (half the size of the state); not in the fit", legend)
        text = "\n".join(lines)
        self.assertRegex(text, r"\n\s+all runs\s+0/2\s+n/a\s+1\.000\n")
        self.assertIn("  saturated, not in the fit: all runs — max at h = 0.00625, 0.0125, 0.025, 0.05, 0.1: "
                      "3.5, 5.7, 9, 22.9, 232 (at or above 1)", lines)
        self.assertIn("  saturated, not in the fit: all runs — median (p50) at h = 0.025, 0.05, 0.1: 1, 2, 4 "
                      "(at or above 1)", lines)
        self.assertIn("  no slope for all runs — max: fewer than 2 points left (5 saturated left out)", lines)
        # Drawn hollow and grey; one fit line only (the median's).
        hollow = [ln for ln in ax.get_lines() if ln.get_markerfacecolor() == "none"
                  and matplotlib.colors.same_color(ln.get_markeredgecolor(), "0.55")]
        self.assertEqual(sorted(x for ln in hollow for x in ln.get_xdata()), sorted(steps + steps[:3]))
        self.assertEqual(len([ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]), 1)
        lo, hi = ax.get_ylim()
        self.assertGreater(hi, 232.0)  # the saturated points are inside the axes
        # Without growth_exponents.limits: half the size of model.initial, at least 1 (the
        # pendulums' default [1, 0, 0, -2]: 1); unknown for a chain's default.
        self.assertEqual(plot_study.saturation_limit({"study": {"model": {"kind": "pendulum"}}}), 1.0)
        self.assertEqual(plot_study.saturation_limit({"study": {"model": {"kind": "pendulum",
                                                                          "initial": [3, 0, 0, -4]}}}), 2.0)
        self.assertIsNone(plot_study.saturation_limit({"study": {"model": {"kind": "chain"}}}))

    def test_max_line_is_drawn_over_bands_and_medians(self):
        """RATTLE-like medians that oscillate inside a wide band, and a second run whose band
        and median cross the first's maximum: every maximum is drawn over every band and
        median, opaque, with a white halo that sets it off from a band of its own colour."""
        root = os.path.join(self.tmp.name, "oscillating")
        wave = 1e-4 * (1.05 + np.sin(3.0 * TIMES))
        write_study(root, [
            ("rattle", {"integrator.method": "rattle"},
             dict(metrics={"energy_error": {"p50": wave, "p10": wave / 100, "p90": 1e-4 * 2.1 + 0 * TIMES,
                                            "max": 1e-4 * 2.2 + 0 * TIMES}})),
            ("other", {"integrator.method": "rk4"},
             dict(metrics={"energy_error": {"p50": 2.2e-4 + 0 * TIMES, "p10": 1e-6 + 0 * TIMES,
                                            "p90": 1e-3 + 0 * TIMES, "max": 2e-3 + 0 * TIMES}}))])
        runs, enc = self.load(root)
        fig = plot_study.draw_metric(runs, "energy_error", enc, several=True)
        ax = fig.axes[0]
        maxima = [ln for ln in ax.get_lines() if any(
            np.allclose(np.ma.filled(np.ma.asarray(ln.get_ydata(orig=True), float), np.nan),
                        r.series["energy_error_max"][r.series["t"] > 0]) for r in runs) and ln.get_linewidth() != 1.6]
        medians = [ln for ln in ax.get_lines() if ln.get_linewidth() == 1.6]
        bands = [c for c in ax.collections]
        self.assertEqual((len(maxima), len(medians), len(bands)), (2, 2, 2))
        for line in maxima:
            self.assertGreater(line.get_zorder(), max(a.get_zorder() for a in bands + medians))
            self.assertIn(line.get_alpha(), (None, 1.0))
            halo = [e for e in line.get_path_effects() if isinstance(e, matplotlib.patheffects.withStroke)]
            self.assertTrue(halo, "no halo on the max line")
        # matplotlib draws in zorder: the maxima come after every band and median.
        order = sorted(ax.get_children(), key=lambda a: a.get_zorder())
        last_other = max(order.index(a) for a in bands + medians)
        self.assertTrue(all(order.index(line) > last_other for line in maxima))


if __name__ == "__main__":
    unittest.main()
