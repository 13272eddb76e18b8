#!/usr/bin/env bash
# The systems list's model registration (cmake/ChensSystems.cmake; docs/adding-a-model.md):
#  1. chens_model() refuses what would build a broken registry, naming it: a model whose
#     description or traits file is missing, a model.kind or a class template registered
#     twice, a chens_system() of a template no chens_model() registered; and a well-formed
#     registration configures, generating the ModelKind enumerators in the order of the calls.
#  2. In this build (Ninja's dependency records), each system unit parses its own model's
#     headers and no other model's: a pendulum unit no chain, chain slice, thread group or
#     double pendulum header (issue 42: a unit includes its engine and its own model).
# Usage: model_registration.sh <chens source dir> <chens build dir>
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A project of its own that includes ChensSystems.cmake, with a scratch host/models.
project() {  # $1: directory, $2: the calls
  mkdir -p "$1/host/models" "$1/host/dispatch" "$1/cmake"
  cp "$src/cmake/ChensSystems.cmake" "$1/cmake/"
  cp "$src"/host/dispatch/*.in "$1/host/dispatch/"
  cat > "$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(registration LANGUAGES NONE)
list(APPEND CMAKE_MODULE_PATH \${CMAKE_CURRENT_SOURCE_DIR}/cmake)
set(CHENS_HAVE_CUDA OFF)
include(ChensSystems)
$2
chens_systems_generate()
CMAKE
}
configure() {  # $1: directory; prints cmake's output, returns its status
  cmake -S "$1" -B "$1/build" -G Ninja 2>&1
}
expect_refusal() {  # $1: name, $2: calls, $3: a text the message must hold; $4: files to create
  local dir=$work/$1
  project "$dir" "$2"
  for f in $4; do touch "$dir/$f"; done
  local out
  if out=$(configure "$dir"); then fail "$1: configured, expected a refusal naming '$3'"; fi
  # (CMake wraps its messages: compare with runs of blanks and newlines as one blank)
  grep -qF -- "$3" <<<"$(tr -s ' \n' '  ' <<<"$out")" || fail "$1: the message does not name '$3':"$'\n'"$out"
  echo "ok: $1 refused ($3)"
}

both="host/models/toy.cpp host/models/toy_traits.hpp"
expect_refusal missing_traits 'chens_model(toy TEMPLATE Toy)' "host/models/toy_traits.hpp is missing" "host/models/toy.cpp"
expect_refusal missing_description 'chens_model(toy TEMPLATE Toy)' "host/models/toy.cpp is missing" "host/models/toy_traits.hpp"
expect_refusal twice $'chens_model(toy TEMPLATE Toy)\nchens_model(toy TEMPLATE Toy)' "chens_model(toy): registered twice" "$both"
expect_refusal template_twice $'chens_model(toy TEMPLATE Toy)\nchens_model(other-toy TEMPLATE Toy)' \
  "the template Toy is model toy's already" "$both host/models/other_toy.cpp host/models/other_toy_traits.hpp"
expect_refusal unregistered_template $'chens_model(toy TEMPLATE Toy)\nchens_system(MODEL "Other<double>" FORMULATIONS dirac BACKENDS cpu)' \
  "no chens_model(... TEMPLATE Other)" "$both"
expect_refusal bad_name 'chens_model(Toy_Model TEMPLATE Toy)' "a model.kind of lower-case letters" "$both"

dir=$work/good
project "$dir" $'chens_model(toy TEMPLATE Toy)\nchens_model(other-toy TEMPLATE OtherToy)\nchens_system(MODEL "OtherToy<double>" FORMULATIONS dirac BACKENDS cpu)'
touch "$dir"/host/models/{toy,other_toy}.cpp "$dir"/host/models/{toy,other_toy}_traits.hpp
configure "$dir" >/dev/null || fail "good: a well-formed registration did not configure"
kinds=$dir/build/generated/dispatch/model_kind.hpp
grep -q "  toy = 0," "$kinds" && grep -q "  other_toy = 1," "$kinds" && grep -q "custom = 2," "$kinds" ||
  fail "good: the enumerators are not toy = 0, other_toy = 1, custom = 2:"$'\n'"$(cat "$kinds")"
grep -q 'case ModelKind::other_toy: return "other-toy";' "$kinds" || fail "good: model_kind_name lacks other-toy"
unit=$(ls "$dir"/build/generated/systems/cpu_othertoy_double_dirac.cpp)
grep -q '#include "models/other_toy_traits.hpp"' "$unit" || fail "good: the unit does not include its model's traits"
grep -q 'toy_traits.hpp"' <(grep -v other_toy "$unit") && fail "good: the unit includes another model's traits"
echo "ok: a well-formed registration configures (toy = 0, other_toy = 1, custom = 2)"

# 2. The units of this build parse their own model's headers alone.
if [[ ! -f "$build/build.ninja" ]]; then
  echo "skip: $build is not a Ninja build: no dependency records to read"
  exit 0
fi
checked=0
while IFS= read -r obj; do
  name=$(basename "$obj")
  deps=$(ninja -C "$build" -t deps "$obj" 2>/dev/null || true)
  [[ -n "$deps" && "$deps" != *"deps not found"* ]] || continue
  case "$name" in
    cpu_pendulum_*|cpu_penaltypendulum_*) bad='models/chain\.hpp|models/chain_slice\.hpp|ensemble/thread_group\.hpp|models/double_pendulum\.hpp' ;;
    cpu_doublependulum_*) bad='models/chain\.hpp|models/chain_slice\.hpp|ensemble/thread_group\.hpp|models/penalty_pendulum\.hpp' ;;
    cpu_chain_*) bad='models/double_pendulum\.hpp|models/penalty_pendulum\.hpp|reference/pendulum_exact\.hpp' ;;
    *) continue ;;
  esac
  if grep -Eq "$bad" <<<"$deps"; then
    fail "$name parses another model's header: $(grep -E "$bad" <<<"$deps" | tr -s ' ' | tr '\n' ' ')"
  fi
  checked=$((checked + 1))
done < <(ninja -C "$build" -t targets all 2>/dev/null | grep -o '^[^:]*generated/systems/cpu_[^:]*\.cpp\.o' | sort -u)
[[ $checked -gt 0 ]] || fail "no system unit of $build has dependency records (build it first)"
echo "ok: $checked CPU system units parse their own model's headers alone"
