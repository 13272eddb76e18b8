#!/usr/bin/env bash
# One study file of examples/ end to end through `chens run` (an ensemble above 64 instances
# reduced to 64; nothing else changed): exits 0 and leaves a complete result: summary.json
# and series.csv for a single run, a complete study.json, comparison.csv and every run's
# summary.json for a study of several runs. tests/CMakeLists.txt adds one test per file
# (examples.<name>), so that ctest runs them side by side and names the one that fails.
#
# Usage: run_example.sh CHENS_BINARY EXAMPLE.toml
set -uo pipefail
chens=$1
f=$2
name=$(basename "$f" .toml)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
size=$(sed -n 's/^size *= *\([0-9]*\).*/\1/p' "$f" | head -1)
sets=()
if [ -n "$size" ] && [ "$size" -gt 64 ]; then sets=(--set ensemble.size=64); fi
out="$tmp/$name"
if ! "$chens" run "$f" "${sets[@]}" --out "$out" --no-progress > "$tmp/$name.log" 2>&1; then
  echo "FAIL $name: chens run exited non-zero"
  cat "$tmp/$name.log"
  exit 1
fi
failed=0
if [ -f "$out/study.json" ]; then
  grep -q '"complete": true' "$out/study.json" || { echo "FAIL $name: study.json not complete"; failed=1; }
  [ -s "$out/comparison.csv" ] || { echo "FAIL $name: no comparison.csv"; failed=1; }
  runs=$(grep -c '"status": "complete"' "$out/study.json")
  sums=$(find "$out" -mindepth 2 -name summary.json | wc -l)
  [ "$runs" -ge 2 ] && [ "$runs" -eq "$sums" ] || { echo "FAIL $name: $runs complete runs, $sums summary.json"; failed=1; }
else
  [ -s "$out/summary.json" ] && [ -s "$out/series.csv" ] || { echo "FAIL $name: no summary.json/series.csv"; failed=1; }
fi
[ "$failed" -eq 0 ] && echo "ok   $name"
exit $failed
