#!/usr/bin/python3
"""Data must not be lost (issue 17), end to end with real processes:

1. One chens per output directory: a second `chens run` into a directory a running chens
   writes is refused (exit 2, naming the other process's pid) and changes nothing in it; the
   lock file of a process killed with SIGKILL does not block the next run.
2. A full disk is an error, not a crash: on a tmpfs mounted small enough that the write of
   each output file in turn fails (resume.json, states.h5, series.csv, trajectory.csv,
   periodogram.csv, summary.json; a study's study.json and comparison.csv; checkpoint.chk),
   chens exits 1 (never 139, never 0) with a message naming the file, leaves no partial or
   complete-looking output, and the results it computed are in the rescue directory
   ($TMPDIR), valid. When the rescue fails too the message says the results are lost and how
   to run it again, and `chens run --resume` does once there is room.

The tmpfs mounts need root (or CAP_SYS_ADMIN); where mounting is not permitted part 2 is
skipped with the reason printed. Needs Debian's python3-h5py where chens has HDF5.

Usage: test_output_safety.py CHENS_BINARY HAVE_HDF5(0|1)
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

chens = os.path.abspath(sys.argv[1])
have_hdf5 = len(sys.argv) > 2 and sys.argv[2] == "1"
failures = []
PAGE = 4096


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, env=None, **kw):
    return subprocess.run([chens, "run", "--no-progress"] + args, capture_output=True, text=True, env=env, **kw)


def small(*extra):
    args = ["--single", "--set", "ensemble.size=64", "--set", "integrator.t_end=1"]  # one run, not the default study
    for e in extra:
        args += ["--set", e]
    return args


def listing(d):
    out = {}
    for root, dirs, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d)] = fh.read()
        for x in dirs:
            out[os.path.relpath(os.path.join(root, x), d) + "/"] = b""
    return out


# ---------------------------------------------------------------------------------------
# 1. The lock, with a real second process.
with tempfile.TemporaryDirectory() as tmp:
    d = os.path.join(tmp, "busy")
    long_run = subprocess.Popen(
        [chens, "run", "--no-progress", "--out", d] + small("integrator.t_end=1e9", "output.sample_dt=1e6"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lock = os.path.join(d, ".chens.lock")
    deadline = time.time() + 60
    while time.time() < deadline:
        if os.path.exists(lock) and "pid %d" % long_run.pid in open(lock).read() and os.path.exists(
                os.path.join(d, "resume.json")):
            break
        time.sleep(0.05)
    check(long_run.poll() is None, "the long run is running")
    before = listing(d)
    for extra in ([], ["--force"]):
        r = run(["--out", d] + extra + small())
        check(r.returncode == 2, "second run %s: exit %d, want 2: %s" % (extra, r.returncode, r.stderr))
        check(re.search(re.escape(d) + r" is in use by chens pid %d \(started " % long_run.pid, r.stderr),
              "second run %s names the first: %s" % (extra, r.stderr))
        check(listing(d) == before, "second run %s left %s untouched" % (extra, d))
    r = subprocess.run([chens, "run", "--resume", d, "--no-progress"], capture_output=True, text=True)
    check(r.returncode == 2 and "is in use by chens pid %d" % long_run.pid in r.stderr,
          "--resume of a directory in use refused: %d %s" % (r.returncode, r.stderr))
    check(listing(d) == before, "--resume left %s untouched" % d)
    # kill -9: the lock file stays, its flock goes; the next run takes it over.
    long_run.send_signal(signal.SIGKILL)
    long_run.wait()
    check(os.path.exists(lock), "a killed chens leaves its lock file (the case to handle)")
    r = run(["--out", d, "--force"] + small())
    check(r.returncode == 0, "a run after kill -9: exit %d: %s" % (r.returncode, r.stderr))
    check("of chens pid %d" % long_run.pid in r.stderr and "which no longer runs" in r.stderr,
          "the stale lock is noted: %s" % r.stderr)
    check(os.path.exists(os.path.join(d, "summary.json")), "the run after kill -9 wrote its results")
    check(not os.path.exists(lock), "the lock file is gone after a normal exit")
    print("lock: checked")


# ---------------------------------------------------------------------------------------
# 2. A full disk.
def mount_tmpfs(path, pages):
    os.makedirs(path, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % (pages * PAGE), "tmpfs", path],
                          capture_output=True, text=True)


def umount(path):
    subprocess.run(["umount", path], capture_output=True)


def probe_mount():
    with tempfile.TemporaryDirectory() as t:
        m = mount_tmpfs(os.path.join(t, "m"), 4)
        if m.returncode != 0:
            return (m.stderr or m.stdout).strip() or "mount failed"
        umount(os.path.join(t, "m"))
    return None


NOSPACE = re.compile(r"cannot (?:write|create) (\S+): No space left on device")


def named_files(err):
    return [m.group(1) for m in NOSPACE.finditer(err)]


def rescued_dir(err):
    m = re.search(r"the results were saved to (\S+)/ instead", err)
    return m.group(1) if m else None


def outputs_in(d):
    """Result files or temporaries anywhere below d."""
    found = []
    for root, dirs, files in os.walk(d):
        for f in files + dirs:
            if f in ("summary.json", "series.csv", "trajectory.csv", "periodogram.csv", "states.h5", "comparison.csv") \
                    or f.startswith(".chens-partial"):
                found.append(os.path.relpath(os.path.join(root, f), d))
    return found


def check_results(d, reference, what):
    """d holds complete, valid results equal to the reference run's."""
    for f in sorted(os.listdir(reference)):
        p = os.path.join(d, f)
        check(os.path.exists(p), "%s: %s present" % (what, f))
        if not os.path.exists(p):
            continue
        if f == "summary.json":
            j = json.load(open(p))
            ref = json.load(open(os.path.join(reference, f)))
            check(j["instances"] == ref["instances"] and j["files"] == ref["files"], "%s: summary.json" % what)
        elif f == "states.h5":
            data = open(p, "rb").read()
            check(data[:8] == b"\x89HDF\r\n\x1a\n", "%s: states.h5 is HDF5" % what)
            if have_hdf5:
                try:
                    import h5py
                    import numpy as np
                    with h5py.File(p, "r") as a, h5py.File(os.path.join(reference, f), "r") as b:
                        for k in ("instances/final_state", "instances/initial_state", "trajectories/state"):
                            check(np.array_equal(a[k][()], b[k][()], equal_nan=True), "%s: states.h5 %s" % (what, k))
                except ImportError:
                    print("note: no h5py; states.h5 checked by signature only")
        else:
            check(open(p, "rb").read() == open(os.path.join(reference, f), "rb").read(), "%s: %s as the reference" % (what, f))


def scan(label, args, targets, tmp, extra_env=None, max_pages=400):
    """Runs `chens run args --out M/out` on tmpfs M of 1, 2, ... pages until it succeeds;
    checks every failing run and returns {file named in the failure: pages}."""
    hit = {}
    mnt = os.path.join(tmp, "fs-" + label)
    for pages in range(1, max_pages):
        m = mount_tmpfs(mnt, pages)
        if m.returncode != 0:
            check(False, "mount %d pages: %s" % (pages, m.stderr))
            return hit
        try:
            out = os.path.join(mnt, "out")
            rescue_root = tempfile.mkdtemp(dir=tmp)
            env = dict(os.environ, TMPDIR=rescue_root, **(extra_env or {}))
            r = run(args + ["--out", out], env=env)
            what = "%s, %d pages" % (label, pages)
            check(r.returncode in (0, 1) or (extra_env and r.returncode == 130),
                  "%s: exit %d (want 1, or 0 once it fits): %s" % (what, r.returncode, r.stderr))
            names = named_files(r.stderr)
            for n in names:
                hit.setdefault(os.path.relpath(n, out), (pages, r))
            if r.returncode == 0 or (r.returncode == 130 and "checkpoint written to" in r.stderr):
                return hit
            if r.returncode == 1:
                check(names, "%s: the message names the file that failed: %s" % (what, r.stderr))
            check(not any(f.startswith(".chens-partial") or "/.chens-partial" in f for f in outputs_in(mnt)),
                  "%s: no temporaries left: %s" % (what, outputs_in(mnt)))
            if os.path.isdir(out) and os.path.exists(os.path.join(out, "study.json")):
                check(not json.load(open(os.path.join(out, "study.json")))["complete"], "%s: study not marked complete" % what)
                for run_dir in ("a", "b"):
                    p = os.path.join(out, run_dir)
                    check(not os.path.isdir(p) or os.listdir(p), "%s: no empty run directory %s left" % (what, run_dir))
                for t in ("comparison.csv", "series_long.csv"):
                    check(not os.path.exists(os.path.join(out, t)), "%s: no %s of an incomplete study" % (what, t))
            elif r.returncode == 1 and not any(n.endswith("checkpoint.chk") for n in names):
                check(outputs_in(mnt) == [], "%s: no output left in the full directory: %s" % (what, outputs_in(mnt)))
            rescued = rescued_dir(r.stderr)
            if rescued:
                check(r.returncode == 1, "%s: rescued, exit 1" % what)
                check(rescued.startswith(rescue_root), "%s: rescued into TMPDIR: %s" % (what, rescued))
                hit.setdefault("rescued:" + os.path.relpath(names[0], out) if names else "rescued", (pages, r, rescued))
                rel = None
                for n in names:
                    rel = os.path.dirname(os.path.relpath(n, out))
                reference = os.path.join(tmp, "ref-" + label, rel or "")
                check_results(rescued, reference, what + " (rescued)")
            elif r.returncode == 1:
                check("No space left on device" in r.stderr, "%s: says the disk is full: %s" % (what, r.stderr))
        finally:
            umount(mnt)
    check(False, "%s: never fitted in %d pages" % (label, max_pages))
    return hit


why = probe_mount()
if why:
    print("SKIP full-disk checks: cannot mount a tmpfs here (%s)" % why)
else:
    with tempfile.TemporaryDirectory() as tmp:
        # A single run with every output file.
        one = small("ensemble.size=256", "output.sample_dt=0.1", "output.trajectory=true", "output.periodogram=y")
        if have_hdf5:
            one += ["--set", "output.states=true", "--set", "output.record=[0,1]"]
        ref = run(one + ["--out", os.path.join(tmp, "ref-run")])
        check(ref.returncode == 0, "reference run: %s" % ref.stderr)
        hit = scan("run", one, None, tmp)
        wanted = ["resume.json", "series.csv", "trajectory.csv", "periodogram.csv", "summary.json"]
        if have_hdf5:
            wanted.append("states.h5")
        for f in wanted:
            check(f in hit, "a run on a full disk fails writing %s (seen: %s)" % (f, sorted(hit)))
            if f in hit:
                r = hit[f][1]
                check(r.returncode == 1, "%s: exit %d" % (f, r.returncode))
                if f != "resume.json":
                    check(rescued_dir(r.stderr), "%s: results rescued: %s" % (f, r.stderr))
        print("full disk, one run: failed at", {k: v[0] for k, v in hit.items() if not k.startswith("rescued")})

        # A study: study.json, comparison.csv and a run's files.
        study = os.path.join(tmp, "ab.toml")
        with open(study, "w") as fh:
            fh.write('[integrator]\nt_end = 1.0\n[ensemble]\nsize = 64\n[[run]]\nname = "a"\n[[run]]\nname = "b"\n')
        ref = run([study, "--out", os.path.join(tmp, "ref-study")])
        check(ref.returncode == 0, "reference study: %s" % ref.stderr)
        hit = scan("study", [study], None, tmp)
        # comparison.csv is written right after study.json, which is larger, was rewritten
        # (a temporary copy next to the old one): a disk that filled up before cannot fail it
        # first. It is written as study.json is (write_file_atomically), and an incomplete
        # study shows no table (checked above at every size).
        tables = ["series_long.csv"] if os.path.exists(os.path.join(tmp, "ref-study", "series_long.csv")) else []
        for f in ["study.json", "a/series.csv", "b/summary.json"] + tables:
            check(f in hit, "a study on a full disk fails writing %s (seen: %s)" % (f, sorted(hit)))
        if "study.json" in hit:
            check("could not write the study index" in hit["study.json"][1].stderr, "study.json: the message says what")
        print("full disk, study: failed at", {k: v[0] for k, v in hit.items() if not k.startswith("rescued")})

        # checkpoint.chk: a failed checkpoint costs the run nothing (the run goes on and says
        # so, docs/checkpoints.md), and leaves no partial checkpoint; interrupted, it says
        # that there is no checkpoint (exit 130).
        ck = small("output.sample_dt=0.1") + ["--checkpoint-segments", "1"]
        run(ck + ["--out", os.path.join(tmp, "ref-ck")])
        hit = scan("ck", ck, None, tmp)
        check("checkpoint.chk" in hit, "a checkpoint on a full disk fails (seen: %s)" % sorted(hit))
        if "checkpoint.chk" in hit:
            r = hit["checkpoint.chk"][1]
            check("could not write a checkpoint: cannot write" in r.stderr and "the run goes on" in r.stderr, r.stderr)
        hit = scan("ck-stop", ck, None, tmp, extra_env={"CHENS_TEST_INTERRUPT_AT": "4"})
        if "checkpoint.chk" in hit:
            r = hit["checkpoint.chk"][1]
            check(r.returncode == 130 and "the checkpoint could not be written (cannot write" in r.stderr,
                  "interrupted with a full disk: %d %s" % (r.returncode, r.stderr))
        else:
            check(False, "an interrupted run on a full disk fails writing its checkpoint (seen: %s)" % sorted(hit))

        # The rescue fails too: the message says so, nothing partial anywhere, resume.json
        # kept; once there is room, --resume runs it again.
        base = small("output.sample_dt=0.1", "output.trajectory=true")
        run(base + ["--out", os.path.join(tmp, "ref-lost")])
        mnt, tmpfs_tmp = os.path.join(tmp, "fs-lost"), os.path.join(tmp, "fs-lost-tmp")
        for pages in range(2, 40):
            mount_tmpfs(mnt, pages)
            mount_tmpfs(tmpfs_tmp, 1)
            out = os.path.join(mnt, "out")
            r = run(base + ["--out", out], env=dict(os.environ, TMPDIR=tmpfs_tmp))
            if "failed too" in r.stderr or r.returncode == 0:
                break
            umount(tmpfs_tmp)
            umount(mnt)
        check("failed too" in r.stderr, "the rescue fails too: %s" % r.stderr)
        check(r.returncode == 1, "rescue failed: exit %d" % r.returncode)
        check("the results of this run are lost; make room, then chens run --resume %s runs it again from t = 0" % out
              in r.stderr, "says what is lost and how to go on: %s" % r.stderr)
        check(outputs_in(mnt) == [] and outputs_in(tmpfs_tmp) == [], "nothing partial: %s %s" % (outputs_in(mnt), outputs_in(tmpfs_tmp)))
        check(os.listdir(tmpfs_tmp) == [], "no empty rescue directory left: %s" % os.listdir(tmpfs_tmp))
        check(os.path.exists(os.path.join(out, "resume.json")), "resume.json kept for --resume")
        subprocess.run(["mount", "-o", "remount,size=%d" % (4096 * PAGE), mnt], check=True)
        r2 = subprocess.run([chens, "run", "--resume", out, "--no-progress"], capture_output=True, text=True)
        check(r2.returncode == 0, "--resume once there is room: %s" % r2.stderr)
        check_results(out, os.path.join(tmp, "ref-lost"), "resumed after the lost results")
        umount(tmpfs_tmp)
        umount(mnt)
        print("full disk: checked")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all checks passed")
