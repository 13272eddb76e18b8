#!/usr/bin/python3
"""The custom_model project's own test (docs/custom-models.md), run by its ctest against the
chens-custom executable it built from an installed chens:

  - the built-in models are still there (the default pendulum study runs);
  - the planar pendulum from V and phi gives the hand-written pendulum's statistics (energy
    error, |phi|, |psi| at every sample, relative 1e-9) for the same study;
  - the spherical pendulum's study runs, reports angular_momentum_error (RATTLE keeps it at
    round-off) and no linear momentum error; the triatomic molecule's study of two runs runs;
  - under mpirun (when present) two ranks give the one-process series.csv byte for byte;
  - bad input (an unknown parameter, dependent constraints) exits 2 and writes nothing.

Usage: test_custom_models.py CHENS_CUSTOM_BINARY PROJECT_DIR
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

chens, project = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(out, *args, ranks=1):
    cmd = [chens, "run", "--no-progress", "--out", out] + list(args)
    if ranks > 1:
        mpi = shutil.which("mpiexec") or shutil.which("mpirun")
        cmd = [mpi, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader", "-n", str(ranks)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def sets(*kv):
    out = ["--single"]
    for x in kv:
        out += ["--set", x]
    return out


def series(out):
    with open(os.path.join(out, "series.csv")) as f:
        return list(csv.DictReader(f))


with tempfile.TemporaryDirectory() as tmp:
    r = run(os.path.join(tmp, "default"), *sets("ensemble.size=100", "integrator.t_end=2"))
    check(r.returncode == 0, "the built-in pendulum runs in chens-custom: " + r.stderr[-300:])

    pend = ("model.mass=1.3", "model.length=0.8", "model.gravity=2.0", "model.initial=[0.8, 0, 0, -2]",
            "integrator.h=0.005", "integrator.t_end=5", "projection.momentum=true", "ensemble.size=500",
            "output.sample_dt=0.5")
    a = run(os.path.join(tmp, "ad"), *sets("model.kind=planar-pendulum", *pend))
    h = run(os.path.join(tmp, "hand"), *sets("model.kind=pendulum", "output.reference=none", *pend))
    check(a.returncode == 0 and h.returncode == 0, "planar-pendulum and pendulum run: " + a.stderr[-300:] + h.stderr[-300:])
    if a.returncode == 0 and h.returncode == 0:
        sa, sh = series(os.path.join(tmp, "ad")), series(os.path.join(tmp, "hand"))
        # Round-off apart: the same instances integrated by two codings of the same equations
        # (the energy error is ~1e-10 here, |phi| ~6e-12, |psi| ~1e-9).
        worst, bad = 0.0, []
        for ra, rh in zip(sa, sh):
            for col in ra:
                if col.split("_")[0] in ("energy", "phi", "psi") and ra[col] and rh.get(col):
                    x, y = float(ra[col]), float(rh[col])
                    worst = max(worst, abs(x - y))
                    if abs(x - y) > 1e-13 + 1e-6 * abs(y):
                        bad.append(f"{col} at t = {ra['t']}: {x} vs {y}")
        print(f"[ measured ] planar-pendulum vs pendulum: largest difference of the energy/phi/psi statistics over "
              f"{len(sa)} samples: {worst:.2e}")
        check(len(sa) == len(sh) and not bad, "planar-pendulum's statistics are the pendulum's " + "; ".join(bad[:3]))

    sp = os.path.join(tmp, "spherical")
    r = run(sp, os.path.join(project, "studies", "spherical_pendulum.toml"), "--set", "ensemble.size=500",
            "--set", "integrator.t_end=5")
    check(r.returncode == 0, "studies/spherical_pendulum.toml runs: " + r.stderr[-300:])
    rat = os.path.join(tmp, "spherical-rattle")
    r = run(rat, *sets("model.kind=spherical-pendulum", "integrator.method=rattle", "integrator.h=0.01",
                       "integrator.t_end=20", "ensemble.size=200", "ensemble.perturbation=1e-2"))
    check(r.returncode == 0, "spherical pendulum with RATTLE runs: " + r.stderr[-300:])
    if r.returncode == 0:
        j = json.load(open(os.path.join(rat, "summary.json")))
        check("angular_momentum_error" in j and "linear_momentum_error" not in j,
              "summary.json reports angular_momentum_error and no linear momentum error")
        lz = j.get("angular_momentum_error", {}).get("final_max", 1.0)
        print(f"[ measured ] spherical pendulum, RATTLE h = 0.01 to t = 20: max |L_z - L_z(0)| = {lz:.2e}")
        check(lz <= 1e-12, "RATTLE conserves L_z to round-off")
    tri = os.path.join(tmp, "triatomic")
    r = run(tri, os.path.join(project, "studies", "triatomic.toml"), "--set", "ensemble.size=100",
            "--set", "integrator.t_end=2")
    check(r.returncode == 0 and os.path.exists(os.path.join(tri, "comparison.csv")),
          "studies/triatomic.toml (two runs) runs: " + r.stderr[-300:])

    if shutil.which("mpiexec") or shutil.which("mpirun"):
        args = sets("model.kind=triatomic", "integrator.method=rattle", "integrator.t_end=1", "ensemble.size=300")
        one, two = os.path.join(tmp, "mpi1"), os.path.join(tmp, "mpi2")
        r1, r2 = run(one, *args), run(two, *args, ranks=2)
        same = r1.returncode == 0 and r2.returncode == 0 and \
            open(os.path.join(one, "series.csv")).read() == open(os.path.join(two, "series.csv")).read()
        check(same, "two MPI ranks give one process's series.csv byte for byte: " + r2.stderr[-300:])
    else:
        print("skip MPI: no mpiexec")

    for what, args, message in [
            ("unknown parameter", sets("model.kind=spherical-pendulum", "model.lenght=2"),
             "unknown key model.lenght (did you mean model.length?)"),
            ("another model's parameter", sets("model.kind=spherical-pendulum", "model.b12=2"),
             "model.b12 is not a parameter of model.kind = \"spherical-pendulum\"; its parameters: mass, length, gravity"),
            ("dependent constraints", sets("model.kind=triatomic", "model.b13=2"),
             "are dependent at the initial state: Q = J M^-1 J^T has condition number"),
            ("a method not built", sets("model.kind=spherical-pendulum", "integrator.method=gauss2"),
             "integrator.method = \"gauss2\": model.kind = \"spherical-pendulum\" is built with methods \"rk4\" "
             "(chens_add_model's METHODS)")]:
        out = os.path.join(tmp, "bad")
        r = run(out, *args)
        check(r.returncode == 2 and message in r.stderr and not os.path.exists(out),
              f"{what}: exit 2, the message, nothing written (exit {r.returncode}: {r.stderr.strip()[-200:]})")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("custom models: all checks passed")
