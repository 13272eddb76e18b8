#!/usr/bin/env bash
# An installed chens compiles on first use from its installation (issue 42, docs/jit.md):
# `cmake --install` into a prefix, the prefix moved elsewhere, and a chain of a size no build
# has (N = 3) run from it, by the executable and by the Python package where it is built:
# each compiles with the moved installation's headers (the object's key names its include
# directories, quoted: the new name has a space) and none of the build tree's, and gives the
# same numbers.
# Usage: installed.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source_dir=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cmake --install "$build" --prefix "$d/installed" > "$d/install.log"
# moved under a name with a space, which the compile command quotes
mv "$d/installed" "$d/moved prefix"
prefix="$d/moved prefix"
sets=(--set model.kind=chain --set model.atoms=3 --set ensemble.size=8 --set integrator.t_end=1
      --set integrator.h=0.05 --set output.sample_dt=0.5)
compiled_from_prefix() {  # compiled_from_prefix CACHE WHO: the object's key names the moved prefix only
  local unit
  unit=$(echo "$1"/chain-N-3-*.cpp)
  grep -qF -- "-I'$prefix/include/chens/host' " "$unit" && grep -qF -- "-I'$prefix/include' " "$unit" ||
    { echo "FAIL: $2 did not compile with the installation's headers:"; grep -o -- "-I[^ ]*" "$unit"; exit 1; }
  if grep -q -- "-I$source_dir/" "$unit" || grep -q -- "-I$build/" "$unit"; then
    echo "FAIL: $2 compiled with the build tree's headers:"; grep -o -- "-I[^ ]*" "$unit"; exit 1
  fi
}
CHENS_CACHE_DIR=$d/cache "$prefix/bin/chens" run --single "${sets[@]}" --out "$d/cli" --no-progress > "$d/cli.out" 2> "$d/cli.err" ||
  { echo "FAIL: the installed chens did not run"; cat "$d/cli.err"; exit 1; }
grep -q "chens: compiling chain N = 3, dirac, rk4, cpu ... .* s; cached in $d/cache" "$d/cli.err" ||
  { echo "FAIL: the installed chens did not say it compiled"; cat "$d/cli.err"; exit 1; }
compiled_from_prefix "$d/cache" "the installed executable"
module=$(find "$prefix" -name "_chens*.so" | head -n 1)
if [ -n "$module" ]; then
  CHENS_CACHE_DIR=$d/pycache PYTHONPATH=$(dirname "$(dirname "$module")") /usr/bin/python3 - "$d/py" "$prefix" <<'PY' 2> "$d/py.err" ||
import sys
import chens
out, prefix = sys.argv[1], sys.argv[2]
assert chens.__file__.startswith(prefix), chens.__file__  # the installed package, not the build tree's
chens.run({"model": {"kind": "chain", "atoms": 3}, "ensemble": {"size": 8},
           "integrator": {"t_end": 1.0, "h": 0.05}, "output": {"sample_dt": 0.5}}, out=out)
PY
    { echo "FAIL: the installed Python package did not run"; cat "$d/py.err"; exit 1; }
  compiled_from_prefix "$d/pycache" "the installed Python package"
  cmp "$d/cli/series.csv" "$d/py/series.csv" || { echo "FAIL: the Python run's series.csv differs"; exit 1; }
fi
echo "ok: the moved installation compiled chain N = 3 from its own headers${module:+ (executable and Python)}"
