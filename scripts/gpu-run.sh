#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .devrun/ from scripts/gpu-bundle.sh:
# every test suite (GPU ones included), `chens validate` on every example study, the time to
# first result of a 1e3-instance study, the GPU benchmarks, the peer tools on the same card
# (bench/peers: JAX, diffrax, torchdiffeq; about 3 min) and compute-sanitizer over a subset
# of the GPU tests; a short table last. Logs go to $OUT (or /tmp/chens-gpu-run); about 8 min.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/chens-gpu-run}
mkdir -p "$out"
[[ -f .devrun/bundle.tar.xz ]] && (cd .devrun && xz -dc bundle.tar.xz | tar xf -)
export LD_LIBRARY_PATH=$PWD/.devrun:${LD_LIBRARY_PATH:-}
# The test binaries know the source tree by its path on the build machine (examples/).
[[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
declare -A result
for t in chens_tests chens_paper_tests chens_gpu_tests; do
  .devrun/$t --gtest_brief=1 > "$out/$t.log" 2>&1 && result[$t]=pass || result[$t]="FAIL (see $t.log)"
done
grep -h "\[ compare" "$out/chens_gpu_tests.log" > "$out/compare.txt" || true
fails=0
: > "$out/validate.log"
for f in examples/*.toml; do
  grep -qE '^\[sweep\]|^\[\[run\]\]' "$f" && continue  # validate takes single-run studies
  if ! .devrun/chens validate "$f" >> "$out/validate.log" 2>&1; then fails=$((fails + 1)); echo "  ^ $f" >> "$out/validate.log"; fi
done
result[validate]=$([[ $fails == 0 ]] && echo "pass ($(ls examples/*.toml | wc -l) studies)" || echo "FAIL: $fails studies")
# Time to first result: a 1e3-instance study from process start to summary.json (CUDA
# context creation included), GPU and CPU backends.
for be in cuda cpu; do
  t0=$(date +%s.%N)
  .devrun/chens run --set ensemble.size=1000 --backend $be --no-progress --out "$out/ttfr-$be" > "$out/ttfr-$be.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  result[ttfr_$be]=$(awk -v a="$t0" -v b="$t1" -v rc=$rc 'BEGIN { printf "%.3f s (exit %d)", b - a, rc }')
done
.devrun/bench_gpu_instances --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  > "$out/bench_gpu.log" 2>&1 && result[bench]=pass || result[bench]=FAIL
# Peers on the same card (bench/peers/README.md): JAX, diffrax, torchdiffeq; about 3 min.
OUT="$out" timeout 260 bash bench/peers/run_peers.sh > "$out/peers.txt" 2> "$out/peers.err" && result[peers]=pass ||
  result[peers]="FAIL or partial (see peers.txt, peers.err)"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x $san ]]; then
  $san --tool memcheck --error-exitcode 9 .devrun/chens_gpu_tests \
    --gtest_filter='AllPairs/CpuVsGpu.*/dirac_rk4:AllPairs/CpuVsGpu.*/naive_dopri5:Formulations/ChainCpuVsGpu.*/dirac_rk4:Models/EnsembleCpuVsGpu.StatisticsAgree*' \
    > "$out/sanitizer.log" 2>&1 && result[sanitizer]=pass || result[sanitizer]="FAIL (see sanitizer.log)"
else
  result[sanitizer]="not run: compute-sanitizer not found"
fi
echo
grep -E "instance_steps_per_s" "$out/bench_gpu.log" | grep median | sed 's/_median//' | awk '{print "  " $1, $2, $3, $NF}'
echo
grep -E "inst-steps|^(jax|diffrax|torch|chens)" "$out/peers.txt" | cut -c1-110 | head -40
echo
printf '%-20s %s\n' "on $(cut -d, -f1 "$out/gpu.txt")" ""
for k in chens_tests chens_paper_tests chens_gpu_tests validate ttfr_cuda ttfr_cpu bench peers sanitizer; do printf '  %-18s %s\n' "$k" "${result[$k]}"; done
