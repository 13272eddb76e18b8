#!/usr/bin/env bash
# Fresh machine -> default study: installs what is missing, builds chens (Release), runs
# the built-in default study (examples/default_study.toml: six runs, about a second) into
# runs/default-<date>/ (never over an earlier run) and draws its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake --preset release
cmake --build --preset release --target chens
out="runs/default-$(date +%Y%m%d-%H%M%S)"
build/release/chens run --out "$out"
build/release/chens plot "$out" > /dev/null
echo "comparison: $out/comparison.csv   runs: $out/<run>/summary.json   figures: $out/plots/ (summary.txt, *.png, *.svg)"
