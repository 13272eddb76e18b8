#!/usr/bin/env python3
"""JAX peer of chens's GPU pendulum benchmark: jit + vmap + lax.fori_loop, one fused loop.

Per instance, exactly chens's work (numpy_reference.py documents the formulas): the
Hamilton-Dirac right-hand side of the Cartesian pendulum (m = l = g = 1), classical RK4
with h = 0.01, and after every step the momentum projection where |psi| > tol
(jnp.where inside the loop, as chens's branch). Variants (--tols): tol = 1e-6 (chens's
default projection tolerance and its BM_GpuPendulum's; it never fires on this problem,
|psi| stays ~1e-8), none (no projection), tol = 0 (every step projects). The state is four float64 arrays (x, y, px, py) of
shape (instances,) (structure of arrays); the per-instance function is written on
scalars and vmapped, the step loop is a lax.fori_loop with a static trip count inside
one jit. --unroll U puts U steps into the loop body (manual unrolling, any JAX version),
which lets XLA fuse several steps into one kernel and cuts the state's trips through
memory; the default runs U = 1 and U = 10.

Timing: the jitted function is compiled ahead of time (lower().compile(), reported as
compile_seconds), run once as warm-up, then --reps times; the best time is reported.
Times cover the integration only (initial data are generated on the host by numpy and
copied to the device before). Throughput = instances * steps / seconds.

Correctness: the first 8 instances are integrated by numpy_reference.py with the same
initial data, steps and tolerance; max_abs_diff_vs_numpy > 1e-10 makes the script exit 1
(after printing everything). all_finite checks every instance on the device.

Output: one JSON line per (variant, size) on stdout; sizes that run out of device memory
or do not fit --time-budget get a line with "error" or "skipped". Exit codes: 0 fine,
1 a check failed or a measurement raised, 2 JAX not importable, 3 no GPU (see --allow-cpu).
"""

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

sys.dont_write_bytecode = True  # keep bench/peers free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import numpy_reference as ref  # noqa: E402

TOOL = "jax"


def build(jax, jnp, lax, steps, tol, unroll, h):
    """jit(vmap(per-instance integration)) of `steps` RK4 steps (+ projection)."""
    assert steps % unroll == 0
    a2 = h * 0.5          # chens: h * a_ij
    a3 = h * 1.0
    b1 = h * (1.0 / 6.0)  # chens: h * b_i
    b2 = h * (1.0 / 3.0)

    def rhs(x, y, px, py):
        # Hamilton-Dirac, m = l = g = 1 (hamilton_dirac.hpp with pendulum.hpp's primitives).
        f = 1.0 / (x * x + y * y)
        nu = (x * px + y * py) * f
        lam = (px * px + py * py - y) * f
        return (px - nu * x,
                py - nu * y,
                -lam * x + nu * px,
                -lam * y + nu * py - 1.0)

    def rk4(s):
        k1 = rhs(*s)
        k2 = rhs(*[s[c] + a2 * k1[c] for c in range(4)])
        k3 = rhs(*[s[c] + a2 * k2[c] for c in range(4)])
        k4 = rhs(*[s[c] + a3 * k3[c] for c in range(4)])
        out = []
        for c in range(4):
            v = s[c] + b1 * k1[c]
            v = v + b2 * k2[c]
            v = v + b2 * k3[c]
            v = v + b1 * k4[c]
            out.append(v)
        return tuple(out)

    def project(s):
        x, y, px, py = s
        psi = x * px + y * py
        lam = psi * (1.0 / (x * x + y * y))
        need = jnp.abs(psi) > tol
        return (x, y, jnp.where(need, px - lam * x, px), jnp.where(need, py - lam * y, py))

    def one_step(s):
        s = rk4(s)
        return project(s) if tol is not None else s

    def body(_, s):
        for _u in range(unroll):
            s = one_step(s)
        return s

    def integrate_one(x, y, px, py):
        return lax.fori_loop(0, steps // unroll, body, (x, y, px, py))

    return jax.jit(jax.vmap(integrate_one))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ref.common_arguments(ap)
    ap.add_argument("--tols", type=ref.parse_tols, default=ref.parse_tols("1e-6,none,0"),
                    help="projection tolerances; 'none' = no projection (default 1e-6,none,0)")
    ap.add_argument("--unroll", default="1,10",
                    help="steps per fori_loop body, comma-separated (default 1,10)")
    args = ap.parse_args()
    unrolls = [int(u) for u in args.unroll.split(",") if u.strip()]
    if not unrolls or min(unrolls) < 1:
        ap.error("--unroll needs integers >= 1")

    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax import lax
    except ImportError as e:
        ref.emit({"tool": TOOL, "error": "module not found", "message": ref.short(e)})
        return 2

    device, rc = ref.jax_device(jax, TOOL, args.allow_cpu)
    if rc:
        return rc
    versions = {"jax": jax.__version__}
    try:
        import jaxlib
        versions["jaxlib"] = jaxlib.__version__
    except Exception:  # noqa: BLE001
        pass

    def block(out):
        try:
            return jax.block_until_ready(out)
        except AttributeError:  # very old JAX
            for o in out:
                o.block_until_ready()
            return out

    sizes = sorted(args.sizes)
    z_host = ref.initial_states(max(sizes), args.perturbation, args.seed)
    check = ref.Reference(z_host[:, :ref.CHECK_INSTANCES])

    # Measured in this order (what the time budget cuts comes last): each tolerance in
    # the order given, with every unroll.
    configs = [(t, u) for t in args.tols for u in unrolls]

    failed = False
    for tol, unroll in configs:
        variant = "fori_loop tol=%s unroll=%d" % (ref.tol_label(tol), unroll)
        budget = ref.Budget(T_START, args.time_budget, args.target_seconds, args.steps,
                            args.min_steps, quantum=10 * unroll if args.steps % (10 * unroll) == 0 else unroll)
        if args.steps % unroll:
            ref.emit({"tool": TOOL, "variant": variant, "error": "--steps is not a multiple of the unroll"})
            failed = True
            continue
        compile_guess = 2.0   # seconds; replaced by the last measured compile time
        stop_reason = None
        for n in sizes:
            base = {"tool": TOOL, "variant": variant, "instances": n, "device": device, "dtype": "float64",
                    "tol": ref.tol_label(tol), "unroll": unroll, "projection": ref.projection_label(tol)}
            if stop_reason:
                ref.emit(dict(base, skipped=stop_reason))
                continue
            steps = budget.steps_for(n)
            need = compile_guess + (args.reps + 1) * min(budget.predicted_run_s(n, steps),
                                                        max(args.target_seconds, 0.5))
            if budget.over(time.perf_counter(), need):
                ref.emit(dict(base, skipped="time budget (%.0f s) spent" % args.time_budget))
                continue
            args_dev = None
            try:
                args_dev = [jax.device_put(np.ascontiguousarray(z_host[c, :n])) for c in range(4)]
                fn = build(jax, jnp, lax, steps, tol, unroll, args.h)
                t0 = time.perf_counter()
                try:
                    call = fn.lower(*args_dev).compile()
                except AttributeError:  # no AOT API: the warm-up compiles
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
                all_finite = bool(jnp.all(jnp.stack([jnp.all(jnp.isfinite(o)) for o in out])))
                k = min(n, ref.CHECK_INSTANCES)
                z_first = np.stack([np.asarray(o[:k]) for o in out])
                dtype = str(out[0].dtype)
                del out
                diff, nproj = check.diff(z_first, steps, tol, "rk4", args.h)
                ok = diff <= ref.DIFF_LIMIT and all_finite and dtype == "float64"
                failed = failed or not ok
                budget.record(n, best / steps)
                ref.emit(dict(base, steps=steps, seconds=best, instance_steps_per_s=n * steps / best,
                              dtype=dtype, max_abs_diff_vs_numpy=diff, check="ok" if ok else "FAILED",
                              all_finite=all_finite, numpy_projections_first_instances=nproj,
                              h=args.h, method="classical RK4", reps=reps, all_seconds=times,
                              compile_seconds=compile_s, warmup_seconds=warm_s,
                              perturbation=args.perturbation, seed=args.seed, versions=versions))
            except Exception as e:  # noqa: BLE001
                if ref.is_oom(e):
                    ref.emit(dict(base, error="out of memory", message=ref.short(e)))
                    stop_reason = "a smaller size ran out of memory"
                else:
                    traceback.print_exc()
                    ref.emit(dict(base, error="exception", message=ref.short(e)))
                    failed = True
                    stop_reason = "a smaller size raised"
            finally:
                del args_dev
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
