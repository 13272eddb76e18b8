"""Comparing two chens result directories, shared by the Python end-to-end tests
(tests/mpi/test_mpi_sharding.py, tests/checkpoint/test_resume_cli.py)."""
import json
import os

# summary.json fields that differ between equal results: timing and where it ran.
TIMING = {"wall_seconds", "instance_steps_per_second", "integration_seconds", "measurement_seconds", "device",
          "backend_note"}


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
