#!/usr/bin/env bash
# Submission throughput of a live control plane: starts `tessera server --dev` with the Alibaba
# trace's nodes as the simulated cluster (no rate limit), then CLIENTS concurrent
# `tessera replay` processes each submit ROWS real pods as fast as the server takes them
# (speed-up 1e9: arrivals at once), BATCH pods per request (1: POST /api/v1/jobs, one job per
# request; above 1: POST /api/v1/jobs:batch). Every submission is durable before its answer
# (SQLite, synchronous=FULL) and each job is then placed, bound and started by the scheduling
# loop in the same run.
#
# Two figures: "submit" counts from the first request to the last answer; "end to end" counts
# until no submitted job is Pending or Admitted any more (the server's /metrics: tessera_jobs by
# phase), i.e. every job was placed and started (durations are scaled to ~0, so most have
# already Succeeded). "started" is Running + Succeeded + Failed from /metrics; a job that never
# fits stays Pending and the wait gives up after WAIT seconds (default 120).
#
#   scripts/bench-server.sh BUILD_DIR TRACE_DIR [CLIENTS] [ROWS] [BATCH]
set -euo pipefail
BUILD=${1:?build directory}
TRACES=${2:?trace directory}
CLIENTS=${3:-8}
ROWS=${4:-400}
BATCH=${5:-1}
WAIT=${WAIT:-120}
DATA=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
"$BUILD/bin/tessera" server --dev --data-dir "$DATA" --http-addr "127.0.0.1:$PORT" \
  --grpc-addr 127.0.0.1:0 --rate-limit 0 \
  --sim-nodes "$TRACES/alibaba-gpu-v2023/openb_node_list_gpu_node.csv" >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.2; done
export TESSERA_SERVER="http://127.0.0.1:$PORT" TESSERA_TOKEN=$(cat "$DATA/admin.token")
# The sum of the samples of metric $1 whose labels match $2 (a regular expression).
metric() {
  curl -s "$TESSERA_SERVER/metrics" | grep -E "^$1\{[^}]*$2" | awk '{s += $2} END {printf "%d", s}'
}
start=$(date +%s.%N)
for ((k = 0; k < CLIENTS; k++)); do
  "$BUILD/bin/tessera" replay --pods "$TRACES/alibaba-gpu-v2023/openb_pod_list_default.csv" \
    --cluster sim --skip $((k * ROWS)) --limit "$ROWS" --speedup 1e9 --batch "$BATCH" \
    >"$DATA/replay-$k.log" 2>&1 &
done
wait $(jobs -p | grep -v "^$SERVER$")
submitted_at=$(date +%s.%N)
deadline=$(echo "$submitted_at + $WAIT" | bc)
while (($(metric tessera_jobs 'phase="(Pending|Admitted)"') > 0)) &&
      (($(echo "$(date +%s.%N) < $deadline" | bc))); do
  sleep 0.05
done
end=$(date +%s.%N)
submitted=$(for f in "$DATA"/replay-*.log; do grep -o '[0-9]* submitted' "$f" | tail -n 1; done | awk '{s += $1} END {print s}')
started=$(( $(metric tessera_jobs 'phase="Running"') + $(metric tessera_jobs_finished_total 'phase="(Succeeded|Failed)"') ))
waiting=$(metric tessera_jobs 'phase="(Pending|Admitted)"')
echo "clients=$CLIENTS batch=$BATCH submitted=$submitted started=$started still-waiting=$waiting" \
     "submit: $(echo "$submitted_at - $start" | bc)s $(echo "$submitted / ($submitted_at - $start)" | bc) jobs/s;" \
     "end to end: $(echo "$end - $start" | bc)s $(echo "$started / ($end - $start)" | bc) jobs/s"
curl -s "$TESSERA_SERVER/metrics" | grep -E '^tessera_scheduling_cycle_seconds_(sum|count)'
# What the run wrote to the store: revisions (transactions that changed a key) and key writes
# (the rows of its change history), per submitted job.
db=$(find "$DATA" -name '*.db' | head -n 1)
if command -v sqlite3 >/dev/null && [ -n "$db" ]; then
  sqlite3 -readonly "$db" "SELECT (SELECT value FROM meta WHERE name = 'revision'), count(*) FROM events" |
    awk -F'|' -v jobs="$submitted" '{printf "store: %d transactions (%.2f per job), %d key writes (%.2f per job)\n", $1, $1 / jobs, $2, $2 / jobs}'
fi
