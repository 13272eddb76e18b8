#!/usr/bin/python3
"""chens's memory count against what runs take (docs/study-format.md, "Memory").

`chens check` and `chens run` refuse a run whose counted memory exceeds 80 % of what chens
may use (CHENS_MEMORY_BYTES here). For each kind of buffer that grows with a run -- the
instances, the statistics of every sample time (with first passages and a trajectory), the
groups' statistics, the recorded trajectories -- this finds the largest run `chens check`
accepts under a limit, runs it, and measures its peak resident memory: it must stay under
the limit (the count is not short), and above a fifth of the count (the count does not
refuse runs that would fit five times over). One instance with 10^6 samples was once
counted at 4.5e-7 GB and peaked at 2.08 GB.

Usage: test_memory_count.py CHENS_EXE
"""
import os
import re
import subprocess
import sys

EXE = sys.argv[1]
LIMIT = 300e6  # bytes chens may use: CHENS_MEMORY_BYTES
ENV = dict(os.environ, CHENS_MEMORY_BYTES=str(int(LIMIT)))

# Each kind: a knob n (an integer) and the --set overrides of a run of size n.
KINDS = {
    "sample times (one instance)": (
        lambda n: ["ensemble.size=1", "integrator.h=1e-5", "output.sample_dt=1e-5", f"integrator.t_end={n * 1e-5!r}"],
        1000, 10**6),
    "sample times with first passages and trajectory.csv": (
        lambda n: ["ensemble.size=1", "integrator.h=1e-5", "output.sample_dt=1e-5", f"integrator.t_end={n * 1e-5!r}",
                   "first_passage.phi=1e-9", "first_passage.energy_error=1e-9", "first_passage.lost=true",
                   "output.trajectory=true"],
        1000, 10**6),
    "groups' statistics (64 groups)": (
        lambda n: ["ensemble.size=512", "integrator.h=0.1", "output.sample_dt=0.1", f"integrator.t_end={n / 10!r}",
                   'parameters.length="uniform(0.5, 1)"', 'parameters.group_by="length"', "parameters.group_bins=64"],
        10, 10**5),
    "recorded trajectories": (
        lambda n: ["ensemble.size=1000", "integrator.h=0.1", "output.sample_dt=0.1", f"integrator.t_end={n / 10!r}",
                   "output.record=[" + ", ".join(str(i) for i in range(1000)) + "]"],
        10, 10**4),
    "instances": (
        lambda n: [f"ensemble.size={n}", "integrator.h=0.1", "integrator.t_end=1"],
        1000, 10**8),
}


def args_of(sets):
    out = ["--single", "--backend", "cpu", "--threads", "2"]
    for s in sets:
        out += ["--set", s]
    return out


def accepted(sets):
    r = subprocess.run([EXE, "check"] + args_of(sets), env=ENV, capture_output=True, text=True)
    if r.returncode not in (0, 2):
        sys.exit(f"chens check failed ({r.returncode}): {r.stderr}")
    if r.returncode == 2 and "chens may use here" not in r.stderr:
        sys.exit(f"chens check refused for another reason: {r.stderr}")
    return r.returncode == 0, r.stdout


def largest_accepted(make, lo, hi):
    """The largest n in [lo, hi) that check accepts (lo accepted, hi refused), to 1 %."""
    assert accepted(make(lo))[0], "the smallest run of the kind is refused"
    assert not accepted(make(hi))[0], "the largest run of the kind is accepted"
    while hi - lo > max(1, lo // 100):
        mid = (lo + hi) // 2
        if accepted(make(mid))[0]:
            lo = mid
        else:
            hi = mid
    return lo


WRAPPER = ("import resource, subprocess, sys\n"
           "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
           "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
           "sys.stderr.write(r.stderr)\n")


def peak_bytes(sets, out):
    """Runs chens run with these overrides into out; its exit code and peak RSS in bytes."""
    r = subprocess.run([sys.executable, "-c", WRAPPER, EXE, "run", "--out", out, "--force", "--no-progress"]
                       + args_of(sets), env=ENV, capture_output=True, text=True)
    code, kib = r.stdout.split()
    return int(code), int(kib) * 1024, r.stderr


def main():
    import tempfile
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (make, lo, hi) in KINDS.items():
            n = largest_accepted(make, lo, hi)
            ok, report = accepted(make(n))
            counted = float(re.search(r"# memory: about ([0-9.e+-]+) GB", report).group(1)) * 1e9
            code, peak, err = peak_bytes(make(n), os.path.join(tmp, "run"))
            print(f"{kind}: n = {n}, counted {counted / 1e6:.0f} MB, peak {peak / 1e6:.0f} MB "
                  f"(limit {LIMIT / 1e6:.0f} MB; refused above {0.8 * LIMIT / 1e6:.0f} MB counted)")
            if code != 0:
                failures.append(f"{kind}: the run exited {code}: {err}")
            elif peak > LIMIT:
                failures.append(f"{kind}: the largest accepted run peaked at {peak / 1e6:.0f} MB, over the "
                                f"{LIMIT / 1e6:.0f} MB chens may use: the count ({counted / 1e6:.0f} MB) is short")
            elif peak < counted / 5:
                failures.append(f"{kind}: peak {peak / 1e6:.0f} MB is under a fifth of the count "
                                f"({counted / 1e6:.0f} MB): the count refuses runs that fit")
    if failures:
        sys.exit("\n".join(failures))
    print("memory count: every kind's largest accepted run fits")


if __name__ == "__main__":
    main()
