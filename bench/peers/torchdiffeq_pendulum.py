#!/usr/bin/env python3
"""PyTorch peers of chens's GPU pendulum benchmark: torchdiffeq.odeint and a plain torch loop.

Both integrate the Hamilton-Dirac equations of the Cartesian pendulum (m = l = g = 1;
numpy_reference.py documents the formulas) in float64 on the GPU, all instances as one
batched problem:

- tool "torchdiffeq", variant "odeint rk4 fixed grid": torchdiffeq.odeint(method="rk4",
  options={"step_size": h}) on a (4, instances) tensor, t = [0, steps*h] (T nudged down by
  an ulp where torchdiffeq's grid ceil(T/h + 1) would otherwise add a step), under
  torch.no_grad(). torchdiffeq's "rk4" is the 3/8 RULE, not classical RK4: its RK4 solver
  calls rk4_alt_step_func (torchdiffeq/_impl/fixed_grid.py, rk_common.py), 4 right-hand
  sides per step like classical RK4; the JSON field "method" says so and the numpy check
  uses the same 3/8 formula. NO projection: odeint's step loop has no hook for modifying
  the state after a step. steps_taken = right-hand-side calls / 4.
- tool "pytorch", variant "torch_loop tol=...": what a PyTorch user writes by hand: a
  Python loop of classical RK4 steps on four (instances,) tensors (x, y, px, py) with the
  momentum projection where |psi| > tol (torch.where), eager mode, under torch.no_grad().
  --loop-tols chooses the tolerances (default 1e-6; "none" = no projection).

Timing: torch.cuda.synchronize() around each run; a 20-step probe run first (warm-up, and
its time per step chooses the steps of the size: reduced from --steps, not below
--min-steps, when one run would take longer than --target-seconds), then --reps runs,
the best reported. Times cover the integration only (initial data are generated on the
host by numpy and copied to the device before).

Correctness: the first 8 instances are integrated by numpy_reference.py with the same
initial data, steps, method and tolerance; max_abs_diff_vs_numpy > 1e-10 makes the script
exit 1 (after printing everything). Exit codes otherwise as jax_pendulum.py (2: torch not
importable; torchdiffeq missing alone only gives its JSON error line).
"""

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

sys.dont_write_bytecode = True  # keep bench/peers free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import numpy_reference as ref  # noqa: E402

PROBE_STEPS = 20


def rhs_stacked(torch):
    def rhs(t, z):
        # Hamilton-Dirac, m = l = g = 1 (hamilton_dirac.hpp with pendulum.hpp's primitives).
        x, y, px, py = z.unbind(0)
        f = 1.0 / (x * x + y * y)
        nu = (x * px + y * py) * f
        lam = (px * px + py * py - y) * f
        return torch.stack((px - nu * x,
                            py - nu * y,
                            -lam * x + nu * px,
                            -lam * y + nu * py - 1.0))
    return rhs


def grid_end(steps, h):
    """t1 with torchdiffeq's step_size grid of exactly `steps` steps (ceil((t1-t0)/h + 1))."""
    t1 = steps * h
    for _ in range(8):
        if math.ceil((t1 - 0.0) / h + 1.0) == steps + 1:
            return t1
        t1 = float(np.nextafter(t1, 0.0))
    return steps * h  # the step count is checked through the right-hand-side calls


class TorchDiffeqRunner:
    tool = "torchdiffeq"
    method = "3/8 rule (torchdiffeq method='rk4' = rk4_alt_step_func)"
    ref_method = "rk4_38"
    tol = None

    def __init__(self, torch, torchdiffeq, h):
        self.torch, self.odeint, self.h = torch, torchdiffeq.odeint, h
        self.variant = "odeint rk4 fixed grid"
        self.calls = 0
        inner = rhs_stacked(torch)

        def counted(t, z):
            self.calls += 1
            return inner(t, z)
        self.func = counted

    def setup(self, z_host_n, device):
        self.z0 = self.torch.from_numpy(np.ascontiguousarray(z_host_n)).to(device)

    def run(self, steps):
        torch = self.torch
        t = torch.tensor([0.0, grid_end(steps, self.h)], dtype=torch.float64, device=self.z0.device)
        self.calls = 0
        with torch.no_grad():
            sol = self.odeint(self.func, self.z0, t, method="rk4", options={"step_size": self.h})
        self.steps_taken = self.calls // 4
        return sol[-1]

    def first(self, out, k):
        return out[:, :k].cpu().numpy()

    def all_finite(self, out):
        return bool(self.torch.isfinite(out).all().item())

    def release(self):
        self.z0 = None


class TorchLoopRunner:
    tool = "pytorch"
    method = "classical RK4"
    ref_method = "rk4"

    def __init__(self, torch, h, tol):
        self.torch, self.h, self.tol = torch, h, tol
        self.variant = "torch_loop tol=%s" % ref.tol_label(tol)
        self.steps_taken = None

    def setup(self, z_host_n, device):
        self.z0 = tuple(self.torch.from_numpy(np.ascontiguousarray(z_host_n[c])).to(device) for c in range(4))

    def run(self, steps):
        torch, h, tol = self.torch, self.h, self.tol
        a2, a3, b1, b2 = h * 0.5, h * 1.0, h * (1.0 / 6.0), h * (1.0 / 3.0)  # chens: h*a_ij, h*b_i

        def rhs(x, y, px, py):
            f = 1.0 / (x * x + y * y)
            nu = (x * px + y * py) * f
            lam = (px * px + py * py - y) * f
            return (px - nu * x, py - nu * y, -lam * x + nu * px, -lam * y + nu * py - 1.0)

        s = self.z0
        with torch.no_grad():
            for _ in range(steps):
                k1 = rhs(*s)
                k2 = rhs(*[s[c] + a2 * k1[c] for c in range(4)])
                k3 = rhs(*[s[c] + a2 * k2[c] for c in range(4)])
                k4 = rhs(*[s[c] + a3 * k3[c] for c in range(4)])
                s = tuple(s[c] + b1 * k1[c] + b2 * k2[c] + b2 * k3[c] + b1 * k4[c] for c in range(4))
                if tol is not None:
                    x, y, px, py = s
                    psi = x * px + y * py
                    lam = psi * (1.0 / (x * x + y * y))
                    need = psi.abs() > tol
                    s = (x, y, torch.where(need, px - lam * x, px), torch.where(need, py - lam * y, py))
        self.steps_taken = steps
        return s

    def first(self, out, k):
        return np.stack([o[:k].cpu().numpy() for o in out])

    def all_finite(self, out):
        return all(bool(self.torch.isfinite(o).all().item()) for o in out)

    def release(self):
        self.z0 = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ref.common_arguments(ap, sizes="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--loop-tols", type=ref.parse_tols, default=ref.parse_tols("1e-6"),
                    help="tolerances of the torch_loop variant ('none': no projection; '' skips it)")
    ap.add_argument("--no-torchdiffeq", action="store_true", help="only the torch_loop variant")
    args = ap.parse_args()

    try:
        import torch
    except ImportError as e:
        ref.emit({"tool": "torchdiffeq", "error": "module not found", "message": ref.short(e)})
        ref.emit({"tool": "pytorch", "error": "module not found", "message": ref.short(e)})
        return 2
    if torch.cuda.is_available():
        dev = torch.device("cuda")
        device = "%s (cuda)" % torch.cuda.get_device_name(0)
    elif args.allow_cpu:
        dev = torch.device("cpu")
        device = "cpu"
    else:
        ref.emit({"tool": "torchdiffeq", "error": "no GPU", "device": "cpu"})
        return 3
    versions = {"torch": torch.__version__}

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    runners = []
    failed = False
    if not args.no_torchdiffeq:
        try:
            import torchdiffeq
            versions["torchdiffeq"] = getattr(torchdiffeq, "__version__", "?")
            runners.append(TorchDiffeqRunner(torch, torchdiffeq, args.h))
        except ImportError as e:
            ref.emit({"tool": "torchdiffeq", "error": "module not found", "message": ref.short(e)})
    runners += [TorchLoopRunner(torch, args.h, tol) for tol in args.loop_tols]

    sizes = sorted(args.sizes)
    z_host = ref.initial_states(max(sizes), args.perturbation, args.seed)
    check = ref.Reference(z_host[:, :ref.CHECK_INSTANCES])
    quantum = 10 if args.steps % 10 == 0 else 1

    for r in runners:
        budget = ref.Budget(T_START, args.time_budget, args.target_seconds, args.steps, args.min_steps, quantum)
        stop_reason = None
        for n in sizes:
            base = {"tool": r.tool, "variant": r.variant, "instances": n, "device": device, "dtype": "float64",
                    "tol": ref.tol_label(r.tol), "projection": ref.projection_label(r.tol), "method": r.method}
            if stop_reason:
                ref.emit(dict(base, skipped=stop_reason))
                continue
            steps_guess = budget.steps_for(n)
            need = (args.reps + 2) * min(budget.predicted_run_s(n, steps_guess),
                                         max(args.target_seconds, 0.5))
            if budget.over(time.perf_counter(), need):
                ref.emit(dict(base, skipped="time budget (%.0f s) spent" % args.time_budget))
                continue
            out = None
            try:
                r.setup(z_host[:, :n], dev)
                probe = min(PROBE_STEPS, args.steps)
                sync()
                out = r.run(probe)  # warm-up (CUDA context, kernels, allocator)
                sync()
                t0 = time.perf_counter()
                out = r.run(probe)
                sync()
                probe_s = time.perf_counter() - t0
                steps = budget.steps_for(n, probe_s / probe)
                times = []
                for _ in range(max(1, args.reps)):
                    out = None
                    sync()
                    t0 = time.perf_counter()
                    out = r.run(steps)
                    sync()
                    times.append(time.perf_counter() - t0)
                best = min(times)
                all_finite = r.all_finite(out)
                k = min(n, ref.CHECK_INSTANCES)
                z_first = r.first(out, k)
                dtype = str(out.dtype if hasattr(out, "dtype") else out[0].dtype).replace("torch.", "")
                diff, nproj = check.diff(z_first, steps, r.tol, r.ref_method, args.h)
                ok = (diff <= ref.DIFF_LIMIT and all_finite and dtype == "float64"
                      and r.steps_taken == steps)
                failed = failed or not ok
                budget.record(n, best / steps)
                rec = dict(base, steps=steps, steps_taken=r.steps_taken, seconds=best,
                           instance_steps_per_s=n * steps / best, dtype=dtype, max_abs_diff_vs_numpy=diff,
                           check="ok" if ok else "FAILED", all_finite=all_finite, h=args.h,
                           reps=len(times), all_seconds=times, warmup_seconds=probe_s, warmup_steps=probe,
                           perturbation=args.perturbation, seed=args.seed, versions=versions)
                if r.tol is not None:
                    rec["numpy_projections_first_instances"] = nproj
                ref.emit(rec)
            except Exception as e:  # noqa: BLE001
                if ref.is_oom(e):
                    ref.emit(dict(base, error="out of memory", message=ref.short(e)))
                    stop_reason = "a smaller size ran out of memory"
                else:
                    traceback.print_exc()
                    ref.emit(dict(base, error="exception", message=ref.short(e), versions=versions))
                    failed = True
                    stop_reason = "a smaller size raised"
            finally:
                out = None
                r.release()
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
