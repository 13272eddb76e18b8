"""chens: ensembles of constrained Hamiltonian systems, from Python (docs/python.md).

    import chens
    s = chens.run(set={"ensemble.size": 256})  # the built-in default study: 6 runs
    r = s.runs["formulation=dirac_momentum=true"]
    r.summary["lost"], r.series[["t", "energy_error_max"]], s.dataset()

`run` runs a study in memory with `chens run`'s own code (the compiled module `_chens`):
the same study sources and overrides, checks, messages, backend choice and numbers. The
results are the bytes of the files `chens run` writes (summary.json, series.csv, states.h5,
trajectory.csv, periodogram.csv, comparison.csv), read into Python objects, so every number
equals the command line's files bit for bit; with `out` the files are written too, exactly
as the command line writes them.
"""

import io
import json
import math
import os
import re
import tomllib
import warnings

from . import _chens

__all__ = ["run", "resume", "check", "validate", "plot", "defaults", "Result", "StudyResult", "Validation",
           "StudyError", "BackendError", "AllLostWarning"]

#: Bad input (a study key, a value, a --set override, run's arguments): the message is the
#: one `chens run` prints after "chens run: ".
StudyError = _chens.StudyError


class BackendError(RuntimeError):
    """backend="cuda" where no GPU (or no kernel for the study) is usable; the message says why."""


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key):
    # "integrator.h" is a dotted key (as in [sweep] and [[run]]); other parts are quoted.
    return ".".join(p if _BARE_KEY.match(p) else json.dumps(p) for p in str(key).split("."))


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)  # the shortest text that reads back to the same double
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if hasattr(v, "item"):  # numpy scalars
        return _toml_value(v.item())
    raise StudyError(f"{v!r}: a study value must be a bool, number, string or list, not {type(v).__name__}")


def _flat(prefix, table):
    # key = value lines of a table, nested tables as dotted keys.
    for k, v in table.items():
        key = f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)
        if isinstance(v, dict):
            yield from _flat(key, v)
        else:
            yield f"{key} = {_toml_value(v)}"


def _to_toml(study):
    """A study given as a dict ({"model": {"kind": "chain"}, "run": [{...}, ...]}) as TOML."""
    lines = []
    for section, body in study.items():
        if isinstance(body, dict):
            lines.append(f"[{_toml_key(section)}]")
            lines.extend(_flat("", body))
        elif isinstance(body, (list, tuple)) and body and all(isinstance(x, dict) for x in body):
            for entry in body:
                lines.append(f"[[{_toml_key(section)}]]")
                lines.extend(_flat("", entry))
        else:
            raise StudyError(f"{section}: a study's top level holds sections (dicts) and [[run]] lists, "
                             f"not {type(body).__name__}")
        lines.append("")
    return "\n".join(lines)


def _source(study):
    if study is None:
        return "default", ""
    if isinstance(study, dict):
        return "text", _to_toml(study)
    if isinstance(study, os.PathLike):
        return "file", os.fspath(study)
    if isinstance(study, str):
        # An existing file's path; a line ending in .toml is a path too, even with "=" in it
        # ("studies/a=b.toml"), which the loader says does not exist; else a TOML text (it
        # holds "=" or a table header); else a path.
        one_line = "\n" not in study
        if one_line and (os.path.isfile(study) or study.strip().endswith(".toml")):
            return "file", study
        if not one_line or "=" in study or study.lstrip().startswith("["):
            return "text", study
        return "file", study
    raise StudyError(f"study: a path, a TOML text or a dict, not {type(study).__name__}")


def _message(text):
    # A command's stderr without its "chens <command>: " prefixes: the error's message.
    lines = [re.sub(r"^chens [a-z]+: ", "", ln) for ln in text.strip().splitlines()]
    return "\n".join(lines)


class AllLostWarning(UserWarning):
    """A run lost every instance (chens run's exit code 5): its files are written, but hold no
    statistics at t_final (summary.json "live")."""


def _threads(threads):
    # As --threads: None is every core, else an integer in [1, 4096] (0 is not "every core").
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 4096:
        raise StudyError(f"threads = {threads!r}: must be an integer in [1, 4096], or None for every core")
    return threads


def _raise_for(code, messages, command):
    # chens' exit codes (cli.hpp) as exceptions.
    if code == 5:  # exit_all_lost: the results exist; say what they lack
        said = [ln for ln in _message(messages).splitlines() if "every instance" in ln]
        warnings.warn(said[-1] if said else "every instance of a run was lost", AllLostWarning, stacklevel=3)
        return
    if code in (130, 138, 143):  # SIGINT, SIGUSR1, SIGTERM: a checkpoint where `out` was given
        raise KeyboardInterrupt(_message(messages))
    if code == 2:
        raise StudyError(_message(messages))
    if code == 3:
        raise BackendError(_message(messages))
    if code != 0:
        raise RuntimeError(_message(messages) or f"chens {command} failed (exit code {code})")


class Result:
    """One run's results: the content of the files `chens run` writes for it."""

    def __init__(self, name, overrides, files, directory=None):
        self.name = name
        self.overrides = dict(overrides)
        #: where `out` wrote the files (a pathlib.Path), or None for a run in memory
        self.directory = directory
        #: the run's files as `chens run` writes them: name -> bytes
        self.files = dict(files)
        #: summary.json as a dict
        self.summary = json.loads(self.files["summary.json"])

    @property
    def series(self):
        """series.csv as a pandas DataFrame (the same columns; nan where no instance is live)."""
        import pandas as pd

        return pd.read_csv(io.BytesIO(self.files["series.csv"]), float_precision="round_trip")

    @property
    def trajectory(self):
        """trajectory.csv (output.trajectory) as a DataFrame, or None."""
        import pandas as pd

        b = self.files.get("trajectory.csv")
        return None if b is None else pd.read_csv(io.BytesIO(b), float_precision="round_trip")

    @property
    def periodogram(self):
        """periodogram.csv (output.periodogram) as a DataFrame, or None."""
        import pandas as pd

        b = self.files.get("periodogram.csv")
        return None if b is None else pd.read_csv(io.BytesIO(b), float_precision="round_trip")

    def _h5_group(self, group):
        # Every dataset of one group of states.h5, by its path inside the group.
        b = self.files.get("states.h5")
        if b is None:
            return None
        import h5py

        arrays = {}
        with h5py.File(io.BytesIO(b), "r") as f:
            if group not in f:
                return None
            f[group].visititems(lambda name, obj: arrays.__setitem__(name, obj[()])
                                if isinstance(obj, h5py.Dataset) else None)
        return arrays

    @property
    def states(self):
        """states.h5's /instances (output.states) as numpy arrays by name: index,
        initial_state, initial_physical, final_state, final_physical, final_metrics, lost,
        counters/<counter>, first_passage ([first_passage]), lyapunov_spectrum
        (output.lyapunov_spectrum: instances x exponents, the largest first), parameters
        ([parameters]) and group ([parameters] group_by); None where the run kept no states."""
        return self._h5_group("instances")

    @property
    def parameters(self):
        """[parameters] (docs/parameter_ensembles.md): each kept instance's values of the
        parameters the study varies, a DataFrame with one column per parameter indexed by the
        instance's index (states.h5's /instances/parameters and /instances/index); None
        without output.states or without [parameters]."""
        b = self.files.get("states.h5")
        if b is None:
            return None
        import h5py
        import pandas as pd

        with h5py.File(io.BytesIO(b), "r") as f:
            if "instances/parameters" not in f:
                return None
            d = f["instances/parameters"]
            columns = d.attrs["columns"]
            columns = columns.decode() if isinstance(columns, bytes) else str(columns)
            return pd.DataFrame(d[()], columns=columns.split(","),
                                index=pd.Index(f["instances/index"][()], name="instance"))

    @property
    def initial_states(self):
        """Every kept instance's initial state (formulation variables, instances x components), or None."""
        s = self.states
        return None if s is None else s["initial_state"]

    @property
    def final_states(self):
        """Every kept instance's final state (formulation variables, instances x components), or None."""
        s = self.states
        return None if s is None else s["final_state"]

    @property
    def recorded(self):
        """states.h5's /trajectories (output.record) as numpy arrays by name: instances, t,
        state (instances x samples x components), reference, metrics, measured; or None."""
        return self._h5_group("trajectories")

    @property
    def phase_error(self):
        """summary.json's phase-error table where the run has one, else None."""
        return self.summary.get("phase_error")

    @property
    def lost(self):
        """The lost instances: "total", "by_reason" and the first few as "examples"
        (summary.json's lost_instances, lost, lost_examples); where the run kept states
        (output.states), every lost kept instance's index ("instances") and reason
        ("reasons"), from states.h5's /instances/lost and its "codes"."""
        s = self.summary
        out = {"total": s["lost_instances"], "by_reason": s["lost"], "examples": s["lost_examples"]}
        b = self.files.get("states.h5")
        if b is not None:
            import h5py

            with h5py.File(io.BytesIO(b), "r") as f:
                if "instances/lost" in f:
                    codes = f["instances/lost"].attrs["codes"]
                    codes = codes.decode() if isinstance(codes, bytes) else str(codes)
                    names = dict(c.split(" ", 1) for c in codes.split(", "))
                    lost = f["instances/lost"][()]
                    out["instances"] = f["instances/index"][()][lost != 0]
                    out["reasons"] = [names[str(int(c))] for c in lost[lost != 0]]
        return out

    @property
    def groups(self):
        """[parameters] group_by (docs/parameter_ensembles.md): one row per group, indexed by
        its label (series.csv's group column), with its value (a list's) or its bin's min and
        max, instances and lost_instances (summary.json's "groups"); None without groups."""
        g = self.summary.get("groups")
        if g is None:
            return None
        import pandas as pd

        keys = ["value"] if not g["bins"] else ["min", "max"]
        rows = [{k: e[k] for k in ["group"] + keys + ["instances", "lost_instances"]} for e in g["groups"]]
        return pd.DataFrame(rows).set_index("group")

    @property
    def lyapunov_spectrum(self):
        """output.lyapunov_spectrum (docs/lyapunov.md): the statistics of each finite-time
        Lyapunov exponent over the live instances at the last sample time (summary.json's
        "lyapunov_spectrum"), a DataFrame with one row per exponent (1 = the largest) and the
        columns mean, rms, min, max, p10, p50, p90, p99. With [parameters] group_by the rows are
        indexed by (group, exponent), group "all" (the ensemble) first, then each group's label.
        Each kept instance's exponents are states["lyapunov_spectrum"]. None without the spectrum."""
        top = self.summary.get("lyapunov_spectrum")
        if top is None:
            return None
        import pandas as pd

        stats = ["mean", "rms", "min", "max", "p10", "p50", "p90", "p99"]

        def table(j):
            k = int(j["exponents"])
            return pd.DataFrame({st: j[f"final_{st}"] for st in stats},
                                index=pd.Index(range(1, k + 1), name="exponent"), dtype=float)

        g = self.summary.get("groups")
        if g is None:
            return table(top)
        parts = {"all": table(top)}
        for e in g["groups"]:
            parts[e["group"]] = table(e["lyapunov_spectrum"])
        return pd.concat(parts, names=["group", "exponent"])

    def dataset(self):
        """The series as an xarray Dataset: dimensions time and statistic, one variable per
        metric, live and each surviving_<level> (time only), the resolved study (summary.json's
        "study") in the attributes. With [parameters] group_by every variable has a first
        dimension group: "all" (the ensemble), then each group's label."""
        import numpy as np
        import xarray as xr

        df = self.series
        stats = ["mean", "rms", "min", "max", "p10", "p50", "p90", "p99"]
        metrics = [c[: -len("_mean")] for c in df.columns if c.endswith("_mean")]
        grouped = "group" in df.columns
        labels = list(dict.fromkeys(df["group"])) if grouped else [None]
        parts = [df[df["group"] == g] if grouped else df for g in labels]

        def stacked(f):
            a = [f(p) for p in parts]
            return np.stack(a) if grouped else a[0]

        lead = ("group",) if grouped else ()
        data = {m: (lead + ("time", "statistic"),
                    stacked(lambda p: np.column_stack([p[f"{m}_{s}"].to_numpy() for s in stats])))
                for m in metrics}
        data["live"] = (lead + ("time",), stacked(lambda p: p["live"].to_numpy()))
        # [first_passage]: the surviving fraction of each level (docs/first_passage.md)
        # (fractions: float even where every value reads as an integer, e.g. 1 before any loss)
        for c in df.columns:
            if c.startswith("surviving_"):
                data[c] = (lead + ("time",), stacked(lambda p: p[c].to_numpy(dtype=np.float64)))
        attrs = {"name": self.name, "study": json.dumps(self.summary.get("study", {}))}
        coords = {"time": parts[0]["t"].to_numpy(), "statistic": stats}
        if grouped:
            coords["group"] = labels
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def __repr__(self):
        return f"<chens.Result {self.name or 'single run'}: {sorted(self.files)}>"


class StudyResult:
    """A study of several runs ([sweep], [[run]], the built-in default study)."""

    def __init__(self, runs, comparison_csv, table, directory=None):
        #: run name -> Result, in the study's order
        self.runs = runs
        #: where `out` wrote the study, or None for a study in memory
        self.directory = directory
        self._comparison = comparison_csv
        #: the comparison table `chens run` prints
        self.table = table

    @property
    def comparison(self):
        """comparison.csv as a DataFrame."""
        import pandas as pd

        return pd.read_csv(io.StringIO(self._comparison), float_precision="round_trip")

    def work_precision(self, min_live=0.5):
        """The work-precision table (issue 43; `chens plot`'s work_precision figure and
        summary.txt table), a DataFrame of one row per run: its varied keys, `curve` (the
        varied keys other than the step size and tolerances), formulation, method, h, the
        achieved errors at t_final (integration_error_p50/_max, energy_error_p50/_max), the
        costs (integration_seconds: comparison.csv's integrate_s, wall_s on the GPU as
        `seconds_from` says; cost_s, steps, rhs_evals: the noise-free cost;
        reference_rhs_evals), instances, live_final, and `usable`/`left_out` (runs whose
        live fraction at t_final is below min_live are a few survivors' and stay off the
        curves). Raises ValueError when the runs do not differ in integrator.h, rtol, atol,
        tol or steps_per_oscillation."""
        import pandas as pd

        from . import work_precision as wp

        columns, rows = wp.table(self._comparison, min_live)
        return pd.DataFrame(rows, columns=columns)

    def cheapest_at(self, error, metric="integration_error_p50", cost="integration_seconds", min_live=0.5):
        """Which curve of the work-precision table reaches `error` of `metric` cheapest by
        `cost` ("integration_seconds" or "rhs_evals"): a DataFrame of one row per curve,
        cheapest first, with the cost (interpolated in log-log between the two runs around
        the error), `bound` ("=", "<=" where the curve's cheapest run is already below it,
        "" and cost None where no run of the curve reaches it), the runs it is read from
        and `cheapest`."""
        import pandas as pd

        from . import work_precision as wp

        _, rows = wp.table(self._comparison, min_live)
        return pd.DataFrame(wp.cheapest_at(rows, error, metric, cost),
                            columns=["curve", "cost", "bound", "runs", "cheapest"])

    def dataset(self):
        """Every run's dataset along a run dimension (runs of one time grid)."""
        import xarray as xr

        names = list(self.runs)
        return xr.concat([self.runs[n].dataset() for n in names], dim="run", combine_attrs="drop").assign_coords(run=names)

    def __repr__(self):
        return f"<chens.StudyResult of {len(self.runs)} runs: {list(self.runs)}>"


def run(study=None, *, set=None, backend="auto", threads=None, out=None, force=False, progress=False):
    """Runs a study as `chens run` does and returns its results.

    study: a study file's path, a TOML text, a dict with the file's sections and keys, or
        None for the built-in default study (as `chens run` without a file).
    set: {"section.key": value} overrides, applied to every run as --set.
    backend: "auto", "cpu" or "cuda"; threads: CPU threads (None: every core).
    out: an output directory: the files are written there exactly as `chens run --out` writes
        them (force: --force). None: nothing is written.
    Returns a Result for a single run, a StudyResult for several. Raises StudyError for bad
    input (threads not None or an integer in [1, 4096] included), BackendError where
    backend="cuda" cannot run, KeyboardInterrupt when SIGINT stopped the run (with `out`, a
    checkpoint to resume from as the command line leaves). A run that lost every instance
    (exit code 5) is returned with an AllLostWarning.
    """
    source, text = _source(study)
    sets = [f"{k}={_toml_value(v)}" for k, v in (set or {}).items()]
    return _results(_chens.run(source, text, sets, backend, _threads(threads),
                               None if out is None else os.fspath(out), bool(force), bool(progress)), out)


def resume(out, *, threads=None, progress=False):
    """Continues the run or study that SIGINT (or SIGTERM, SIGUSR1) interrupted in directory `out`,
    as `chens run --resume OUT` does, on the backend that wrote its checkpoints; returns its
    results (read back from `out`, the runs completed before the interruption included)."""
    return _results(_chens.run("resume", os.fspath(out), [], "auto", _threads(threads), None,
                               False, bool(progress)), out)


def _results(r, out):
    import pathlib

    _raise_for(r["code"], r["messages"], "run")
    top = None if out is None else pathlib.Path(out)
    runs = {x["name"]: Result(x["name"], x["overrides"], x["files"], None if top is None else top / x["name"])
            for x in r["runs"]}
    if not r["several"]:
        return next(iter(runs.values()))
    return StudyResult(runs, r["comparison_csv"], r["table"], top)


def check(study=None, *, set=None, backend="auto", threads=None):
    """chens check: the study read, resolved and refused as `chens run` would, its resolved
    keys, memory and an estimate of its run time (a short calibration run); returns that
    report (what `chens check` prints). Raises as run does."""
    source, text = _source(study)
    sets = [f"{k}={_toml_value(v)}" for k, v in (set or {}).items()]
    r = _chens.command("check", source, text, sets, backend, _threads(threads), -1.0, -1.0)
    _raise_for(r["code"], r["messages"], "check")
    return r["report"]


class Validation:
    """chens validate's outcome: `ok` (CPU and GPU agree within the tolerance) and its report."""

    def __init__(self, ok, report):
        self.ok = ok
        self.report = report

    def __bool__(self):
        return self.ok

    def __str__(self):
        return self.report

    def __repr__(self):
        return f"<chens.Validation ok={self.ok}>"


def validate(study=None, *, set=None, threads=None, rtol=None, atol=None):
    """chens validate: one run of the study on the CPU and on the GPU, compared instance by
    instance and statistic by statistic (rtol, atol: None for the step-scaled defaults of
    docs/study-format.md). Returns a Validation; raises BackendError without a usable GPU."""
    source, text = _source(study)
    if source == "default":
        source = "single"  # as chens validate without a study file: every key's default
    sets = [f"{k}={_toml_value(v)}" for k, v in (set or {}).items()]
    r = _chens.command("validate", source, text, sets, "auto", _threads(threads),
                       -1.0 if rtol is None else float(rtol), -1.0 if atol is None else float(atol))
    if r["code"] == 4:  # exit_mismatch
        return Validation(False, r["report"])
    _raise_for(r["code"], r["messages"], "validate")
    return Validation(True, r["report"])


def plot(result_or_directory, *options):
    """chens plot DIRECTORY [options]: the figures of a run or study written with `out` (a
    Result or StudyResult that was, or its directory), into DIRECTORY/plots/, which it
    returns. Its script (scripts/plot_study.py) prints on this process's stdout and stderr; a
    directory it cannot plot raises StudyError (exit 2)."""
    import pathlib

    directory = result_or_directory
    if isinstance(result_or_directory, (Result, StudyResult)):
        directory = result_or_directory.directory
        if directory is None:
            raise StudyError("chens.plot draws the files of a run: run it with out=DIRECTORY first")
    code, _, err = _chens.cli(["plot", os.fspath(directory), *map(str, options)])
    _raise_for(code, err, "plot")
    return pathlib.Path(directory) / "plots"


def defaults():
    """Every study key ("section.key") with its default and allowed values, as `chens keys` lists them."""
    out = {}
    for k in _chens.keys():
        default = None
        if k["default_toml"] is not None:
            default = tomllib.loads("v = " + k["default_toml"])["v"]
        out[f"{k['section']}.{k['name']}"] = {"default": default, "default_note": k["default_note"],
                                               "allowed": k["allowed"], "meaning": k["meaning"]}
    return out
