#!/usr/bin/env python3
"""Plain-numpy float64 reference for the peer-tool benchmarks (bench/peers/README.md).

The problem is the one chens's GPU benchmark integrates (bench/bench_gpu_instances.cpp):

  planar pendulum in Cartesian coordinates (include/chens/models/pendulum.hpp), m = l = g = 1,
      H = |p|^2/(2m) + m g y            (gravity along -y)
      phi = (x^2 + y^2 - l^2)/2,        psi = {phi, H} = (x px + y py)/m
  Hamilton-Dirac equations (include/chens/formulations/hamilton_dirac.hpp; 002 eqs. 35-36):
      f   = m/(x^2 + y^2)                        (Q^-1, the Gram "solve")
      nu  = psi f,   lam = ((px^2 + py^2)/m^2 - g y) f
      x'  = (px - nu x)/m,        y'  = (py - nu y)/m
      px' = -lam x + nu px/m,     py' = -lam y + nu py/m - m g
  classical RK4 (include/chens/integrators/tableaus.hpp, explicit_rk.hpp):
      k1 = f(z), k2 = f(z + (h/2) k1), k3 = f(z + (h/2) k2), k4 = f(z + h k3),
      z' = z + (h/6) k1 + (h/3) k2 + (h/3) k3 + (h/6) k4   (accumulated in this order)
  then, after every step, the momentum projection (include/chens/projections/momentum.hpp,
  policy.hpp) when |psi| > tol:  p <- p - q psi (m/|q|^2)   (002 eq. 68).
  Fixed step h = 0.01, 1000 steps (t in [0, 10]).

Initial data of the peers (not chens's Philox stream: only the per-instance work has to
match): nominal z0 = (1, 0, 0, -2); instance i >= 1 gets z0 + delta*u, u uniform in
[-1, 1) per component (numpy default_rng(seed), drawn instance by instance, so instance i
has the same data for every ensemble size), then q <- q l/|q| (|q| = l, phi = 0) and the
momentum projection to psi = 0. Instance 0 is the nominal state, as in chens.
delta = 1e-3 as chens's benchmark (pendulum_study in bench_gpu_instances.cpp).

Run on its own it checks itself and prints JSON lines (exit 1 when a check fails):
  RK4 order (error ratio when h halves, against a fine-step solution), the 3/8-rule
  variant (torchdiffeq's "rk4"), the constraint drift over 1000 steps, and, with
  --compare-chens SUMMARY.json, instance 0's final state against a `chens run` result.

The peer scripts import it for the initial data, the correctness check of their first
instances (CHECK_INSTANCES) and a few harness helpers.
"""

import argparse
import json
import math
import sys

import numpy as np

# Problem constants (chens's benchmark study: pendulum_study in bench/bench_gpu_instances.cpp).
H = 0.01
STEPS = 1000
Z0 = (1.0, 0.0, 0.0, -2.0)
PERTURBATION = 1e-3
SEED = 20251126
TOL = 1e-6
# Peers compare their first CHECK_INSTANCES final states with this module; a larger
# difference than DIFF_LIMIT fails the script.
CHECK_INSTANCES = 8
DIFF_LIMIT = 1e-10


# ---------------------------------------------------------------------------------------
# Initial data
# ---------------------------------------------------------------------------------------

def initial_states(n, delta=PERTURBATION, seed=SEED, z0=Z0, length=1.0, mass=1.0):
    """(4, n) float64 array (rows x, y, px, py) of n instances on the constraint manifold."""
    n = int(n)
    rng = np.random.default_rng(seed)
    # Row-major (n, 4) draws: instance i always gets draws 4i..4i+3, whatever n is.
    u = rng.uniform(-1.0, 1.0, size=(n, 4))
    z = np.empty((4, n), dtype=np.float64)
    for c in range(4):
        z[c] = z0[c] + delta * u[:, c]
    del u
    x, y, px, py = z
    # Position: the closest point on |q| = l (chens iterates Newton along q to the same point).
    s = length / np.sqrt(x * x + y * y)
    x *= s
    y *= s
    # Momentum: psi -> 0 with chens's formula (p <- p - q * psi * (m/|q|^2)).
    psi = (x * px + y * py) * (1.0 / mass)
    lam = psi * (mass / (x * x + y * y))
    px -= lam * x
    py -= lam * y
    if n > 0:
        z[:, 0] = z0  # instance 0: the nominal data, untouched (as chens)
    return z


# ---------------------------------------------------------------------------------------
# Right-hand side, steps, projection (general m, l, g with chens's operation order; the
# peers use m = l = g = 1, for which the factors 1 are exact and drop out)
# ---------------------------------------------------------------------------------------

def rhs(z, m=1.0, g=1.0):
    x, y, px, py = z
    im = 1.0 / m
    vx, vy = im * px, im * py                      # M^-1 p
    f = m / (x * x + y * y)                        # Q^-1
    nu = ((x * px + y * py) * im) * f              # Q^-1 psi
    lam = (im * im * (px * px + py * py) - g * y) * f   # Q^-1 {psi, H}
    rl = -lam
    dx = im * (px - nu * x)
    dy = im * (py - nu * y)
    dpx = (rl * x + nu * vx) - 0.0
    dpy = (rl * y + nu * vy) - m * g
    return np.stack((dx, dy, dpx, dpy))


def rk4_step(z, h, f=rhs):
    """Classical RK4 as chens's ExplicitRk<Rk4Tableau> (coefficients h*a_ij, h*b_i)."""
    k1 = f(z)
    k2 = f(z + (h * 0.5) * k1)
    k3 = f(z + (h * 0.5) * k2)
    k4 = f(z + (h * 1.0) * k3)
    zn = z + (h * (1.0 / 6.0)) * k1
    zn = zn + (h * (1.0 / 3.0)) * k2
    zn = zn + (h * (1.0 / 3.0)) * k3
    zn = zn + (h * (1.0 / 6.0)) * k4
    return zn


def rk4_38_step(z, h, f=rhs):
    """The 3/8 rule as torchdiffeq's method="rk4" computes it (rk4_alt_step_func)."""
    k1 = f(z)
    k2 = f(z + h * k1 * (1.0 / 3.0))
    k3 = f(z + h * (k2 - k1 * (1.0 / 3.0)))
    k4 = f(z + h * (k1 - k2 + k3))
    return z + (k1 + 3.0 * (k2 + k3) + k4) * h * 0.125


STEPPERS = {"rk4": rk4_step, "rk4_38": rk4_38_step}


def psi_of(z, m=1.0):
    return (z[0] * z[2] + z[1] * z[3]) * (1.0 / m)


def phi_of(z, length=1.0):
    return (z[0] * z[0] + z[1] * z[1] - length * length) / 2.0


def momentum_project(z, tol, m=1.0):
    """In place where |psi| > tol; returns how many instances were projected."""
    psi = psi_of(z, m)
    need = np.abs(psi) > tol
    lam = psi * (m / (z[0] * z[0] + z[1] * z[1]))
    z[2] = np.where(need, z[2] - lam * z[0], z[2])
    z[3] = np.where(need, z[3] - lam * z[1], z[3])
    return int(np.count_nonzero(need))


def integrate(z0, h=H, steps=STEPS, tol=None, method="rk4", last_h=None, track=False):
    """Integrates the (4, n) states z0; tol=None: no projection. Returns (z, info)."""
    step = STEPPERS[method]
    z = np.array(z0, dtype=np.float64, copy=True)
    if z.ndim == 1:
        z = z.reshape(4, 1)
    projections = 0
    max_phi = max_psi = 0.0
    for s in range(int(steps)):
        hs = last_h if (last_h is not None and s == steps - 1) else h
        z = step(z, hs)
        if tol is not None:
            projections += momentum_project(z, tol)
        if track:
            max_phi = max(max_phi, float(np.max(np.abs(phi_of(z)))))
            max_psi = max(max_psi, float(np.max(np.abs(psi_of(z)))))
    info = {"projections": projections}
    if track:
        info.update(max_abs_phi=max_phi, max_abs_psi=max_psi)
    return z, info


# ---------------------------------------------------------------------------------------
# Helpers shared by the peer scripts
# ---------------------------------------------------------------------------------------

def parse_sizes(text):
    """'1e3,1e4,65536' -> [1000, 10000, 65536]."""
    out = []
    for tok in text.split(","):
        tok = tok.strip()
        if not tok:
            continue
        v = float(tok)
        if v < 1 or v != math.floor(v):
            raise argparse.ArgumentTypeError("bad ensemble size %r" % tok)
        out.append(int(v))
    return out


def parse_tols(text):
    """'1e-6,0,none' -> [1e-6, 0.0, None] (None: no projection)."""
    out = []
    for tok in text.split(","):
        tok = tok.strip().lower()
        if not tok:
            continue
        out.append(None if tok in ("none", "off", "no") else float(tok))
    return out


def tol_label(tol):
    return "none" if tol is None else ("%g" % tol)


def projection_label(tol):
    return "none" if tol is None else "every step if |psi|>tol"


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # NaN/inf are not JSON
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, np.generic):
        return _clean(v.item())
    return v


def emit(record):
    print(json.dumps(_clean(record)), flush=True)


def jax_device(jax, tool, allow_cpu):
    """(description of JAX's first device, 0), or (description, 3) after emitting a
    "no GPU" line when it is not a GPU and allow_cpu is false."""
    dev = jax.devices()[0]
    device = "%s (%s)" % (getattr(dev, "device_kind", str(dev)), dev.platform)
    if dev.platform not in ("gpu", "cuda", "rocm") and not allow_cpu:
        emit({"tool": tool, "error": "no GPU", "device": device})
        return device, 3
    return device, 0


def is_oom(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return any(k in text for k in ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory",
                                   "OutOfMemory", "OUT_OF_MEMORY", "Failed to allocate"))


def short(exc, limit=400):
    text = "%s: %s" % (type(exc).__name__, exc)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


class Reference:
    """numpy results for the first instances, cached by (steps, tol, method)."""

    def __init__(self, z0_first):
        self.z0 = np.array(z0_first, dtype=np.float64, copy=True)
        self.cache = {}

    def final(self, steps, tol, method="rk4", h=H):
        key = (int(steps), tol, method, h)
        if key not in self.cache:
            self.cache[key] = integrate(self.z0, h=h, steps=steps, tol=tol, method=method)
        return self.cache[key]

    def diff(self, z_first, steps, tol, method="rk4", h=H):
        """max |z_tool - z_numpy| over the first instances, and numpy's projection count."""
        zr, info = self.final(steps, tol, method, h)
        z_first = np.asarray(z_first, dtype=np.float64).reshape(4, -1)
        k = min(z_first.shape[1], zr.shape[1])
        d = np.abs(z_first[:, :k] - zr[:, :k])
        return (float(np.max(d)) if np.all(np.isfinite(d)) else float("inf")), info["projections"]


class Budget:
    """Soft wall-clock budget of a script (0 = unlimited) and the choice of step counts.

    The time per step of a configuration is predicted from its earlier (smaller) sizes:
    from one earlier size, linearly in the ensemble size (an overestimate while launches
    dominate); from two or more, by the line a + b*n through the last two, but never
    below sqrt growth from the last one. steps_for() reduces the configured steps (to a
    multiple of `quantum`, not below min_steps) when one run is predicted to take longer
    than target_s; the reduction errs on the short side, and per-step rates do not
    depend on the step count."""

    def __init__(self, t_start, budget_s, target_s, steps, min_steps, quantum):
        self.t_start = t_start
        self.budget_s = budget_s
        self.target_s = target_s
        self.steps = steps
        self.min_steps = min(min_steps, steps)
        self.quantum = quantum
        self.history = []  # (n, seconds per step), in the order measured

    def elapsed(self, now):
        return now - self.t_start

    def over(self, now, need_s):
        return self.budget_s > 0 and self.elapsed(now) + need_s > self.budget_s

    def record(self, n, seconds_per_step):
        self.history.append((int(n), float(seconds_per_step)))

    def predict_sps(self, n):
        """Predicted seconds per step at size n, or None without history."""
        if not self.history:
            return None
        n2, s2 = self.history[-1]
        lin = s2 * max(1.0, n / float(n2))
        if len(self.history) == 1 or n <= n2:
            return lin if n > n2 else s2
        n1, s1 = self.history[-2]
        if n1 >= n2:
            return lin
        b = max((s2 - s1) / float(n2 - n1), 0.0)
        a = max(s2 - b * n2, 0.0)
        return max(a + b * n, s2 * math.sqrt(n / float(n2)))

    def steps_for(self, n, sps=None):
        """Steps for size n; sps: a measured time per step at n (else the prediction)."""
        if sps is None:
            sps = self.predict_sps(n)
        steps = self.steps
        if sps is not None and self.target_s > 0 and sps * steps > self.target_s:
            steps = int(self.target_s / sps)
        q = self.quantum
        steps = max(self.min_steps, min(self.steps, steps))
        return max(q, (steps // q) * q)

    def predicted_run_s(self, n, steps):
        sps = self.predict_sps(n)
        return 0.0 if sps is None else sps * steps


def common_arguments(ap, sizes="1e3,1e4,1e5,1e6,1e7", steps=STEPS, budget=0.0, target=2.0):
    ap.add_argument("--sizes", type=parse_sizes, default=parse_sizes(sizes),
                    help="ensemble sizes, comma-separated (default %s)" % sizes)
    ap.add_argument("--steps", type=int, default=steps, help="RK4 steps of h (default %d)" % steps)
    ap.add_argument("--h", type=float, default=H, help="step size (default %g)" % H)
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions after the warm-up (best is reported)")
    ap.add_argument("--perturbation", type=float, default=PERTURBATION)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--target-seconds", type=float, default=target,
                    help="reduce the steps of a size (not below --min-steps) when one run is predicted "
                         "to take longer than this (0: never; default %g)" % target)
    ap.add_argument("--min-steps", type=int, default=100)
    ap.add_argument("--time-budget", type=float, default=budget,
                    help="seconds for the whole script, imports included: configurations that would not "
                         "fit are skipped with a JSON line (0: unlimited; default %g)" % budget)
    ap.add_argument("--allow-cpu", action="store_true", help="run even without a GPU (for testing)")
    return ap


# ---------------------------------------------------------------------------------------
# Self-test
# ---------------------------------------------------------------------------------------

def _order_check(method, t_end=1.0, hs=(0.04, 0.02, 0.01, 0.005), fine=0.04 / 64):
    z0 = np.array(Z0).reshape(4, 1)
    zf, _ = integrate(z0, h=fine, steps=int(round(t_end / fine)), method="rk4")
    errs = []
    for h in hs:
        z, _ = integrate(z0, h=h, steps=int(round(t_end / h)), method=method)
        errs.append(float(np.max(np.abs(z - zf))))
    ratios = [errs[i] / errs[i + 1] for i in range(len(errs) - 1)]
    return {"check": "order", "method": method, "t_end": t_end, "h": list(hs), "fine_h": fine,
            "errors": errs, "ratios": ratios, "ok": all(12.0 < r < 20.0 for r in ratios)}


def _drift_check(tol):
    z0 = np.array(Z0).reshape(4, 1)
    z, info = integrate(z0, h=H, steps=STEPS, tol=tol, track=True)
    rec = {"check": "constraint drift", "tol": tol_label(tol), "h": H, "steps": STEPS,
           "final_state": [float(v) for v in z[:, 0]], "projections": info["projections"],
           "max_abs_phi": info["max_abs_phi"], "max_abs_psi": info["max_abs_psi"]}
    rec["ok"] = info["max_abs_phi"] < 1e-8 and (tol is None or tol == 0.0 or info["max_abs_psi"] <= max(tol, 1e-7))
    return rec


def _perturbation_check():
    z = initial_states(1000)
    z2 = initial_states(10)
    same = bool(np.array_equal(z[:, :10], z2))
    rec = {"check": "initial data", "instances": 1000, "max_abs_phi": float(np.max(np.abs(phi_of(z)))),
           "max_abs_psi": float(np.max(np.abs(psi_of(z)))),
           "max_abs_deviation": float(np.max(np.abs(z - np.array(Z0).reshape(4, 1)))),
           "prefix_independent_of_size": same, "instance0_nominal": bool(np.array_equal(z[:, 0], Z0))}
    rec["ok"] = (rec["max_abs_phi"] < 1e-15 and rec["max_abs_psi"] < 1e-14 and same
                 and rec["instance0_nominal"] and rec["max_abs_deviation"] < 3 * PERTURBATION)
    return rec


def chens_steps(t_end, h):
    """chens's fixed-step count and last step (host/study/study.cpp, resolve)."""
    n = t_end / h
    nr = round(n)
    total = int(nr if abs(n - nr) <= 1e-9 * max(1.0, n) else math.ceil(n))
    last_h = t_end - float(total - 1) * h if total > 0 else h
    return total, last_h


def compare_chens(path):
    with open(path) as fh:
        summary = json.load(fh)
    st = summary["study"]
    model, integ, proj = st["model"], st["integrator"], st["projection"]
    problems = []
    if model.get("kind") != "pendulum":
        problems.append("model.kind != pendulum")
    if integ.get("formulation") != "dirac" or integ.get("method") != "rk4":
        problems.append("not dirac + rk4")
    if proj.get("position"):
        problems.append("position projection is on")
    if any(float(model.get(k, 1.0)) != 1.0 for k in ("mass", "length", "gravity")):
        problems.append("m, l, g must be 1")
    if problems:
        return {"check": "chens", "summary": path, "ok": False, "error": "; ".join(problems)}
    h, t_end = float(integ["h"]), float(integ["t_end"])
    total, last_h = chens_steps(t_end, h)
    tol = float(proj["tol"]) if proj.get("momentum") else None
    z0 = np.array(model["initial"], dtype=np.float64).reshape(4, 1)  # instance 0: unperturbed
    z, info = integrate(z0, h=h, steps=total, tol=tol, last_h=last_h)
    zc = np.array(summary["instance0"]["final_state"], dtype=np.float64)
    d = float(np.max(np.abs(z[:, 0] - zc)))
    rec = {"check": "chens", "summary": path, "h": h, "t_end": t_end, "steps": total, "last_h": last_h,
           "tol": tol_label(tol), "numpy_final_state": [float(v) for v in z[:, 0]],
           "chens_final_state": [float(v) for v in zc], "max_abs_diff": d,
           "numpy_projections": info["projections"],
           "chens_momentum_projections": summary.get("projections", {}).get("momentum"),
           "chens_backend": summary.get("backend"), "chens_device": summary.get("device")}
    rec["ok"] = d < 1e-11
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compare-chens", nargs="*", default=[], metavar="SUMMARY.json",
                    help="compare instance 0's final state with these `chens run` summaries")
    ap.add_argument("--no-selftest", action="store_true")
    args = ap.parse_args(argv)
    ok = True
    records = []
    if not args.no_selftest:
        records += [_order_check("rk4"), _order_check("rk4_38"), _perturbation_check(),
                    _drift_check(None), _drift_check(TOL), _drift_check(0.0)]
    records += [compare_chens(p) for p in args.compare_chens]
    for r in records:
        r = dict(tool="numpy_reference", **r)
        emit(r)
        ok = ok and bool(r.get("ok"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
