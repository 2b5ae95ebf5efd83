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
# STORE=etcd puts the store on a real etcd started here (Debian's etcd-server) with
# ETCD_MEMBERS members (default 1; 3 for a cluster on loopback, every member on this machine's
# disk) instead of SQLite.
#
#   scripts/bench-server.sh BUILD_DIR TRACE_DIR [CLIENTS] [ROWS] [BATCH]
#   STORE=etcd ETCD_MEMBERS=3 scripts/bench-server.sh BUILD_DIR TRACE_DIR [CLIENTS] [ROWS] [BATCH]
set -euo pipefail
BUILD=${1:?build directory}
TRACES=${2:?trace directory}
CLIENTS=${3:-8}
ROWS=${4:-400}
BATCH=${5:-1}
WAIT=${WAIT:-120}
STORE=${STORE:-sqlite}
ETCD_MEMBERS=${ETCD_MEMBERS:-1}
DATA=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
ETCD_PIDS=()
SERVER=""
cleanup() {
  kill $SERVER "${ETCD_PIDS[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT
store_flags=()
if [ "$STORE" = etcd ]; then
  # Members on ports PORT+1.. (clients) and PORT+101.. (peers).
  cluster="" endpoints=""
  for ((m = 0; m < ETCD_MEMBERS; m++)); do
    cluster+="${cluster:+,}m$m=http://127.0.0.1:$((PORT + 101 + m))"
    endpoints+="${endpoints:+,}127.0.0.1:$((PORT + 1 + m))"
  done
  for ((m = 0; m < ETCD_MEMBERS; m++)); do
    etcd --name "m$m" --data-dir "$DATA/etcd-m$m" --log-level error \
      --listen-client-urls "http://127.0.0.1:$((PORT + 1 + m))" \
      --advertise-client-urls "http://127.0.0.1:$((PORT + 1 + m))" \
      --listen-peer-urls "http://127.0.0.1:$((PORT + 101 + m))" \
      --initial-advertise-peer-urls "http://127.0.0.1:$((PORT + 101 + m))" \
      --initial-cluster "$cluster" --initial-cluster-state new >"$DATA/etcd-m$m.log" 2>&1 &
    ETCD_PIDS+=($!)
  done
  until curl -sf "http://127.0.0.1:$((PORT + 1))/health" | grep -q '"health":"true"'; do sleep 0.2; done
  store_flags=(--store etcd --etcd-endpoints "$endpoints")
fi
"$BUILD/bin/tessera" server --dev --data-dir "$DATA" --http-addr "127.0.0.1:$PORT" \
  --grpc-addr 127.0.0.1:0 --rate-limit 0 "${store_flags[@]}" \
  --sim-nodes "$TRACES/alibaba-gpu-v2023/openb_node_list_gpu_node.csv" >"$DATA/server.log" 2>&1 &
SERVER=$!
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.2; done
export TESSERA_SERVER="http://127.0.0.1:$PORT" TESSERA_TOKEN=$(cat "$DATA/admin.token")
# The sum of the samples of metric $1 whose labels match $2 (a regular expression).
metric() {
  curl -s "$TESSERA_SERVER/metrics" | grep -E "^$1\{[^}]*$2" | awk '{s += $2} END {printf "%d", s}'
}
start=$(date +%s.%N)
REPLAYS=()
for ((k = 0; k < CLIENTS; k++)); do
  "$BUILD/bin/tessera" replay --pods "$TRACES/alibaba-gpu-v2023/openb_pod_list_default.csv" \
    --cluster sim --skip $((k * ROWS)) --limit "$ROWS" --speedup 1e9 --batch "$BATCH" \
    >"$DATA/replay-$k.log" 2>&1 &
  REPLAYS+=($!)
done
wait "${REPLAYS[@]}"
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
label=$STORE
[ "$STORE" = etcd ] && label="etcd($ETCD_MEMBERS)"
echo "store=$label clients=$CLIENTS batch=$BATCH submitted=$submitted started=$started still-waiting=$waiting" \
     "submit: $(echo "$submitted_at - $start" | bc)s $(echo "$submitted / ($submitted_at - $start)" | bc) jobs/s;" \
     "end to end: $(echo "$end - $start" | bc)s $(echo "$started / ($end - $start)" | bc) jobs/s"
curl -s "$TESSERA_SERVER/metrics" | grep -E '^tessera_scheduling_cycle_seconds_(sum|count)'
# What the run wrote to the store: revisions (transactions that changed a key), key writes (the
# rows of its change history) and the bytes of their keys and values, per submitted job.
db=$(find "$DATA" -name '*.db' | head -n 1)
if command -v sqlite3 >/dev/null && [ -n "$db" ]; then
  sqlite3 -readonly "$db" "SELECT (SELECT value FROM meta WHERE name = 'revision'), count(*), sum(length(key) + length(value)) FROM events" |
    awk -F'|' -v jobs="$submitted" '{printf "store: %d transactions (%.2f per job), %d key writes (%.2f per job), %.0f bytes per job\n", $1, $1 / jobs, $2, $2 / jobs, $3 / jobs}'
fi
