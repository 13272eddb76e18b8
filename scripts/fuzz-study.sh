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
# Seeds of the deep-nesting class (a dotted key, a table header, nested arrays and inline
# tables of thousands of levels), which toml++ parses by recursion: with the fuzzer's stack
# limited below (ulimit -s), one that reaches the parser overflows it at once, so this
# class is found in seconds if the shape check of study_files.cpp (max_nesting,
# max_key_dots) ever goes.
deep() { python3 -c "import sys; print(sys.argv[1] * int(sys.argv[2]) + sys.argv[3])" "$@"; }
deep 'a.' 3000 'a = 1' > "$out/corpus/deep-dotted-key.toml"
deep 'a.' 3000 'a]' | sed 's/^/[/' > "$out/corpus/deep-header.toml"
deep '[' 3000 '' | sed 's/^/v = /' > "$out/corpus/deep-arrays.toml"
deep '{a=' 3000 '1' | sed 's/^/v = /' > "$out/corpus/deep-inline-tables.toml"
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
# model.source (study_files.cpp) loads user models from a header: source_models.cpp and the
# cache it compiles into (a fuzzed path that names no header is refused before any compile).
printf '%s\n' tests/fuzz/fuzz_study.cpp host/study/*.cpp host/models/*.cpp host/dispatch/custom_models.cpp host/dispatch/method_id.cpp \
  host/dispatch/source_models.cpp host/dispatch/jit_cache.cpp host/dispatch/sha256.cpp \
  host/backends/parameter_laws.cpp host/backends/step_grid.cpp |
  xargs -P "$(nproc)" -I{} sh -c 'f="$1"; shift; "$@" -c "$f" -o "'"$out"'/obj/$(basename "$f" .cpp).o"' _ {} \
    "${cxx[@]}" "${flags[@]}"
clang++ -fsanitize=fuzzer,address,undefined "$out"/obj/*.o -o "$out/fuzz_study"
log="$out/fuzz.log"
# A 1 MiB stack (8 MiB by default) makes recursion a few thousand levels deep a crash
# within the inputs' -max_len (the deep seeds above are ~6-12 KB).
if ! (ulimit -s 1024 && "$out/fuzz_study" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=16384 -dict=tests/fuzz/study.dict -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
      "$out/corpus") > "$log" 2>&1; then
  tail -60 "$log"
  echo "fuzz-study: FAILED (crash, hang or sanitizer report; the input is in $out/artifacts/)"
  exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
echo "fuzz-study: ${runs:-?} executions in ${seconds} s, no crash, hang, leak or sanitizer report ($(ls "$out/corpus" | wc -l) corpus inputs)"
