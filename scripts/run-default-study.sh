#!/usr/bin/env bash
# Fresh machine -> default study: installs what is missing, builds chens (Release) and
# runs the built-in default study into runs/default-<date>/ (never over an earlier run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake --preset release
cmake --build --preset release --target chens
out="runs/default-$(date +%Y%m%d-%H%M%S)"
build/release/chens run --out "$out"
echo "summary: $out/summary.json   series: $out/series.csv"
