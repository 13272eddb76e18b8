#!/usr/bin/env bash
# A system compiled on first use, end to end (docs/jit.md): CHENS_SYSTEMS=jit compiles the
# default study's system into an empty cache and says so; a second run loads it without a
# compile; a corrupt cached object is detected, compiled again and gives the same files; and
# every file equals the built-in unit's, bit for bit.
# Usage: corrupt_object.sh CHENS
set -euo pipefail
chens=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export CHENS_CACHE_DIR=$d/cache
run() {  # run NAME [env...]: a small default study into $d/NAME
  local name=$1
  shift
  env "$@" "$chens" run --single --set ensemble.size=100 --set integrator.t_end=5 --set output.states=true \
    --out "$d/$name" --no-progress > "$d/$name.out" 2> "$d/$name.err"
}
same() {  # same A B: the result files of runs A and B are byte for byte equal
  for f in series.csv trajectory.csv; do
    [ -f "$d/$1/$f" ] || continue
    cmp "$d/$1/$f" "$d/$2/$f" || { echo "FAIL: $f of $1 and $2 differ"; exit 1; }
  done
}
run built CHENS_SYSTEMS=built-in
grep -q "compiling" "$d/built.err" && { echo "FAIL: the built-in run compiled"; cat "$d/built.err"; exit 1; }
run first CHENS_SYSTEMS=jit
grep -q "chens: compiling pendulum, dirac, rk4, cpu ... .* s; cached in $d/cache" "$d/first.err" ||
  { echo "FAIL: the first jit run did not say it compiled"; cat "$d/first.err"; exit 1; }
run again CHENS_SYSTEMS=jit
grep -q "compiling" "$d/again.err" && { echo "FAIL: the cached object was compiled again"; cat "$d/again.err"; exit 1; }
for so in "$d"/cache/*.so; do printf 'not an object' > "$so"; done
run rebuilt CHENS_SYSTEMS=jit
grep -q "does not load" "$d/rebuilt.err" && grep -q "chens: compiling" "$d/rebuilt.err" ||
  { echo "FAIL: the corrupt object was not detected and rebuilt"; cat "$d/rebuilt.err"; exit 1; }
same built first
same built again
same built rebuilt
# states.h5 where HDF5 is built in: every instance's initial and final state.
if [ -f "$d/built/states.h5" ] && command -v h5dump > /dev/null; then
  for r in first rebuilt; do
    h5dump -d /instances/final_state "$d/built/states.h5" | tail -n +3 > "$d/a.txt"
    h5dump -d /instances/final_state "$d/$r/states.h5" | tail -n +3 > "$d/b.txt"
    cmp "$d/a.txt" "$d/b.txt" || { echo "FAIL: states.h5 of built and $r differ"; exit 1; }
  done
fi
echo "corrupt_object: the compiled object equals the built-in unit, is cached, and is rebuilt when corrupt"
