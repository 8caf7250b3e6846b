#!/usr/bin/env bash
# Runs chosen test suites N times, optionally beside a CPU hog, and prints every failure with the
# fast-check seed it printed (replay one with FC_SEED=<seed> npx jest <suite>).
#
#   scripts/flake-hunt.sh [-n RUNS] [--hog] [--workers N] [JEST ARGS / SUITES ...]
#   make flake-hunt RUNS=5 HOG=1 SUITES='--selectProjects process'
#
#   -n RUNS      how many times to run the suites (default 3)
#   --hog        keep one core busy for the whole hunt (node -e 'for(;;){}'), as a busy machine would
#   --workers N  jest's --maxWorkers (default: what `make test` uses)
#
# With no suites it hunts over the process tier (--selectProjects process). Each run's jest output
# and JSON results are kept in .tmp/flake-hunt/<run>.{log,json}. Exits 1 when any run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3 hog=0 workers=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    --hog) hog=1; shift ;;
    --workers) workers="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 0 ] && args=(--selectProjects process)
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "flake-hunt: -n takes a whole number of runs, got '$runs'" >&2; exit 2; }
out=.tmp/flake-hunt
rm -rf "$out"; mkdir -p "$out"
hog_pid=""
cleanup() { [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null || true; }
trap cleanup EXIT
if [ "$hog" = 1 ]; then
  node -e 'for(;;){}' & hog_pid=$!
  echo "flake-hunt: one core kept busy by pid $hog_pid"
fi
worker_args=()
[ -n "$workers" ] && worker_args=(--maxWorkers="$workers")
failed_runs=0
for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  set +e
  npx jest --ci "${worker_args[@]}" --json --outputFile="$out/$run.json" "${args[@]}" >"$out/$run.log" 2>&1
  rc=$?
  set -e
  took=$(( $(date +%s) - started ))
  summary=$(grep -E '^jest: ' "$out/$run.log" | tail -1 || true)
  echo "run $run/$runs: exit $rc, ${took} s, ${summary:-no summary line (see $out/$run.log)}"
  if [ "$rc" -ne 0 ]; then
    failed_runs=$((failed_runs + 1))
    node -e '
      const r = require(process.argv[1]);
      for (const s of r.testResults) {
        if (s.status !== "failed") continue;
        const failed = s.assertionResults.filter((a) => a.status === "failed");
        if (failed.length === 0) console.log(`  FAIL ${s.name}: ${(s.message || "").split("\n").find((l) => l.trim()) || "suite failed"}`);
        for (const a of failed) {
          const text = a.failureMessages.join("\n");
          const seed = /seed: (-?\d+), path: "([^"]*)"/.exec(text);
          const first = text.split("\n").find((l) => l.trim()) || "";
          console.log(`  FAIL ${s.name} › ${a.fullName}${seed ? ` [FC_SEED=${seed[1]} path ${seed[2]}]` : ""}\n       ${first.slice(0, 300)}`);
        }
      }' "$PWD/$out/$run.json" || true
  fi
done
echo "flake-hunt: $((runs - failed_runs)) of $runs runs passed$([ "$hog" = 1 ] && echo ', one core kept busy')"
[ "$failed_runs" -eq 0 ]
