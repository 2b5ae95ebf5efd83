#!/usr/bin/env bash
# How the REST front end holds up under many connections: starts `tessera server --dev` (no
# rate limit), then
#   burst  BURST clients connect at the same instant and each POSTs one job (stored; it stays
#          pending, pinned to a cluster that does not exist): how many got an answer, how many saw their connection refused or reset, and the slowest answer;
#   slow   SLOW clients each open a connection and send one header line every 2 s without ever
#          ending the request, while one client asks /healthz every 0.5 s for 20 s: the slowest
#          /healthz answer (a front end that gives every connection a thread stalls here).
#
#   scripts/bench-rest-front.sh BUILD_DIR [BURST] [SLOW]     (defaults 200 200)
set -euo pipefail
BUILD=${1:?build directory}
BURST=${2:-200}
SLOW=${3:-200}
# The client and the server (started from here) each hold a descriptor per slow connection.
NEED=$((SLOW + BURST + 1024))
if (($(ulimit -n) < NEED)); then ulimit -n "$NEED" || ulimit -n "$(ulimit -Hn)"; fi
DATA=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
"$BUILD/bin/tessera" server --dev --data-dir "$DATA" --http-addr "127.0.0.1:$PORT" \
  --grpc-addr 127.0.0.1:0 --rate-limit 0 >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.2; done
python3 - "$PORT" "$(cat "$DATA/admin.token")" "$BURST" "$SLOW" <<'EOF'
import http.client, json, socket, sys, threading, time

port, token, burst, slow = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# Pinned to a cluster that does not exist: the jobs are stored and stay pending, nothing runs.
job = json.dumps({"apiVersion": "tessera/v1", "kind": "Job",
                  "metadata": {"name": "front"},
                  "spec": {"clusterSelector": {"tessera.io/cluster": "none"},
                           "tasks": [{"name": "w", "command": ["true"],
                                      "resources": {"cpu": "10m", "memory": "1Mi"}}]}})

def burst_client(start, results, i):
    start.wait()
    t0 = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = job.replace('"front"', f'"front-{i}"')
        c.request("POST", "/api/v1/jobs", body,
                  {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        status = c.getresponse().status
        results.append((f"http {status}", time.monotonic() - t0))
    except (ConnectionResetError, ConnectionRefusedError, BrokenPipeError) as e:
        results.append((type(e).__name__, time.monotonic() - t0))
    except Exception as e:  # timeouts and the like
        results.append((type(e).__name__, time.monotonic() - t0))

start, results = threading.Event(), []
threads = [threading.Thread(target=burst_client, args=(start, results, i)) for i in range(burst)]
for t in threads: t.start()
start.set()
for t in threads: t.join()
outcomes = {}
for outcome, _ in results: outcomes[outcome] = outcomes.get(outcome, 0) + 1
print(f"burst: {burst} concurrent POSTs: {outcomes}; slowest answer "
      f"{max(s for _, s in results):.2f} s")

stop = threading.Event()
def slow_client():
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        while not stop.wait(2):
            s.sendall(b"X-Slow: 1\r\n")
    except OSError:
        pass  # the server closed it: what a guarded front end does
slow_threads = [threading.Thread(target=slow_client, daemon=True) for _ in range(slow)]
for t in slow_threads: t.start()
time.sleep(1)
worst, answered, failed = 0.0, 0, 0
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    t0 = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("GET", "/healthz")
        c.getresponse().read()
        answered += 1
    except Exception:
        failed += 1
    worst = max(worst, time.monotonic() - t0)
    time.sleep(0.5)
stop.set()
print(f"slow: {slow} slow clients: /healthz answered {answered}, failed {failed}; slowest "
      f"{worst:.2f} s")
EOF
