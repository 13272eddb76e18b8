#!/usr/bin/python3
"""Checkpoints under mpirun (issue 22, docs/checkpoints.md), end to end: a sharded run
stopped at a segment writes the one checkpoint of the whole ensemble, and `chens run
--resume DIR` on the same number of ranks, on another number (2 -> 3, 3 -> 2), on one process
(2 -> 1) and from a one-process checkpoint (1 -> 2) writes exactly the files of an
uninterrupted run: series.csv, trajectory.csv, periodogram.csv byte for byte, summary.json
but for timing, every array of states.h5. The stops: the test hook at a fixed sample time,
twice in a row on different rank counts; SIGUSR1 sent to mpirun (which forwards it to every
rank; SIGINT and SIGTERM make Open MPI kill the ranks within a second); SIGTERM sent to one
rank only (every rank stops at the same segment); SIGKILL of the whole job after a periodic
checkpoint. A study of two runs resumes on another rank count. A checkpoint of another
study and a damaged one are refused under mpirun (exit 2, nothing written, the checkpoint
kept).

Usage: test_mpi_checkpoints.py CHENS_BINARY MPIEXEC
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from run_outputs import leftovers, no_result, same_outputs, wait_for  # noqa: E402

chens, mpiexec = sys.argv[1], sys.argv[2]
# More ranks than cores here: ranks waiting in MPI yield the core instead of spinning.
MPI = [mpiexec, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def launch(ranks, args, progress=False):
    return ([chens] if ranks == 1 else MPI + ["-n", str(ranks), chens]) + \
        ["run", "--progress" if progress else "--no-progress"] + list(args)


def run(ranks, args, interrupt_at=None):
    env = dict(os.environ)
    if interrupt_at:
        env["CHENS_TEST_INTERRUPT_AT"] = str(interrupt_at)
    return subprocess.run(launch(ranks, args), capture_output=True, text=True, timeout=120, env=env)


def sets(*kv):
    out = ["--single"]  # one run from the defaults, not the built-in default study
    for x in kv:
        out += ["--set", x]
    return out


def last_line(p):
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("chens")]  # not mpirun's notes
    return lines[-1] if lines else "(no message)"


def interrupted(p, d, code=130):
    return p.returncode == code and no_result(d) and leftovers(d) == ["checkpoint.chk", "resume.json"]


# 1000 pendulums: 16 blocks, uneven shards on 3 ranks; recorded instances on every rank,
# kept instances (states.h5) across the first cut, momentum projections; lengths drawn per
# instance and the statistics grouped in three bins of them (issue 22: each group's statistics
# saved on rank 0, and the groups' first passages).
STUDY = sets("ensemble.size=1000", "ensemble.perturbation=1e-3", "integrator.t_end=5", "integrator.h=0.05",
             "projection.momentum=true", "projection.tol=1e-9", "integrator.formulation=naive", "output.sample_dt=0.25",
             "output.states=true", "output.record=[0, 63, 64, 500, 999]", "output.trajectory=true",
             "output.periodogram=y", "first_passage.energy_error=1e-7", "first_passage.phi=1e-6",
             "parameters.length=\"uniform(0.8, 1.2)\"", "parameters.group_by=\"length\"", "parameters.group_bins=3",
             "first_passage.lost=true")  # (last: STUDY[:-2] is another study)
# Long enough (seconds on 2 ranks here) to be signalled mid-run.
LONG = sets("ensemble.size=100000", "integrator.t_end=60", "integrator.h=0.01", "output.sample_dt=0.5",
            "output.record=[0, 99999]", "output.trajectory=true")

with tempfile.TemporaryDirectory() as tmp:
    ref = os.path.join(tmp, "ref")
    p = run(1, ["--out", ref] + STUDY)
    check(p.returncode == 0, "one process, uninterrupted: exit 0 " + p.stderr[-500:])

    # Stopped by the test hook at 7 of 21 sample times, resumed on R2 ranks.
    for r1, r2 in ((2, 2), (2, 3), (3, 2), (2, 1), (1, 2)):
        d = os.path.join(tmp, "stop%d_resume%d" % (r1, r2))
        p = run(r1, ["--out", d] + STUDY, interrupt_at=7)
        check(interrupted(p, d), "%d rank(s) stopped at 7 sample times: exit 130, checkpoint and resume.json, no result (%s)"
              % (r1, last_line(p)))
        p = run(r2, ["--resume", d])
        check(p.returncode == 0 and leftovers(d) == [], "resumed on %d rank(s): exit 0, checkpoint retired %s"
              % (r2, p.stderr[-300:]))
        check(same_outputs(ref, d), "%d -> %d rank(s): every output identical to the uninterrupted run" % (r1, r2))

    # Stopped twice: on 2 ranks at 5, on 3 ranks at 13, finished on 2.
    d = os.path.join(tmp, "twice")
    p = run(2, ["--out", d] + STUDY, interrupt_at=5)
    p2 = run(3, ["--resume", d], interrupt_at=13)
    check(interrupted(p, d) and p2.returncode == 130 and "13 of 21 sample times done" in p2.stderr,
          "stopped at 5 on 2 ranks, then at 13 on 3 ranks (%s)" % last_line(p2))
    p = run(2, ["--resume", d])
    check(p.returncode == 0 and same_outputs(ref, d), "2 -> 3 -> 2 ranks: identical to the uninterrupted run")

    # Real signals, on a run that lasts seconds.
    long_ref = os.path.join(tmp, "long_ref")
    p = run(1, ["--out", long_ref] + LONG)
    check(p.returncode == 0, "long run, one process: exit 0")

    def started(log, proc, seconds=120):
        # rank 0 prints a progress line per segment (a log, not a terminal)
        t0 = time.time()
        while time.time() - t0 < seconds and proc.poll() is None:
            if os.path.exists(log) and "sample times" in open(log).read():
                return True
            time.sleep(0.05)
        return False

    def rank_pid(rank):
        for pid in subprocess.run(["pgrep", "-f", "^" + chens + " run"], capture_output=True, text=True).stdout.split():
            try:
                env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            except OSError:
                continue
            if b"OMPI_COMM_WORLD_RANK=%d" % rank in env:
                return int(pid)
        return None

    for how, sig, code, resume_ranks in (("SIGUSR1 to mpirun", signal.SIGUSR1, 138, 3),
                                         ("SIGTERM to rank 1 alone", signal.SIGTERM, 143, 2)):
        d = os.path.join(tmp, "signal_" + sig.name)
        log = d + ".log"
        with open(log, "w") as err:
            proc = subprocess.Popen(launch(2, ["--out", d] + LONG, progress=True), stdout=subprocess.DEVNULL, stderr=err)
            ok = started(log, proc)
            target = proc.pid if sig == signal.SIGUSR1 else rank_pid(1)
            if ok and target:
                os.kill(target, sig)
            proc.wait(timeout=600)
        text = open(log).read()
        check(ok and target is not None and proc.returncode == code and no_result(d) and
              leftovers(d) == ["checkpoint.chk", "resume.json"] and "interrupted (%s)" % sig.name in text,
              "%s: every rank stops at one segment, exit %d, a checkpoint (%s)" % (how, code, proc.returncode))
        p = run(resume_ranks, ["--resume", d])
        check(p.returncode == 0 and same_outputs(long_ref, d, files=("series.csv", "trajectory.csv")),
              "%s, resumed on %d ranks: identical to the uninterrupted run" % (how, resume_ranks))

    # A periodic checkpoint (every 3 segments), then the whole job killed: resumed from it.
    d = os.path.join(tmp, "killed")
    proc = subprocess.Popen(launch(2, ["--out", d, "--checkpoint-segments", "3"] + LONG), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    ok = wait_for(os.path.join(d, "checkpoint.chk"), proc, 120)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)  # mpirun and every rank
    proc.wait(timeout=60)
    for _ in range(200):  # the ranks, orphaned by mpirun's death, end a moment later (and free DIR's lock)
        if subprocess.run(["pgrep", "-f", "--", "--out " + d], capture_output=True).returncode != 0:
            break
        time.sleep(0.05)
    check(ok and no_result(d), "killed after a periodic checkpoint: the checkpoint is there, no result")
    p = run(3, ["--resume", d])
    check(p.returncode == 0 and "resuming" in p.stderr and same_outputs(long_ref, d, files=("series.csv", "trajectory.csv")),
          "killed on 2 ranks, resumed on 3: identical to the uninterrupted run (%s)" % last_line(p))

    # A study of two runs stopped in its first run on 2 ranks, resumed on 3.
    study = os.path.join(tmp, "sweep.toml")
    with open(study, "w") as f:
        f.write("[integrator]\nt_end = 3.0\n[ensemble]\nsize = 500\n[output]\nsample_dt = 0.2\n"
                "[sweep]\nintegrator.formulation = [\"naive\", \"dirac\"]\n")
    s1, s2 = os.path.join(tmp, "sweep1"), os.path.join(tmp, "sweep2")
    run(1, [study, "--out", s1])
    p = run(2, [study, "--out", s2], interrupt_at=5)
    index = json.load(open(os.path.join(s2, "study.json"))) if os.path.exists(os.path.join(s2, "study.json")) else {}
    check(p.returncode == 130 and [r.get("status") for r in index.get("runs", [])] == ["interrupted", "pending"],
          "study on 2 ranks stopped in its first run: study.json says so")
    p = run(3, ["--resume", s2])
    ok = p.returncode == 0 and json.load(open(os.path.join(s2, "study.json")))["complete"]
    for run_dir in ("formulation=naive", "formulation=dirac"):
        ok = ok and same_outputs(os.path.join(s1, run_dir), os.path.join(s2, run_dir), files=("series.csv",))
    check(ok, "study resumed on 3 ranks: complete, every run's series.csv identical (%s)" % last_line(p))

    # Another study's checkpoint: refused on every rank, nothing written, the checkpoint kept.
    a, b = os.path.join(tmp, "mine"), os.path.join(tmp, "other")
    run(2, ["--out", a] + STUDY, interrupt_at=7)
    run(2, ["--out", b] + STUDY[:-2] + ["--set", "integrator.h=0.025"], interrupt_at=7)
    shutil.copy(os.path.join(b, "checkpoint.chk"), os.path.join(a, "checkpoint.chk"))
    p = run(2, ["--resume", a])
    check(p.returncode == 2 and "was written for another run" in p.stderr and no_result(a) and
          leftovers(a) == ["checkpoint.chk", "resume.json"], "a foreign checkpoint under mpirun: exit 2 (%s)" % last_line(p))
    # A damaged checkpoint (a byte flipped among the instances): refused by rank 0's first
    # pass, before any rank is sent a byte of it.
    c = os.path.join(tmp, "damaged")
    run(2, ["--out", c] + STUDY, interrupt_at=7)
    path = os.path.join(c, "checkpoint.chk")
    data = bytearray(open(path, "rb").read())
    data[len(data) // 3] ^= 0x10
    open(path, "wb").write(bytes(data))
    p = run(3, ["--resume", c])
    check(p.returncode == 2 and "is damaged" in p.stderr and no_result(c) and
          leftovers(c) == ["checkpoint.chk", "resume.json"], "a damaged checkpoint under mpirun: exit 2 (%s)" % last_line(p))
    p = run(2, ["--resume", ref])
    check(p.returncode == 2 and "complete, nothing to resume" in p.stderr,
          "--resume of a complete run under mpirun: exit 2 (%s)" % last_line(p))

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("MPI checkpoints: all checks passed")
