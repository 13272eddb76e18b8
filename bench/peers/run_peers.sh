#!/usr/bin/env bash
# Runs the peer-tool throughput benchmarks (bench/peers/README.md) one after the other,
# each in its own python3 process (the python3 on PATH), collects their JSON lines in
# $OUT/peers.jsonl (OUT defaults to /tmp) and prints a table. Each script's stdout and
# stderr are kept as $OUT/peers-<script>.out / .err.
#
# Time: about 3 minutes in all on one H100/H200. Each script has a soft budget
# (--time-budget: it starts no measurement that would not fit, and says so with a
# "skipped" line) and a hard limit (timeout) in case a call hangs:
#   numpy_reference.py   self-test of the reference (RK4 order, drift)    ~3 s
#   jax_pendulum.py      budget 70 s, limit 110 s: sizes 1e3, 1e4, 1e5, 1e6, 1e7 (those of
#                        chens's BM_GpuPendulum), 1000 steps, tol 1e-6 / none / 0, each with
#                        unroll 1 and 10
#   diffrax_pendulum.py  budget 45 s, limit 80 s: the same sizes (compiles take seconds)
#   torchdiffeq_pendulum.py budget 45 s, limit 80 s: the same sizes, torchdiffeq odeint
#                        (3/8 rule, no projection) and the torch loop with tol 1e-6
# Steps: 1000 (t in [0, 10], as chens's benchmark) unless one run of a size is predicted
# to take longer than --target-seconds; then fewer (not below 100), reported in "steps".
# Throughput (instance-steps per second) does not depend on the step count once launch
# latency is amortised, and every line states the steps it ran.
#
# chens itself on the same card (optional, ~15 s more, see run_chens below): CHENS_DIR
# (default .devrun/ of the repository, from scripts/gpu-bundle.sh), CHENS_SIZES, CHENS_BACKEND.
# Environment: OUT (output folder), PYTHON (default python3), JAX_BUDGET, DFX_BUDGET,
# TCH_BUDGET (the soft budgets above, seconds), PEERS_QUICK=1 (a smoke test:
# sizes 1e3 and 1e4, 200 steps, small budgets), PEERS_ARGS (extra arguments for the three
# peer scripts, after the ones above so that they override them, e.g. "--allow-cpu" to
# test on a machine without a GPU, or "--sizes 1e6 --steps 500"). Exit status: 0 when every script exited 0
# or only lacked its module, otherwise 1.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-/tmp}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
JSONL="$OUT/peers.jsonl"
: > "$JSONL"
export PYTHONDONTWRITEBYTECODE=1
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-1}"

SIZES="1000,10000,100000,1000000,10000000"
STEPS=1000
JAX_BUDGET=${JAX_BUDGET:-70}; JAX_LIMIT=$((JAX_BUDGET + 40))
DFX_BUDGET=${DFX_BUDGET:-45}; DFX_LIMIT=$((DFX_BUDGET + 35))
TCH_BUDGET=${TCH_BUDGET:-45}; TCH_LIMIT=$((TCH_BUDGET + 35))
TARGET=1.5
if [ "${PEERS_QUICK:-0}" = 1 ]; then
  SIZES="1000,10000"; STEPS=200
  JAX_BUDGET=40; JAX_LIMIT=60; DFX_BUDGET=40; DFX_LIMIT=60; TCH_BUDGET=30; TCH_LIMIT=45
fi

read -r -a EXTRA <<< "${PEERS_ARGS:-}"
status=0
T0=$(date +%s)

# run NAME TOOL LIMIT ARGS...: one script; its JSON lines go to $JSONL.
run() {
  local name="$1" tool="$2" limit="$3"
  shift 3
  local out="$OUT/peers-${name%.py}.out" err="$OUT/peers-${name%.py}.err"
  echo "== $name (limit ${limit}s, $(( $(date +%s) - T0 ))s elapsed)" >&2
  timeout --kill-after=10 "$limit" "$PY" "$HERE/$name" "$@" > "$out" 2> "$err"
  local rc=$?
  grep '^{' "$out" >> "$JSONL"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "{\"tool\": \"$tool\", \"script\": \"$name\", \"error\": \"killed after the ${limit} s limit\"}" >> "$JSONL"
  elif ! grep -q '^{' "$out"; then
    echo "{\"tool\": \"$tool\", \"script\": \"$name\", \"error\": \"no output, exit status $rc (see $err)\"}" >> "$JSONL"
  fi
  if [ "$rc" != 0 ]; then
    # 2: the tool's module is missing (the script printed "module not found"): not a failure.
    if [ "$rc" != 2 ]; then status=1; fi
    echo "-- $name exited $rc; last lines of $err:" >&2
    tail -n 15 "$err" >&2
  fi
}

# chens on the same card, when its binaries are at hand (CHENS_DIR, default the repository's
# .devrun/ as scripts/gpu-bundle.sh prepares it; its bundle is unpacked if needed):
# bench_gpu_instances's pendulum benchmark, then `chens run` (ensemble backend, 11
# samples, no reference) with tol none and 1e-6 at CHENS_SIZES (default 1e6 and 1e7).
run_chens() {
  local dir="${CHENS_DIR:-$HERE/../../.devrun}"
  [ -d "$dir" ] || return 0
  if [ ! -x "$dir/chens" ] && [ -f "$dir/bundle.tar.xz" ]; then
    (cd "$dir" && xz -dc bundle.tar.xz | tar xf -)
  fi
  local lib="$dir:${LD_LIBRARY_PATH:-}" dev=""
  dev="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
  if [ -x "$dir/bench_gpu_instances" ]; then
    echo "== chens bench_gpu_instances ($(( $(date +%s) - T0 ))s elapsed)" >&2
    LD_LIBRARY_PATH="$lib" timeout 120 "$dir/bench_gpu_instances" \
      --benchmark_filter='BM_GpuPendulum/|BM_GpuEnsemblePendulum/' --benchmark_min_time=0.1 \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json \
      > "$OUT/chens-bench.json" 2> "$OUT/chens-bench.err" || echo "-- bench_gpu_instances failed (see $OUT/chens-bench.err)" >&2
    CHENS_DEVICE="$dev" "$PY" "$HERE/chens_results.py" bench "$OUT/chens-bench.json" >> "$JSONL" || status=1
  fi
  if [ -x "$dir/chens" ]; then
    echo "== chens run ($(( $(date +%s) - T0 ))s elapsed)" >&2
    local n tol sums=()
    for tol in none 1e-6; do
      for n in ${CHENS_SIZES:-1000000 10000000}; do
        local d="$OUT/chens-run-$tol-$n" proj=()
        [ "$tol" != none ] && proj=(--set projection.momentum=true --set "projection.tol=$tol")
        rm -rf "$d"
        if LD_LIBRARY_PATH="$lib" timeout 120 "$dir/chens" run --single --set integrator.formulation=dirac \
             --set integrator.method=rk4 --set integrator.h=0.01 --set integrator.t_end=10.0 \
             --set "ensemble.size=$n" --set ensemble.perturbation=1e-3 --set output.sample_dt=1.0 \
             --set output.reference=none ${proj[@]+"${proj[@]}"} --backend "${CHENS_BACKEND:-cuda}" --out "$d" \
             > "$d.log" 2>&1; then
          sums+=("$d/summary.json")
        else
          echo "{\"tool\": \"chens\", \"variant\": \"chens run tol=$tol\", \"instances\": $n, \"error\": \"chens run failed (see $d.log)\"}" >> "$JSONL"
          status=1
        fi
      done
    done
    [ "${#sums[@]}" -gt 0 ] && { "$PY" "$HERE/chens_results.py" run "${sums[@]}" >> "$JSONL" || status=1; }
  fi
  return 0
}

run numpy_reference.py numpy_reference 60
run_chens
run jax_pendulum.py jax "$JAX_LIMIT" --sizes "$SIZES" --steps "$STEPS" --tols 1e-6,none,0 --unroll 1,10 \
  --time-budget "$JAX_BUDGET" --target-seconds "$TARGET" ${EXTRA[@]+"${EXTRA[@]}"}
run diffrax_pendulum.py diffrax "$DFX_LIMIT" --sizes "$SIZES" --steps "$STEPS" \
  --time-budget "$DFX_BUDGET" --target-seconds "$TARGET" ${EXTRA[@]+"${EXTRA[@]}"}
run torchdiffeq_pendulum.py torchdiffeq "$TCH_LIMIT" --sizes "$SIZES" --steps "$STEPS" --loop-tols 1e-6 \
  --time-budget "$TCH_BUDGET" --target-seconds 1.0 ${EXTRA[@]+"${EXTRA[@]}"}

echo "== done in $(( $(date +%s) - T0 ))s; $(wc -l < "$JSONL") JSON lines in $JSONL" >&2

"$PY" - "$JSONL" <<'EOF'
import json, sys
rows = []
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    try:
        rows.append(json.loads(line))
    except ValueError:
        rows.append({"tool": "?", "error": "bad JSON line: " + line[:80]})
fmt = "%-12s %-30s %10s %6s %10s %12s %9s  %s"
print(fmt % ("tool", "variant", "instances", "steps", "seconds", "inst-steps/s", "diff", "note"))
for r in rows:
    if r.get("tool") == "numpy_reference":
        note = "ok" if r.get("ok") else "FAILED"
        what = r.get("check", "")
        if what == "order":
            what += " %s ratios %s" % (r.get("method"), ",".join("%.1f" % x for x in r.get("ratios", [])))
        elif what == "constraint drift":
            what += " tol=%s" % r.get("tol")
            note += " max|phi| %.1e max|psi| %.1e, %s projections" % (
                r.get("max_abs_phi", float("nan")), r.get("max_abs_psi", float("nan")), r.get("projections"))
        print(fmt % ("numpy_ref", what[:30], "", "", "", "", "", note))
        continue
    if "seconds" in r:
        diff = r.get("max_abs_diff_vs_numpy")
        print(fmt % (r.get("tool", "?"), str(r.get("variant", ""))[:30], r.get("instances", ""), r.get("steps", ""),
                     "%.4g" % r["seconds"], "%.3e" % r["instance_steps_per_s"],
                     "-" if diff is None else "%.1e" % diff, r.get("check", "")))
    else:
        note = r.get("error") or r.get("skipped") or ""
        if r.get("message"):
            note += ": " + r["message"][:60]
        print(fmt % (r.get("tool", "?"), str(r.get("variant", ""))[:30], r.get("instances", ""), "", "", "", "", note))
EOF
exit "$status"
