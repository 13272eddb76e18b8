#!/usr/bin/python3
"""Tests of scripts/plot_study.py (`chens plot`) on synthetic chens result directories.

  /usr/bin/python3 tests/plot/test_plot_study.py [-v]

Writes a single-run directory and a study of several runs with known content into a
temporary directory (summary.json, series.csv, trajectory.csv, study.json as described in
docs/study-format.md), runs plot_study.py on them as a subprocess and checks the exit
codes, the files written, that every PNG shows something (neither blank nor solid), the
periodogram's peak and the first-passage counts in summary.txt. Needs Debian's python3-numpy and python3-matplotlib;
standard-library unittest only.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import matplotlib

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "plot_study.py")
STATS = ("mean", "rms", "min", "max", "p10", "p50", "p90", "p99")
FACTORS = (1.0, 1.0, 0.5, 4.0, 0.7, 1.0, 2.0, 3.0)  # of p50, per statistic
PENDULUM_METRICS = ("integration_error", "energy_error", "phi", "psi")
CHAIN_METRICS = ("energy_error", "phi", "psi", "linear_momentum_error", "angular_momentum_error")

# The pendulum's y(t) = 0.3 sin(2 pi 0.25 t), sampled at t = 0, 0.5, ..., 200.
DT, T_END = 0.5, 200.0
FREQUENCY, AMPLITUDE = 0.25, 0.3
TIMES = [k * DT for k in range(int(T_END / DT) + 1)]


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join("%.17g" % v for v in row) + "\n")


# periodogram.csv of the run "lin" (chens' own spectrum, output.periodogram): one peak
# that differs from trajectory.csv's, so that the test sees which one was drawn.
CSV_PEAK_BIN, CSV_PEAK_AMPLITUDE = 50, 0.5
# summary.json phase-error tables (output.phase_error) of the runs "lin" and "quad".
PHASE_K = (2, 4, 10)
PHASE_ERRORS = {"lin": (1e-4, 4e-4, 2.5e-3), "quad": (3e-3, 1.2e-2, None)}  # None: lost before 10T


def surviving_energy(t):
    """surviving_energy_error of runs with first-passage levels: 1, less 0.1 every 25 time
    units down to 0.3 (6 of the 10 instances crossed the level, 1 was lost first)."""
    return 1.0 - 0.1 * min(7, math.floor(t / 25))


def surviving_lost(t):
    """surviving_lost: one of the 10 instances is lost at t = 150."""
    return 0.9 if t >= 150 else 1.0


def first_passage_block(level):
    """summary.json's first_passage matching surviving_energy and surviving_lost."""
    times = {"time_mean": 95.5, "time_min": 25.0, "time_max": 175.0, "time_p10": 25.0, "time_p50": 100.0,
             "time_p90": 175.0, "time_p99": 175.0}
    return {"energy_error": dict({"level": level, "checked": "after every step", "crossed": 6, "lost_first": 1,
                                  "never": 3, "surviving_final": 0.3}, **times),
            "lost": dict({"checked": "at sample times", "crossed": 1, "never": 9, "surviving_final": 0.9},
                         **dict(times, time_mean=150.0, time_min=150.0, time_max=150.0, time_p10=150.0,
                                time_p50=150.0, time_p90=150.0, time_p99=150.0))}


def write_run(directory, kind, formulation, h, scale, power, growth=True, p10=True, spectrum=False, phase=None,
              passage=None):
    """One synthetic run: every metric's p50 is scale * t^power, the other statistics
    FACTORS times that (p10 only when p10); trajectory.csv of instance 0: the pendulum
    oscillates in y with FREQUENCY and AMPLITUDE, the chain of 3 atoms turns its last atom
    on a unit circle about the middle one. spectrum: a periodogram.csv with one peak;
    phase: phase errors at PHASE_K periods for summary.json; passage: the level of a
    first-passage check on the energy error (and the loss checked too): series.csv's
    surviving_energy_error and surviving_lost, summary.json's first_passage."""
    os.makedirs(directory)
    metrics = PENDULUM_METRICS if kind == "pendulum" else CHAIN_METRICS
    stats = [(s, f) for s, f in zip(STATS, FACTORS) if p10 or s != "p10"]
    header = ["t", "live"] + ["%s_%s" % (m, s) for m in metrics for s, _ in stats]
    if passage is not None:
        header += ["surviving_energy_error", "surviving_lost"]
    rows = []
    for t in TIMES:
        p50 = scale * t ** power
        rows.append([t, 10] + [f * p50 for _, f in stats] * len(metrics))
        if passage is not None:
            rows[-1] += [surviving_energy(t), surviving_lost(t)]
    write_csv(os.path.join(directory, "series.csv"), header, rows)

    if kind == "pendulum":
        traj_header = ["t", "x", "y", "px", "py"]
        traj = []
        for t in TIMES:
            y = AMPLITUDE * math.sin(2 * math.pi * FREQUENCY * t)
            traj.append([t, math.sqrt(1 - y * y), y, 0.0, 0.0])
    else:
        traj_header = ["t", "x0", "y0", "x1", "y1", "x2", "y2"] + ["p%s%d" % (c, i) for i in range(3) for c in "xy"]
        traj = [[t, -1.0, 0.0, 0.0, 0.0, math.cos(0.1 * t), math.sin(0.1 * t)] + [0.0] * 6 for t in TIMES]
    write_csv(os.path.join(directory, "trajectory.csv"), traj_header, traj)

    final = {"final_" + s: scale * T_END ** power for s in STATS}
    summary = {
        "chens_version": "0.1.0",
        "study": {"model": {"kind": kind}, "integrator": {"formulation": formulation, "method": "rk4", "h": h}},
        "instances": 10,
        "lost_instances": 0,
        "t_final": T_END,
        "samples": len(TIMES),
    }
    summary.update({m: final for m in metrics})
    if spectrum:
        n = len(TIMES) - 1
        f = [j / (n * DT) for j in range(1, n // 2 + 1)]
        a = [CSV_PEAK_AMPLITUDE if j == CSV_PEAK_BIN else 0.01 for j in range(1, n // 2 + 1)]
        write_csv(os.path.join(directory, "periodogram.csv"), ["f", "amplitude", "power"],
                  [[x, y, y * y / 2] for x, y in zip(f, a)])
        summary["periodogram"] = {"component": "y", "instance": 0, "samples": n, "dt": DT}
    if phase:
        period = 3.3132763404731875
        summary["phase_error"] = {"period": period, "instance": 0, "rows": [
            {"periods": k, "t": k * period, "phase_error": e} for k, e in zip(PHASE_K, phase)]}
    if passage is not None:
        summary["first_passage"] = first_passage_block(passage)
    if growth:
        summary["growth_exponents"] = {"window": [T_END / 10, T_END]}
        summary["growth_exponents"].update({m: {"max": power, "p50": power, "points": 361} for m in metrics})
    with open(os.path.join(directory, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


def plot(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=300)


class PlotStudyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="chens-plot-test-")
        root = cls.tmp.name
        cls.single = os.path.join(root, "single")
        write_run(cls.single, "pendulum", "dirac", 0.1, 1e-6, 1.0)
        cls.single_result = plot(cls.single)

        cls.study = os.path.join(root, "study")
        os.makedirs(cls.study)
        write_run(os.path.join(cls.study, "lin"), "pendulum", "dirac", 0.1, 1e-6, 1.0, spectrum=True,
                  phase=PHASE_ERRORS["lin"], passage=1e-3)
        write_run(os.path.join(cls.study, "quad"), "pendulum", "naive", 0.1, 1e-7, 2.0, growth=False, p10=False,
                  phase=PHASE_ERRORS["quad"])
        write_run(os.path.join(cls.study, "chain"), "chain", "dirac", 0.1, 1e-8, 1.0, passage=1e-3)
        os.makedirs(os.path.join(cls.study, "broken"))  # a failed run leaves no results
        runs = [{"name": n, "directory": n, "overrides": {}, "status": "complete"} for n in ("lin", "quad", "chain")]
        runs.append({"name": "broken", "directory": "broken", "overrides": {}, "status": "failed", "exit_code": 1})
        runs.append({"name": "later", "directory": "later", "overrides": {}, "status": "pending"})
        with open(os.path.join(cls.study, "study.json"), "w") as f:
            json.dump({"chens_version": "0.1.0", "study_file": "s.toml", "complete": False, "runs": runs}, f)
        cls.study_out = os.path.join(root, "study-plots")
        cls.study_result = plot(cls.study, "--out", cls.study_out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_drawn(self, png):
        """The PNG exists, is larger than 300x200 and 0.5 % to 60 % of its pixels are not white."""
        self.assertTrue(os.path.isfile(png), png)
        image = matplotlib.image.imread(png)
        height, width = image.shape[:2]
        self.assertGreater(width, 300, png)
        self.assertGreater(height, 200, png)
        inked = (image[:, :, :3].min(axis=2) < 0.98).mean()
        self.assertGreaterEqual(inked, 0.005, "%s: %.4f of the pixels drawn" % (png, inked))
        self.assertLessEqual(inked, 0.60, "%s: %.4f of the pixels drawn" % (png, inked))

    def summary(self, outdir):
        with open(os.path.join(outdir, "summary.txt")) as f:
            return f.read()

    def test_single_run_figures(self):
        r = self.single_result
        self.assertEqual(r.returncode, 0, r.stderr)
        plots = os.path.join(self.single, "plots")
        for stem in PENDULUM_METRICS + ("periodogram",):
            self.assert_drawn(os.path.join(plots, stem + ".png"))
            self.assertTrue(os.path.isfile(os.path.join(plots, stem + ".svg")), stem)
            self.assertIn(os.path.join(plots, stem + ".png"), r.stdout.splitlines())
        self.assertFalse(os.path.exists(os.path.join(plots, "end_atom.png")))

    def test_periodogram_peak(self):
        text = self.summary(os.path.join(self.single, "plots"))
        m = re.search(r"peak frequency (\S+) amplitude (\S+)", text)
        self.assertIsNotNone(m, text)
        frequency, amplitude = float(m.group(1)), float(m.group(2))
        bin_width = 1.0 / (len(TIMES) * DT)
        self.assertLessEqual(abs(frequency - FREQUENCY), bin_width, text)
        self.assertLessEqual(abs(amplitude - AMPLITUDE), 0.05 * AMPLITUDE, text)

    def test_summary_table(self):
        text = self.summary(os.path.join(self.single, "plots"))
        # energy_error: p50 = 1e-6 t, max = 4 p50 at t = 200; growth exponents 1 from summary.json.
        m = re.search(r"^\s*energy_error\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", text, re.M)
        self.assertIsNotNone(m, text)
        self.assertAlmostEqual(float(m.group(1)), 2e-4, delta=1e-9)
        self.assertAlmostEqual(float(m.group(2)), 8e-4, delta=1e-9)
        self.assertEqual(m.group(3), "1.000")
        self.assertEqual(m.group(4), "1.000")
        self.assertIn("dirac + rk4, h = 0.1", text)

    def test_study_of_several_runs(self):
        r = self.study_result
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"warning: skipping run broken: status failed \(exit code 1\)")
        self.assertRegex(r.stderr, r"warning: skipping run later: status pending")
        stems = set(PENDULUM_METRICS + CHAIN_METRICS) | {"periodogram_lin", "periodogram_quad", "end_atom_chain"}
        for stem in stems:
            self.assert_drawn(os.path.join(self.study_out, stem + ".png"))
        self.assertFalse(any("broken" in f or "later" in f for f in os.listdir(self.study_out)))
        text = self.summary(self.study_out)
        self.assertIn("run lin:", text)
        self.assertIn("run quad:", text)
        self.assertIn("run chain:", text)
        self.assertIn("skipped: run broken", text)
        self.assertIn("growth exponents: not in summary.json", text)  # the run "quad" has none
        self.assertEqual(len(re.findall(r"peak frequency", text)), 2)
        # All periodograms in one figure; the phase-error figure and table (002 Table 1).
        self.assert_drawn(os.path.join(self.study_out, "periodograms.png"))
        self.assert_drawn(os.path.join(self.study_out, "phase_error.png"))
        self.assertRegex(text, r"phase error \|y\(kT\) - y_exact\(kT\)\| of instance 0 \(002 Table 1\), T = 3\.31327634047")
        self.assertRegex(text, r"\n\s+run\s+2T\s+4T\s+10T\n")
        self.assertRegex(text, r"\n\s+lin\s+1\.000e-04\s+4\.000e-04\s+2\.500e-03\n")
        self.assertRegex(text, r"\n\s+quad\s+3\.000e-03\s+1\.200e-02\s+n/a\n")

    def test_periodogram_from_chens_file(self):
        # The run "lin" has periodogram.csv: its peak (bin 50), not trajectory.csv's.
        text = self.summary(self.study_out)
        block = text[text.index("run lin:"):text.index("run quad:")]
        m = re.search(r"peak frequency (\S+) amplitude (\S+)", block)
        self.assertIsNotNone(m, block)
        self.assertAlmostEqual(float(m.group(1)), CSV_PEAK_BIN / ((len(TIMES) - 1) * DT), places=12)
        self.assertAlmostEqual(float(m.group(2)), CSV_PEAK_AMPLITUDE, places=12)

    def test_bands_in_the_svg_legend(self):
        # SVG text stays text: the legend says which band is drawn. Runs with p10 get the
        # p10-p90 band; "quad" (series.csv without p10) falls back to min-p90.
        with open(os.path.join(self.single, "plots", "energy_error.svg")) as f:
            single = f.read()
        self.assertIn("p10–p90 band", single)
        self.assertNotIn("min–p90 band", single)
        self.assertIn("median (p50)", single)
        with open(os.path.join(self.study_out, "energy_error.svg")) as f:
            study = f.read()
        self.assertIn("p10–p90 band", study)
        self.assertIn("min–p90 band", study)
        for label in ("lin", "quad", "chain"):
            self.assertIn(">%s<" % label, study)

    def test_format_and_metrics_options(self):
        out = os.path.join(self.tmp.name, "only-energy")
        r = plot(self.single, "--out", out, "--format", "png", "--metrics", "energy_error")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["energy_error.png", "periodogram.png", "summary.txt"])
        r = plot(self.single, "--out", out, "--metrics", "no_such_metric")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no_such_metric", r.stderr)

    def test_withheld_growth_exponent_says_why(self):
        d = os.path.join(self.tmp.name, "withheld")
        write_run(d, "pendulum", "dirac", 0.1, 1e-6, 1.0)
        path = os.path.join(d, "summary.json")
        summary = json.load(open(path))
        reason = "at rounding level (max 3e-16 <= 2.22e-13)"
        summary["growth_exponents"]["psi"] = {"max": None, "p50": None, "points": 361, "max_reason": reason,
                                              "p50_reason": reason}
        json.dump(summary, open(path, "w"))
        out = os.path.join(self.tmp.name, "withheld-plots")
        r = plot(d, "--out", out, "--format", "png", "--metrics", "psi,energy_error")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {line.split()[0]: line for line in self.summary(out).splitlines() if line.startswith("  ")}
        self.assertIn("max: " + reason, lines["psi"])
        self.assertNotIn("reason", lines["energy_error"])
        self.assertNotIn("(", lines["energy_error"])

    def test_survival_figure(self):
        # "lin" and "chain" check the energy error at 1e-3 and the loss; "quad" checks nothing.
        self.assert_drawn(os.path.join(self.study_out, "survival.png"))
        self.assertIn(os.path.join(self.study_out, "survival.png"), self.study_result.stdout.splitlines())
        with open(os.path.join(self.study_out, "survival.svg")) as f:
            svg = f.read()
        self.assertEqual(svg.count("surviving fraction"), 2)  # two panels: energy_error, lost
        self.assertEqual(svg.count("&gt; 1e-3"), 1)  # the level both runs share: in the panel's title only
        for label in ("lin", "chain"):
            self.assertIn(">%s<" % label, svg)
        self.assertNotIn(">quad<", svg)

    def test_metric_figures_ignore_surviving_columns(self):
        pngs = {f[: -len(".png")] for f in os.listdir(self.study_out) if f.endswith(".png")}
        expected = set(PENDULUM_METRICS + CHAIN_METRICS) | {
            "periodogram_lin", "periodogram_quad", "periodograms", "phase_error", "end_atom_chain", "survival"}
        self.assertEqual(pngs, expected)
        text = self.summary(self.study_out)
        self.assertNotRegex(text, r"\n\s+surviving_")

    def test_first_passage_in_summary(self):
        text = self.summary(self.study_out)
        lin = text[text.index("run lin:"):text.index("run quad:")]
        self.assertIn("first passage (summary.json)", lin)
        self.assertRegex(lin, r"\n\s+energy_error\s+1e-3\s+after every step\s+6\s+1\s+3\s+100\s+95\.5\s+0\.3\n")
        self.assertRegex(lin, r"\n\s+lost\s+-\s+at sample times\s+1\s+-\s+9\s+150\s+150\s+0\.9\n")
        quad = text[text.index("run quad:"):text.index("run chain:")]
        self.assertNotIn("first passage", quad)
        self.assertIn("first passage", text[text.index("run chain:"):])
        self.assertNotIn("first passage", self.summary(os.path.join(self.single, "plots")))

    def test_no_survival_figure_without_levels(self):
        self.assertEqual(self.single_result.returncode, 0, self.single_result.stderr)
        self.assertFalse(any(f.startswith("survival") for f in os.listdir(os.path.join(self.single, "plots"))))

    def test_survival_with_different_levels(self):
        # Levels that differ between runs go into the legend, not into the panel's title.
        d = os.path.join(self.tmp.name, "levels")
        os.makedirs(d)
        for name, level in (("coarse", 1e-3), ("fine", 1e-4)):
            write_run(os.path.join(d, name), "pendulum", "dirac", 0.1, 1e-6, 1.0, passage=level)
        runs = [{"name": n, "directory": n, "overrides": {}, "status": "complete"} for n in ("coarse", "fine")]
        with open(os.path.join(d, "study.json"), "w") as f:
            json.dump({"chens_version": "0.1.0", "study_file": "s.toml", "complete": True, "runs": runs}, f)
        out = os.path.join(self.tmp.name, "levels-plots")
        r = plot(d, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_drawn(os.path.join(out, "survival.png"))
        with open(os.path.join(out, "survival.svg")) as f:
            svg = f.read()
        self.assertIn("coarse — energy_error &gt; 1e-3", svg)
        self.assertIn("fine — energy_error &gt; 1e-4", svg)
        self.assertEqual(svg.count("&gt; 1e-"), 2)  # in those two legend entries only, not in the title

    def test_survival_and_metrics_option(self):
        # --metrics psi: the energy error's level is left out, the loss is shown.
        out = os.path.join(self.tmp.name, "survival-psi")
        r = plot(self.study, "--out", out, "--metrics", "psi")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_drawn(os.path.join(out, "survival.png"))
        with open(os.path.join(out, "survival.svg")) as f:
            self.assertEqual(f.read().count("surviving fraction"), 1)
        text = self.summary(out)
        self.assertRegex(text, r"\n\s+lost\s+-\s+at sample times")
        self.assertNotRegex(text, r"\n\s+energy_error\s+1e-3")

    def test_min_live_option_is_validated(self):
        out = os.path.join(self.tmp.name, "min-live")
        for bad in ("0", "-0.5", "1.5", "nan", "inf", "half", ""):
            r = plot(self.single, "--out", out, "--min-live", bad)
            self.assertEqual(r.returncode, 2, "--min-live %r: %s" % (bad, r.stderr))
            self.assertIn("--min-live %s: not a fraction in (0, 1]" % bad, r.stderr)
            self.assertEqual(r.stdout, "")
            self.assertFalse(os.path.exists(out))
        r = plot(self.single, "--out", out, "--format", "png", "--metrics", "energy_error", "--min-live", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        # Every instance live: nothing is drawn as a few survivors', and summary.txt says so.
        text = self.summary(out)
        self.assertIn("\n  live at t_final: 10/10 (100 %)\n", text)
        self.assertNotIn("few live", text)

    def test_lyapunov_spectrum_figure(self):
        """output.lyapunov_spectrum: spectrum.png and summary.txt's table list every run whose
        spectrum has live instances, in order, with its means, pair sums and sum as written;
        a run whose spectrum has no live instance is left out; a study without spectra draws
        no spectrum figure (the study of setUpClass)."""
        self.assertFalse(os.path.exists(os.path.join(self.study_out, "spectrum.png")))
        with tempfile.TemporaryDirectory(prefix="chens-plot-spectrum-") as root:
            study = os.path.join(root, "study")
            os.makedirs(study)
            spectra = {"E=-1": [0.01, 0.002, -0.003, -0.009], "E=2": [0.48, 0.03, -0.031, -0.477], "dead": None}
            for name, means in spectra.items():
                write_run(os.path.join(study, name), "pendulum", "dirac", 0.1, 1e-6, 1.0)
                path = os.path.join(study, name, "summary.json")
                with open(path) as f:
                    summary = json.load(f)
                k = 4
                block = {"exponents": k, "instances": 0 if means is None else 8}
                for stat in ("mean", "rms", "min", "max", "p10", "p50", "p90", "p99"):
                    block["final_" + stat] = [None] * k if means is None else [
                        m + {"min": -0.01, "p10": -0.005, "p90": 0.005, "max": 0.01}.get(stat, 0.0) for m in means]
                block["pair_sums_of_means"] = [None, None] if means is None else [means[0] + means[3],
                                                                                  means[1] + means[2]]
                block["sum_of_means"] = None if means is None else sum(means)
                summary["lyapunov_spectrum"] = block
                with open(path, "w") as f:
                    json.dump(summary, f)
            runs = [{"name": n, "directory": n, "overrides": {}, "status": "complete"} for n in spectra]
            with open(os.path.join(study, "study.json"), "w") as f:
                json.dump({"chens_version": "0.1.0", "study_file": "s.toml", "complete": True, "runs": runs}, f)
            out = os.path.join(root, "plots")
            r = plot(study, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assert_drawn(os.path.join(out, "spectrum.png"))
            lines = self.summary(out).splitlines()
            at = [i for i, line in enumerate(lines) if line.startswith("lyapunov spectrum at t_final")]
            self.assertEqual(len(at), 1, lines)
            table = lines[at[0] + 1:at[0] + 3]
            self.assertEqual(table[0].split()[:3], ["E=-1", "8", "live:"])
            for line, name in zip(table, ("E=-1", "E=2")):
                m = spectra[name]
                self.assertEqual(line.split()[0], name)
                self.assertIn("%s; pairs %.2g, %.2g; sum %.2g" % (", ".join("%.4g" % v for v in m), m[0] + m[3],
                                                                  m[1] + m[2], sum(m)), line)
            self.assertFalse(any(line.split()[:1] == ["dead"] for line in lines[at[0]:]), lines)

    def test_missing_directory(self):
        missing = os.path.join(self.tmp.name, "does-not-exist")
        r = plot(missing)
        self.assertEqual(r.returncode, 2)
        self.assertIn(missing, r.stderr)
        self.assertEqual(r.stdout, "")

    def test_directory_without_results(self):
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        r = plot(empty)
        self.assertEqual(r.returncode, 2)
        self.assertIn("summary.json", r.stderr)
        self.assertIn("study.json", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(empty, "plots")))


if __name__ == "__main__":
    unittest.main()
