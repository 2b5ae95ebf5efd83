#!/usr/bin/env bash
# Submission throughput of a live control plane: starts `tessera server --dev` with the Alibaba
# trace's nodes as the simulated cluster (no rate limit), then CLIENTS concurrent
# `tessera replay` processes each submit ROWS real pods as fast as the server takes them
# (speed-up 1e9: arrivals at once). Every submission is durable before its answer (SQLite, synchronous=FULL) and
# each job is then placed, bound and started by the scheduling loop in the same run.
#
#   scripts/bench-server.sh BUILD_DIR TRACE_DIR [CLIENTS] [ROWS]
set -euo pipefail
BUILD=${1:?build directory}
TRACES=${2:?trace directory}
CLIENTS=${3:-8}
ROWS=${4:-400}
DATA=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
"$BUILD/bin/tessera" server --dev --data-dir "$DATA" --http-addr "127.0.0.1:$PORT" \
  --grpc-addr 127.0.0.1:0 --rate-limit 0 \
  --sim-nodes "$TRACES/alibaba-gpu-v2023/openb_node_list_gpu_node.csv" >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.2; done
export TESSERA_SERVER="http://127.0.0.1:$PORT" TESSERA_TOKEN=$(cat "$DATA/admin.token")
start=$(date +%s.%N)
for ((k = 0; k < CLIENTS; k++)); do
  "$BUILD/bin/tessera" replay --pods "$TRACES/alibaba-gpu-v2023/openb_pod_list_default.csv" \
    --cluster sim --skip $((k * ROWS)) --limit "$ROWS" --speedup 1e9 >"$DATA/replay-$k.log" 2>&1 &
done
wait $(jobs -p | grep -v "^$SERVER$")
end=$(date +%s.%N)
submitted=$(for f in "$DATA"/replay-*.log; do tail -n 1 "$f" | grep -o '[0-9]* submitted'; done | awk '{s += $1} END {print s}')
echo "clients=$CLIENTS submitted=$submitted wall=$(echo "$end - $start" | bc)s" \
     "rate=$(echo "$submitted / ($end - $start)" | bc) jobs/s"
curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^tessera_scheduling_cycle_seconds_(sum|count)'
