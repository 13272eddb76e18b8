#!/usr/bin/env bash
# Fresh machine -> default study: installs what is missing, builds chens (Release), runs
# the built-in default study (examples/default_study.toml: six runs, about a second) into
# runs/default-<date>/ (never over an earlier run) and draws its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# A new build directory compiles the default study's systems alone ahead of time, and any
# other system on its first use (CHENS_AHEAD_OF_TIME = default-study, docs/jit.md): the first
# build is the default study's. One configured before keeps its choice (scripts/run-tests.sh
# makes it `all`).
if [ -f build/release/CMakeCache.txt ]; then
  cmake --preset release
else
  cmake --preset release -DCHENS_AHEAD_OF_TIME=default-study
fi
cmake --build --preset release --target chens
out="runs/default-$(date +%Y%m%d-%H%M%S)"
build/release/chens run --out "$out"
build/release/chens plot "$out" > /dev/null
echo "comparison: $out/comparison.csv   runs: $out/<run>/summary.json   figures: $out/plots/ (summary.txt, *.png, *.svg)"
