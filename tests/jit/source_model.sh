#!/usr/bin/env bash
# A user model from its header, end to end through the command line (docs/custom-models.md,
# section 2b): a study file names the header by a path relative to itself and is checked
# from another directory (the header's description compiled, the system said to be compiled
# by chens run); `chens models --source` lists it from the cache; bad headers and paths exit 2
# with the reason and write nothing.
# Usage: source_model.sh CHENS EXAMPLES_DIR
set -euo pipefail
chens=$1
examples=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export CHENS_CACHE_DIR=$d/cache
mkdir -p "$d/study/models" "$d/elsewhere"
cp "$examples/custom_model/models/planar_pendulum.hpp" "$d/study/models/"
printf '[model]\nsource = "models/planar_pendulum.hpp"\nlength = 2.0\n[integrator]\nformulation = "dirac"\nmethod = "rk4"\n' \
  > "$d/study/pendulum.toml"
cd "$d/elsewhere"
"$chens" check ../study/pendulum.toml > check.out 2> check.err ||
  { echo "FAIL: chens check exited $?"; cat check.err; exit 1; }
grep -q "chens: compiling the user models of $d/study/models/planar_pendulum.hpp ... .* s; cached in $d/cache" check.err ||
  { echo "FAIL: the check did not say it compiled the header's description"; cat check.err; exit 1; }
grep -q "^# system: planar-pendulum (planar_pendulum.hpp), dirac, rk4, cpu, compiled on first use: not cached" check.out ||
  { echo "FAIL: the check did not say the system is compiled on first use"; cat check.out; exit 1; }
grep -q "^source = \"$d/study/models/planar_pendulum.hpp\"" check.out && grep -q "^length = 2.0" check.out ||
  { echo "FAIL: the printed study lacks the absolute source or the given length"; cat check.out; exit 1; }
"$chens" check ../study/pendulum.toml > /dev/null 2> again.err
grep -q "compiling" again.err && { echo "FAIL: the cached description was compiled again"; cat again.err; exit 1; }
# chens models --source: a relative path, the cached description, the model and its parameters
"$chens" models --source ../study/models/planar_pendulum.hpp > models.out 2> models.err ||
  { echo "FAIL: chens models --source exited $?"; cat models.err; exit 1; }
grep -q "compiling" models.err && { echo "FAIL: chens models compiled the cached description again"; cat models.err; exit 1; }
grep -q "^model.kind = \"planar-pendulum\" (a user model: $d/study/models/planar_pendulum.hpp, model.source)" models.out &&
  grep -q "^  keys          model.mass (1), model.length (1), model.gravity (1)$" models.out ||
  { echo "FAIL: chens models did not list the header's model and its parameters"; cat models.out; exit 1; }
# refused: exit 2, the reason, no output directory
refused() {  # refused NAME EXPECTED ARGS...: chens run ARGS --out NAME exits 2, says EXPECTED, writes nothing
  local name=$1 expected=$2
  shift 2
  local rc=0
  "$chens" run "$@" --out "$name" > "$name.out" 2> "$name.err" || rc=$?
  [ "$rc" = 2 ] || { echo "FAIL: $name exited $rc, not 2"; cat "$name.err"; exit 1; }
  grep -qF -- "$expected" "$name.err" || { echo "FAIL: $name did not say: $expected"; cat "$name.err"; exit 1; }
  [ ! -e "$name" ] || { echo "FAIL: $name wrote $name/"; exit 1; }
}
printf '#pragma once\nstruct Broken {\n  static constexpr int dof = 2\n};\n' > broken.hpp
refused broken "broken.hpp:3:" --single --set model.source=broken.hpp
refused missing "model.source = \"$d/elsewhere/nope.hpp\": no such file" --single --set model.source=nope.hpp
refused wrong_kind "model.kind = \"pendulum\" is not a model of model.source" --single \
  --set model.source=../study/models/planar_pendulum.hpp --set model.kind=pendulum
echo "source_model: a header named by a study compiles, checks and is cached; bad headers exit 2 and write nothing"
