#!/usr/bin/env bash
# chens check --compile (docs/jit.md): every system a study's runs compile on first use is
# compiled into the cache before anything runs, several at once and each once however many
# runs share it; check then estimates every run's time from the compiled objects; chens run
# compiles nothing; a second check has nothing to compile; and the results equal the built-in
# units' bit for bit.
# Usage: check_compile.sh CHENS
set -euo pipefail
chens=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export CHENS_CACHE_DIR=$d/cache
# Four runs over two systems (the pendulum's naive and extended equations under RK4), each
# with and without the momentum projection, which is no part of the system.
cat > "$d/study.toml" << 'TOML'
[integrator]
method = "rk4"
h = 0.05
t_end = 2.0
[ensemble]
size = 64
[output]
sample_dt = 0.5
[sweep]
integrator.formulation = ["naive", "extended"]
projection.momentum = [false, true]
TOML
fail() { echo "FAIL: $1"; shift; for f in "$@"; do echo "---- $f"; cat "$f"; done; exit 1; }
CHENS_SYSTEMS=jit "$chens" check "$d/study.toml" --compile --threads 2 > "$d/check.out" 2> "$d/check.err" ||
  fail "chens check --compile exited with $?" "$d/check.out" "$d/check.err"
grep -q "^# compile: 2 systems compiled on first use, 2 at once" "$d/check.out" ||
  fail "check did not say it compiles the 2 systems 2 at once" "$d/check.out"
[ "$(grep -c "chens: compiling pendulum, .*, rk4, cpu ... .* s; cached in $d/cache" "$d/check.err")" = 2 ] ||
  fail "not each system compiled once, in one line each" "$d/check.err"
[ "$(grep -c "compiled on first use: cached" "$d/check.out")" = 4 ] ||
  fail "the four runs' systems are not all cached after the compile" "$d/check.out"
grep -q "run time: not estimated" "$d/check.out" && fail "a run's time was not estimated after the compile" "$d/check.out"
CHENS_SYSTEMS=jit "$chens" run "$d/study.toml" --out "$d/jit" --no-progress > /dev/null 2> "$d/run.err"
grep -q "compiling" "$d/run.err" && fail "chens run compiled after check --compile" "$d/run.err"
CHENS_SYSTEMS=jit "$chens" check "$d/study.toml" --compile > "$d/again.out" 2> "$d/again.err"
grep -q "^# compile: nothing to compile" "$d/again.out" || fail "the second check had something to compile" "$d/again.out"
grep -q "compiling" "$d/again.err" && fail "the second check compiled" "$d/again.err"
# The built-in units' results, bit for bit.
CHENS_SYSTEMS=built-in "$chens" run "$d/study.toml" --out "$d/built" --no-progress > /dev/null 2>&1
n=0
for f in "$d"/built/*/series.csv; do
  cmp "$f" "$d/jit/${f#"$d"/built/}" || fail "${f#"$d"/built/} differs from the built-in unit's"
  n=$((n + 1))
done
[ "$n" = 4 ] || fail "expected 4 runs' series.csv, found $n"
echo "check_compile: 2 systems compiled at once for 4 runs, cached, run without a compile, equal to the built-in units"
