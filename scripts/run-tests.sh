#!/usr/bin/env bash
# Fresh machine -> every test: installs what is missing, builds everything (CPU, and the
# CUDA targets wherever nvcc exists) and runs the whole CTest suite (GPU tests skip with
# the reason when no CUDA device is usable), then the user-model example built out of tree
# against the installed chens, static analysis, 60 s of fuzzing of the
# study-file parser, and the CPU test suites built and run under AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# Every system of the list compiled ahead of time: the tests compare the built-in units (a
# build directory the default study's set-up made lean becomes whole; docs/jit.md).
cmake --preset release -DCHENS_AHEAD_OF_TIME=all
cmake --build --preset release
ctest --preset release --parallel "$(nproc)"
# User models out of tree: chens installed, examples/custom_model built against it and run.
scripts/custom-model.sh build/release
# Reliability checks on chens' own code (docs/testing.md): cppcheck with no findings, and the
# study-file parser fuzzed for 60 s under ASan and UBSan.
scripts/static-analysis.sh build/release
scripts/fuzz-study.sh 60 build/release
# The CPU suites and the executable's end-to-end tests again, under ASan + LSan + UBSan.
scripts/sanitize-tests.sh build/sanitize
