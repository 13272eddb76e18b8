#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .devrun/ from scripts/gpu-bundle.sh:
# every test suite (GPU ones included), `chens validate` on every example study, states.h5
# read back from a GPU run, checkpoint and resume of GPU runs, MPI with two ranks sharing the GPU against one process, the
# time to first result of a 1e3-instance study, the GPU benchmarks, the peer tools on the
# same card (bench/peers: JAX, diffrax, torchdiffeq) and compute-sanitizer over a subset of
# the GPU tests; a short table last. About 8 min: the CPU test suites run in the background
# while the GPU tests run; benchmarks and peers run alone. Logs go to /tmp/chens-gpu-run,
# packed into $OUT/gpu-run.tar.xz (the device tool brings back at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
out=/tmp/chens-gpu-run
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
[[ -f .devrun/bundle.tar.xz ]] && (cd .devrun && xz -dc bundle.tar.xz | tar xf -)
lib=$PWD/.devrun${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
dev() { LD_LIBRARY_PATH=$lib "$@"; }  # chens's binaries with their libraries; Python keeps its own
chens=$PWD/.devrun/bin/chens
# The test binaries know the source tree by its path on the build machine (examples/).
[[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
declare -A result took
stamp() { took[$1]=$(( $(date +%s) - $2 ))s; }

# CPU suites in the background.
t0=$(date +%s)
for t in chens_tests chens_paper_tests; do
  (dev .devrun/$t --gtest_brief=1 > "$out/$t.log" 2>&1; echo $? > "$out/$t.rc") &
done
t=$(date +%s)
dev .devrun/chens_gpu_tests --gtest_brief=1 > "$out/chens_gpu_tests.log" 2>&1 && result[chens_gpu_tests]=pass ||
  result[chens_gpu_tests]="FAIL (see chens_gpu_tests.log)"
stamp chens_gpu_tests $t
grep -h "\[ compare" "$out/chens_gpu_tests.log" > "$out/compare.txt" || true
t=$(date +%s)
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x $san ]]; then
  dev $san --tool memcheck --error-exitcode 9 .devrun/chens_gpu_tests \
    --gtest_filter='AllPairs/CpuVsGpu.*/dirac_rk4:AllPairs/CpuVsGpu.*/naive_dopri5:Formulations/ChainCpuVsGpu.*/dirac_rk4:Models/EnsembleCpuVsGpu.StatisticsAgree*:EnsembleCpuVsGpuLost.*' \
    > "$out/sanitizer.log" 2>&1 && result[sanitizer]=pass || result[sanitizer]="FAIL (see sanitizer.log)"
else
  result[sanitizer]="not run: compute-sanitizer not found"
fi
stamp sanitizer $t
t=$(date +%s)
fails=0
: > "$out/validate.log"
for f in examples/*.toml; do
  grep -qE '^\[sweep\]|^\[\[run\]\]' "$f" && continue  # validate takes single-run studies
  if ! "$chens" validate "$f" >> "$out/validate.log" 2>&1; then fails=$((fails + 1)); echo "  ^ $f" >> "$out/validate.log"; fi
done
result[validate]=$([[ $fails == 0 ]] && echo "pass ($(ls examples/*.toml | wc -l) studies)" || echo "FAIL: $fails studies")
stamp validate $t
# states.h5 from a GPU run (the default backend picks the GPU), read back with h5py.
t=$(date +%s)
python3 tests/output/test_states_h5.py "$chens" > "$out/states_h5.log" 2>&1 && result[states_h5]=pass ||
  result[states_h5]="FAIL (see states_h5.log)"
stamp states_h5 $t
# Checkpoint and resume on the GPU (docs/checkpoints.md): interrupted, signalled, killed and
# resumed runs against uninterrupted ones; the signalled run has 2e6 instances so that it
# lasts long enough on the card to be signalled mid-way.
t=$(date +%s)
timeout 300 python3 tests/checkpoint/test_resume_cli.py "$chens" 1 2000000 > "$out/resume.log" 2>&1 && result[resume]=pass ||
  result[resume]="FAIL (see resume.log)"
stamp resume $t
# MPI, a GPU per rank (here two and three ranks share the one GPU): Debian's Open MPI from
# the bundle, unpacked without replacing anything the machine has.
t=$(date +%s)
if [[ -f .devrun/openmpi.tar ]]; then
  tar -C / -xkf .devrun/openmpi.tar 2> "$out/openmpi-unpack.log"; ldconfig
  mpi=$(command -v mpiexec.openmpi || command -v mpiexec)
  { echo "mpiexec: $mpi"; ldd "$mpi" | grep "not found"; } >> "$out/openmpi-unpack.log"
  if [[ -n $mpi ]]; then
    timeout 240 python3 tests/mpi/test_mpi_sharding.py "$chens" "$mpi" > "$out/mpi.log" 2>&1 && result[mpi_gpu]=pass ||
      result[mpi_gpu]="FAIL (see mpi.log, openmpi-unpack.log)"
  else
    result[mpi_gpu]="not run: mpiexec missing after unpacking (openmpi-unpack.log)"
  fi
else
  result[mpi_gpu]="not run: the bundle has no Open MPI"
fi
stamp mpi_gpu $t
wait
for t in chens_tests chens_paper_tests; do
  [[ $(cat "$out/$t.rc" 2> /dev/null) == 0 ]] && result[$t]=pass || result[$t]="FAIL (see $t.log)"
done
stamp tests_all $t0
# Time to first result: a 1e3-instance study from process start to summary.json (CUDA
# context creation included), GPU and CPU backends.
for be in cuda cpu; do
  t0=$(date +%s.%N)
  "$chens" run --set ensemble.size=1000 --backend $be --no-progress --out "$out/ttfr-$be" > "$out/ttfr-$be.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  result[ttfr_$be]=$(awk -v a="$t0" -v b="$t1" -v rc=$rc 'BEGIN { printf "%.3f s (exit %d)", b - a, rc }')
done
t=$(date +%s)
dev .devrun/bench_gpu_instances --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  > "$out/bench_gpu.log" 2>&1 && result[bench]=pass || result[bench]=FAIL
stamp bench $t
# Peers on the same card (bench/peers/README.md): JAX, diffrax, torchdiffeq; about 3 min.
t=$(date +%s)
OUT="$out" timeout 240 bash bench/peers/run_peers.sh > "$out/peers.txt" 2> "$out/peers.err" && result[peers]=pass ||
  result[peers]="FAIL or partial (see peers.txt, peers.err)"
stamp peers $t
echo
grep -E "instance_steps_per_s" "$out/bench_gpu.log" | grep median | sed 's/_median//' | awk '{print "  " $1, $2, $3, $NF}'
echo
grep -E "inst-steps|^(jax|diffrax|torch|chens)" "$out/peers.txt" | cut -c1-110 | head -40
echo
printf '%-20s %s\n' "on $(cut -d, -f1 "$out/gpu.txt")" "(total $(( $(date +%s) - start )) s)"
for k in chens_tests chens_paper_tests chens_gpu_tests sanitizer validate states_h5 resume mpi_gpu ttfr_cuda ttfr_cpu bench peers; do
  printf '  %-18s %-45s %s\n' "$k" "${result[$k]}" "${took[$k]:-}"
done
echo "  (CPU suites and GPU checks together: ${took[tests_all]})"
rm -rf "$out"/ttfr-*/ 2> /dev/null
[[ -n ${OUT:-} ]] && tar cJf "$OUT/gpu-run.tar.xz" -C /tmp chens-gpu-run
exit 0
