"""The Python package against the command line (issue 21): the same study through
`chens.run` and through `chens run --out` gives the same numbers, bit for bit; the study's
three forms (file, TOML text, dict) give the same results; bad input raises StudyError with
the command line's message; the GIL is released while a run integrates.

Run by ctest (python.api) with PYTHONPATH=<build>/python and CHENS_EXE=<build>/chens.
"""

import io
import json
import os
import subprocess
import threading
import time

import pytest

import chens

EXE = os.environ.get("CHENS_EXE", "chens")

# Small, quick studies: a pendulum, a chain with its numerical reference, states and
# recorded instances, a sweep.
PENDULUM = {
    "model": {"kind": "pendulum"},
    "integrator": {"method": "rk4", "h": 0.05, "t_end": 5.0},
    "ensemble": {"size": 96, "perturbation": 1e-3},
    "output": {"sample_dt": 0.5},
}
CHAIN = {
    "model": {"kind": "chain", "atoms": 7},
    "integrator": {"method": "rk4", "h": 0.025, "t_end": 1.0},
    "projection": {"momentum": True},
    "ensemble": {"size": 40, "perturbation": 1e-3},
    "output": {"sample_dt": 0.25, "reference": "auto", "states": True, "record": [0, 3]},
}
SWEEP = {
    "model": {"kind": "pendulum"},
    "integrator": {"h": 0.05, "t_end": 2.0},
    "ensemble": {"size": 32, "perturbation": 1e-3},
    "output": {"sample_dt": 0.5},
    "first_passage": {"phi": 1e-9, "lost": True},
    "sweep": {"integrator.formulation": ["naive", "dirac"], "projection.momentum": [False, True]},
}

# What differs between two runs of the same study: how long they took.
TIMING = ("wall_seconds", "integration_seconds", "measurement_seconds", "setup_seconds", "finish_seconds",
          "device_seconds", "instance_steps_per_second", "step_cost")


def without_timing(x):
    if isinstance(x, dict):
        return {k: without_timing(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [without_timing(v) for v in x]
    return x


def toml_file(tmp_path, study, name="study.toml"):
    p = tmp_path / name
    p.write_text(chens._to_toml(study))
    return p


def cli_run(args, tmp_path):
    r = subprocess.run([EXE, "run", *args], capture_output=True, text=True, cwd=tmp_path)
    return r


def run_both(tmp_path, study, *cli_args, **kwargs):
    """The study through `chens run --out cli` and through chens.run, both on the CPU: the
    Result and the command line's directory."""
    path = toml_file(tmp_path, study)
    r = cli_run([str(path), "--backend", "cpu", *cli_args, "--out", "cli"], tmp_path)
    assert r.returncode == 0, r.stderr
    return chens.run(path, backend="cpu", **kwargs), tmp_path / "cli"


def expect_run_equals_files(result, directory):
    """A Result against the directory chens run wrote for the same run."""
    files = sorted(f for f in os.listdir(directory) if not f.startswith("."))
    assert sorted(result.files) == files
    summary = json.loads((directory / "summary.json").read_text())
    assert without_timing(result.summary) == without_timing(summary)
    # series.csv byte for byte, and the DataFrame read from it equals the file's
    assert result.files["series.csv"] == (directory / "series.csv").read_bytes()
    import pandas as pd

    pd.testing.assert_frame_equal(result.series, pd.read_csv(directory / "series.csv", float_precision="round_trip"))


def test_a_run_equals_the_command_lines_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where chens run's default output directory would go
    res, cli = run_both(tmp_path, PENDULUM)
    assert isinstance(res, chens.Result)
    expect_run_equals_files(res, cli)
    assert res.summary["instances"] == 96
    assert sorted(os.listdir(tmp_path)) == ["cli", "study.toml"]  # nothing written without out


def test_a_chain_with_states_and_records_equals_the_files(tmp_path):
    h5py = pytest.importorskip("h5py")
    res, cli = run_both(tmp_path, CHAIN)
    expect_run_equals_files(res, cli)
    assert res.summary["reference"]  # the numerical reference ran
    with h5py.File(io.BytesIO(res.files["states.h5"]), "r") as mem, h5py.File(cli / "states.h5", "r") as f:
        names = []
        f.visit(names.append)
        mem_names = []
        mem.visit(mem_names.append)
        assert names == mem_names and names
        for n in names:
            if isinstance(f[n], h5py.Dataset):
                assert f[n].dtype == mem[n].dtype, n
                assert f[n][()].tobytes() == mem[n][()].tobytes(), n
        # ... and as the Result's numpy arrays
        assert res.initial_states.shape == (40, 28) and res.final_states.shape == (40, 28)
        assert res.final_states.tobytes() == f["instances/final_state"][()].tobytes()
        assert res.states["counters/steps"].tobytes() == f["instances/counters/steps"][()].tobytes()
        assert list(res.recorded["instances"]) == [0, 3]
        assert res.recorded["state"].shape == (2, 5, 28)
        assert res.recorded["reference"].tobytes() == f["trajectories/reference"][()].tobytes()


def test_a_parameter_ensemble_equals_the_files_and_lists_each_instances_values(tmp_path):
    pytest.importorskip("h5py")
    study = {
        "model": {"kind": "pendulum"},
        "integrator": {"method": "rk4", "h": 0.05, "t_end": 2.0},
        "ensemble": {"size": 70, "perturbation": 1e-3},
        "output": {"sample_dt": 0.5, "states": True},
        "parameters": {"length": "uniform(0.5, 2)", "h": [0.1, 0.05, 0.025]},
    }
    res, cli = run_both(tmp_path, study)
    expect_run_equals_files(res, cli)
    p = res.parameters
    assert list(p.columns) == ["length", "h"] and list(p.index) == list(range(70))
    # A list's values by instance index; a uniform law's inside its bounds.
    assert list(p["h"]) == [[0.1, 0.05, 0.025][i % 3] for i in range(70)]
    assert p["length"].between(0.5, 2.0).all() and p["length"].nunique() == 70
    s = res.summary["parameters"]["length"]
    assert s["law"] == "uniform(0.5, 2)" and s["instances"] == 70
    assert s["min"] == p["length"].min() and s["max"] == p["length"].max()


def test_grouped_statistics_in_the_files_the_dataset_and_the_plots(tmp_path):
    """[parameters] group_by: series.csv's group column ("all", then each group), the same
    ensemble rows as without groups, summary.json's groups against the kept instances'
    values and groups in states.h5, the dataset's group dimension, and chens plot's curves
    per group with the convergence figure of a step-size list."""
    pytest.importorskip("h5py")
    import numpy as np
    import pandas as pd

    study = {
        "model": {"kind": "pendulum"},
        "integrator": {"method": "rk4", "h": 0.05, "t_end": 2.0},
        "ensemble": {"size": 120, "perturbation": 1e-3},
        "projection": {"momentum": True},
        "output": {"sample_dt": 0.5, "states": True},
        "first_passage": {"energy_error": 1e-12},
        "parameters": {"length": "uniform(0.5, 2)", "h": [0.1, 0.05, 0.025], "group_by": "h"},
    }
    res, cli = run_both(tmp_path, study)
    expect_run_equals_files(res, cli)
    df = res.series
    labels = ["h=0.025", "h=0.05", "h=0.1"]
    assert list(df.columns[:3]) == ["group", "t", "live"]
    assert list(dict.fromkeys(df["group"])) == ["all"] + labels
    g = res.groups
    assert list(g.index) == labels and list(g["value"]) == [0.025, 0.05, 0.1]
    assert list(g["instances"]) == [40, 40, 40]
    # Each group's live count at t = 0 is its size; the groups add up to the ensemble.
    t0 = df[df["t"] == 0].set_index("group")["live"]
    assert t0["all"] == 120 and sum(t0[x] for x in labels) == 120
    fp = {e["group"]: e["first_passage"]["energy_error"] for e in res.summary["groups"]["groups"]}
    assert sum(fp[x]["crossed"] for x in labels) == res.summary["first_passage"]["energy_error"]["crossed"]
    # The ensemble's rows are those of the same study without groups, byte for byte.
    plain = dict(study, parameters={"length": "uniform(0.5, 2)", "h": [0.1, 0.05, 0.025]})
    alone = chens.run(plain, backend="cpu").files["series.csv"].decode().splitlines()
    grouped = res.files["series.csv"].decode().splitlines()
    assert [line[len("all,"):] for line in grouped if line.startswith("all,")] == alone[1:]
    assert grouped[0] == "group," + alone[0]
    # states.h5: each instance's group is the one of its h.
    st = res.states
    h = res.parameters["h"].to_numpy()
    assert np.array_equal(st["group"], np.searchsorted([0.025, 0.05, 0.1], h))
    ds = res.dataset()
    assert ds["energy_error"].dims == ("group", "time", "statistic")
    assert list(ds["group"].values) == ["all"] + labels
    assert ds["live"].sel(group="h=0.05").values[0] == 40
    sel = df[df["group"] == "h=0.1"]
    assert np.array_equal(ds["energy_error"].sel(group="h=0.1", statistic="p50").values, sel["energy_error_p50"].to_numpy())
    # chens plot: a curve per group, and the convergence figure of the step sizes.
    p = subprocess.run([EXE, "plot", str(cli)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    plots = os.listdir(cli / "plots")
    assert "convergence.png" in plots and "survival.png" in plots and "energy_error.png" in plots
    text = (cli / "plots" / "summary.txt").read_text()
    assert all(x in text for x in labels), text


def test_the_lyapunov_spectrum_by_group_and_by_instance(tmp_path):
    """output.lyapunov_spectrum with output.states and [parameters] group_by (docs/lyapunov.md):
    Result.lyapunov_spectrum is summary.json's statistics, indexed by (group, exponent) with
    "all" first; states.h5's /instances/lyapunov_spectrum holds each instance's exponents,
    whose first is its metric lyapunov; each group's min, max and mean are its members'."""
    pytest.importorskip("h5py")
    import numpy as np

    study = {
        "model": {"kind": "pendulum"},
        "integrator": {"formulation": "dirac", "method": "rk4", "h": 0.02, "t_end": 20.0},
        "ensemble": {"size": 24, "perturbation": 1e-2},
        "output": {"sample_dt": 5.0, "states": True, "lyapunov_spectrum": True},
        "parameters": {"length": [1.0, 2.0], "group_by": "length"},
    }
    res, cli = run_both(tmp_path, study)
    expect_run_equals_files(res, cli)
    ls = res.lyapunov_spectrum
    assert list(ls.index.names) == ["group", "exponent"]
    assert list(dict.fromkeys(ls.index.get_level_values("group"))) == ["all", "length=1", "length=2"]
    assert list(ls.columns) == ["mean", "rms", "min", "max", "p10", "p50", "p90", "p99"]
    assert ls.loc[("all", 1), "mean"] == res.summary["lyapunov_spectrum"]["final_mean"][0]
    st = res.states
    lam = st["lyapunov_spectrum"]
    assert lam.shape == (24, 2)
    import h5py

    with h5py.File(io.BytesIO(res.files["states.h5"]), "r") as f:
        columns = f["instances/final_metrics"].attrs["columns"]
        columns = (columns.decode() if isinstance(columns, bytes) else str(columns)).split(",")
        assert f["instances/lyapunov_spectrum"].attrs["columns"] in ("lambda1,lambda2", b"lambda1,lambda2")
    assert np.array_equal(lam[:, 0], st["final_metrics"][:, columns.index("lyapunov")])
    for g, label in enumerate(["length=1", "length=2"]):
        members = lam[st["group"] == g]
        assert len(members) == 12
        for k in range(2):
            row = ls.loc[(label, k + 1)]
            assert row["min"] == members[:, k].min() and row["max"] == members[:, k].max()
            assert row["mean"] == pytest.approx(members[:, k].mean(), rel=1e-13, abs=1e-15)
    # chens plot: the spectrum figure, a point per group and exponent, and its table.
    p = subprocess.run([EXE, "plot", str(cli)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "spectrum.png" in os.listdir(cli / "plots")
    text = (cli / "plots" / "summary.txt").read_text()
    table = text[text.index("lyapunov spectrum at t_final"):].splitlines()
    assert table[1].split()[0] == "length=1" and table[2].split()[0] == "length=2", text
    assert "%.4g" % ls.loc[("length=2", 1), "mean"] in table[2], text


def test_drawn_parameters_are_numpys_philox4x64(tmp_path):
    """Each instance's values against an independent Philox4x64-10 (numpy's): key (seed, 1),
    counter (instance, parameter, 0, 0); numpy increments its counter before a block, hence
    the counter - 1 (docs/parameter_ensembles.md, "Laws")."""
    pytest.importorskip("h5py")
    import math

    import numpy as np

    seed = 7
    study = {
        "model": {"kind": "pendulum"},
        "integrator": {"method": "rk4", "h": 0.1, "t_end": 1.0},
        "ensemble": {"size": 300, "seed": seed, "perturbation": 1e-3},
        "output": {"sample_dt": 0.5, "states": True},
        "parameters": {"mass": "normal(1, 0.05)", "length": "uniform(0.5, 2)", "gravity": "log-uniform(0.1, 10)"},
    }
    p = chens.run(study, backend="cpu").parameters
    ids = {"mass": 0, "length": 1, "gravity": 2}  # ParameterId

    def words(instance, name):  # the block at counter (instance, parameter, 0, 0)
        counter = (instance + (ids[name] << 64) - 1) % (1 << 256)
        return np.random.Philox(key=np.array([seed, 1], dtype=np.uint64), counter=counter).random_raw(2)

    def unit(word):
        return float(int(word) >> 11) * 2.0**-53

    for i in range(300):
        w = words(i, "mass")
        z = math.sqrt(-2.0 * math.log(1.0 - unit(w[0]))) * math.cos(6.283185307179586 * unit(w[1]))
        assert p["mass"][i] == pytest.approx(1.0 + 0.05 * z, rel=1e-15, abs=0), i
        u = unit(words(i, "length")[0])
        assert p["length"][i] == 0.5 + (2.0 - 0.5) * u, i
        u = unit(words(i, "gravity")[0])
        assert p["gravity"][i] == math.exp(math.log(0.1) + (math.log(10.0) - math.log(0.1)) * u), i


def test_a_sweep_equals_the_command_lines_study(tmp_path):
    res, cli = run_both(tmp_path, SWEEP)
    assert isinstance(res, chens.StudyResult)
    index = json.loads((cli / "study.json").read_text())
    assert list(res.runs) == [run["name"] for run in index["runs"]]
    for name, run in res.runs.items():
        expect_run_equals_files(run, cli / name)
    # comparison.csv: its timing columns aside, byte for byte
    import pandas as pd

    table = pd.read_csv(cli / "comparison.csv", float_precision="round_trip")
    timing = [c for c in table.columns if c.endswith("_s") or c.startswith("cost_")]  # seconds, their ratios and noise
    pd.testing.assert_frame_equal(res.comparison.drop(columns=timing), table.drop(columns=timing))
    ds = res.dataset()
    assert ds.sizes["run"] == 4 and "energy_error" in ds and ds.sizes["statistic"] == 8
    # [first_passage]: the surviving fractions of series.csv, and summary.json's counts
    assert "surviving_phi" in ds and "surviving_lost" in ds and ds["surviving_phi"].dims == ("run", "time")
    for run in res.runs.values():
        fp = run.summary["first_passage"]["phi"]
        assert fp["crossed"] + fp["lost_first"] + fp["never"] == 32
        assert run.series["surviving_phi"].iloc[-1] == fp["surviving_final"]


def test_work_precision_of_a_step_size_sweep(tmp_path):
    # RK2 and RK4 at three step sizes: the table holds comparison.csv's errors and costs, one
    # row per run, on the two methods' curves; at an error both reach, RK4 is cheaper in
    # right-hand-side evaluations (the closed form of the interpolation is tested in
    # tests/plot/test_work_precision.py).
    study = dict(PENDULUM, integrator={"formulation": "dirac", "t_end": 2.0},
                 sweep={"integrator.method": ["rk2", "rk4"], "integrator.h": [0.1, 0.05, 0.025]})
    res = chens.run(study, set={"ensemble.size": 32})
    wp = res.work_precision()
    table = res.comparison
    assert list(wp["run"]) == list(table["run"])
    assert set(wp["curve"]) == {"method=rk2", "method=rk4"}
    for column in ("integration_error_p50", "integration_error_max", "energy_error_p50", "rhs_evals", "steps"):
        assert list(wp[column]) == list(table[column]), column
    assert list(wp["integration_seconds"]) == list(table["integrate_s"])
    assert wp["usable"].all()
    worst_rk4 = wp[wp["method"] == "rk4"]["integration_error_p50"].max()
    best_rk2 = wp[wp["method"] == "rk2"]["integration_error_p50"].min()
    assert best_rk2 > worst_rk4  # so that the level below is one both curves reach
    cheapest = res.cheapest_at(best_rk2 * 1.01, cost="rhs_evals")
    assert list(cheapest["curve"]) == ["method=rk4", "method=rk2"] and cheapest["cheapest"].iloc[0]
    assert cheapest["bound"].iloc[0] == "<="  # RK4's cheapest run is already below it
    # A study whose runs differ in neither a step size nor a tolerance has no such table.
    with pytest.raises(ValueError, match="step size or a tolerance"):
        chens.run(SWEEP).work_precision()


def test_the_default_study_equals_the_command_lines(tmp_path):
    """The built-in default study (6 runs, 002 Table 1's phase errors), made smaller."""
    r = cli_run(["--backend", "cpu", "--set", "ensemble.size=256", "--out", "cli"], tmp_path)
    assert r.returncode == 0, r.stderr
    res = chens.run(set={"ensemble.size": 256}, backend="cpu")
    assert len(res.runs) == 6
    for name, run in res.runs.items():
        expect_run_equals_files(run, tmp_path / "cli" / name)
        assert [row["periods"] for row in run.phase_error["rows"]] == [2, 4, 10, 20, 30]
    # the tables chens run prints: the first holds timings, the phase-error table (002 Table 1) none
    assert res.table.split("Phase error")[1] == r.stdout.split("Phase error")[1]


def test_lost_instances_with_their_reasons(tmp_path):
    # the naive equations' residual drifts: instances beyond 3.5e-5 are lost (31 of 64)
    study = dict(PENDULUM, integrator={"formulation": "naive", "h": 0.05, "t_end": 5.0},
                 ensemble={"size": 64, "perturbation": 0.3, "lost_residual": 3.5e-5},
                 output={"sample_dt": 0.5, "states": True})
    res, cli = run_both(tmp_path, study)
    expect_run_equals_files(res, cli)
    lost = res.lost
    assert 0 < lost["total"] < 64 and lost["by_reason"]["residual_bound"] == lost["total"]
    assert len(lost["instances"]) == lost["total"] and set(lost["reasons"]) == {"residual_bound"}
    assert [e["instance"] for e in lost["examples"]] == list(lost["instances"][: len(lost["examples"])])


def test_file_toml_text_and_dict_give_the_same_results(tmp_path):
    study = toml_file(tmp_path, PENDULUM)
    a = chens.run(study, backend="cpu")
    b = chens.run(study.read_text(), backend="cpu")
    c = chens.run(PENDULUM, backend="cpu")
    d = chens.run(str(study), backend="cpu", set={"ensemble.size": 96})
    for x in (b, c, d):
        assert x.files["series.csv"] == a.files["series.csv"]
        assert without_timing(x.summary) == without_timing(a.summary)


def test_set_overrides_as_the_command_line(tmp_path):
    res, cli = run_both(tmp_path, PENDULUM, "--set", "integrator.method=dopri5", "--set", "integrator.rtol=1e-8",
                        set={"integrator.method": "dopri5", "integrator.rtol": 1e-8})
    expect_run_equals_files(res, cli)


def test_out_writes_the_command_lines_files(tmp_path):
    res, cli = run_both(tmp_path, PENDULUM, out=tmp_path / "py")
    expect_run_equals_files(res, tmp_path / "py")
    assert (tmp_path / "py" / "series.csv").read_bytes() == (cli / "series.csv").read_bytes()
    study = tmp_path / "study.toml"
    with pytest.raises(chens.StudyError, match="earlier"):  # as chens run without --force
        chens.run(study, backend="cpu", out=tmp_path / "py")
    chens.run(study, backend="cpu", out=tmp_path / "py", force=True)


@pytest.mark.parametrize("sets", [
    ["integrator.metod=rk4"],          # unknown key: did you mean
    ["integrator.method=rk5"],         # a value outside the allowed ones
    ["integrator.h=-1"],               # out of range
    ["ensemble.size=0"],
    ["model.kind=\"chain\"", "model.atoms=257"],  # beyond the chains compiled on first use
])
def test_bad_input_raises_the_command_lines_message(tmp_path, sets):
    study = toml_file(tmp_path, PENDULUM)
    args = [str(study), "--backend", "cpu"]
    for s in sets:
        args += ["--set", s]
    r = cli_run(args + ["--out", "cli"], tmp_path)
    assert r.returncode == 2
    expected = r.stderr.strip()
    assert expected.startswith("chens run: ")
    with pytest.raises(chens.StudyError) as e:
        chens._chens.run("file", str(study), sets, "cpu", 0, None, False, False)
    assert isinstance(e.value, ValueError)
    assert "chens run: " + str(e.value) == expected.splitlines()[0]


def test_bad_arguments_raise_study_error():
    with pytest.raises(chens.StudyError, match="backend"):
        chens.run(PENDULUM, backend="gpu")
    with pytest.raises(chens.StudyError):
        chens.run({"model": 3})


def test_cuda_without_a_gpu_raises_backend_error(tmp_path):
    study = toml_file(tmp_path, PENDULUM)
    cli = cli_run([str(study), "--backend", "cuda", "--out", "cli"], tmp_path)
    if cli.returncode == 0:
        pytest.skip("a GPU is usable here")
    assert cli.returncode == 3
    with pytest.raises(chens.BackendError) as e:
        chens.run(study, backend="cuda")
    assert "chens run: " + str(e.value) == cli.stderr.strip()


def test_the_gil_is_released_while_a_run_integrates():
    study = dict(PENDULUM, ensemble={"size": 8192, "perturbation": 1e-3}, integrator={"h": 0.01, "t_end": 50.0})
    done = threading.Event()
    result = {}

    def work():
        result["r"] = chens.run(study, backend="cpu", threads=1)
        done.set()

    t = threading.Thread(target=work)
    t0 = time.perf_counter()
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # Python runs here only while the run has let go of the GIL
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - t0
    assert elapsed > 0.2, "the run was too short to tell"
    assert ticks > 50, f"{ticks} ticks in {elapsed:.2f} s: the GIL was held"
    assert result["r"].summary["instances"] == 8192


def test_defaults_lists_every_key():
    d = chens.defaults()
    assert d["integrator.method"]["default"] == "rk4"
    assert "dopri5" in d["integrator.method"]["allowed"]
    assert d["ensemble.size"]["default"] == 1024
    assert all(v["meaning"] for v in d.values())


def test_sigint_stops_a_run_which_resumes_bitwise(tmp_path):
    """Ctrl-C (SIGINT) stops the run at its next stop point as in the command line and raises
    KeyboardInterrupt, Python's own SIGINT handler back in place; with `out` the checkpoint
    left behind is resumed by chens.resume to the uninterrupted run's files, bit for bit. In
    memory, nothing is written."""
    import signal

    # Large enough to outlast the 0.3 s before the signal with the CPU's widest lanes (AVX-512
    # runs this in about 2 s on one core).
    study = toml_file(tmp_path, dict(PENDULUM, ensemble={"size": 20000, "perturbation": 1e-3},
                                     integrator={"h": 0.005, "t_end": 20.0}))

    def interrupt_soon():
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)

    for out in (None, tmp_path / "py"):
        threading.Thread(target=interrupt_soon).start()
        with pytest.raises(KeyboardInterrupt) as e:
            chens.run(study, backend="cpu", threads=1, out=out)
        assert "interrupted (SIGINT)" in str(e.value)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert sorted(os.listdir(tmp_path)) == ["py", "study.toml"]
    assert (tmp_path / "py" / "checkpoint.chk").exists()
    resumed = chens.resume(tmp_path / "py", threads=1)
    whole = cli_run([str(study), "--backend", "cpu", "--threads", "1", "--out", "whole"], tmp_path)
    assert whole.returncode == 0, whole.stderr
    expect_run_equals_files(resumed, tmp_path / "whole")
    assert not (tmp_path / "py" / "checkpoint.chk").exists()


def test_an_interrupted_study_resumes_with_its_completed_runs(tmp_path):
    """A study interrupted in its second run: chens.resume finishes it, and its results hold
    every run, the one completed before the interruption read back from the directory."""
    import signal

    study = dict(SWEEP, ensemble={"size": 12000, "perturbation": 1e-3}, integrator={"h": 0.005, "t_end": 20.0})
    study["sweep"] = {"integrator.formulation": ["naive", "dirac"]}
    path = toml_file(tmp_path, study)
    first = {}

    def interrupt_in_the_second_run():
        t0 = time.monotonic()
        while not (tmp_path / "py" / "formulation=naive" / "summary.json").exists():
            if time.monotonic() - t0 > 120:
                return  # the test then fails, saying the run was not interrupted
            time.sleep(0.01)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_in_the_second_run, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        chens.run(path, backend="cpu", threads=1, out=tmp_path / "py")
    first["index"] = json.loads((tmp_path / "py" / "study.json").read_text())
    assert [r["status"] for r in first["index"]["runs"]] == ["complete", "interrupted"]
    res = chens.resume(tmp_path / "py", threads=1)
    whole = cli_run([str(path), "--backend", "cpu", "--threads", "1", "--out", "whole"], tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert list(res.runs) == ["formulation=naive", "formulation=dirac"]
    for name, run in res.runs.items():
        expect_run_equals_files(run, tmp_path / "whole" / name)


def test_check_reports_as_the_command_line(tmp_path):
    study = toml_file(tmp_path, PENDULUM)
    cli = subprocess.run([EXE, "check", str(study), "--backend", "cpu"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    report = chens.check(study, backend="cpu")

    def without_estimate(text):  # the run-time estimate comes from a timed calibration run
        return [ln for ln in text.splitlines() if not ln.startswith("# run time")]

    assert without_estimate(report) == without_estimate(cli.stdout)
    assert "# run time: about" in report
    with pytest.raises(chens.StudyError, match="integrator.h"):
        chens.check(study, set={"integrator.h": -1.0})


def test_validate_answers_as_the_command_line(tmp_path):
    study = toml_file(tmp_path, PENDULUM)
    cli = subprocess.run([EXE, "validate", str(study)], capture_output=True, text=True)
    if cli.returncode in (0, 4):  # a GPU: both backends ran
        assert bool(chens.validate(study)) == (cli.returncode == 0)
        return
    assert cli.returncode == 3
    with pytest.raises(chens.BackendError) as e:
        chens.validate(study)
    assert "chens validate: " + str(e.value) == cli.stderr.strip()
    with pytest.raises(chens.StudyError, match="one run"):
        chens.validate(SWEEP)


def test_plot_draws_a_written_run(tmp_path):
    pytest.importorskip("matplotlib")
    res = chens.run(PENDULUM, backend="cpu", out=tmp_path / "o")
    assert res.directory == tmp_path / "o"
    plots = chens.plot(res)
    assert plots == tmp_path / "o" / "plots"
    with pytest.raises(chens.StudyError, match="out="):
        chens.plot(chens.run(PENDULUM, backend="cpu"))
    assert (plots / "energy_error.png").stat().st_size > 0
    with pytest.raises(chens.StudyError):  # the script says why on stderr: no such directory
        chens.plot(tmp_path / "nothing")


def test_every_bad_input_case_of_the_command_line_raises_its_message(tmp_path):
    """Every --set case of tests/study_keys/messages.txt (each key with every probe value,
    and the keys given together, on every key's default) that the command line refuses:
    chens run --single exits 2, and the Python module raises StudyError with the message it
    prints after "chens run: "."""
    import concurrent.futures
    import re

    pinned = os.path.join(os.path.dirname(__file__), "..", "study_keys", "messages.txt")
    cases = []
    with open(pinned) as f:
        for line in f:
            lhs, outcome = line.rstrip("\n").split(" -> ", 1)
            if outcome != "ok":
                cases.append(re.findall(r'[\w.]+=(?:\[[^\]]*\]|"[^"]*"|\S+)', lhs))
    assert len(cases) > 900

    def cli(sets):
        args = [EXE, "run", "--single", "--backend", "cpu", "--out", str(tmp_path / "never")]
        for s in sets:
            args += ["--set", s]
        return subprocess.run(args, capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(cli, cases))
    for sets, answer in zip(cases, answers):
        assert answer.returncode == 2, (sets, answer.stderr)
        with pytest.raises(chens.StudyError) as e:
            chens._chens.run("single", "", sets, "cpu", 0, None, False, False)
        assert "chens run: " + str(e.value) == answer.stderr.strip(), sets
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("text", [
    None,                                  # no such file
    "[model\nkind = 1\n",                  # malformed TOML
    "[model]\nkind = \"pendulum\"\n\x00",  # a NUL byte
    "[modle]\nkind = \"pendulum\"\n",      # unknown section: did you mean
    "[sweep]\nintegrator.h = []\n",        # an empty sweep
    "[[run]]\nname = \"a\"\n[[run]]\nname = \"a\"\n",  # runs of one name
])
def test_bad_study_files_raise_the_command_lines_message(tmp_path, text):
    path = tmp_path / "study.toml"
    if text is not None:
        path.write_bytes(text.encode())
    r = cli_run([str(path), "--backend", "cpu", "--out", "never"], tmp_path)
    assert r.returncode == 2, r.stderr
    with pytest.raises(chens.StudyError) as e:
        chens.run(path, backend="cpu")
    assert "chens run: " + str(e.value) == r.stderr.strip()
    assert not (tmp_path / "never").exists()


def test_a_set_without_a_value_raises_the_command_lines_message(tmp_path):
    r = cli_run(["--single", "--backend", "cpu", "--set", "integrator.h", "--out", "never"], tmp_path)
    assert r.returncode == 2
    with pytest.raises(chens.StudyError) as e:
        chens._chens.run("single", "", ["integrator.h"], "cpu", 0, None, False, False)
    assert "chens run: " + str(e.value) == r.stderr.strip().splitlines()[0]


def test_threads_are_what_the_command_line_takes():
    # threads=0 used to be accepted (as every core) where --threads 0 is refused.
    for bad in (0, -1, 4097, 1.5, "2", True):
        with pytest.raises(chens.StudyError, match=r"threads = .*: must be an integer in \[1, 4096\]"):
            chens.run(PENDULUM, threads=bad)
        with pytest.raises(chens.StudyError, match="threads"):
            chens.check(PENDULUM, threads=bad)
    assert chens.run(PENDULUM, threads=1).summary["instances"] == 96


def test_a_missing_study_file_is_named_as_missing(tmp_path):
    # "studies/a=b.toml" holds "=" and was read as a TOML text: a parse error at 1:9.
    missing = str(tmp_path / "studies" / "a=b.toml")
    with pytest.raises(chens.StudyError, match="a=b.toml: no such study file"):
        chens.run(missing)
    with pytest.raises(chens.StudyError, match="no such study file"):
        chens.check(missing)


def test_surviving_fractions_are_floats_in_the_dataset():
    # A level nobody crosses reads as 1 in every row of series.csv, which pandas made int64.
    study = dict(PENDULUM, first_passage={"phi": 1.0, "lost": True})
    ds = chens.run(study).dataset()
    assert float(ds["surviving_lost"].min()) == 1.0
    for name in ("surviving_lost", "surviving_phi"):
        assert ds[name].dtype == "float64", name


def test_a_run_that_loses_every_instance_warns_and_returns_its_results():
    # Every instance over ensemble.lost_residual at its first sample: exit code 5 on the
    # command line, a warning here, and the results (with no statistics at t_final).
    study = dict(PENDULUM, integrator=dict(PENDULUM["integrator"], formulation="naive"),
                 ensemble=dict(PENDULUM["ensemble"], lost_residual=1e-300))
    with pytest.warns(chens.AllLostWarning, match="every instance was lost"):
        r = chens.run(study)
    assert r.summary["lost_instances"] == 96
    assert r.summary["live"]["final"] == 0 and r.summary["live"]["none_from"] is not None
    assert r.summary["energy_error"]["final_p50"] is None


def test_deep_nesting_is_a_study_error_not_a_crash():
    # A dotted key of 50,000 parts overflowed the TOML parser's stack and killed the interpreter.
    with pytest.raises(chens.StudyError, match="a dotted key of more than 17 parts"):
        chens.check("a." * 49999 + "a = 1\n")
