#!/usr/bin/env bash
# The CPU test suites built with AddressSanitizer and UndefinedBehaviorSanitizer (GCC) and
# run: chens_tests, chens_paper_tests and the ctest cases that drive the chens executable
# (CLI, checkpoint and resume, killed studies, states.h5, every example study). Any
# sanitizer report fails the test that triggered it (halt_on_error, exit code 66), and so
# the script. Run by scripts/run-tests.sh after the release suite (docs/testing.md).
#
# The build leaves out what a sanitizer run does not need: CUDA (nvcc's host code is not
# instrumented, and there is no GPU in CI), MPI (Open MPI's own allocations), the benchmarks,
# the Python package (CPython's own allocations; the release suite runs its tests),
# chain sizes other than 7 and 16 (the per-instance code is the same template for every
# size), the CPU lanes of every instruction set but the widest this machine runs
# (CHENS_CPU_ISAS = widest: the lanes are one template over the register width, and each set
# costs a sanitized system unit as much again: the pendulum's took 77 s with scalar alone, 137 s
# with the widest beside it, 269 s with all four; the release suite runs every set;
# docs/performance.md, "Build time"), and
# the memory count's test of peak resident memory (output.memory_count_holds:
# ASan's shadow memory and quarantine are not chens's). -O1 keeps it affordable, and -g1
# (line tables: what a sanitizer's report names) spares GCC's variable tracking, which on the
# flattened lane loops overran its size limit and compiled them twice: a user model's unit
# took 467 s where it had not finished after 845 s (docs/performance.md, "Build time").
# The executables link at a fixed address (-no-pie, a link flag: no object changes). Linked
# position-independent, the test binary carried 5.4 million relative relocations (pointers in
# the sanitizers' static data: UBSan's source locations and type descriptors, ASan's
# descriptors of globals; the release one has 20 thousand), which the loader wrote at every
# start: 0.8 s against 0.4 s for each of the suite's ~700 processes, whose suite took 786 s
# against 580 s here (docs/performance.md, "Build time").
# The instrumented chens is about 8 times slower than the release one (the checkpoint test
# took 301 s here against 37 s), so the checkpoint test's signalled run gets 8 times fewer
# instances (CHENS_RESUME_LONG_SIZE) to last the ~2 s its signals are timed for.
#
# Usage: scripts/sanitize-tests.sh [BUILD_DIR]   (default build/sanitize)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/sanitize}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 $san" -DCMAKE_EXE_LINKER_FLAGS="$san -no-pie" \
  -DCMAKE_SHARED_LINKER_FLAGS="$san" -DCHENS_ENABLE_CUDA=OFF -DCHENS_ENABLE_MPI=OFF \
  -DCHENS_BUILD_BENCHMARKS=OFF -DCHENS_ENABLE_PYTHON=OFF -DCHENS_CHAIN_ATOMS="7;16" -DCHENS_CPU_ISAS=widest -DCHENS_RESUME_LONG_SIZE=2500 \
  -DCHENS_MEMORY_COUNT_TEST=OFF > "$build.configure.log"
cmake --build "$build"
# detect_leaks: LeakSanitizer too. The suppressions name libgomp's thread pool, which is
# allocated once and never freed by design.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=66:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=66"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" -LE "gpu|install"
echo "sanitize-tests: no AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer report"
