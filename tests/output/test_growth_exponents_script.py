#!/usr/bin/python3
"""scripts/growth_exponents.py on synthetic series.csv files: the exponent of a power law,
and the exponents withheld as chens withholds them (docs/study-format.md, "Growth
exponents"), with the limits read from summary.json beside series.csv."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "growth_exponents.py")

T = [0.5 * k for k in range(201)]
SERIES = {
    "power": lambda t: 1e-8 * t * t,
    "rounding": lambda t: 1e-16 * t ** 0.5,
    "diverged": lambda t: 1e-6 * t ** 10,
    "stops": lambda t: min(1e-6 * t * t, 1e-3),
}


def write_series(directory, summary=None):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "series.csv"), "w") as f:
        f.write("t,live," + ",".join(m + "_max" for m in SERIES) + "\n")
        for t in T:
            f.write("%r,10,%s\n" % (t, ",".join("%.17g" % g(t) for g in SERIES.values())))
    if summary is not None:
        with open(os.path.join(directory, "summary.json"), "w") as f:
            json.dump(summary, f)
    return os.path.join(directory, "series.csv")


def lines(*args):
    r = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {line.split()[0]: line for line in r.stdout.splitlines()}


class GrowthExponentsScript(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="chens-growth-test-")
        cls.plain = write_series(os.path.join(cls.tmp.name, "plain"))
        cls.big = write_series(os.path.join(cls.tmp.name, "big"), {
            "study": {"model": {"initial": [0.0, -4.0, 3.0, 0.0]}, "integrator": {"precision": "float"}}})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_power_law_gives_its_exponent(self):
        self.assertEqual(lines(self.plain)["power"], "power                      2.00  (181 points, value at end 1.000e-04)")

    def test_withheld_with_reasons(self):
        out = lines(self.plain)
        self.assertIn("withheld: at rounding level (max 1e-15 <= 2.22e-13)", out["rounding"])
        self.assertIn("withheld: saturated (max 1e+14 >= 0.5)", out["diverged"])
        self.assertIn("withheld: growth stops within the window (slope 2 over t in [10, 31.6], ", out["stops"])
        self.assertTrue(out["rounding"].split()[1] == "n/a", out["rounding"])

    def test_limits_from_summary_json(self):
        # S = 4, float: rounding below 4000 x 2^-23 = 4.77e-4 (1e-4 is rounding), saturation at 2.
        out = lines(self.big)
        self.assertIn("withheld: at rounding level (max 0.0001 <= 0.000477)", out["power"])
        self.assertIn("withheld: saturated (max 1e+14 >= 2)", out["diverged"])
        # --precision overrides summary.json's: in double, 1e-4 is no round-off.
        self.assertEqual(lines(self.big, "--precision", "double", "--metric", "power")["power"].split()[1], "2.00")

    def test_no_limits_reports_every_fit(self):
        out = lines(self.plain, "--no-limits")
        self.assertEqual(out["rounding"].split()[1], "0.50")
        self.assertEqual(out["diverged"].split()[1], "10.00")


if __name__ == "__main__":
    unittest.main()
