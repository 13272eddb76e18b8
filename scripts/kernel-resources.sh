#!/usr/bin/env bash
# Registers, spills, stack and shared memory of every instantiation of the ensemble kernels
# (ptxas's own report, nvcc --resource-usage), for the roofline notes in docs/performance.md.
# Needs no GPU: recompiles the kernel translation units of an existing build with the
# build's own command line (compile_commands.json) into a scratch object.
#   scripts/kernel-resources.sh [BUILD_DIR] [FILTER]     (default build/release, every chens kernel)
# The pendulum's translation units also enforce their budget in every build: ptxas's spill
# warning is an error there (kernels/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
filter=${2:-chens::cuda::}
[[ -f $build/compile_commands.json ]] || { echo "no $build/compile_commands.json: configure and build first" >&2; exit 2; }
for tu in ensemble_pendulum ensemble_chain ensemble_float_pendulum ensemble_float_chain ensemble_pendulum_wedge ensemble_penalty device_statistics; do
  cmd=$(/usr/bin/python3 -c "
import json, sys
for c in json.load(open('$build/compile_commands.json')):
    if c['file'].endswith('kernels/$tu.cu'):
        print(c['command']); break
")
  [[ -n $cmd ]] || { echo "$tu.cu is not in $build (CUDA off?)" >&2; exit 2; }
  scratch=$(mktemp -d)
  (cd "$build" && eval "${cmd/ -o */ -o $scratch/$tu.o} --resource-usage") 2>&1 |
    /usr/bin/python3 scripts/ptxas_report.py "$filter"
  rm -rf "$scratch"
done
