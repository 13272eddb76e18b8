#!/usr/bin/env bash
# CHENS_CPU_ISAS (cmake/ChensCpuIsas.cmake): each form resolved to the CPU lanes' instruction
# sets and the mask host/backends/cpu/cpu_isa.hpp reads, in a scratch project including the
# module: "all" is the four, "native" this CPU's sets as the kernel lists them
# (/proc/cpuinfo: avx2, avx512f), "widest" scalar and the widest of those, a list its sets with scalar always added, and a set chens
# does not know stops the configuration naming it.
# Usage: cpu_isas.sh <chens source dir>
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

resolve() {  # $1: the spec; prints "<mask> <names>" or cmake's output, returns its status
  local dir=$work/p$RANDOM
  mkdir -p "$dir"
  cat > "$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(cpu_isas LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH $src/cmake)
include(ChensCpuIsas)
chens_cpu_isas("\${SPEC}" mask names)
message(STATUS "RESOLVED \${mask} \${names}")
CMAKE
  local out
  out=$(cmake -S "$dir" -B "$dir/build" "-DSPEC=$1" 2>&1) || { echo "$out"; return 1; }
  sed -n 's/^-- RESOLVED //p' <<<"$out"
}
expect() {  # $1: spec, $2: the expected "<mask> <names>"
  local got
  got=$(resolve "$1") || fail "CHENS_CPU_ISAS = '$1' was refused: $got"
  [[ $got == "$2" ]] || fail "CHENS_CPU_ISAS = '$1' resolved to '$got', expected '$2'"
  echo "ok: '$1' -> $got"
}

expect all "15 scalar, sse2, avx2, avx512"
expect "scalar;sse2" "3 scalar, sse2"
expect avx2 "5 scalar, avx2"
expect "avx512;sse2;sse2" "11 scalar, sse2, avx512"

# native: the kernel's flags of the first CPU.
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
mask=3 names="scalar, sse2"
if [[ $flags == *" avx2 "* ]]; then mask=$((mask | 4)); names+=", avx2"; fi
if [[ $flags == *" avx512f "* ]]; then mask=$((mask | 8)); names+=", avx512"; fi
expect native "$mask $names"
# widest: scalar and the last of those.
widest_bit=$(( mask & 8 ? 8 : (mask & 4 ? 4 : 2) ))
widest_name=${names##*, }
expect widest "$(( 1 | widest_bit )) scalar, $widest_name"

if out=$(resolve "sse2;avx9"); then fail "CHENS_CPU_ISAS = 'sse2;avx9' configured: $out"; fi
grep -qF "'avx9' is not an instruction set chens compiles lanes for" <<<"$(tr -s ' \n' '  ' <<<"$out")" ||
  fail "the refusal does not name 'avx9':"$'\n'"$out"
echo "ok: 'sse2;avx9' refused"
