#!/usr/bin/env bash
# Out of tree (docs/custom-models.md): installs the build in $1 (default build/release) into a
# fresh prefix with `cmake --install`, builds examples/custom_model/ against that prefix alone
# (find_package(chens), chens_add_model) and runs the project's own test. Part of
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
