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
# Every CUDA unit of the build: the generated units of the systems list and kernels/*.cu.
units=$(/usr/bin/python3 -c "
import json
for c in json.load(open('$build/compile_commands.json')):
    if c['file'].endswith('.cu'):
        print(c['file'])
")
[[ -n $units ]] || { echo "no CUDA units in $build (CUDA off?)" >&2; exit 2; }
for unit in $units; do
  cmd=$(/usr/bin/python3 -c "
import json
for c in json.load(open('$build/compile_commands.json')):
    if c['file'] == '$unit':
        print(c['command']); break
")
  tu=$(basename "$unit" .cu)
  echo "== $tu"
  scratch=$(mktemp -d)
  (cd "$build" && eval "${cmd/ -o */ -o $scratch/$tu.o} --resource-usage") 2>&1 |
    /usr/bin/python3 scripts/ptxas_report.py "$filter"
  rm -rf "$scratch"
done
