#!/usr/bin/python3
"""states.h5 read back with h5py (docs/study-format.md, "states.h5"): shapes, names and
every number checked against what the same run wrote elsewhere (summary.json, series.csv,
trajectory.csv) or against what the study says (initial data, constraints, perturbation).

Needs Debian's python3-h5py, python3-numpy and python3-pandas.

Usage: test_states_h5.py CHENS_BINARY
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pandas as pd

chens = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(out, *sets):
    args = [chens, "run", "--single", "--no-progress", "--out", out]
    for s in sets:
        args += ["--set", s]
    return subprocess.run(args, capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "run")
    n, delta, recorded = 200, 1e-3, [0, 7, 64, 199]
    p = run(out, f"ensemble.size={n}", "ensemble.seed=11", f"ensemble.perturbation={delta}", "integrator.h=0.05",
            "integrator.t_end=5", "output.sample_dt=0.25", "projection.momentum=true", "projection.tol=1e-9",
            "integrator.formulation=naive", "output.states=true", "output.trajectory=true",
            "output.record=[" + ", ".join(map(str, recorded)) + "]")
    check(p.returncode == 0, f"chens run exits 0 (got {p.returncode}: {p.stderr})")
    summary = json.load(open(os.path.join(out, "summary.json")))
    series = list(csv.DictReader(open(os.path.join(out, "series.csv"))))
    traj = list(csv.DictReader(open(os.path.join(out, "trajectory.csv"))))
    check("states.h5" in summary["files"], "summary.json lists states.h5")
    f = h5py.File(os.path.join(out, "states.h5"), "r")

    names = f.attrs["state_names"].split(",")
    metrics = f.attrs["metric_names"].split(",")
    check(names == ["x", "y", "px", "py"], f"state names {names}")
    check(metrics == ["integration_error", "energy_error", "phi", "psi"], f"metric names {metrics}")
    check(json.loads(f.attrs["study"])["ensemble"]["size"] == n, "the study attribute is the run's study")

    ins = f["instances"]
    for d in ["initial_state", "initial_physical", "final_state", "final_physical"]:
        check(ins[d].shape == (n, 4), f"{d} shape {ins[d].shape}")
        check(ins[d].attrs["columns"] == "x,y,px,py", f"{d} columns")
    check(ins["final_metrics"].shape == (n, 4), "final_metrics shape")
    x0 = ins["initial_state"][:]
    # Instance 0 is the nominal initial data, exactly; the others are perturbed by at most
    # delta per component before the projection back onto the manifold, and lie on it.
    check(np.array_equal(x0[0], [1.0, 0.0, 0.0, -2.0]), f"instance 0 starts at the nominal data: {x0[0]}")
    dev = np.abs(x0[1:] - x0[0]).max(axis=1)
    check(dev.max() <= 4 * delta and dev.min() > 0, f"perturbations within 4 delta and non-zero: {dev.min()} .. {dev.max()}")
    phi = np.abs((x0[:, 0] ** 2 + x0[:, 1] ** 2 - 1) / 2)
    psi = np.abs(x0[:, 0] * x0[:, 2] + x0[:, 1] * x0[:, 3])
    check(phi.max() < 1e-14 and psi.max() < 1e-13, f"initial states on the manifold: {phi.max()}, {psi.max()}")
    check(len(np.unique(x0, axis=0)) == n, "every instance starts elsewhere")

    # Final state of instance 0 = summary.json's; counters sum to summary.json's totals.
    check(np.array_equal(ins["final_physical"][0], summary["instance0"]["final_state"]), "instance 0's final state")
    c = ins["counters"]
    check(int(c["steps"][:].sum()) == summary["steps"], "steps sum to summary.json's")
    check(int(c["rhs_evaluations"][:].sum()) == summary["rhs_evaluations"], "rhs evaluations sum")
    check(int(c["momentum_projections"][:].sum()) == summary["projections"]["momentum"] > 0, "momentum projections sum")
    check(np.all(c["steps"][:] == 100), "every instance took t_end / h = 100 steps")
    check(np.all(ins["lost"][:] == 0), "no instance lost")

    # Final metrics: their max and mean are summary.json's final statistics; their median is
    # in the histogram bin of summary.json's p50 (quantiles.hpp: within 2^(1/8)).
    fm = ins["final_metrics"][:]
    for j, m in enumerate(metrics):
        col = fm[:, j]
        check(col.max() == summary[m]["final_max"], f"{m}: max {col.max()} vs {summary[m]['final_max']}")
        check(math.isclose(col.mean(), summary[m]["final_mean"], rel_tol=1e-12, abs_tol=1e-300),
              f"{m}: mean {col.mean()} vs {summary[m]['final_mean']}")
        med = np.sort(col)[(n + 1) // 2 - 1]  # nearest rank, as quantiles.hpp
        q = summary[m]["final_p50"]
        check(med == q == 0 or (med > 0 and max(med, q) <= 2 ** 0.125 * min(med, q) * (1 + 1e-12)),
              f"{m}: median {med} vs p50 {q}")

    # Trajectories: sample times are series.csv's; instance 0 is trajectory.csv; every
    # recorded instance starts at its initial state and ends at its final state, exactly.
    tr = f["trajectories"]
    K = len(series)
    check(list(tr["instances"][:]) == recorded, f"recorded instances {list(tr['instances'][:])}")
    check(tr["state"].shape == (len(recorded), K, 4), f"trajectory shape {tr['state'].shape}")
    check(np.array_equal(tr["t"][:], [float(r["t"]) for r in series]), "sample times = series.csv's")
    t0 = np.array([[float(r[k]) for k in ["x", "y", "px", "py"]] for r in traj])
    t0_ref = np.array([[float(r[k + "_ref"]) for k in ["x", "y", "px", "py"]] for r in traj])
    check(np.array_equal(tr["state"][0], t0), "instance 0's trajectory = trajectory.csv")
    check(np.array_equal(tr["reference"][0], t0_ref), "instance 0's reference = trajectory.csv's *_ref")
    for r, i in enumerate(recorded):
        check(np.array_equal(tr["state"][r, 0], ins["initial_physical"][i]), f"instance {i} starts at its initial state")
        check(np.array_equal(tr["state"][r, -1], ins["final_physical"][i]), f"instance {i} ends at its final state")
        check(np.array_equal(tr["metrics"][r, -1], fm[i]), f"instance {i}'s last metrics = final_metrics")
        # The integration error is the distance to the reference state (metrics.hpp: Euclidean norm).
        d = np.linalg.norm(tr["state"][r] - tr["reference"][r], axis=1)
        check(np.allclose(d, tr["metrics"][r, :, 0], rtol=1e-12, atol=1e-15), f"instance {i}: error = |state - reference|")
    check(np.all(tr["measured"][:] == 1), "every recorded sample measured")
    # The ensemble maximum of every metric bounds each recorded instance's, at every sample.
    for j, m in enumerate(metrics):
        mx = np.array([float(r[m + "_max"]) for r in series])
        check(np.all(tr["metrics"][:, :, j] <= mx), f"{m}: recorded instances within the ensemble max")

    # pandas reads the CSV files and the HDF5 tables as docs/study-format.md shows.
    df = pd.read_csv(os.path.join(out, "series.csv"))
    check(len(df) == K and df["energy_error_p50"].iloc[-1] == summary["energy_error"]["final_p50"],
          "pandas reads series.csv")
    final = pd.DataFrame(f["instances/final_metrics"][:], columns=f.attrs["metric_names"].split(","))
    check(final["energy_error"].max() == summary["energy_error"]["final_max"], "pandas DataFrame of final_metrics")

    # Without output.states and output.record there is no states.h5.
    out2 = os.path.join(tmp, "plain")
    p = run(out2, "ensemble.size=10", "integrator.t_end=1")
    check(p.returncode == 0 and not os.path.exists(os.path.join(out2, "states.h5")), "no states.h5 unless asked for")
    # Only trajectories (output.record alone): /trajectories without /instances.
    out3 = os.path.join(tmp, "rec")
    p = run(out3, "ensemble.size=10", "integrator.t_end=1", "output.record=[2]")
    g = h5py.File(os.path.join(out3, "states.h5"), "r")
    check(p.returncode == 0 and "instances" not in g and list(g["trajectories/instances"][:]) == [2],
          "output.record alone writes /trajectories only")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("states.h5: all checks passed")
