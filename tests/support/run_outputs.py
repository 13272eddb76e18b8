"""Comparing two chens result directories, shared by the Python end-to-end tests
(tests/mpi/test_mpi_sharding.py, tests/mpi/test_mpi_checkpoints.py,
tests/checkpoint/test_resume_cli.py)."""
import json
import os
import time

# summary.json fields that differ between equal results: timing and where it ran.
TIMING = {"wall_seconds", "instance_steps_per_second", "integration_seconds", "measurement_seconds", "device",
          "backend_note", "step_cost"}


def summary_without_timing(d):
    j = json.load(open(os.path.join(d, "summary.json")))
    for k in TIMING:
        j.pop(k, None)
    return j


def states_h5_differences(a, b):
    """(name of the first dataset of a's states.h5 that b's differs in, or None; datasets compared)."""
    import h5py
    import numpy as np
    fa, fb = (h5py.File(os.path.join(d, "states.h5"), "r") for d in (a, b))
    names = []
    fa.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    for n in names:
        x, y = fa[n][:], fb[n][:]
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return n, len(names)
    return None, len(names)


def same_outputs(a, b, files=("series.csv", "trajectory.csv", "periodogram.csv")):
    for f in files:
        pa, pb = os.path.join(a, f), os.path.join(b, f)
        if not os.path.exists(pa) or open(pa, "rb").read() != open(pb, "rb").read():
            print("  differs:", f)
            return False
    if summary_without_timing(a) != summary_without_timing(b):
        print("  differs: summary.json")
        return False
    if os.path.exists(os.path.join(a, "states.h5")):
        differs, _ = states_h5_differences(a, b)
        if differs:
            print("  differs: states.h5", differs)
            return False
    return True


def no_result(d):
    return not any(os.path.exists(os.path.join(d, f)) for f in ("summary.json", "series.csv", "trajectory.csv"))


def leftovers(d):
    return [f for f in ("checkpoint.chk", "resume.json") if os.path.exists(os.path.join(d, f))]


def wait_for(path, proc, seconds=60):
    t0 = time.time()
    while time.time() - t0 < seconds and proc.poll() is None:
        if os.path.exists(path):
            return True
        time.sleep(0.01)
    return os.path.exists(path)
