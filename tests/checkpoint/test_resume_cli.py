#!/usr/bin/python3
"""chens run interrupted and resumed (docs/checkpoints.md), end to end: a run stopped by
SIGINT, by SIGTERM, by SIGKILL after a checkpoint, and twice in a row, each resumed with
`chens run --resume DIR`, writes exactly the files of an uninterrupted run: series.csv,
trajectory.csv, periodogram.csv byte for byte, summary.json but for timing, every array of
states.h5. A study of two runs resumes its interrupted run and keeps the complete one. A
damaged, truncated or foreign checkpoint and a changed resume.json are refused (exit 2,
the file named, nothing written), and so are the misuses of --resume.

The backend is chens's choice (auto): the CPU here, the GPU on a machine with one
(scripts/gpu-run.sh runs this file there).

Usage: test_resume_cli.py CHENS_BINARY [HDF5: 1 or 0] [LONG_SIZE]
LONG_SIZE (default 20000): instances of the run that is signalled mid-way; on a GPU it must be
large enough for the run to last a second or more (scripts/gpu-run.sh gives 2000000).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

chens = sys.argv[1]
hdf5 = len(sys.argv) > 2 and sys.argv[2] == "1"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from run_outputs import leftovers, no_result, same_outputs, wait_for  # noqa: E402
long_size = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sets(*kv):
    out = []
    for x in kv:
        out += ["--set", x]
    return out


# --single: one run from the defaults, not the built-in default study.
STUDY = ["--single"] + sets("ensemble.size=2000", "ensemble.perturbation=1e-3", "integrator.t_end=100", "integrator.h=0.05",
             "integrator.formulation=naive", "output.sample_dt=0.5", "output.record=[0, 63, 64, 1999]",
             "output.trajectory=true", "output.periodogram=y", "projection.momentum=true", "projection.tol=1e-9")
if hdf5:
    STUDY += sets("output.states=true")
# About 2 s on one core of the development machine: long enough to signal mid-run.
LONG = ["--single"] + sets("ensemble.size=%d" % long_size, "integrator.t_end=100", "integrator.h=0.01", "output.sample_dt=0.5",
            "output.record=[0, %d]" % (long_size - 1), "output.trajectory=true")


def run(out, *args, env=None, **kw):
    cmd = [chens, "run", "--no-progress"] + (["--out", out] if out else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, **kw)


def resume(d, *args):
    return subprocess.run([chens, "run", "--no-progress", "--resume", d] + list(args), capture_output=True, text=True,
                          timeout=600)


def interrupted_env(at):
    return dict(os.environ, CHENS_TEST_INTERRUPT_AT=str(at))


with tempfile.TemporaryDirectory() as tmp:
    ref = os.path.join(tmp, "ref")
    p = run(ref, *STUDY)
    check(p.returncode == 0, "uninterrupted run: exit 0 " + p.stderr[-500:])
    check(leftovers(ref) == [], "uninterrupted run: no checkpoint or resume.json left")

    # Interrupted (the SIGINT path, at a fixed sample), then resumed.
    d = os.path.join(tmp, "once")
    p = run(d, *STUDY, env=interrupted_env(80))
    check(p.returncode == 130, "interrupted: exit 130 (%d) %s" % (p.returncode, p.stderr[-300:]))
    check("continue with: chens run --resume " + d in p.stderr, "interrupted: the message says how to resume")
    check(no_result(d) and leftovers(d) == ["checkpoint.chk", "resume.json"],
          "interrupted: checkpoint and resume.json, no result files")
    p2 = run(d, *STUDY)
    check(p2.returncode == 2 and "--resume" in p2.stderr and no_result(d),
          "a new run into the interrupted directory is refused and points to --resume")
    p = resume(d)
    check(p.returncode == 0, "resumed: exit 0 " + p.stderr[-300:])
    check("resuming " + d in p.stderr, "resumed: says where it resumes from (stderr: status)")
    check(same_outputs(ref, d), "resumed once: every output identical to the uninterrupted run")
    check(leftovers(d) == [], "resumed: checkpoint and resume.json removed")
    p = resume(d)
    check(p.returncode == 2 and "complete, nothing to resume" in p.stderr, "resuming a complete run is refused")

    # Twice.
    d = os.path.join(tmp, "twice")
    p = run(d, *STUDY, env=interrupted_env(30))
    p2 = subprocess.run([chens, "run", "--no-progress", "--resume", d], capture_output=True, text=True,
                        env=interrupted_env(150))
    p3 = resume(d)
    check(p.returncode == 130 and p2.returncode == 130 and p3.returncode == 0,
          "interrupted twice, resumed twice (%d, %d, %d)" % (p.returncode, p2.returncode, p3.returncode))
    check(same_outputs(ref, d), "resumed twice: every output identical")

    # Damaged, truncated, foreign checkpoints and a changed resume.json: refused, named,
    # nothing written, the checkpoint kept.
    d = os.path.join(tmp, "bad")
    run(d, *STUDY, env=interrupted_env(80))
    ck = os.path.join(d, "checkpoint.chk")
    good = open(ck, "rb").read()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0x01
    open(ck, "wb").write(bytes(bad))
    p = resume(d)
    check(p.returncode == 2 and "damaged" in p.stderr and ck in p.stderr and no_result(d),
          "damaged checkpoint refused: " + p.stderr.strip()[-200:])
    open(ck, "wb").write(good[: len(good) // 3])
    p = resume(d)
    check(p.returncode == 2 and "cut short" in p.stderr and no_result(d), "truncated checkpoint refused")
    open(ck, "wb").write(good)
    rj = os.path.join(d, "resume.json")
    record = json.load(open(rj))
    changed = dict(record)
    changed["runs"] = [dict(record["runs"][0], study=record["runs"][0]["study"].replace("seed = 1", "seed = 2"))]
    json.dump(changed, open(rj, "w"))
    p = resume(d)
    check(p.returncode == 2 and "written for another run" in p.stderr and no_result(d),
          "a checkpoint of another study refused: " + p.stderr.strip()[-200:])
    json.dump(record, open(rj, "w"))
    p = resume(d)
    check(p.returncode == 0 and same_outputs(ref, d), "the restored checkpoint resumes to the same result")

    # Misuse of --resume.
    for args, what in ((["--set", "ensemble.size=5"], "no --set"), (["--out", d], "no --out"),
                       (["--backend", "cpu"], "no --backend"), (["--force"], "--force")):
        p = resume(d, *args)
        check(p.returncode == 2 and what in p.stderr, "--resume with %s refused: %s" % (args[0], p.stderr.strip()[:120]))
    p = resume(os.path.join(tmp, "nowhere"))
    check(p.returncode == 2 and "not the directory of an interrupted chens run" in p.stderr, "--resume of no run refused")

    # Real signals on a longer run: SIGINT and SIGTERM after the first checkpoint, SIGKILL
    # after a later one; each resumed to the uninterrupted result.
    lref = os.path.join(tmp, "long-ref")
    p = run(lref, *LONG)
    check(p.returncode == 0, "long run: exit 0")
    for sig, code, name in ((signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM"), (signal.SIGKILL, -9, "SIGKILL")):
        d = os.path.join(tmp, "long-" + name)
        proc = subprocess.Popen([chens, "run", "--no-progress", "--out", d, "--threads", "1", "--checkpoint-segments", "4"]
                                + LONG, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = wait_for(os.path.join(d, "checkpoint.chk"), proc)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=600)
        check(started and proc.returncode == code, "%s mid-run: exit %s (%s)" % (name, proc.returncode, err.strip()[-200:]))
        if sig != signal.SIGKILL:
            check("interrupted (%s)" % name in err and "continue with" in err, "%s: the message names it" % name)
        check(no_result(d) and "checkpoint.chk" in leftovers(d), "%s: a checkpoint and no result" % name)
        p = resume(d)
        check(p.returncode == 0 and same_outputs(lref, d, ("series.csv", "trajectory.csv")),
              "%s, resumed: identical to the uninterrupted run %s" % (name, p.stderr[-200:]))

    # Issue 17: one sample interval over the whole run (output.sample_dt = t_end). Stop
    # points fall inside the interval (docs/checkpoints.md), so SIGTERM is honoured within
    # seconds, not when the run ends, and a due --checkpoint-minutes is written on time.
    # The whole run takes a minute or more on one core; each signal must end it within
    # STOP_SECONDS (stop points are about 2 s apart, plus writing the checkpoint).
    STOP_SECONDS = 15
    ONE = ["--single"] + sets("ensemble.size=%d" % long_size, "integrator.t_end=2000", "integrator.h=0.01",
               "output.sample_dt=2000")
    d = os.path.join(tmp, "one-interval")
    for leg in range(2):
        cmd = ([chens, "run", "--no-progress", "--threads", "1"] + (["--out", d] + ONE if leg == 0 else ["--resume", d]))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        check(proc.poll() is None, "one sample interval, leg %d: still running after 3 s (the run is long enough)" % leg)
        proc.send_signal(signal.SIGTERM)
        t0 = time.time()
        out, err = proc.communicate(timeout=600)
        waited = time.time() - t0
        check(proc.returncode == 143 and waited < STOP_SECONDS,
              "one sample interval, leg %d: SIGTERM honoured in %.1f s, exit %s (%s)" % (leg, waited, proc.returncode,
                                                                                          err.strip()[-200:]))
        check("inside sample interval 1" in err and "checkpoint.chk" in leftovers(d) and no_result(d),
              "one sample interval, leg %d: stopped inside the interval with a checkpoint: %s" % (leg, err.strip()[-300:]))
    d = os.path.join(tmp, "one-interval-minutes")
    proc = subprocess.Popen([chens, "run", "--no-progress", "--threads", "1", "--out", d, "--checkpoint-minutes", "0.05"]
                            + ONE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    written = wait_for(os.path.join(d, "checkpoint.chk"), proc, seconds=3 + STOP_SECONDS)
    took = time.time() - t0
    check(written and proc.poll() is None,
          "one sample interval: --checkpoint-minutes 0.05 (3 s) wrote a checkpoint after %.1f s, mid-run" % took)
    proc.kill()
    proc.communicate()

    # A study of two runs: the first completes, the second is interrupted; resuming keeps
    # the first and continues the second.
    study = os.path.join(tmp, "two.toml")
    with open(study, "w") as f:
        f.write("[integrator]\nh = 0.05\n[ensemble]\nsize = 1000\n[output]\nsample_dt = 0.5\n"
                "[sweep]\nintegrator.t_end = [10.0, 100.0]\n")
    s1, s2 = os.path.join(tmp, "two-ref"), os.path.join(tmp, "two")
    p = subprocess.run([chens, "run", study, "--out", s1, "--no-progress"], capture_output=True, text=True)
    check(p.returncode == 0, "study of two runs: exit 0")
    p = subprocess.run([chens, "run", study, "--out", s2, "--no-progress"], capture_output=True, text=True,
                       env=interrupted_env(100))  # the first run has 21 sample times: only the second stops
    idx = json.load(open(os.path.join(s2, "study.json")))
    check(p.returncode == 130 and [r["status"] for r in idx["runs"]] == ["complete", "interrupted"],
          "study: second run interrupted, first complete (%s)" % [r["status"] for r in idx["runs"]])
    first = os.path.join(s2, idx["runs"][0]["directory"], "series.csv")
    mtime = os.path.getmtime(first)
    p = resume(s2)
    idx = json.load(open(os.path.join(s2, "study.json")))
    check(p.returncode == 0 and idx["complete"] and "(complete)" in p.stderr, "study resumed: complete " + p.stderr[-200:])
    check(os.path.getmtime(first) == mtime, "study resumed: the complete run was not run again")
    for r in idx["runs"]:
        check(same_outputs(os.path.join(s1, r["directory"]), os.path.join(s2, r["directory"]), ("series.csv",)),
              "study resumed: run %s identical" % r["name"])
    check(leftovers(s2) == [] and not os.path.exists(os.path.join(s2, idx["runs"][1]["directory"], "checkpoint.chk")),
          "study resumed: no checkpoint or resume.json left")

    # A study of many runs each too short to reach a stop point of its own: SIGINT went
    # unheeded and the study ran on for minutes. It now stops before the next run; resumed,
    # the study finishes with every run complete.
    many = os.path.join(tmp, "many.toml")
    with open(many, "w") as f:
        f.write("[integrator]\nt_end = 0.1\n[ensemble]\nsize = 1\n[sweep]\nensemble.seed = [%s]\n"
                % ", ".join(str(i + 1) for i in range(300)))
    d = os.path.join(tmp, "many")
    proc = subprocess.Popen([chens, "run", many, "--out", d, "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for(os.path.join(d, "seed=3", "summary.json"), proc)
    proc.send_signal(signal.SIGINT)
    t0 = time.time()
    out, err = proc.communicate(timeout=600)
    waited = time.time() - t0
    idx = json.load(open(os.path.join(d, "study.json")))
    done = [r["status"] for r in idx["runs"]].count("complete")
    # (between two runs, or inside one at its first stop point, with a checkpoint)
    check(proc.returncode == 130 and waited < 5 and "interrupted (SIGINT)" in err and 3 <= done < 300,
          "study of 300 tiny runs: SIGINT honoured between runs in %.2f s after %d runs, exit %s (%s)"
          % (waited, done, proc.returncode, err.strip()[-200:]))
    p = resume(d)
    idx = json.load(open(os.path.join(d, "study.json")))
    check(p.returncode == 0 and idx["complete"] and all(r["status"] == "complete" for r in idx["runs"]),
          "study of 300 tiny runs, resumed: every run complete (%s)" % p.stderr.strip()[-200:])

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("checkpoint and resume: all checks passed")
