#!/usr/bin/env bash
# A study of three runs killed (SIGKILL) while its second run integrates: the first run
# stays complete (its files and study.json's results), the second is marked "running" and
# its directory holds no result, the third is "pending", and the study is not complete.
#
# Usage: killed_study.sh CHENS_BINARY
set -uo pipefail
chens=$1
tmp=$(mktemp -d)
trap 'kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cat > "$tmp/study.toml" <<'TOML'
[integrator]
t_end = 10.0
[ensemble]
size = 100
[[run]]
name = "quick"
[[run]]
name = "long"
ensemble.size = 2000000
integrator.t_end = 1000.0
[[run]]
name = "never"
TOML
"$chens" run "$tmp/study.toml" --out "$tmp/out" --no-progress --threads 1 > "$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do  # up to 30 s for the second run to start
  grep -q '"status": "running"' "$tmp/out/study.json" 2>/dev/null && break
  sleep 0.1
done
sleep 0.5
kill -9 $pid
wait $pid 2>/dev/null
fail=0
idx="$tmp/out/study.json"
/usr/bin/python3 - "$idx" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
status = [r["status"] for r in j["runs"]]
ok = status == ["complete", "running", "pending"] and j["complete"] is False and "results" in j["runs"][0]
print("study.json statuses:", status, "complete:", j["complete"])
sys.exit(0 if ok else 1)
PY
[ -s "$tmp/out/quick/summary.json" ] || { echo "FAIL: the completed run lost its summary.json"; fail=1; }
[ ! -e "$tmp/out/long/summary.json" ] || { echo "FAIL: the killed run has a summary.json"; fail=1; }
[ ! -e "$tmp/out/never" ] || [ -z "$(ls -A "$tmp/out/never")" ] || { echo "FAIL: the pending run has files"; fail=1; }
[ $fail = 0 ] && echo "killed study: completed run intact, interrupted run marked running"
exit $fail
