#!/usr/bin/env bash
# Fuzzes the study-file parser and validator (tests/fuzz/fuzz_study.cpp) with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer (clang), from a seed corpus of every
# examples/*.toml, for a bounded time. Exit non-zero on a crash, a hang (> 10 s per input),
# a sanitizer report or a leak; prints the number of executions. Run by scripts/run-tests.sh.
#
# Usage: scripts/fuzz-study.sh [SECONDS] [BUILD_DIR]   (defaults: 60, build/release for
# the CMake-generated headers)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build/release}
out=build/fuzz
mkdir -p "$out/corpus" "$out/artifacts"
cp examples/*.toml "$out/corpus/"
# toml++ is compiled into the target (header-only), instrumented like chens' own code. Its
# internal debug assertions are off, as in the Debian library chens links (built with
# NDEBUG, where TOML_ASSERT_ASSUME is a no-op under GCC): they fire on inputs the parser
# then reports as errors (e.g. "[;integrator]"), which is what chens relies on.
# One object per source, through ccache where installed (a clean clone of a commit built
# before compiles nothing), on every core.
cxx=(clang++)
if command -v ccache > /dev/null; then
  cxx=(env CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 ccache clang++)
fi
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       '-DTOML_ASSERT(expr)=((void)0)' -I include -I host -I "$build/generated")
rm -rf "$out/obj" && mkdir -p "$out/obj"
printf '%s\n' tests/fuzz/fuzz_study.cpp host/study/*.cpp host/dispatch/custom_models.cpp |
  xargs -P "$(nproc)" -I{} sh -c 'f="$1"; shift; "$@" -c "$f" -o "'"$out"'/obj/$(basename "$f" .cpp).o"' _ {} \
    "${cxx[@]}" "${flags[@]}"
clang++ -fsanitize=fuzzer,address,undefined "$out"/obj/*.o -o "$out/fuzz_study"
log="$out/fuzz.log"
if ! "$out/fuzz_study" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
     -artifact_prefix="$out/artifacts/" "$out/corpus" > "$log" 2>&1; then
  tail -60 "$log"
  echo "fuzz-study: FAILED (crash, hang or sanitizer report; the input is in $out/artifacts/)"
  exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
echo "fuzz-study: ${runs:-?} executions in ${seconds} s, no crash, hang, leak or sanitizer report ($(ls "$out/corpus" | wc -l) corpus inputs)"
