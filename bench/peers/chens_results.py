#!/usr/bin/env python3
"""chens's own pendulum throughput as JSON lines in the peers' format (run_peers.sh).

  chens_results.py bench FILE.json        Google Benchmark JSON of bench_gpu_instances
                                          (BM_GpuPendulum, and BM_GpuEnsemblePendulum of
                                          older versions: medians when repetitions were
                                          aggregated)
  chens_results.py run SUMMARY.json...    summary.json of `chens run` studies; instance 0's
                                          final state is checked against numpy_reference.py

Both integrate the peers' problem (Hamilton-Dirac pendulum, RK4, h = 0.01, t in [0, 10],
perturbation 1e-3). bench_gpu_instances's BM_GpuPendulum (bench/bench_gpu_instances.cpp)
projects at tol 1e-6 (versions without the projections_per_step counter did not), evaluates
the closed-form reference and reduces statistics at 11 sample times on the device, and
times the whole call: initial data on the device, allocation, integration, reductions and
transfers; a second line ("kernels ...") gives the integration kernels alone, from the same
run's kernel_instance_steps_per_s.
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy_reference as ref  # noqa: E402

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
PENDULUM = ("BM_GpuPendulum", "BM_GpuEnsemblePendulum")


def bench_records(path, device):
    with open(path) as fh:
        data = json.load(fh)
    rows = data.get("benchmarks", [])
    medians = [r for r in rows if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median"]
    use = medians if medians else [r for r in rows if r.get("run_type", "iteration") == "iteration"]
    out = []
    for r in use:
        m = re.match(r"(BM_\w+)/(\d+)", r.get("run_name") or r.get("name", ""))
        if not m or m.group(1) not in PENDULUM:
            continue
        # The benchmark's study is in bench/bench_gpu_instances.cpp; the version that counts
        # projections (projections_per_step) projects at tol 1e-6, earlier ones did not.
        projecting = "projections_per_step" in r
        tol = 1e-6 if projecting else None
        rec = {"tool": "chens", "variant": "bench %s tol=%s" % (m.group(1), ref.tol_label(tol)),
               "instances": int(m.group(2)), "device": device, "dtype": "float64", "tol": ref.tol_label(tol),
               "projection": ref.projection_label(tol), "method": "classical RK4",
               "source": "bench_gpu_instances " + m.group(1)}
        if r.get("error_occurred"):
            rec["error"] = r.get("error_message", "benchmark error")
        else:
            rate = r.get("instance_steps_per_s")
            seconds = r["real_time"] * UNIT.get(r.get("time_unit", "ns"), 1e-9)
            rec.update(steps=ref.STEPS, seconds=seconds, instance_steps_per_s=rate,
                       statistic="median of repetitions" if medians else "single run",
                       max_abs_diff_vs_numpy=None)
            for key in ("projections_per_step", "fp64_flops_per_s", "first_result_s"):
                if key in r:
                    rec[key] = r[key]
        out.append(rec)
        # The integration kernels alone (EnsembleResult::device_seconds), from the same run.
        if not r.get("error_occurred") and r.get("kernel_instance_steps_per_s"):
            k = dict(rec)
            k["variant"] = "kernels %s tol=%s" % (m.group(1), ref.tol_label(tol))
            k["instance_steps_per_s"] = r["kernel_instance_steps_per_s"]
            k["seconds"] = int(m.group(2)) * ref.STEPS / r["kernel_instance_steps_per_s"]
            k["source"] = "bench_gpu_instances %s, kernel_instance_steps_per_s" % m.group(1)
            out.append(k)
    return out


def run_record(path):
    with open(path) as fh:
        s = json.load(fh)
    st = s["study"]
    tol = float(st["projection"]["tol"]) if st["projection"].get("momentum") else None
    n = int(s["instances"])
    chk = ref.compare_chens(path)
    rec = {"tool": "chens", "variant": "chens run tol=%s" % ref.tol_label(tol), "instances": n,
           "device": s.get("device"), "dtype": "float64", "tol": ref.tol_label(tol),
           "projection": ref.projection_label(tol), "method": "classical RK4",
           "steps": int(s["steps"]) // max(n, 1), "seconds": s.get("wall_seconds"),
           "instance_steps_per_s": s.get("instance_steps_per_second"),
           "max_abs_diff_vs_numpy": chk.get("max_abs_diff"), "diff_of": "instance 0 (nominal data)",
           "momentum_projections": s.get("projections", {}).get("momentum"),
           "lost_instances": s.get("lost_instances"), "backend": s.get("backend"),
           "source": "chens run, one run (wall_seconds of the ensemble run)"}
    if chk.get("error"):
        rec["check"] = "not comparable: " + chk["error"]
    else:
        d = chk.get("max_abs_diff")
        rec["check"] = "ok" if (d is not None and d <= ref.DIFF_LIMIT) else "FAILED"
    return rec


def main(argv):
    if len(argv) < 2 or argv[0] not in ("bench", "run"):
        print(__doc__, file=sys.stderr)
        return 2
    ok = True
    if argv[0] == "bench":
        device = os.environ.get("CHENS_DEVICE", "")
        for rec in bench_records(argv[1], device):
            ref.emit(rec)
            ok = ok and "error" not in rec
    else:
        for p in argv[1:]:
            try:
                rec = run_record(p)
            except Exception as e:  # noqa: BLE001
                rec = {"tool": "chens", "variant": "chens run", "error": ref.short(e), "source": p}
            ref.emit(rec)
            ok = ok and rec.get("check") == "ok"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
