#!/usr/bin/python3
"""chens run under mpirun (docs/scaling.md): the ensemble split over 2 ranks and over 3
(an uneven split, --oversubscribe) gives the one-process result bit for bit: series.csv,
trajectory.csv, periodogram.csv, summary.json (but for timing and device fields) and every
array of states.h5; a study of several runs likewise; a recorded instance on the last rank
only; one block per rank at least; a rank that fails stops the job, names itself and leaves
no result.

Usage: test_mpi_sharding.py CHENS_BINARY MPIEXEC
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from run_outputs import states_h5_differences, summary_without_timing  # noqa: E402

chens, mpiexec = sys.argv[1], sys.argv[2]
MPI = [mpiexec, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(ranks, out, *args, env=None):
    cmd = ([chens] if ranks == 1 else MPI + ["-n", str(ranks), chens]) + ["run", "--no-progress", "--out", out] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def sets(*kv):
    out = ["--single"]  # one run from the defaults, not the built-in default study
    for x in kv:
        out += ["--set", x]
    return out


def same_summary(a, b):
    return summary_without_timing(a) == summary_without_timing(b)


def same_file(a, b, name):
    pa, pb = os.path.join(a, name), os.path.join(b, name)
    return os.path.exists(pa) and open(pa, "rb").read() == open(pb, "rb").read()


def same_h5(a, b):
    differs, datasets = states_h5_differences(a, b)
    if differs:
        print("  states.h5 differs in", differs)
    return differs is None and datasets > 10


with tempfile.TemporaryDirectory() as tmp:
    pendulum = sets("ensemble.size=1000", "ensemble.perturbation=1e-3", "integrator.t_end=5", "integrator.h=0.05",
                    "projection.momentum=true", "projection.tol=1e-9", "integrator.formulation=naive",
                    "output.sample_dt=0.25", "output.states=true", "output.record=[0, 63, 64, 500, 999]",
                    "output.trajectory=true", "output.periodogram=y",
                    # issue 22: first-passage times, per instance and tallied over the block tree
                    "first_passage.energy_error=1e-7", "first_passage.phi=1e-6",
                    "first_passage.integration_error=1e-3", "first_passage.lost=true")
    one = os.path.join(tmp, "one")
    p = run(1, one, *pendulum)
    check(p.returncode == 0, "one process: exit 0 " + p.stderr)
    for ranks in (2, 3):
        d = os.path.join(tmp, "n%d" % ranks)
        p = run(ranks, d, *pendulum)
        check(p.returncode == 0, "%d ranks: exit 0 %s" % (ranks, p.stderr[-2000:]))
        for f in ("series.csv", "trajectory.csv", "periodogram.csv"):
            check(same_file(one, d, f), "%d ranks: %s identical to one process" % (ranks, f))
        check(same_summary(one, d), "%d ranks: summary.json identical but for timing and device" % ranks)
        check(same_h5(one, d), "%d ranks: every array of states.h5 identical" % ranks)
        dev = json.load(open(os.path.join(d, "summary.json")))["device"]
        check(dev.startswith("%d MPI ranks" % ranks), "%d ranks: summary.json names the ranks (%s)" % (ranks, dev))

    # Only the last instance recorded, on the last rank: the recorded sample times are that
    # rank's (rank 0 records nothing and sets none).
    last = sets("ensemble.size=1000", "integrator.t_end=5", "output.sample_dt=0.5", "output.states=true",
                "output.record=[999]")
    l1, l2 = os.path.join(tmp, "last1"), os.path.join(tmp, "last2")
    run(1, l1, *last)
    p = run(2, l2, *last)
    check(p.returncode == 0 and same_summary(l1, l2) and same_h5(l1, l2),
          "only instance 999 recorded, 2 ranks: states.h5 identical " + p.stderr[-500:])

    # A chain with the numerical reference (adaptive, advancing with each instance).
    chain = sets("model.kind=chain", "ensemble.size=300", "integrator.t_end=2", "output.sample_dt=0.5",
                 "output.reference=auto", "ensemble.perturbation=1e-4", "first_passage.energy_error=1e-10",
                 "first_passage.angular_momentum_error=1e-13")
    c1, c2 = os.path.join(tmp, "chain1"), os.path.join(tmp, "chain2")
    run(1, c1, *chain)
    p = run(2, c2, *chain)
    check(p.returncode == 0 and same_file(c1, c2, "series.csv") and same_summary(c1, c2),
          "chain, 2 ranks: series.csv and summary.json identical " + p.stderr[-500:])

    # A parameter ensemble (issue 22): every instance's length, mass and step size from its
    # index alone, whichever rank runs it; states.h5 holds each instance's values. Its
    # statistics grouped by length (four bins, each with its first passages) are reduced
    # along the same block tree on every rank.
    params = sets("ensemble.size=400", "ensemble.perturbation=1e-3", "integrator.t_end=4", "output.sample_dt=0.5",
                  "output.states=true", "projection.momentum=true", "parameters.length=\"normal(1, 0.05)\"",
                  "parameters.mass=\"log-uniform(0.5, 2)\"", "parameters.h=[0.1, 0.05, 0.025]",
                  "parameters.group_by=\"length\"", "parameters.group_edges=[0.5, 0.95, 1, 1.05, 1.5]",
                  "first_passage.energy_error=1e-9")
    q1, q3 = os.path.join(tmp, "params1"), os.path.join(tmp, "params3")
    p = run(1, q1, *params)
    check(p.returncode == 0, "parameter ensemble, one process: exit 0 " + p.stderr[-500:])
    p = run(3, q3, *params)
    check(p.returncode == 0 and same_file(q1, q3, "series.csv") and same_summary(q1, q3) and same_h5(q1, q3),
          "parameter ensemble, 3 ranks: series.csv, summary.json and states.h5 identical " + p.stderr[-500:])

    # The Lyapunov spectrum (issue 43; its system compiled on first use, by rank 0 while the
    # others wait): the ensemble's and each group's exponents reduced along the block tree, and
    # each kept instance's in states.h5, over 300 instances (several blocks) on 2 ranks.
    spectrum = sets("ensemble.size=300", "ensemble.perturbation=1e-2", "integrator.t_end=5", "integrator.h=0.02",
                    "integrator.formulation=dirac", "integrator.method=rk4", "output.sample_dt=1",
                    "output.states=true", "output.lyapunov_spectrum=true", "parameters.length=\"uniform(0.5, 2)\"",
                    "parameters.group_by=\"length\"", "parameters.group_bins=3")
    y1, y2 = os.path.join(tmp, "spectrum1"), os.path.join(tmp, "spectrum2")
    p = run(1, y1, *spectrum)
    check(p.returncode == 0, "spectrum, one process: exit 0 " + p.stderr[-500:])
    p = run(2, y2, *spectrum)
    ok = p.returncode == 0 and same_summary(y1, y2) and same_h5(y1, y2)
    groups = json.load(open(os.path.join(y1, "summary.json"))).get("groups", {}).get("groups", []) if ok else []
    check(ok and len(groups) == 3 and all("lyapunov_spectrum" in g for g in groups),
          "spectrum with groups, 2 ranks: summary.json and states.h5 identical " + p.stderr[-500:])

    # A study of several runs: every run sharded, rank 0 writes the index.
    study = os.path.join(tmp, "sweep.toml")
    with open(study, "w") as f:
        f.write("[integrator]\nt_end = 3.0\n[ensemble]\nsize = 500\n[output]\nsample_dt = 0.5\n"
                "[sweep]\nintegrator.formulation = [\"naive\", \"dirac\"]\n")
    s1, s3 = os.path.join(tmp, "sweep1"), os.path.join(tmp, "sweep3")
    subprocess.run([chens, "run", study, "--out", s1, "--no-progress"], capture_output=True)
    p = subprocess.run(MPI + ["-n", "3", chens, "run", study, "--out", s3, "--no-progress"], capture_output=True,
                       text=True, timeout=600)
    ok = p.returncode == 0 and json.load(open(os.path.join(s3, "study.json")))["complete"]
    for run_dir in ("formulation=naive", "formulation=dirac"):
        ok = ok and same_file(os.path.join(s1, run_dir), os.path.join(s3, run_dir), "series.csv")
    check(ok, "study of two runs on 3 ranks: complete, series.csv identical " + p.stderr[-500:])
    # The cost comparison's cost_seconds (docs/study-format.md): the steps of every rank at
    # the median pace, over the threads of every rank (it was over rank 0's alone, 3 times
    # too long). The digest's against summary.json's median and the device's thread count.
    if ok:
        for e in json.load(open(os.path.join(s3, "study.json")))["runs"]:
            d = e["results"]
            summary = json.load(open(os.path.join(s3, e["name"], "summary.json")))
            threads = re.search(r"rank 0: CPU, (\d+) OpenMP thread", summary["device"])
            if "(GPU each)" in summary["device"]:
                # No per-step pace on a GPU (its steps are not timed one by one): no cost_seconds,
                # and the comparison falls back to the integration time.
                check(d.get("cost_seconds") is None and not summary.get("step_cost"),
                      "3 ranks on GPUs, %s: no cost_seconds (%s)" % (e["name"], d.get("cost_seconds")))
                continue
            expected = (summary["step_cost"]["median_seconds"] * d["steps"] / (3 * int(threads.group(1)))
                        if threads and summary.get("step_cost") else None)
            check(expected is not None and d.get("cost_seconds") is not None
                  and abs(d["cost_seconds"] - expected) <= 1e-9 * expected,
                  "3 ranks, %s: cost_seconds %s = median pace x steps / every rank's threads %s"
                  % (e["name"], d.get("cost_seconds"), expected))

    # Fewer blocks than ranks: refused before anything runs.
    small = os.path.join(tmp, "small")
    p = run(2, small, *sets("ensemble.size=64"))
    check(p.returncode != 0 and "fewer than the 2 MPI ranks" in p.stderr and not os.path.exists(small),
          "64 instances on 2 ranks refused: " + p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "no message")

    # A failing rank stops the job, names itself, and nothing is written.
    bad = os.path.join(tmp, "bad")
    env = dict(os.environ, CHENS_TEST_FAIL_RANK="1")
    p = run(2, bad, *sets("ensemble.size=1000", "integrator.t_end=5"), env=env)
    check(p.returncode != 0, "failing rank: non-zero exit (%d)" % p.returncode)
    check("rank 1 of 2 failed: injected failure" in p.stderr, "failing rank: the message names rank 1")
    check(not os.path.exists(os.path.join(bad, "summary.json")) and not os.path.exists(os.path.join(bad, "series.csv")),
          "failing rank: no result written")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("MPI sharding: all checks passed")
