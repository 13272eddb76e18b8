#!/usr/bin/env bash
# Fresh machine -> every test: installs what is missing, builds everything (CPU, and the
# CUDA targets wherever nvcc exists) and runs the whole CTest suite. GPU tests skip with
# the reason when no CUDA device is usable.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake --preset release
cmake --build --preset release
ctest --preset release --parallel "$(nproc)"
