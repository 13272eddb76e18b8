#!/usr/bin/env python3
"""diffrax peer of chens's GPU pendulum benchmark: jit(vmap(diffeqsolve)) with classical RK4.

Per instance: the Hamilton-Dirac right-hand side of the Cartesian pendulum (m = l = g = 1;
numpy_reference.py documents the formulas) as a diffrax.ODETerm on the pytree
(x, y, px, py), classical RK4 at the constant step h = 0.01 (ConstantStepSize), SaveAt(t1)
only, max_steps = steps + 16. NO momentum projection: diffeqsolve's step loop has no hook
for modifying the state after a step (an event would stop the solve), so this peer
integrates the unprojected Hamilton-Dirac flow. (chens's BM_GpuPendulum tests |psi| > 1e-6
after every step; on this problem the test never fires, |psi| stays ~1e-8, so the
integration is the same and only the test's few operations per step differ.)

Classical RK4: diffrax has no solver of that name. It is defined here as an AbstractERK
subclass with a ButcherTableau (c = (1/2, 1/2, 1), a = (1/2; 0, 1/2; 0, 0, 1),
b = (1/6, 1/3, 1/3, 1/6), b_error = 0 since ConstantStepSize never reads the error
estimate; interpolation_cls = ThirdOrderHermitePolynomialInterpolation.from_k, which only
dense output would use), as diffrax's own Midpoint/Ralston are. If this class cannot be
built or run with the installed diffrax (the solver API changed across versions), the
script prints the error and, with --fallback (on by default), measures diffrax.Tsit5 at
the same constant step instead: variant "tsit5 fallback", a different 7-stage (6 RHS
evaluations per step, FSAL) method, so its max_abs_diff_vs_numpy is null and it is not
a like-for-like peer; the JSON line says so.

vmap over instances of diffeqsolve is how diffrax documents ensembles (the batched while
loop runs until every instance is done). Timing, step reduction for large sizes, the
numpy check of the first 8 instances (exit 1 above 1e-10) and the output are as in
jax_pendulum.py; steps_taken is diffrax's own num_steps of instance 0.
"""

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from typing import Callable, ClassVar  # noqa: E402

sys.dont_write_bytecode = True  # keep bench/peers free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import numpy_reference as ref  # noqa: E402

TOOL = "diffrax"


def classical_rk4(diffrax):
    """An instance of classical RK4 as a diffrax explicit Runge-Kutta solver."""
    # (Names differ from the class attributes: a class body that assigns a name looks it up
    # in the class namespace and the globals only, never in this function's scope.)
    _tableau = diffrax.ButcherTableau(
        c=np.array([0.5, 0.5, 1.0]),
        b_sol=np.array([1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0]),
        b_error=np.array([0.0, 0.0, 0.0, 0.0]),
        a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
    )
    _interp = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    class ClassicalRK4(diffrax.AbstractERK):
        """Classical 4th-order Runge-Kutta (no embedded error estimate)."""

        tableau: ClassVar[diffrax.ButcherTableau] = _tableau
        interpolation_cls: ClassVar[Callable] = _interp

        def order(self, terms):
            return 4

    return ClassicalRK4()


def rhs(t, s, args):
    # Hamilton-Dirac, m = l = g = 1 (hamilton_dirac.hpp with pendulum.hpp's primitives).
    x, y, px, py = s
    f = 1.0 / (x * x + y * y)
    nu = (x * px + y * py) * f
    lam = (px * px + py * py - y) * f
    return (px - nu * x,
            py - nu * y,
            -lam * x + nu * px,
            -lam * y + nu * py - 1.0)


def build(jax, diffrax, solver, steps, h):
    t1 = steps * h
    term = diffrax.ODETerm(rhs)

    def solve_one(x, y, px, py):
        sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=t1, dt0=h, y0=(x, y, px, py),
                                  saveat=diffrax.SaveAt(t1=True),
                                  stepsize_controller=diffrax.ConstantStepSize(),
                                  max_steps=steps + 16)
        final = tuple(leaf[-1] for leaf in sol.ys)  # SaveAt(t1): one saved time
        return final, sol.stats["num_steps"]

    return jax.jit(jax.vmap(solve_one))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ref.common_arguments(ap, sizes="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--no-fallback", dest="fallback", action="store_false",
                    help="do not measure Tsit5 when the RK4 class fails")
    args = ap.parse_args()

    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import diffrax
    except ImportError as e:
        ref.emit({"tool": TOOL, "error": "module not found", "message": ref.short(e)})
        return 2

    device, rc = ref.jax_device(jax, TOOL, args.allow_cpu)
    if rc:
        return rc
    versions = {"jax": jax.__version__, "diffrax": getattr(diffrax, "__version__", "?")}
    try:
        import equinox
        versions["equinox"] = getattr(equinox, "__version__", "?")
    except Exception:  # noqa: BLE001
        pass

    failed = False
    try:
        solver = classical_rk4(diffrax)
        variant, method, compare = "rk4 (custom ButcherTableau)", "classical RK4", True
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        ref.emit({"tool": TOOL, "variant": "rk4 (custom ButcherTableau)", "error": "solver definition failed",
                  "message": ref.short(e), "versions": versions})
        failed = True
        if not args.fallback:
            return 1
        solver = diffrax.Tsit5()
        variant, method, compare = "tsit5 fallback", "Tsit5 (fallback: not classical RK4)", False

    sizes = sorted(args.sizes)
    z_host = ref.initial_states(max(sizes), args.perturbation, args.seed)
    check = ref.Reference(z_host[:, :ref.CHECK_INSTANCES])
    budget = ref.Budget(T_START, args.time_budget, args.target_seconds, args.steps, args.min_steps,
                        quantum=10 if args.steps % 10 == 0 else 1)

    def block(out):
        try:
            return jax.block_until_ready(out)
        except AttributeError:
            for o in jax.tree_util.tree_leaves(out):
                o.block_until_ready()
            return out

    compile_guess = 8.0
    stop_reason = None
    tried_fallback = not compare
    i = 0
    while i < len(sizes):
        n = sizes[i]
        base = {"tool": TOOL, "variant": variant, "instances": n, "device": device, "dtype": "float64",
                "tol": "none", "projection": "none", "method": method}
        if stop_reason:
            ref.emit(dict(base, skipped=stop_reason))
            i += 1
            continue
        steps = budget.steps_for(n)
        need = compile_guess + (args.reps + 1) * min(budget.predicted_run_s(n, steps),
                                                    max(args.target_seconds, 0.5))
        if budget.over(time.perf_counter(), need):
            ref.emit(dict(base, skipped="time budget (%.0f s) spent" % args.time_budget))
            i += 1
            continue
        args_dev = None
        try:
            args_dev = [jax.device_put(np.ascontiguousarray(z_host[c, :n])) for c in range(4)]
            fn = build(jax, diffrax, solver, steps, args.h)
            t0 = time.perf_counter()
            try:
                call = fn.lower(*args_dev).compile()
            except AttributeError:
                call = fn
            compile_s = time.perf_counter() - t0
            compile_guess = compile_s
            t0 = time.perf_counter()
            out = block(call(*args_dev))
            warm_s = time.perf_counter() - t0
            reps = max(1, args.reps) if warm_s <= 3 * max(args.target_seconds, 0.5) else 1
            times = []
            for _ in range(reps):
                del out
                t0 = time.perf_counter()
                out = block(call(*args_dev))
                times.append(time.perf_counter() - t0)
            best = min(times)
            final, num_steps = out
            all_finite = bool(jnp.all(jnp.stack([jnp.all(jnp.isfinite(o)) for o in final])))
            steps_taken = int(np.asarray(num_steps[0]))
            k = min(n, ref.CHECK_INSTANCES)
            z_first = np.stack([np.asarray(o[:k]) for o in final])
            dtype = str(final[0].dtype)
            del out, final, num_steps
            if compare:
                diff, _ = check.diff(z_first, steps, None, "rk4", args.h)
                ok = diff <= ref.DIFF_LIMIT and all_finite and dtype == "float64" and steps_taken == steps
                check_txt = "ok" if ok else "FAILED"
            else:
                diff, ok = None, all_finite and steps_taken == steps
                check_txt = "skipped: not classical RK4" if ok else "FAILED"
            failed = failed or not ok
            budget.record(n, best / steps)
            ref.emit(dict(base, steps=steps, steps_taken=steps_taken, seconds=best,
                          instance_steps_per_s=n * steps / best, dtype=dtype,
                          max_abs_diff_vs_numpy=diff, check=check_txt, all_finite=all_finite,
                          h=args.h, reps=reps, all_seconds=times, compile_seconds=compile_s,
                          warmup_seconds=warm_s, perturbation=args.perturbation, seed=args.seed,
                          versions=versions))
        except Exception as e:  # noqa: BLE001
            if ref.is_oom(e):
                ref.emit(dict(base, error="out of memory", message=ref.short(e)))
                stop_reason = "a smaller size ran out of memory"
            else:
                traceback.print_exc()
                ref.emit(dict(base, error="exception", message=ref.short(e), versions=versions))
                failed = True
                if args.fallback and not tried_fallback and not budget.history:
                    # The custom RK4 failed on its first run: measure Tsit5 instead.
                    tried_fallback = True
                    solver = diffrax.Tsit5()
                    variant, method, compare = "tsit5 fallback", "Tsit5 (fallback: not classical RK4)", False
                    continue  # same size again
                stop_reason = "a smaller size raised"
        finally:
            del args_dev
        i += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
