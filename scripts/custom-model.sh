#!/usr/bin/env bash
# Out of tree (docs/custom-models.md): installs the build in $1 (default build/release) into a
# fresh prefix with `cmake --install`, builds examples/custom_model/ against that prefix alone
# (find_package(chens), chens_add_model), runs the project's own test, and has its executable
# compile a system on first use from the installation. Part of
# scripts/run-tests.sh (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
prefix=$PWD/$build/install-prefix
project_build=$PWD/$build/custom-model
rm -rf "$prefix" "$project_build"
# Through ccache with paths relative to this tree (the project's CMakeLists uses ccache where
# installed): a clean clone of a commit built before compiles nothing.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
cmake --install "$build" --prefix "$prefix" > /dev/null
cmake -S examples/custom_model -B "$project_build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$project_build"
ctest --test-dir "$project_build" --output-on-failure
# A system compiled on first use by the project's executable (docs/jit.md): with the
# installation's headers, which chens_add_executable names to it, not the build tree's.
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
CHENS_CACHE_DIR=$cache "$project_build/chens-custom" run --single --set model.kind=chain --set model.atoms=3 \
  --set ensemble.size=8 --set integrator.t_end=1 --set integrator.h=0.05 --set output.sample_dt=0.5 \
  --out "$cache/run" --no-progress > /dev/null 2> "$cache/run.err" ||
  { echo "custom-model: the project's executable did not run chain N = 3"; cat "$cache/run.err"; exit 1; }
unit=$(ls "$cache"/chain-N-3-*.cpp)
if ! grep -q -- "-I$prefix/include/chens/host " "$unit" || grep -q -- "-I$PWD/host " "$unit"; then
  echo "custom-model: the project's executable did not compile with the installation's headers:"
  grep -o -- "-I[^ ]*" "$unit"
  exit 1
fi
echo "custom-model: the project's executable compiled chain N = 3 from $prefix"
