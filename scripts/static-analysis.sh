#!/usr/bin/env bash
# Static analysis of chens' own code (host/, include/, kernels/ headers) with cppcheck:
# the checks "warning", "style", "performance" and "portability", C++20, every finding an
# error (exit 1). Suppressed, project-wide: useStlAlgorithm (a style preference: the loops
# stay loops where they read as the formulas they implement) and missingIncludeSystem
# (system and third-party headers are not analysed). Single findings are suppressed inline
# with the reason (// cppcheck-suppress ID ; why). Files are analysed on every core (-j; no
# check that -j disables is enabled here). Then the layout (scripts/format.sh --check:
# .clang-format). Run by scripts/run-tests.sh.
#
# Usage: scripts/static-analysis.sh [BUILD_DIR]   (BUILD_DIR: where CMake generated headers)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
cppcheck --version
cppcheck -j "$(nproc)" --enable=warning,style,performance,portability --std=c++20 --language=c++ --inline-suppr --quiet \
  --error-exitcode=1 --suppress=missingIncludeSystem --suppress=useStlAlgorithm \
  -I include -I host -I "$build/generated" host include
echo "static analysis: no findings"
scripts/format.sh --check
