#!/usr/bin/python3
"""Figures of 003's penalty limits from two chens studies (examples/fax2003_penalty_*.toml).

  plot_penalty_limits.py TANGENTIAL_DIR NONTANGENTIAL_DIR OUTDIR

Reads instance 0's trajectory.csv (positions and the rigid pendulum's closed form from the
projected initial data, x_ref, y_ref) of every run of both studies and draws

  tangential.png      max_t |q(t) - q_rigid(t)| against mu for C = G and C = G1 (003 §3:
                      convergence to the constrained motion; a 1/mu line drawn for comparison;
                      the exponent is fitted over mu >= 100);
  nontangential.png   |q(t) - limit(t)| against t for each mu >= 100: C = G against the rigid
                      pendulum from the projected data (limit a), C = G1 against Rubin and
                      Ungar's limit (b): the rigid pendulum with the extra potential
                      E0 exp((x - x0)/l), E0 = m v_n^2 / 2 (003 eqs. 42-43), integrated here
                      with scipy's DOP853 at rtol = atol = 1e-12; and C = G1 against (a),
                      which it does not approach.

Prints the numbers it plots. Exit 2 for missing or incomplete input. Uses Debian's
python3-numpy, python3-scipy and python3-matplotlib (scripts/bootstrap.sh installs them).
"""
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402


def fail(msg):
    print("plot_penalty_limits: " + msg, file=sys.stderr)
    sys.exit(2)


def runs_of(study_dir):
    """(mu, constraint, study dict, trajectory columns) of every run of a study directory."""
    index = os.path.join(study_dir, "study.json")
    if not os.path.isfile(index):
        fail(study_dir + ": no study.json (run the example study first)")
    with open(index) as f:
        st = json.load(f)
    out = []
    for r in st["runs"]:
        d = os.path.join(study_dir, r["directory"])
        traj = os.path.join(d, "trajectory.csv")
        summ = os.path.join(d, "summary.json")
        if r.get("status") != "complete" or not os.path.isfile(traj) or not os.path.isfile(summ):
            fail(d + ": run not complete or without trajectory.csv (output.trajectory = true)")
        with open(summ) as f:
            model = json.load(f)["study"]["model"]
        if model.get("kind") != "penalty-pendulum":
            fail(d + ": not a penalty-pendulum run")
        with open(traj) as f:
            rows = list(csv.DictReader(f))
        cols = {k: np.array([float(row[k]) for row in rows]) for k in ("t", "x", "y", "x_ref", "y_ref")}
        out.append((model["penalty"], model["constraint"], model, cols))
    return sorted(out, key=lambda r: (r[1], r[0]))


def rubin_ungar_limit(model, t):
    """Positions of the G1 limit (b) at times t, from the nominal initial data of the study."""
    m, l, g = model["mass"], model["length"], model["gravity"]
    x0, y0, px0, py0 = model["initial"]
    r = math.hypot(x0, y0)
    th0 = math.atan2(x0, -y0)  # x = l sin th, y = -l cos th
    vt = (px0 * math.cos(th0) + py0 * math.sin(th0)) / m  # velocity along the circle's tangent
    vn = (px0 * x0 + py0 * y0) / (m * r)  # along the radius
    e0 = 0.5 * m * vn * vn
    xs = l * math.sin(th0)

    def rhs(_, s):
        th, w = s
        return [w, -(g / l) * math.sin(th) - e0 * math.exp((l * math.sin(th) - xs) / l) * math.cos(th) / (m * l)]

    sol = solve_ivp(rhs, (t[0], t[-1]), [th0, vt / l], method="DOP853", t_eval=t, rtol=1e-12, atol=1e-12)
    return l * np.sin(sol.y[0]), -l * np.cos(sol.y[0]), vn


def main(argv):
    if len(argv) != 4:
        fail("usage: plot_penalty_limits.py TANGENTIAL_DIR NONTANGENTIAL_DIR OUTDIR")
    tangential, normal, outdir = runs_of(argv[1]), runs_of(argv[2]), argv[3]
    os.makedirs(outdir, exist_ok=True)

    fig, ax = plt.subplots(figsize=(7.0, 5.0))
    for c, marker in (("G", "o"), ("G1", "s")):
        mus = [mu for mu, cc, _, _ in tangential if cc == c]
        dev = [float(np.max(np.hypot(tr["x"] - tr["x_ref"], tr["y"] - tr["y_ref"]))) for _, cc, _, tr in tangential if cc == c]
        for mu, d in zip(mus, dev):
            print("tangential C = %-2s mu = %-8g max |q - q_rigid| = %.3e" % (c, mu, d))
        fit = [(mu, d) for mu, d in zip(mus, dev) if mu >= 100]  # the asymptotic regime
        if len(fit) >= 2:
            p = np.polyfit(np.log([f[0] for f in fit]), np.log([f[1] for f in fit]), 1)[0]
            print("tangential C = %-2s fitted exponent over mu >= 100: %.3f" % (c, p))
        ax.loglog(mus, dev, marker + "-", label="C = %s" % c)
    if tangential:
        mus = sorted({mu for mu, _, _, _ in tangential})
        # A 1/mu line through C = G's point at the largest mu.
        mu_max, tr = [(mu, tr) for mu, cc, _, tr in tangential if cc == "G" and mu == mus[-1]][0]
        c = mu_max * float(np.max(np.hypot(tr["x"] - tr["x_ref"], tr["y"] - tr["y_ref"])))
        ax.loglog(mus, [c / mu for mu in mus], "k--", lw=0.8, label=r"$%.3g/\mu$" % c)
    ax.set_xlabel(r"penalty $\mu$")
    ax.set_ylabel(r"$\max_t\,|q(t) - q_\mathrm{rigid}(t)|$")
    ax.set_title("003: tangential initial velocity, instance 0, t in [0, %g]" % tangential[0][3]["t"][-1])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "tangential.png"), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.0, 5.0))
    for mu, c, model, tr in normal:
        drawn = mu >= 100  # weaker penalties are far from either limit (printed, not drawn)
        if c == "G":
            d = np.hypot(tr["x"] - tr["x_ref"], tr["y"] - tr["y_ref"])
            if drawn:
                ax.semilogy(tr["t"][1:], d[1:], "-", label=r"G vs (a), $\mu$ = %g" % mu)
            print("non-tangential C = G  mu = %-8g max distance to (a) %.3e" % (mu, d.max()))
        else:
            xb, yb, vn = rubin_ungar_limit(model, tr["t"])
            d = np.hypot(tr["x"] - xb, tr["y"] - yb)
            da = np.hypot(tr["x"] - tr["x_ref"], tr["y"] - tr["y_ref"])
            if drawn:
                ax.semilogy(tr["t"][1:], d[1:], "--", label=r"G1 vs (b), $\mu$ = %g" % mu)
            print("non-tangential C = G1 mu = %-8g max distance to (b) %.3e, to (a) %.3e (v_n = %g)" %
                  (mu, d.max(), da.max(), vn))
            if mu == max(m for m, cc, _, _ in normal if cc == "G1"):
                ax.semilogy(tr["t"][1:], da[1:], ":", color="gray", label=r"G1 vs (a), $\mu$ = %g" % mu)
    ax.set_xlabel("t")
    ax.set_ylabel("position distance to the limit")
    ax.set_title("003: non-tangential velocity; (a) rigid pendulum, (b) Rubin-Ungar limit")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "nontangential.png"), dpi=120)
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
