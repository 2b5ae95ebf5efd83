#!/usr/bin/env bash
# Runs the control plane in dev mode with a live workload: `tessera server --dev` with this
# machine as cluster "local" and the Alibaba GPU trace's 1,213 nodes as the simulated cluster
# "sim", then replays a slice of the real trace's pods into it (1,000 pods, 41 trace hours,
# at 3600x), and prints where the API and the metrics are. Runs until Ctrl-C; with
# RUN_SECONDS=N it stops by itself after N seconds (smoke tests).
#
#   scripts/run-dev.sh BUILD_DIR TRACE_DIR [DATA_DIR]
# Environment: TESSERA_HTTP_ADDR (127.0.0.1:8080), TESSERA_GRPC_ADDR (127.0.0.1:9090).
set -euo pipefail

BUILD=${1:?build directory}
TRACES=${2:?trace directory}
DATA=${3:-out/dev}
HTTP=${TESSERA_HTTP_ADDR:-127.0.0.1:8080}
GRPC=${TESSERA_GRPC_ADDR:-127.0.0.1:9090}
TESSERA="$BUILD/bin/tessera"
NODES="$TRACES/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"
PODS="$TRACES/alibaba-gpu-v2023/openb_pod_list_default.csv"

mkdir -p "$DATA"
"$TESSERA" server --dev --data-dir "$DATA" --http-addr "$HTTP" --grpc-addr "$GRPC" \
  --sim-nodes "$NODES" >"$DATA/server.log" 2>&1 &
SERVER=$!
REPLAY=""
stop() {
  [[ -n "$REPLAY" ]] && kill "$REPLAY" 2>/dev/null || true
  kill -TERM "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 0' INT TERM

for _ in $(seq 1 100); do
  if curl -sf "http://$HTTP/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SERVER" 2>/dev/null; then
    echo "run-dev: the server did not start:" >&2
    cat "$DATA/server.log" >&2
    exit 1
  fi
  sleep 0.2
done
curl -sf "http://$HTTP/readyz" >/dev/null || { echo "run-dev: the server is not ready" >&2; exit 1; }

export TESSERA_SERVER="http://$HTTP"
TESSERA_TOKEN=$(cat "$DATA/admin.token")
export TESSERA_TOKEN
"$TESSERA" replay --pods "$PODS" --cluster sim --skip 7044 --limit 1000 --speedup 3600 \
  >"$DATA/replay.log" 2>&1 &
REPLAY=$!

cat <<INFO

Tessera is running (dev mode; data in $DATA, server log $DATA/server.log)
  REST API   $TESSERA_SERVER/api/v1        (OpenAPI: docs/openapi.yaml)
  gRPC       $GRPC                    (proto/tessera/v1/jobs.proto)
  metrics    $TESSERA_SERVER/metrics
  clusters   local (this machine, real processes) and sim (1,213 Alibaba trace nodes)
  replaying  1,000 real pods of the Alibaba GPU trace into "sim" at 3600x ($DATA/replay.log)

In another shell:
  export TESSERA_SERVER=$TESSERA_SERVER TESSERA_TOKEN=\$(cat $DATA/admin.token)
  $TESSERA submit --cpus 1 --mem 256Mi -- sh -c 'echo hello from job \$TESSERA_JOB_ID'
  $TESSERA list          $TESSERA describe 1          $TESSERA logs 1
  curl -H "Authorization: Bearer \$TESSERA_TOKEN" $TESSERA_SERVER/api/v1/clusters

INFO

if [[ -n "${RUN_SECONDS:-}" ]]; then
  sleep "$RUN_SECONDS"
  "$TESSERA" clusters
  echo "replay so far: $(tail -n 1 "$DATA/replay.log")"
  exit 0
fi
echo "Ctrl-C stops the server (running tasks are adopted by the next start)."
wait "$SERVER"
