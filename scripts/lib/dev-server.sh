# Sourced by the benchmark scripts: one `tessera server --dev` of the script's own on a random
# loopback port, on the simulated nodes of a trace's node list, its data in a temporary
# directory; the server is stopped and the directory removed when the script exits.
#
#   source "$(dirname "$0")/lib/dev-server.sh"
#   dev_server BUILD_DIR NODE_LIST [SERVER_FLAG...]
#
# Once dev_server returns the server is ready, and DATA (its data directory), PORT, SERVER (its
# pid), TESSERA_SERVER and TESSERA_TOKEN (for the CLI) are set. A server that exits before it is
# ready ends the script with its log.
DATA=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
SERVER=""
cleanup() {
  kill $SERVER 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT

dev_server() {
  local build=$1 nodes=$2
  shift 2
  "$build/bin/tessera" server --dev --data-dir "$DATA" --http-addr "127.0.0.1:$PORT" \
    --grpc-addr 127.0.0.1:0 --rate-limit 0 --sim-nodes "$nodes" "$@" >"$DATA/server.log" 2>&1 &
  SERVER=$!
  until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do
    if ! kill -0 "$SERVER" 2>/dev/null; then
      echo "the server exited before it was ready:" >&2
      cat "$DATA/server.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  export TESSERA_SERVER="http://127.0.0.1:$PORT"
  TESSERA_TOKEN=$(cat "$DATA/admin.token")
  export TESSERA_TOKEN
}
