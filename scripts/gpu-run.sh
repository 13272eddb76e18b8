#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .devrun/ from scripts/gpu-bundle.sh:
# every test suite (GPU ones included), `chens validate` on every example study, states.h5
# read back from a GPU run, checkpoint and resume of GPU runs, MPI with two ranks sharing the GPU against one process, the
# time to first result of a 1e3-instance study, the GPU benchmarks, the peer tools on the
# same card (bench/peers: JAX, diffrax, torchdiffeq) and compute-sanitizer over a subset of
# the GPU tests; a short table last. About 8 min: the CPU test suites run in the background
# while the GPU tests run (after the systems they compile on first use, compiled several at
# once: not yet timed on a device); benchmarks and peers run alone. The most needed come first (GPU
# tests, benchmarks, peers, validate), so that a call stopped at its time limit (SIGTERM:
# the table and the logs are still written) has them. Logs go to /tmp/chens-gpu-run,
# packed into $OUT/gpu-run.tar.xz (the device tool brings back at most 8 files).
# STEPS="gpu_tests mpi ..." runs only the steps named (default: all of them: cpu_tests
# gpu_tests bench chain_group peers jit_gpu validate ttfr ncu ncu_source sass states_h5 mpi resume
# sanitizer), for a second call that repeats what failed; GPU_TESTS_FILTER and
# CPU_TESTS_FILTER narrow the test suites (gtest filters).
set -uo pipefail
cd "$(dirname "$0")/.."
out=/tmp/chens-gpu-run
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
[[ -f .devrun/bundle.tar.xz ]] && (cd .devrun && xz -dc bundle.tar.xz | tar xf -)
# Random123's headers (Debian's librandom123-dev), which the GPU's systems compiled on first use
# include: from the bundle where the machine lacks them.
[[ -d .devrun/Random123 && ! -d /usr/include/Random123 && ! -d /usr/local/include/Random123 ]] &&
  cp -r .devrun/Random123 /usr/local/include/
lib=$PWD/.devrun${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
dev() { LD_LIBRARY_PATH=$lib "$@"; }  # chens's binaries with their libraries; Python keeps its own
chens=$PWD/.devrun/bin/chens
# The test binaries know the source tree by its path on the build machine (examples/).
[[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
declare -A result took
stamp() { took[$1]=$(( $(date +%s) - $2 ))s; }
# A step in the background, waited for: a SIGTERM (the call's time limit) then runs finish at
# once instead of after the step.
fg() { "$@" & wait $!; }
want() { [[ -z ${STEPS:-} || " $STEPS " == *" $1 "* ]]; }

finish() {
echo
grep -E "instance_steps_per_s" "$out/bench_gpu.log" 2> /dev/null | grep median | sed 's/_median//' | cut -c1-220
echo
grep -E "instance_steps_per_s" "$out/bench_chain_group.log" 2> /dev/null | grep median | sed 's/_median//' | cut -c1-200
grep -E "instance_steps_per_s" "$out/bench_cpu_groups.log" 2> /dev/null | cut -c1-200
grep -E "Duration|Achieved Occupancy|Registers Per|pipe_fp64" "$out/ncu_group_step.txt" 2> /dev/null | head -6
echo
grep -E "inst-steps|^(jax|diffrax|torch|chens)" "$out/peers.txt" 2> /dev/null | cut -c1-110 | head -40
echo
printf '%-20s %s\n' "on $(cut -d, -f1 "$out/gpu.txt")" "(total $(( $(date +%s) - start )) s)"
grep -E "instance_steps_per_s" "$out/bench_gpu_base.log" 2> /dev/null | grep median | sed 's/_median//; s/^/base /' | cut -c1-200
cat "$out/sass_mix.txt" 2> /dev/null
grep -E "Duration|Achieved Occupancy|Registers Per|pipe_fp64|Warp Cycles Per Issued|Issue Slots Busy" "$out/ncu_lean_step.txt" 2> /dev/null | head -12
echo
for k in chens_tests chens_paper_tests first_use_compiles chens_gpu_tests sanitizer jit_gpu validate states_h5 resume mpi_gpu ttfr_cuda ttfr_cpu bench bench_base chain_group ncu ncu_source sass peers; do
  printf '  %-18s %-45s %s\n' "$k" "${result[$k]:-not reached}" "${took[$k]:-}"
done
echo "  (CPU suites and GPU checks together: ${took[tests_all]:-})"
rm -rf "$out"/ttfr-*/ 2> /dev/null
[[ -n ${OUT:-} ]] && tar cJf "$OUT/gpu-run.tar.xz" -C /tmp chens-gpu-run
  exit 0
}
trap finish TERM INT

# CPU suites in the background.
t0=$(date +%s)
for t in chens_tests chens_paper_tests; do  # absent from a GPU_ONLY bundle (gpu-bundle.sh)
  want cpu_tests || { echo "not asked" > "$out/$t.rc"; continue; }
  [[ -x .devrun/$t ]] || { echo skipped > "$out/$t.rc"; continue; }
  (dev .devrun/$t --gtest_brief=1 --gtest_filter="${CPU_TESTS_FILTER:-*}" > "$out/$t.log" 2>&1; echo $? > "$out/$t.rc") &
done
t=$(date +%s)
if want gpu_tests; then
  # The systems the GPU tests compile on first use (tests/gpu/first_use_*.toml: the list's
  # systems and methods, and the user models from their headers), compiled into their cache
  # first, the GPU's and the CPU's side by side and several at once each: in the tests they
  # would be one compile after another within the tests' time limit. By /work/main's path, as
  # the test binaries name the headers (the cache's key holds a header's path).
  # (Waiting for these alone: the CPU suites run in the background meanwhile.)
  compiles=()
  deadline=$(( $(date +%s) + 300 ))  # one limit for all the files: a stuck compile must not hold the call
  for b in cuda cpu; do
    (for study in /work/main/tests/gpu/first_use_*.toml; do
       left=$(( deadline - $(date +%s) ))
       (( left > 0 )) || { echo "first-use compiles: out of time before $study"; break; }
       timeout $left env LD_LIBRARY_PATH="$lib" CHENS_CACHE_DIR=/tmp/chens-jit-tests "$chens" check "$study" \
         --compile --backend $b --threads 8
     done > "$out/first_use_$b.log" 2>&1) &
    compiles+=($!)
  done
  wait "${compiles[@]}"
  result[first_use_compiles]="$(grep -hoE 'compile: (done in .* s|nothing to compile)' "$out"/first_use_{cuda,cpu}.log | tr '\n' ' ')"
  stamp first_use_compiles $t
  t=$(date +%s)
  fg timeout 240 env LD_LIBRARY_PATH="$lib" CHENS_CACHE_DIR=/tmp/chens-jit-tests .devrun/chens_gpu_tests --gtest_brief=1 --gtest_filter="${GPU_TESTS_FILTER:-*}" \
    > "$out/chens_gpu_tests.log" 2>&1 && result[chens_gpu_tests]=pass || result[chens_gpu_tests]="FAIL (see chens_gpu_tests.log)"
  stamp chens_gpu_tests $t
  grep -h "\[ compare" "$out/chens_gpu_tests.log" > "$out/compare.txt" || true
fi
t=$(date +%s)
if want bench; then
# The GPU benchmarks (medians of 3); with .devrun-base/ (scripts/gpu-bundle.sh BASE_BUILD: the
# same benchmark built from an earlier commit) the earlier build's pendulum and chain rows
# run in the same call on the same card, for before/after ratios.
fg timeout ${BENCH_LIMIT:-240} env LD_LIBRARY_PATH="$lib" .devrun/bench_gpu_instances --benchmark_filter=BM_Gpu --benchmark_min_time=0.3 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > "$out/bench_gpu.log" 2>&1 && result[bench]=pass || result[bench]=FAIL
if [[ -f .devrun-base/bundle.tar.xz ]]; then
  (cd .devrun-base && xz -dc bundle.tar.xz | tar xf -)
  fg env LD_LIBRARY_PATH="$PWD/.devrun-base" .devrun-base/bench_gpu_instances \
    --benchmark_filter='BM_GpuPendulum/(1000000|10000000)/|BM_GpuPendulumFloat/10000000/|BM_GpuChain7/1000000/' \
    --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    > "$out/bench_gpu_base.log" 2>&1 && result[bench_base]=pass || result[bench_base]=FAIL
fi
fi
# Chains on thread groups (issue 20): the group kernels for every built size beside the same
# loop on this machine's CPU cores, and ncu's view of the 64-atom fast kernel.
if ! want chain_group; then
  :
elif [[ -x .devrun/bench_chain_group ]]; then
  fg timeout ${BENCH_LIMIT:-240} env LD_LIBRARY_PATH="$lib" .devrun/bench_chain_group --benchmark_min_time=0.2 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$out/bench_chain_group.log" 2>&1 && result[chain_group]=pass ||
    result[chain_group]="FAIL (see bench_chain_group.log)"
  if command -v ncu > /dev/null; then
    fg timeout 90 env LD_LIBRARY_PATH="$lib" ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section LaunchStats --metrics sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active \
      -k regex:dirac_rk4 -c 2 .devrun/bench_chain_group --benchmark_filter='BM_GpuChainGroup<(16|64)>/100000' \
      --benchmark_min_time=0.01 > "$out/ncu_chain_group.txt" 2>&1 || true
  fi
else
  result[chain_group]="not run: no bench_chain_group in the bundle"
fi
# The engine's chains on thread groups against the CPU backend on this machine's cores, the
# same call (BM_CpuChainOnGroups; the GPU rows ran with BM_Gpu above), and ncu's view of the
# engine's 64-atom group step kernel.
if want chain_group; then
fg timeout 120 env LD_LIBRARY_PATH="$lib" .devrun/bench_gpu_instances --benchmark_filter=BM_CpuChainOnGroups \
  --benchmark_min_time=0.1 > "$out/bench_cpu_groups.log" 2>&1 || true
if command -v ncu > /dev/null; then
  fg timeout 90 env LD_LIBRARY_PATH="$lib" ncu --clock-control none --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --metrics sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active \
    -k regex:group_lean_step -c 1 "$chens" run --single --set model.kind=chain --set model.atoms=64 \
    --set ensemble.size=100000 --set integrator.h=0.01 --set integrator.t_end=0.5 --set output.sample_dt=0.5 \
    --set projection.momentum=true --backend cuda --no-progress --out "$out/ncu-groups" > "$out/ncu_group_step.txt" 2>&1 || true
  rm -rf "$out/ncu-groups"
fi
fi
# Where the 64-atom group kernel's time goes, instruction by instruction: ncu's source page
# (SASS, with each instruction's executed count, threads per execution and warp stall
# samples) of the engine's group_lean_step, as CSV. A small run (8192 instances, 5 steps):
# on the standalone kernel's 10^5 instances ncu's replay of these sections did not finish
# in 120 s on an H200 (2026-11-29).
if want ncu_source && command -v ncu > /dev/null; then
  fg timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats \
    --section InstructionStats --section LaunchStats --section Occupancy -k regex:group_lean_step -c 1 \
    --export "$out/group64" "$chens" run --single --set model.kind=chain --set model.atoms=64 --set ensemble.size=8192 \
    --set integrator.h=0.01 --set integrator.t_end=0.05 --set output.sample_dt=0.05 --set projection.momentum=true \
    --backend cuda --no-progress --out "$out/ncu-source-run" > "$out/ncu_source.log" 2>&1 && result[ncu_source]=pass ||
    result[ncu_source]="FAIL (see ncu_source.log)"
  rm -rf "$out/ncu-source-run"
  ncu --import "$out/group64.ncu-rep" --page details > "$out/ncu_group64_details.txt" 2>&1 || true
  ncu --import "$out/group64.ncu-rep" --page source --csv --print-source sass 2> /dev/null | xz -T1 > "$out/ncu_group64_sass.csv.xz" || true
  rm -f "$out/group64.ncu-rep"
fi
stamp bench $t
# Peers on the same card (bench/peers/README.md): JAX, diffrax, torchdiffeq; about 3 min.
t=$(date +%s)
if want peers; then fg env OUT="$out" JAX_BUDGET=${JAX_BUDGET:-50} DFX_BUDGET=${DFX_BUDGET:-25} TCH_BUDGET=${TCH_BUDGET:-25} timeout 200 bash bench/peers/run_peers.sh > "$out/peers.txt" 2> "$out/peers.err" && result[peers]=pass ||
  result[peers]="FAIL or partial (see peers.txt, peers.err)"
fi
stamp peers $t
# Systems compiled on first use for the GPU (issue 42, docs/jit.md): `chens run` of chains
# the build lacks (12 atoms on groups of 4 lanes, 100 on groups of 4 lanes with 25 atoms
# each), from an empty cache and then cached, with nvcc's time. Needs the build tree's
# support libraries carried (build/release/libchens_engine_support.a,
# build/release/kernels/libchens_cuda_support.a) and its generated headers
# (build/release/generated); the GPU tests' JitOnTheGpu cases compile their own.
t=$(date +%s)
if want jit_gpu; then
  : > "$out/jit_gpu.log"
  for n in 12 100; do
    for use in first cached; do
      t0=$(date +%s.%N)
      CHENS_CACHE_DIR=/tmp/chens-jit-run fg "$chens" run --single --set model.kind=chain --set model.atoms=$n --set ensemble.size=10000 \
        --set integrator.h=0.01 --set integrator.t_end=1 --set output.sample_dt=0.5 --set projection.momentum=true \
        --backend cuda --no-progress --out "$out/jit-run-$n-$use" >> "$out/jit_gpu.log" 2>&1
      rc=$?
      echo "chain N = $n, $use use: exit $rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f s", b - a }')" >> "$out/jit_gpu.log"
    done
  done
  cp /tmp/chens-jit-run/*.log "$out/" 2> /dev/null
  result[jit_gpu]="$(grep -c 'use: exit 0' "$out/jit_gpu.log") of 4 runs"
  stamp jit_gpu $t
  rm -rf "$out"/jit-run-*/states.h5
fi
t=$(date +%s)
if want validate; then
fails=0
: > "$out/validate.log"
for f in examples/*.toml; do
  # validate takes single-run studies the GPU runs (not [first_passage] or [parameters] yet)
  grep -qE '^\[sweep\]|^\[\[run\]\]|^\[first_passage\]|^\[parameters\]' "$f" && continue
  if ! fg "$chens" validate "$f" >> "$out/validate.log" 2>&1; then fails=$((fails + 1)); echo "  ^ $f" >> "$out/validate.log"; fi
done
result[validate]=$([[ $fails == 0 ]] && echo "pass ($(ls examples/*.toml | wc -l) studies)" || echo "FAIL: $fails studies")
stamp validate $t
fi
# Time to first result: a 1e3-instance study from process start to summary.json (CUDA
# context creation included), GPU and CPU backends.
for be in cuda cpu; do
  want ttfr || break
  t0=$(date +%s.%N)
  "$chens" run --single --set ensemble.size=1000 --backend $be --no-progress --out "$out/ttfr-$be" > "$out/ttfr-$be.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  result[ttfr_$be]=$(awk -v a="$t0" -v b="$t1" -v rc=$rc 'BEGIN { printf "%.3f s (exit %d)", b - a, rc }')
done
# Profiler evidence on the lean step kernel (the pendulum's unit model, momentum check) and
# its loop's instruction mix (scripts/sass_mix.py).
t=$(date +%s)
if ! want ncu; then
  :
elif command -v ncu > /dev/null; then
  fg timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section ComputeWorkloadAnalysis --metrics smsp__inst_executed_pipe_fp64.sum,smsp__inst_executed.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active \
    -k regex:lean_step --launch-skip 4 -c 1 "$chens" run --single --set ensemble.size=1000000 --set integrator.h=0.01 \
    --set integrator.t_end=10 --set output.sample_dt=1 --set projection.momentum=true --set output.reference=none \
    --backend cuda --no-progress --out "$out/ncu-run" > "$out/ncu_lean_step.txt" 2>&1 && result[ncu]=pass || result[ncu]="FAIL (see ncu_lean_step.txt)"
  rm -rf "$out/ncu-run"
else
  result[ncu]="not run: ncu not found"
fi
if want sass && command -v cuobjdump > /dev/null && [[ -f scripts/sass_kernels.txt ]]; then
  # scripts/sass_kernels.txt: label, binary, a pattern (ERE) of the mangled kernel name; the
  # first function of the binary whose name matches is disassembled.
  while read -r label bin pattern; do
    [[ -f $bin ]] || continue
    name=$(cuobjdump --dump-resource-usage "$bin" 2> /dev/null | grep -oE 'Function [^ :]+' | awk '{print $2}' |
      grep -E "$pattern" | head -1)
    [[ -n $name ]] || { echo "$label: no function matches $pattern"; continue; }
    cuobjdump -sass -fun "$name" "$bin" 2> /dev/null | python3 scripts/sass_mix.py "$label"
  done < scripts/sass_kernels.txt > "$out/sass_mix.txt" 2>&1
  result[sass]="$(wc -l < "$out/sass_mix.txt") lines"
fi
stamp ncu $t
# states.h5 from a GPU run (the default backend picks the GPU), read back with h5py.
t=$(date +%s)
if want states_h5; then fg python3 tests/output/test_states_h5.py "$chens" > "$out/states_h5.log" 2>&1 && result[states_h5]=pass ||
  result[states_h5]="FAIL (see states_h5.log)"
fi
stamp states_h5 $t
# MPI, a GPU per rank (here two and three ranks share the one GPU): Debian's Open MPI from
# the bundle, unpacked without replacing anything the machine has.
t=$(date +%s)
if ! want mpi; then
  :
elif [[ -f .devrun/openmpi.tar ]]; then
  tar -C / -xkf .devrun/openmpi.tar 2> "$out/openmpi-unpack.log"; ldconfig
  mpi=$(command -v mpiexec.openmpi || command -v mpiexec)
  { echo "mpiexec: $mpi"; ldd "$mpi" | grep "not found"; } >> "$out/openmpi-unpack.log"
  if [[ -n $mpi ]]; then
    fg timeout ${MPI_LIMIT:-240} python3 tests/mpi/test_mpi_sharding.py "$chens" "$mpi" > "$out/mpi.log" 2>&1 && result[mpi_gpu]=pass ||
      result[mpi_gpu]="FAIL (see mpi.log, openmpi-unpack.log)"
  else
    result[mpi_gpu]="not run: mpiexec missing after unpacking (openmpi-unpack.log)"
  fi
else
  result[mpi_gpu]="not run: the bundle has no Open MPI"
fi
stamp mpi_gpu $t
# Checkpoint and resume on the GPU (docs/checkpoints.md): interrupted, signalled, killed and
# resumed runs against uninterrupted ones; the signalled run has 1e7 instances so that it
# lasts long enough on the card to be signalled mid-way.
t=$(date +%s)
if want resume; then fg timeout ${RESUME_LIMIT:-300} python3 tests/checkpoint/test_resume_cli.py "$chens" 1 10000000 > "$out/resume.log" 2>&1 && result[resume]=pass ||
  result[resume]="FAIL (see resume.log)"
fi
stamp resume $t
t=$(date +%s)
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if ! want sanitizer; then
  :
elif [[ -x $san ]]; then
  fg timeout ${SANITIZER_LIMIT:-300} env LD_LIBRARY_PATH="$lib" $san --tool memcheck --error-exitcode 9 .devrun/chens_gpu_tests \
    --gtest_filter='AllPairs/CpuVsGpu.*/dirac_rk4:AllPairs/CpuVsGpu.*/naive_dopri5:Formulations/ChainCpuVsGpu.*/dirac_rk4:Models/EnsembleCpuVsGpu.StatisticsAgree*:EnsembleCpuVsGpuLost.*:GpuPaths.DeviceStatisticsEqualTheHostsBitForBit:GpuPaths.LostInstancesAreLostAlike:ChainGroupsOnTheGpu.TheEngineRunsEveryGroupSizeLikeTheCpu' \
    > "$out/sanitizer.log" 2>&1 && result[sanitizer]=pass || result[sanitizer]="FAIL (see sanitizer.log)"
else
  result[sanitizer]="not run: compute-sanitizer not found"
fi
stamp sanitizer $t
wait
for t in chens_tests chens_paper_tests; do
  case $(cat "$out/$t.rc" 2> /dev/null) in
    0) result[$t]=pass ;;
    skipped) result[$t]="not run: not in the bundle (GPU_ONLY)" ;;
    "not asked") result[$t]="not asked (STEPS)" ;;
    *) result[$t]="FAIL (see $t.log)" ;;
  esac
done
stamp tests_all $t0
finish
