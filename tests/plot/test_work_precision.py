#!/usr/bin/python3
"""Tests of python/chens/work_precision.py (issue 43: the work-precision table of `chens plot`
and of StudyResult.work_precision / cheapest_at) on synthetic comparison.csv text.

  /usr/bin/python3 tests/plot/test_work_precision.py [-v]

The curves are power laws, error = C cost^-p, on which interpolation linear in log cost
against log error is exact: the cost at which a curve reaches an error is then known in
closed form, cost = c0 (e0 / error)^(1/p), and the tests compare with it. Standard library
unittest only.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "chens"))
import work_precision as wp  # noqa: E402

HEADER = ("run,integrator.h,integrator.method,formulation,method,h,instances,lost,live_final,steps,rhs_evals,"
          "reference_rhs_evals,projections,wall_s,integrate_s,measure_s,cost_s,integration_error_p50,"
          "integration_error_max,energy_error_p50,energy_error_max,model.kind")

# Curve A (rk4): error = 1e-2 (c / 100)^-4 at c = 100, 200, 400 (integrate_s and rhs_evals
# alike, in units of 1e-5 s and evaluations); curve B (rk2): error = 1e-1 (c / 50)^-2 at
# c = 50, 100, 200, 400.
A = [(100.0, 4), (200.0, 4), (400.0, 4)]
B = [(50.0, 2), (100.0, 2), (200.0, 2), (400.0, 2)]


def error_a(c):
    return 1e-2 * (c / 100.0) ** -4


def error_b(c):
    return 1e-1 * (c / 50.0) ** -2


def row(name, h, method, cost, error, instances=100, live=100, integrate_s=None, wall_s=None, energy=None):
    integrate_s = cost * 1e-5 if integrate_s is None else integrate_s
    wall_s = 2 * cost * 1e-5 if wall_s is None else wall_s
    energy = error / 10 if energy is None else energy
    return ",".join(str(v) for v in (
        name, h, method, "dirac", method, h, instances, instances - live, live, int(cost), int(cost), 0, 0,
        repr(wall_s), repr(integrate_s), 0.0, repr(integrate_s), repr(error), repr(2 * error), repr(energy),
        repr(2 * energy), "pendulum"))


def study(extra_rows=()):
    rows = [row("a%d" % i, 0.1 / 2 ** i, "rk4", c, error_a(c)) for i, (c, _) in enumerate(A)]
    rows += [row("b%d" % i, 0.1 / 2 ** i, "rk2", c, error_b(c)) for i, (c, _) in enumerate(B)]
    return "\n".join([HEADER] + rows + list(extra_rows)) + "\n"


class WorkPrecisionTest(unittest.TestCase):
    def test_table_has_a_row_per_run_with_its_curve_and_costs(self):
        columns, rows = wp.table(study())
        self.assertEqual([r["run"] for r in rows], ["a0", "a1", "a2", "b0", "b1", "b2", "b3"])
        self.assertEqual(columns[:3], ["run", "integrator.h", "integrator.method"])
        self.assertEqual({r["curve"] for r in rows}, {"method=rk4", "method=rk2"})
        a1 = rows[1]
        self.assertEqual(a1["integration_error_p50"], error_a(200.0))
        self.assertEqual(a1["integration_error_max"], 2 * error_a(200.0))
        self.assertEqual(a1["rhs_evals"], 200)
        self.assertAlmostEqual(a1["integration_seconds"], 200e-5, delta=1e-18)
        self.assertEqual(a1["seconds_from"], "integrate_s")
        self.assertTrue(all(r["usable"] for r in rows))

    def test_interpolated_cost_is_the_power_laws_own(self):
        _, rows = wp.table(study())
        for error in (5e-3, 2e-3, 1e-4, 2e-5):
            found = {x["curve"]: x for x in wp.cheapest_at(rows, error, "integration_error_p50", "rhs_evals")}
            # A: c = 100 (1e-2 / error)^(1/4), within its runs' range [100, 400].
            expected_a = 100.0 * (1e-2 / error) ** 0.25
            if expected_a <= 400.0:
                self.assertEqual(found["method=rk4"]["bound"], "=")
                self.assertAlmostEqual(found["method=rk4"]["cost"], expected_a, delta=1e-9 * expected_a)
            else:
                self.assertIsNone(found["method=rk4"]["cost"])
            expected_b = 50.0 * (1e-1 / error) ** 0.5
            if expected_b <= 400.0:
                self.assertAlmostEqual(found["method=rk2"]["cost"], expected_b, delta=1e-9 * expected_b)
            else:
                self.assertIsNone(found["method=rk2"]["cost"], error)
                self.assertEqual(found["method=rk2"]["bound"], "")

    def test_the_cheapest_curve_at_each_error(self):
        _, rows = wp.table(study())
        # 5e-3: A at 100 * 2^(1/4) = 118.9, B at 50 * sqrt(20) = 223.6: A.
        order = wp.cheapest_at(rows, 5e-3, "integration_error_p50", "rhs_evals")
        self.assertEqual([x["curve"] for x in order], ["method=rk4", "method=rk2"])
        self.assertTrue(order[0]["cheapest"])
        self.assertFalse(order[1]["cheapest"])
        self.assertEqual(order[0]["runs"], "a0 .. a1")
        # 0.5: every run of both is below it; the cheapest runs are B's 50 and A's 100, "<=".
        order = wp.cheapest_at(rows, 0.5, "integration_error_p50", "rhs_evals")
        self.assertEqual([(x["curve"], x["cost"], x["bound"]) for x in order],
                         [("method=rk2", 50.0, "<="), ("method=rk4", 100.0, "<=")])
        # 1e-6: neither reaches it.
        order = wp.cheapest_at(rows, 1e-6, "integration_error_p50", "rhs_evals")
        self.assertTrue(all(x["cost"] is None and not x["cheapest"] for x in order))

    def test_seconds_read_the_same_as_evaluations_when_proportional(self):
        _, rows = wp.table(study())
        by_s = wp.cheapest_at(rows, 2e-3, "integration_error_p50", "integration_seconds")
        by_n = wp.cheapest_at(rows, 2e-3, "integration_error_p50", "rhs_evals")
        for s, n in zip(by_s, by_n):
            self.assertEqual(s["curve"], n["curve"])
            self.assertAlmostEqual(s["cost"], n["cost"] * 1e-5, delta=1e-12 * n["cost"])

    def test_a_run_of_few_survivors_is_left_out_and_said_so(self):
        # A fourth rk4 run with 10 of 100 live and an error that would bend the curve.
        text = study([row("a3", 0.0125, "rk4", 800.0, 1e-1, live=10)])
        _, rows = wp.table(text)
        a3 = rows[-1]
        self.assertFalse(a3["usable"])
        self.assertEqual(a3["left_out"], "10/100 live at t_final, below 0.5")
        by_curve, left_out = wp.curves(rows, "integration_error_p50", "rhs_evals")
        self.assertEqual([run for _, _, run in by_curve["method=rk4"]], ["a0", "a1", "a2"])
        self.assertEqual(left_out, [("a3", "10/100 live at t_final, below 0.5")])
        # min_live = 0.05 keeps it.
        _, rows = wp.table(text, min_live=0.05)
        self.assertTrue(rows[-1]["usable"])

    def test_zero_and_non_finite_errors_are_left_out(self):
        text = study([row("a3", 0.0125, "rk4", 800.0, 0.0), row("a4", 0.00625, "rk4", 1600.0, float("nan"))])
        _, rows = wp.table(text)
        _, left_out = wp.curves(rows, "integration_error_p50", "rhs_evals")
        self.assertEqual(left_out, [("a3", "integration_error_p50 is 0"), ("a4", "integration_error_p50 is not finite")])

    def test_wall_seconds_where_the_integration_is_not_timed(self):
        text = study([row("a3", 0.0125, "rk4", 800.0, error_a(800.0), integrate_s=float("nan"), wall_s=0.5)])
        _, rows = wp.table(text)
        self.assertEqual(rows[-1]["seconds_from"], "wall_s")
        self.assertEqual(rows[-1]["integration_seconds"], 0.5)
        self.assertIn("* wall_s", "\n".join(wp.summary_lines(rows, "integration_error_p50")))

    def test_a_study_without_a_step_size_or_tolerance_varied_is_refused(self):
        text = "\n".join([HEADER.replace("integrator.h,", ""),
                          ",".join(row("a", 0.1, "rk4", 100.0, 1e-3).split(",")[:1] +
                                   row("a", 0.1, "rk4", 100.0, 1e-3).split(",")[2:])]) + "\n"
        with self.assertRaises(ValueError) as e:
            wp.table(text)
        self.assertIn("integrator.h", str(e.exception))
        self.assertIn("this study's runs vary integrator.method", str(e.exception))

    def test_bad_arguments_are_refused(self):
        _, rows = wp.table(study())
        for args in ((0.0,), (-1.0,), (float("inf"),), (1e-3, "phi_p50"), (1e-3, "integration_error_p50", "wall")):
            with self.assertRaises(ValueError):
                wp.cheapest_at(rows, *args)

    def test_levels_are_the_decades_of_the_errors(self):
        _, rows = wp.table(study())
        # Errors from 1e-2 (400/100)^-4 = 3.9e-5 to 1e-1: decades 1e-1 .. 1e-4.
        self.assertEqual(wp.levels(rows, "integration_error_p50", "rhs_evals"), [1e-1, 1e-2, 1e-3, 1e-4])
        self.assertEqual(wp.levels(rows, "integration_error_p50", "rhs_evals", most=2), [1e-1, 1e-3])

    def test_summary_table_names_the_cheapest_at_each_level(self):
        _, rows = wp.table(study())
        lines = wp.summary_lines(rows, "integration_error_p50")
        text = "\n".join(lines)
        self.assertIn("rhs evaluations are the noise-free cost", text)
        rows_at = {line.split()[0]: line.split() for line in lines if line.startswith("    1e-")}
        # 1e-3 by rhs evaluations (the table's second block overwrites the first's row):
        # A at 100 * 10^(1/4) = 177.8, B at 50 * 10 = 500 > 400: not reached.
        self.assertEqual(rows_at["1e-03"][1:], ["178", "-", "method=rk4"])
        # 1e-1: B's cheapest run is at it (<= 50), A's at 100.
        self.assertEqual(rows_at["1e-01"][1:], ["<=100", "<=50", "method=rk2"])


class WorkPrecisionFigureTest(unittest.TestCase):
    def test_no_figure_where_no_run_has_a_finite_error(self):
        # Every run lost: nothing to draw (plot_study.py skips the figure); the table still
        # lists the runs, with no level to compare at.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
        import plot_study

        nan = float("nan")
        text = "\n".join([HEADER] + [row("a%d" % i, 0.1 / 2 ** i, "rk4", c, nan, energy=nan)
                                      for i, (c, _) in enumerate(A)]) + "\n"
        _, rows = wp.table(text)
        self.assertIsNone(plot_study.draw_work_precision(wp, rows))
        lines = wp.summary_lines(rows, "energy_error_p50")
        self.assertIn("  cheapest by rhs_evals: no usable point of energy_error_p50", lines)


if __name__ == "__main__":
    unittest.main()
