#!/bin/bash
# chens plot end to end on a real study of many runs: a sweep of integrator.method x
# integrator.h (pendulum, 32 instances, t_end = 2) plotted whole and as a --runs subset.
# Checks the files, the colour/line-style keys named in summary.txt, the convergence
# slopes of RK2 and RK4 (orders 2 and 4, pre-asymptotic growth allowed: [1.5, 3] and
# [3, 6]), the work-precision figure and table (RK4 the cheaper in right-hand-side
# evaluations at every error level) and that a --runs pattern matching no run is refused
# with exit 2.
#   tests/plot/plot_a_sweep.sh CHENS
set -u
chens=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "plot_a_sweep: $*" >&2; exit 1; }
cat > "$d/sweep.toml" <<'TOML'
[integrator]
formulation = "dirac"
t_end = 2.0
[ensemble]
size = 32
[output]
sample_dt = 0.1
[sweep]
integrator.method = ["rk2", "rk4"]
integrator.h = [0.1, 0.05, 0.025]
TOML
"$chens" run "$d/sweep.toml" --out "$d/study" --no-progress > /dev/null 2> "$d/run.log" ||
  { cat "$d/run.log" >&2; fail "chens run failed"; }
"$chens" plot "$d/study" > /dev/null || fail "chens plot failed"
for f in integration_error.png energy_error.svg convergence.png convergence.svg summary.txt; do
  test -s "$d/study/plots/$f" || fail "no plots/$f"
done
s=$d/study/plots/summary.txt
grep -q '^colour: integrator.method; line style: integrator.h$' "$s" || fail "colour/style keys not in summary.txt"
slope() { awk -v m="$1" '$1 == "method" && $3 == m { print $5 }' "$s"; }
awk -v k="$(slope rk2)" 'BEGIN { exit !(k >= 1.5 && k <= 3) }' || fail "rk2 slope $(slope rk2) not in [1.5, 3]"
awk -v k="$(slope rk4)" 'BEGIN { exit !(k >= 3 && k <= 6) }' || fail "rk4 slope $(slope rk4) not in [3, 6]"
# Work-precision (issue 43): the figure, and in summary.txt's table RK4 the cheapest curve
# by right-hand-side evaluations at every decade of error (at least 3) it compares.
for f in work_precision.png work_precision.svg; do test -s "$d/study/plots/$f" || fail "no plots/$f"; done
awk '/^  cheapest to reach .* by rhs_evals/ { on = 1; next } on && $1 ~ /^1e-/ { n++; if ($NF != "method=rk4") bad = 1 }
     END { exit !(n >= 3 && !bad) }' "$s" || fail "RK4 not the cheapest by rhs evaluations at every level"
"$chens" plot "$d/study" --out "$d/subset" --runs 'h=0.1_*' --format png > /dev/null || fail "--runs failed"
test "$(grep -c '^run ' "$d/subset/summary.txt")" = 2 || fail "--runs h=0.1_* did not plot 2 runs"
test ! -e "$d/subset/convergence.png" || fail "a convergence figure for one h"
test ! -e "$d/subset/work_precision.png" || fail "a work-precision figure for one h"
"$chens" plot "$d/study" --out "$d/none" --runs 'h=9_*' > /dev/null 2> "$d/err"
test $? = 2 || fail "--runs h=9_* did not exit 2"
grep -q 'matches no run' "$d/err" || fail "--runs h=9_*: no message"
test ! -e "$d/none" || fail "--runs h=9_* wrote $d/none"
echo "plot_a_sweep: ok (slopes rk2 $(slope rk2), rk4 $(slope rk4))"
